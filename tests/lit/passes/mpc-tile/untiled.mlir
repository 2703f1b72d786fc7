// Bodies mpc-tile cannot stage keep their ops, one query at a time, and say why on @query.
// RUN: %irisc opt %s --passes=mpc-tile | FileCheck %s
// RUN: %irisc opt %s --passes=mpc-tile | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s
// REQUIRES: irisc-opt

// An OR over all records whose input is also opened whole: per-chunk ORs cannot stand for it.
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) attributes {mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64, mpc.untiled = "`mpc.or_tree` over all records is not the only use of its input after the chunks"}
// CHECK-NOT: mpc.stage
// CHECK: %[[DOT:.*]] = "mpc.masked_dot"(%{{.*}}, %arg1)
// CHECK: "mpc.or_tree"(%[[B:.*]]) {group = 0 : i64}
// CHECK: "mpc.open"(%[[B]])
// CHECK: return

module {
  func.func @setup() -> !mpc.code<10 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<10 : i64>
    return %0 : !mpc.code<10 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<10 : i64>
    %1 = "mpc.masked_dot"(%0, %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    %2 = "mpc.reshare"(%1) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %3 = "mpc.msb"(%2) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %4 = "mpc.or_tree"(%3) {group = 0 : i64} : (!mpc.bits) -> !mpc.bits
    %5 = "mpc.open"(%4) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    %6 = "mpc.open"(%3) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %5) {label = "any", shape = "bit"} : (i64, !mpc.clear_bits) -> ()
    "mpc.output"(%arg0, %6, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<10 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
