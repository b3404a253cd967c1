#!/usr/bin/env bash
# fieldstore on S3 against the same client library's raw loop (issue 22, docs/performance.md
# "S3"), side by side in one run, on the S3 server the environment names
# (FIELDSTORE_TEST_S3_ENDPOINT, _ACCESS_KEY, _SECRET_KEY: `scripts/ceph-cluster.sh start DIR
# --rgw`, then `set -a; source DIR/env`), in its bucket `fieldstore-test`:
#   scripts/s3-bench.sh [REPS] [LIST_FIELDS] [POINT_FIELDS]
# 1. bench hammer (S3 catalogue + S3 store, one process, writes_in_flight = reads_in_flight = W)
#    against bench s3-raw (PUT then GET loop, W in flight), for 64 KiB and 1 MiB and W = 1, 4,
#    16, alternating, medians of REPS (default 3);
# 2. list of LIST_FIELDS fields (default 10000) through the S3 catalogue against a LIST of
#    the data set's field objects and a HEAD of each (16 in flight);
# 3. a new reader's first request (a point query, and a request for one field of every step)
#    on a data set of POINT_FIELDS fields (default 100000) written in flushes of 1,000 fields,
#    before and after `fieldstore compact`.
# What each run writes is wiped after it (the test cluster's OSDs keep objects in memory).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3} list_fields=${2:-10000} point_fields=${3:-100000}
: "${FIELDSTORE_TEST_S3_ENDPOINT:?start an S3 server first, as the header of this script says}"
cd "$here"
cargo build -q --release -p fieldstore-cli
F=$here/target/release/fieldstore
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run=$(date +%s)-$$

# A config of the S3 catalogue and store under PREFIX, W requests in flight.
config() {
  local prefix=$1 w=$2 file=$work/$1.yaml
  local s3="endpoint: '$FIELDSTORE_TEST_S3_ENDPOINT', bucket: fieldstore-test, prefix: 'bench-$run/$prefix/', access_key_id: '$FIELDSTORE_TEST_S3_ACCESS_KEY', secret_access_key: '$FIELDSTORE_TEST_S3_SECRET_KEY'"
  printf 'catalogue: {type: s3, %s}\nstore: {type: s3, %s, writes_in_flight: %d, reads_in_flight: %d}\n' "$s3" "$s3" "$w" "$w" >"$file"
  echo "$file"
}

seconds() { sed -n "s/^$1: .* in \([0-9.]*\) s.*/\1/p"; }
dataset="class=od,expver=0001,stream=enfo,date=20231201,time=1200,domain=g"
# Removes what a run wrote (memstore OSDs keep it in memory).
wipe() { "$F" --config "$1" wipe -q "$dataset" --doit >/dev/null; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| size | in flight | raw PUT s | hammer write s | write % of raw | raw GET s | hammer read s | read % of raw |"
echo "|---|---|---|---|---|---|---|---|"
for size in 65536 1048576; do
  if ((size == 65536)); then shape=(--nsteps 4 --nlevels 10 --nparams 10) objects=400; else shape=(--nsteps 4 --nlevels 5 --nparams 10) objects=200; fi
  for w in 1 4 16; do
    : >"$work/put" >"$work/get" >"$work/write" >"$work/read"
    for rep in $(seq "$reps"); do
      c=$(config "h-$size-$w-$rep" "$w")
      "$F" --config "$c" bench s3-raw --objects "$objects" --size "$size" --in-flight "$w" >"$work/raw"
      seconds put <"$work/raw" >>"$work/put"
      seconds get <"$work/raw" >>"$work/get"
      "$F" --config "$c" bench hammer "${shape[@]}" --field-size "$size" | seconds write >>"$work/write"
      "$F" --config "$c" bench hammer "${shape[@]}" --field-size "$size" --read | seconds read >>"$work/read"
      wipe "$c"
    done
    put=$(median <"$work/put") get=$(median <"$work/get") write=$(median <"$work/write") read=$(median <"$work/read")
    awk -v s="$size" -v w="$w" -v p="$put" -v wr="$write" -v g="$get" -v r="$read" \
      'BEGIN { printf "| %s | %d | %.3f | %.3f | %.0f%% | %.3f | %.3f | %.0f%% |\n", s, w, p, wr, 100 * p / wr, g, r, 100 * g / r }'
  done
done

echo
# Fields of 1 KiB in steps of 1,000 (100 levels x 10 params), written 16 at a time.
write_fields() {
  "$F" --config "$1" bench hammer --nsteps "$(($2 / 1000))" --levels "$(seq -s / 1 100)" --nparams 10 --field-size 1024 "${@:3}"
}
c=$(config list 16)
write_fields "$c" "$list_fields" >/dev/null
: >"$work/list" >"$work/heads"
for rep in $(seq "$reps"); do
  write_fields "$c" "$list_fields" --list | seconds list >>"$work/list"
  "$F" --config "$c" bench s3-raw --list "$dataset" --in-flight 16 | sed -n 's/.* in \([0-9.]*\) s.*/\1/p' >>"$work/heads"
done
wipe "$c"
list=$(median <"$work/list") heads=$(median <"$work/heads")
awk -v n="$list_fields" -v l="$list" -v h="$heads" \
  'BEGIN { printf "list of %d fields: S3 catalogue %.4f s, LIST + HEAD of each object (16 in flight) %.4f s: %.1fx\n", n, l, h, h / l }'

# A new reader's first request (a point query: list, then retrieve, each on a new handle), and
# one across every step (a field of each flush's index object), before and after compaction.
c=$(config point 16)
write_fields "$c" "$point_fields" >/dev/null
point="$dataset,type=pf,levtype=pl,number=1,step=0,levelist=1,param=1"
steps="$dataset,type=pf,levtype=pl,number=1,levelist=1,param=1"
for when in before after; do
  if [[ $when == after ]]; then
    echo "compact: $("$F" --config "$c" compact "$dataset")"
  fi
  echo "data set of $point_fields fields, $when compaction, point query: $("$F" --config "$c" bench point "$point" --reps 5)"
  echo "data set of $point_fields fields, $when compaction, every step: $("$F" --config "$c" bench point "$steps" --reps 5)"
done
wipe "$c"
