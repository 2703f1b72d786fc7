// irs-to-mpc alone, from the module after variant-select and ring-select: cosine >= 17/50 in Z_2^53: two MSBs (p >= 0, den^2 p^2 - num^2 xx yy >= 0) and an AND.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @setup() -> !mpc.code<53 : i64>
// CHECK-NEXT: "mpc.load_gallery"() {input = 0 : i64, name = "voices", part = 2 : i64} : () -> !mpc.code<53 : i64>
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<53 : i64>)
// CHECK-NEXT: %[[X:.*]] = "mpc.load_query"(%arg0) {input = 1 : i64, name = "v", part = 2 : i64} : (i64) -> !mpc.code<53 : i64>
// CHECK-NEXT: %[[P:.*]] = "mpc.masked_dot"(%[[X]], %arg1) {code_bits = 64 : i64} : (!mpc.code<53 : i64>, !mpc.code<53 : i64>) -> !mpc.add<53 : i64>
// CHECK-NEXT: %[[PR:.*]] = "mpc.reshare"(%[[P]]) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
// CHECK-NEXT: %[[XX:.*]] = "mpc.self_dot"(%[[X]]) : (!mpc.code<53 : i64>) -> !mpc.add<53 : i64>
// CHECK-NEXT: %[[XXR:.*]] = "mpc.reshare"(%[[XX]]) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
// CHECK-NEXT: %[[YY:.*]] = "mpc.self_dot"(%arg1) : (!mpc.code<53 : i64>) -> !mpc.add<53 : i64>
// CHECK-NEXT: %[[YYR:.*]] = "mpc.reshare"(%[[YY]]) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
// CHECK-NEXT: %[[PP:.*]] = "mpc.mul"(%[[PR]], %[[PR]]) : (!mpc.rep<53 : i64>, !mpc.rep<53 : i64>) -> !mpc.add<53 : i64>
// CHECK-NEXT: %[[PPR:.*]] = "mpc.reshare"(%[[PP]]) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
// CHECK-NEXT: %[[N:.*]] = "mpc.mul"(%[[YYR]], %[[XXR]]) : (!mpc.rep<53 : i64>, !mpc.rep<53 : i64>) -> !mpc.add<53 : i64>
// CHECK-NEXT: %[[NR:.*]] = "mpc.reshare"(%[[N]]) : (!mpc.add<53 : i64>) -> !mpc.rep<53 : i64>
// CHECK-NEXT: %[[SP:.*]] = "mpc.msb"(%[[PR]]) : (!mpc.rep<53 : i64>) -> !mpc.bits
// CHECK-NEXT: %[[NSP:.*]] = "mpc.not"(%[[SP]]) : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[E:.*]] = "mpc.lin"(%[[PPR]], %[[NR]]) {a = 2500 : i64, b = 289 : i64} : (!mpc.rep<53 : i64>, !mpc.rep<53 : i64>) -> !mpc.rep<53 : i64>
// CHECK-NEXT: %[[SE:.*]] = "mpc.msb"(%[[E]]) : (!mpc.rep<53 : i64>) -> !mpc.bits
// CHECK-NEXT: %[[NSE:.*]] = "mpc.not"(%[[SE]]) : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[M:.*]] = "mpc.and"(%[[NSP]], %[[NSE]]) : (!mpc.bits, !mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[O:.*]] = "mpc.open"(%[[M]]) {to = 1 : i64} : (!mpc.bits) -> !mpc.clear_bits
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]], %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<53 : i64>) -> ()
// CHECK-NEXT: "mpc.emit"(%arg0) : (i64) -> ()

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, ring_bits = 53 : i64, ring_why = "X = n*4^s = 1048576; p in [-1048576, 1048576], E = den^2 p^2 - num^2 xx yy in [-317758860427264, 2431020209012736], sign operand in [-1048576, 1048576], magnitude operand in [-317758860427264, 2431020209012736]; widest: den^2 p^2 in [0, 2748779069440000] \E2\8A\82 [-2^52, 2^52); k = 52 would wrap den^2 p^2 = 2748779069440000", scale_bits = 8 : i64, strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
