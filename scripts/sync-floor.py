#!/usr/bin/env python3
"""The device's floor under POSIX archive+flush of small fields, with no fieldstore code.

    python3 scripts/sync-floor.py DIR [STEPS]

Each step is what one flush of 100 fields of 4 KiB costs the file system in fieldstore's (and
FDB5's) durability order: 400 KiB appended to a data file and synced, a 4 KiB index segment
appended and synced, a 443-byte TOC record appended and synced. Printed, in seconds for STEPS
steps (default 100, the 10,000-field benchmark of docs/performance.md):
  - data only: the data sync alone (no index, no TOC): the floor of a protocol with one
    device flush per step (index and commit record written into the data file), also with
    0.5 ms of CPU work per step;
  - data+index+toc: the full order with no CPU work at all: the floor;
  - the full order with 0.5 ms of CPU work per step (fieldstore's archive work for 100 fields),
    with and without write-back started after the first 256 KiB (as the POSIX store does):
    whether the CPU work overlaps the device's.
Files are created in DIR and removed afterwards.
"""
import ctypes
import os
import sys
import time

SYNC_FILE_RANGE_WRITE = 2
libc = ctypes.CDLL(None, use_errno=True)


def start_write_back(fd):
    libc.sync_file_range(fd, ctypes.c_int64(0), ctypes.c_int64(0), SYNC_FILE_RANGE_WRITE)


def busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def run(root, steps, index_and_toc=True, cpu=0.0, early=False):
    names = [os.path.join(root, n) for n in ("data", "index", "toc")]
    fds = [os.open(n, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644) for n in names]
    data, index, toc = fds
    started = time.perf_counter()
    for _ in range(steps):
        busy(cpu * 0.64)
        os.write(data, b"d" * (256 << 10))
        if early:
            start_write_back(data)
        busy(cpu * 0.36)
        os.write(data, b"d" * (144 << 10))
        if index_and_toc:
            os.write(index, b"i" * 4096)
        os.fdatasync(data)
        if index_and_toc:
            os.fdatasync(index)
            os.write(toc, b"t" * 443)
            os.fdatasync(toc)
    elapsed = time.perf_counter() - started
    for fd in fds:
        os.close(fd)
    for name in names:
        os.unlink(name)
    return elapsed


def main():
    root = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    os.makedirs(root, exist_ok=True)
    cases = [
        ("data only", dict(index_and_toc=False)),
        ("data only, 0.5 ms CPU/step", dict(index_and_toc=False, cpu=0.0005)),
        ("data+index+toc", dict()),
        ("data+index+toc, 0.5 ms CPU/step", dict(cpu=0.0005)),
        ("data+index+toc, 0.5 ms CPU/step, early write-back", dict(cpu=0.0005, early=True)),
    ]
    for repetition in (1, 2):
        for label, options in cases:
            print(f"{repetition} {label:50s} {steps} steps: {run(root, steps, **options):.4f} s")


if __name__ == "__main__":
    main()
