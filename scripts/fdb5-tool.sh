#!/usr/bin/env bash
# Runs one of FDB5's own tools (fdb-write, fdb-list, ...) from the PyPI wheel against a root
# directory, with the same schema as ../shared/peer/fdb5-peer.sh, for side-by-side runs.
#   fdb5-tool.sh ROOT TOOL [ARGS...]
#   fdb5-tool.sh --config FILE TOOL [ARGS...]    (FDB5's config as given; $FDB_HOME as set, else an empty directory)
# Installs FDB5 on first use (scripts/fdb5-install.sh).
set -euo pipefail
sp=$(bash "$(dirname "$0")/fdb5-install.sh")
home=$(mktemp -d); trap 'rm -rf "$home"' EXIT
export LD_LIBRARY_PATH=$sp/fdb5lib/lib64:$sp/metkitlib/lib64:$sp/eckitlib/lib64:$sp/eccodeslib/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [[ $1 == --config ]]; then
  config=$2 tool=$3; shift 3
  FDB_HOME=${FDB_HOME:-$home} FDB5_CONFIG_FILE=$config "$sp/fdb5lib/bin/$tool" "$@"
  exit
fi
root=$1 tool=$2; shift 2
mkdir -p "$home/etc/fdb" "$root"
cat > "$home/schema" <<'SCHEMA'
param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;
[ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]
SCHEMA
printf 'type: local\nengine: toc\nschema: %s\nspaces:\n- handler: Default\n  regex: ".*"\n  roots:\n  - path: %s\n' "$home/schema" "$root" > "$home/config.yaml"
export FDB_HOME=$home FDB5_CONFIG_FILE=$home/config.yaml
"$sp/fdb5lib/bin/$tool" "$@"
