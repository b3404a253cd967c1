#!/usr/bin/env bash
# The web catalogue's speed (docs/performance.md, "Web catalogue"), side by side with the
# commands that do the same work without the page: the first page of a store of FIELDS
# fields (4 dates of ensemble pressure-level fields; the store is made once in DIR) against
# `fieldstore list --all` of the same store, and a map of a 1 MiB field (reduced Gaussian
# N320, 542,080 points at 16 bits) against retrieving it and against ecCodes' grib_get_data
# of it. Release build; hyperfine times each command.
#
#   scripts/web-bench.sh DIR [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "${1:?usage: web-bench.sh DIR [RUNS]}")
runs=${2:-10}
source "$here/scripts/packages.sh"
ensure_packages hyperfine curl libeccodes-tools
cargo build -q --release -p fieldstore-cli --manifest-path "$here/Cargo.toml"
bin="$here/target/release/fieldstore"
export FIELDSTORE_ROOT="$dir/root"
unset FIELDSTORE_CONFIG
mkdir -p "$dir"
if [[ ! -f $dir/archived ]]; then
  # 250,000 fields a date: 50 members, 50 steps, 10 parameters, 10 levels (two dates at once).
  for date in 20240101 20240102 20240103 20240104; do
    "$bin" sample -q --date $date --stream enfo --type pf --numbers 1/to/50 --steps 0/to/49/by/1 \
      --params 130/131/132/133/135/138/155/157/60/129 --levels 1000/925/850/700/500/400/300/250/200/100 -o "$dir/$date.grib" &
    [[ $date == 20240102 ]] && wait
  done
  wait
  "$bin" sample -q --template reduced_gg_pl_320_grib2 --levtype sfc --params 2t --fill-bits 16 --date 20240105 -o "$dir/n320.grib"
  "$bin" archive -q "$dir"/2024010?.grib "$dir/n320.grib"
  rm "$dir"/2024010?.grib
  touch "$dir/archived"
fi
fields=$("$bin" stats --all --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["fields"])')
timeout 3600 "$bin" serve --listen 127.0.0.1:0 > "$dir/listening.txt" 2> "$dir/serve.log" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 200); do [[ -s $dir/listening.txt ]] && break; sleep 0.05; done
base="http://$(cut -d' ' -f3 "$dir/listening.txt")"
one="class=od,expver=0001,stream=oper,date=20240105,time=1200,domain=g,type=fc,levtype=sfc,step=0,param=167"
"$bin" retrieve -q "$one" -o "$dir/one.grib"
echo "web-bench: $fields fields; the map's field $(stat -c %s "$dir/one.grib") bytes" >&2
hyperfine -N --warmup 1 --runs "$runs" --export-markdown "$dir/web-bench.md" \
  -n "first page (browse, $fields fields)" "curl -fsS -o /dev/null $base/v1/web/browse" \
  -n "fieldstore list --all" "bash -c '$bin list --all --porcelain > /dev/null'" \
  -n "map of a 1 MiB field" "curl -fsS -o /dev/null $base/v1/web/map?request=$one" \
  -n "field facts (keys, statistics)" "curl -fsS -o /dev/null $base/v1/web/field?request=$one" \
  -n "retrieve the field" "curl -fsS -o /dev/null $base/v1/retrieve?request=$one" \
  -n "grib_get_data of the field" "bash -c 'grib_get_data $dir/one.grib > /dev/null'"
cat "$dir/web-bench.md"
