// ring-select alone, from the module after variant-select: mpc-lift over F_p: the comparison in Z_(p*2^16); ring_bits records m = 16.
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.fhd_lt"(%1, %2) {a = 20317 : i64, b = 65536 : i64, dot_ring = 0 : i64, lift_bits = 16 : i64, mask = "secret", ml_ring = 0 : i64,
// CHECK-SAME: ring_bits = 16 : i64, ring_why = "a/b = 20317/2^16; a*ml - b*dot in [-578803200, 1098918400] \E2\8A\82 [-(p - 2^15)*2^16, 2^31) of Z_(p*2^16) (Lemma 2 over t = p*2^16); ml lifted mod p -> p*2^16 (Algorithm 15), b*[dot] by Algorithm 13"

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"fp">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 1 : i64, lo = -1 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"fp">, variant = #irs.variant<"mpc-lift">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 3 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<12800 : i64>) -> ()
    return
  }
}
