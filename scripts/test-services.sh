# Starts what the tests talk to, on loopback, and stops it when the calling shell exits:
# a real Ceph cluster for the RADOS tests with its RADOS gateway (S3), a second S3 server
# (SeaweedFS, scripts/s3-server.sh), each with the test bucket, and a directory for the pools
# of the project's libdaos emulation (DAOS cannot be installed here). Sourced by test.sh and
# crash-trials.sh, from the project's root, after install-deps.sh; exports the Ceph and S3
# variables, FIELDSTORE_TEST_DAOS_LIBRARY, DAOS_EMULATION_ROOT and
# FIELDSTORE_TEST_REQUIRE_SERVICES.

# A free loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Creates the tests' bucket (crates/testing's S3_TEST_BUCKET) on an S3 server: ENDPOINT KEY SECRET.
create_test_bucket() {
  local code
  # RGW checks the payload hash header that curl's signer leaves out.
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --aws-sigv4 "aws:amz:us-east-1:s3" --user "$2:$3" -X PUT "$1/fieldstore-test")
  [[ $code == 200 || $code == 409 ]] || { echo "test-services: creating the test bucket at $1 answered HTTP $code" >&2; return 1; }
}

start_test_services() {
  local here=$PWD
  test_ceph_dir=$(mktemp -d /tmp/fieldstore-ceph.XXXXXX)
  test_daos_root=$(mktemp -d /tmp/fieldstore-daos-emulation.XXXXXX)
  test_s3_dir=$(mktemp -d /tmp/fieldstore-s3.XXXXXX)
  trap 'bash "'"$here"'/scripts/ceph-cluster.sh" stop "$test_ceph_dir"; bash "'"$here"'/scripts/s3-server.sh" stop "$test_s3_dir"; rm -rf "$test_daos_root"' EXIT
  rmdir "$test_ceph_dir"
  # Free ports, so a cluster someone left running does not stop the tests.
  bash "$here/scripts/ceph-cluster.sh" start "$test_ceph_dir" --port "$(free_port)" --rgw --rgw-port "$(free_port)" \
    2> >(grep -v -e "Falling back to public interface" -e "log_to_monitors" >&2)
  bash "$here/scripts/s3-server.sh" start "$test_s3_dir"
  set -a
  source "$test_ceph_dir/env"
  source "$test_s3_dir/env"
  set +a
  create_test_bucket "$FIELDSTORE_TEST_S3_ENDPOINT" "$FIELDSTORE_TEST_S3_ACCESS_KEY" "$FIELDSTORE_TEST_S3_SECRET_KEY"
  create_test_bucket "$FIELDSTORE_TEST_S3_SEAWEED_ENDPOINT" "$FIELDSTORE_TEST_S3_SEAWEED_ACCESS_KEY" "$FIELDSTORE_TEST_S3_SEAWEED_SECRET_KEY"
  export FIELDSTORE_TEST_DAOS_LIBRARY="$here/target/debug/libdaos.so" DAOS_EMULATION_ROOT="$test_daos_root"
  # Every test runs: one whose service is missing fails instead of skipping (crates/testing).
  export FIELDSTORE_TEST_REQUIRE_SERVICES=1
}
