#!/usr/bin/env bash
# Remakes crates/figures/data/coastlines-RES.json, the coastlines fieldstore's maps draw, from
# Natural Earth's land polygons (public domain) as npm's world-atlas package gives them: each
# coastline a list of [longitude, latitude] pairs, rounded to 0.01 degree. The maps need no
# network at run time; this script is run by hand when the data should change.
#
#   scripts/coastlines.sh [50m|110m]        (default 110m: 76 kB; 50m is 0.9 MB)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
resolution=${1:-110m}
[[ $resolution == 50m || $resolution == 110m ]] || { echo "coastlines: resolution 50m or 110m, not '$resolution'" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --silent world-atlas@2.0.2 topojson-client@3.1.0
out="$here/crates/figures/data/coastlines-$resolution.json"
node - "$resolution" "$out" <<'JS'
const fs = require("fs");
const topojson = require("topojson-client");
const [resolution, out] = process.argv.slice(2);
const topology = JSON.parse(fs.readFileSync(`node_modules/world-atlas/land-${resolution}.json`, "utf8"));
// Every land boundary once, as lines: the coastlines.
const mesh = topojson.mesh(topology, topology.objects.land);
const round = (x) => Math.round(x * 100) / 100;
const lines = mesh.coordinates.map((line) => line.map(([lon, lat]) => [round(lon), round(lat)]));
fs.writeFileSync(out, JSON.stringify(lines) + "\n");
console.error(`coastlines: ${lines.length} lines, ${lines.reduce((n, l) => n + l.length, 0)} points in ${out}`);
JS
