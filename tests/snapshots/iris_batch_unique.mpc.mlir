module {
  func.func @setup() -> (!mpc.code<16 : i64>, !mpc.code<16 : i64>) {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<16 : i64>
    %1 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 1 : i64} : () -> !mpc.code<16 : i64>
    return %0, %1 : !mpc.code<16 : i64>, !mpc.code<16 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<16 : i64>, %arg2: !mpc.code<16 : i64>) {
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<16 : i64>
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.code<16 : i64>) -> !mpc.code<16 : i64>
    %2 = "mpc.masked_dot"(%1, %arg1) {code_bits = 12800 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    %3 = "mpc.reshare"(%2) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %4 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.code<16 : i64>
    %5 = "mpc.rotate"(%4) {hi = 15 : i64, lo = -15 : i64} : (!mpc.code<16 : i64>) -> !mpc.code<16 : i64>
    %6 = "mpc.masked_dot"(%5, %arg2) {code_bits = 12800 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    %7 = "mpc.reshare"(%6) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %8 = "mpc.lift"(%7) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %9 = "mpc.const_lift"(%3) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %10 = "mpc.lin"(%8, %9) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %11 = "mpc.msb"(%10) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %12 = "mpc.or_tree"(%11) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %13 = "mpc.open"(%12) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %13, %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<16 : i64>) -> ()
    %14 = "mpc.load_earlier"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<16 : i64>
    %15 = "mpc.masked_dot"(%1, %14) {code_bits = 12800 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    %16 = "mpc.reshare"(%15) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %17 = "mpc.load_earlier"(%arg0) {input = 1 : i64, name = "q", part = 1 : i64} : (i64) -> !mpc.code<16 : i64>
    %18 = "mpc.masked_dot"(%5, %17) {code_bits = 12800 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>
    %19 = "mpc.reshare"(%18) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
    %20 = "mpc.lift"(%19) : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %21 = "mpc.const_lift"(%16) {lift_bits = 16 : i64} : (!mpc.rep<16 : i64>) -> !mpc.rep<32 : i64>
    %22 = "mpc.lin"(%20, %21) {a = 20317 : i64, b = 1 : i64} : (!mpc.rep<32 : i64>, !mpc.rep<32 : i64>) -> !mpc.rep<32 : i64>
    %23 = "mpc.msb"(%22) : (!mpc.rep<32 : i64>) -> !mpc.bits
    %24 = "mpc.or_tree"(%23) {group = 31 : i64} : (!mpc.bits) -> !mpc.bits
    %25 = "mpc.open"(%24) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
    "mpc.output"(%arg0, %25, %14) {label = "in_batch", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<16 : i64>) -> ()
    "mpc.emit"(%arg0) : (i64) -> ()
    return
  }
}
