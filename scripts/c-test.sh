#!/usr/bin/env bash
# The C API's tests (issue 21), built against the headers in include/ and libfieldstore_c:
#   scripts/c-test.sh [--release]
# 0. the headers declare exactly the functions the library exports (FDB5's 47 and fieldstore's),
#    each with the types of its Rust definition (cbindgen's declarations compiled beside them);
# 1. the project's C test suite (crates/c-api/tests/c), under valgrind: every function, error
#    paths, iteration ends, odd-sized reads with seeks, many handles in threads;
# 2. FDB5's own harness (../shared/peer/fdb5_keybench.c), compiled unchanged, on a small
#    workload: what it archives it lists and retrieves;
# 3. the example program of docs/c-api.md, compiled from the doc and run: its output must be
#    what the doc shows;
# 4. linking: the static library, and an install into a prefix (scripts/c-install.sh) found
#    through pkg-config and CMake's find_package.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/install-deps.sh"
ensure_packages gcc valgrind pkg-config cmake
profile=debug
[[ ${1:-} == --release ]] && profile=release
cd "$here"
cargo build -q -p fieldstore-c -p fieldstore-cli $([[ $profile == release ]] && echo --release)
lib=$here/target/$profile
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# The library's SONAME, as an install names it, beside the build's file.
ln -s "$lib/libfieldstore_c.so" "$work/libfieldstore_c.so.0"
cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g -I"$here/include")
link=(-L"$lib" -lfieldstore_c -Wl,-rpath,"$work" -pthread)
unset FIELDSTORE_CONFIG FDB_CONFIG FDB5_CONFIG FDB_CONFIG_FILE FDB5_CONFIG_FILE FDB_HOME

echo "c-test: every function the headers declare is what the library exports, and no other" >&2
declared=$(sed -n 's/^\(int\|const char\*\) \(fdb_[a-z_]*\|fieldstore_[a-z_]*\)(.*/\2/p' include/fdb5/api/fdb_c.h include/fieldstore/fieldstore_c.h | sort)
exported=$(nm -D --defined-only "$lib/libfieldstore_c.so" | awk '$2 == "T" && $3 ~ /^(fdb|fieldstore)_/ { print $3 }' | sort)
diff <(echo "$declared") <(echo "$exported") || { echo "c-test: the headers and the library differ (above)" >&2; exit 1; }
[[ $(grep -c '^int fdb_\|^const char\* fdb_' include/fdb5/api/fdb_c.h) == 47 ]] || { echo "c-test: fdb_c.h should declare FDB5's 47 functions" >&2; exit 1; }

echo "c-test: each declaration has the types of its Rust definition (cbindgen)" >&2
if [[ $(cbindgen --version 2>/dev/null) != "cbindgen 0.29.4" ]]; then
    echo "c-test: installing cbindgen 0.29.4" >&2
    cargo install -q cbindgen --locked --version 0.29.4 >&2
fi
(cd crates/c-api && cbindgen -q --config cbindgen.toml -o "$work/rust.h" .)
# A function declared with other types than its definition's is a "conflicting types" error;
# the one struct is checked member by member, under a name of its own.
sed -i '/^typedef struct fieldstore_stats_t {/,/^} fieldstore_stats_t;/ s/fieldstore_stats_t/fieldstore_stats_rust_t/g' "$work/rust.h"
members=$(sed -n '/^typedef struct fieldstore_stats_rust_t {/,/^}/ s/^ *[a-z0-9_ ]* \([a-z_]*\);$/\1/p' "$work/rust.h")
[[ $(echo "$members" | wc -w) == 7 ]] || { echo "c-test: fieldstore_stats_t's members not found in cbindgen's header" >&2; exit 1; }
{
    printf '#include "fdb5/api/fdb_c.h"\n#include "fieldstore/fieldstore_c.h"\n#include "rust.h"\n'
    echo '_Static_assert(sizeof(fieldstore_stats_t) == sizeof(fieldstore_stats_rust_t), "fieldstore_stats_t");'
    for m in $members; do
        echo "_Static_assert(offsetof(fieldstore_stats_t, $m) == offsetof(fieldstore_stats_rust_t, $m) && sizeof(((fieldstore_stats_t*)0)->$m) == sizeof(((fieldstore_stats_rust_t*)0)->$m), \"fieldstore_stats_t.$m\");"
    done
} > "$work/types.c"
gcc "${cflags[@]}" -fsyntax-only -I"$work" "$work/types.c"
[[ $(grep -c '^int \|^const char \*' "$work/rust.h") == $(echo "$declared" | wc -l) ]] || { echo "c-test: cbindgen's header has another number of functions" >&2; exit 1; }

