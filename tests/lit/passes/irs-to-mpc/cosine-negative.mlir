// irs-to-mpc alone, from the module after variant-select and ring-select: cosine > -1/2 in Z_2^44: p >= 0 OR the strict second test.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<44 : i64>)
// CHECK: %[[P:.*]] = "mpc.masked_dot"
// CHECK-NEXT: %[[PR:.*]] = "mpc.reshare"(%[[P]]) : (!mpc.add<44 : i64>) -> !mpc.rep<44 : i64>
// CHECK: %[[PP:.*]] = "mpc.mul"(%[[PR]], %[[PR]])
// CHECK-NEXT: %[[PPR:.*]] = "mpc.reshare"(%[[PP]])
// CHECK-NEXT: %[[N:.*]] = "mpc.mul"
// CHECK-NEXT: %[[NR:.*]] = "mpc.reshare"(%[[N]])
// CHECK-NEXT: %[[SP:.*]] = "mpc.msb"(%[[PR]]) : (!mpc.rep<44 : i64>) -> !mpc.bits
// CHECK-NEXT: %[[NSP:.*]] = "mpc.not"(%[[SP]])
// CHECK-NEXT: %[[E:.*]] = "mpc.lin"(%[[PPR]], %[[NR]]) {a = 4 : i64, b = 1 : i64}
// CHECK-NEXT: %[[SE:.*]] = "mpc.msb"(%[[E]])
// CHECK-NEXT: %[[M:.*]] = "mpc.or"(%[[NSP]], %[[SE]]) : (!mpc.bits, !mpc.bits) -> !mpc.bits
// CHECK-NEXT: "mpc.open"(%[[M]]) {to = 1 : i64}

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 2 : i64, negative = 1 : i64, num = 1 : i64, ring_bits = 44 : i64, ring_why = "X = n*4^s = 1048576; p in [-1048576, 1048576], E = den^2 p^2 - num^2 xx yy in [-1099511627776, 3298534883328], sign operand in [-1048576, 1048576], magnitude operand in [-1099511627776, 3298534883328]; widest: den^2 p^2 in [0, 4398046511104] \E2\8A\82 [-2^43, 2^43); k = 43 would wrap den^2 p^2 = 4398046511104", scale_bits = 8 : i64, strict = 1 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
