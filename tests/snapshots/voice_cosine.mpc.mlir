module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> !mpc.code<60 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "voices", part = 2 : i64} : () -> !mpc.code<60 : i64>
    return %0 : !mpc.code<60 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<60 : i64>) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "v", part = 2 : i64} : (i64) -> !mpc.code<60 : i64>
    %1 = "mpc.self_dot"(%0) : (!mpc.code<60 : i64>) -> !mpc.add<60 : i64>
    %2 = "mpc.reshare"(%1) : (!mpc.add<60 : i64>) -> !mpc.rep<60 : i64>
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %3 = "mpc.batch_masked_dot"(%0, %arg1) {code_bits = 192 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 0 : i64, record_panel_bytes = 0 : i64, tile = [2, 4], tile_codes = 8 : i64} : (!mpc.code<60 : i64>, !mpc.code<60 : i64>) -> !mpc.add<60 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %4 = "mpc.gallery_view"(%arg1) {shares = 1 : i64} : (!mpc.code<60 : i64>) -> !mpc.code<60 : i64>
    %5 = "mpc.reshare"(%3) : (!mpc.add<60 : i64>) -> !mpc.rep<60 : i64>
    %6 = "mpc.self_dot"(%4) : (!mpc.code<60 : i64>) -> !mpc.add<60 : i64>
    %7 = "mpc.reshare"(%6) : (!mpc.add<60 : i64>) -> !mpc.rep<60 : i64>
    %8 = "mpc.mul"(%5, %5) : (!mpc.rep<60 : i64>, !mpc.rep<60 : i64>) -> !mpc.add<60 : i64>
    %9 = "mpc.reshare"(%8) : (!mpc.add<60 : i64>) -> !mpc.rep<60 : i64>
    %10 = "mpc.batch_repeat"(%7) {width = 1 : i64} : (!mpc.rep<60 : i64>) -> !mpc.rep<60 : i64>
    %11 = "mpc.batch_spread"(%2, %10) {width = 1 : i64} : (!mpc.rep<60 : i64>, !mpc.rep<60 : i64>) -> !mpc.rep<60 : i64>
    %12 = "mpc.mul"(%10, %11) : (!mpc.rep<60 : i64>, !mpc.rep<60 : i64>) -> !mpc.add<60 : i64>
    %13 = "mpc.reshare"(%12) : (!mpc.add<60 : i64>) -> !mpc.rep<60 : i64>
    %14 = "mpc.msb"(%5) : (!mpc.rep<60 : i64>) -> !mpc.bits
    %15 = "mpc.not"(%14) : (!mpc.bits) -> !mpc.bits
    %16 = "mpc.lin"(%9, %13) {a = 2500 : i64, b = 289 : i64} : (!mpc.rep<60 : i64>, !mpc.rep<60 : i64>) -> !mpc.rep<60 : i64>
    %17 = "mpc.msb"(%16) : (!mpc.rep<60 : i64>) -> !mpc.bits
    %18 = "mpc.not"(%17) : (!mpc.bits) -> !mpc.bits
    %19 = "mpc.and"(%15, %18) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %20 = "mpc.append"(%19) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %21 = "mpc.open"(%20) {to = 1 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %22 = "mpc.batch_pick"(%21) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %22, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<60 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
