// irs-to-mpc alone, from the module after variant-select and ring-select: no-lift: both dot products in the comparison ring Z_2^12, a*ml - b*dot with a/b = 1/4.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @setup() -> (!mpc.code<12 : i64>, !mpc.code<12 : i64>)
// CHECK-NEXT: %[[G0:.*]] = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<12 : i64>
// CHECK-NEXT: %[[G1:.*]] = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 1 : i64} : () -> !mpc.code<12 : i64>
// CHECK-NEXT: return %[[G0]], %[[G1]]
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<12 : i64>, %arg2: !mpc.code<12 : i64>)
// CHECK-NEXT: %[[Q:.*]] = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<12 : i64>
// CHECK-NEXT: %[[C:.*]] = "mpc.rotate"(%[[Q]]) {hi = 2 : i64, lo = -2 : i64}
// CHECK-NEXT: %[[DOT:.*]] = "mpc.masked_dot"(%[[C]], %arg1) {code_bits = 256 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
// CHECK-NEXT: %[[DOTR:.*]] = "mpc.reshare"(%[[DOT]]) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
// CHECK-NEXT: %[[QM:.*]] = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.code<12 : i64>
// CHECK-NEXT: %[[CM:.*]] = "mpc.rotate"(%[[QM]]) {hi = 2 : i64, lo = -2 : i64}
// CHECK-NEXT: %[[ML:.*]] = "mpc.masked_dot"(%[[CM]], %arg2) {code_bits = 256 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
// CHECK-NEXT: %[[MLR:.*]] = "mpc.reshare"(%[[ML]]) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
// CHECK-NEXT: %[[LIN:.*]] = "mpc.lin"(%[[MLR]], %[[DOTR]]) {a = 1 : i64, b = 4 : i64} : (!mpc.rep<12 : i64>, !mpc.rep<12 : i64>) -> !mpc.rep<12 : i64>
// CHECK-NEXT: %[[B:.*]] = "mpc.msb"(%[[LIN]]) : (!mpc.rep<12 : i64>) -> !mpc.bits
// CHECK-NEXT: "mpc.or_tree"(%[[B]]) {group = 5 : i64}

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 1 : i64, b = 4 : i64, dot_ring = 12 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 12 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 12 : i64, ring_why = "a/b = 1/4 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-768, 1280] \E2\8A\82 [-2^11, 2^11); k = 11 would wrap 1280 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 13); both dot products in Z_2^12", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
