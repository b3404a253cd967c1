#!/usr/bin/env bash
# Installs the Python package from the repository (`pip install .`, maturin builds the native
# module) into a virtual environment, then runs its tests with pytest. The environment is
# $FIELDSTORE_PYTHON_VENV (default ~/.cache/fieldstore-python), made if missing. The pyfdb
# compatibility tests (python/tests_pyfdb) run twice: against fieldstore.pyfdb, and against
# pyfdb 5.25 itself in FDB5's environment (scripts/fdb5-install.sh), the oracle.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/install-deps.sh"
venv=${FIELDSTORE_PYTHON_VENV:-$HOME/.cache/fieldstore-python}
if [[ ! -x $venv/bin/python ]]; then
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    ensure_packages python3-venv
  fi
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --upgrade pip >&2
"$venv/bin/pip" install -q "$here[test]" >&2
cd "$here/python/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
cd "$here/python/tests_pyfdb"
echo "pyfdb compatibility: fieldstore.pyfdb" >&2
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
echo "pyfdb compatibility: pyfdb 5.25 itself (the oracle)" >&2
bash "$here/scripts/fdb5-install.sh" >/dev/null
fdb5_venv=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
"$fdb5_venv/bin/python" -c 'import pytest' 2>/dev/null || "$fdb5_venv/bin/pip" install -q pytest >&2
FIELDSTORE_PYFDB=pyfdb "$fdb5_venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
