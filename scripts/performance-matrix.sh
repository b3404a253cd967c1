#!/usr/bin/env bash
# Runs `fieldstore bench compare` (FDB5 vs fieldstore, side by side) over field sizes and
# process counts on one file system and prints a Markdown table.
#   scripts/performance-matrix.sh ROOT [REPS]
# ROOT is a scratch directory on the file system to measure (emptied by each run).
set -euo pipefail
root=$1 reps=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
fs=$here/target/release/fieldstore
[[ -x $fs ]] || (cd "$here" && cargo build --release -q -p fieldstore-cli)
peer=$here/../shared/peer/fdb5-peer.sh
echo "| field size | procs | fields/proc | archive+flush FDB5 s | fieldstore s | x | list FDB5 s | fieldstore s | x | retrieve FDB5 s | fieldstore s | x | fieldstore archive MiB/s | % of dd |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# size: steps levels params (fields per process), keeping each run near 1 GiB or less.
for spec in "1024 100 10 10" "4096 100 10 10" "65536 40 10 10" "1048576 10 10 10" "8388608 5 5 5"; do
  read -r size nsteps nlevels nparams <<<"$spec"
  for procs in 1 2 4 8; do
    steps=$nsteps
    # Large fields with many processes: fewer steps per process (bounded memory and time).
    if (( size >= 65536 && procs > 1 )); then steps=$(( (nsteps + procs - 1) / procs )); fi
    "$fs" bench compare --root "$root" --peer "$peer" --reps "$reps" --procs "$procs" \
      --nsteps "$steps" --nlevels "$nlevels" --nparams "$nparams" --field-size "$size" --json |
    python3 "$here/scripts/matrix_row.py"
  done
done
