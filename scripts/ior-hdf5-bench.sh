#!/usr/bin/env bash
# ior through HDF5 (docs/performance.md, "ior through HDF5"), side by side on one file system:
# `fieldstore bench ior --api hdf5`, h5py writing and reading the same files
# (scripts/ior-hdf5-h5py.py), `fieldstore bench ior` on the pool's own files, and IOR itself
# where $IOR names a command that runs it (IOR is in no package registry here: build it with
# parallel HDF5 and give, say, IOR="mpirun --allow-run-as-root -np \$NP /path/to/ior"; $NP is
# set to each process count). Each run writes SEGMENTS transfers of TRANSFER bytes per process
# into a file of its own, then reads another process's back (IOR's -C), for each process
# count of PROCS; the systems take turns, RUNS times, each run starting with the next one. Printed: a Markdown table of each
# system's global bandwidth (all bytes over first I/O to last, MiB/s), median and range.
#
#   scripts/ior-hdf5-bench.sh DIR [RUNS] [SEGMENTS] [TRANSFER] [PROCS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "${1:?usage: ior-hdf5-bench.sh DIR [RUNS] [SEGMENTS] [TRANSFER] [PROCS]}")
runs=${2:-5}
segments=${3:-1000}
transfer=${4:-1048576}
procs=${5:-1 2}
source "$here/scripts/install-deps.sh"
venv=${FIELDSTORE_PYTHON_VENV:-$HOME/.cache/fieldstore-python}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import h5py' 2>/dev/null || "$venv/bin/pip" install -q h5py numpy >&2
cargo build -q --release -p fieldstore-cli --manifest-path "$here/Cargo.toml"
bin="$here/target/release/fieldstore"
results=$(mktemp)
trap 'rm -f "$results"; rm -rf "$dir/run"' EXIT

# MiB/s of a fieldstore run: the last line of --json (all processes).
fieldstore_bandwidth() {
  "$bin" "$@" --json | tail -1 | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["bytes"] / r["seconds"] / 2**20)'
}

# MiB/s of h5py in NP processes at once: all bytes over the first start to the last end.
h5py_bandwidth() {
  local mode=$1 np=$2 rank
  for rank in $(seq 0 $((np - 1))); do
    # A reader reads the next rank's file, as --reorder.
    local file=$rank
    [[ $mode == read && $np -gt 1 ]] && file=$(((rank + 1) % np))
    "$venv/bin/python" "$here/scripts/ior-hdf5-h5py.py" "$mode" "$dir/run" "$file" "$segments" "$transfer" &
  done | python3 -c '
import json, sys
runs = [json.loads(l) for l in sys.stdin]
if len(runs) != int(sys.argv[1]):
    sys.exit(f"h5py: {int(sys.argv[1]) - len(runs)} process(es) failed")
print(sum(r["bytes"] for r in runs) / (max(r["end"] for r in runs) - min(r["start"] for r in runs)) / 2**20)' "$np"
}

# One system's write then read with NP processes: "SYSTEM NP write MiB/s" and "... read ...".
measure() {
  local system=$1 np=$2 w r
  rm -rf "$dir/run" && mkdir -p "$dir/run"
  local ior=(bench ior --pool "$dir/run" --procs "$np" -s "$segments" -t "$transfer")
  local reorder=()
  ((np > 1)) && reorder=(--reorder)
  case $system in
    fieldstore-hdf5)
      w=$(fieldstore_bandwidth "${ior[@]}" --api hdf5)
      r=$(fieldstore_bandwidth "${ior[@]}" --api hdf5 --read "${reorder[@]}")
      ;;
    fieldstore-pool)
      w=$(fieldstore_bandwidth "${ior[@]}")
      r=$(fieldstore_bandwidth "${ior[@]}" --read "${reorder[@]}")
      ;;
    h5py)
      w=$(h5py_bandwidth write "$np")
      r=$(h5py_bandwidth read "$np")
      ;;
    ior)
      # IOR's own summary: the write and read rows' bandwidth (MiB/s), one iteration.
      # $IOR may name $NP: a shell of its own expands it.
      local out
      out=$(NP=$np bash -c "$IOR \"\$@\"" ior -a HDF5 -F -s "$segments" -t "$transfer" -b "$transfer" -w -r -C -i 1 -o "$dir/run/testFile")
      w=$(awk '$1 == "write" && $2 ~ /^[0-9.]+$/ {print $2; exit}' <<< "$out")
      r=$(awk '$1 == "read" && $2 ~ /^[0-9.]+$/ {print $2; exit}' <<< "$out")
      ;;
  esac
  if [[ -z $w || -z $r ]]; then
    echo "ior-hdf5-bench: $system with $np processes gave no bandwidth" >&2
    exit 1
  fi
  echo "$system $np write $w" >> "$results"
  echo "$system $np read $r" >> "$results"
}

systems=(fieldstore-hdf5 h5py fieldstore-pool)
[[ -n ${IOR:-} ]] && systems=(ior "${systems[@]}")
for run in $(seq "$runs"); do
  for np in $procs; do
    # Each run starts with the next system, so that none always follows the same one.
    for i in "${!systems[@]}"; do
      measure "${systems[$(((i + run) % ${#systems[@]}))]}" "$np"
    done
  done
  echo "ior-hdf5-bench: run $run of $runs done" >&2
done
python3 - "$results" "$(df -T "$dir" | awk 'NR == 2 {print $2}')" <<'EOF'
import statistics, sys
from collections import defaultdict
figures = defaultdict(list)
for line in open(sys.argv[1]):
    system, np, phase, mib = line.split()
    figures[(int(np), phase, system)].append(float(mib))
systems = sorted({k[2] for k in figures}, key=["ior", "fieldstore-hdf5", "h5py", "fieldstore-pool"].index)
base = "ior" if "ior" in systems else "h5py"
print(f"| processes, phase ({sys.argv[2]}) | " + " | ".join(f"{s} MiB/s" for s in systems) + f" | fieldstore-hdf5 / {base} |")
print("|---" * (len(systems) + 2) + "|")
for np, phase in sorted({(k[0], k[1]) for k in figures}, key=lambda k: (k[0], k[1] != "write")):
    cells = []
    for s in systems:
        v = figures[(np, phase, s)]
        cells.append(f"{statistics.median(v):.0f} ({min(v):.0f}-{max(v):.0f})")
    ratio = statistics.median(figures[(np, phase, "fieldstore-hdf5")]) / statistics.median(figures[(np, phase, base)])
    print(f"| {np}, {phase} | " + " | ".join(cells) + f" | {ratio:.2f} |")
EOF
