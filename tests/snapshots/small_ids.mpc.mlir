module {
  func.func @setup() -> !mpc.shamir<"gr2"> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    return %0 : !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %2 = "mpc.shamir_dot"(%1, %arg1) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %3 = "mpc.reshare"(%2) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %4 = "mpc.mask_len"(%1, %arg1) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %5 = "mpc.sub_threshold"(%3, %4) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.rep<16 : i64>
    %6 = "mpc.msb"(%5) : (!mpc.rep<16 : i64>) -> !mpc.bits
    %7 = "mpc.or_tree"(%6) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
    %8 = "mpc.open"(%7) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %8, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
