// irisc opt: parses the module in the compiler's context (the dialects loaded), runs the named
// passes in order (verifying after each), prints the result on stdout; --print-ir-after-all
// prints each pass's result on stderr; `-` reads stdin; no --passes only parses and verifies.
// RUN: %irisc opt %s | FileCheck %s --check-prefix=ROUND
// RUN: cat %s | %irisc opt - --passes='variant-select{sharing=rep3},ring-select' | FileCheck %s --check-prefix=PIPE
// RUN: %irisc opt %s --passes='variant-select,ring-select,irs-to-mpc' --print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP
// RUN: %irisc opt %s --passes='variant-select,ring-select,irs-to-mpc' --print-ir-after-all 2>/dev/null | FileCheck %s --check-prefix=STDOUT
// NEGATIVE: malformed MLIR is MLIR's diagnostic, at the input's line.
// RUN: sed 's/irs.fhd_lt/irs.fhd_gt/' %s | not %irisc opt - 2>&1 | FileCheck %s --check-prefix=BAD

// ROUND: module attributes {irs.parties = 3 : i64} {
// ROUND: "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 8 : i64, ratio_num = 3 : i64} :
// PIPE: irs.sharing = #irs.sharing<"rep3">
// PIPE: "irs.fhd_lt"(%1, %2) {a = 3 : i64, b = 8 : i64, dot_ring = 10 : i64, {{.*}}, ring_bits = 10 : i64, {{.*}}, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">}
// DUMP: // -----// IR Dump After variant-select //----- //
// DUMP: // -----// IR Dump After ring-select //----- //
// DUMP: // -----// IR Dump After irs-to-mpc //----- //
// DUMP-NEXT: module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
// STDOUT-NOT: IR Dump
// STDOUT: module attributes {mpc.parties = 3 : i64, mpc.protocol = "rep3"} {
// STDOUT-NOT: irs.
// BAD: <stdin>: the module does not parse
// BAD-NEXT: loc("<stdin>":{{[0-9]+}}:{{[0-9]+}}): unregistered operation 'irs.fhd_gt'

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 8 : i64, ratio_num = 3 : i64} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
