#!/usr/bin/env bash
# The long mode of the crash test: KILLS writers (default 1,000) killed with SIGKILL at random
# moments on every catalogue/store pairing, each followed by a check that nothing flushed was
# lost and no step is partly visible (crates/conformance/src/processes.rs; CI runs 20 per
# pairing). Prints one line of figures per pairing; docs/reliability.md has the last run's.
#
#   scripts/crash-trials.sh [KILLS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/install-deps.sh"
cd "$here"
source "$here/scripts/test-services.sh"
start_test_services
cargo build --workspace --all-targets -q
FIELDSTORE_CRASH_TRIALS=${1:-1000} cargo test -q -p fieldstore-conformance --test pairings writers_killed_at_random_moments -- --nocapture 2>&1 \
  | grep --line-buffered -A3 -e "writers killed" -e "panicked" -e "test result"
test "${PIPESTATUS[0]}" = 0
