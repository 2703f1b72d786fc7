#!/usr/bin/env bash
# Everything a session with a lent GPU machine runs there, in one command, from the bundle that
# `make gpu-bundle` wrote on a development machine (that machine has no Rust and no network):
#
#   scripts/gpu_session.sh [OUT]
#
# 1. unpacks gpu-bundle/ (irisc, the runtime archive with its `cuda` feature, irisc-bench with
#    its `cuda` feature) into a temporary folder;
# 2. runs scripts/gpu_check.sh (every example with three parties on the GPU against the
#    plaintext, a CPU party with GPU parties, compute-sanitizer), its log to OUT/gpu_check.log;
# 3. runs `irisc-bench --sections gpu` into OUT (gpu.json, gpu.png).
# Prints the check's closing line and the bench's headline figures last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-out/gpu-session}}
mkdir -p "$OUT"
BUNDLE=${BUNDLE:-gpu-bundle}
BIN=$(mktemp -d -t irisc-gpu-bin.XXXXXX)
for f in irisc libirisc_runtime.a irisc-bench; do
    if [[ -f $BUNDLE/$f.gz ]]; then
        gzip -dc "$BUNDLE/$f.gz" >"$BIN/$f"
    elif [[ -f $BUNDLE/$f ]]; then
        cp "$BUNDLE/$f" "$BIN/$f"
    else
        echo "gpu-session: $BUNDLE/$f(.gz) is missing: run \`make gpu-bundle\` first" >&2
        exit 1
    fi
done
chmod +x "$BIN/irisc" "$BIN/irisc-bench"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"

BIN="$BIN" WORK="$OUT/check-work" ./scripts/gpu_check.sh 2>&1 | tee "$OUT/gpu_check.log" | grep -E "^gpu-check: (FAIL|SKIP)|passed, "
check=$(tail -n1 "$OUT/gpu_check.log")

IRISC_RUNTIME_LIB="$BIN/libirisc_runtime.a" PATH="$BIN:$PATH" \
    "$BIN/irisc-bench" --sections gpu --out "$OUT" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | tail -n 20
echo "gpu-session: check: $check"
echo "gpu-session: bench: $OUT/gpu.json"
