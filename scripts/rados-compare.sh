#!/usr/bin/env bash
# fieldstore on RADOS side by side with `rados bench` on the same cluster, pool, object size
# and concurrency, then list() against one omap get per entry; prints Markdown tables.
#   CEPH_CONF=/path/ceph.conf scripts/rados-compare.sh [POOL [INDEX_POOL]] [SECONDS]
# POOL holds the data (and `rados bench`'s objects); INDEX_POOL the catalogue (default POOL).
# Each fieldstore run uses a namespace prefix of its own and is wiped afterwards. memstore
# OSDs may keep the memory of deleted objects: give each pool configuration a fresh test
# cluster (scripts/ceph-cluster.sh stop/start) with room for a few GiB.
set -euo pipefail
pool=${1:-fieldstore} index_pool=${2:-${1:-fieldstore}} seconds=${3:-5}
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

echo "| object size | concurrency | rados bench write MiB/s | hammer write MiB/s | % | rados bench read MiB/s | hammer read MiB/s | % |"
echo "|---|---|---|---|---|---|---|---|"
for size in 1048576 65536; do
  for conc in 1 4; do
    run=cmp-$$-$size-$conc
    write=$(rados_bench "$seconds" write -b "$size" -t "$conc" --no-cleanup --run-name "$run")
    read=$(rados_bench "$seconds" seq -t "$conc" --run-name "$run")
    rados -p "$pool" cleanup --run-name "$run" >/dev/null 2>&1
    # About as long as rados bench runs: 2,000 fields of 1 MiB or 20,000 of 64 KiB in all,
    # 100 fields per flush (hammer's steps).
    if ((size >= 1048576)); then steps=$((20 / conc)); else steps=$((200 / conc)); fi
    printf 'catalogue: {type: rados, pool: %s, namespace_prefix: %s-}\nstore: {type: rados, pool: %s, namespace_prefix: %s-}\n' \
      "$index_pool" "$run" "$pool" "$run" >"$scratch/config.yaml"
    shape=(--procs "$conc" --nsteps "$steps" --nlevels 10 --nparams 10 --field-size "$size")
    hw=$(hammer_mibs "${shape[@]}")
    hr=$(hammer_mibs "${shape[@]}" --read)
    "$fs" --config "$scratch/config.yaml" wipe class=od,expver=0001 --doit >/dev/null
    python3 -c "
w, hw, r, hr = $write, $hw, $read, $hr
print(f'| {$size // 1024} KiB | $conc | {w:.1f} | {hw:.1f} | {100 * hw / w:.0f}% | {r:.1f} | {hr:.1f} | {100 * hr / r:.0f}% |')"
  done
done
echo
echo "list of 10,000 fields (100 flushes of 100): bulk omap reads vs one omap get per entry"
(cd "$here" && cargo run --release -q --example rados_list_vs_gets -- "$index_pool" 100)
