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
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %4 = "mpc.batch_shamir_dot"(%1, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %5 = "mpc.batch_shamir_dot"(%3, %arg2) {alternative_tile = [6, 4], code_panel_bytes = 0 : i64, k_chunk_bytes = 4096 : i64, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216 : i64, tile = [4, 6], tile_codes = 248 : i64} : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %6 = "mpc.reshare"(%4) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %7 = "mpc.reshare"(%5) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %8 = "mpc.lift"(%7) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %9 = "mpc.const_lift"(%6) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %10 = "mpc.lin"(%8, %9) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %11 = "mpc.msb"(%10) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %12 = "mpc.or_tree"(%11) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %13 = "mpc.append"(%12) : (!mpc.bits) -> !mpc.bits
    "mpc.stage"() {name = "batch_finish"} : () -> ()
    %14 = "mpc.open"(%13) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.stage"() {name = "finish"} : () -> ()
    %15 = "mpc.batch_pick"(%14) {width = 1 : i64} : (!mpc.clear_bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %15, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
