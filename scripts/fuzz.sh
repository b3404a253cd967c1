#!/usr/bin/env bash
# Fuzzes fieldstore's parsers and record decoders (crates/fuzz-targets) with cargo-fuzz and
# libFuzzer; docs/reliability.md says what each target covers and what the last long run found.
#
#   scripts/fuzz.sh run [SECONDS [TARGET...]]  each target (default: all) for SECONDS (default
#                                              600), then refreshes the corpus kept in the
#                                              repository from what it found
#   scripts/fuzz.sh brief [SECONDS]            each target for SECONDS (default 10), from the
#                                              repository's corpus (what CI runs)
#
# Corpora. A long run grows a working corpus in fuzz/target/corpus/TARGET (kept between runs on
# one machine), minimised after each run (cargo fuzz cmin). The repository keeps a small one in
# fuzz/corpus/TARGET, which the corpus test replays on every test run: each target's $KEPT
# smallest inputs of the minimised corpus, and every input that once found a defect (named
# regression-*: copy a failing input from fuzz/artifacts/TARGET/ there with its fix).
#
# With a nightly toolchain the targets are built with AddressSanitizer, else with stable and no
# sanitizer; either way with overflow checks and debug assertions. A failure leaves its input
# in fuzz/artifacts/TARGET/ and makes the script exit 1. Each target's figures go to
# fuzz/target/MODE-summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
KEPT=100

mode=${1:-}
case "$mode" in
    run) seconds=${2:-600}; shift $(($# < 2 ? $# : 2)) ;;
    brief) seconds=${2:-10}; shift $(($# < 2 ? $# : 2)) ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac

source scripts/packages.sh
ensure_packages g++  # libFuzzer is C++, built by the libfuzzer-sys crate
if ! command -v cargo-fuzz >/dev/null; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked --version 0.13.2 >&2
fi
if cargo +nightly --version >/dev/null 2>&1; then
    toolchain=+nightly sanitizer=address
else
    toolchain=+stable sanitizer=none
fi
flags=(-O -a --sanitizer "$sanitizer")

seeds=$PWD/fuzz/target/seeds
cargo run -q -p fieldstore-fuzz-targets --bin fuzz-seeds "$seeds"
(cd fuzz && cargo "$toolchain" fuzz build "${flags[@]}" >&2)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cd fuzz && cargo "$toolchain" fuzz list)

# Replaces the repository's corpus of a target by the smallest inputs of the working one.
keep_small_corpus() {
    local kept=$1 working=$2
    find "$kept" -type f ! -name 'regression-*' -delete
    # sed reads to the end (head would leave sort writing into a closed pipe: SIGPIPE, and
    # pipefail ends the script once a corpus outgrows the pipe's buffer).
    find "$working" -type f -printf '%s %p\n' | sort -n | sed -n "1,${KEPT}p" | cut -d' ' -f2- | xargs -r cp -t "$kept"
}

summary=fuzz/target/$mode-summary.txt
: >"$summary"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
for target in "${targets[@]}"; do
    kept=$PWD/fuzz/corpus/$target
    mkdir -p "$kept"
    if [ "$mode" = run ]; then
        corpus=$PWD/fuzz/target/corpus/$target
        mkdir -p "$corpus"
        cp -n "$kept"/* "$corpus"/ 2>/dev/null || true
    else
        corpus=$scratch/$target
        cp -r "$kept" "$corpus"
    fi
    log=fuzz/target/$mode-$target.log
    # Leaks are not looked for: ecCodes (behind parameter names) keeps its tables to the end.
    if ! (cd fuzz && cargo "$toolchain" fuzz run "${flags[@]}" "$target" "$corpus" "$seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1) >"$log" 2>&1; then
        echo "fuzz: $target FAILED: see $log and fuzz/artifacts/$target/" >&2
        failed=1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -1)
    if [ "$mode" = run ]; then
        (cd fuzz && cargo "$toolchain" fuzz cmin "${flags[@]}" "$target" "$corpus" >>"../$log" 2>&1)
        keep_small_corpus "$kept" "$corpus"
    fi
    inputs=$(find "$corpus" -type f | wc -l)
    line="$target: ${seconds}s, ${runs:-?} inputs run, coverage ${cov:-?} edges, corpus $inputs inputs ($(find "$kept" -type f | wc -l) kept in the repository), peak RSS ${rss:-?} MiB ($toolchain, sanitizer $sanitizer)"
    echo "$line" | tee -a "$summary"
done
exit $failed
