module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    %1 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 1 : i64} : () -> !mpc.shamir<"gr2">
    return %0, %1 : !mpc.shamir<"gr2">, !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">, %arg2: !mpc.shamir<"gr2">) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %2 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.shamir<"gr2">
    %3 = "mpc.rotate"(%2) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %4 = "mpc.load_query"(%arg0) {input = 3 : i64, name = "tier_low", part = 3 : i64} : (i64) -> !mpc.bits
    %5 = "mpc.load_query"(%arg0) {input = 2 : i64, name = "tier_high", part = 3 : i64} : (i64) -> !mpc.bits
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %6 = "mpc.batch_shamir_dot"(%1, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %7 = "mpc.batch_shamir_dot"(%3, %arg2) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %8 = "mpc.reshare"(%6) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %9 = "mpc.reshare"(%7) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %10 = "mpc.lift"(%9) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %11 = "mpc.const_lift"(%8) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %12 = "mpc.lin"(%10, %11) {a = 28836 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %13 = "mpc.msb"(%12) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %14 = "mpc.lift"(%9) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %15 = "mpc.const_lift"(%8) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %16 = "mpc.lin"(%14, %15) {a = 24904 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %17 = "mpc.msb"(%16) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %18 = "mpc.batch_spread"(%4, %13) {width = 31 : i64} : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %19 = "mpc.mux"(%18, %13, %17) : (!mpc.bits, !mpc.bits, !mpc.bits) -> !mpc.bits
    %20 = "mpc.lift"(%9) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %21 = "mpc.const_lift"(%8) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %22 = "mpc.lin"(%20, %21) {a = 22283 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %23 = "mpc.msb"(%22) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %24 = "mpc.lift"(%9) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %25 = "mpc.const_lift"(%8) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %26 = "mpc.lin"(%24, %25) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %27 = "mpc.msb"(%26) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %28 = "mpc.batch_spread"(%4, %23) {width = 31 : i64} : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %29 = "mpc.mux"(%28, %23, %27) : (!mpc.bits, !mpc.bits, !mpc.bits) -> !mpc.bits
    %30 = "mpc.batch_spread"(%5, %19) {width = 31 : i64} : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %31 = "mpc.mux"(%30, %19, %29) : (!mpc.bits, !mpc.bits, !mpc.bits) -> !mpc.bits
    %32 = "mpc.or_tree"(%31) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %33 = "mpc.append"(%32) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %34 = "mpc.open"(%33) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %35 = "mpc.batch_pick"(%34) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %35, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
