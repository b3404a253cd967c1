"""Data FDB5 wrote, read by the pyfdb under test with the same config: FDB5's own pyfdb 5.25
archives, in a process of its own in FDB5's environment, and this process lists and retrieves.
Against fieldstore.pyfdb, FDB5's databases are read in place (docs/fdb5-users.md); against
pyfdb itself, the same test is FDB5 reading its own data, the oracle."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from test_pyfdb_api import DATASET, FIELD

# Archives the files named after the config, one flush per file, with FDB5's pyfdb.
WRITER = """
import json, sys
import pyfdb
fdb = pyfdb.FDB(json.loads(sys.argv[1]))
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        fdb.archive(f.read())
    fdb.flush()
"""


def fdb5_python() -> Path:
    venv = Path(os.environ.get("FDB5_PEER_VENV", Path.home() / ".cache" / "fdb5-peer"))
    python = venv / "bin" / "python"
    if not python.exists():
        pytest.fail(f"FDB5's pyfdb is not installed in {venv}: scripts/fdb5-install.sh installs it")
    return python


def test_fields_fdb5_archived_are_listed_and_retrieved(pyfdb, config, grib, tmp_path):
    paths = []
    for step, message in grib.items():
        path = tmp_path / f"step{step}.grib"
        path.write_bytes(message)
        paths.append(str(path))
    # Step 6 archived twice, in two flushes: listed once, and twice with the masked ones.
    paths.append(paths[1])
    subprocess.run([str(fdb5_python()), "-c", WRITER, json.dumps(config), *paths], check=True)

    fdb = pyfdb.FDB(config)
    listed = sorted(int(e.combined_key()["step"]) for e in fdb.list(DATASET))
    assert listed == [0, 6, 12]
    assert len(list(fdb.list(DATASET, include_masked=True))) == 4
    for step, message in grib.items():
        assert fdb.retrieve({**FIELD, "step": str(step)}).readall() == message
