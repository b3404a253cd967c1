"""Times list and retrieve through Python, for side-by-side comparison (scripts/python-bench.sh):

    python python-bench.py API ROOT SCHEMA NSTEPS NLEVELS NPARAMS FIELD_BYTES

API is `pyfdb` (pyfdb 5.25 itself), `fieldstore.pyfdb` (fieldstore's pyfdb layer) or
`fieldstore` (fieldstore's own API). Archives NSTEPS x NLEVELS x NPARAMS fields of FIELD_BYTES
under explicit keys into a new store under ROOT (FDB5's configuration format, SCHEMA), one
flush per step; then, with a new handle each time, lists them all and retrieves them all in one
request, reading every byte (pyfdb's API: one `read` of the handle's size; fieldstore's own:
field by field), three times. Prints one JSON line: the best and worst seconds of
each phase, and the fields and bytes each found."""

from __future__ import annotations

import importlib
import json
import sys
import time

api, root, schema = sys.argv[1], sys.argv[2], sys.argv[3]
nsteps, nlevels, nparams, size = (int(a) for a in sys.argv[4:8])

config = {"type": "local", "engine": "toc", "schema": schema, "spaces": [{"handler": "Default", "roots": [{"path": root}]}]}
base = {"class": "od", "expver": "0001", "stream": "oper", "date": "20231201", "time": "1200", "domain": "g", "type": "fc", "levtype": "pl"}
steps, levels, params = list(range(nsteps)), [str(100 * (l + 1)) for l in range(nlevels)], [str(p + 129) for p in range(nparams)]
selection = {**base, "step": [str(s) for s in steps], "levelist": levels, "param": params}
payload = bytes(i % 251 for i in range(size))

if api == "fieldstore":
    import fieldstore

    def handle():
        return fieldstore.FieldStore(config)

    def archive(h, key):
        h.archive(payload, key)

    def list_all(h):
        return sum(1 for _ in h.list(selection))

    def retrieve_all(h):
        # Field by field, as an application does (bytes of each field in turn, no buffer of
        # the whole retrieve).
        return sum(len(data) for _, data in h.retrieve(selection))

else:
    pyfdb = importlib.import_module(api)

    def handle():
        return pyfdb.FDB(config)

    def archive(h, key):
        h.archive(payload, key)

    def list_all(h):
        return sum(1 for _ in h.list(selection, level=3))

    def retrieve_all(h):
        with h.retrieve(selection) as data:
            return len(data.read(data.size()))


writer = handle()
for step in steps:
    for level in levels:
        for param in params:
            archive(writer, {**base, "step": str(step), "levelist": level, "param": param})
    writer.flush()


def timed(phase):
    started = time.perf_counter()
    found = phase(handle())
    return time.perf_counter() - started, found


runs = {"list": [timed(list_all) for _ in range(3)], "retrieve": [timed(retrieve_all) for _ in range(3)]}
report = {"api": api, "fields": nsteps * nlevels * nparams, "field_bytes": size}
for phase, results in runs.items():
    seconds = sorted(s for s, _ in results)
    report[phase] = {"best": seconds[0], "worst": seconds[-1], "found": results[0][1]}
print(json.dumps(report))
