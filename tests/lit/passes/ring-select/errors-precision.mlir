// NEGATIVE: with precision m = 62, a*ml - b*dot needs more than 64 bits: no ring holds it, and
// the error says what to change.
// RUN: not %irisc opt %s --passes='ring-select{precision=62}' 2>&1 | FileCheck %s

// CHECK: error: pass ring-select: {{.*}}more than 64
// CHECK: = hint: lower the precision m (--precision, now 62)

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 1 : i64, lo = -1 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"const-lift">} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 3 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<12800 : i64>) -> ()
    return
  }
}
