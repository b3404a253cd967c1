#!/usr/bin/env bash
# A real single-host Ceph cluster on loopback for fieldstore's tests and benchmarks: one
# monitor, one manager, N memstore OSDs (default 3, so replicated and erasure-coded pools can
# be tested) and optionally a RADOS gateway (S3) on 127.0.0.1. Everything lives under DIR.
#
#   scripts/ceph-cluster.sh start DIR [--osds N] [--rgw] [--port P] [--rgw-port R] [--osd-bytes B] [--objectstore memstore|bluestore]
#                                                                     installs Ceph if missing, starts, waits until healthy
#   scripts/ceph-cluster.sh stop DIR                                  stops every daemon and removes DIR
#   scripts/ceph-cluster.sh env DIR                                   prints the variables tests read (also in DIR/env)
#
# After `start`, DIR/ceph.conf is a client config for the cluster (`ceph -c DIR/ceph.conf -s`,
# `rados -c DIR/ceph.conf lspools`), and these pools exist:
#   fieldstore      replicated, size 1 (the default test pool)
#   fieldstore-rep2 replicated, size 2
#   fieldstore-ec21 erasure-coded 2+1 (data only: omaps need a replicated pool)
#   fieldstore-quota replicated, size 1, at most 4 MiB (a pool that fills up)
# Memory: memstore (the default) keeps objects in RAM, at most --osd-bytes per OSD (default
# 2 GiB). --objectstore bluestore puts each OSD on a sparse file of --osd-bytes under DIR
# instead (1 GiB of cache each): slower, but its usage count does not go wrong after mass
# deletions as memstore's sometimes does, so long benchmark series finish.
# -E: a command failing inside a function (ceph_cmd ...) also runs start's ERR trap, which
# stops the daemons and says where it failed; without it such a failure ended the script
# silently with the daemons left running.
set -Eeuo pipefail

here=$(cd "$(dirname "$0")" && pwd)

# The script's own stderr, kept so that messages get through even from within a command whose
# output is thrown away (an ERR trap runs with the failing command's redirections). Daemons
# are started without it: they would hold a caller's pipe open (`start | tail` never ending).
exec {script_stderr}>&2
die() { echo "ceph-cluster: $*" >&"$script_stderr"; exit 1; }

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Waits (bounded) until a command succeeds.
wait_for() {
  local what=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || start_failed "$(caller | cut -d' ' -f1)" "$what not ready after ${seconds}s"
    sleep 0.5
  done
}

# The last ceph command run, for start's failure message (the trap sees only "$@").
last_ceph_command=
ceph_cmd() {
  last_ceph_command="ceph $*"
  timeout 30 ceph -c "$dir/ceph.conf" "$@"
}

all_pgs_clean() {
  local stat
  stat=$(ceph_cmd pg stat 2>/dev/null) || return 1
  # "NN pgs: NN active+clean; ..." and nothing else before the first ';'
  [[ $stat =~ ^([0-9]+)\ pgs:\ ([0-9]+)\ active\+clean\; ]] && [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]]
}

osds_up() { [[ $(ceph_cmd osd stat -f json | python3 -c 'import json,sys; print(json.load(sys.stdin)["num_up_osds"])') == "$1" ]]; }

