// ring-select alone, from the module after variant-select: ring-select{precision=12}: b = 2^12, a = 1270, the ring shrinks to Z_2^28.
// RUN: %irisc opt %s --passes=ring-select{precision=12} | FileCheck %s

// CHECK: "irs.fhd_lt"(%1, %2) {a = 1270 : i64, b = 4096 : i64, dot_ring = 16 : i64, lift_bits = 12 : i64, mask = "secret", ml_ring = 16 : i64,
// CHECK-SAME: ring_bits = 28 : i64, ring_why = "a/b = 1270/2^12; a*ml - b*dot in [-36172800, 68684800] \E2\8A\82 [-2^27, 2^27); k = 27 would wrap 68684800

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"gr2">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 1 : i64, lo = -1 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"gr2">, variant = #irs.variant<"mpc-lift">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 3 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<12800 : i64>) -> ()
    return
  }
}
