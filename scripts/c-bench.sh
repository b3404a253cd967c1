#!/usr/bin/env bash
# What fieldstore's C API costs (issue 21 item 5): FDB5's own harness (fdb5_keybench.c), linked
# against FDB5 5.25 and against fieldstore's C API, side by side in one run with fieldstore's
# Rust API (bench compare), same workload and file system:
#   scripts/c-bench.sh ROOT [REPS [COMPARE OPTIONS...]]
# runs 10,000 x 4 KiB and 1,000 x 1 MiB (archive+flush, list, retrieve) on ROOT's file system;
# with --remote, every system through its servers on loopback (FDB5's fdb-server, fieldstore
# serve: issue 44's comparison).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=${1:?usage: c-bench.sh ROOT [REPS [COMPARE OPTIONS...]]} reps=${2:-3}
shift $(($# < 2 ? $# : 2))
cd "$here"
cargo build -q --release -p fieldstore-c -p fieldstore-cli
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ln -s "$here/target/release/libfieldstore_c.so" "$work/libfieldstore_c.so.0"
gcc -O2 -w -o "$work/keybench" ../shared/peer/fdb5_keybench.c -I"$here/include" -L"$here/target/release" -lfieldstore_c -Wl,-rpath,"$work"
for workload in "" "--nsteps 10 --field-size 1048576"; do
  # shellcheck disable=SC2086 # the workload's options, word-split on purpose
  "$here/target/release/fieldstore" bench compare --root "$root" --reps "$reps" --c-harness "$work/keybench" $workload "$@"
done
