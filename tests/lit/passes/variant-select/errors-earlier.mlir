// NEGATIVE: forcing a Shamir sharing on a program that compares with earlier(q) queries is an
// error at that comparison.
// RUN: not %irisc opt %s --passes='variant-select{sharing=gr2}' 2>&1 | FileCheck %s

// CHECK: error: pass variant-select: gr2 sharing needs a gallery on the record side, but this test compares with `earlier(..)` queries
// CHECK-NEXT: --> batch.irs:7:60
// CHECK-NEXT: = hint: use --sharing rep3 (or drop --sharing)

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
    %7 = "irs.fhd_lt"(%5, %6) {mask = "secret", ratio_den = 8 : i64, ratio_num = 3 : i64} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits loc("batch.irs":7:60 to :83)
    %8 = "irs.any"(%7) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%8, %6) {label = "in_batch", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
