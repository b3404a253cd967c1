# Shared by the scripts that measure fieldstore against `rados bench` (sourced, not run):
# the release binary, a scratch directory removed on exit, and the two measurements.
# Expects $pool; sets $here, $fs and $scratch.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
# Summed MiB/s of $2 `rados bench` processes run at once, the c-th with run name $1-c; the
# other arguments go to each. Each process's bandwidth is its bytes over its own time, so the
# sum is at least the bandwidth of all of them together: a comparison with it favours rados bench.
rados_bench_clients() {
  local stem=$1 count=$2 c pids=()
  shift 2
  rm -f "$scratch"/bw.*
  for ((c = 1; c <= count; c++)); do
    rados_bench "$@" --run-name "$stem-$c" >"$scratch/bw.$c" &
    pids+=($!)
  done
  for c in "${pids[@]}"; do wait "$c" || exit 1; done
  cat "$scratch"/bw.* | awk '{s += $1} END {printf "%.1f\n", s}'
}
# MiB/s of hammer's aggregate phase (the last JSON line), with $scratch/config.yaml.
hammer_mibs() {
  "$fs" --config "$scratch/config.yaml" bench hammer "$@" --json |
    tail -1 | python3 -c 'import json,sys; p=json.load(sys.stdin); print(round(p["bytes"]/p["seconds"]/2**20, 1))'
}
