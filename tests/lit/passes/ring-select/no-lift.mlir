// ring-select alone, from the module after variant-select: no-lift: a/b = 31/100 (b < 2^16), both dot products in Z_2^22, nothing lifted.
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.fhd_lt"(%1, %2) {a = 31 : i64, b = 100 : i64, dot_ring = 22 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 22 : i64,
// CHECK-SAME: ring_bits = 22 : i64, ring_why = "a/b = 31/100 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-883200, 1676800] \E2\8A\82 [-2^21, 2^21)
// CHECK-SAME: both dot products in Z_2^22"

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 1 : i64, lo = -1 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 3 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<12800 : i64>) -> ()
    return
  }
}
