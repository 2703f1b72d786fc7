module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    %1 = "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    return %0, %1 : !mpc.shamir<"gr2">, !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">, %arg2: !mpc.shamir<"gr2">) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 2 : i64, name = "ql", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %2 = "mpc.load_query"(%arg0) {input = 3 : i64, name = "qr", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %3 = "mpc.rotate"(%2) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %4 = "mpc.batch_shamir_dot"(%1, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %5 = "mpc.batch_shamir_dot"(%3, %arg2) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %6 = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %7 = "mpc.gallery_view"(%arg2) {shares = 0 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %8 = "mpc.batch_mask_len"(%1, %6) {computed_by = "record_thirds", holders = 1 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %9 = "mpc.sub_threshold"(%4, %8) {ratio_den = 8 : i64, ratio_num = 3 : i64, threshold_by = "record_thirds"} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %10 = "mpc.additive_msb"(%9) : (!mpc.add<16 : i64>) -> !mpc.bits
    %11 = "mpc.or_tree"(%10) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %12 = "mpc.batch_mask_len"(%3, %7) {computed_by = "record_thirds", holders = 1 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %13 = "mpc.sub_threshold"(%5, %12) {ratio_den = 8 : i64, ratio_num = 3 : i64, threshold_by = "record_thirds"} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %14 = "mpc.additive_msb"(%13) : (!mpc.add<16 : i64>) -> !mpc.bits
    %15 = "mpc.or_tree"(%14) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %16 = "mpc.and"(%11, %15) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %17 = "mpc.append"(%16) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %18 = "mpc.open"(%17) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %19 = "mpc.batch_pick"(%18) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %19, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
