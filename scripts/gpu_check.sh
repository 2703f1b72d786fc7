#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, in one command, for a machine that has one:
#
#   1. a CPU party with two GPU parties: the same answers as three GPU parties (the parties'
#      randomness and messages do not depend on where the dot products ran);
#   2. compute-sanitizer memcheck on one party of an end-to-end run (dot products and MSB
#      extractions on the GPU);
#   3. three serving parties (`--serve`) built with `--target cuda`, their galleries loaded once
#      (on the GPU): a client's queries get the answers of a CPU run on the same gallery, an
#      enrolment is acknowledged, and the enrolled capture then matches its own new record;
#   4. every example, built with `--target cuda`, three parties on this one GPU (one process and
#      CUDA context each), answers checked against the plaintext definition (`irisc run --check`),
#      under every sharing the program accepts that has GPU kernels (last: the longest step);
#
# and a closing line `N passed, N failed` (and the skipped, with why). Exit status 0 only when
# nothing failed. `ONLY=served` (or `mixed`, `memcheck`, `examples`, several joined by commas)
# runs those steps alone.
#
# Needs: `irisc` and the runtime archive `libirisc_runtime.a` built with the runtime's `cuda`
# feature, side by side in $BIN (default target/release):
#     cargo build --release -p irisc && cargo build --release -p irisc-runtime --features cuda
# a C compiler (the executables are linked there), and the NVIDIA driver. No Rust, no network.
set -uo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-target/release}
IRISC="$BIN/irisc"
export IRISC_RUNTIME_LIB=${IRISC_RUNTIME_LIB:-$BIN/libirisc_runtime.a}
WORK=${WORK:-$(mktemp -d -t irisc-gpu-check.XXXXXX)}
RECORDS=${RECORDS:-2000}          # full-size (12 800-bit) galleries
SMALL=${SMALL:-96}                # 256-bit galleries
TIMEOUT=${TIMEOUT:-300}
JOBS=${JOBS:-4}                   # examples run at once in step 3
runs=()
# TARGET=cpu runs the same checks with CPU executables: the script's own dry run on a machine
# without a GPU (what it generates, which inputs each example takes, how answers are compared).
TARGET=${TARGET:-cuda}
ONLY=${ONLY:-}
# Whether step $1 runs (all of them unless ONLY names some).
want() { [[ -z $ONLY || ,$ONLY, == *,$1,* ]]; }

passed=0
failed=0
skipped=0
failures=()

say() { printf 'gpu-check: %s\n' "$*"; }
pass() { passed=$((passed + 1)); say "PASS $1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); say "FAIL $1"; }
skip() { skipped=$((skipped + 1)); say "SKIP $1: $2"; }

[[ -x $IRISC ]] || { say "no irisc at $IRISC (set BIN)"; echo "0 passed, 1 failed"; exit 1; }
[[ -f $IRISC_RUNTIME_LIB ]] || { say "no runtime archive at $IRISC_RUNTIME_LIB"; echo "0 passed, 1 failed"; exit 1; }
if [[ $TARGET == cuda ]]; then
    if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
        say "no NVIDIA GPU here: nothing of this script can run (TARGET=cpu is its dry run)"
        echo "0 passed, 0 failed, 1 skipped (no GPU)"
        exit 1
    fi
    say "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n1)"
else
    say "dry run: TARGET=$TARGET (no GPU is used)"
fi
say "work: $WORK"

gen() { "$IRISC" gen "$@" >/dev/null; }

# --- data --------------------------------------------------------------------------------------
D="$WORK/data"
mkdir -p "$D"
gen --count "$SMALL" --seed 5 --bits 256 -o "$D/small_db.ndjson"
gen --count "$SMALL" --seed 6 --bits 256 -o "$D/small_right.ndjson"
gen --count 12 --seed 7 --bits 256 --near "$D/small_db.ndjson" --ratio 0.375 -o "$D/small_q.ndjson"
gen --count 12 --seed 7 --bits 256 --near "$D/small_right.ndjson" --ratio 0.375 -o "$D/small_qr.ndjson"
gen --count 12 --seed 9 --bits 256 --near "$D/small_db.ndjson" --ratio 0.30 -o "$D/small_q_tier.ndjson"
gen --kind bit --count 12 --seed 10 -o "$D/tier.ndjson"
gen --count "$RECORDS" --seed 15 -o "$D/db.ndjson"
gen --count "$RECORDS" --seed 16 -o "$D/right.ndjson"
gen --count 8 --seed 17 --near "$D/db.ndjson" -o "$D/q.ndjson"
gen --count 8 --seed 17 --near "$D/right.ndjson" -o "$D/qr.ndjson"
gen --count 8 --seed 19 --near "$D/db.ndjson" --ratio 0.30 -o "$D/q_tier.ndjson"
gen --kind bit --count 8 --seed 20 -o "$D/tier8.ndjson"
gen --kind bit --count 8 --seed 21 -o "$D/tier_high8.ndjson"
gen --kind bit --count 8 --seed 22 -o "$D/tier_low8.ndjson"

# The inputs of each example (NAME=FILE), by program.
inputs_of() {
    case "$1" in
        small_ids|small_secret|small_count|small_batch|small_mirror)
            echo "--input db=$D/small_db.ndjson --input q=$D/small_q.ndjson" ;;
        small_tiered)
            echo "--input db=$D/small_db.ndjson --input q=$D/small_q_tier.ndjson --input tier=$D/tier.ndjson" ;;
        small_eyes)
            echo "--input left=$D/small_db.ndjson --input right=$D/small_right.ndjson --input ql=$D/small_q.ndjson --input qr=$D/small_qr.ndjson" ;;
        iris_ids|iris_unique|iris_count|iris_secret_masks|iris_batch_unique|iris_mirror)
            echo "--input db=$D/db.ndjson --input q=$D/q.ndjson" ;;
        iris_tiered)
            echo "--input db=$D/db.ndjson --input q=$D/q_tier.ndjson --input tier=$D/tier8.ndjson" ;;
        iris_tier4)
            echo "--input db=$D/db.ndjson --input q=$D/q_tier.ndjson --input tier_high=$D/tier_high8.ndjson --input tier_low=$D/tier_low8.ndjson" ;;
        iris_both_eyes|iris_both_eyes_or|iris_eyes_ids)
            echo "--input left=$D/db.ndjson --input right=$D/right.ndjson --input ql=$D/q.ndjson --input qr=$D/qr.ndjson" ;;
        *) echo "" ;;
    esac
}

