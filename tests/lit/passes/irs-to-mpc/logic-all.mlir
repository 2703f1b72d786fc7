// irs-to-mpc alone, from the module after variant-select and ring-select: `all d in db: not any ...`: OR trees, NOT, an AND tree.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @query(
// CHECK: %[[B:.*]] = "mpc.msb"
// CHECK-NEXT: %[[OR:.*]] = "mpc.or_tree"(%[[B]]) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[N:.*]] = "mpc.not"(%[[OR]]) : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[AND:.*]] = "mpc.and_tree"(%[[N]]) {group = 0 : i64} : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[O:.*]] = "mpc.open"(%[[AND]]) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]]) {label = "fresh", shape = "bit"} : (i64, !mpc.clear_bits) -> ()
// CHECK-NEXT: "mpc.emit"(%arg0) : (i64) -> ()

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 1 : i64, b = 4 : i64, dot_ring = 12 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 12 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 12 : i64, ring_why = "a/b = 1/4 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-768, 1280] \E2\8A\82 [-2^11, 2^11); k = 11 would wrap 1280 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 13); both dot products in Z_2^12", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    %5 = "irs.not"(%4) : (!irs.bits) -> !irs.bits
    %6 = "irs.all"(%5) {group = 0 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%6) {label = "fresh", shape = "bit", to = 0 : i64} : (!irs.bits) -> ()
    return
  }
}
