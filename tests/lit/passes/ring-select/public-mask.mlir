// ring-select alone, from the module after variant-select: public masks over rep3 (Lemma 1): 12800-bit codes at 0.345, T - dot in [-8832, 16768]: Z_2^16.
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.fhd_lt"(%1, %2) {a = 69 : i64, b = 200 : i64, dot_ring = 16 : i64, lift_bits = 0 : i64, mask = "public", ml_ring = 16 : i64,
// CHECK-SAME: ratio_den = 200 : i64, ratio_num = 69 : i64, ring_bits = 16 : i64,
// CHECK-SAME: ring_why = "T - dot in [-8832, 16768] \E2\8A\82 [-2^15, 2^15); k = 15 would wrap 16768 (Lemma 1 applies: its sufficient condition needs k = 16)",
// CHECK-SAME: sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
// CHECK-NEXT: "irs.any"(%3) {group = 0 : i64} : (!irs.bits) -> !irs.bits

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 0 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4) {label = "match", shape = "bit", to = 0 : i64} : (!irs.bits) -> ()
    return
  }
}
