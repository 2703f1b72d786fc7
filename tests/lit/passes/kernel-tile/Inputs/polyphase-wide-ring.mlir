module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
  func.func @setup() -> !mpc.code<32 : i64> {
    %0 = "mpc.load_gallery"() {input = 0 : i64, name = "db", part = 0 : i64} : () -> !mpc.code<32 : i64>
    return %0 : !mpc.code<32 : i64>
  }
  func.func @query(%arg0: i64, %arg1: !mpc.code<32 : i64>) attributes {mpc.query_batch = 1 : i64, mpc.record_chunk = 0 : i64} {
    "mpc.stage"() {name = "query"} : () -> ()
    %0 = "mpc.load_query"(%arg0) {input = 1 : i64, name = "q", part = 0 : i64} : (i64) -> !mpc.code<32 : i64>
    %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.code<32 : i64>) -> !mpc.code<32 : i64>
    "mpc.stage"() {name = "batch_dot"} : () -> ()
    %2 = "mpc.batch_masked_dot"(%1, %arg1) {code_bits = 12800 : i64, polyphase = [-15, 15]} : (!mpc.code<32 : i64>, !mpc.code<32 : i64>) -> !mpc.add<32 : i64>
    return
  }
}
