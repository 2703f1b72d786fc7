// irs-to-mpc alone, from the module after variant-select and ring-select: mpc-lift over rep3: ml lifted by Algorithm 14, dot by ConstLift (Algorithm 13).
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>, %arg2: !mpc.code<10 : i64>)
// CHECK: %[[DOT:.*]] = "mpc.masked_dot"(%{{.*}}, %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
// CHECK-NEXT: %[[DOTR:.*]] = "mpc.reshare"(%[[DOT]]) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
// CHECK: %[[ML:.*]] = "mpc.masked_dot"(%{{.*}}, %arg2) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
// CHECK-NEXT: %[[MLR:.*]] = "mpc.reshare"(%[[ML]]) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
// CHECK-NEXT: %[[MLL:.*]] = "mpc.lift"(%[[MLR]]) : (!mpc.rep<10 : i64>) -> !mpc.rep<26 : i64>
// CHECK-NEXT: %[[DOTL:.*]] = "mpc.const_lift"(%[[DOTR]]) {lift_bits = 16 : i64} : (!mpc.rep<10 : i64>) -> !mpc.rep<26 : i64>
// CHECK-NEXT: %[[LIN:.*]] = "mpc.lin"(%[[MLL]], %[[DOTL]]) {a = 16384 : i64, b = 1 : i64} : (!mpc.rep<26 : i64>, !mpc.rep<26 : i64>) -> !mpc.rep<26 : i64>
// CHECK-NEXT: "mpc.msb"(%[[LIN]]) : (!mpc.rep<26 : i64>) -> !mpc.bits

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 16384 : i64, b = 65536 : i64, dot_ring = 10 : i64, lift_bits = 16 : i64, mask = "secret", ml_ring = 10 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 26 : i64, ring_why = "a/b = 16384/2^16; a*ml - b*dot in [-12582912, 20971520] \E2\8A\82 [-2^25, 2^25); k = 25 would wrap 20971520 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 27); dot and ml in Z_2^10 (ml <= 256 < 2^10), ml lifted 10 -> 26 (Algorithm 14), b*[dot] in Z_2^26 (Algorithm 13)", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"mpc-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
