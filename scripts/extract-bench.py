"""The extraction benchmark's steps (scripts/extract-bench.sh runs them, each in the environment
of the system it measures):

    python extract-bench.py make DIR NFIELDS                  # DIR/{simple,ccsds}.grib, DIR/requests.json
    python extract-bench.py archive-fieldstore DIR PACKING CONFIG
    python extract-bench.py read SYSTEM DIR PACKING POINTS CONFIG   # one timed extraction, a new process
    python extract-bench.py keep-cost DIR PACKING             # what keeping packings costs

The fields: NFIELDS steps of one 2-metre temperature on ecCodes' O320-style reduced Gaussian grid (ecCodes' `reduced_gg_pl_320_grib2`)
(542,080 points): 1.08 MB each with simple packing at 16 bits per value (`simple`), 1.07 MB
with CCSDS at 20 (`ccsds`). Ten value patterns repeat over the steps. Each read takes the
same 10 points from every field: spread over the globe (`spread`), or a box of 5 x 2 points
around one place (`box`, a city's time series).

SYSTEM is `fieldstore-gribjump` (fieldstore.gribjump's `extract` of one request per field,
their packings kept by `fieldstore scan`), `pygribjump` (ECMWF's pygribjump 0.13 over FDB5
5.25, after gribjump-scan) or `retrieve-decode` (fieldstore's retrieve of the fields, whole,
and ecCodes' decoding of each, the points taken from its values). A read prints one JSON line:
the seconds from opening to the last value, the bytes read where the system says, and a
checksum of the values (the same for every system: they read the same points)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

DATASET = {"class": "od", "expver": "0001", "stream": "oper", "date": "20240101", "time": "0000", "domain": "g", "type": "fc", "levtype": "sfc"}
PARAM = {"simple": "167", "ccsds": "165"}
#: Bits per value: fields of about 1 MiB either way (1.08 MB simple, 1.07 MB CCSDS).
BITS = {"simple": 16, "ccsds": 20}
#: The points taken from each field: ten spread over the globe (a range each, as gribjump's
#: `from_indices` makes them), or a box of 5 x 2 around one place (two rows of the grid).
POINT_SETS = {
    "spread": [(p, p + 1) for p in (7, 1000, 52_345, 100_000, 150_001, 210_560, 275_000, 333_333, 421_119, 542_079)],
    "box": [(210_560, 210_565), (211_840, 211_845)],
}


def make(out: Path, nfields: int) -> None:
    import eccodes

    h = eccodes.codes_grib_new_from_samples("reduced_gg_pl_320_grib2")
    eccodes.codes_set_key_vals(h, "centre=98,setLocalDefinition=1,localDefinitionNumber=1")
    eccodes.codes_set_key_vals(h, "class=od,stream=oper,type=fc,expver=0001,dataDate=20240101,dataTime=0,typeOfFirstFixedSurface=1")
    n = eccodes.codes_get_size(h, "values")
    rng = np.random.default_rng(45)
    patterns = [250 + 30 * np.sin(np.linspace(0, 40 + k, n)) + rng.normal(0, 1, n) for k in range(10)]
    grid_hash = eccodes.codes_get(h, "md5GridSection")
    for packing in ("simple", "ccsds"):
        templates = []
        for pattern in patterns:
            eccodes.codes_set(h, "packingType", "grid_simple")
            eccodes.codes_set(h, "bitsPerValue", BITS[packing])
            eccodes.codes_set(h, "paramId", int(PARAM[packing]))
            eccodes.codes_set_values(h, pattern)
            if packing == "ccsds":
                eccodes.codes_set(h, "packingType", "grid_ccsds")
            templates.append(bytes(eccodes.codes_get_message(h)))
        with open(out / f"{packing}.grib", "wb") as f:
            for step in range(nfields):
                one = eccodes.codes_new_from_message(templates[step % len(templates)])
                eccodes.codes_set(one, "step", step)
                f.write(eccodes.codes_get_message(one))
                eccodes.codes_release(one)
    eccodes.codes_release(h)
    (out / "requests.json").write_text(json.dumps({"nfields": nfields, "hash": grid_hash}))


def requests(out: Path, packing: str, points: str) -> tuple:
    spec = json.loads((out / "requests.json").read_text())
    ranges = POINT_SETS[points]
    fields = [{**DATASET, "step": str(step), "param": PARAM[packing]} for step in range(spec["nfields"])]
    return fields, ranges, spec["hash"]


def archive_fieldstore(out: Path, packing: str, config: str) -> None:
    import fieldstore

    fs = fieldstore.FieldStore(config)
    fs.archive((out / f"{packing}.grib").read_bytes())
    fs.flush()
    dataset = ",".join(f"{k}={v}" for k, v in DATASET.items() if k in ("class", "expver", "stream", "date", "time", "domain"))
    print(json.dumps({"kept": fs.keep_packings(dataset)}), file=sys.stderr)


def keep_cost(out: Path, packing: str) -> None:
    """Archive and flush of DIR/PACKING.grib into a new POSIX store under DIR (FDB5's schema),
    without and with `extract: {keep_packings: true}`, and a scan (`keep_packings`) of the
    store archived without: one JSON line of seconds each."""
    import shutil

    import fieldstore

    schema = Path(__file__).resolve().parents[2] / "shared" / "fdb5" / "schema"
    data = (out / f"{packing}.grib").read_bytes()
    dataset = ",".join(f"{k}={v}" for k, v in DATASET.items() if k in ("class", "expver", "stream", "date", "time", "domain"))
    seconds = {}
    for keep in (False, True):
        root = out / f"keep-cost-{keep}"
        shutil.rmtree(root, ignore_errors=True)
        config = {"schema": str(schema), "catalogue": {"type": "posix", "root": str(root), "create": True}, "store": {"type": "posix", "root": str(root), "create": True}}
        if keep:
            config["extract"] = {"keep_packings": True}
        fs = fieldstore.FieldStore(config)
        started = time.perf_counter()
        fs.archive(data)
        fs.flush()
        seconds["keep_packings" if keep else "archive"] = time.perf_counter() - started
        if not keep:
            started = time.perf_counter()
            fs.keep_packings(dataset)
            seconds["scan"] = time.perf_counter() - started
        shutil.rmtree(root)
    print(json.dumps({"packing": packing, **seconds}))


def read(system: str, out: Path, packing: str, points: str, config: str) -> None:
    fields, ranges, grid_hash = requests(out, packing, points)
    started = time.perf_counter()
    bytes_read = None
    if system in ("fieldstore-gribjump", "pygribjump"):
        if system == "pygribjump":
            import pygribjump as module

            gj = module.GribJump()
        else:
            from fieldstore import gribjump as module

            gj = module.GribJump(config)
        results = list(gj.extract([(field, ranges, grid_hash) for field in fields]))
        values = np.concatenate([r.values_flat for r in results])
        if system == "fieldstore-gribjump":
            bytes_read = sum(r.bytes_read for r in results)
    elif system == "retrieve-decode":
        import eccodes

        import fieldstore

        fs = fieldstore.FieldStore(config)
        request = {**DATASET, "step": [f["step"] for f in fields], "param": PARAM[packing]}
        data = fs.retrieve(request).read()
        taken, at = [], 0
        while at < len(data):
            length = int.from_bytes(data[at + 8 : at + 16], "big")
            h = eccodes.codes_new_from_message(data[at : at + length])
            decoded = eccodes.codes_get_values(h)
            taken.append(np.concatenate([decoded[lo:hi] for lo, hi in ranges]))
            eccodes.codes_release(h)
            at += length
        values = np.concatenate(taken)
        bytes_read = len(data)
    else:
        raise SystemExit(f"unknown system {system}")
    seconds = time.perf_counter() - started
    assert values.size == len(fields) * sum(hi - lo for lo, hi in ranges), values.size
    print(json.dumps({"system": system, "packing": packing, "points": points, "seconds": seconds, "bytes_read": bytes_read, "sum": float(np.sum(values))}))


if __name__ == "__main__":
    step, args = sys.argv[1], sys.argv[2:]
    if step == "make":
        make(Path(args[0]), int(args[1]))
    elif step == "archive-fieldstore":
        archive_fieldstore(Path(args[0]), args[1], args[2])
    elif step == "keep-cost":
        keep_cost(Path(args[0]), args[1])
    elif step == "read":
        read(args[0], Path(args[1]), args[2], args[3], args[4])
    else:
        raise SystemExit(__doc__)