write_conf() {
  local fsid=$1
  cat >"$dir/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = 127.0.0.1:$port
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms bind ipv6 = false
public network = 127.0.0.0/8
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon warn on msgr2 not enabled = false
mon warn on insecure global id reclaim allowed = false
mon data avail warn = 1
# The monitor refuses to start when its disk has less than 5% free (a nearly full shared build
# machine); a test cluster's monitor keeps only a few MiB there.
mon data avail crit = 0
run dir = $dir/run
log file = $dir/\$name.log
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
osd objectstore = $objectstore
# The script places OSDs in the CRUSH map itself. Left on, a starting OSD sends these updates
# itself and, now and then, before it knows the cluster's fsid: the monitor refuses ('wrong
# fsid') and the OSD exits.
osd crush update on start = false
osd class update on start = false
memstore device bytes = $osd_bytes
bluestore block create = true
bluestore block size = $osd_bytes
osd memory target = 1073741824
osd max object size = 134217728
mgr data = $dir/mgr.\$id
[mon.a]
mon data = $dir/mon.a
EOF
  local i
  for ((i = 0; i < osds; i++)); do
    printf '[osd.%d]\nosd data = %s/osd.%d\n' "$i" "$dir" "$i" >>"$dir/ceph.conf"
  done
  if ((rgw)); then
    # radosgw asks the monitor for a secure connection unless told otherwise, which a cluster
    # with auth none cannot give (it then never starts); tcp_nodelay, or each small response
    # waits about 40 ms for Nagle's algorithm.
    printf '[client.rgw.a]\nrgw frontends = beast endpoint=127.0.0.1:%d tcp_nodelay=1\nrgw data = %s/rgw.a\nms mon client mode = crc\n' "$rgw_port" "$dir" >>"$dir/ceph.conf"
  fi
}

start() {
  [[ -e $dir/ceph.conf ]] && die "$dir already holds a cluster: stop it first"
  # A monitor left running by another cluster would meet our OSDs with the wrong fsid.
  if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(1); sys.exit(s.connect_ex(('127.0.0.1', $port)) != 0)"; then
    die "127.0.0.1:$port is in use (another Ceph monitor?): stop that cluster or choose --port"
  fi
  # Ceph from Debian's packages (librados for fieldstore itself, the daemons for the cluster).
  source "$here/packages.sh"
  ensure_packages ceph-mon ceph-osd ceph-mgr ceph-common librados2 python3-rados
  ((rgw)) && ensure_packages radosgw
  mkdir -p "$dir/run"
  trap 'start_failed $LINENO "$BASH_COMMAND"' ERR
  local fsid
  fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
  write_conf "$fsid"

  monmaptool --create --add a "127.0.0.1:$port" --fsid "$fsid" "$dir/monmap" >/dev/null
  ceph-mon --mkfs -i a --monmap "$dir/monmap" -c "$dir/ceph.conf"
  ceph-mon -i a -c "$dir/ceph.conf" {script_stderr}>&-
  wait_for "monitor" 30 ceph_cmd mon stat
  mkdir -p "$dir/mgr.x"
  ceph-mgr -i x -c "$dir/ceph.conf" {script_stderr}>&-

  local i
  for ((i = 0; i < osds; i++)); do
    mkdir -p "$dir/osd.$i"
    ceph_cmd osd create >/dev/null
    ceph-osd -i "$i" --mkfs -c "$dir/ceph.conf" 2>>"$dir/mkfs.log"
    ceph_cmd osd crush add "osd.$i" 1.0 host=localhost root=default >/dev/null 2>&1
    ceph-osd -i "$i" -c "$dir/ceph.conf" {script_stderr}>&-
  done
  wait_for "$osds OSDs" 60 osds_up "$osds"

  ceph_cmd osd pool create fieldstore 16 16 replicated >/dev/null 2>&1
  ceph_cmd osd pool set fieldstore size 1 --yes-i-really-mean-it >/dev/null 2>&1
  ceph_cmd osd pool create fieldstore-quota 8 8 replicated >/dev/null 2>&1
  ceph_cmd osd pool set fieldstore-quota size 1 --yes-i-really-mean-it >/dev/null 2>&1
  ceph_cmd osd pool set-quota fieldstore-quota max_bytes $((4 << 20)) >/dev/null 2>&1
  if ((osds >= 2)); then
    ceph_cmd osd pool create fieldstore-rep2 16 16 replicated >/dev/null 2>&1
    ceph_cmd osd pool set fieldstore-rep2 size 2 >/dev/null 2>&1
  fi
  if ((osds >= 3)); then
    ceph_cmd osd erasure-code-profile set fieldstore-ec21 k=2 m=1 crush-failure-domain=osd >/dev/null
    ceph_cmd osd pool create fieldstore-ec21 16 16 erasure fieldstore-ec21 >/dev/null 2>&1
  fi
  for pool in $(ceph_cmd osd pool ls); do
    ceph_cmd osd pool application enable "$pool" rados >/dev/null 2>&1 || true
  done
  wait_for "placement groups" 60 all_pgs_clean

  if ((rgw)); then
    mkdir -p "$dir/rgw.a"
    radosgw -n client.rgw.a -c "$dir/ceph.conf" {script_stderr}>&-
    wait_for "RADOS gateway" 60 python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$rgw_port/')"
    radosgw-admin -c "$dir/ceph.conf" user create --uid=fieldstore --display-name=fieldstore \
      --access-key=fieldstore-test --secret=fieldstore-test-secret >/dev/null
    wait_for "placement groups" 60 all_pgs_clean
  fi

  {
    echo "FIELDSTORE_TEST_CEPH_CONF=$dir/ceph.conf"
    echo "CEPH_CONF=$dir/ceph.conf"
    echo "FIELDSTORE_TEST_RADOS_POOL=fieldstore"
    echo "FIELDSTORE_TEST_RADOS_POOL_QUOTA=fieldstore-quota"
    ((osds >= 2)) && echo "FIELDSTORE_TEST_RADOS_POOL_REP2=fieldstore-rep2"
    ((osds >= 3)) && echo "FIELDSTORE_TEST_RADOS_POOL_EC=fieldstore-ec21"
    if ((rgw)); then
      echo "FIELDSTORE_TEST_S3_ENDPOINT=http://127.0.0.1:$rgw_port"
      echo "FIELDSTORE_TEST_S3_ACCESS_KEY=fieldstore-test"
      echo "FIELDSTORE_TEST_S3_SECRET_KEY=fieldstore-test-secret"
    fi
  } >"$dir/env"
  trap - ERR
  echo "ceph-cluster: healthy: 1 mon, 1 mgr, $osds OSDs$( ((rgw)) && echo ", radosgw on 127.0.0.1:$rgw_port"); config $dir/ceph.conf" >&2
}

