"""Fixtures of the pyfdb compatibility tests. The same tests run twice in CI: against pyfdb
5.25 itself (FIELDSTORE_PYFDB=pyfdb, in FDB5's own environment: the oracle) and against
`fieldstore.pyfdb` behind the `pyfdb` shim (FIELDSTORE_PYFDB=shim: python/pyfdb_shim first on
the path, `import pyfdb` as a script would); `fieldstore.pyfdb` imported by that name is the
default. They import nothing else of fieldstore."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))
from grib_samples import messages_by_step  # noqa: E402 - the shared test helpers are not a package
SCHEMA = Path(__file__).resolve().parents[3] / "shared" / "fdb5" / "schema"


SHIM = Path(__file__).resolve().parents[1] / "pyfdb_shim"


@pytest.fixture(scope="session")
def pyfdb():
    name = os.environ.get("FIELDSTORE_PYFDB", "fieldstore")
    if name == "shim":
        sys.path.insert(0, str(SHIM))
        module = importlib.import_module("pyfdb")
        if not module.__name__.startswith("fieldstore."):
            pytest.fail(f"FIELDSTORE_PYFDB=shim imported {module.__name__} from {module.__file__}, not fieldstore.pyfdb through {SHIM}")
        return module
    if name not in ("pyfdb", "fieldstore"):
        pytest.fail(f"FIELDSTORE_PYFDB={name}: pyfdb, shim or fieldstore")
    return importlib.import_module("pyfdb" if name == "pyfdb" else "fieldstore.pyfdb")


@pytest.fixture(scope="session")
def internals(pyfdb):
    """pyfdb's internal modules, as its own tests import them: `_internal`, `pyfdb_type`,
    `pyfdb_iterator` (fieldstore's under the same names)."""
    names = ("_internal", "_internal.pyfdb_internal", "pyfdb_type", "pyfdb_iterator")
    return {name: importlib.import_module(f"{pyfdb.__name__}.{name}") for name in names}


@pytest.fixture
def config(tmp_path: Path) -> dict:
    """FDB5's configuration format, FDB5's own schema, a root in a temporary directory."""
    if not SCHEMA.exists():
        pytest.fail(f"the tests need FDB5's schema at {SCHEMA} (../shared beside the repository)")
    root = tmp_path / "root"
    root.mkdir()
    return {"type": "local", "engine": "toc", "schema": str(SCHEMA), "spaces": [{"handler": "Default", "roots": [{"path": str(root)}]}]}


@pytest.fixture
def fdb(pyfdb, config):
    return pyfdb.FDB(config)


@pytest.fixture(scope="session")
def grib(tmp_path_factory) -> dict:
    """A GRIB message per step 0, 6 and 12 (python/testing/grib_samples.py)."""
    return messages_by_step(tmp_path_factory.mktemp("grib"))
