#!/usr/bin/env bash
# What N clients cost against one on the same cluster: `rados bench -t N` (one client, N
# operations in flight), N `rados bench -t 1` processes at once (bandwidths summed), and
# `fieldstore bench hammer --procs N` with one operation in flight per process; writes, then
# reads of what each wrote. Nothing is deleted between runs (memstore OSDs can miscount
# deletions): give it a fresh test cluster with room for REPS x ~3 GiB.
#   CEPH_CONF=/path/ceph.conf [CLIENTS=4] [SIZE=65536] [REPS=3] scripts/rados-clients.sh [POOL]
set -euo pipefail
pool=${1:-fieldstore} clients=${CLIENTS:-4} size=${SIZE:-65536} reps=${REPS:-3}
# shellcheck source=scripts/rados-bench-common.sh
. "$(dirname "$0")/rados-bench-common.sh"

echo "| repetition | write: rados bench -t $clients / $clients x -t 1 / hammer $clients x 1 (MiB/s) | read: same order |"
echo "|---|---|---|"
for ((rep = 1; rep <= reps; rep++)); do
  run=clients-$$-$rep
  printf 'catalogue: {type: rados, pool: %s, namespace_prefix: %s-}\nstore: {type: rados, pool: %s, namespace_prefix: %s-, writes_in_flight: 1, reads_in_flight: 1}\n' \
    "$pool" "$run" "$pool" "$run" >"$scratch/config.yaml"
  # About 3 s of writing for each tool.
  shape=(--procs "$clients" --nsteps $((200 * 65536 / size / clients + 1)) --nlevels 10 --nparams 10 --field-size "$size")
  w1=$(rados_bench 3 write -b "$size" -t "$clients" --no-cleanup --run-name "$run-one")
  wn=$(rados_bench_clients "$run-many" "$clients" 3 write -b "$size" -t 1 --no-cleanup)
  hw=$(hammer_mibs "${shape[@]}")
  r1=$(rados_bench 3 seq -t "$clients" --run-name "$run-one")
  rn=$(rados_bench_clients "$run-many" "$clients" 3 seq -t 1)
  hr=$(hammer_mibs "${shape[@]}" --read)
  echo "| $rep | $w1 / $wn / $hw | $r1 / $rn / $hr |"
done