echo "c-test: the C test suite, under valgrind" >&2
gcc "${cflags[@]}" -o "$work/test_fdb_c" crates/c-api/tests/c/test_fdb_c.c "${link[@]}"
mkdir -p "$work/root" "$work/grib"
FIELDSTORE_ROOT="$work/grib/root" "$lib/fieldstore" sample -q --steps 0/6/12 --levels 500/850 -o "$work/sample.grib"
valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
  "$work/test_fdb_c" "$work/root" "$work/sample.grib"

echo "c-test: FDB5's keybench harness, compiled unchanged" >&2
gcc -O2 -w -o "$work/keybench" ../shared/peer/fdb5_keybench.c -I"$here/include" "${link[@]}"
out=$(FIELDSTORE_ROOT="$work/keybench-root" "$work/keybench" 4 3 2 1000 1)
echo "$out" | awk '$1 == "archive" || $1 == "list" || $1 == "retrieve" { if ($2 != 24 || $3 != 24000) { print "keybench: " $0; bad = 1 } } END { exit bad }'
[[ $(echo "$out" | wc -l) == 3 ]] || { echo "keybench: $out" >&2; exit 1; }

echo "c-test: FDB5's keybench harness through fieldstore serve (type: remote)" >&2
printf 'catalogue: {type: posix, root: %s, create: true}\nstore: {type: posix, root: %s, create: true}\n' "$work/served" "$work/served" > "$work/served.yaml"
coproc server { exec timeout 300 "$lib/fieldstore" --config "$work/served.yaml" serve --listen 127.0.0.1:0 2>"$work/serve.log"; }
read -r _ _ address <&"${server[0]}"
printf 'catalogue: {type: remote, endpoint: "http://%s"}\nstore: {type: remote, endpoint: "http://%s"}\n' "$address" "$address" > "$work/remote.yaml"
out=$(FIELDSTORE_CONFIG="$work/remote.yaml" "$work/keybench" 4 3 2 1000 1)
kill "$server_PID"; wait "$server_PID" || true
echo "$out" | awk '$1 == "archive" || $1 == "list" || $1 == "retrieve" { if ($2 != 24 || $3 != 24000) { print "keybench through a server: " $0; bad = 1 } } END { exit bad }'
[[ $(echo "$out" | wc -l) == 3 ]] || { echo "keybench through a server: $out" >&2; exit 1; }
[[ $("$lib/fieldstore" --config "$work/served.yaml" list class=od,expver=0001 --porcelain | wc -l) == 24 ]] || { echo "c-test: the server's store does not hold the 24 fields" >&2; exit 1; }

echo "c-test: the example of docs/c-api.md" >&2
awk '/^```c$/ { inside = 1; next } /^```/ { inside = 0 } inside' docs/c-api.md > "$work/example.c"
awk '/^<!-- example output -->$/ { getline; inside = 1; next } /^```$/ && inside { exit } inside' docs/c-api.md > "$work/example.expected"
gcc "${cflags[@]}" -o "$work/example" "$work/example.c" "${link[@]}"
(cd "$work" && FIELDSTORE_ROOT="$work/example-root" ./example) > "$work/example.out"
diff -u "$work/example.expected" "$work/example.out"

echo "c-test: the static library; an install found by pkg-config and CMake" >&2
bash scripts/c-install.sh "$work/prefix" --profile "$profile" >/dev/null
# Statically, with the system libraries the install's pkg-config file names (Libs.private).
gcc "${cflags[@]}" -o "$work/example-static" "$work/example.c" "$work/prefix/lib/libfieldstore_c.a" \
  $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --static --libs-only-l fieldstore | sed 's/-lfieldstore_c//') -pthread
(cd "$work" && FIELDSTORE_ROOT="$work/static-root" ./example-static) | diff -u "$work/example.expected" -
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" gcc "${cflags[@]}" -o "$work/example-pc" "$work/example.c" \
  $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs fieldstore) -Wl,-rpath,"$work/prefix/lib"
(cd "$work" && FIELDSTORE_ROOT="$work/pc-root" ./example-pc) | diff -u "$work/example.expected" -
mkdir -p "$work/cmake"
cat > "$work/cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(example C)
find_package(fieldstore REQUIRED)
add_executable(example $work/example.c)
target_link_libraries(example fieldstore::fieldstore)
CMAKE
cmake -S "$work/cmake" -B "$work/cmake/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake/build" >/dev/null
(cd "$work" && FIELDSTORE_ROOT="$work/cmake-root" ./cmake/build/example) | diff -u "$work/example.expected" -
# Relinking an FDB5 program: -lfdb5 finds the install's libfdb5.so.
gcc -O2 -w -o "$work/keybench-fdb5" ../shared/peer/fdb5_keybench.c -I"$work/prefix/include" -L"$work/prefix/lib" -lfdb5 -Wl,-rpath,"$work/prefix/lib"
FIELDSTORE_ROOT="$work/fdb5-root" "$work/keybench-fdb5" 1 1 1 100 1 | grep -q '^retrieve 1 100 '
echo "c-test: all passed" >&2
