#!/usr/bin/env bash
# Installs what is missing, then runs every test of the project.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/install-deps.sh"
# The benchmark report is checked in a real browser.
ensure_packages chromium
cd "$here"
if [[ ! -f ../shared/fdb5/schema ]]; then
  echo "fieldstore tests need ../shared/fdb5/schema (FDB5's test schema) beside the project" >&2
  exit 1
fi
# A real Ceph cluster on loopback for the RADOS tests, stopped however the run ends; the
# DAOS tests run on the project's libdaos emulation (DAOS cannot be installed here), whose
# pools live in a directory of their own.
ceph_dir=$(mktemp -d /tmp/fieldstore-ceph.XXXXXX)
daos_root=$(mktemp -d /tmp/fieldstore-daos-emulation.XXXXXX)
trap 'bash "$here/scripts/ceph-cluster.sh" stop "$ceph_dir"; rm -rf "$daos_root"' EXIT
rmdir "$ceph_dir"
# A free monitor port, so a cluster someone left running does not stop the tests.
mon_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bash "$here/scripts/ceph-cluster.sh" start "$ceph_dir" --port "$mon_port" 2> >(grep -v -e "Falling back to public interface" -e "log_to_monitors" >&2)
set -a
source "$ceph_dir/env"
set +a
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
cargo build --workspace --all-targets -q
export FIELDSTORE_TEST_DAOS_LIBRARY="$here/target/debug/libdaos.so" DAOS_EMULATION_ROOT="$daos_root"
cargo test --workspace -q 2>&1 | grep -v '^$'
test "${PIPESTATUS[0]}" = 0
bash "$here/scripts/demo.sh" >/dev/null
echo "fieldstore: all tests passed"
