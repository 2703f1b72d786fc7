// variant-select alone on the deployed secret-mask test (12800-bit codes at 0.345): mpc-lift
// over GR(2^16, 2) is the minimal score; under rep3 mpc-lift still beats const-lift and no-lift.
// RUN: %irisc opt %s --passes=variant-select | FileCheck %s
// RUN: %irisc opt %s --passes='variant-select{sharing=rep3}' | FileCheck %s --check-prefix=REP3

// CHECK: "irs.fhd_lt"(%1, %2) {mask = "secret", msb_input = #irs.msb_input<"replicated">, ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"gr2">, variant = #irs.variant<"mpc-lift">}
// REP3: "irs.fhd_lt"(%1, %2) {mask = "secret", msb_input = #irs.msb_input<"replicated">, ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"mpc-lift">}

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 1 : i64, lo = -1 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", msb_input = #irs.msb_input<"replicated">, ratio_den = 200 : i64, ratio_num = 69 : i64} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 3 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<12800 : i64>) -> ()
    return
  }
}
