// irs-to-mpc alone under the `beaver` family (paper 004): the two comparisons stop at their
// compared values (no `mpc.msb`); the compared values and the tier bit are converted locally to
// XOR shares, one lane per record (the 5 rotations are a lane's elements); one `beaver_eval`
// runs the reveal's circuit (per rotation a conditional on the tier whose branches share their
// triples: 114 on the longest path against 219 naive), and its bit per record is opened to p0.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s --check-prefix=VALID
// Negative: a `bit` reveal of a per-record value, and an F_p comparison (it ends mod p), have no beaver lowering.
// RUN: sed -e 's/"irs.reveal"(%7, %3) {label = "ids", shape = "ids"/"irs.reveal"(%7, %3) {label = "ids", shape = "bit"/' %s | not %irisc opt - --passes=irs-to-mpc 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: sed -e 's/sharing = #irs.sharing<"rep3">, variant/sharing = #irs.sharing<"fp">, variant/' %s | not %irisc opt - --passes=irs-to-mpc 2>&1 | FileCheck %s --check-prefix=FP

// CHECK: module attributes {mpc.parties = 3 : i64, mpc.protocol = "beaver"}
// CHECK-LABEL: func.func @query(
// CHECK-NOT: mpc.msb
// CHECK: %[[S:.*]] = "mpc.lin"(%{{.*}}, %{{.*}}) {a = 2 : i64, b = 5 : i64} : {{.*}} -> !mpc.rep<12 : i64>
// CHECK: %[[L:.*]] = "mpc.lin"(%{{.*}}, %{{.*}}) {a = 1 : i64, b = 4 : i64} : {{.*}} -> !mpc.rep<12 : i64>
// CHECK-NEXT: %[[T:.*]] = "mpc.load_query"(%arg0) {input = 2 : i64, name = "tier", part = 3 : i64} : (i64) -> !mpc.bits
// CHECK-NEXT: %[[XS:.*]] = "mpc.to_xor"(%[[S]]) {group = 5 : i64} : (!mpc.rep<12 : i64>) -> !mpc.xor
// CHECK-NEXT: %[[XL:.*]] = "mpc.to_xor"(%[[L]]) {group = 5 : i64} : (!mpc.rep<12 : i64>) -> !mpc.xor
// CHECK-NEXT: %[[J1:.*]] = "mpc.xor_concat"(%[[XS]], %[[XL]])
// CHECK-NEXT: %[[XT:.*]] = "mpc.to_xor"(%[[T]]) {group = 1 : i64} : (!mpc.bits) -> !mpc.xor
// CHECK-NEXT: %[[J2:.*]] = "mpc.xor_concat"(%[[J1]], %[[XT]])
// Per rotation: the tier's row (360), the strict test's 36 summand bits, the lenient test's.
// CHECK-NEXT: %[[E:.*]] = "mpc.beaver_eval"(%[[J2]]) {circuit = "{{[0-9a-f]+}}", conditionals = 5 : i64, inputs = "360 0..36 180..216 360 36..72 216..252 360 72..108 252..288 360 108..144 288..324 360 144..180 324..360", lanes_input = 0 : i64, naive_triples = 219 : i64, triples = 114 : i64} : (!mpc.xor) -> !mpc.xor
// CHECK-NEXT: %[[O:.*]] = "mpc.beaver_open"(%[[E]]) {row = 0 : i64, to = 0 : i64} : (!mpc.xor) -> !mpc.clear_bits
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]], %arg1) {label = "ids", shape = "ids"}
// CHECK-NOT: mpc.mux
// CHECK-NOT: mpc.or_tree
// VALID: "mpc.beaver_eval"
// SHAPE: under --protocol beaver a `bit` reveal reads a value per record
// FP: under --protocol beaver the compared values must be Z_2^k shares; F_p comparisons end mod p

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"beaver">, irs.sharing = #irs.sharing<"rep3">} {
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
