#!/usr/bin/env bash
# Runs `fieldstore bench compare` (FDB5 vs fieldstore, side by side) over field sizes and
# process counts on one file system and prints a Markdown table.
#   scripts/performance-matrix.sh [--procs "1 2 4 8"] [--sizes "1048576 8388608"] [--quick] ROOT [REPS]
# ROOT is a scratch directory on the file system to measure (emptied by each run).
# --procs: the process counts (e.g. "1 16 32" on a node with many cores).
# --sizes: only the rows of these field sizes, in bytes (of 1024 4096 65536 1048576 8388608).
# --quick: 1 MiB and 8 MiB fields only, fewer of them: the operational read sizes within
#          about 10 minutes at 16 and 32 processes (../shared/bigmachine/README.md).
set -euo pipefail
procs_list="1 2 4 8" sizes="" quick=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --procs) procs_list=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -*) echo "performance-matrix: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "usage: $0 [--procs \"1 2 4 8\"] [--sizes \"1048576 8388608\"] [--quick] ROOT [REPS]" >&2; exit 2; }
root=$1 reps=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
fs=$here/target/release/fieldstore
[[ -x $fs ]] || (cd "$here" && cargo build --release -q -p fieldstore-cli)
peer=$here/../shared/peer/fdb5-peer.sh
# size: steps levels params (fields per process), keeping each run near 1 GiB or less.
specs=("1024 100 10 10" "4096 100 10 10" "65536 40 10 10" "1048576 10 10 10" "8388608 5 5 5")
(( quick )) && specs=("1048576 4 5 5" "8388608 2 5 5")
echo "| field size | procs | fields/proc | archive+flush FDB5 s | fieldstore s | x | list FDB5 s | fieldstore s | x | retrieve FDB5 s | fieldstore s | x | list, new process FDB5 s | fieldstore s | x | retrieve, new process FDB5 s | fieldstore s | x | fieldstore archive MiB/s | % of dd write | % of dd writers syncing each step | fieldstore new-process retrieve MiB/s | % of dd read |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for spec in "${specs[@]}"; do
  read -r size nsteps nlevels nparams <<<"$spec"
  [[ -z $sizes || " $sizes " == *" $size "* ]] || continue
  for procs in $procs_list; do
    steps=$nsteps
    # Large fields with many processes: fewer steps per process (bounded memory and time).
    if (( size >= 65536 && procs > 1 )); then steps=$(( (nsteps + procs - 1) / procs )); fi
    "$fs" bench compare --root "$root" --peer "$peer" --reps "$reps" --procs "$procs" \
      --nsteps "$steps" --nlevels "$nlevels" --nparams "$nparams" --field-size "$size" --json |
    python3 "$here/scripts/matrix_row.py"
  done
done
