// variant-select alone on a program comparing with earlier(q) queries: Shamir sharings need a
// gallery, so the whole program (both comparisons: one share format per input) is rep3.
// RUN: %irisc opt %s --passes=variant-select | FileCheck %s

// CHECK: irs.sharing = #irs.sharing<"rep3">
// CHECK: "irs.fhd_lt"({{.*}}, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">}
// CHECK: "irs.records"() {input = 1 : i64, name = "q", source = "earlier"}
// CHECK-NEXT: "irs.fhd_lt"({{.*}}, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">}

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 8 : i64, ratio_num = 3 : i64} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    %5 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %6 = "irs.records"() {input = 1 : i64, name = "q", source = "earlier"} : () -> !irs.codes<256 : i64>
    %7 = "irs.fhd_lt"(%5, %6) {mask = "secret", ratio_den = 8 : i64, ratio_num = 3 : i64} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %8 = "irs.any"(%7) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%8, %6) {label = "in_batch", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
