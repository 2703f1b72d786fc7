// irs-to-mpc alone, from the module after variant-select and ring-select: mpc-lift over GR(2^16, 4): Shamir dot products reshared to Z_2^16, then lifted.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @setup() -> (!mpc.shamir<"gr4">, !mpc.shamir<"gr4">)
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr4">, %arg2: !mpc.shamir<"gr4">)
// CHECK: %[[DOT:.*]] = "mpc.shamir_dot"(%{{.*}}, %arg1) : (!mpc.shamir<"gr4">, !mpc.shamir<"gr4">) -> !mpc.add<16 : i64>
// CHECK-NEXT: %[[DOTR:.*]] = "mpc.reshare"(%[[DOT]]) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
// CHECK: %[[ML:.*]] = "mpc.shamir_dot"(%{{.*}}, %arg2) : (!mpc.shamir<"gr4">, !mpc.shamir<"gr4">) -> !mpc.add<16 : i64>
// CHECK-NEXT: %[[MLR:.*]] = "mpc.reshare"(%[[ML]]) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
// CHECK-NEXT: %[[MLL:.*]] = "mpc.lift"(%[[MLR]]) : (!mpc.rep<16 : i64>) -> !mpc.rep<26 : i64>
// CHECK-NEXT: %[[DOTL:.*]] = "mpc.const_lift"(%[[DOTR]]) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<26 : i64>
// CHECK-NEXT: %[[LIN:.*]] = "mpc.lin"(%[[MLL]], %[[DOTL]]) {a = 16384 : i64, b = 1 : i64}
// CHECK-NEXT: "mpc.msb"(%[[LIN]]) : (!mpc.rep<26 : i64>) -> !mpc.bits

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"gr4">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 16384 : i64, b = 65536 : i64, dot_ring = 16 : i64, lift_bits = 16 : i64, mask = "secret", ml_ring = 16 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 26 : i64, ring_why = "a/b = 16384/2^16; a*ml - b*dot in [-12582912, 20971520] \E2\8A\82 [-2^25, 2^25); k = 25 would wrap 20971520 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 27); Shamir dot products over GR(2^16, 4) reshared to Z_2^16, ml lifted 16 -> 26 (Algorithm 14), b*[dot] in Z_2^26 (Algorithm 13)", sharing = #irs.sharing<"gr4">, variant = #irs.variant<"mpc-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
