#!/usr/bin/env bash
# Extraction side by side (issue 45 item 4): 10 points (spread over the globe, or a box of 5 x 2
# around one place) from each of NFIELDS fields of about 1 MiB, simple and CCSDS packing, on the
# same fields and file system:
#   scripts/extract-bench.sh [DIR] [NFIELDS] [ROUNDS] [S3_ENV]
# (defaults: /dev/shm/fieldstore-extract-bench, 1000 fields, 5 rounds, no S3).
# Makes the fields once (scripts/extract-bench.py), archives them into fieldstore (its Python
# API, FDB5's schema, packings kept by `fieldstore scan`) and into FDB5 5.25 (fdb-write, then
# gribjump-scan). Then, in turns, each round a new process per system extracts the points:
# fieldstore.gribjump, ECMWF's pygribjump 0.13 over FDB5, and fieldstore's retrieve of the whole
# fields decoded by ecCodes. With S3_ENV (a file of FIELDSTORE_TEST_S3_* variables, as
# scripts/test-services.sh exports them), fieldstore also stores the fields on that S3 server
# (a POSIX catalogue beside) and both of its ways are measured there too; and both through
# `fieldstore serve` over the POSIX store, on loopback (`served`). Prints each read's JSON line,
# then the medians and ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/dev/shm/fieldstore-extract-bench} nfields=${2:-1000} rounds=${3:-5} s3_env=${4:-}
schema=$(cd "$here/.." && pwd)/shared/fdb5/schema
[[ -f $schema ]] || { echo "extract-bench: needs FDB5's schema at $schema" >&2; exit 1; }
ours=${FIELDSTORE_PYTHON_VENV:-$HOME/.cache/fieldstore-python}
if [[ ! -x $ours/bin/python ]] || ! "$ours/bin/python" -c 'import fieldstore.gribjump, eccodes' 2>/dev/null; then
  bash "$here/scripts/python-test.sh" -q -x >/dev/null   # installs the package with its test extras (and tests it)
fi
sp=$(bash "$here/scripts/gribjump-install.sh")
peer=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
fdb5_env=(env LD_LIBRARY_PATH="$sp/gribjumplib/lib64:$sp/fdb5lib/lib64:$sp/metkitlib/lib64:$sp/eckitlib/lib64:$sp/eccodeslib/lib64"
  FDB_HOME="$dir" FDB5_CONFIG_FILE="$dir/fdb5.yaml" GRIBJUMP_CONFIG_FILE="$dir/gribjump.yaml")
bench=$here/scripts/extract-bench.py
dataset=class=od,expver=0001,stream=oper,date=20240101,time=0000,domain=g
posix_section="{type: posix, root: '$dir/fieldstore', create: true}"
if [[ ! -f $dir/done-$nfields ]]; then
  rm -rf "$dir"; mkdir -p "$dir/fieldstore" "$dir/fdb5"
  "$ours/bin/python" "$bench" make "$dir" "$nfields"
  printf 'type: local\nengine: toc\nschema: %s\nspaces:\n- handler: Default\n  roots:\n  - path: %s\n' "$schema" "$dir/fdb5" > "$dir/fdb5.yaml"
  printf 'type: local\n' > "$dir/gribjump.yaml"
  for packing in simple ccsds; do
    "${fdb5_env[@]}" "$sp/fdb5lib/bin/fdb-write" "$dir/$packing.grib" >/dev/null
  done
  "${fdb5_env[@]}" "$sp/gribjumplib/bin/gribjump-scan" "$dataset" >/dev/null
  touch "$dir/done-$nfields"
fi
configs=(posix)
printf 'schema: %s\ncatalogue: %s\nstore: %s\n' "$schema" "$posix_section" "$posix_section" > "$dir/posix.yaml"
if [[ -n $s3_env ]]; then
  # shellcheck disable=SC1090
  source "$s3_env"
  s3_section="{type: s3, endpoint: '$FIELDSTORE_TEST_S3_ENDPOINT', bucket: fieldstore-test, prefix: 'extract-bench-$nfields/', access_key_id: '$FIELDSTORE_TEST_S3_ACCESS_KEY', secret_access_key: '$FIELDSTORE_TEST_S3_SECRET_KEY'}"
  printf 'schema: %s\ncatalogue: {type: posix, root: %s, create: true}\nstore: %s\n' "$schema" "$dir/s3-catalogue" "$s3_section" > "$dir/s3.yaml"
  configs+=(s3)
