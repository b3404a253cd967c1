"""The Python side of the Rust API comparison (scripts/python-bench.sh), the mirror of
crates/fieldstore/examples/retrieve_into.rs: a new handle retrieves what a request names and
reads it all into one buffer of BUFFER bytes, reused (`Reader.readinto`). Prints the seconds of
each run, from opening the handle to the last byte, as one JSON line.

    python python-retrieve-into.py CONFIG REQUEST BUFFER [RUNS]
"""

import json
import sys
import time
from pathlib import Path

import fieldstore

config, request, size = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
buffer = bytearray(size)
seconds = []
for _ in range(runs):
    started = time.perf_counter()
    reader = fieldstore.FieldStore(config).retrieve(request)
    read = 0
    while n := reader.readinto(buffer):
        read += n
    seconds.append(time.perf_counter() - started)
print(json.dumps({"api": "python", "buffer": size, "bytes": read, "seconds": seconds}))
