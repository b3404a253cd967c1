#!/usr/bin/env bash
# Copies fields from an FDB5 store into fieldstore, with FDB5's own tools: fdb-list names each
# field, fdb-read reads them (one data set at a time, so memory stays bounded), and
# `fieldstore archive` stores them with the keys read from each GRIB message. The counts are
# checked: every field FDB5 lists is archived, or the script fails.
#
#   scripts/fdb5-import.sh [REQUEST]      REQUEST: an FDB5 request (default: the whole store)
#
# FDB5's tools are found on PATH and read FDB5's configuration as they always do
# (FDB5_CONFIG_FILE, FDB_HOME, ...). FDB5_TOOL_PREFIX runs them through a wrapper instead (the
# tests use "scripts/fdb5-tool.sh ROOT"). fieldstore's store is the usual one (--config is not
# taken: set FIELDSTORE_CONFIG or FIELDSTORE_ROOT; without them fieldstore, too, reads FDB5's
# config, and then stores in the FDB5 root's subdirectory 'fieldstore'). Each data set is staged
# as one GRIB file in a temporary directory: TMPDIR chooses a file system with room for the
# largest data set.
set -euo pipefail
request=${1:-}
fdb() { ${FDB5_TOOL_PREFIX:-} "$@"; }
fieldstore=${FIELDSTORE_BIN:-fieldstore}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

if [[ -n $request ]]; then
  fdb fdb-list --porcelain --minimum-keys= "$request" > "$work/fields"
else
  fdb fdb-list --porcelain --all --minimum-keys= > "$work/fields"
fi
grep '^{' "$work/fields" > "$work/listed" || true
total=$(wc -l < "$work/listed")
echo "fdb5-import: FDB5 lists $total fields" >&2
# One retrieve request per field, one request file per data set; keys FDB5 prints empty
# (optional keys it did not store) are left out.
awk -v dir="$work" '
  {
    dataset = substr($0, 1, index($0, "}"))
    request = $0
    gsub(/\}\{/, ",", request); gsub(/[{}]/, "", request)
    n = split(request, items, ","); request = "retrieve"
    for (i = 1; i <= n; i++) if (items[i] !~ /=$/) request = request "," items[i]
    if (!(dataset in files)) files[dataset] = dir "/dataset-" (++count) ".req"
    print request > files[dataset]
  }' "$work/listed"
archived=0
for req in "$work"/dataset-*.req; do
  [[ -e $req ]] || continue
  fdb fdb-read "$req" "$work/fields.grib" > /dev/null
  fields=$(wc -l < "$req")
  "$fieldstore" archive "$work/fields.grib" 2> "$work/archived" || { cat "$work/archived" >&2; exit 1; }
  got=$(sed -n 's/^archived \([0-9]*\) fields.*/\1/p' "$work/archived")
  if [[ $got != "$fields" ]]; then
    echo "fdb5-import: $req: FDB5 listed $fields fields, fdb-read gave $got" >&2
    exit 1
  fi
  archived=$((archived + got))
done
echo "fdb5-import: archived $archived of $total fields into fieldstore" >&2
[[ $archived == "$total" ]]
