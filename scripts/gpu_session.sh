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
# 3. runs `irisc-bench --sections gpu` into OUT (gpu.json, gpu.png), party 2's gallery stores
#    in /dev/shm when it has room (the disk alone does not hold 250 000 records of three
#    parties).
# CHECK=0 skips step 2, BENCH=0 step 3; CHECK_TIMEOUT, BENCH_TIMEOUT bound the steps; BENCH_ARGS adds options.
# Prints the check's closing line and the bench's headline figures last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-out/gpu-session}}
mkdir -p "$OUT"
BUNDLE=${BUNDLE:-gpu-bundle}
BIN=$(mktemp -d -t irisc-gpu-bin.XXXXXX)
for f in irisc libirisc_runtime.a irisc-bench; do
    if [[ -f $BUNDLE/$f.xz ]]; then
        xz -dc "$BUNDLE/$f.xz" >"$BIN/$f"
    elif [[ -f $BUNDLE/$f.zst ]]; then
        zstd -dcq "$BUNDLE/$f.zst" >"$BIN/$f"
    elif [[ -f $BUNDLE/$f.gz ]]; then
        gzip -dc "$BUNDLE/$f.gz" >"$BIN/$f"
    elif [[ -f $BUNDLE/$f ]]; then
        cp "$BUNDLE/$f" "$BIN/$f"
    else
        echo "gpu-session: $BUNDLE/$f(.xz) is missing: run \`make gpu-bundle\` first" >&2
        exit 1
    fi
done
chmod +x "$BIN/irisc" "$BIN/irisc-bench"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"

# The check's and the bench's work folders (executables, galleries) stay outside OUT; what
# explains a result (logs, each failing run's stderr, the reports) is copied into OUT, also when
# a step ran past its time limit (CHECK_TIMEOUT, BENCH_TIMEOUT seconds).
WORK=$(mktemp -d -t irisc-gpu-work.XXXXXX)
keep() {
    # What explains the check travels as one archive (few files come back from such a
    # machine): the failing runs' stderr (the passes are in the log), the mixed and sanitizer
    # runs' outputs and stats.
    local f list=()
    for f in $(grep -o "^gpu-check: FAIL [a-z_0-9]* ([a-z0-9]*)" "$OUT/gpu_check.log" 2>/dev/null \
        | sed -E 's/^gpu-check: FAIL ([a-z_0-9]*) \(([a-z0-9]*)\)/\1-\2/'); do
        [[ -f $WORK/check/err-$f.txt ]] && list+=("err-$f.txt")
    done
    for f in "$WORK"/check/mixed/*.txt "$WORK"/check/mixed/*.json "$WORK"/check/sanitizer/*.txt; do
        [[ -f $f ]] && list+=("${f#"$WORK/check/"}")
    done
    ((${#list[@]})) && tar -czf "$OUT/check.tar.gz" -C "$WORK/check" "${list[@]}" 2>/dev/null
    cp "$WORK"/bench/*.json "$WORK"/bench/*.png "$OUT/" 2>/dev/null
    true
}
if [[ ${CHECK:-1} != 0 ]]; then
    BIN="$BIN" WORK="$WORK/check" timeout "${CHECK_TIMEOUT:-1800}" ./scripts/gpu_check.sh 2>&1 | tee "$OUT/gpu_check.log" | grep -E "^gpu-check: (FAIL|SKIP)|passed, "
    check=$(tail -n1 "$OUT/gpu_check.log")
else
    check="not run (CHECK=0)"
fi
keep

mkdir -p "$WORK/bench"
# Three parties' stores of 250 000 records of both eyes are ~77 GB, more than a 64 GiB disk:
# party 2's go to the memory file system when it has room (STORE_DIRS=none keeps all on disk).
store_args=()
SHM=""
if [[ ${STORE_DIRS:-auto} == auto ]] && [[ -d /dev/shm ]] \
    && (( $(df -k --output=avail /dev/shm | tail -n1) > 16 * 1024 * 1024 )); then
    SHM=$(mktemp -d /dev/shm/irisc-stores.XXXXXX)
    store_args=(--store-dirs "$WORK/bench/stores0,$WORK/bench/stores1,$SHM")
    echo "gpu-session: party 2's stores in $SHM"
fi
if [[ ${BENCH:-1} != 0 ]]; then
    # shellcheck disable=SC2086
    IRISC_RUNTIME_LIB="$BIN/libirisc_runtime.a" PATH="$BIN:$PATH" timeout "${BENCH_TIMEOUT:-3600}" \
        "$BIN/irisc-bench" --sections gpu --out "$WORK/bench" "${store_args[@]}" ${BENCH_ARGS:-} >"$OUT/bench.log" 2>&1
    echo "gpu-session: bench exit status $?"
    tail -n 25 "$OUT/bench.log"
fi
[[ -n $SHM ]] && rm -rf "$SHM"
keep
echo "gpu-session: check: $check"
echo "gpu-session: bench: $OUT/gpu.json"
