"""`xarray.open_dataset(request, engine="fieldstore")`: dimensions, coordinates and attributes as
cfgrib gives them, values as ecCodes decodes them, lazy reads of only the fields used, NaN for
missing combinations, dask chunks of one field."""

from __future__ import annotations

import eccodes
import numpy as np
import pytest
import xarray

import fieldstore
from conftest import posix_config  # noqa: E402 - pytest puts the tests' directory on the path
from eccodes_fields import eccodes_values, sample_field  # noqa: E402 - on the path through conftest
from fieldstore.arrays import cube as cube_module

STEPS, LEVELS, PARAMS = (0, 6, 12), (500, 850), ((130, "t"), (131, "u"))
#: One combination not stored: read as NaN.
MISSING = (12, 850, 131)
DATASET = {"class": "od", "expver": "0001", "stream": "oper", "date": "20240101", "time": "0000", "domain": "g", "type": "fc", "levtype": "pl"}


def message(step: int, level: int, param: int) -> bytes:
    keys = {"dataDate": 20240101, "dataTime": 0, "step": step, "level": level, "paramId": param}
    return sample_field("regular_ll_pl_grib2", 200 + param + level / 10 + step, **keys)


def values(data: bytes) -> np.ndarray:
    return eccodes_values(data, as_grid=True)


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple:
    config = posix_config(tmp_path_factory.mktemp("store"))
    messages = {}
    with fieldstore.FieldStore(config) as fs:
        for step in STEPS:
            for level in LEVELS:
                for param, _ in PARAMS:
                    if (step, level, param) == MISSING:
                        continue
                    messages[step, level, param] = message(step, level, param)
                    key = {**DATASET, "step": step, "levelist": level, "param": param}
                    fs.archive(messages[step, level, param], key)
    return config, messages


REQUEST = {**DATASET, "step": list(STEPS), "levelist": list(LEVELS), "param": [p for p, _ in PARAMS]}


def test_dimensions_coordinates_and_attributes_are_cfgribs(stored):
    config, _ = stored
    ds = xarray.open_dataset(REQUEST, engine="fieldstore", config=config)
    assert set(ds.data_vars) == {"t", "u"}
    assert ds["t"].dims == ("step", "isobaricInhPa", "latitude", "longitude")
    assert ds["t"].dtype == np.float32
    assert list(ds["step"].values) == [np.timedelta64(s, "h") for s in STEPS]
    assert list(ds["isobaricInhPa"].values) == [500.0, 850.0] and ds["isobaricInhPa"].attrs["units"] == "hPa"
    assert ds["time"].values == np.datetime64("2024-01-01T00:00")
    assert list(ds["valid_time"].values) == [np.datetime64("2024-01-01T00:00") + np.timedelta64(s, "h") for s in STEPS]
    assert ds["latitude"].values[0] == 60 and ds["latitude"].values[-1] == 0 and ds["longitude"].values[1] == 2
    assert ds["t"].attrs["units"] == "K" and ds["t"].attrs["GRIB_paramId"] == "130" and ds["t"].attrs["standard_name"] == "air_temperature"


def test_values_are_ecodes_values_and_missing_fields_are_nan(stored):
    config, messages = stored
    ds = xarray.open_dataset(REQUEST, engine="fieldstore", config=config, dtype="float64")
    for (step, level, param), data in messages.items():
        name = dict(PARAMS)[param]
        got = ds[name].sel(step=np.timedelta64(step, "h"), isobaricInhPa=level).values
        assert np.array_equal(got, values(data)), (step, level, param)
    missing = ds["u"].sel(step=np.timedelta64(12, "h"), isobaricInhPa=850).values
    assert np.isnan(missing).all()
    # A slice of the grid reads the same fields and cuts them.
    corner = ds["t"].isel(step=1, isobaricInhPa=0, latitude=slice(0, 3), longitude=slice(2, 5)).values
    assert np.array_equal(corner, values(messages[6, 500, 130])[0:3, 2:5])


def test_nothing_is_read_until_values_are_used_and_then_only_those(stored, monkeypatch):
    config, _ = stored
    reads = []
    for method in ("read_entries", "decode_entries"):
        real = getattr(fieldstore.FieldStore, method)
        spy = lambda self, entries, *args, real=real, **kwargs: reads.append(len(entries)) or real(self, entries, *args, **kwargs)
        monkeypatch.setattr(fieldstore.FieldStore, method, spy)
    ds = xarray.open_dataset(REQUEST, engine="fieldstore", config=config)
    assert reads == [2], "opening reads the first field of each parameter only"
    ds["t"].isel(step=2, isobaricInhPa=1).values
    assert reads == [2, 1]
    ds["u"].isel(step=slice(0, 2)).values
    assert reads == [2, 1, 4]


def test_dask_chunks_are_one_field(stored):
    config, messages = stored
    ds = xarray.open_dataset(REQUEST, engine="fieldstore", config=config, chunks={})
    assert ds["t"].chunks[:2] == ((1, 1, 1), (1, 1))
    assert float(ds["t"].sel(step=np.timedelta64(6, "h"), isobaricInhPa=850).mean().compute()) == pytest.approx(
        values(messages[6, 850, 130]).astype(np.float32).mean(), rel=1e-6
    )


