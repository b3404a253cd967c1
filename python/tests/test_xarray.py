"""`xarray.open_dataset(request, engine="fieldstore")`: dimensions, coordinates and attributes as
cfgrib gives them, values as ecCodes decodes them, lazy reads of only the fields used, NaN for
missing combinations, dask chunks of one field."""

from __future__ import annotations

import sys

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
    # Pressure decreasing (from the ground up), as cfgrib orders it.
    assert list(ds["isobaricInhPa"].values) == [850.0, 500.0] and ds["isobaricInhPa"].attrs["units"] == "hPa"
    assert ds["time"].values == np.datetime64("2024-01-01T00:00")
    assert list(ds["valid_time"].values) == [np.datetime64("2024-01-01T00:00") + np.timedelta64(s, "h") for s in STEPS]
    assert ds["latitude"].values[0] == 60 and ds["latitude"].values[-1] == 0 and ds["longitude"].values[1] == 2
    assert ds["t"].attrs["units"] == "K" and ds["t"].attrs["GRIB_paramId"] == 130 and ds["t"].attrs["standard_name"] == "air_temperature"


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
    corner = ds["t"].sel(step=np.timedelta64(6, "h"), isobaricInhPa=500).isel(latitude=slice(0, 3), longitude=slice(2, 5)).values
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


# cfgrib as the oracle: the same messages opened from a file with `engine="cfgrib"` and from the
# store with `engine="fieldstore"` give the same layout, names, attributes and values; the
# differences docs/python.md names are checked as such.


def _ensemble_field(base: float, number: int, **keys: object) -> bytes:
    """A perturbed member (GRIB2's ensemble product template), as `type=pf` fields are."""
    return sample_field("regular_ll_pl_grib2", base, productDefinitionTemplateNumber=1, typeOfEnsembleForecast=3, number=number, **keys)


def _pressure_levels() -> list:
    """Two parameters at three pressure levels (archived in no particular order) and three
    steps, one combination missing."""
    fields = []
    for level in (850, 1000, 500):
        for step in (12, 0, 6):
            for param in (131, 130):
                if (step, level, param) != (12, 850, 131):
                    data = sample_field("regular_ll_pl_grib2", 200 + param + level / 10 + step, dataDate=20240101, dataTime=0, step=step, level=level, paramId=param)
                    fields.append((data, {**DATASET, "step": step, "levelist": level, "param": param}))
    return fields


def _ensemble() -> list:
    """Three members at two forecast start times, one pressure level (a scalar coordinate)."""
    fields = []
    for date in (20240102, 20240101):
        for number in (3, 1, 2):
            for step in (0, 6):
                data = _ensemble_field(250 + number + step, number, dataDate=date, dataTime=1200, step=step, level=500, paramId=130)
                key = {**DATASET, "stream": "enfo", "type": "pf", "date": str(date), "time": "1200", "number": number, "step": step, "levelist": 500, "param": 130}
                fields.append((data, key))
    return fields


def _surface() -> list:
    """GRIB1 surface fields on a reduced Gaussian grid (the `values` layout): mean sea level
    pressure (at the surface) and 2 m temperature (2 m above ground), whose levels are scalar
    coordinates named by their types."""
    fields = []
    # In paramId order: cfgrib orders variables as the file first has them, fieldstore by paramId.
    for param, base, level in ((151, 101000.0, "typeOfLevel=surface,level=0"), (167, 280.0, "typeOfLevel=heightAboveGround,level=2")):
        for step in (0, 6):
            levels = dict(pair.split("=") for pair in level.split(","))
            data = sample_field("reduced_gg_sfc_grib1", base + step, dataDate=20240101, dataTime=0, step=step, paramId=param, **levels)
            fields.append((data, {**DATASET, "levtype": "sfc", "step": step, "param": param}))
    return fields


def _model_levels() -> list:
    """Humidity and temperature (in that order in the file) on three model levels (`hybrid`) of
    a regular Gaussian grid."""
    fields = []
    for level in (137, 1, 60):
        for param in (133, 130):
            data = sample_field("regular_gg_ml_grib2", 250.0 + level, dataDate=20240101, dataTime=0, step=0, level=level, paramId=param)
            fields.append((data, {**DATASET, "levtype": "ml", "step": 0, "levelist": level, "param": param}))
    return fields


def _one_surface_parameter(sample: str) -> list:
    """2 m temperature at two steps on the grid of ecCodes' `sample`."""
    fields = []
    for step in (0, 6):
        data = sample_field(sample, 280.0 + step, dataDate=20240101, dataTime=0, step=step, paramId=167)
        fields.append((data, {**DATASET, "levtype": "sfc", "step": step, "param": 167}))
    return fields


CFGRIB_CASES = {
    "pressure levels": _pressure_levels,
    "ensemble": _ensemble,
    "surface, GRIB1, reduced Gaussian": _surface,
    "model levels, regular Gaussian": _model_levels,
    # Rows and columns of a projected grid (`y`, `x`) with each point's latitude and longitude.
    "rotated grid": lambda: _one_surface_parameter("rotated_ll_sfc_grib2"),
    "polar stereographic": lambda: _one_surface_parameter("polar_stereographic_sfc_grib2"),
    # Spherical harmonics: `values`, and no latitude or longitude.
    "spectral": lambda: _one_surface_parameter("sh_sfc_grib2"),
}


