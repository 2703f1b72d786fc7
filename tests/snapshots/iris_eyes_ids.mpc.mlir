module {
  func.func @setup() -> (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    %1 = "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    return %0, %1 : !mpc.shamir<"gr2">, !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">, %arg2: !mpc.shamir<"gr2">) {
    %0 = "mpc.load_query"(%arg0) {input = 2 : i64, name = "ql", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %2 = "mpc.shamir_dot"(%1, %arg1) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %3 = "mpc.reshare"(%2) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %4 = "mpc.mask_len"(%1, %arg1) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %5 = "mpc.sub_threshold"(%3, %4) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.rep<16 : i64>
    %6 = "mpc.msb"(%5) : (!mpc.rep<16 : i64>) -> !mpc.bits
    %7 = "mpc.or_tree"(%6) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %8 = "mpc.load_query"(%arg0) {input = 3 : i64, name = "qr", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %9 = "mpc.rotate"(%8) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %10 = "mpc.shamir_dot"(%9, %arg2) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %11 = "mpc.reshare"(%10) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %12 = "mpc.mask_len"(%9, %arg2) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.pub<16 : i64>
    %13 = "mpc.sub_threshold"(%11, %12) {ratio_den = 8 : i64, ratio_num = 3 : i64} : (!mpc.rep<16 : i64>, !mpc.pub<16 : i64>) -> !mpc.rep<16 : i64>
    %14 = "mpc.msb"(%13) : (!mpc.rep<16 : i64>) -> !mpc.bits
    %15 = "mpc.or_tree"(%14) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %16 = "mpc.and"(%7, %15) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %17 = "mpc.open"(%16) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %17, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
