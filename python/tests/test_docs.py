"""The examples of docs/python.md run as written, against a store in a temporary directory."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def python_blocks() -> list:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_doc_has_examples():
    assert python_blocks(), f"{DOC} has no python example"


@pytest.mark.parametrize("number", range(len(python_blocks())))
def test_example_runs(number, tmp_path, monkeypatch, capsys):
    for variable in ("FIELDSTORE_CONFIG", "FDB5_CONFIG_FILE", "FDB5_CONFIG", "FDB_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("FIELDSTORE_ROOT", str(tmp_path / "store"))
    block = python_blocks()[number]
    exec(compile(block, f"{DOC}, example {number + 1}", "exec"), {})
    if "NotFound" in block:
        assert "nothing matched" in capsys.readouterr().out


def walk_through() -> list:
    """The walk-through's cells, each with the output the doc shows for it."""
    return re.findall(r"```python walk-through\n(.*?)```\n\n```text\n(.*?)```", DOC.read_text(), re.S)


def test_the_walk_through_runs_as_shown(tmp_path, monkeypatch, capsys):
    cells = walk_through()
    assert len(cells) == DOC.read_text().count("```python walk-through"), "every cell shows its output"
    for variable in ("FIELDSTORE_CONFIG", "FDB5_CONFIG_FILE", "FDB5_CONFIG", "FDB_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("FIELDSTORE_ROOT", str(tmp_path / "store"))
    namespace: dict = {}
    for number, (code, shown) in enumerate(cells, 1):
        needs = re.match(r"# needs (\w+) \(Python 3\.(\d+)\+\)", code)
        if needs and sys.version_info < (3, int(needs.group(2))):
            # zarr-python 3 and earthkit-data 1.3 are not installable on this Python.
            assert importlib.util.find_spec(needs.group(1)) is None, f"cell {number}: {needs.group(1)} is installed, so the cell runs"
            continue
        exec(compile(code, f"{DOC}, walk-through cell {number}", "exec"), namespace)
        assert capsys.readouterr().out == shown, f"cell {number} printed other than the doc shows"
