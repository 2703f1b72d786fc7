module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> !mpc.shamir<"fp"> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.shamir<"fp">
    return %0 : !mpc.shamir<"fp">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"fp">) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"fp">
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"fp">) -> !mpc.shamir<"fp">
    %2 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64, mirror = 1 : i64} : (!mpc.shamir<"fp">) -> !mpc.shamir<"fp">
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %3 = "mpc.batch_shamir_dot"(%1, %arg1) {code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, record_panel_bytes = 196608 : i64, tile = [6, 2], tile_codes = 248 : i64} : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.add_p
    %4 = "mpc.batch_shamir_dot"(%2, %arg1) {code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, record_panel_bytes = 196608 : i64, tile = [6, 2], tile_codes = 248 : i64} : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.add_p
    "mpc.stage"() {name = "chunk"} : () -> ()
    %5 = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.shamir<"fp">) -> !mpc.shamir<"fp">
    %6 = "mpc.reshare_p"(%3) : (!mpc.add_p) -> !mpc.rep_p
    %7 = "mpc.batch_mask_len"(%1, %5) : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.pub<16 : i64>
    %8 = "mpc.sub_threshold_p"(%6, %7) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep_p, !mpc.pub<16 : i64>) -> !mpc.rep_p
    %9 = "mpc.msb_p"(%8) : (!mpc.rep_p) -> !mpc.bits
    %10 = "mpc.or_tree"(%9) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %11 = "mpc.reshare_p"(%4) : (!mpc.add_p) -> !mpc.rep_p
    %12 = "mpc.batch_mask_len"(%2, %5) : (!mpc.shamir<"fp">, !mpc.shamir<"fp">) -> !mpc.pub<16 : i64>
    %13 = "mpc.sub_threshold_p"(%11, %12) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep_p, !mpc.pub<16 : i64>) -> !mpc.rep_p
    %14 = "mpc.msb_p"(%13) : (!mpc.rep_p) -> !mpc.bits
    %15 = "mpc.or_tree"(%14) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %16 = "mpc.append"(%10) : (!mpc.bits) -> !mpc.bits
    %17 = "mpc.append"(%15) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %18 = "mpc.open"(%16) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    %19 = "mpc.open"(%17) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %20 = "mpc.batch_pick"(%18) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %20, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"fp">) -> ()
    %21 = "mpc.batch_pick"(%19) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %21, %arg1) {label = "mirror_ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"fp">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
