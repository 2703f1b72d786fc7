// variant-select{protocol=fss2}: the module's family is `fss2`; `malicious=M` records the trap
// instances of CSB.Eval*. The family decides cosine tests only: an iris test is refused at its
// location; `malicious` without `fss2`, or with no instance, is refused.
// RUN: %irisc opt %s --passes='variant-select{protocol=fss2}' | FileCheck %s
// RUN: %irisc opt %s --passes='variant-select{protocol=fss2 malicious=20}' | FileCheck %s --check-prefix=MAL
// RUN: not %irisc opt %s --passes='variant-select{malicious=20}' 2>&1 | FileCheck %s --check-prefix=NOFSS
// RUN: not %irisc opt %s --passes='variant-select{protocol=fss2 malicious=0}' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not %irisc opt %S/secret-mask.mlir --passes='variant-select{protocol=fss2}' 2>&1 | FileCheck %s --check-prefix=IRIS

// CHECK: module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"fss2">, irs.sharing = #irs.sharing<"rep3">}
// CHECK-NOT: irs.malicious
// MAL: module attributes {irs.malicious = 20 : i64, irs.parties = 3 : i64, irs.protocol = #irs.protocol<"fss2">
// NOFSS: --malicious 20 is the two-server family's malicious variant
// ZERO: the malicious variant needs at least one trap instance
// IRIS: the `fss2` family decides cosine tests; this is a fractional Hamming distance test

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, scale_bits = 8 : i64, strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
