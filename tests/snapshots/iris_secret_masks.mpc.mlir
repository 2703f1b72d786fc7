module {
  func.func @setup() -> (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.shamir<"gr2">
    %1 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 1 : i64} : () -> !mpc.shamir<"gr2">
    return %0, %1 : !mpc.shamir<"gr2">, !mpc.shamir<"gr2">
  }
  func.func @query(%arg0: i64, %arg1: !mpc.shamir<"gr2">, %arg2: !mpc.shamir<"gr2">) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.shamir<"gr2">
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %2 = "mpc.shamir_dot"(%1, %arg1) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %3 = "mpc.reshare"(%2) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %4 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.shamir<"gr2">
    %5 = "mpc.rotate"(%4) {hi = 15 : i64, lo = -15 : i64} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
    %6 = "mpc.shamir_dot"(%5, %arg2) : (!mpc.shamir<"gr2">, !mpc.shamir<"gr2">) -> !mpc.add<16 : i64>
    %7 = "mpc.reshare"(%6) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %8 = "mpc.lift"(%7) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %9 = "mpc.const_lift"(%3) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %10 = "mpc.lin"(%8, %9) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %11 = "mpc.msb"(%10) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %12 = "mpc.or_tree"(%11) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %13 = "mpc.open"(%12) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %13, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.shamir<"gr2">) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
