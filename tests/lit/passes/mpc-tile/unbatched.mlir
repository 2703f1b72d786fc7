// Tiled bodies whose chunk stage has an op without a batch form keep the per-query chunk loop
// (no batch_finish stage, `mask_len` per query, openings per query) and say why on @query.
// RUN: %irisc opt %s --passes=mpc-tile | FileCheck %s
// RUN: %irisc opt %s --passes=mpc-tile | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s
// REQUIRES: irisc-opt

// An OR over groups of 2 of a record's 5 rotations: the groups would straddle two queries.
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) attributes {mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64, mpc.unbatched = "`mpc.or_tree` groups of 2 do not divide a record's values"}
// CHECK-NOT: batch_finish
// CHECK: "mpc.stage"() {name = "chunk"}
// CHECK: "mpc.mask_len"
// CHECK: "mpc.or_tree"(%{{.*}}) {group = 2 : i64} : (!mpc.bits) -> !mpc.bits
// CHECK: "mpc.stage"() {name = "finish"}
// CHECK-NEXT: "mpc.open"
// CHECK-NOT: batch_pick
// CHECK: return

module {
  func.func @setup() -> !mpc.code<10 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<10 : i64>
    return %0 : !mpc.code<10 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<10 : i64>
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<10 : i64>) -> !mpc.code<10 : i64>
    %2 = "mpc.masked_dot"(%1, %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    %3 = "mpc.reshare"(%2) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %4 = "mpc.mask_len"(%1, %arg1) : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.pub<10 : i64>
    %5 = "mpc.sub_threshold"(%3, %4) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<10 : i64>, !mpc.pub<10 : i64>) -> !mpc.rep<10 : i64>
    %6 = "mpc.msb"(%5) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %7 = "mpc.or_tree"(%6) {group = 2 : i64} : (!mpc.bits) -> !mpc.bits
    %8 = "mpc.open"(%7) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %8, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<10 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
