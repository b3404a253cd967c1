#!/usr/bin/env bash
# Two fieldstore builds side by side on RADOS writes, with `rados bench` as the reference:
# each repetition runs `rados bench write -t 1`, then hammer (one process, 2,000 x 1 MiB or
# 20,000 x 64 KiB fields, 100 per flush) with the OLD binary, with the NEW one keeping one
# write in flight, and with the NEW one keeping eight; prints MiB/s per repetition.
#   CEPH_CONF=/path/ceph.conf OLD=/path/fieldstore [NEW=target/release/fieldstore] \
#     [POOL=fieldstore] [SIZE=1048576] [REPS=4] scripts/rados-ab.sh
# Build an older commit for OLD with, e.g.:
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target cargo build --release -p fieldstore-cli)
# OLD builds without store.writes_in_flight (before pipelined writes) are given no such key.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
: "${CEPH_CONF:?set CEPH_CONF to the ceph.conf of the cluster}" "${OLD:?set OLD to the fieldstore binary to compare with}"
new=${NEW:-$here/target/release/fieldstore} pool=${POOL:-fieldstore} size=${SIZE:-1048576} reps=${REPS:-4}
if ((size >= 1048576)); then steps=20; else steps=200; fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# MiB/s of one hammer write with BINARY, its fields in a namespace prefix of its own (wiped
# afterwards); IN_FLIGHT empty: no writes_in_flight key.
hammer_write() {
  local binary=$1 label=$2 in_flight=$3 config=$scratch/$2.yaml
  printf 'catalogue: {type: rados, pool: %s, namespace_prefix: ab-%s-%s-}\nstore: {type: rados, pool: %s, namespace_prefix: ab-%s-%s-%s}\n' \
    "$pool" $$ "$label" "$pool" $$ "$label" "${in_flight:+, writes_in_flight: $in_flight}" >"$config"
  "$binary" --config "$config" bench hammer --nsteps "$steps" --nlevels 10 --nparams 10 --field-size "$size" --json |
    tail -1 | python3 -c 'import json,sys; p=json.load(sys.stdin); print(round(p["bytes"]/p["seconds"]/2**20, 1))'
  "$binary" --config "$config" wipe class=od,expver=0001,stream=enfo,date=20231201,time=1200 --doit >/dev/null
}

echo "| repetition | rados bench -t 1 | old | new, 1 in flight | new, 8 in flight |"
echo "|---|---|---|---|---|"
for ((rep = 1; rep <= reps; rep++)); do
  reference=$(timeout 60 rados -p "$pool" bench 4 write -b "$size" -t 1 2>/dev/null | awk '/^Bandwidth \(MB\/sec\)/ {print $3}')
  echo "| $rep | $reference | $(hammer_write "$OLD" old "") | $(hammer_write "$new" new1 1) | $(hammer_write "$new" new8 8) |"
  sleep 3
done
