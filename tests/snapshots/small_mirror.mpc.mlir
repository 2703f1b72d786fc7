module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> !mpc.shamir<"gr2"> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    return %0 : !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %2 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 4 : i64} : (i64) -> !mpc.shamir<"gr2">
    %3 = "mpc.rotate"(%2) {hi = 2 : i64, lo = -2 : i64, mirror = 2 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %4 = "mpc.batch_shamir_dot"(%1, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %5 = "mpc.batch_shamir_dot"(%3, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-2, 2], record_panel_bytes = 196608 : i64, tile = [4, 6], tile_codes = 40 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %6 = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %7 = "mpc.batch_mask_len"(%1, %6) {computed_by = "record_thirds", holders = 1 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %8 = "mpc.sub_threshold"(%4, %7) {ratio_den = 8 : i64, ratio_num = 3 : i64, threshold_by = "record_thirds"} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %9 = "mpc.additive_msb"(%8) : (!mpc.add<16 : i64>) -> !mpc.bits
    %10 = "mpc.or_tree"(%9) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %11 = "mpc.batch_mask_len"(%3, %6) {computed_by = "record_thirds", holders = 1 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %12 = "mpc.sub_threshold"(%5, %11) {ratio_den = 8 : i64, ratio_num = 3 : i64, threshold_by = "record_thirds"} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %13 = "mpc.additive_msb"(%12) : (!mpc.add<16 : i64>) -> !mpc.bits
    %14 = "mpc.or_tree"(%13) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %15 = "mpc.or"(%10, %14) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %16 = "mpc.append"(%15) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %17 = "mpc.open"(%16) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %18 = "mpc.batch_pick"(%17) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %18, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
