module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> (!mpc.code<16 : i64>, !mpc.code<16 : i64>) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<16 : i64>
    %1 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 1 : i64} : () -> !mpc.code<16 : i64>
    return %0, %1 : !mpc.code<16 : i64>, !mpc.code<16 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<16 : i64>, %arg2: !mpc.code<16 : i64>) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<16 : i64>
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.code<16 : i64>) -> !mpc.code<16 : i64>
    %2 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.code<16 : i64>
    %3 = "mpc.rotate"(%2) {hi = 15 : i64, lo = -15 : i64} : (!mpc.code<16 : i64>) -> !mpc.code<16 : i64>
    %4 = "mpc.load_earlier"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<16 : i64>
    %5 = "mpc.masked_dot"(%1, %4) {alternative_tile = [6, 4], code_bits = 12800 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 31 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    %6 = "mpc.reshare"(%5) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %7 = "mpc.load_earlier"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.code<16 : i64>
    %8 = "mpc.masked_dot"(%3, %7) {alternative_tile = [6, 4], code_bits = 12800 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 31 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    %9 = "mpc.reshare"(%8) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %10 = "mpc.lift"(%9) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %11 = "mpc.const_lift"(%6) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %12 = "mpc.lin"(%10, %11) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %13 = "mpc.msb"(%12) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %14 = "mpc.or_tree"(%13) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %15 = "mpc.batch_masked_dot"(%1, %arg1) {alternative_tile = [6, 4], code_bits = 12800 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    %16 = "mpc.batch_masked_dot"(%3, %arg2) {alternative_tile = [6, 4], code_bits = 12800 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %17 = "mpc.reshare"(%15) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %18 = "mpc.reshare"(%16) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %19 = "mpc.lift"(%18) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %20 = "mpc.const_lift"(%17) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %21 = "mpc.lin"(%19, %20) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %22 = "mpc.msb"(%21) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %23 = "mpc.or_tree"(%22) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %24 = "mpc.append"(%23) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %25 = "mpc.open"(%24) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %26 = "mpc.batch_pick"(%25) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %26, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<16 : i64>) -> ()
    %27 = "mpc.open"(%14) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %27, %4) {label = "in_batch", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<16 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
