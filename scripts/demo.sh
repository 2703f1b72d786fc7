#!/usr/bin/env bash
# The demo behind `make demo`: a synthetic gallery, a few queries (some are rotated, noisy
# re-captures of enrolled irises), and the three parties answering them over TLS on localhost.
set -euo pipefail
cd "$(dirname "$0")/.."
irisc=target/release/irisc
out=out/demo
records=${RECORDS:-3000}
queries=${QUERIES:-6}
mkdir -p "$out"
echo "== generating $records synthetic iris codes and $queries queries"
"$irisc" gen --count "$records" --seed 7 -o "$out/db.ndjson"
"$irisc" gen --count "$queries" --seed 8 --near "$out/db.ndjson" -o "$out/queries.ndjson"
echo "== what the compiler chose for examples/iris_ids.irs"
"$irisc" explain examples/iris_ids.irs --records "$records"
echo "== build, keys, shares, three parties over TLS (answers checked against the plaintext definition)"
"$irisc" run examples/iris_ids.irs --db "$out/db.ndjson" --query "$out/queries.ndjson" --work "$out/work" --check
