// ring-select alone, from the module after variant-select: cosine > -1/2 (strict): den^2 p^2 <= 4 * 2^40 needs 44 bits.
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.cosine_ge"(%0, %1) {den = 2 : i64, negative = 1 : i64, num = 1 : i64, ring_bits = 44 : i64,
// CHECK-SAME: widest: den^2 p^2 in [0, 4398046511104] \E2\8A\82 [-2^43, 2^43)
// CHECK-SAME: strict = 1 : i64}

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 2 : i64, negative = 1 : i64, num = 1 : i64, scale_bits = 8 : i64, strict = 1 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
