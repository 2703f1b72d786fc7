// irs-to-mpc alone, from the module after variant-select and ring-select: plain-mask over rep3: MSB(T - dot) in Z_2^10 with the public threshold (Lemma 1).
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK: module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"}
// CHECK-LABEL: func.func @setup() -> !mpc.code<10 : i64>
// CHECK-NEXT: %[[G:.*]] = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<10 : i64>
// CHECK-NEXT: return %[[G]]
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>)
// CHECK-NEXT: %[[Q:.*]] = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<10 : i64>
// CHECK-NEXT: %[[C:.*]] = "mpc.rotate"(%[[Q]]) {hi = 2 : i64, lo = -2 : i64}
// CHECK-NEXT: %[[DOT:.*]] = "mpc.masked_dot"(%[[C]], %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
// CHECK-NEXT: %[[REP:.*]] = "mpc.reshare"(%[[DOT]]) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
// CHECK-NEXT: %[[ML:.*]] = "mpc.mask_len"(%[[C]], %arg1) : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.pub<10 : i64>
// CHECK-NEXT: %[[D:.*]] = "mpc.sub_threshold"(%[[REP]], %[[ML]]) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<10 : i64>, !mpc.pub<10 : i64>) -> !mpc.rep<10 : i64>
// CHECK-NEXT: %[[B:.*]] = "mpc.msb"(%[[D]]) : (!mpc.rep<10 : i64>) -> !mpc.bits
// CHECK-NEXT: %[[OR:.*]] = "mpc.or_tree"(%[[B]]) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[O:.*]] = "mpc.open"(%[[OR]]) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]], %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<10 : i64>) -> ()
// CHECK-NEXT: "mpc.emit"(%arg0) : (i64) -> ()
// CHECK-NEXT: return

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 3 : i64, b = 8 : i64, dot_ring = 10 : i64, lift_bits = 0 : i64, mask = "public", ml_ring = 10 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 10 : i64, ring_why = "T - dot in [-192, 320] \E2\8A\82 [-2^9, 2^9); k = 9 would wrap 320 (Lemma 1 applies: its sufficient condition needs k = 11)", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
