// irs-to-mpc alone, from the module after variant-select and ring-select: plain-mask over F_p: the comparison mod p (BitExtractP, Algorithm 12).
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.shamir<"fp">)
// CHECK: %[[C:.*]] = "mpc.rotate"
// CHECK-NEXT: %[[DOT:.*]] = "mpc.shamir_dot"(%[[C]], %arg1) : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.add_p
// CHECK-NEXT: %[[REP:.*]] = "mpc.reshare_p"(%[[DOT]]) : (!mpc.add_p) -> !mpc.rep_p
// CHECK-NEXT: %[[ML:.*]] = "mpc.mask_len"(%[[C]], %arg1) : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.pub<16 : i64>
// CHECK-NEXT: %[[D:.*]] = "mpc.sub_threshold_p"(%[[REP]], %[[ML]]) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep_p, !mpc.pub<16 : i64>) -> !mpc.rep_p
// CHECK-NEXT: %[[B:.*]] = "mpc.msb_p"(%[[D]]) : (!mpc.rep_p) -> !mpc.bits
// CHECK-NEXT: "mpc.or_tree"(%[[B]]) {group = 5 : i64}

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"fp">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 3 : i64, b = 8 : i64, dot_ring = 0 : i64, lift_bits = 0 : i64, mask = "public", ml_ring = 0 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 0 : i64, ring_why = "T - dot in [-192, 320] \E2\8A\82 [-32751, 32767]: bit 15 of the representative in [0, p) is the sign (Lemma 1 over F_p, Algorithm 12)", sharing = #irs.sharing<"fp">, variant = #irs.variant<"plain-mask">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
