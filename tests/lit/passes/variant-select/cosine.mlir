// variant-select alone on a cosine test: always replicated, no variant on the op; the module's
// sharing is rep3.
// RUN: %irisc opt %s --passes=variant-select | FileCheck %s --implicit-check-not=variant

// CHECK: module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">}
// CHECK: "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, scale_bits = 8 : i64, strict = 0 : i64} :

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, scale_bits = 8 : i64, strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
