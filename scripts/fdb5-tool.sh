#!/usr/bin/env bash
# Runs one of FDB5's own tools (fdb-write, fdb-list, ...) from the PyPI wheel against a root
# directory, with the same schema as ../shared/peer/fdb5-peer.sh, for side-by-side runs.
#   fdb5-tool.sh ROOT TOOL [ARGS...]
# Installs FDB5 into $FDB5_PEER_VENV (default ~/.cache/fdb5-peer) on first use, as the peer does.
set -euo pipefail
root=$1 tool=$2; shift 2
venv=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q pyfdb fdb5lib >&2
fi
sp=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
home=$(mktemp -d); trap 'rm -rf "$home"' EXIT
mkdir -p "$home/etc/fdb" "$root"
cat > "$home/schema" <<'SCHEMA'
param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;
[ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]
SCHEMA
printf 'type: local\nengine: toc\nschema: %s\nspaces:\n- handler: Default\n  regex: ".*"\n  roots:\n  - path: %s\n' "$home/schema" "$root" > "$home/config.yaml"
export FDB_HOME=$home FDB5_CONFIG_FILE=$home/config.yaml
export LD_LIBRARY_PATH=$sp/fdb5lib/lib64:$sp/metkitlib/lib64:$sp/eckitlib/lib64:$sp/eccodeslib/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$sp/fdb5lib/bin/$tool" "$@"
