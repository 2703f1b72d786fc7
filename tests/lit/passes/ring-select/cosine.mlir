// ring-select alone, from the module after variant-select: cosine >= 17/50, 16-dim embeddings at scale 8: den^2 p^2 needs 53 bits.
// RUN: %irisc opt %s --passes=ring-select | FileCheck %s

// CHECK: "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, ring_bits = 53 : i64,
// CHECK-SAME: ring_why = "X = n*4^s = 1048576; p in [-1048576, 1048576], E = den^2 p^2 - num^2 xx yy in [-317758860427264, 2431020209012736],
// CHECK-SAME: widest: den^2 p^2 in [0, 2748779069440000] \E2\8A\82 [-2^52, 2^52); k = 52 would wrap den^2 p^2 = 2748779069440000",
// CHECK-SAME: strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, scale_bits = 8 : i64, strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
