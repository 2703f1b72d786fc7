// NEGATIVE: a cosine test whose range needs more than 64 bits (scale 20: components up to 2^20)
// is ring-select's error at the comparison, with a hint.
// RUN: not %irisc opt %s --passes=ring-select 2>&1 | FileCheck %s

// CHECK: error: pass ring-select: {{.*}}
// CHECK-NEXT: --> cosine.irs:9:33
// CHECK-NEXT: = hint: {{.*}}lower the scale

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, scale_bits = 20 : i64, strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits loc("cosine.irs":9:33 to :52)
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
