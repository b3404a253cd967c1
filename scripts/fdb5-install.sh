#!/usr/bin/env bash
# Installs FDB5 5.25 (the PyPI wheels pyfdb and fdb5lib, as ../shared/peer/fdb5-peer.sh does) into
# $FDB5_PEER_VENV (default ~/.cache/fdb5-peer) unless it is there, and prints the wheels'
# site-packages directory: FDB5's tools are in fdb5lib/bin, its libraries in */lib64.
set -euo pipefail
venv=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
has_525() { "$venv/bin/python" -c 'import importlib.metadata as m, pyfdb; assert m.version("fdb5lib").startswith("5.25.")' 2>/dev/null; }
if [[ ! -x $venv/bin/python ]] || ! has_525; then
  echo "fieldstore: installing FDB5 5.25 from PyPI into $venv" >&2
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
    ensure_packages python3-venv
  fi
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'pyfdb>=5.25,<5.26' 'fdb5lib>=5.25,<5.26' >&2
fi
"$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
