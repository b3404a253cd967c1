"""The array entry points on more of the corpus: an ensemble on a reduced Gaussian grid (dims
`number, step, values`, coordinates per point), model levels (`hybrid`), several forecast
start times (`time`, a 2-D `valid_time`), each checked against ecCodes' values."""

from __future__ import annotations

import numpy as np
import pytest
import xarray

import fieldstore
from conftest import posix_config  # noqa: E402 - pytest puts the tests' directory on the path
from eccodes_fields import eccodes_values, sample_field  # noqa: E402 - on the path through conftest

BASE = {"class": "od", "expver": "0001", "stream": "enfo", "domain": "g", "type": "pf"}


@pytest.fixture(scope="module")
def ensemble(tmp_path_factory) -> tuple:
    """3 members x 2 steps of a reduced Gaussian field; member 2 at step 6 missing."""
    config = posix_config(tmp_path_factory.mktemp("ens"))
    messages = {}
    with fieldstore.FieldStore(config) as fs:
        for number in (1, 2, 3):
            for step in (0, 6):
                if (number, step) == (2, 6):
                    continue
                data = sample_field("reduced_gg_pl_32_grib2", 100 + number * 10 + step, dataDate=20240101, dataTime=1200, step=step, level=500)
                messages[number, step] = data
                fs.archive(data, {**BASE, "date": 20240101, "time": 1200, "levtype": "pl", "levelist": 500, "param": 130, "number": number, "step": step})
    return config, messages


def test_an_ensemble_on_a_reduced_grid(ensemble):
    config, messages = ensemble
    ds = xarray.open_dataset(ENSEMBLE, engine="fieldstore", config=config, dtype="float64")
    assert ds["t"].dims == ("number", "step", "values")
    assert list(ds["number"].values) == [1, 2, 3] and ds["number"].dtype == np.int64
    assert float(ds["isobaricInhPa"]) == 500.0
    for (number, step), data in messages.items():
        assert np.array_equal(ds["t"].sel(number=number, step=np.timedelta64(step, "h")).values, eccodes_values(data)), (number, step)
    assert np.isnan(ds["t"].sel(number=2, step=np.timedelta64(6, "h")).values).all()


@pytest.fixture(scope="module")
def model_levels(tmp_path_factory) -> tuple:
    """Model levels 1, 2 and 137 at two start times and two steps, on a regular grid."""
    config = posix_config(tmp_path_factory.mktemp("ml"))
    messages = {}
    with fieldstore.FieldStore(config) as fs:
        for time in (0, 1200):
            for step in (0, 6):
                for level in (1, 2, 137):
                    data = sample_field("regular_ll_pl_grib2", 100 + time / 100 + step + level, dataDate=20240101, dataTime=time, step=step)
                    messages[time, step, level] = data
                    key = {**BASE, "stream": "oper", "type": "fc", "date": 20240101, "time": time, "levtype": "ml", "levelist": level, "param": 130, "step": step}
                    fs.archive(data, key)
    return config, messages


#: What the `model_levels` fixture holds.
MODEL_LEVELS = {"class": "od", "expver": "0001", "stream": "oper", "date": 20240101, "time": [0, 1200], "domain": "g", "type": "fc", "levtype": "ml",
                "levelist": [1, 2, 137], "param": 130, "step": [0, 6]}
#: What the `ensemble` fixture holds.
ENSEMBLE = {**BASE, "date": 20240101, "time": 1200, "levtype": "pl", "levelist": 500, "param": 130, "number": [1, 2, 3], "step": [0, 6]}


def test_model_levels_and_several_start_times(model_levels):
    config, messages = model_levels
    ds = xarray.open_dataset(MODEL_LEVELS, engine="fieldstore", config=config, dtype="float64")
    assert ds["t"].dims == ("time", "step", "hybrid", "latitude", "longitude")
    assert ds["valid_time"].dims == ("time", "step")
    assert ds["valid_time"].values[1, 1] == np.datetime64("2024-01-01T18:00")
    got = ds["t"].sel(time=np.datetime64("2024-01-01T12:00"), step=np.timedelta64(6, "h"), hybrid=137).values
    assert np.array_equal(got.ravel(), eccodes_values(messages[1200, 6, 137]))
