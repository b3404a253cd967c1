#!/usr/bin/env bash
# Remote access side by side (issue 44 item 7): FDB5 5.25's fdb-server (its documented
# catalogue + store setup, two servers) against `fieldstore serve`, and against fieldstore's
# local API, on loopback, with one C harness (../shared/peer/fdb5_keybench.c) linked against
# each C API unchanged; every server on ROOT's file system:
#   scripts/remote-bench.sh ROOT [REPS]
# and, as the floor of the 1 MiB rows, one loopback connection carrying 1,000 MiB
# (scripts/loopback-floor.py).
# Workloads: 10,000 x 4 KiB and 1,000 x 1 MiB fields, one flush per step of 100; archive+flush,
# list and retrieve timed by the harness. Prints each run, then the best of REPS per phase and
# the ratios (FDB5 remote / fieldstore remote; fieldstore remote bandwidth / local).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=${1:?usage: remote-bench.sh ROOT [REPS]} reps=${2:-3}
cd "$here"
bash scripts/fdb5-install.sh >/dev/null
venv=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
sp=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
fdb_libs=$sp/fdb5lib/lib64:$sp/metkitlib/lib64:$sp/eckitlib/lib64:$sp/eccodeslib/lib64
cargo build -q --release -p fieldstore-c -p fieldstore-cli
work=$(mktemp -d)
mkdir -p "$root"
data=$(mktemp -d "$root/remote-bench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work" "$data"
}
trap cleanup EXIT

# The harness, linked against FDB5 and against fieldstore.
ln -s "$here/target/release/libfieldstore_c.so" "$work/libfieldstore_c.so.0"
gcc -O2 -w -o "$work/kb-fieldstore" ../shared/peer/fdb5_keybench.c -I"$here/include" -L"$here/target/release" -lfieldstore_c -Wl,-rpath,"$work"
gcc -O2 -w -o "$work/kb-fdb5" ../shared/peer/fdb5_keybench.c -I"$sp/fdb5lib/include" -L"$sp/fdb5lib/lib64" -lfdb5 \
  -Wl,-rpath-link,"$fdb_libs" -Wl,-rpath,"$fdb_libs"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# FDB5: a catalogue server and a store server (FDB5's tests/fdb/remote), a remote client config.
catalogue_port=$(free_port) store_port=$(free_port)
cat > "$work/schema" <<'SCHEMA'
param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;
[ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]
SCHEMA
mkdir -p "$data/fdb5-catalogue" "$data/fdb5-store"
cat > "$work/catalogue.yaml" <<CFG
type: catalogue
serverPort: $catalogue_port
serverThreaded: true
stores:
- default: "localhost:$store_port"
schema: $work/schema
spaces:
- handler: Default
  roots:
  - path: $data/fdb5-catalogue
CFG
cat > "$work/store.yaml" <<CFG
type: store
serverPort: $store_port
serverThreaded: true
spaces:
- handler: Default
  roots:
  - path: $data/fdb5-store
CFG
printf 'type: remote\nstore: remote\nengine: remote\nhost: localhost\nport: %s\n' "$catalogue_port" > "$work/fdb5-client.yaml"
for server in catalogue store; do
  LD_LIBRARY_PATH=$fdb_libs FDB5_CONFIG_FILE=$work/$server.yaml timeout 3600 "$sp/fdb5lib/bin/fdb-server" >"$work/fdb5-$server.log" 2>&1 &
  pids+=($!)
done

# fieldstore serve over a POSIX store, plain HTTP on loopback (as FDB5's: no TLS).
printf 'catalogue: {type: posix, root: %s, create: true}\nstore: {type: posix, root: %s, create: true}\n' "$data/served" "$data/served" > "$work/served.yaml"
coproc server { exec timeout 3600 "$here/target/release/fieldstore" --config "$work/served.yaml" serve --listen 127.0.0.1:0 2>"$work/serve.log"; }
pids+=("$server_PID")
read -r _ _ address <&"${server[0]}"
printf 'catalogue: {type: remote, endpoint: "http://%s"}\nstore: {type: remote, endpoint: "http://%s"}\n' "$address" "$address" > "$work/remote.yaml"
sleep 1

results=$work/results
: > "$results"
run() { # SYSTEM SIZE_NAME ARGS...: the harness's three lines, labelled
  local system=$1 size=$2; shift 2
  local member=$((RANDOM % 100000 + 1))
  case $system in
    fdb5-remote) out=$(LD_LIBRARY_PATH=$fdb_libs FDB5_CONFIG_FILE=$work/fdb5-client.yaml FDB_HOME=$work "$work/kb-fdb5" "$@" "$member") ;;
    fieldstore-remote) out=$(FIELDSTORE_CONFIG=$work/remote.yaml "$work/kb-fieldstore" "$@" "$member") ;;
    fieldstore-local) out=$(FIELDSTORE_ROOT=$data/local "$work/kb-fieldstore" "$@" "$member") ;;
  esac
  echo "$out" | sed "s/^/$system $size /" | tee -a "$results"
}
for rep in $(seq "$reps"); do
  for system in fdb5-remote fieldstore-remote fieldstore-local; do
    run "$system" 4KiB 100 10 10 4096
    run "$system" 1MiB 10 10 10 1048576
  done
done
echo
echo "best of $reps (seconds), on $(df -T "$root" | awk 'NR == 2 { print $2 }') at $root:"
awk '
  { key = $1 " " $2 " " $3; t = $6 + 0; if (!(key in best) || t < best[key]) best[key] = t; bytes[$2 " " $3] = $5 }
  END {
    printf "%-6s %-9s %12s %12s %12s %10s %14s\n", "size", "phase", "FDB5 remote", "fs remote", "fs local", "vs FDB5", "remote/local"
    n = split("4KiB 1MiB", sizes, " "); m = split("archive list retrieve", phases, " ")
    for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) {
      s = sizes[i]; p = phases[j]
      f = best["fdb5-remote " s " " p]; r = best["fieldstore-remote " s " " p]; l = best["fieldstore-local " s " " p]
      printf "%-6s %-9s %12.4f %12.4f %12.4f %9.1fx %13.0f%%\n", s, p, f, r, l, f / r, 100 * l / r
    }
  }' "$results"

# The floor of the 1 MiB rows: one loopback connection carrying as many bytes (docs/performance.md).
head -c $((1000 * 1048576)) /dev/zero > "$data/floor.bin"
python3 "$here/scripts/loopback-floor.py" "$data/floor.bin" "$reps"
rm -f "$data/floor.bin"
