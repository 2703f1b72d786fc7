module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">, !mpc.shamir<"gr2">, !mpc.shamir<"gr2">) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    %1 = "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 1 : i64} : () -> !mpc.shamir<"gr2">
    %2 = "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    %3 = "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 1 : i64} : () -> !mpc.shamir<"gr2">
    return %0, %1, %2, %3 : !mpc.shamir<"gr2">, !mpc.shamir<"gr2">, !mpc.shamir<"gr2">, !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">, %arg2: !mpc.shamir<"gr2">, %arg3: !mpc.shamir<"gr2">, %arg4: !mpc.shamir<"gr2">) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 2 : i64, name = "ql", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %2 = "mpc.load_query"(%arg0) {input = 2 : i64, name = "ql", part = 1 : i64} : (i64) -> !mpc.shamir<"gr2">
    %3 = "mpc.rotate"(%2) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %4 = "mpc.load_query"(%arg0) {input = 3 : i64, name = "qr", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %5 = "mpc.rotate"(%4) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %6 = "mpc.load_query"(%arg0) {input = 3 : i64, name = "qr", part = 1 : i64} : (i64) -> !mpc.shamir<"gr2">
    %7 = "mpc.rotate"(%6) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %8 = "mpc.batch_shamir_dot"(%1, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %9 = "mpc.batch_shamir_dot"(%3, %arg2) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %10 = "mpc.batch_shamir_dot"(%5, %arg3) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %11 = "mpc.batch_shamir_dot"(%7, %arg4) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %12 = "mpc.reshare"(%8) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %13 = "mpc.reshare"(%9) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %14 = "mpc.lift"(%13) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %15 = "mpc.const_lift"(%12) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %16 = "mpc.lin"(%14, %15) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %17 = "mpc.msb"(%16) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %18 = "mpc.or_tree"(%17) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %19 = "mpc.reshare"(%10) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %20 = "mpc.reshare"(%11) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %21 = "mpc.lift"(%20) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %22 = "mpc.const_lift"(%19) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %23 = "mpc.lin"(%21, %22) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %24 = "mpc.msb"(%23) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %25 = "mpc.or_tree"(%24) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %26 = "mpc.or"(%18, %25) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %27 = "mpc.append"(%26) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %28 = "mpc.open"(%27) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %29 = "mpc.batch_pick"(%28) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %29, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