# --- 1. one CPU party and two GPU parties ---------------------------------------------------------
# $1: the comparisons' MSB input, the same in every party's build (parties built to different
# protocols are refused at connect): `replicated` (the CUDA default: the GPU runs the reshare and
# BitExtract) or `additive` (AdditiveMSB, its local steps on the GPU). Every party runs with the
# GPU parties' one message per round (`--chunk-size 0`; a CPU party's default is chunks of 2^20
# elements, also refused at connect).
mixed() {
    local input=$1 program=examples/small_ids.irs M="$WORK/mixed-$1"
    mkdir -p "$M"
    "$IRISC" build "$program" --msb-input "$input" -o "$M/cpu" --quiet || return 1
    "$IRISC" build "$program" --target "$TARGET" --msb-input "$input" -o "$M/gpu" --quiet || return 1
    "$IRISC" keys -o "$M/keys" >/dev/null || return 1
    "$IRISC" share --program "$program" --msb-input "$input" --input "db=$D/small_db.ndjson" --input "q=$D/small_q.ndjson" -o "$M/shares" >/dev/null || return 1
    local p exe
    for p in 0 1 2; do
        exe="$M/gpu"
        [[ $p == 0 ]] && exe="$M/cpu"
        timeout "$TIMEOUT" "$exe" --party "$p" --config "$M/keys/parties.toml" --stats "$M/stats$p.json" --chunk-size 0 \
            --input "db=$M/shares/p$p/db.shares" --input "q=$M/shares/p$p/q.shares" >"$M/out$p.json" 2>"$M/err$p.txt" &
    done
    wait || true
    # The same shares with all three parties on the GPU (whose answers step 3 checks against
    # the plaintext): party 0's answers must be the same.
    for p in 0 1 2; do
        timeout "$TIMEOUT" "$M/gpu" --party "$p" --config "$M/keys/parties.toml" --chunk-size 0 \
            --input "db=$M/shares/p$p/db.shares" --input "q=$M/shares/p$p/q.shares" >"$M/gpu$p.json" 2>"$M/gpu-err$p.txt" &
    done
    wait || true
    [[ -s $M/gpu0.json ]] && grep -q '"query"' "$M/gpu0.json" || return 1
    # The GPU parties ran their MSB extractions' and OR trees' local steps and their mask
    # lengths on the GPU (the CPU party's streams and messages agreed with theirs), and their
    # reshares where the protocol has them, none of those on the CPU.
    if [[ $TARGET == cuda ]]; then
        local key keys=(msb_calls mask_len_calls or_calls)
        [[ $input == replicated ]] && keys+=(reshare_calls)
        for key in "${keys[@]}"; do
            grep -Eq "\"$key\": *[1-9]" "$M/stats1.json" || return 1
        done
        grep -Eq '"cpu_msb_calls": *0 *(,|}|$)' "$M/stats1.json" && grep -Eq '"cpu_reshare_calls": *0 *(,|}|$)' "$M/stats1.json" || return 1
    fi
    diff <(grep '"query"' "$M/out0.json" | sort) <(grep '"query"' "$M/gpu0.json" | sort) >"$M/diff.txt"
}
if ! want mixed; then :
else
    if mixed replicated; then pass "CPU party 0 with GPU parties 1 and 2, reshare and BitExtract (dot products, mask lengths, reshares, MSB extractions and OR trees on the GPU): the same answers"; else fail "CPU party with GPU parties, --msb-input replicated (see $WORK/mixed-replicated)"; fi
    if mixed additive; then pass "CPU party 0 with GPU parties 1 and 2, AdditiveMSB (its local steps on the GPU): the same answers"; else fail "CPU party with GPU parties, --msb-input additive (see $WORK/mixed-additive)"; fi
