"""The examples of docs/python.md run as written, against a store in a temporary directory."""

from __future__ import annotations

import re
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
