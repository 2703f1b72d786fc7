// irs-to-mpc alone, from the module after variant-select and ring-select: zipped galleries: one comparison per eye, ANDed per record.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s

// CHECK-LABEL: func.func @setup()
// CHECK-NEXT: "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 0 : i64}
// CHECK-NEXT: "mpc.load_gallery"() {input = 0 : i64, name = "left", part = 1 : i64}
// CHECK-NEXT: "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 0 : i64}
// CHECK-NEXT: "mpc.load_gallery"() {input = 1 : i64, name = "right", part = 1 : i64}
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.code<12 : i64>, %arg2: !mpc.code<12 : i64>, %arg3: !mpc.code<12 : i64>, %arg4: !mpc.code<12 : i64>)
// CHECK: "mpc.masked_dot"(%{{.*}}, %arg1)
// CHECK: "mpc.masked_dot"(%{{.*}}, %arg2)
// CHECK: %[[L:.*]] = "mpc.or_tree"
// CHECK: "mpc.masked_dot"(%{{.*}}, %arg3)
// CHECK: "mpc.masked_dot"(%{{.*}}, %arg4)
// CHECK: %[[R:.*]] = "mpc.or_tree"
// CHECK-NEXT: %[[B:.*]] = "mpc.and"(%[[L]], %[[R]]) : (!mpc.bits, !mpc.bits) -> !mpc.bits
// CHECK-NEXT: %[[O:.*]] = "mpc.open"(%[[B]]) {to = 0 : i64}
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]], %arg1) {label = "ids", shape = "ids"} : (i64, !mpc.clear_bits, !mpc.code<12 : i64>) -> ()

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 2 : i64, kind = "iris", name = "ql", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "left", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {a = 1 : i64, b = 4 : i64, dot_ring = 12 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 12 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 12 : i64, ring_why = "a/b = 1/4 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-768, 1280] \E2\8A\82 [-2^11, 2^11); k = 11 would wrap 1280 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 13); both dot products in Z_2^12", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    %5 = "irs.query_value"() {input = 3 : i64, kind = "iris", name = "qr", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %6 = "irs.rotate"(%5) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %7 = "irs.records"() {input = 1 : i64, name = "right", source = "gallery"} : () -> !irs.codes<256 : i64>
    %8 = "irs.fhd_lt"(%6, %7) {a = 1 : i64, b = 4 : i64, dot_ring = 12 : i64, lift_bits = 0 : i64, mask = "secret", ml_ring = 12 : i64, ratio_den = 8 : i64, ratio_num = 3 : i64, ring_bits = 12 : i64, ring_why = "a/b = 1/4 is the closest conservative fraction with b < 2^16; a*ml - b*dot in [-768, 1280] \E2\8A\82 [-2^11, 2^11); k = 11 would wrap 1280 (Lemma 2: 0 <= a <= b holds; its sufficient condition needs k = 13); both dot products in Z_2^12", sharing = #irs.sharing<"rep3">, variant = #irs.variant<"no-lift">} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %9 = "irs.any"(%8) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    %10 = "irs.and"(%4, %9) : (!irs.bits, !irs.bits) -> !irs.bits
    "irs.reveal"(%10, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
