#!/usr/bin/env bash
# The published studies' findings, reproduced on this machine's backends (docs/study.md):
# sweeps of ior (on POSIX also through HDF5), field-io and hammer on POSIX, the local Ceph
# cluster (its replicated, 2-way replicated and erasure-coded pools), the S3 servers (Ceph's
# RADOS gateway, SeaweedFS) and the emulated DAOS, then one report comparing them all.
#
#   scripts/study.sh OUT [BACKEND ...]      BACKEND: posix ceph ceph-pools ceph-scaling s3 s3-seaweed daos
#                                           (or reports: no sweep, only the reports of what OUT holds)
#
# Needs the services of scripts/test-services.sh in the environment (start_test_services, or
# scripts/test.sh's), and a built binary ($FIELDSTORE_BIN, default target/release/fieldstore).
# COUNT objects or fields per process at 1 KiB and 64 KiB / 1 MiB (default "512,64"; small
# sizes need more to run long enough to measure) and REPS repetitions (default 3) size the
# runs. Writes OUT/BACKEND-BENCHMARK/ (sweep directories), then a report per finding of
# docs/study.md over the sweeps that answer it: OUT/N-FINDING/report.html, its figures as
# PNG and its table. FIELDSTORE_TEST_RADOS_POOL names the Ceph pool of finding 3.
set -euo pipefail
source "$(dirname "$0")/test-services.sh"   # free_port

out=${1:?usage: scripts/study.sh OUT [posix ceph ceph-pools ceph-scaling s3 s3-seaweed daos]}
shift
backends=("$@")
[[ ${#backends[@]} -gt 0 ]] || backends=(posix ceph ceph-pools ceph-scaling s3 s3-seaweed daos)
bin=${FIELDSTORE_BIN:-target/release/fieldstore}
count=${COUNT:-512,64}
reps=${REPS:-3}
mkdir -p "$out/configs"
out=$(cd "$out" && pwd)
run_id=$(date +%s)

# One sweep into OUT/NAME: the grid's options follow.
sweep() {
  local name=$1
  shift
  echo "study: $name" >&2
  # one_size: the count of a sweep of the large size only.
  "$bin" bench sweep --count "${one_size:-$count}" --reps "$reps" --label "$name" --out "$out/$name" "$@" > /dev/null
}

# ior, field-io (modes, patterns, index sharing) and hammer (patterns) on one backend: a pool
# for the object API and a config for hammer.
three_benchmarks() {
  local backend=$1 pool=$2 config=$3
  sweep "$backend-ior" --benchmark ior --procs 2,4 --sizes 1024,1048576 --pool "$pool"
  sweep "$backend-field-io" --benchmark field-io --procs 2,4 --sizes 1024,1048576 --modes full,no-containers,no-index \
    --patterns A,B --index per-process,shared --pool "$pool"
  "$bin" --config "$config" bench sweep --benchmark hammer --procs 2,4 --sizes 1024,1048576 --patterns A,B \
    --count "$count" --reps "$reps" --label "$backend-hammer" --out "$out/$backend-hammer" > /dev/null
}

# A config whose catalogue and store are both SECTION (YAML flow mapping).
config() {
  printf 'catalogue: %s\nstore: %s\n' "$2" "$2" > "$out/configs/$1.yaml"
  echo "$out/configs/$1.yaml"
}

s3_environment() {
  export AWS_ENDPOINT_URL=$1 AWS_ACCESS_KEY_ID=$2 AWS_SECRET_ACCESS_KEY=$3 AWS_REGION=us-east-1
}

for backend in "${backends[@]}"; do
  case $backend in
    posix)
      mkdir -p "$out/pool" "$out/store"
      three_benchmarks posix "$out/pool" "$(config posix "{type: posix, root: $out/store}")"
      # IOR's HDF5 runs (a file per process through HDF5), beside ior on the same files' system.
      sweep posix-ior-hdf5 --benchmark ior --api hdf5 --procs 2,4 --sizes 1024,1048576 --pool "$out/pool"
      ;;
    ceph)
      pool=${FIELDSTORE_TEST_RADOS_POOL:?the Ceph cluster of scripts/test-services.sh}
      three_benchmarks ceph "rados:$pool/study$run_id" \
        "$(config ceph "{type: rados, pool: $pool, ceph_conf: $CEPH_CONF, namespace_prefix: study$run_id-}")"
      ;;
    ceph-pools)
      # One object per field (field-io no-index) against one object per process (ior), on
      # the single-copy pool, 2-way replication and erasure coding 2+1.
      for pool in "$FIELDSTORE_TEST_RADOS_POOL" "$FIELDSTORE_TEST_RADOS_POOL_REP2" "$FIELDSTORE_TEST_RADOS_POOL_EC"; do
        sweep "ceph-pool-$pool-ior" --benchmark ior --procs 2,4 --sizes 65536,1048576 --pool "rados:$pool/pools$run_id"
        sweep "ceph-pool-$pool-no-index" --benchmark field-io --modes no-index --procs 2,4 --sizes 65536,1048576 \
          --pool "rados:$pool/pools$run_id"
      done
      ;;
    ceph-scaling)
      # Clusters of 1, 2 and 3 OSDs (here all on this host's 2 cores), each its own sweep
      # with --servers, for the scalability figure.
      for osds in 1 2 3; do
        cluster=$out/cluster-$osds
        bash scripts/ceph-cluster.sh start "$cluster" --osds "$osds" --port "$(free_port)" > /dev/null
        for benchmark in ior field-io; do
          CEPH_CONF=$cluster/ceph.conf sweep "ceph-$osds-osd-$benchmark" --benchmark "$benchmark" --modes no-index --procs 2,4 \
            --sizes 65536,1048576 --pool "rados:fieldstore/scale" --servers "$osds"
        done
        bash scripts/ceph-cluster.sh stop "$cluster" > /dev/null
      done
      ;;
    s3 | s3-seaweed)
      if [[ $backend == s3 ]]; then
        endpoint=$FIELDSTORE_TEST_S3_ENDPOINT key=$FIELDSTORE_TEST_S3_ACCESS_KEY secret=$FIELDSTORE_TEST_S3_SECRET_KEY
      else
        endpoint=$FIELDSTORE_TEST_S3_SEAWEED_ENDPOINT key=$FIELDSTORE_TEST_S3_SEAWEED_ACCESS_KEY secret=$FIELDSTORE_TEST_S3_SEAWEED_SECRET_KEY
      fi
      s3_environment "$endpoint" "$key" "$secret"
      three_benchmarks "$backend" "s3:fieldstore-test/study$run_id" \
        "$(config "$backend" "{type: s3, endpoint: \"$endpoint\", region: us-east-1, bucket: fieldstore-test, prefix: study$run_id-$backend/}")"
      ;;
    daos)
      # The project's libdaos emulation (DAOS cannot be installed here): the benchmarks run
      # on the DAOS API, their figures are not DAOS's.
      export FIELDSTORE_DAOS_LIBRARY=${FIELDSTORE_TEST_DAOS_LIBRARY:?the libdaos emulation of scripts/test-services.sh}
      mkdir -p "$DAOS_EMULATION_ROOT/study"
      three_benchmarks daos "daos:study/ior$run_id" "$(config daos "{type: daos, pool: study, root_container: study$run_id}")"
      one_size=${count##*,} sweep daos-classes --benchmark field-io --modes no-index --procs 2 --sizes 1048576 --pool "daos:study/cls$run_id" \
        --classes OC_S1,OC_SX,OC_RP_2G1,OC_EC_2P1G1
      ;;
    reports) ;;
    *) echo "study: unknown backend $backend (posix ceph ceph-pools ceph-scaling s3 s3-seaweed daos)" >&2; exit 2 ;;
  esac
