module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> (!mpc.code<12 : i64>, !mpc.code<12 : i64>, !mpc.code<12 : i64>, !mpc.code<12 : i64>) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 0 : i64} : () -> !mpc.code<12 : i64>
    %1 = "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 1 : i64} : () -> !mpc.code<12 : i64>
    %2 = "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 0 : i64} : () -> !mpc.code<12 : i64>
    %3 = "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 1 : i64} : () -> !mpc.code<12 : i64>
    return %0, %1, %2, %3 : !mpc.code<12 : i64>, !mpc.code<12 : i64>, !mpc.code<12 : i64>, !mpc.code<12 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<12 : i64>, %arg2: !mpc.code<12 : i64>, %arg3: !mpc.code<12 : i64>, %arg4: !mpc.code<12 : i64>) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 2 : i64, name = "ql", part = 0 : i64} : (i64) -> !mpc.code<12 : i64>
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<12 : i64>) -> !mpc.code<12 : i64>
    %2 = "mpc.load_query"(%arg0) {input = 2 : i64, name = "ql", part = 1 : i64} : (i64) -> !mpc.code<12 : i64>
    %3 = "mpc.rotate"(%2) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<12 : i64>) -> !mpc.code<12 : i64>
    %4 = "mpc.load_query"(%arg0) {input = 3 : i64, name = "qr", part = 0 : i64} : (i64) -> !mpc.code<12 : i64>
    %5 = "mpc.rotate"(%4) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<12 : i64>) -> !mpc.code<12 : i64>
    %6 = "mpc.load_query"(%arg0) {input = 3 : i64, name = "qr", part = 1 : i64} : (i64) -> !mpc.code<12 : i64>
    %7 = "mpc.rotate"(%6) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<12 : i64>) -> !mpc.code<12 : i64>
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %8 = "mpc.batch_masked_dot"(%1, %arg1) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    %9 = "mpc.batch_masked_dot"(%3, %arg2) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    %10 = "mpc.batch_masked_dot"(%5, %arg3) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    %11 = "mpc.batch_masked_dot"(%7, %arg4) {alternative_tile = [6, 4], code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<12 : i64>, !mpc.code<12 : i64>) -> !mpc.add<12 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %12 = "mpc.reshare"(%8) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %13 = "mpc.reshare"(%9) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %14 = "mpc.lin"(%13, %12) {a = 1 : i64, b = 4 : i64} : (!mpc.rep<12 : i64>, !mpc.rep<12 : i64>) -> !mpc.rep<12 : i64>
    %15 = "mpc.msb"(%14) : (!mpc.rep<12 : i64>) -> !mpc.bits
    %16 = "mpc.or_tree"(%15) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %17 = "mpc.reshare"(%10) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %18 = "mpc.reshare"(%11) : (!mpc.add<12 : i64>) -> !mpc.rep<12 : i64>
    %19 = "mpc.lin"(%18, %17) {a = 1 : i64, b = 4 : i64} : (!mpc.rep<12 : i64>, !mpc.rep<12 : i64>) -> !mpc.rep<12 : i64>
    %20 = "mpc.msb"(%19) : (!mpc.rep<12 : i64>) -> !mpc.bits
    %21 = "mpc.or_tree"(%20) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %22 = "mpc.and"(%16, %21) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %23 = "mpc.append"(%22) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %24 = "mpc.open"(%23) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %25 = "mpc.batch_pick"(%24) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %25, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<12 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
