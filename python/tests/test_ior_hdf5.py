"""`fieldstore bench ior --api hdf5` against h5py writing IOR's HDF5 layout (`ior -a HDF5 -F`
with `-b` = `-t`; IOR itself is in no package registry here): the same datasets at the same
places in files of the same size, and each reads what the other wrote."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

SEGMENTS, TRANSFER = 5, 65536
REPOSITORY = Path(__file__).resolve().parents[2]


def h5py_as_ior(mode: str, pool: Path, *extra: str) -> subprocess.CompletedProcess:
    """scripts/ior-hdf5-h5py.py: h5py writing (reading and checking) rank 0's file of IOR's layout."""
    script = REPOSITORY / "scripts" / "ior-hdf5-h5py.py"
    return subprocess.run([sys.executable, str(script), mode, str(pool), "0", str(SEGMENTS), str(TRANSFER), *extra], capture_output=True, text=True)


def bench_ior(pool: Path, *extra: str) -> subprocess.CompletedProcess:
    """`fieldstore bench ior --api hdf5` on one process ($FIELDSTORE_BIN: scripts/python-test.sh builds it)."""
    command = [os.environ["FIELDSTORE_BIN"], "bench", "ior", "--api", "hdf5", "--pool", str(pool), "-s", str(SEGMENTS), "-t", str(TRANSFER)]
    return subprocess.run([*command, *extra], capture_output=True, text=True)


def layout(path: Path) -> list[tuple]:
    """Each dataset's name, type, shape, storage, allocation time, place and size in the file."""
    with h5py.File(path, "r") as f:
        described = []
        for name in f:
            dataset = f[name]
            dcpl = dataset.id.get_create_plist()
            described.append(
                (name, dataset.dtype.str, dataset.shape, dcpl.get_layout(), dcpl.get_alloc_time(), dataset.id.get_offset(), dataset.id.get_storage_size())
            )
        return described


@pytest.fixture
def both(tmp_path: Path) -> tuple[Path, Path]:
    """The file fieldstore wrote and the one h5py wrote, each rank 0's of its pool."""
    ours, theirs = tmp_path / "fieldstore", tmp_path / "h5py"
    written = bench_ior(ours)
    assert written.returncode == 0, written.stderr
    assert h5py_as_ior("write", theirs).returncode == 0
    return ours / "ior-hdf5" / "testFile.00000000", theirs / "ior-hdf5" / "testFile.00000000"


def test_the_layout_is_the_one_h5py_writes_for_ior(both: tuple[Path, Path]) -> None:
    ours, theirs = both
    described = layout(ours)
    assert [d[0] for d in described] == [f"Dataset-0000.{s:04d}" for s in range(SEGMENTS)]
    assert all(d[1:5] == ("<i8", (TRANSFER // 8,), h5py.h5d.CONTIGUOUS, h5py.h5d.ALLOC_TIME_EARLY) for d in described), described
    assert described == layout(theirs)
    assert ours.stat().st_size == theirs.stat().st_size
    h5dump = shutil.which("h5dump")
    assert h5dump, "h5dump (Debian's hdf5-tools) is installed by scripts/python-test.sh"
    headers = [subprocess.run([h5dump, "-H", "-p", str(p)], capture_output=True, text=True, check=True).stdout for p in both]
    # All but the first line, which names the file.
    assert headers[0].split("\n", 1)[1] == headers[1].split("\n", 1)[1]
    assert "H5D_ALLOC_TIME_EARLY" in headers[0] and "CONTIGUOUS" in headers[0]


def test_h5py_reads_fieldstores_values_and_fieldstore_reads_h5pys(both: tuple[Path, Path]) -> None:
    ours, theirs = both
    assert h5py_as_ior("read", ours.parent.parent, "--check").returncode == 0, "h5py reads fieldstore's values"
    pool = theirs.parent.parent
    read = bench_ior(pool, "--read")
    assert read.returncode == 0, read.stderr
    with h5py.File(theirs, "r+") as f:
        f["Dataset-0000.0003"][100] = 0
    damaged = bench_ior(pool, "--read", "--check")
    assert damaged.returncode != 0 and "dataset Dataset-0000.0003: wrong values" in damaged.stderr, damaged.stderr
    assert "Dataset-0000.0003: wrong values" in h5py_as_ior("read", pool, "--check").stderr, "h5py's check finds it too"
    assert h5py_as_ior("read", pool).returncode == 0 and bench_ior(pool, "--read").returncode == 0, "a value within a page: found by --check only"
