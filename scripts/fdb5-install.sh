#!/usr/bin/env bash
# Installs FDB5 5.25 (the PyPI wheels pyfdb and fdb5lib, as ../shared/peer/fdb5-peer.sh does) into
# $FDB5_PEER_VENV (default ~/.cache/fdb5-peer) unless it is there, and prints the wheels'
# site-packages directory: FDB5's tools are in fdb5lib/bin, its libraries in */lib64.
set -euo pipefail
venv=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import pyfdb, fdb5lib' 2>/dev/null; then
  echo "fieldstore: installing FDB5 5.25 from PyPI into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'pyfdb>=5.25,<5.26' 'fdb5lib>=5.25,<5.26' >&2
fi
"$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
