"""The oracle's side of test_gribjump.py, run in FDB5's environment with ECMWF's pygribjump 0.13
(scripts/gribjump-install.sh): archives a GRIB file into FDB5 (fdb-write), scans it
(gribjump-scan), then answers each call of a JSON list with pygribjump and prints the answers
as JSON, in the form `calls.answer` gives them.

    python gribjump_peer.py SITE_PACKAGES DIR      # DIR: fields.grib, fdb.yaml, calls.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

site_packages, directory = Path(sys.argv[1]), Path(sys.argv[2])
libraries = [site_packages / name / "lib64" for name in ("gribjumplib", "fdb5lib", "metkitlib", "eckitlib", "eccodeslib")]
(directory / "gribjump.yaml").write_text("type: local\n")
environment = {
    **os.environ,
    "LD_LIBRARY_PATH": ":".join(map(str, libraries)),
    "FDB5_CONFIG_FILE": str(directory / "fdb.yaml"),
    "FDB_HOME": str(directory),
    "GRIBJUMP_CONFIG_FILE": str(directory / "gribjump.yaml"),
}
if os.environ.get("LD_LIBRARY_PATH") != environment["LD_LIBRARY_PATH"]:
    # The libraries are found through LD_LIBRARY_PATH, read when the process starts.
    os.execve(sys.executable, [sys.executable, *sys.argv], environment)

calls_dir = Path(__file__).resolve().parent
sys.path.insert(0, str(calls_dir))
import gribjump_calls  # noqa: E402 - the same calls as fieldstore's side
import pygribjump  # noqa: E402

subprocess.run([site_packages / "fdb5lib" / "bin" / "fdb-write", directory / "fields.grib"], check=True, stdout=subprocess.DEVNULL)
for dataset in json.loads((directory / "datasets.json").read_text()):
    subprocess.run([site_packages / "gribjumplib" / "bin" / "gribjump-scan", dataset], check=True, stdout=subprocess.DEVNULL)
calls = json.loads((directory / "calls.json").read_text())
print(json.dumps(gribjump_calls.answer_all(pygribjump, pygribjump.GribJump(), calls)))