def _both(tmp_path, fields: list) -> tuple:
    """The fields opened by cfgrib from a file of them and by fieldstore from a store of them."""
    path, config, request = _file_and_store(tmp_path, fields)
    # cfgrib writes an index file next to the data unless told not to.
    by_cfgrib = xarray.open_dataset(path, engine="cfgrib", backend_kwargs={"indexpath": ""})
    return by_cfgrib, xarray.open_dataset(request, engine="fieldstore", config=config)


def _file_and_store(tmp_path, fields: list) -> tuple:
    """A file of the fields, a store of them, and the request that names them all."""
    path = tmp_path / "fields.grib"
    path.write_bytes(b"".join(data for data, _ in fields))
    config = posix_config(tmp_path / "store")
    with fieldstore.FieldStore(config) as fs:
        for data, key in fields:
            fs.archive(data, key)
    request: dict = {}
    for _, key in fields:
        for k, v in key.items():
            request.setdefault(k, [])
            if v not in request[k]:
                request[k].append(v)
    return path, config, request


def _same_attributes(got: dict, expected: dict, what: str) -> None:
    """Attributes equal in value and type (arrays element by element)."""
    assert sorted(got) == sorted(expected), what
    for name, value in expected.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(got[name], value), (what, name)
        else:
            assert (got[name], type(got[name])) == (value, type(value)), (what, name)


@pytest.mark.parametrize("case", CFGRIB_CASES)
def test_the_layout_is_cfgribs_for_the_same_messages(tmp_path, case):
    by_cfgrib, by_fieldstore = _both(tmp_path, CFGRIB_CASES[case]())
    # cfgrib's names (t2m for 2t); in paramId order, where cfgrib's is the file's (documented).
    assert list(by_fieldstore.data_vars) == sorted(by_cfgrib.data_vars, key=lambda name: by_cfgrib[name].attrs["GRIB_paramId"])
    assert dict(by_fieldstore.sizes) == dict(by_cfgrib.sizes)
    assert list(by_fieldstore.coords) == list(by_cfgrib.coords)
    for name, expected in by_cfgrib.variables.items():
        got = by_fieldstore[name].variable
        assert got.dims == expected.dims, name
        assert got.dtype == expected.dtype, name
        if name not in by_cfgrib.data_vars:
            # Coordinates in cfgrib's order: pressure decreasing, the rest increasing.
            if name in ("latitude", "longitude") and got.dims != (name,):
                # Each point's, computed by ecCodes: cfgrib's (ecCodes' Python wheel) switches to
                # eckit's geometry once earthkit-data is imported (it sets ECCODES_ECKIT_GEO),
                # which places rotated points a few millionths of a degree apart.
                assert np.allclose(got.values, expected.values, rtol=0, atol=1e-5), name
            else:
                assert np.array_equal(got.values, expected.values), name
            expected_attrs = dict(expected.attrs)
            if name == "step":
                # cfgrib's hint for decoding its hours (`dtype: timedelta64[ns]`): older xarray
                # (2024.7, Python 3.9's) leaves it among the attributes, newer takes it away.
                expected_attrs.pop("dtype", None)
            _same_attributes(got.attrs, expected_attrs, name)
    if case == "surface, GRIB1, reduced Gaussian":
        # Each surface parameter's level, named by its type.
        assert float(by_fieldstore["surface"]) == 0 and float(by_fieldstore["heightAboveGround"]) == 2


@pytest.mark.parametrize("case", CFGRIB_CASES)
def test_variables_attributes_are_cfgribs_but_no_standard_name_unknown(tmp_path, case):
    by_cfgrib, by_fieldstore = _both(tmp_path, CFGRIB_CASES[case]())
    for name, variable in by_cfgrib.data_vars.items():
        expected = dict(variable.attrs)
        # cfgrib copies a parameter's cfName into standard_name even when ecCodes has none for
        # it ("unknown", which is no CF standard name): fieldstore leaves it out (documented).
        if expected.get("standard_name") == "unknown":
            del expected["standard_name"]
        _same_attributes(by_fieldstore[name].attrs, expected, name)
    if case == "surface, GRIB1, reduced Gaussian":
        # GRIB1's 2t has no CF name in ecCodes: the one difference, seen.
        assert by_cfgrib["t2m"].attrs["standard_name"] == "unknown" and by_fieldstore["t2m"].attrs["GRIB_cfName"] == "unknown"
        assert "standard_name" not in by_fieldstore["t2m"].attrs


