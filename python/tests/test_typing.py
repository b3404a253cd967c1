"""The type stubs (`_native.pyi`) say what the native module has: mypy's stubtest compares them
with the module as built, name by name and signature by signature."""

from __future__ import annotations

import subprocess
import sys


def test_the_stubs_match_the_native_module():
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "fieldstore._native"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
