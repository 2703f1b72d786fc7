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
    %4 = "mpc.load_earlier"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<12 : i64>
    %5 = "mpc.masked_dot"(%1, %4) {code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [5, 5], tile_codes = 5 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    %6 = "mpc.reshare"(%5) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %7 = "mpc.load_earlier"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.code<12 : i64>
    %8 = "mpc.masked_dot"(%3, %7) {code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [5, 5], tile_codes = 5 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    %9 = "mpc.reshare"(%8) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %10 = "mpc.lin"(%9, %6) {a = 1 : i64, b = 4 : i64} : (!mpc.rep<12 : i64>, !mpc.rep<12 : i64>) -> !mpc.rep<12 : i64>
    %11 = "mpc.msb"(%10) : (!mpc.rep<12 : i64>) -> !mpc.bits
    %12 = "mpc.or_tree"(%11) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %13 = "mpc.batch_masked_dot"(%1, %arg1) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    %14 = "mpc.batch_masked_dot"(%3, %arg2) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %15 = "mpc.reshare"(%13) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %16 = "mpc.reshare"(%14) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %17 = "mpc.lin"(%16, %15) {a = 1 : i64, b = 4 : i64} : (!mpc.rep<12 : i64>, !mpc.rep<12 : i64>) -> !mpc.rep<12 : i64>
    %18 = "mpc.msb"(%17) : (!mpc.rep<12 : i64>) -> !mpc.bits
    %19 = "mpc.or_tree"(%18) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %20 = "mpc.append"(%19) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %21 = "mpc.open"(%20) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %22 = "mpc.batch_pick"(%21) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %22, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<12 : i64>) -> ()
    %23 = "mpc.open"(%12) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %23, %4) {label = "in_batch", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<12 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
