#!/usr/bin/env python3
"""IOR's HDF5 layout (`ior -a HDF5 -F` with a block of one transfer) written and read by h5py:
what `fieldstore bench ior --api hdf5` is checked against (python/tests/test_ior_hdf5.py) and
measured beside (scripts/ior-hdf5-bench.sh), IOR being in no package registry here.

    ior-hdf5-h5py.py write|read POOL RANK SEGMENTS TRANSFER [--check]

writes POOL/ior-hdf5/testFile.RANK (RANK in 8 digits) as `bench ior --api hdf5` does, with the
same values, or reads it and checks, as `bench ior` does, one value of each 4 KiB page and the
last (with --check every value); then prints one line of JSON: the first I/O's
start and the last one's end (seconds since the epoch) and the bytes moved.
"""

import json
import sys
import time
from pathlib import Path

import h5py
import numpy as np


def ior_values(transfer: int) -> np.ndarray:
    """`bench ior`'s transfer (byte i is i * 131 + 7, modulo 256) as IOR's 64-bit integers."""
    return ((np.arange(transfer, dtype=np.uint64) * 131 + 7) % 256).astype(np.uint8).view("<i8")


def dataset_name(segment: int) -> bytes:
    return b"Dataset-0000.%04d" % segment


def write(path: Path, segments: int, transfer: int) -> None:
    """A contiguous dataset of native 64-bit integers per segment, allocated early (MPI-IO's
    default), object times recorded: IOR's aiori-HDF5.c."""
    values = ior_values(transfer)
    with h5py.File(path, "w") as f:
        for s in range(segments):
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            dcpl.set_obj_track_times(True)
            space = h5py.h5s.create_simple((transfer // 8,))
            dataset = h5py.h5d.create(f.id, dataset_name(s), h5py.h5t.NATIVE_INT64, space, dcpl=dcpl)
            dataset.write(h5py.h5s.ALL, h5py.h5s.ALL, values)


def read(path: Path, segments: int, transfer: int, every_value: bool) -> None:
    """Reads every segment's dataset into one buffer and checks its values."""
    expected = ior_values(transfer)
    values = np.empty_like(expected)
    compared = slice(None) if every_value else np.r_[0 : len(expected) : 4096 // 8, len(expected) - 1]
    with h5py.File(path, "r") as f:
        for s in range(segments):
            h5py.h5d.open(f.id, dataset_name(s)).read(h5py.h5s.ALL, h5py.h5s.ALL, values)
            if not np.array_equal(values[compared], expected[compared]):
                sys.exit(f"{path}, dataset {dataset_name(s).decode()}: wrong values")


def main() -> None:
    mode, pool, rank, segments, transfer = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    every_value = sys.argv[6:] == ["--check"]
    if mode not in ("write", "read") or transfer % 8 or sys.argv[6:] not in ([], ["--check"]):
        sys.exit(__doc__)
    path = pool / "ior-hdf5" / f"testFile.{rank:08d}"
    start = time.time()
    if mode == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path, segments, transfer)
    elif not path.is_file():
        sys.exit(f"{path}: no file of rank {rank} (write it first)")
    else:
        try:
            read(path, segments, transfer, every_value)
        except KeyError as e:
            sys.exit(f"{path}: {e}: it holds fewer segments than {segments}")
    print(json.dumps({"start": start, "end": time.time(), "bytes": segments * transfer}))


if __name__ == "__main__":
    main()
