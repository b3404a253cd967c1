"""A `pyfdb` package that is fieldstore.pyfdb: put this directory first on PYTHONPATH and code
written for pyfdb 5.25 (`import pyfdb`, `from pyfdb.pyfdb_iterator import ...`,
`import pyfdb._internal`) runs on fieldstore unchanged. Every module is fieldstore's own
(`pyfdb.X` is `fieldstore.pyfdb.X`), so nothing here can drift from it."""

import importlib
import sys

_SUBMODULES = ("pyfdb", "pyfdb_type", "pyfdb_iterator", "_internal", "_internal.pyfdb_internal")

for _name in _SUBMODULES:
    try:
        sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"fieldstore.pyfdb.{_name}")
    except ModuleNotFoundError as e:
        if not f"fieldstore.pyfdb.{_name}".startswith(str(e.name)):
            raise
sys.modules[__name__] = importlib.import_module("fieldstore.pyfdb")