fi

# --- 2. compute-sanitizer memcheck on one party ----------------------------------------------------
memcheck() {
    local program=examples/small_secret.irs S="$WORK/sanitizer"
    command -v compute-sanitizer >/dev/null 2>&1 || { skip "memcheck" "no compute-sanitizer on PATH"; return 2; }
    mkdir -p "$S"
    "$IRISC" build "$program" --target "$TARGET" -o "$S/gpu" --quiet || return 1
    "$IRISC" keys -o "$S/keys" >/dev/null || return 1
    "$IRISC" share --program "$program" --input "db=$D/small_db.ndjson" --input "q=$D/small_q.ndjson" -o "$S/shares" >/dev/null || return 1
    local p
    for p in 1 2; do
        timeout "$TIMEOUT" "$S/gpu" --party "$p" --config "$S/keys/parties.toml" --timeout 600 \
            --input "db=$S/shares/p$p/db.shares" --input "q=$S/shares/p$p/q.shares" >/dev/null 2>"$S/err$p.txt" &
    done
    timeout "$TIMEOUT" compute-sanitizer --tool memcheck --error-exitcode 3 --log-file "$S/memcheck.txt" \
        "$S/gpu" --party 0 --config "$S/keys/parties.toml" \
        --input "db=$S/shares/p0/db.shares" --input "q=$S/shares/p0/q.shares" >"$S/out0.json" 2>"$S/err0.txt"
    local rc=$?
    wait || true
    grep -q "ERROR SUMMARY: 0 errors" "$S/memcheck.txt" && [[ $rc == 0 ]]
}
if want memcheck; then
    memcheck
    case $? in
        0) pass "compute-sanitizer memcheck: 0 errors on party 0 of small_secret" ;;
        2) ;;
        *) fail "compute-sanitizer memcheck (see $WORK/sanitizer/memcheck.txt)" ;;
    esac
fi