def test_a_request_naming_nothing_and_mixed_grids_are_refused(stored, tmp_path):
    config, _ = stored
    with pytest.raises(fieldstore.NothingMatched):
        xarray.open_dataset({**REQUEST, "date": "20000101"}, engine="fieldstore", config=config)
    other = posix_config(tmp_path / "mixed")
    reduced = eccodes.codes_grib_new_from_samples("reduced_gg_pl_32_grib2")
    with fieldstore.FieldStore(other) as fs:
        fs.archive(message(0, 500, 130), {**DATASET, "step": 0, "levelist": 500, "param": 130})
        fs.archive(bytes(eccodes.codes_get_message(reduced)), {**DATASET, "step": 0, "levelist": 500, "param": 131})
    eccodes.codes_release(reduced)
    with pytest.raises(fieldstore.BadRequest, match="different grids"):
        xarray.open_dataset({**DATASET, "step": 0, "levelist": 500, "param": [130, 131]}, engine="fieldstore", config=other)
    assert cube_module.LEVEL_NAMES["pl"] == "isobaricInhPa"


def test_a_pickled_cube_opens_again_only_onto_the_same_fields(tmp_path, monkeypatch):
    import pickle

    from fieldstore.arrays import Cube

    config = posix_config(tmp_path / "store")
    request = {**DATASET, "step": [0, 6], "levelist": 500, "param": 130}
    with fieldstore.FieldStore(config) as fs:
        fs.archive(message(0, 500, 130), {**DATASET, "step": 0, "levelist": 500, "param": 130})
    cube = Cube(config, request)
    blob = pickle.dumps(cube)
    # The grid and names travel with it: a worker does not parse ecCodes' definitions again.
    monkeypatch.setattr(Cube, "_describe", lambda self: pytest.fail("described again"))
    again = pickle.loads(blob)
    assert again.layout() == cube.layout() and again.grid == cube.grid and again.attributes == cube.attributes
    assert np.array_equal(again.read("130", (0,)), cube.read("130", (0,)))
    with fieldstore.FieldStore(config) as fs:
        fs.archive(message(6, 500, 130), {**DATASET, "step": 6, "levelist": 500, "param": 130})
    with pytest.raises(fieldstore.Conflict, match="changed since"):
        pickle.loads(blob)


def test_fields_of_several_level_types_are_refused_by_name_and_each_opens_alone(tmp_path):
    """Surface fields have no level, pressure-level ones do: as cfgrib and earthkit-data, one
    level type at a time."""
    from fieldstore.arrays import Cube

    config = posix_config(tmp_path / "store")
    with fieldstore.FieldStore(config) as fs:
        fs.archive(message(0, 500, 130), {**DATASET, "levtype": "sfc", "step": 0, "param": 130})
        for level in (500, 850):
            fs.archive(message(0, level, 130), {**DATASET, "step": 0, "levelist": level, "param": 130})
    request = {"class": "od", "expver": "0001", "stream": "oper", "date": "20240101", "time": "0000", "step": 0, "param": 130}
    with pytest.raises(fieldstore.BadRequest, match=r"2 level types \(pl, sfc\): open one at a time"):
        Cube(config, request)
    assert Cube(config, {**request, "levtype": "pl"}).dims == ("isobaricInhPa", "latitude", "longitude")
    assert Cube(config, {**request, "levtype": "sfc"}).dims == ("latitude", "longitude")


def test_a_data_set_locked_for_retrieve_is_not_read_through_its_listing(stored, tmp_path):
    config = posix_config(tmp_path / "store")
    dataset = "class=od,expver=0001,stream=oper,date=20240101,time=0000"
    with fieldstore.FieldStore(config) as fs:
        fs.archive(message(0, 500, 130), {**DATASET, "step": 0, "levelist": 500, "param": 130})
    fs = fieldstore.FieldStore(config)
    entries = list(fs.list(DATASET))
    fs.lock(dataset, ["retrieve"])
    with pytest.raises(fieldstore.Locked):
        fs.read_entries(entries)


def test_without_a_config_the_store_is_the_one_the_environment_names_now(tmp_path, monkeypatch):
    from fieldstore.arrays import Cube

    for variable in ("FIELDSTORE_CONFIG", "FDB5_CONFIG_FILE", "FDB5_CONFIG", "FDB_HOME"):
        monkeypatch.delenv(variable, raising=False)
    request = {**DATASET, "step": 0, "levelist": 500, "param": 130}
    for name, base in (("a", 100), ("b", 200)):
        monkeypatch.setenv("FIELDSTORE_ROOT", str(tmp_path / name))
        with fieldstore.FieldStore() as fs:
            fs.archive(sample_field("regular_ll_pl_grib2", base, dataDate=20240101, dataTime=0, step=0, level=500), request)
    for name, base in (("a", 100), ("b", 200), ("a", 100)):
        monkeypatch.setenv("FIELDSTORE_ROOT", str(tmp_path / name))
        assert np.min(Cube(None, request).read("130", ())) == base, name
