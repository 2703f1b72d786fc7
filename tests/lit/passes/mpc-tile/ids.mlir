// mpc-tile on iris_ids-shaped @query (ids_public.irs after irs-to-mpc, rep3): the dot product
// becomes one batch call per chunk, record-local ops read the chunk's view and run once per
// chunk for the whole batch (`mpc.batched_chunks`: the batch dot product's own output is the
// batch layout [record][query][code]; mask_len reads every query of the batch), the ids crossing
// is appended per chunk; `any r in rotations` (group = 5) stays within a record and query, so
// nothing is finished over the chunks. The opening runs once per batch, each query's output
// picks its part. The options are recorded on @query.
// RUN: %irisc opt %s --passes=mpc-tile | FileCheck %s
// RUN: %irisc opt %s --passes=mpc-tile | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s
// RUN: %irisc opt %s --passes='mpc-tile{query-batch=4 record-chunk=1000}' | FileCheck %s --check-prefix=OPTS
// REQUIRES: irisc-opt

// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64}
// CHECK-NEXT: "mpc.stage"() {name = "query"} : () -> ()
// CHECK-NEXT: %[[Q:.*]] = "mpc.load_query"(%arg0)
// CHECK-NEXT: %[[C:.*]] = "mpc.rotate"(%[[Q]])
// CHECK-NEXT: "mpc.stage"() {name = "batch_dot"} : () -> ()
// CHECK-NEXT: %[[DOT:.*]] = "mpc.batch_masked_dot"(%[[C]], %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
// CHECK-NEXT: "mpc.stage"() {name = "chunk"} : () -> ()
// CHECK-NEXT: %[[V:.*]] = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.code<10 : i64>) -> !mpc.code<10 : i64>
// CHECK-NEXT: %[[REP:.*]] = "mpc.reshare"(%[[DOT]])
// CHECK-NEXT: %[[ML:.*]] = "mpc.batch_mask_len"(%[[C]], %[[V]])
// CHECK-NEXT: %[[D:.*]] = "mpc.sub_threshold"(%[[REP]], %[[ML]])
// CHECK-NEXT: %[[B:.*]] = "mpc.msb"(%[[D]])
// CHECK-NEXT: %[[OR:.*]] = "mpc.or_tree"(%[[B]]) {group = 5 : i64}
// CHECK-NEXT: %[[ALL:.*]] = "mpc.append"(%[[OR]]) : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: "mpc.stage"() {name = "batch_finish"} : () -> ()
// CHECK-NEXT: %[[OB:.*]] = "mpc.open"(%[[ALL]]) {to = 0 : i64}
// CHECK-NEXT: "mpc.stage"() {name = "finish"} : () -> ()
// One bit per record and query.
// CHECK-NEXT: %[[O:.*]] = "mpc.batch_pick"(%[[OB]]) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
// The ids are those of the whole gallery, not of a view.
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]], %arg1) {label = "ids", shape = "ids"}
// CHECK-NEXT: "mpc.emit"(%arg0) : (i64) -> ()
// CHECK-NEXT: return

// OPTS: func.func @query({{.*}}) attributes {mpc.batched_chunks = true, mpc.query_batch = 4 : i64, mpc.record_chunk = 1000 : i64}

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
    %7 = "mpc.or_tree"(%6) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %8 = "mpc.open"(%7) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %8, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<10 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
