func.func @query(%arg0: i64) {
  "mpc.stage"() {name = "prefetch"} : () -> ()
  return
}
