#!/usr/bin/env bash
# Installs the Python package from the repository (`pip install .`, maturin builds the native
# module) into a virtual environment, then runs its tests with pytest. The environment is
# $FIELDSTORE_PYTHON_VENV (default ~/.cache/fieldstore-python), made if missing. The pyfdb
# compatibility tests (python/tests_pyfdb) run twice: against fieldstore.pyfdb behind the `pyfdb`
# shim, and against pyfdb 5.25 itself in FDB5's environment (scripts/fdb5-install.sh), the oracle.
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
# The server the remote tests start (test_remote.py): the CLI's `fieldstore serve`.
if [[ -z ${FIELDSTORE_BIN:-} ]]; then
  (cd "$here" && cargo build -q -p fieldstore-cli)
  export FIELDSTORE_BIN=$here/target/debug/fieldstore
fi
cd "$here/python/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
# The oldest Python supported, where one is installed: its build has no buffer protocol in
# the stable ABI (readinto copies once), so the same tests prove that build too.
# (on PATH, or installed by pyenv without being selected).
oldest=${FIELDSTORE_PYTHON_OLDEST:-}
for candidate in python3.9 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3.9; do
  [[ -z $oldest ]] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 9)' 2>/dev/null && oldest=$candidate
done
if [[ -n $oldest ]]; then
  oldest_venv=$venv-3.9
  [[ -x $oldest_venv/bin/python ]] || "$oldest" -m venv "$oldest_venv"
  "$oldest_venv/bin/pip" install -q --upgrade pip >&2
  "$oldest_venv/bin/pip" install -q "$here[test]" >&2
  # (but the Zarr view's and the earthkit source's: zarr-python 3 needs 3.11, earthkit-data 1.3 3.10)
  echo "the same tests on Python 3.9's build" >&2
  "$oldest_venv/bin/python" -m pytest -q -p no:cacheprovider --ignore=test_zarr.py --ignore=test_earthkit.py "$@"
else
  echo "python-test: no Python 3.9 here; only $("$venv/bin/python" -V)'s build is tested" >&2
fi
cd "$here/python/tests_pyfdb"
# Through the `pyfdb` shim (python/pyfdb_shim), as a script written for pyfdb imports it. PyYAML
# reads YAML configurations, in pyfdb and in fieldstore.pyfdb alike.
"$venv/bin/python" -c 'import yaml' 2>/dev/null || "$venv/bin/pip" install -q pyyaml >&2
echo "pyfdb compatibility: fieldstore.pyfdb behind the pyfdb shim" >&2
FIELDSTORE_PYFDB=shim "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
echo "pyfdb compatibility: pyfdb 5.25 itself (the oracle)" >&2
bash "$here/scripts/fdb5-install.sh" >/dev/null
fdb5_venv=${FDB5_PEER_VENV:-$HOME/.cache/fdb5-peer}
"$fdb5_venv/bin/python" -c 'import pytest' 2>/dev/null || "$fdb5_venv/bin/pip" install -q pytest >&2
FIELDSTORE_PYFDB=pyfdb "$fdb5_venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
