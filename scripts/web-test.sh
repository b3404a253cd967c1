#!/usr/bin/env bash
# The web catalogue in a real browser: Debian's Chromium, driven headless by Playwright
# (playwright-core from npm, pinned), browses a store this script makes, draws fields, copies a
# request and runs it, downloads (crates/server/web/tests/catalogue.test.cjs says what is
# checked). With --screenshots DIR, the page's screenshots are written there (docs/web/ holds
# the ones docs/web.md shows).
#
#   scripts/web-test.sh [--screenshots DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
screenshots=""
if [[ ${1:-} == --screenshots ]]; then
  screenshots=$(realpath -m "${2:?--screenshots needs a directory}")
  mkdir -p "$screenshots"
fi
source "$here/scripts/install-deps.sh"
ensure_packages chromium nodejs
# Some nodejs packages bring npm themselves (and conflict with Debian's own).
command -v npm >/dev/null || ensure_packages npm
cd "$here"
cargo build -q -p fieldstore-cli
bin="$here/target/debug/fieldstore"
modules="$here/target/web-test"
if [[ ! -d $modules/node_modules/playwright-core ]]; then
  npm install --prefix "$modules" --no-audit --no-fund --silent playwright-core@1.65.1 >&2
fi

work=$(mktemp -d)
servers=()
cleanup() {
  ((${#servers[@]})) && kill "${servers[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export FIELDSTORE_ROOT="$work/root"
unset FIELDSTORE_CONFIG
# The store browsed: pressure levels on a regular lat/lon grid, surface fields on a reduced
# Gaussian grid (N80, about 70 kB a field) and on a regular Gaussian one, and 60 steps of one
# parameter (more values than a page shows).
"$bin" sample -q --steps 0/6/12 --params t/u/v --levels 500/850 --fill-bits 16 -o "$work/pl.grib"
"$bin" sample -q --template reduced_gg_pl_80_grib2 --levtype sfc --params 2t/msl --steps 0/6 --fill-bits 16 --date 20231202 -o "$work/gg.grib"
"$bin" sample -q --template regular_gg_sfc_grib2 --levtype sfc --params 10u --steps 0 --fill-bits 12 --date 20231202 -o "$work/rgg.grib"
"$bin" sample -q --levtype sfc --params msl --steps 0/to/354/by/6 --date 20231203 -o "$work/steps.grib"
"$bin" archive -q "$work"/{pl,gg,rgg,steps}.grib

# Serves the store with `serve` ARGS; its address in $address.
start_server() {
  local name=$1
  shift
  timeout 900 "$bin" serve --listen 127.0.0.1:0 "$@" > "$work/$name.txt" 2> "$work/$name.log" &
  servers+=("$!")
  for _ in $(seq 200); do [[ -s $work/$name.txt ]] && break; sleep 0.05; done
  address=$(cut -d' ' -f3 "$work/$name.txt")
  [[ -n $address ]] || { cat "$work/$name.log" >&2; echo "web-test: the server did not start" >&2; exit 1; }
}
start_server open
open_address=$address
# The same store to one identity, allowed to read one date only: the page asks for its token.
token_json=$("$bin" token --name reader --json)
token=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])' <<< "$token_json")
hash=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["identity"]["token_sha256"])' <<< "$token_json")
printf 'identities:\n- name: reader\n  token_sha256: %s\n  allow: {read: ["date=20231202"]}\n' "$hash" > "$work/access.yaml"
start_server guarded --access "$work/access.yaml"
guarded_address=$address

# The Python snippets run with the Python package's test environment (scripts/python-test.sh).
python="${FIELDSTORE_PYTHON_VENV:-$HOME/.cache/fieldstore-python}/bin/python"
[[ -x $python ]] && "$python" -c "import fieldstore" 2>/dev/null || python=""
NODE_PATH="$modules/node_modules" FIELDSTORE_PYTHON="$python" FIELDSTORE_URL="http://$open_address" \
  FIELDSTORE_GUARDED_URL="http://$guarded_address" FIELDSTORE_GUARDED_TOKEN="$token" CHROMIUM=$(command -v chromium) \
  FIELDSTORE_BIN_DIR="$(dirname "$bin")" WEB_TEST_WORK="$work" SCREENSHOTS="$screenshots" \
  node --test --test-reporter=spec "$here/crates/server/web/tests/catalogue.test.cjs"
