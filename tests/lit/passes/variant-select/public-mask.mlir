// variant-select alone on public masks (12800-bit codes, 31 rotations): plain-mask, and the
// cheapest sharing is GR(2^16, 2) (GR2 and GR4 tie; GR2 comes first). Options force a sharing.
// The module records the program's sharing and protocol; no ring is chosen yet.
// RUN: %irisc opt %s --passes=variant-select | FileCheck %s --implicit-check-not=ring_bits
// RUN: %irisc opt %s --passes='variant-select{sharing=rep3}' | FileCheck %s --check-prefix=REP3
// RUN: %irisc opt %s --passes='variant-select{sharing=fp}' | FileCheck %s --check-prefix=FP
// RUN: %irisc opt %s --passes='variant-select{msb-input=replicated}' | FileCheck %s --check-prefix=REPL
// RUN: %irisc opt %s --passes='variant-select{protocol=beaver}' | FileCheck %s --check-prefix=BEAVER
// RUN: %irisc opt %s --passes=variant-select | %mlir-opt --irdl-file=%dialects/irs.irdl.mlir | FileCheck %s

// CHECK: module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"gr2">}
// CHECK: "irs.fhd_lt"(%1, %2) {mask = "public", msb_input = #irs.msb_input<"additive">, ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"gr2">, variant = #irs.variant<"plain-mask">}
// REP3: module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">}
// REP3: "irs.fhd_lt"(%1, %2) {mask = "public", msb_input = #irs.msb_input<"additive">, ratio_den = 200 : i64, ratio_num = 69 : i64, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">}
// FP: irs.sharing = #irs.sharing<"fp">
// FP: "irs.fhd_lt"(%1, %2) {mask = "public", msb_input = #irs.msb_input<"replicated">, {{.*}}sharing = #irs.sharing<"fp">, variant = #irs.variant<"plain-mask">}
// Asked for: replicated shares (a reshare, then BitExtract), as under beaver or on a GPU.
// REPL: "irs.fhd_lt"(%1, %2) {mask = "public", msb_input = #irs.msb_input<"replicated">, {{.*}}sharing = #irs.sharing<"gr2">, variant = #irs.variant<"plain-mask">}
// BEAVER: "irs.fhd_lt"(%1, %2) {mask = "public", msb_input = #irs.msb_input<"replicated">, {{.*}}variant = #irs.variant<"plain-mask">}

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
    %1 = "irs.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<12800 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 200 : i64, ratio_num = 69 : i64} : (!irs.codes<12800 : i64>, !irs.codes<12800 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 0 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4) {label = "match", shape = "bit", to = 0 : i64} : (!irs.bits) -> ()
    return
  }
}
