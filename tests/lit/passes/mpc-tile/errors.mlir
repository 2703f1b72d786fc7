// mpc-tile's diagnostics: invalid options, and a body that is already staged.
// RUN: not %irisc opt %s --passes='mpc-tile{query-batch=0}' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not %irisc opt %s --passes='mpc-tile{query-batch=eight}' 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not %irisc opt %s --passes='mpc-tile{chunk=4}' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not %irisc opt %s --passes=mpc-tile 2>&1 | FileCheck %s --check-prefix=AGAIN
// REQUIRES: irisc-opt

// ZERO: option `query-batch` must be at least 1
// NAN: option `query-batch` needs an integer in 0..=1024, not `eight`
// UNKNOWN: unknown option `chunk` (expected query-batch, record-chunk, batch-chunks)
// AGAIN: pass mpc-tile: @query is already tiled

module {
  func.func @setup() -> !mpc.code<10 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<10 : i64>
    return %0 : !mpc.code<10 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) attributes {mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<10 : i64>
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %1 = "mpc.batch_masked_dot"(%0, %arg1) {code_bits = 256 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %2 = "mpc.reshare"(%1) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %3 = "mpc.msb"(%2) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %4 = "mpc.append"(%3) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %5 = "mpc.open"(%4) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %5, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<10 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
