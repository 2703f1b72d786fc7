// ring-select alone, from the module after variant-select: no-lift, 256-bit codes at 0.375: 1 - 2r = 1/4 exactly, Z_2^12.
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.fhd_lt"(%1, %2) {a = 1 : i64, b = 4 : i64, dot_ring = 12 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 12 : i64,
// CHECK-SAME: ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 12 : i64,
// CHECK-SAME: ring_why = "a/b = 1/4 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-768, 1280] \E2\8A\82 [-2^11, 2^11); k = 11 would wrap 1280

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 8 : i64, ratio_num = 3 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
