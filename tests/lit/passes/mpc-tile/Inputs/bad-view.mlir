func.func @query(%arg0: i64, %arg1: !mpc.code<10 : i64>) {
  %0 = "mpc.gallery_view"(%arg1) {shares = 0 : i64} : (!mpc.code<10 : i64>) -> !mpc.code<16 : i64>
  return
}
