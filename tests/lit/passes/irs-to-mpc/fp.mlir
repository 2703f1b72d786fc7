// irs-to-mpc alone, from the module after variant-select and ring-select: mpc-lift over F_p: LiftP (Algorithm 15) into Z_(p*2^16), the MSB there.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @setup() -> (!mpc.shamir<"fp">, !mpc.shamir<"fp">)
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.shamir<"fp">, %arg2: !mpc.shamir<"fp">)
// CHECK-NEXT: %[[Q:.*]] = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"fp">
// CHECK-NEXT: %[[C:.*]] = "mpc.rotate"(%[[Q]]) {hi = 1 : i64, lo = -1 : i64} : (!mpc.shamir<"fp">) -> !mpc.shamir<"fp">
// CHECK-NEXT: %[[DOT:.*]] = "mpc.shamir_dot"(%[[C]], %arg1) : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.add_p
// CHECK-NEXT: %[[DOTR:.*]] = "mpc.reshare_p"(%[[DOT]]) : (!mpc.add_p) -> !mpc.rep_p
// CHECK-NEXT: %[[QM:.*]] = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.shamir<"fp">
// CHECK-NEXT: %[[CM:.*]] = "mpc.rotate"(%[[QM]])
// CHECK-NEXT: %[[ML:.*]] = "mpc.shamir_dot"(%[[CM]], %arg2) : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.add_p
// CHECK-NEXT: %[[MLR:.*]] = "mpc.reshare_p"(%[[ML]]) : (!mpc.add_p) -> !mpc.rep_p
// CHECK-NEXT: %[[MLL:.*]] = "mpc.lift_p"(%[[MLR]]) : (!mpc.rep_p) -> !mpc.rep_mod<16 : i64>
// CHECK-NEXT: %[[DOTL:.*]] = "mpc.const_lift_p"(%[[DOTR]]) : (!mpc.rep_p) -> !mpc.rep_mod<16 : i64>
// CHECK-NEXT: %[[LIN:.*]] = "mpc.lin_mod"(%[[MLL]], %[[DOTL]]) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep_mod<16 : i64>, !mpc.rep_mod<16 : i64>) -> !mpc.rep_mod<16 : i64>
// CHECK-NEXT: %[[B:.*]] = "mpc.msb_mod"(%[[LIN]]) : (!mpc.rep_mod<16 : i64>) -> !mpc.bits
// CHECK-NEXT: "mpc.or_tree"(%[[B]]) {group = 3 : i64} : (!mpc.bits) -> !mpc.bits

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"fp">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 1 : i64, lo = -1 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 20317 : i64, b = 65536 : i64, dot_ring = 0 : i64, lift_bits = 16 : i64, mask = "secret", ml_ring = 0 : i64, ratio_den = 200 : i64, ratio_num = 69 : i64, ring_bits = 16 : i64, ring_why = "a/b = 20317/2^16; a*ml - b*dot in [-578803200, 1098918400] \E2\8A\82 [-(p - 2^15)*2^16, 2^31) of Z_(p*2^16) (Lemma 2 over t = p*2^16); ml lifted mod p -> p*2^16 (Algorithm 15), b*[dot] by Algorithm 13", sharing = #irs.sharing<"fp">, variant = #irs.variant<"mpc-lift">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 3 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<12800 : i64>) -> ()
    return
  }
}
