#!/usr/bin/env bash
# The main job on the embedded default (a local POSIX store): builds fieldstore, generates a
# few GRIB fields from ecCodes' samples, archives them, lists them and retrieves them back,
# checking the bytes. Uses $FIELDSTORE_ROOT if set, else ./.fieldstore-demo.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/install-deps.sh"
cd "$here"
cargo build --release -q -p fieldstore-cli
fs=$here/target/release/fieldstore
export FIELDSTORE_ROOT=${FIELDSTORE_ROOT:-$here/.fieldstore-demo}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

"$fs" sample --steps 0/6/12 --levels 500/850/1000 --params 130/131 -o "$work/sample.grib"
echo "== archive"; "$fs" archive "$work/sample.grib"
echo "== list";    "$fs" list class=od,expver=0001,stream=oper,date=20231201,step=6
echo "== axes";    "$fs" axes class=od,expver=0001,stream=oper,date=20231201
echo "== retrieve"; "$fs" retrieve class=od,expver=0001,stream=oper,date=20231201,time=1200 -o "$work/back.grib"
cmp "$work/sample.grib" "$work/back.grib" && echo "retrieved bytes are identical to the archived GRIB file"
echo "store: $FIELDSTORE_ROOT"
