// variant-select alone on secret masks, 256-bit codes at 0.375: no-lift over rep3 is cheapest
// (a/b = 1/4 exactly, everything in Z_2^12); forced variants and sharings are recorded, the
// other choice being the cheapest under the forced one.
// RUN: %irisc opt %s --passes=variant-select | FileCheck %s
// RUN: %irisc opt %s --passes='variant-select{variant=mpc-lift}' | FileCheck %s --check-prefix=MPC
// RUN: %irisc opt %s --passes='variant-select{variant=mpc-lift sharing=gr4}' | FileCheck %s --check-prefix=MPC-GR4
// RUN: %irisc opt %s --passes='variant-select{variant=mpc-lift sharing=fp}' | FileCheck %s --check-prefix=MPC-FP
// RUN: %irisc opt %s --passes='variant-select{variant=const-lift sharing=rep3}' | FileCheck %s --check-prefix=CONST

// CHECK: module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">}
// CHECK: "irs.fhd_lt"(%1, %2) {mask = "secret", msb_input = #irs.msb_input<"replicated">, ratio_den = 8 : i64, ratio_num = 3 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">}
// MPC: irs.sharing = #irs.sharing<"gr2">
// MPC: "irs.fhd_lt"(%1, %2) {{.*}}sharing = #irs.sharing<"gr2">, variant = #irs.variant<"mpc-lift">}
// MPC-GR4: "irs.fhd_lt"(%1, %2) {{.*}}sharing = #irs.sharing<"gr4">, variant = #irs.variant<"mpc-lift">}
// MPC-FP: "irs.fhd_lt"(%1, %2) {{.*}}sharing = #irs.sharing<"fp">, variant = #irs.variant<"mpc-lift">}
// CONST: "irs.fhd_lt"(%1, %2) {{.*}}sharing = #irs.sharing<"rep3">, variant = #irs.variant<"const-lift">}

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 8 : i64, ratio_num = 3 : i64} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
