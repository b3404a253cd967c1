"""Fixtures: a POSIX store in a temporary directory, and GRIB messages made from ecCodes'
own sample with its `grib_set` tool (installed with fieldstore's build dependencies)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import fieldstore

SAMPLE = Path("/usr/share/eccodes/samples/gg_sfc_grib2.tmpl")


def posix_config(root: Path) -> dict:
    return {"catalogue": {"type": "posix", "root": str(root)}, "store": {"type": "posix", "root": str(root)}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> fieldstore.FieldStore:
    return fieldstore.FieldStore(posix_config(root))


@pytest.fixture(scope="session")
def grib_steps(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One GRIB message per step 0, 6 and 12, from ecCodes' Gaussian-grid sample (class=od,
    expver=0001, stream=oper as it has them; made forecasts, type=fc, to have steps)."""
    if shutil.which("grib_set") is None or not SAMPLE.exists():
        pytest.fail("the tests need ecCodes' grib_set and samples: scripts/install-deps.sh installs them")
    out = tmp_path_factory.mktemp("grib")
    messages = {}
    for step in (0, 6, 12):
        path = out / f"step{step}.grib"
        subprocess.run(["grib_set", "-s", f"type=fc,step={step}", str(SAMPLE), str(path)], check=True)
        messages[step] = path.read_bytes()
    return messages
