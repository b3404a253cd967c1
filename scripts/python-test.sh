#!/usr/bin/env bash
# Installs the Python package from the repository (`pip install .`, maturin builds the native
# module) into a virtual environment, then runs its tests with pytest. The environment is
# $FIELDSTORE_PYTHON_VENV (default ~/.cache/fieldstore-python), made if missing.
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
