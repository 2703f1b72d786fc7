// irs-to-mpc alone, from the module after variant-select and ring-select: a secret `if` is a multiplexer between two comparisons.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @query(
// CHECK: %[[S:.*]] = "mpc.lin"(%{{.*}}, %{{.*}}) {a = 2 : i64, b = 5 : i64}
// CHECK-NEXT: %[[SB:.*]] = "mpc.msb"(%[[S]])
// CHECK: %[[L:.*]] = "mpc.lin"(%{{.*}}, %{{.*}}) {a = 1 : i64, b = 4 : i64}
// CHECK-NEXT: %[[LB:.*]] = "mpc.msb"(%[[L]])
// CHECK-NEXT: %[[T:.*]] = "mpc.load_query"(%arg0) {input = 2 : i64, name = "tier", part = 3 : i64} : (i64) -> !mpc.bits
// CHECK-NEXT: %[[M:.*]] = "mpc.mux"(%[[T]], %[[SB]], %[[LB]]) : (!mpc.bits, !mpc.bits, !mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[OR:.*]] = "mpc.or_tree"(%[[M]]) {group = 5 : i64} : (!mpc.bits) -> !mpc.bits
// CHECK-NEXT: "mpc.open"(%[[OR]]) {to = 0 : i64}

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 2 : i64, kind = "bit", name = "tier", owner = 0 : i64} : () -> !irs.bits
    %1 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %2 = "irs.rotate"(%1) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %3 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %4 = "irs.fhd_lt"(%2, %3) {a = 2 : i64, b = 5 : i64, dot_ring = 12 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 12 : i64, ratio_den = 10 : i64, ratio_num = 3 : i64, ring_bits = 12 : i64, ring_why = "a/b = 2/5 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-768, 1792] \E2\8A\82 [-2^11, 2^11); k = 11 would wrap 1792 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 13); both dot products in Z_2^12", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %5 = "irs.fhd_lt"(%2, %3) {a = 1 : i64, b = 4 : i64, dot_ring = 12 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 12 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 12 : i64, ring_why = "a/b = 1/4 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-768, 1280] \E2\8A\82 [-2^11, 2^11); k = 11 would wrap 1280 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 13); both dot products in Z_2^12", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %6 = "irs.select"(%0, %4, %5) : (!irs.bits, !irs.bits, !irs.bits) -> !irs.bits
    %7 = "irs.any"(%6) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%7, %3) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