done

# The sweep directories of OUT among NAME... (missing ones are left out).
sweeps_named() {
  local name
  for name in "$@"; do
    [[ -f $out/$name/sweep.json ]] && echo "$out/$name"
  done
  return 0
}

# The backends' own sweeps of BENCHMARK (not the pool or scaling comparisons).
of_backends() {
  local backend
  for backend in posix ceph s3 s3-seaweed daos; do
    echo "$backend-$1"
  done
}

# One report per finding (docs/study.md), over the sweeps that answer it: FINDING TITLE
# SELECTION NAME... (sweeps not run are left out; a finding with none is skipped).
report() {
  local finding=$1 title=$2 selection=$3
  shift 3
  local dirs=()
  mapfile -t dirs < <(sweeps_named "$@")
  [[ ${#dirs[@]} -gt 0 ]] || return 0
  echo "study: report $finding" >&2
  mkdir -p "$out/$finding"
  "$bin" --quiet bench analyze "${dirs[@]}" --select "$selection" --title "$title" --html "$out/$finding/report.html" \
    --png "$out/$finding/figures" > "$out/$finding/table.md"
}

rados_pool=${FIELDSTORE_TEST_RADOS_POOL:-fieldstore}
report 1-index-cost "Field I/O's index cost: full, no-containers, no-index" "pattern=A,index=per-process" $(of_backends field-io)
report 2-shared-index "One forecast index per process or one shared" "pattern=A,mode=full" $(of_backends field-io)
report 3-object-per-field "RADOS: one object per field or one per process" "pattern=A" "ceph-pool-$rados_pool-ior" "ceph-pool-$rados_pool-no-index"
report 4-hammer-contention "fdb-hammer without and with write+read contention" "" $(of_backends hammer)
for backend in posix ceph s3 s3-seaweed daos; do
  report "5-what-indexing-costs-$backend" "IOR, Field I/O and hammer on $backend" "pattern=A,mode=full/-,index=per-process/-" \
    "$backend-ior" "$backend-ior-hdf5" "$backend-field-io" "$backend-hammer"
done
report 6-small-fields "Small (1 KiB) and 1 MiB fields" "pattern=A" $(of_backends hammer)
report 7-replication "Replication and erasure coding" "" $(for pool in "$rados_pool" "${FIELDSTORE_TEST_RADOS_POOL_REP2:-}" "${FIELDSTORE_TEST_RADOS_POOL_EC:-}"; do echo "ceph-pool-$pool-ior ceph-pool-$pool-no-index"; done)
report 8-object-classes "DAOS object classes (emulated: function only)" "" daos-classes
report 9-scalability "Scalability against Ceph OSDs (one host)" "" ceph-{1,2,3}-osd-{ior,field-io}
echo "study: reports under $out/*/report.html" >&2
