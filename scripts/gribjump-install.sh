#!/usr/bin/env bash
# Installs ECMWF's gribjump 0.13 (the PyPI wheels pygribjump and gribjumplib, built with FDB5
# 5.25's) beside FDB5 in $FDB5_PEER_VENV (scripts/fdb5-install.sh) unless it is there, and
# prints the wheels' site-packages directory: gribjump's tools are in gribjumplib/bin, its
# library in gribjumplib/lib64. The oracle of fieldstore.gribjump's tests and benchmarks.
set -euo pipefail
sp=$(bash "$(dirname "${BASH_SOURCE[0]}")/fdb5-install.sh")
venv=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
if ! "$venv/bin/python" -c 'import importlib.metadata as m; assert m.version("pygribjump").startswith("0.13.")' 2>/dev/null; then
  echo "fieldstore: installing gribjump 0.13 from PyPI into $venv" >&2
  "$venv/bin/pip" install -q 'pygribjump>=0.13,<0.14' 'gribjumplib>=0.13,<0.14' >&2
fi
echo "$sp"
