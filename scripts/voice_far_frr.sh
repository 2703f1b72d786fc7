#!/usr/bin/env bash
# FAR / FRR of examples/voice_cosine.irs (cosine(v, s) >= 0.34 on 192-dim embeddings at scale
# 2^8), computed from the answers of the three parties (run over TLS on localhost, checked
# against the plaintext definition), and the same figures from a floating-point cosine on the
# raw embeddings: they differ only where quantising to 2^-8 moves a cosine across 0.34.
#
# A pair (query, record) is genuine iff the speakers match (id / 1000). The gallery enrols
# SPEAKERS speakers x PER_SPEAKER utterances; the queries are QUERIES_PER_SPEAKER fresh
# utterances of each enrolled speaker and of IMPOSTORS speakers never enrolled. NOISE sets the
# same-speaker cosine, about 1 / (1 + NOISE²) (0.5 -> 0.8: easy; 1.3 -> 0.37: near tau).
#
#   scripts/voice_far_frr.sh                 # 100 speakers, noise 1.3
#   NOISE=1.0 SPEAKERS=200 scripts/voice_far_frr.sh
#
# Needs python3 (standard library only) and a built irisc (IRISC=path, default
# target/release/irisc, else target/debug/irisc).
set -euo pipefail
cd "$(dirname "$0")/.."
speakers=${SPEAKERS:-100}
per_speaker=${PER_SPEAKER:-2}
queries_per_speaker=${QUERIES_PER_SPEAKER:-1}
impostors=${IMPOSTORS:-20}
noise=${NOISE:-1.3}
voices=${VOICES:-7}
if [[ -z "${IRISC:-}" ]]; then
    IRISC=target/release/irisc
    [[ -x "$IRISC" ]] || IRISC=target/debug/irisc
fi
[[ -x "$IRISC" ]] || { echo "no irisc at $IRISC: run cargo build --release (or set IRISC)" >&2; exit 1; }
out=${OUT:-out/voice_far_frr}
mkdir -p "$out"

common=(--kind embedding --dim 192 --noise "$noise" --voices "$voices")
"$IRISC" gen "${common[@]}" --speakers "$speakers" --per-speaker "$per_speaker" --seed 1 \
    -o "$out/gallery.ndjson"
"$IRISC" gen "${common[@]}" --speakers $((speakers + impostors)) \
    --per-speaker "$queries_per_speaker" --seed 2 -o "$out/queries.ndjson"
"$IRISC" run examples/voice_cosine.irs --db "$out/gallery.ndjson" --query "$out/queries.ndjson" \
    --threads "${THREADS:-1}" --check >"$out/answers.ndjson" 2>"$out/run.log" || {
    cat "$out/run.log" >&2
    exit 1
}
grep -E "answered in|checked:" "$out/run.log"

python3 - "$out/gallery.ndjson" "$out/queries.ndjson" "$out/answers.ndjson" <<'EOF'
import json, math, sys

TAU = 0.34
def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
gallery, queries, answers = (read(p) for p in sys.argv[1:4])
assert len(answers) == len(queries), "one answer per query"

def cos(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

counts = {k: [0, 0, 0, 0] for k in ("mpc", "float")}  # genuine, impostor, FR, FA
near = []
for ans, q in zip(answers, queries):
    assert ans["query"] == answers.index(ans)
    accepted = set(ans["ids"])
    for r in gallery:
        genuine = q["id"] // 1000 == r["id"] // 1000
        c = cos(q["embedding"], r["embedding"])
        for k, acc in (("mpc", r["id"] in accepted), ("float", c >= TAU)):
            n = counts[k]
            if genuine:
                n[0] += 1
                n[2] += not acc
            else:
                n[1] += 1
                n[3] += acc
        if (r["id"] in accepted) != (c >= TAU):
            near.append((q["id"], r["id"], round(c, 5)))

g, i = counts["mpc"][0], counts["mpc"][1]
print(f"voice_cosine.irs, tau {TAU}: {len(gallery)} enrolled embeddings, {len(queries)} queries, "
      f"{g} genuine and {i} impostor pairs")
for k in ("mpc", "float"):
    _, _, fr, fa = counts[k]
    print(f"  {k:5}: FAR {fa / i:.4f} ({fa}/{i})  FRR {fr / g:.4f} ({fr}/{g})")
print(f"  pairs decided differently by MPC (fixed point 2^-8) and float: {len(near)} {near}")
EOF
