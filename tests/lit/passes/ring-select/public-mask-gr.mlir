// ring-select alone, from the module after variant-select: public masks over GR(2^16, 2): the Galois ring's Z_2^16 whatever the range (k = 10 would do).
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.fhd_lt"(%1, %2) {a = 3 : i64, b = 8 : i64, dot_ring = 16 : i64, lift_bits = 0 : i64, mask = "public", ml_ring = 16 : i64,
// CHECK-SAME: ring_bits = 16 : i64, ring_why = "T - dot in [-192, 320] \E2\8A\82 [-2^15, 2^15): Z_2^16 of GR(2^16, d) holds it (k = 10 would suffice)", sharing = #irs.sharing<"gr2">, variant = #irs.variant<"plain-mask">}

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"gr2">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 8 : i64, ratio_num = 3 : i64, sharing = #irs.sharing<"gr2">, variant = #irs.variant<"plain-mask">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
