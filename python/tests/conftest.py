"""Fixtures: a POSIX store in a temporary directory, and GRIB messages made from ecCodes'
own sample (python/testing/grib_samples.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import fieldstore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))
from grib_samples import messages_by_step  # noqa: E402 - the shared test helpers are not a package


def posix_config(root: Path) -> dict:
    """A POSIX store at `root`, made by the first archive (`create`: a configured root is never
    made otherwise)."""
    section = {"type": "posix", "root": str(root), "create": True}
    return {"catalogue": section, "store": dict(section)}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> fieldstore.FieldStore:
    return fieldstore.FieldStore(posix_config(root))


@pytest.fixture(scope="session")
def grib_steps(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One GRIB message per step 0, 6 and 12 (python/testing/grib_samples.py)."""
    return messages_by_step(tmp_path_factory.mktemp("grib"))
