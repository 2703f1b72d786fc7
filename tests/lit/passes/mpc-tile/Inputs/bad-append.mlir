func.func @query(%arg0: i64, %arg1: !mpc.bits) {
  %0 = "mpc.append"(%arg1) : (!mpc.bits) -> !mpc.clear_bits
  return
}
