#!/usr/bin/env bash
# Installs what is missing, then runs every test of the project.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/install-deps.sh"
# The benchmark report and the web catalogue are checked in a real browser (the catalogue's
# tests run under Node); docs/s3.md's commands with the AWS command line.
ensure_packages chromium awscli nodejs
cd "$here"
if [[ ! -f ../shared/fdb5/schema ]]; then
  echo "fieldstore tests need ../shared/fdb5/schema (FDB5's test schema) beside the project" >&2
  exit 1
fi
source "$here/scripts/test-services.sh"
start_test_services
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
cargo build --workspace --all-targets -q
cargo test --workspace -q 2>&1 | grep -v '^$'
test "${PIPESTATUS[0]}" = 0
# The Python package: pip install . into a virtual environment, then its pytest suite.
bash "$here/scripts/python-test.sh"
# The web catalogue in headless Chromium (after the Python tests: it runs the page's Python
# snippets in their environment).
bash "$here/scripts/web-test.sh"
# The C API: its C test suite under valgrind, FDB5's harness, the docs' example, installs.
bash "$here/scripts/c-test.sh"
# The fuzzers, briefly, from the corpus in fuzz/corpus (the test run above replayed it).
bash "$here/scripts/fuzz.sh" brief 10 >/dev/null
# Power cuts on a real device (ext4 and XFS over a logged loop device), a bounded sample.
bash "$here/scripts/power-cut.sh" --states 100
bash "$here/scripts/demo.sh" >/dev/null
echo "fieldstore: all tests passed"
