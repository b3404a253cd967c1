#!/usr/bin/env bash
# fieldstore on RADOS side by side with `rados bench` on the same cluster, pool, object size
# and concurrency, then list() against one omap get per entry; prints Markdown tables.
#   CEPH_CONF=/path/ceph.conf [REPS=N] scripts/rados-compare.sh [POOL [INDEX_POOL]] [SECONDS]
# POOL holds the data (and `rados bench`'s objects); INDEX_POOL the catalogue (default POOL).
# With REPS=N (default 1) each pair of runs is repeated N times, rados bench and hammer
# alternating so that both see the same drift of a shared host; the table gives the medians,
# their ratio, and the range of the N per-repetition ratios.
# Each fieldstore run uses a namespace prefix of its own and is wiped afterwards. memstore
# OSDs may keep the memory of deleted objects: give each pool configuration a fresh test
# cluster (scripts/ceph-cluster.sh stop/start) with room for a few GiB.
set -euo pipefail
pool=${1:-fieldstore} index_pool=${2:-${1:-fieldstore}} seconds=${3:-5} reps=${REPS:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
fs=$here/target/release/fieldstore
[[ -x $fs ]] || (cd "$here" && cargo build --release -q -p fieldstore-cli)
: "${CEPH_CONF:?set CEPH_CONF to the ceph.conf of the cluster}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# MiB/s of a `rados bench` run (its "Bandwidth (MB/sec)" is bytes / 2^20 / s). rados bench
# waits for space on a full cluster: give up after a minute and say so.
rados_bench() {
  timeout 60 rados -p "$pool" bench "$@" 2>/dev/null | awk '/^Bandwidth \(MB\/sec\)/ {print $3}' | grep . ||
    { echo "rados bench $* did not finish (is the cluster full? ceph health detail)" >&2; exit 1; }
}
# MiB/s of hammer's aggregate phase (the last JSON line).
hammer_mibs() {
  "$fs" --config "$scratch/config.yaml" bench hammer "$@" --json |
    tail -1 | python3 -c 'import json,sys; p=json.load(sys.stdin); print(round(p["bytes"]/p["seconds"]/2**20, 1))'
}

# The list comparison runs first: memstore OSDs fill up with the bandwidth runs' objects.
echo "list of 10,000 fields (100 flushes of 100): bulk omap reads vs one omap get per entry"
(cd "$here" && cargo run --release -q --example rados_list_vs_gets -- "$index_pool" 100)
echo
echo "| object size | concurrency | rados bench write MiB/s | hammer write MiB/s | % (range) | rados bench read MiB/s | hammer read MiB/s | % (range) |"
echo "|---|---|---|---|---|---|---|---|"
for size in 1048576 65536; do
  for conc in 1 4; do
    # About as long as rados bench runs: 2,000 fields of 1 MiB or 20,000 of 64 KiB in all,
    # 100 fields per flush (hammer's steps).
    if ((size >= 1048576)); then steps=$((20 / conc)); else steps=$((200 / conc)); fi
    shape=(--procs "$conc" --nsteps "$steps" --nlevels 10 --nparams 10 --field-size "$size")
    results=()
    for ((rep = 1; rep <= reps; rep++)); do
      run=cmp-$$-$size-$conc-$rep
      write=$(rados_bench "$seconds" write -b "$size" -t "$conc" --no-cleanup --run-name "$run")
      read=$(rados_bench "$seconds" seq -t "$conc" --run-name "$run")
      rados -p "$pool" cleanup --run-name "$run" >/dev/null 2>&1
      printf 'catalogue: {type: rados, pool: %s, namespace_prefix: %s-}\nstore: {type: rados, pool: %s, namespace_prefix: %s-}\n' \
        "$index_pool" "$run" "$pool" "$run" >"$scratch/config.yaml"
      hw=$(hammer_mibs "${shape[@]}")
      hr=$(hammer_mibs "${shape[@]}" --read)
      "$fs" --config "$scratch/config.yaml" wipe class=od,expver=0001 --doit >/dev/null
      results+=("$write,$hw,$read,$hr")
    done
    python3 -c "
from statistics import median
runs = [tuple(map(float, r.split(','))) for r in '${results[*]}'.split()]
def column(i): return median(r[i] for r in runs)
def ratios(a, b):
    per = [100 * r[b] / r[a] for r in runs]
    spread = f' ({min(per):.0f}-{max(per):.0f}%)' if len(per) > 1 else ''
    return f'{100 * column(b) / column(a):.0f}%{spread}'
w, hw, r, hr = (column(i) for i in range(4))
print(f'| {$size // 1024} KiB | $conc | {w:.1f} | {hw:.1f} | {ratios(0, 1)} | {r:.1f} | {hr:.1f} | {ratios(2, 3)} |')"
  done
done
