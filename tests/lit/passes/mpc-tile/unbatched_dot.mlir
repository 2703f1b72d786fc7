// A tiled body whose chunk stage has an op without a batch form keeps the per-query chunk loop
// and says why on @query (see unbatched.mlir).
// RUN: %irisc opt %s --passes=mpc-tile | FileCheck %s
// RUN: %irisc opt %s --passes=mpc-tile | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s
// REQUIRES: irisc-opt

// A dot product of two gallery values in the chunk stage (no query operand): no batch form.
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) attributes {mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64, mpc.unbatched = "`mpc.masked_dot` in the chunk stage has no batch form"}
// CHECK-NOT: batch_finish
// CHECK: "mpc.stage"() {name = "chunk"}
// CHECK: "mpc.masked_dot"(%{{.*}}, %{{.*}})
// CHECK: "mpc.stage"() {name = "finish"}
// CHECK: return

module {
  func.func @setup() -> !mpc.code<10 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<10 : i64>
    return %0 : !mpc.code<10 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<10 : i64>
    %1 = "mpc.masked_dot"(%0, %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    %2 = "mpc.masked_dot"(%arg1, %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    %3 = "mpc.reshare"(%1) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %4 = "mpc.reshare"(%2) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %5 = "mpc.lin"(%3, %4) {a = 1 : i64, b = 1 : i64} : (!mpc.rep<10 : i64>, !mpc.rep<10 : i64>) -> !mpc.rep<10 : i64>
    %6 = "mpc.msb"(%5) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %7 = "mpc.open"(%6) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %7, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<10 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
