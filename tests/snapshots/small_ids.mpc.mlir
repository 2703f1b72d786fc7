module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> !mpc.shamir<"gr2"> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    return %0 : !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %2 = "mpc.batch_shamir_dot"(%1, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %3 = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %4 = "mpc.batch_mask_len"(%1, %3) {computed_by = "record_thirds", holders = 1 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %5 = "mpc.sub_threshold"(%2, %4) {ratio_den = 8 : i64, ratio_num = 3 : i64, threshold_by = "record_thirds"} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %6 = "mpc.additive_msb"(%5) : (!mpc.add<16 : i64>) -> !mpc.bits
    %7 = "mpc.or_tree"(%6) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %8 = "mpc.append"(%7) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %9 = "mpc.open"(%8) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %10 = "mpc.batch_pick"(%9) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %10, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
