// irs-to-mpc alone under the two-server family `fss2` (paper 002): the cosine identification
// becomes CS.Eval (Protocol 2) op by op: Fig. 3's masked input from the client p1, SS.IP for
// u = <x,y>, v = <x,x>, w = <y,y> (the generated kernel), the round-1 openings, the sign gate
// (c_1: an IC gate on p), E = den^2 p^2 - num^2 v w by SS.MUL, CondEval in round 2, and the
// decisions XORed at the client. Two computing parties (p0, p2); Z_2^64, no truncation.
// RUN: %irisc opt %s --passes=irs-to-mpc | FileCheck %s
// RUN: %irisc opt %s --passes=irs-to-mpc | %mlir-opt --irdl-file=%dialects/mpc.irdl.mlir | FileCheck %s --check-prefix=VALID
// tau < 0: the sign test OR "E <= 0" (the gate on -E), by CondEval's `or`.
// RUN: sed -e 's/negative = 0 : i64/negative = 1 : i64/' %s | %irisc opt - --passes=irs-to-mpc | FileCheck %s --check-prefix=NEG
// Strict, tau >= 0: p > 0 and E > 0, both gates on the negated value's "negative" interval.
// RUN: sed -e 's/strict = 0 : i64/strict = 1 : i64/' %s | %irisc opt - --passes=irs-to-mpc | FileCheck %s --check-prefix=STRICT
// Negative: values that need more than Z_2^64, a reveal to a party that supplies no query, and a
// `bit` reveal have no fss2 lowering.
// RUN: sed -e 's/ring_bits = 53 : i64/ring_bits = 70 : i64/' %s | not %irisc opt - --passes=irs-to-mpc 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: sed -e 's/to = 1 : i64/to = 0 : i64/' %s | not %irisc opt - --passes=irs-to-mpc 2>&1 | FileCheck %s --check-prefix=TO
// RUN: sed -e 's/shape = "ids"/shape = "bit"/' %s | not %irisc opt - --passes=irs-to-mpc 2>&1 | FileCheck %s --check-prefix=SHAPE
// And mpc-tile has nothing to tile in an fss2 module.
// RUN: %irisc opt %s --passes=irs-to-mpc | not %irisc opt - --passes=mpc-tile 2>&1 | FileCheck %s --check-prefix=TILE

// CHECK: module attributes {mpc.client = 1 : i64, mpc.parties = 2 : i64, mpc.protocol = "fss2", mpc.ring_bits = 64 : i64, mpc.servers = [0, 2], mpc.truncation_bits = 0 : i64}
// CHECK-LABEL: func.func @setup() -> !mpc.masked<64 : i64>
// CHECK-NEXT: "mpc.load_gallery"() {input = 0 : i64, name = "voices", part = 2 : i64} : () -> !mpc.masked<64 : i64>
// CHECK-LABEL: func.func @query(%arg0: i64, %arg1: !mpc.masked<64 : i64>)
// CHECK-NEXT: %[[X:.*]] = "mpc.masked_input"(%arg0) {from = 1 : i64, input = 1 : i64, name = "v", scale_bits = 8 : i64} : (i64) -> !mpc.masked<64 : i64>
// CHECK-NEXT: %[[U:.*]] = "mpc.ss_ip"(%[[X]], %arg1) {dim = 16 : i64}
// CHECK-NEXT: %[[V:.*]] = "mpc.ss_ip"(%[[X]], %[[X]]) {dim = 16 : i64}
// CHECK-NEXT: %[[W:.*]] = "mpc.ss_ip"(%arg1, %arg1) {dim = 16 : i64}
// CHECK-NEXT: %[[DU:.*]] = "mpc.ss_open"(%[[U]]) {round = 1 : i64} : (!mpc.add<64 : i64>) -> !mpc.masked<64 : i64>
// CHECK-NEXT: %[[DV:.*]] = "mpc.ss_open"(%[[V]]) {round = 1 : i64}
// CHECK-NEXT: %[[DW:.*]] = "mpc.ss_open"(%[[W]]) {round = 1 : i64}
// CHECK-NEXT: %[[C1:.*]] = "mpc.ic_gate"(%[[DU]]) {interval = "non_negative", negate = 0 : i64} : (!mpc.masked<64 : i64>) -> !mpc.xor
// CHECK-NEXT: %[[UU:.*]] = "mpc.ss_mul"(%[[DU]], %[[DU]])
// CHECK-NEXT: %[[VW:.*]] = "mpc.ss_mul"(%[[DV]], %[[DW]])
// CHECK-NEXT: %[[E:.*]] = "mpc.ss_lin"(%[[UU]], %[[VW]]) {a = 2500 : i64, b = 289 : i64}
// CHECK-NEXT: %[[D:.*]] = "mpc.condeval"(%[[C1]], %[[E]]) {conj = "and", den = 50 : i64, interval = "non_negative", negate = 0 : i64, negative = 0 : i64, num = 17 : i64, round = 2 : i64, strict = 0 : i64} : (!mpc.xor, !mpc.add<64 : i64>) -> !mpc.xor
// CHECK-NEXT: %[[O:.*]] = "mpc.reveal_xor"(%[[D]]) {to = 1 : i64} : (!mpc.xor) -> !mpc.clear_bits
// CHECK-NEXT: "mpc.output"(%arg0, %[[O]], %arg1) {label = "ids", shape = "ids"}
// CHECK-NOT: mpc.msb
// VALID: "mpc.condeval"
// NEG: "mpc.ic_gate"(%{{.*}}) {interval = "non_negative", negate = 0 : i64}
// NEG: "mpc.condeval"(%{{.*}}, %{{.*}}) {conj = "or", den = 50 : i64, interval = "non_negative", negate = 1 : i64, negative = 1 : i64
// STRICT: "mpc.ic_gate"(%{{.*}}) {interval = "negative", negate = 1 : i64}
// STRICT: "mpc.condeval"(%{{.*}}, %{{.*}}) {conj = "and", den = 50 : i64, interval = "negative", negate = 1 : i64, negative = 0 : i64
// WIDE: the cosine test needs 70 bits and fss2 computes in Z_2^64
// TO: fss2 reveals to the client, the party that supplies the query; party 0 supplies none
// SHAPE: fss2 reveals the matching ids
// TILE: an fss2 module has nothing to tile

module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"fss2">, irs.sharing = #irs.sharing<"rep3">} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
    %1 = "irs.records"() {input = 0 : i64, name = "voices", source = "gallery"} : () -> !irs.vectors<16 : i64>
    %2 = "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, ring_bits = 53 : i64, ring_why = "X = n*4^s = 1048576; p in [-1048576, 1048576], E = den^2 p^2 - num^2 xx yy in [-317758860427264, 2431020209012736], sign operand in [-1048576, 1048576], magnitude operand in [-317758860427264, 2431020209012736]; widest: den^2 p^2 in [0, 2748779069440000] \E2\8A\82 [-2^52, 2^52); k = 52 would wrap den^2 p^2 = 2748779069440000", scale_bits = 8 : i64, strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
    "irs.reveal"(%2, %1) {label = "ids", shape = "ids", to = 1 : i64} : (!irs.bits, !irs.vectors<16 : i64>) -> ()
    return
  }
}
