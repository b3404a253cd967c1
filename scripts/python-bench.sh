#!/usr/bin/env bash
# fieldstore through Python side by side with pyfdb 5.25, on the same fields and file system:
#   scripts/python-bench.sh [DIR]          (default DIR: /dev/shm/fieldstore-python-bench)
# For 10,000 x 4 KiB and 1,000 x 1 MiB fields, each API (pyfdb itself, fieldstore.pyfdb,
# fieldstore's own) archives into a store of its own under DIR, then lists everything and
# retrieves everything in one request, best of 3 (scripts/python-bench.py). Last, the Rust
# API's retrieve of the same 1,000 x 1 MiB into a reused buffer against fieldstore's Python
# `readinto` the same, in turns. Prints one JSON line per run, then Markdown tables.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/dev/shm/fieldstore-python-bench}
schema=$(cd "$here/.." && pwd)/shared/fdb5/schema
[[ -f $schema ]] || { echo "python-bench: needs FDB5's schema at $schema" >&2; exit 1; }
FIELDSTORE_PYTHON_VENV=${FIELDSTORE_PYTHON_VENV:-$HOME/.cache/fieldstore-python}
if [[ ! -x $FIELDSTORE_PYTHON_VENV/bin/python ]] || ! "$FIELDSTORE_PYTHON_VENV/bin/python" -c 'import fieldstore.pyfdb' 2>/dev/null; then
  bash "$here/scripts/python-test.sh" -q -x >/dev/null   # installs the package (and tests it)
fi
bash "$here/scripts/fdb5-install.sh" >/dev/null
fdb5_python=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}/bin/python
ours_python=$FIELDSTORE_PYTHON_VENV/bin/python
results=$(mktemp); trap 'rm -f "$results"' EXIT
for workload in "100 10 10 4096" "10 10 10 1048576"; do
  for api in pyfdb fieldstore.pyfdb fieldstore; do
    python=$ours_python; [[ $api == pyfdb ]] && python=$fdb5_python
    root=$dir/$api-${workload// /-}
    rm -rf "$root"; mkdir -p "$root"
    # shellcheck disable=SC2086
    "$python" "$here/scripts/python-bench.py" "$api" "$root" "$schema" $workload | tee -a "$results"
  done
done
# The Rust API against fieldstore's Python on the fieldstore run's 1,000 x 1 MiB store: each
# reads everything into one reused buffer (crates/fieldstore/examples/retrieve_into.rs and its
# mirror scripts/python-retrieve-into.py), in turns, 5 rounds of 5 runs, buffers of 8 and 1 MiB.
(cd "$here" && cargo build --release -q -p fieldstore --example retrieve_into)
root=$dir/fieldstore-10-10-10-1048576
printf '{"type": "local", "engine": "toc", "schema": "%s", "spaces": [{"handler": "Default", "roots": [{"path": "%s"}]}]}\n' "$schema" "$root" > "$dir/config.yaml"
request=class=od,expver=0001,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl
for round in 1 2 3 4 5; do
  for buffer in 8388608 1048576; do
    "$here/target/release/examples/retrieve_into" "$dir/config.yaml" "$request" $buffer 5 | tee -a "$results"
    "$ours_python" "$here/scripts/python-retrieve-into.py" "$dir/config.yaml" "$request" $buffer 5 | tee -a "$results"
  done
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
runs = {(r["api"], r["field_bytes"]): r for r in rows if "fields" in r}
print("\n| workload | phase | pyfdb 5.25 s | fieldstore.pyfdb s (x pyfdb) | fieldstore s (x pyfdb) |\n|---|---|---|---|---|")
for size, name in ((4096, "10,000 x 4 KiB"), (1048576, "1,000 x 1 MiB")):
    base = runs[("pyfdb", size)]
    for phase in ("list", "retrieve"):
        cells = [f"{base[phase]['best']:.4f}"]
        for api in ("fieldstore.pyfdb", "fieldstore"):
            ours = runs[(api, size)][phase]
            assert ours["found"] == base[phase]["found"], (api, size, phase, ours["found"], base[phase]["found"])
            cells.append(f"{ours['best']:.4f} ({base[phase]['best'] / ours['best']:.2f}x)")
        print(f"| {name} | {phase} | " + " | ".join(cells) + " |")
print("\n| retrieve 1,000 x 1 MiB into one buffer | Rust API median s (range) | Python median s (range) | Python at |\n|---|---|---|---|")
for buffer in (8388608, 1048576):
    medians = {}
    for api in ("rust", "python"):
        seconds = [s for r in rows if r["api"] == api and r.get("buffer") == buffer for s in r["seconds"]]
        assert all(r["bytes"] == 1048576000 for r in rows if r["api"] == api and r.get("buffer") == buffer)
        medians[api] = (statistics.median(seconds), min(seconds), max(seconds))
    rust, python = medians["rust"], medians["python"]
    print(f"| {buffer >> 20} MiB buffer | {rust[0]:.4f} ({rust[1]:.4f}-{rust[2]:.4f}) | {python[0]:.4f} ({python[1]:.4f}-{python[2]:.4f}) | {100 * rust[0] / python[0]:.0f}% of the Rust API's speed |")
PY
