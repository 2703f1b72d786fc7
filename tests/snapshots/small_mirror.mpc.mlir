module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> !mpc.code<10 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<10 : i64>
    return %0 : !mpc.code<10 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<10 : i64>
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.code<10 : i64>) -> !mpc.code<10 : i64>
    %2 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64, mirror = 1 : i64} : (!mpc.code<10 : i64>) -> !mpc.code<10 : i64>
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %3 = "mpc.batch_masked_dot"(%1, %arg1) {code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    %4 = "mpc.batch_masked_dot"(%2, %arg1) {code_bits = 256 : i64, code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.add<10 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %5 = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.code<10 : i64>) -> !mpc.code<10 : i64>
    %6 = "mpc.reshare"(%3) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %7 = "mpc.batch_mask_len"(%1, %5) : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.pub<10 : i64>
    %8 = "mpc.sub_threshold"(%6, %7) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<10 : i64>, !mpc.pub<10 : i64>) -> !mpc.rep<10 : i64>
    %9 = "mpc.msb"(%8) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %10 = "mpc.or_tree"(%9) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %11 = "mpc.reshare"(%4) : (!mpc.add<10 : i64>) -> !mpc.rep<10 : i64>
    %12 = "mpc.batch_mask_len"(%2, %5) : (!mpc.code<10 : i64>, !mpc.code<10 : i64>) -> !mpc.pub<10 : i64>
    %13 = "mpc.sub_threshold"(%11, %12) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<10 : i64>, !mpc.pub<10 : i64>) -> !mpc.rep<10 : i64>
    %14 = "mpc.msb"(%13) : (!mpc.rep<10 : i64>) -> !mpc.bits
    %15 = "mpc.or_tree"(%14) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %16 = "mpc.or"(%10, %15) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %17 = "mpc.append"(%16) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %18 = "mpc.open"(%17) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %19 = "mpc.batch_pick"(%18) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %19, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<10 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
