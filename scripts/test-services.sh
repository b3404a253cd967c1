# Starts what the tests talk to, on loopback, and stops it when the calling shell exits:
# a real Ceph cluster for the RADOS tests, and a directory for the pools of the project's
# libdaos emulation (DAOS cannot be installed here). Sourced by test.sh and crash-trials.sh,
# from the project's root, after install-deps.sh; exports the Ceph variables,
# FIELDSTORE_TEST_DAOS_LIBRARY, DAOS_EMULATION_ROOT and FIELDSTORE_TEST_REQUIRE_SERVICES.

start_test_services() {
  local here=$PWD
  test_ceph_dir=$(mktemp -d /tmp/fieldstore-ceph.XXXXXX)
  test_daos_root=$(mktemp -d /tmp/fieldstore-daos-emulation.XXXXXX)
  trap 'bash "'"$here"'/scripts/ceph-cluster.sh" stop "$test_ceph_dir"; rm -rf "$test_daos_root"' EXIT
  rmdir "$test_ceph_dir"
  # A free monitor port, so a cluster someone left running does not stop the tests.
  local mon_port
  mon_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  bash "$here/scripts/ceph-cluster.sh" start "$test_ceph_dir" --port "$mon_port" 2> >(grep -v -e "Falling back to public interface" -e "log_to_monitors" >&2)
  set -a
  source "$test_ceph_dir/env"
  set +a
  export FIELDSTORE_TEST_DAOS_LIBRARY="$here/target/debug/libdaos.so" DAOS_EMULATION_ROOT="$test_daos_root"
  # Every test runs: one whose service is missing fails instead of skipping (crates/testing).
  export FIELDSTORE_TEST_REQUIRE_SERVICES=1
}