# --- 3. three serving parties built for the GPU ----------------------------------------------------
# The ids lines of an answer file (query index and ids), for comparing answers.
ids_of() { grep -o '"query":[0-9]*\|"ids":\[[0-9,]*\]' "$1" | paste -d' ' - -; }
served() {
    local program=examples/small_ids.irs V="$WORK/served" port=${SERVE_PORT:-27300}
    mkdir -p "$V"
    "$IRISC" build "$program" --target "$TARGET" -o "$V/gpu" --quiet || return 1
    "$IRISC" keys -o "$V/keys" --base-port $((port + 10)) >/dev/null || return 1
    # The gallery as stores (what a serving party maps and enrols into), dealt for the GPU
    # build's choices (the reshare and BitExtract: replicated MSB inputs).
    "$IRISC" share --program "$program" --msb-input replicated --input "db=$D/small_db.ndjson" -o "$V/shares" >/dev/null || return 1
    (umask 077 && echo "gpu-check-token-$RANDOM$RANDOM-of-enough-length" >"$V/token")
    local p pids=()
    for p in 0 1 2; do
        timeout "$TIMEOUT" "$V/gpu" --party "$p" --config "$V/keys/parties.toml" \
            --input "db=$V/shares/p$p/db.shares" --serve "127.0.0.1:$((port + p))" \
            --api-token "$V/token" --max-batch 16 >"$V/party$p.log" 2>&1 &
        pids+=($!)
    done
    local client=("$IRISC" client "$program" --msb-input replicated --config "$V/keys/parties.toml"
        --token "$V/token" --api "0=127.0.0.1:$port" --api "1=127.0.0.1:$((port + 1))"
        --api "2=127.0.0.1:$((port + 2))" --timeout 120)
    local ok=0
    # Matching: the answers of a CPU run of the same program on the same gallery.
    "${client[@]}" --input "q=$D/small_q.ndjson" >"$V/answers.json" 2>"$V/client.err" &&
        "$IRISC" run "$program" --msb-input replicated --input "db=$D/small_db.ndjson" \
            --input "q=$D/small_q.ndjson" --work "$V/cpu-run" >"$V/cpu.json" 2>"$V/cpu.err" &&
        [[ $(ids_of "$V/cpu.json" | wc -l) -gt 0 ]] &&
        grep -q '"ids":\[[0-9]' "$V/cpu.json" &&
        diff <(ids_of "$V/cpu.json") <(ids_of "$V/answers.json") >"$V/diff.txt" || ok=1
    # Enrolment: a fresh capture is enrolled (acknowledged by all three), then matches itself.
    if [[ $ok == 0 ]]; then
        gen --count 1 --seed 99 --bits 256 --first-id 7000 -o "$D/new_person.ndjson"
        "${client[@]}" --input "q=$D/new_person.ndjson" --enroll db=q >"$V/enrol.json" 2>>"$V/client.err" &&
            grep -q '"enrolled":true' "$V/enrol.json" &&
            "${client[@]}" --input "q=$D/new_person.ndjson" >"$V/again.json" 2>>"$V/client.err" &&
            grep -q '"ids":\[7000\]' "$V/again.json" || ok=1
    fi
    kill -TERM "${pids[@]}" 2>/dev/null
    wait "${pids[@]}" 2>/dev/null
    return $ok
}
if ! want served; then :
elif served; then pass "three serving parties built for $TARGET: a client's answers equal a CPU run's, and an enrolment is acknowledged and then matches"; else fail "serving parties (see $WORK/served)"; fi

# --- 4. every example x sharing, three parties on the GPU (last: the longest step, so a time
# limit on the whole script cuts it rather than the two checks below) ---------------------------
every_example() {
    for program in examples/*.irs; do
        name=$(basename "$program" .irs)
        args=$(inputs_of "$name")
        if [[ -z $args ]]; then
            # Embeddings (cosine): their dot products have no GPU kernel; `--emit=ptx` says so.
            why=$("$IRISC" build "$program" --target cuda --emit ptx 2>&1 >/dev/null | grep -m1 error)
            skip "$name" "${why:-no inputs known to this script}"
            continue
        fi
        for sharing in default rep3 gr2 gr4; do
            flag=()
            [[ $sharing != default ]] && flag=(--sharing "$sharing")
            label="$name ($sharing)"
            # A sharing the program itself refuses (its diagnostic says why) is not a GPU matter.
            if ! "$IRISC" build "$program" "${flag[@]}" --emit mpc >/dev/null 2>"$WORK/why.txt"; then
                skip "$label" "the program refuses it: $(grep -m1 'error' "$WORK/why.txt")"
                continue
            fi
            if ! "$IRISC" build "$program" "${flag[@]}" --target cuda --emit ptx >/dev/null 2>"$WORK/why.txt"; then
                if grep -q "has a GPU kernel" "$WORK/why.txt"; then
                    skip "$label" "$(grep -m1 'error' "$WORK/why.txt")"
                else
                    fail "$label: $(grep -m1 'error' "$WORK/why.txt")"
                fi
                continue
            fi
            # JOBS runs at once (each builds its executables on the CPU, then its three parties
            # share the GPU); their verdicts are read back in order below.
            while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
            runs+=("$name $sharing")
            # shellcheck disable=SC2086
            (
                if timeout "$TIMEOUT" "$IRISC" run "$program" "${flag[@]}" --target "$TARGET" --check $args \
                    --work "$WORK/run-$name-$sharing" >"$WORK/out-$name-$sharing.json" 2>"$WORK/err-$name-$sharing.txt"; then
                    echo pass >"$WORK/verdict-$name-$sharing"
                else
                    echo fail >"$WORK/verdict-$name-$sharing"
                fi
            ) &
        done
    done
    wait
    local run
    for run in "${runs[@]}"; do
        read -r name sharing <<<"$run"
        label="$name ($sharing)"
        if [[ $(cat "$WORK/verdict-$name-$sharing" 2>/dev/null) == pass ]]; then
            pass "$label: $(grep -c '"query"' "$WORK/out-$name-$sharing.json") answers equal the plaintext definition"
        else
            fail "$label: $(tail -n2 "$WORK/err-$name-$sharing.txt" | tr '\n' ' ')"
        fi
    done
}

if want examples; then every_example; fi

for f in "${failures[@]}"; do say "failed: $f"; done
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
