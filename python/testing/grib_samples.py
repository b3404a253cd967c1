"""GRIB messages for the Python tests, made from ecCodes' Gaussian-grid sample with its
`grib_set` tool (installed with fieldstore's build dependencies). Shared by both test suites;
imports nothing of fieldstore, so the pyfdb suite runs in FDB5's environment too."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Dict

SAMPLE = Path("/usr/share/eccodes/samples/gg_sfc_grib2.tmpl")


def messages_by_step(out: Path) -> Dict[int, bytes]:
    """One message per step 0, 6 and 12 (class=od, expver=0001, stream=oper, type=fc,
    levtype=sfc, param=130, date=20070424, time=1200, as the sample has them), made in `out`.
    Raises RuntimeError without ecCodes' tool or sample."""
    if shutil.which("grib_set") is None or not SAMPLE.exists():
        raise RuntimeError("the tests need ecCodes' grib_set and samples: scripts/install-deps.sh installs them")
    messages = {}
    for step in (0, 6, 12):
        path = out / f"step{step}.grib"
        subprocess.run(["grib_set", "-s", f"type=fc,step={step}", str(SAMPLE), str(path)], check=True)
        messages[step] = path.read_bytes()
    return messages