fi
for config in "${configs[@]}"; do
  if [[ ! -f $dir/archived-$config ]]; then
    for packing in simple ccsds; do
      "$ours/bin/python" "$bench" archive-fieldstore "$dir" "$packing" "$dir/$config.yaml"
    done
    touch "$dir/archived-$config"
  fi
done
# fieldstore serve over the POSIX store, on loopback: the same fields, extracted by the server
# for its clients (`type: remote`), whose retrieve reads them through it.
(cd "$here" && cargo build -q --release -p fieldstore-cli)
"$here/target/release/fieldstore" --config "$dir/posix.yaml" serve --listen 127.0.0.1:0 > "$dir/serve.out" 2>/dev/null &
server=$!
results=$(mktemp); trap 'kill "$server"; rm -f "$results"' EXIT
for _ in $(seq 100); do grep -q '^listening on' "$dir/serve.out" && break; sleep 0.1; done
address=$(sed -n 's/^listening on //p' "$dir/serve.out")
[[ -n $address ]] || { echo "extract-bench: fieldstore serve did not start" >&2; exit 1; }
printf 'catalogue: {type: remote, endpoint: "http://%s"}\nstore: {type: remote, endpoint: "http://%s"}\n' "$address" "$address" > "$dir/served.yaml"
configs+=(served)
tag() { sed "s/}\$/, \"store\": \"$1\"}/" | tee -a "$results"; }
for round in $(seq "$rounds"); do
  for packing in simple ccsds; do
    for points in spread box; do
      for config in "${configs[@]}"; do
        "$ours/bin/python" "$bench" read fieldstore-gribjump "$dir" "$packing" "$points" "$dir/$config.yaml" | tag "$config"
        # The whole fields are read and decoded whatever the points: measured once per round.
        [[ $points == spread ]] && "$ours/bin/python" "$bench" read retrieve-decode "$dir" "$packing" "$points" "$dir/$config.yaml" | tag "$config"
      done
      "${fdb5_env[@]}" "$peer/bin/python" "$bench" read pygribjump "$dir" "$packing" "$points" - | grep '^{' | tag fdb5
    done
  done
done
python3 - "$results" "$nfields" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
for packing in ("simple", "ccsds"):
    for points in ("spread", "box"):
        mine = [r for r in rows if r["packing"] == packing and r["points"] == points]
        wrong = [r for r in mine if r["sum"] != mine[0]["sum"]]
        assert not wrong, f"systems read other values: {wrong}"
        runs = {}
        for r in mine:
            runs.setdefault((r["system"], r["store"]), []).append(r)
        median = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
        whole = {store: statistics.median(r["seconds"] for r in rows if r["packing"] == packing and r["system"] == "retrieve-decode" and r["store"] == store)
                 for store in {r["store"] for r in rows if r["packing"] == packing and r["system"] == "retrieve-decode"}}
        gj = median[("pygribjump", "fdb5")]
        gj_best = min(r["seconds"] for r in runs[("pygribjump", "fdb5")])
        print(f"\n{sys.argv[2]} fields, {packing} packing, 10 points each ({points}): median s (range), bytes read, ratios")
        print("| system | store | s | bytes read | vs pygribjump (median; best) | vs retrieve + decode |\n|---|---|---|---|---|---|")
        for system, store in sorted(runs, key=lambda k: (k[0] == "pygribjump", k[1], k[0])):
            v = runs[(system, store)]
            lo, hi = min(r["seconds"] for r in v), max(r["seconds"] for r in v)
            vs_whole = f"{whole[store] / median[(system, store)]:.1f}x" if whole.get(store) and system != "retrieve-decode" else ""
            read = v[0]["bytes_read"]
            print(f"| {system} | {store} | {median[(system, store)]:.3f} ({lo:.3f}-{hi:.3f}) | {'' if read is None else read} | {gj / median[(system, store)]:.2f}x; {gj_best / lo:.2f}x | {vs_whole} |")
PY
