"""The array benchmark's steps (scripts/arrays-bench.sh runs them, each in the environment of the
system it measures):

    python arrays-bench.py make DIR DEGREES NSTEPS NLEVELS NPARAMS   # DIR/fields.grib, DIR/request.json
    python arrays-bench.py archive-fieldstore DIR CONFIG             # fieldstore's Python API
    python arrays-bench.py archive-fdb5 DIR CONFIG                   # pyfdb 5.25
    python arrays-bench.py write-zarr DIR                            # an on-disk Zarr store, zarr-python's defaults
    python arrays-bench.py read SYSTEM DIR CONFIG                    # one timed read of the whole cube

SYSTEM is `fieldstore-zarr` (fieldstore's Zarr view, each parameter's array read whole),
`fieldstore-zarr-axes` (the view over z3fdb's axes, param x step x levelist, one array),
`fieldstore-xarray` (`xarray.open_dataset(..., engine="fieldstore").load()`), `z3fdb` (z3fdb's
store over FDB5, one axis per keyword, a field per chunk), `earthkit-fdb` (earthkit-data's
`from_source("fdb")` over pyfdb, its stream read whole and `to_xarray()` loaded) or `zarr-disk` (the on-disk store). A read
prints one JSON line: the seconds from opening to the last value in memory, and a checksum of
the values (the same for every system: they read the same fields)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import List

import numpy as np

#: Parameters of pressure levels (t, u, v, z, w, vo, d, r): earthkit-data's to_xarray() refuses a
#: variable whose fields have several level types.
PRESSURE_LEVEL_PARAMS = [130, 131, 132, 129, 135, 138, 155, 157]

DATASET = {"class": "od", "expver": "0001", "stream": "oper", "date": "20240101", "time": "0000", "domain": "g", "type": "fc", "levtype": "pl"}


def make(out: Path, degrees: float, nsteps: int, nlevels: int, nparams: int) -> None:
    import eccodes

    ni, nj = int(round(360 / degrees)), int(round(180 / degrees)) + 1
    h = eccodes.codes_grib_new_from_samples("regular_ll_pl_grib2")
    eccodes.codes_set_key_vals(
        h,
        f"Ni={ni},Nj={nj},iDirectionIncrementInDegrees={degrees},jDirectionIncrementInDegrees={degrees},"
        f"latitudeOfFirstGridPointInDegrees=90,latitudeOfLastGridPointInDegrees=-90,"
        f"longitudeOfFirstGridPointInDegrees=0,longitudeOfLastGridPointInDegrees={360 - degrees},dataDate=20240101,dataTime=0",
    )
    steps, levels, params = [6 * s for s in range(nsteps)], [1000 - 90 * i for i in range(nlevels)], PRESSURE_LEVEL_PARAMS[:nparams]
    base = np.sin(np.linspace(0, 40, ni * nj))
    keys = []
    with open(out / "fields.grib", "wb") as f:
        for step in steps:
            for level in levels:
                for param in params:
                    eccodes.codes_set_key_vals(h, f"step={step},level={level},paramId={param}")
                    eccodes.codes_set(h, "bitsPerValue", 16)
                    eccodes.codes_set_values(h, 200 + param / 10 + level / 100 + step + 20 * base)
                    f.write(eccodes.codes_get_message(h))
                    keys.append({**DATASET, "step": str(step), "levelist": str(level), "param": str(param)})
    eccodes.codes_release(h)
    request = {**DATASET, "step": [str(s) for s in steps], "levelist": [str(l) for l in levels], "param": [str(p) for p in params]}
    (out / "keys.json").write_text(json.dumps(keys))
    (out / "request.json").write_text(json.dumps(request))
    (out / "shape.json").write_text(json.dumps({"steps": steps, "levels": levels, "params": params, "nj": nj, "ni": ni}))


def messages(out: Path):
    data = (out / "fields.grib").read_bytes()
    keys = json.loads((out / "keys.json").read_text())
    at = 0
    for key in keys:
        length = int.from_bytes(data[at + 8 : at + 16], "big")
        yield key, data[at : at + length]
        at += length


def archive_fieldstore(out: Path, config: dict) -> None:
    import fieldstore

    with fieldstore.FieldStore(config) as fs:
        for key, message in messages(out):
            fs.archive(message, key)


def archive_fdb5(out: Path, config: dict) -> None:
    import pyfdb

    fdb = pyfdb.FDB(config)
    for key, message in messages(out):
        fdb.archive(message, key)
    fdb.flush()


def write_zarr(out: Path) -> None:
    import eccodes
    import zarr

    shape = json.loads((out / "shape.json").read_text())
    dims = (len(shape["steps"]), len(shape["levels"]), shape["nj"], shape["ni"])
    group = zarr.open_group(str(out / "zarr"), mode="w")
    arrays = {p: group.create_array(str(p), shape=dims, chunks=(1, 1) + dims[2:], dtype="float32") for p in shape["params"]}
    for key, message in messages(out):
        h = eccodes.codes_new_from_message(message)
        values = eccodes.codes_get_values(h).astype(np.float32).reshape(dims[2:])
        eccodes.codes_release(h)
        s, l = shape["steps"].index(int(key["step"])), shape["levels"].index(int(key["levelist"]))
        arrays[int(key["param"])][s, l] = values


#: What each system's read imports.
IMPORTS = {
    "fieldstore-zarr": ["zarr", "fieldstore.arrays.zarr_store"],
    "fieldstore-zarr-axes": ["zarr", "fieldstore.arrays.zarr_store"],
    "fieldstore-xarray": ["xarray", "dask.array", "fieldstore.arrays.xarray_backend"],
    "z3fdb": ["zarr", "z3fdb"],
    "earthkit-fdb": ["earthkit.data", "earthkit.data.sources.fdb", "xarray", "dask.array"],
    "zarr-disk": ["zarr"],
}


def read(system: str, out: Path, config: dict) -> List[np.ndarray]:
    """The cube's values in memory, as the system hands them out (an array per parameter, or
    one array): not stacked, which would time a copy of them all."""
    request = json.loads((out / "request.json").read_text())
    shape = json.loads((out / "shape.json").read_text())
    if system == "fieldstore-zarr":
        import zarr

        from fieldstore.arrays import ZarrStore

        store = ZarrStore(request, config=config)
        group = zarr.open_group(store=store, mode="r")
        return [group[name][:] for name in store.variables]
    if system == "fieldstore-zarr-axes":
        import zarr

        from fieldstore.arrays import Axis, ZarrStore

        # z3fdb's own layout: the same axes as its read below, one array.
        store = ZarrStore(request, config=config, axes=[Axis(k) for k in ("param", "step", "levelist")])
        return [zarr.open_array(store=store, path="data", mode="r")[:]]
    if system == "fieldstore-xarray":
        import xarray

        ds = xarray.open_dataset(request, engine="fieldstore", config=config).load()
        return [ds[name].values for name in ds.data_vars]
    if system == "z3fdb":
        import zarr
        from z3fdb import AxisDefinition, Chunking, ExtractorType, SimpleStoreBuilder

        builder = SimpleStoreBuilder(Path(config))
        axes = [AxisDefinition([k], Chunking.SINGLE_VALUE) for k in ("param", "step", "levelist")]
        builder.add_part({**request, "param": [int(p) for p in request["param"]]}, axes, ExtractorType.GRIB)
        return [zarr.open_array(builder.build(), mode="r")[:]]
    if system == "earthkit-fdb":
        import earthkit.data

        ds = earthkit.data.from_source("fdb", request, config=config).to_fieldlist(read_all=True).to_xarray()
        return [ds[name].values for name in ds.data_vars]
    if system == "zarr-disk":
        import zarr

        group = zarr.open_group(str(out / "zarr"), mode="r")
        return [group[str(p)][:] for p in shape["params"]]
    raise SystemExit(f"unknown system {system}")


def main() -> None:
    command, args = sys.argv[1], sys.argv[2:]
    if command == "make":
        make(Path(args[0]), float(args[1]), *(int(a) for a in args[2:5]))
    elif command == "archive-fieldstore":
        archive_fieldstore(Path(args[0]), json.loads(Path(args[1]).read_text()))
    elif command == "archive-fdb5":
        archive_fdb5(Path(args[0]), json.loads(Path(args[1]).read_text()))
    elif command == "write-zarr":
        write_zarr(Path(args[0]))
    elif command == "read":
        system, out, config_path = args[0], Path(args[1]), Path(args[2])
        config = str(config_path) if system == "z3fdb" else json.loads(config_path.read_text())
        # The libraries imported first, and xarray's list of backends made: the timing is of the
        # reading, not of Python's imports or xarray's plugin discovery.
        for module in IMPORTS[system]:
            __import__(module)
        if "xarray" in IMPORTS[system]:
            import xarray

            xarray.backends.list_engines()
        started = time.perf_counter()
        values = read(system, out, config)
        seconds = time.perf_counter() - started
        shapes = [list(v.shape) for v in values]
        total = sum(float(np.nansum(v.astype(np.float64))) for v in values)
        print(json.dumps({"system": system, "seconds": seconds, "shapes": shapes, "sum": total}))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