@pytest.mark.parametrize("case", CFGRIB_CASES)
def test_dataset_attributes_are_cfgribs_with_the_request_for_history(tmp_path, case):
    by_cfgrib, by_fieldstore = _both(tmp_path, CFGRIB_CASES[case]())
    expected = {k: v for k, v in by_cfgrib.attrs.items() if k != "history"}
    got = {k: v for k, v in by_fieldstore.attrs.items() if k not in ("history", "fieldstore_request")}
    _same_attributes(got, expected, "dataset")
    assert by_fieldstore.attrs["institution"] == "European Centre for Medium-Range Weather Forecasts"
    # cfgrib's history says what read which file; fieldstore's, what read which request.
    assert "GRIB to CDM+CF via fieldstore-" in by_fieldstore.attrs["history"]
    assert by_fieldstore.attrs["fieldstore_request"] in by_fieldstore.attrs["history"]


@pytest.mark.parametrize("case", CFGRIB_CASES)
def test_values_are_cfgribs_missing_fields_nan_in_both(tmp_path, case):
    by_cfgrib, by_fieldstore = _both(tmp_path, CFGRIB_CASES[case]())
    for name in by_cfgrib.data_vars:
        expected = by_cfgrib[name].values
        assert np.array_equal(by_fieldstore[name].values, expected, equal_nan=True), name
    if case == "pressure levels":
        # The combination never stored is NaN in both.
        assert np.isnan(by_cfgrib["u"].sel(step=np.timedelta64(12, "h"), isobaricInhPa=850).values).all()


def test_without_eccodes_python_bindings_attributes_are_ecodes_text_of_each_key(tmp_path, monkeypatch):
    """fieldstore needs no ecCodes Python bindings (cfgrib does): without them, the numbers
    among the `GRIB_*` attributes come from ecCodes' text of each key, as docs/python.md says:
    to six significant digits, `stepUnits` as its text."""
    path, config, request = _file_and_store(tmp_path, _pressure_levels())
    by_cfgrib = xarray.open_dataset(path, engine="cfgrib", backend_kwargs={"indexpath": ""})
    monkeypatch.setitem(sys.modules, "eccodes", None)  # `import eccodes` raises ImportError
    with pytest.raises(ImportError):
        import eccodes  # noqa: F401
    by_fieldstore = xarray.open_dataset(request, engine="fieldstore", config=config)
    for name in by_cfgrib.data_vars:
        got, expected = by_fieldstore[name].attrs, by_cfgrib[name].attrs
        assert sorted(got) == sorted(expected), name
        for key, value in expected.items():
            if key == "GRIB_stepUnits":
                assert (value, got[key]) == (1, "h")
            elif isinstance(value, float):
                assert got[key] == pytest.approx(value, rel=1e-5), key
            else:
                assert (got[key], type(got[key])) == (value, type(value)), key
    assert by_fieldstore.attrs["institution"] == by_cfgrib.attrs["institution"]


def test_parameters_at_different_levels_of_one_type_both_open_without_that_level(tmp_path):
    """10 m wind and 2 m temperature are both `heightAboveGround`, at 10 and 2: cfgrib keeps
    the first and drops the other (logging the clash); fieldstore keeps both and leaves out
    the one scalar coordinate they cannot share (docs/python.md)."""
    fields = []
    for param, height in ((165, 10), (167, 2)):
        for step in (0, 6):
            data = sample_field("reduced_gg_sfc_grib1", 280.0 + step, dataDate=20240101, dataTime=0, step=step, paramId=param, typeOfLevel="heightAboveGround", level=height)
            fields.append((data, {**DATASET, "levtype": "sfc", "step": step, "param": param}))
    by_cfgrib, by_fieldstore = _both(tmp_path, fields)
    assert list(by_cfgrib.data_vars) == ["u10"] and float(by_cfgrib["heightAboveGround"]) == 10
    assert list(by_fieldstore.data_vars) == ["u10", "t2m"] and "heightAboveGround" not in by_fieldstore.coords
    assert np.array_equal(by_fieldstore["u10"].values, by_cfgrib["u10"].values)
    assert by_fieldstore["t2m"].attrs["GRIB_typeOfLevel"] == "heightAboveGround"


def test_a_keyword_cfgrib_does_not_index_is_a_dimension(tmp_path):
    """Two experiments' fields differ only in `expver`, which cfgrib does not index: it reads
    the first message of each combination, fieldstore an `expver` dimension (docs/python.md)."""
    fields = []
    for expver, base in (("0001", 100.0), ("0002", 200.0)):
        data = sample_field("regular_ll_pl_grib1", base, dataDate=20240101, dataTime=0, step=0, level=500, paramId=130, experimentVersionNumber=expver)
        fields.append((data, {**DATASET, "expver": expver, "step": 0, "levelist": 500, "param": 130}))
    by_cfgrib, by_fieldstore = _both(tmp_path, fields)
    assert by_cfgrib["t"].dims == ("latitude", "longitude")
    assert np.array_equal(by_cfgrib["t"].values, values(fields[0][0]).astype(np.float32))
    assert by_fieldstore["t"].dims == ("expver", "latitude", "longitude") and list(by_fieldstore["expver"].values) == ["0001", "0002"]
    for expver, (data, _) in zip(("0001", "0002"), fields):
        assert np.array_equal(by_fieldstore["t"].sel(expver=expver).values, values(data).astype(np.float32)), expver
