// NEGATIVE: a forced variant or sharing that does not apply to a comparison is variant-select's
// error at the comparison's source location (its op's `loc`), with what to change; nothing is
// printed on stdout. Unknown options and passes are errors too.
// RUN: not %irisc opt %s --passes='variant-select{variant=plain-mask}' 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: not %irisc opt %s --passes='variant-select{variant=plain-mask}' 2>/dev/null | count 0
// RUN: not %irisc opt %s --passes='variant-select{variant=no-lift sharing=fp}' 2>&1 | FileCheck %s --check-prefix=NOLIFT-FP
// RUN: not %irisc opt %s --passes='variant-select{variant=const-lift sharing=gr4}' 2>&1 | FileCheck %s --check-prefix=CONST-GR4
// RUN: not %irisc opt %s --passes='variant-select{sharing=gr3}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not %irisc opt %s --passes='variant-select,frobnicate' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// PLAIN: error: pass variant-select: plain-mask needs public masks, but this test's masks are secret (Algorithm 3 cannot compute the public threshold floor(f*ml) from a shared ml)
// PLAIN-NEXT: --> ids_secret.irs:6:52
// PLAIN-NEXT: = hint: plain-mask needs public masks: declare `public mask` or drop --variant
// NOLIFT-FP: error: pass variant-select: no-lift computes a dot product in the comparison ring {{.*}}; only the replicated sharing has such rings, fp computes in 16 bits
// NOLIFT-FP-NEXT: --> ids_secret.irs:6:52
// NOLIFT-FP-NEXT: = hint: use --sharing rep3, or --variant mpc-lift with fp
// CONST-GR4: error: pass variant-select: const-lift computes a dot product in the comparison ring {{.*}}; only the replicated sharing has such rings, gr4 computes in 16 bits
// OPTION: --passes: variant-select: unknown sharing `gr3` (one of rep3, fp, gr2, gr4)
// UNKNOWN: --passes: unknown pass `frobnicate`; the passes are: variant-select, ring-select, irs-to-mpc

module attributes {irs.parties = 3 : i64} {
  func.func @query() {
    %0 = "irs.query_value"() {input = 1 : i64, kind = "iris", name = "q", owner = 0 : i64} : () -> !irs.code<256 : i64>
    %1 = "irs.rotate"(%0) {hi = 2 : i64, lo = -2 : i64} : (!irs.code<256 : i64>) -> !irs.codes<256 : i64>
    %2 = "irs.records"() {input = 0 : i64, name = "db", source = "gallery"} : () -> !irs.codes<256 : i64>
    %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 8 : i64, ratio_num = 3 : i64} : (!irs.codes<256 : i64>, !irs.codes<256 : i64>) -> !irs.bits loc("ids_secret.irs":6:52 to :75)
    %4 = "irs.any"(%3) {group = 5 : i64} : (!irs.bits) -> !irs.bits
    "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0 : i64} : (!irs.bits, !irs.codes<256 : i64>) -> ()
    return
  }
}