# A start that fails part-way says which step failed, stops the daemons it had started and
# keeps DIR's logs for a look (`stop` removes them).
start_failed() {
  local line=$1 command=$2
  trap - ERR
  kill_daemons
  [[ $command == *'ceph -c "$dir/ceph.conf" "$@"'* ]] && command=$last_ceph_command
  die "start failed at line $line ($command); daemons stopped, logs kept in $dir/*.log; run '$0 stop $dir' before starting again"
}

stop() {
  [[ -d $dir ]] || return 0
  kill_daemons
  rm -rf "$dir"
}

# Every daemon of the cluster in DIR: TERM, a bounded wait, then KILL.
kill_daemons() {
  local pidfile pid
  for pidfile in "$dir"/run/*.pid; do
    [[ -e $pidfile ]] || continue
    pid=$(<"$pidfile")
    kill "$pid" 2>/dev/null || true
  done
  # Bounded wait, then force.
  local deadline=$((SECONDS + 20))
  for pidfile in "$dir"/run/*.pid; do
    [[ -e $pidfile ]] || continue
    pid=$(<"$pidfile")
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

(($# >= 2)) || usage
command=$1 dir=$2
shift 2
osds=3 rgw=0 port=6789 rgw_port=7480 explicit_rgw_port=0 osd_bytes=2147483648 objectstore=memstore
while (($#)); do
  case $1 in
    --osds) osds=$2; shift 2 ;;
    --rgw) rgw=1; shift ;;
    --port) port=$2; ((explicit_rgw_port)) || rgw_port=$((port + 691)); shift 2 ;;
    --rgw-port) rgw_port=$2; explicit_rgw_port=1; shift 2 ;;
    --osd-bytes) osd_bytes=$2; shift 2 ;;
    --objectstore) objectstore=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ $objectstore == memstore || $objectstore == bluestore ]] || die "--objectstore must be memstore or bluestore, not '$objectstore'"
dir=$(mkdir -p "$(dirname "$dir")" && cd "$(dirname "$dir")" && pwd)/$(basename "$dir")

case $command in
  start) start ;;
  stop) stop ;;
  env) cat "$dir/env" ;;
  *) usage ;;
esac
