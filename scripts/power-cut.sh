#!/usr/bin/env bash
# Power cuts on a real device (issue 24): runs the power-loss workload on ext4 and XFS over a
# loop device whose every write and cache flush is logged, then mounts the crash states the log
# allows and checks them (scripts/power-cut.py has the method). Needs root, loop devices and
# FUSE; installs the rest. Arguments go to power-cut.py (e.g. --states 2000, --keep DIR);
# --fs picks one file system instead of both.
#
#   scripts/power-cut.sh [--states N] [--fs ext4|xfs] [--seed N] [--keep DIR] [--json]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/install-deps.sh"
ensure_packages fuse python3-fusepy e2fsprogs xfsprogs
cd "$here"
binary=$(cargo test -q -p fieldstore --test power_loss --no-run --message-format=json 2>/dev/null \
  | /usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "power_loss":
        print(m["executable"])')
file_systems=(ext4 xfs)
args=()
while (($#)); do
  case $1 in
    --fs) file_systems=("$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
for fs in "${file_systems[@]}"; do
  as_root /usr/bin/python3 "$here/scripts/power-cut.py" --test-binary "$binary" --fs "$fs" "${args[@]}"
done
