module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> !mpc.shamir<"gr2"> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    return %0 : !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">) attributes {mpc.batched_chunks = true, mpc.query_batch = 8 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %2 = "mpc.batch_shamir_dot"(%1, %arg1) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    "mpc.stage"() {name = "chunk"} : () -> ()
    %3 = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %4 = "mpc.batch_mask_len"(%1, %3) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %5 = "mpc.sub_threshold"(%2, %4) {ratio_den = 200 : i64, ratio_num = 69 : i64} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %6 = "mpc.additive_msb"(%5) : (!mpc.add<16 : i64>) -> !mpc.bits
    %7 = "mpc.reshare"(%2) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %8 = "mpc.batch_mask_len"(%1, %3) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %9 = "mpc.sub_threshold"(%7, %8) {ratio_den = 200 : i64, ratio_num = 69 : i64} : (!mpc.rep<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.rep<16 : i64>
    %10 = "mpc.sub_threshold"(%2, %8) {ratio_den = 4 : i64, ratio_num = 1 : i64} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %11 = "mpc.msb"(%9) : (!mpc.rep<16 : i64>) -> !mpc.bits
    %12 = "mpc.batch_mask_len"(%1, %3) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %13 = "mpc.sub_threshold"(%2, %12) {ratio_den = 200 : i64, ratio_num = 69 : i64} : (!mpc.add<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.add<16 : i64>
    %14 = "mpc.append"(%12) : (!mpc.pub<16 : i64>) -> !mpc.pub<16 : i64>
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
