#!/usr/bin/env bash
# Fields as arrays, side by side on the same fields and file system (issue 20 item 6):
#   scripts/arrays-bench.sh [DIR] [DEGREES] [NSTEPS NLEVELS NPARAMS] [ROUNDS]
# (defaults: /dev/shm/fieldstore-arrays-bench, 1 degree, 20 steps x 10 levels x 5 params, 5 rounds).
# Makes the fields once (16-bit simple packing on a global regular grid), archives them into
# fieldstore (its Python API) and FDB5 5.25 (pyfdb) under FDB5's schema, and writes them as an
# on-disk Zarr store with zarr-python's defaults. Then, in turns, each round a new process per
# system reads the whole 4-D cube into memory (float32): fieldstore's Zarr view (cfgrib's layout,
# and z3fdb's axes), fieldstore's xarray backend, z3fdb 5.25 over FDB5, earthkit-data's `fdb` source + to_xarray() over pyfdb,
# and the on-disk Zarr store. Prints each read's JSON line, then the medians and ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/dev/shm/fieldstore-arrays-bench} degrees=${2:-1} nsteps=${3:-20} nlevels=${4:-10} nparams=${5:-5} rounds=${6:-5}
schema=$(cd "$here/.." && pwd)/shared/fdb5/schema
[[ -f $schema ]] || { echo "arrays-bench: needs FDB5's schema at $schema" >&2; exit 1; }
ours=${FIELDSTORE_PYTHON_VENV:-$HOME/.cache/fieldstore-python}
if [[ ! -x $ours/bin/python ]] || ! "$ours/bin/python" -c 'import fieldstore.arrays, zarr, xarray, eccodes' 2>/dev/null; then
  bash "$here/scripts/python-test.sh" -q -x >/dev/null   # installs the package with its test extras (and tests it)
fi
# FDB5's side: pyfdb 5.25, z3fdb 5.25 and earthkit-data in an environment of their own.
peer=${FDB5_ARRAYS_VENV:-$HOME/.cache/fdb5-arrays}
if [[ ! -x $peer/bin/python ]] || ! "$peer/bin/python" -c 'import pyfdb, z3fdb, earthkit.data, zarr' 2>/dev/null; then
  python3 -m venv "$peer"
  "$peer/bin/pip" install -q 'pyfdb>=5.25,<5.26' 'fdb5lib>=5.25,<5.26' 'z3fdb>=5.25,<5.26' 'earthkit-data>=1.3,<1.4' 'zarr>=3' >&2
fi
bench=$here/scripts/arrays-bench.py
data=$dir/$degrees-$nsteps-$nlevels-$nparams
if [[ ! -f $data/done ]]; then
  rm -rf "$data"; mkdir -p "$data/fieldstore" "$data/fdb5"
  "$ours/bin/python" "$bench" make "$data" "$degrees" "$nsteps" "$nlevels" "$nparams"
  for system in fieldstore fdb5; do
    printf '{"type": "local", "engine": "toc", "schema": "%s", "spaces": [{"handler": "Default", "roots": [{"path": "%s"}]}]}\n' \
      "$schema" "$data/$system" > "$data/$system.json"
  done
  cp "$data/fdb5.json" "$data/fdb5.yaml"   # JSON is YAML: z3fdb takes a config file's path
  "$ours/bin/python" "$bench" archive-fieldstore "$data" "$data/fieldstore.json"
  "$peer/bin/python" "$bench" archive-fdb5 "$data" "$data/fdb5.json"
  "$ours/bin/python" "$bench" write-zarr "$data"
  touch "$data/done"
fi
results=$(mktemp); trap 'rm -f "$results"' EXIT
for round in $(seq "$rounds"); do
  "$ours/bin/python" "$bench" read fieldstore-zarr "$data" "$data/fieldstore.json" | tee -a "$results"
  "$ours/bin/python" "$bench" read fieldstore-zarr-axes "$data" "$data/fieldstore.json" | tee -a "$results"
  "$ours/bin/python" "$bench" read fieldstore-xarray "$data" "$data/fieldstore.json" | tee -a "$results"
  "$peer/bin/python" "$bench" read z3fdb "$data" "$data/fdb5.yaml" | tee -a "$results"
  "$peer/bin/python" "$bench" read earthkit-fdb "$data" "$data/fdb5.json" | tee -a "$results"
  "$ours/bin/python" "$bench" read zarr-disk "$data" "$data/fieldstore.json" | tee -a "$results"
done
python3 - "$results" "$degrees" "$nsteps" "$nlevels" "$nparams" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
degrees, cube = sys.argv[2], " x ".join(sys.argv[3:6])
systems = ["fieldstore-zarr", "fieldstore-zarr-axes", "fieldstore-xarray", "z3fdb", "earthkit-fdb", "zarr-disk"]
reference = rows[0]["sum"]
wrong = [r for r in rows if abs(r["sum"] - reference) > 1e-6 * abs(reference)]
assert not wrong, f"systems read other values than {rows[0]['system']}: {wrong}"
median = {s: statistics.median(r["seconds"] for r in rows if r["system"] == s) for s in systems}
spread = {s: (min(r["seconds"] for r in rows if r["system"] == s), max(r["seconds"] for r in rows if r["system"] == s)) for s in systems}
print(f"\n{cube} fields (steps x levels x params), {degrees}-degree grid: median s (range), and ratios")
print("| system | s | vs z3fdb | vs earthkit fdb | vs on-disk Zarr |\n|---|---|---|---|---|")
for s in systems:
    lo, hi = spread[s]
    cells = [f"{median[other] / median[s]:.2f}x" for other in ("z3fdb", "earthkit-fdb")] + [f"{median[s] / median['zarr-disk']:.2f} of it"]
    print(f"| {s} | {median[s]:.3f} ({lo:.3f}-{hi:.3f}) | " + " | ".join(cells) + " |")
PY
