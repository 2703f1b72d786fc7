// mpc-tile's batch forms of the chunk stage (`mpc.batched_chunks`): a per-query bit of the
// query stage (`tier` of `if tier { .. } else { .. }`) read by an elementwise op of the chunk
// is spread into the batch layout of the other operand (5 values per record and query); an OR
// over all records and rotations (`group = 0`) reduces each query's values apart
// (`per_query = 5`) per chunk and again over the chunks' results (`per_query = 1`); the opening
// runs once per batch and each query's output picks its bit.
// RUN: %irisc opt %s --passes=mpc-tile | FileCheck %s
// RUN: %irisc opt %s --passes=mpc-tile | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s
// RUN: %irisc opt %s --passes='mpc-tile{query-batch=1}' | FileCheck %s --check-prefix=ONE
// REQUIRES: irisc-opt

// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64}
// CHECK: %[[TIER:.*]] = "mpc.load_query"(%arg0) {input = 2 : i64
// CHECK: "mpc.stage"() {name = "chunk"} : () -> ()
// CHECK: %[[LT:.*]] = "mpc.msb"
// CHECK: %[[GE:.*]] = "mpc.msb"
// CHECK-NEXT: %[[T:.*]] = "mpc.batch_spread"(%[[TIER]], %[[LT]]) {width = 5 : i64} : (!mpc.bits, !mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[M:.*]] = "mpc.mux"(%[[T]], %[[LT]], %[[GE]])
// CHECK-NEXT: %[[OR:.*]] = "mpc.or_tree"(%[[M]]) {group = 0 : i64, per_query = 5 : i64}
// CHECK-NEXT: %[[ALL:.*]] = "mpc.append"(%[[OR]])
// CHECK-NEXT: "mpc.stage"() {name = "batch_finish"} : () -> ()
// CHECK-NEXT: %[[FIN:.*]] = "mpc.or_tree"(%[[ALL]]) {group = 0 : i64, per_query = 1 : i64}
// CHECK-NEXT: %[[OB:.*]] = "mpc.open"(%[[FIN]])
// CHECK-NEXT: "mpc.stage"() {name = "finish"} : () -> ()
// CHECK-NEXT: %[[O:.*]] = "mpc.batch_pick"(%[[OB]]) {width = 1 : i64}
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]])

// A batch of one query is still a batch (its layout is the per-query one).
// ONE: attributes {mpc.batched_chunks = true, mpc.query_batch = 1 : i64, mpc.record_chunk = 0 : i64}
// ONE: "mpc.batch_spread"

module {
  func.func @setup() -> !mpc.code<10 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<10 : i64>
    return %0 : !mpc.code<10 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<10 : i64>
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<10 : i64>) -> !mpc.code<10 : i64>
    %t = "mpc.load_query"(%arg0) {input = 2 : i64, name = "tier", part = 0 : i64} : (i64) -> !mpc.bits
    %2 = "mpc.masked_dot"(%1, %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    %3 = "mpc.reshare"(%2) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %4 = "mpc.mask_len"(%1, %arg1) : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.pub<10 : i64>
    %5 = "mpc.sub_threshold"(%3, %4) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<10 : i64>, !mpc.pub<10 : i64>) -> !mpc.rep<10 : i64>
    %6 = "mpc.msb"(%5) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %7 = "mpc.sub_threshold"(%3, %4) {ratio_den = 4 : i64, ratio_num = 1 : i64} : (!mpc.rep<10 : i64>, !mpc.pub<10 : i64>) -> !mpc.rep<10 : i64>
    %8 = "mpc.msb"(%7) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %9 = "mpc.mux"(%t, %6, %8) : (!mpc.bits, !mpc.bits, !mpc.bits) -> !mpc.bits
    %10 = "mpc.or_tree"(%9) {group = 0 : i64} : (!mpc.bits) -> !mpc.bits
    %11 = "mpc.open"(%10) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %11) {label = "match", shape = "bit"} : (i64, !mpc.clear_bits) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
