module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> (!mpc.code<12 : i64>, !mpc.code<12 : i64>) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<12 : i64>
    %1 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 1 : i64} : () -> !mpc.code<12 : i64>
    return %0, %1 : !mpc.code<12 : i64>, !mpc.code<12 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<12 : i64>, %arg2: !mpc.code<12 : i64>) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<12 : i64>
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<12 : i64>) -> !mpc.code<12 : i64>
    %2 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.code<12 : i64>
    %3 = "mpc.rotate"(%2) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<12 : i64>) -> !mpc.code<12 : i64>
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %4 = "mpc.batch_masked_dot"(%1, %arg1) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    %5 = "mpc.batch_masked_dot"(%3, %arg2) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %6 = "mpc.reshare"(%4) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %7 = "mpc.reshare"(%5) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %8 = "mpc.lin"(%7, %6) {a = 1 : i64, b = 4 : i64} : (!mpc.rep<12 : i64>, !mpc.rep<12 : i64>) -> !mpc.rep<12 : i64>
    %9 = "mpc.msb"(%8) : (!mpc.rep<12 : i64>) -> !mpc.bits
    %10 = "mpc.or_tree"(%9) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %11 = "mpc.bit_inject"(%10) : (!mpc.bits) -> !mpc.rep<32 : i64>
    %12 = "mpc.sum"(%11) {group = 0 : i64, per_query = 1 : i64} : (!mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %13 = "mpc.append"(%12) : (!mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %14 = "mpc.sum"(%13) {group = 0 : i64, per_query = 1 : i64} : (!mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %15 = "mpc.open_int"(%14) {to = 0 : i64} : (!mpc.rep<32 : i64>) -> !mpc.clear_ints
    "mpc.stage"() {name = "finish"} : () -> ()
    %16 = "mpc.batch_pick"(%15) {width = 1 : i64} : (!mpc.clear_ints) -> !mpc.clear_ints
    "mpc.output"(%arg0, %16) {label = "count", shape = "count"} : (i64, !mpc.clear_ints) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
