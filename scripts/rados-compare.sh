#!/usr/bin/env bash
# fieldstore on RADOS side by side with `rados bench` on the same cluster, pool, object size
# and concurrency, then list() against one omap get per entry; prints Markdown tables.
#   CEPH_CONF=/path/ceph.conf [REPS=N] [SIZES="1048576 65536"] [LAYOUTS="1x1 4x1 1x4"] \
#     scripts/rados-compare.sh [POOL [INDEX_POOL]] [SECONDS]
# LAYOUTS are PROCESSESxOPERATIONS_IN_FLIGHT_EACH, for both tools: "4x1" is hammer --procs 4
# with one write and one read in flight each against four `rados bench -t 1` processes at once
# (each client pays for its own messenger threads; one `rados bench -t 4` is the "1x4" row's
# reference).
# POOL holds the data (and `rados bench`'s objects); INDEX_POOL the catalogue (default POOL).
# With REPS=N (default 1) each pair of runs is repeated N times, rados bench and hammer back
# to back (alternating which goes first) so that both see the same drift of a shared host;
# the table gives the medians, their ratio, and the range of the N per-repetition ratios.
# Each fieldstore run uses a namespace prefix of its own and is wiped afterwards; each run
# waits until the OSDs have room again. Give each pool configuration a fresh test cluster
# (scripts/ceph-cluster.sh stop/start) with room for a few GiB (--osd-bytes).
set -euo pipefail
pool=${1:-fieldstore} index_pool=${2:-${1:-fieldstore}} seconds=${3:-5} reps=${REPS:-1}
# shellcheck source=scripts/rados-bench-common.sh
. "$(dirname "$0")/rados-bench-common.sh"

# memstore OSDs give back the memory of deleted objects some seconds later, and the monitor
# learns of it later still: wait (bounded) until every OSD is under a quarter full and the
# cluster is healthy, so that no run meets a pool that is (still) full.
# An OSD over 100% used has a usage counter that wrapped below zero (memstore miscounts some
# deletions) and stays "full" until restarted: say so rather than wait.
wait_for_room() {
  local deadline=$((SECONDS + 120)) most_used
  until most_used=$(ceph osd df -f json 2>/dev/null | python3 -c 'import json,sys; print(int(max(n["utilization"] for n in json.load(sys.stdin)["nodes"])))' 2>/dev/null) &&
    ((most_used < 25)) && [[ $(ceph health 2>/dev/null) == HEALTH_OK* ]]; do
    if ((${most_used:-0} > 100)); then
      echo "an OSD reports ${most_used}% used: memstore's usage counter wrapped below zero; restart the test cluster" >&2
      exit 1
    fi
    ((SECONDS < deadline)) || { echo "the cluster stays full or unhealthy after cleanup: ceph osd df; ceph health detail" >&2; exit 1; }
    sleep 1
  done
}
# Each run starts on idle OSDs, so that neither tool meets work the other left behind: on the
# local test cluster, wait (bounded) until the ceph-osd processes together use under a tenth
# of a core over a second.
wait_for_quiet_osds() {
  local deadline=$((SECONDS + 60)) before after
  # CPU clock ticks (user + system) of every ceph-osd process so far.
  osd_ticks() {
    local pid t=0 f
    for pid in $(pgrep -x ceph-osd); do
      read -r -a f <"/proc/$pid/stat" && t=$((t + f[13] + f[14]))
    done
    echo "$t"
  }
  pgrep -x ceph-osd >/dev/null || return 0
  while ((SECONDS < deadline)); do
    before=$(osd_ticks); sleep 1; after=$(osd_ticks)
    (((after - before) * 10 < $(getconf CLK_TCK))) && return 0
  done
  echo "the OSDs stay busy after cleanup; measuring anyway" >&2
}
# rados bench's write and sequential read of one repetition in hammer's layout: $procs
# processes at once, each with $in_flight operations in flight (`-t`), bandwidths summed;
# their objects removed afterwards.
bench_rados() {
  local c
  wait_for_room
  wait_for_quiet_osds
  write=$(rados_bench_clients "$run" "$procs" "$seconds" write -b "$size" -t "$in_flight" --no-cleanup)
  read=$(rados_bench_clients "$run" "$procs" "$seconds" seq -t "$in_flight")
  for ((c = 1; c <= procs; c++)); do rados -p "$pool" cleanup --run-name "$run-$c" >/dev/null 2>&1; done
}
# hammer's write and read of the same shape ($procs processes, each with $in_flight writes and
# as many reads in flight) in a namespace prefix of its own, then wiped. memstore OSDs now
# and then refuse writes as full for a while after mass deletions although they have room:
# a failed run is wiped and retried once, 15 s later, and says so.
bench_hammer() {
  local attempt
  printf 'catalogue: {type: rados, pool: %s, namespace_prefix: %s-}\nstore: {type: rados, pool: %s, namespace_prefix: %s-, writes_in_flight: %d, reads_in_flight: %d}\n' \
    "$index_pool" "$run" "$pool" "$run" "$in_flight" "$in_flight" >"$scratch/config.yaml"
  for attempt in 1 2; do
    wait_for_room
    wait_for_quiet_osds
    if hw=$(hammer_mibs "${shape[@]}") && hr=$(hammer_mibs "${shape[@]}" --read); then
      "$fs" --config "$scratch/config.yaml" wipe class=od,expver=0001,stream=enfo,date=20231201,time=1200 --doit >/dev/null
      return
    fi
    "$fs" --config "$scratch/config.yaml" wipe class=od,expver=0001,stream=enfo,date=20231201,time=1200 --doit >/dev/null 2>&1 || true
    ((attempt == 2)) || { echo "hammer run $run failed: retrying once in 15 s" >&2; sleep 15; }
  done
  echo "hammer run $run failed twice" >&2
  exit 1
}

