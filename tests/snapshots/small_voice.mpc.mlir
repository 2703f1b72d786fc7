module {
  func.func @setup() -> !mpc.code<53 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "voices", part = 2 : i64} : () -> !mpc.code<53 : i64>
    return %0 : !mpc.code<53 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<53 : i64>) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "v", part = 2 : i64} : (i64) -> !mpc.code<53 : i64>
    %1 = "mpc.masked_dot"(%0, %arg1) {code_bits = 64 : i64} : (!mpc.code<53 : i64>, !mpc.code<53 : i64>) -> !mpc.add<53 : i64>
    %2 = "mpc.reshare"(%1) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
    %3 = "mpc.self_dot"(%0) : (!mpc.code<53 : i64>) -> !mpc.add<53 : i64>
    %4 = "mpc.reshare"(%3) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
    %5 = "mpc.self_dot"(%arg1) : (!mpc.code<53 : i64>) -> !mpc.add<53 : i64>
    %6 = "mpc.reshare"(%5) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
    %7 = "mpc.mul"(%2, %2) : (!mpc.rep<53 : i64>, !mpc.rep<53 : i64>) -> !mpc.add<53 : i64>
    %8 = "mpc.reshare"(%7) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
    %9 = "mpc.mul"(%6, %4) : (!mpc.rep<53 : i64>, !mpc.rep<53 : i64>) -> !mpc.add<53 : i64>
    %10 = "mpc.reshare"(%9) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
    %11 = "mpc.msb"(%2) : (!mpc.rep<53 : i64>) -> !mpc.bits
    %12 = "mpc.not"(%11) : (!mpc.bits) -> !mpc.bits
    %13 = "mpc.lin"(%8, %10) {a = 2500 : i64, b = 289 : i64} : (!mpc.rep<53 : i64>, !mpc.rep<53 : i64>) -> !mpc.rep<53 : i64>
    %14 = "mpc.msb"(%13) : (!mpc.rep<53 : i64>) -> !mpc.bits
    %15 = "mpc.not"(%14) : (!mpc.bits) -> !mpc.bits
    %16 = "mpc.and"(%12, %15) : (!mpc.bits, !mpc.bits) -> !mpc.bits
    %17 = "mpc.open"(%16) {to = 1 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %17, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<53 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
