// ring-select alone, from the module after variant-select: secret masks, mpc-lift over rep3: the same ring, dot and ml in Z_2^16.
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.fhd_lt"(%1, %2) {a = 20317 : i64, b = 65536 : i64, dot_ring = 16 : i64, lift_bits = 16 : i64, mask = "secret", ml_ring = 16 : i64,
// CHECK-SAME: ring_bits = 32 : i64,
// CHECK-SAME: dot and ml in Z_2^16 (ml <= 12800 < 2^16), ml lifted 16 -> 32 (Algorithm 14), b*[dot] in Z_2^32 (Algorithm 13)"

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 1 : i64, lo = -1 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"mpc-lift">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 3 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<12800 : i64>) -> ()
    return
  }
}