# The list comparison runs first: memstore OSDs fill up with the bandwidth runs' objects.
echo "list of 10,000 fields (100 flushes of 100): bulk omap reads vs one omap get per entry"
(cd "$here" && cargo run --release -q --example rados_list_vs_gets -- "$index_pool" 100)
echo
echo "| object size | in flight (processes x operations each, both tools) | rados bench write MiB/s | hammer write MiB/s | % (range) | rados bench read MiB/s | hammer read MiB/s | % (range) |"
echo "|---|---|---|---|---|---|---|---|"
for size in ${SIZES:-1048576 65536}; do
  # PROCESSESxIN_FLIGHT: one operation in flight; four processes with one each; one process
  # keeping four writes, then four reads, in flight (hammer: store.writes_in_flight,
  # store.reads_in_flight; rados bench: -t).
  for layout in ${LAYOUTS:-1x1 4x1 1x4}; do
    IFS=x read -r procs in_flight <<<"$layout"
    conc=$((procs * in_flight))
    # About as long as rados bench runs: 2,000 fields of 1 MiB or 20,000 of 64 KiB in all,
    # 100 fields per flush (hammer's steps).
    if ((size >= 1048576)); then steps=$((20 / procs)); else steps=$((200 / procs)); fi
    shape=(--procs "$procs" --nsteps "$steps" --nlevels 10 --nparams 10 --field-size "$size")
    results=()
    for ((rep = 1; rep <= reps; rep++)); do
      run=cmp-$$-$size-$procs-$in_flight-$rep
      # Odd repetitions run rados bench first, even ones hammer first: neither always meets
      # the cluster right after the other's deletions.
      if ((rep % 2)); then bench_rados; bench_hammer; else bench_hammer; bench_rados; fi
      results+=("$write,$hw,$read,$hr")
    done
    python3 -c "
from statistics import median
runs = [tuple(map(float, r.split(','))) for r in '${results[*]}'.split()]
def column(i): return median(r[i] for r in runs)
def ratios(a, b):
    if column(a) == 0: return 'n/a'
    per = [100 * r[b] / r[a] for r in runs]
    spread = f' ({min(per):.0f}-{max(per):.0f}%)' if len(per) > 1 else ''
    return f'{100 * column(b) / column(a):.0f}%{spread}'
def mibs(i): return f'{column(i):.1f}' if column(i) else '-'
size = f'{$size >> 20} MiB' if $size >= 1 << 20 else f'{$size >> 10} KiB'
print(f'| {size} | $conc ($procs x $in_flight) | {mibs(0)} | {mibs(1)} | {ratios(0, 1)} | {mibs(2)} | {mibs(3)} | {ratios(2, 3)} |')"
  done
done
