"""The read-only Zarr v3 view (`fieldstore.arrays.ZarrStore`): zarr.open_group/open_array and
xarray.open_zarr read it, in cfgrib's layout or over axes and chunks of the caller's choosing
(z3fdb's); values are ecCodes', missing fields NaN, byte ranges served from decoded chunks; it
refuses writes. (zarr-python 3 needs Python 3.11: the test command runs this
file on that build only.)"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import xarray
import zarr
from zarr.abc.store import RangeByteRequest, SuffixByteRequest
from zarr.core.buffer import default_buffer_prototype

import fieldstore
from fieldstore.arrays import Axis, ZarrStore
from test_arrays_corpus import ENSEMBLE, MODEL_LEVELS, ensemble, model_levels  # noqa: F401 - fixtures shared
from eccodes_fields import eccodes_values  # noqa: E402 - on the path through conftest
from test_xarray import LEVELS, MISSING, PARAMS, REQUEST, STEPS, stored, values  # noqa: F401 - the store fixture is shared


def test_zarr_and_xarray_read_the_view(stored):  # noqa: F811
    config, messages = stored
    store = ZarrStore(REQUEST, config=config, dtype="float64")
    group = zarr.open_group(store=store, mode="r")
    assert sorted(group.array_keys()) == ["isobaricInhPa", "latitude", "longitude", "step", "t", "u"]
    t = zarr.open_array(store=store, path="t", mode="r")
    assert t.shape == (3, 2, 31, 16) and t.chunks == (1, 1, 31, 16)
    assert np.array_equal(t[1, 1], values(messages[6, 850, 130]))
    u = group["u"]
    assert np.isnan(u[2, 1]).all(), "a field not stored reads as NaN"
    ds = xarray.open_zarr(store, consolidated=False)
    assert ds["t"].dims == ("step", "isobaricInhPa", "latitude", "longitude")
    assert list(ds["step"].values) == [np.timedelta64(s, "h") for s in (0, 6, 12)]
    assert np.array_equal(ds["u"].sel(step=np.timedelta64(0, "h"), isobaricInhPa=500).values, values(messages[0, 500, 131]))


def test_byte_ranges_existence_and_refused_writes(stored):  # noqa: F811
    config, messages = stored
    store = ZarrStore(REQUEST, config=config, dtype="float64")
    whole = values(messages[0, 500, 130]).astype("<f8").tobytes()
    prototype = default_buffer_prototype()

    async def run():
        key = "t/c/0/0/0/0"
        assert (await store.get(key, prototype)).to_bytes() == whole
        assert (await store.get(key, prototype, RangeByteRequest(8, 24))).to_bytes() == whole[8:24]
        assert (await store.get(key, prototype, SuffixByteRequest(16))).to_bytes() == whole[-16:]
        assert await store.exists(key) and not await store.exists("u/c/2/1/0/0") and not await store.exists("nothing")
        assert await store.get("u/c/2/1/0/0", prototype) is None
        assert await store.get("t/c/9/0/0/0", prototype) is None
        with pytest.raises(PermissionError):
            await store.set(key, prototype.buffer.from_bytes(b"x"))
        listed = [k async for k in store.list_dir("t/c/0")]
        assert listed == ["0", "1"]

    asyncio.run(run())
    assert MISSING == (12, 850, 131)


def test_axes_of_one_keyword_each_give_one_array_as_z3fdb_does(stored):  # noqa: F811
    config, messages = stored
    store = ZarrStore(REQUEST, config=config, dtype="float64", axes=[Axis("param"), Axis("step"), Axis("levelist")])
    data = zarr.open_array(store=store, path="data", mode="r")
    assert data.shape == (2, 3, 2, 31, 16) and data.chunks == (1, 1, 1, 31, 16)
    whole = data[:]
    for p, (param, _) in enumerate(PARAMS):
        for s, step in enumerate(STEPS):
            for lv, level in enumerate(LEVELS):
                if (step, level, param) == MISSING:
                    assert np.isnan(whole[p, s, lv]).all()
                else:
                    assert np.array_equal(whole[p, s, lv], values(messages[step, level, param])), (param, step, level)
    ds = xarray.open_zarr(store, consolidated=False)
    assert ds["data"].dims == ("param", "step", "levelist", "latitude", "longitude")
    assert list(ds["param"].values) == [130, 131] and list(ds["step"].values) == [0, 6, 12]


def test_axes_combine_keywords_and_chunk_several_values_or_the_whole_axis(stored):  # noqa: F811
    config, messages = stored
    axes = [Axis(["param", "levelist"]), Axis("step", chunk=None)]
    store = ZarrStore(REQUEST, config=config, axes=axes, name="fields")
    data = zarr.open_group(store=store, mode="r")["fields"]
    assert data.shape == (4, 3, 31, 16) and data.chunks == (1, 3, 31, 16)
    # (param, levelist) in order: (130, 500), (130, 850), (131, 500), (131, 850); a chunk holds
    # every step of one, the missing one NaN among the others.
    chunk = data[3]
    assert np.isnan(chunk[2]).all()
    assert np.array_equal(chunk[1], values(messages[6, 850, 131]).astype(np.float32))
    ds = xarray.open_zarr(store, consolidated=False)
    assert ds["fields"].dims == ("param_levelist", "step", "latitude", "longitude")
    assert list(ds["levelist"].values) == [500, 850, 500, 850] and ds["param"].dims == ("param_levelist",)
    # Chunks of two steps: the last chunk holds one, the rest of it past the array's end.
    store = ZarrStore(REQUEST, config=config, axes=[Axis(["param", "levelist"]), Axis("step", chunk=2)])
    data = zarr.open_array(store=store, path="data", mode="r")
    assert data.chunks == (1, 2, 31, 16)
    assert np.array_equal(data[0, 2], values(messages[12, 500, 130]).astype(np.float32))
    prototype = default_buffer_prototype()
    assert asyncio.run(store.get("data/c/0/1/0/0", prototype)).to_bytes()[: 31 * 16 * 4] == values(messages[12, 500, 130]).astype("<f4").tobytes()
    assert asyncio.run(store.get("data/c/3/1/0/0", prototype)) is None, "a chunk of no stored field is missing"


def test_axes_that_do_not_fit_the_fields_are_refused_by_name(stored):  # noqa: F811
    config, _ = stored
    cases = [
        ([Axis("param"), Axis("step"), Axis("level")], "'level' is not a keyword"),
        ([Axis("param"), Axis(["step", "param"]), Axis("levelist")], "param in more than one axis"),
        ([Axis("param"), Axis("step")], "several values of levelist, which no axis holds"),
        ([Axis("param"), Axis("step", chunk=0), Axis("levelist")], "the chunk of step is 0"),
    ]
    for axes, message in cases:
        with pytest.raises(fieldstore.BadRequest, match=message):
            ZarrStore(REQUEST, config=config, axes=axes)


def test_the_corpus_through_the_view_an_ensemble_on_a_reduced_grid_and_model_levels(ensemble, model_levels):  # noqa: F811
    config, messages = ensemble
    group = zarr.open_group(store=ZarrStore(ENSEMBLE, config=config, dtype="float64"), mode="r")
    assert group["t"].shape == (3, 2, eccodes_values(messages[1, 0]).size) and list(group["number"][:]) == [1, 2, 3]
    for (number, step), data in messages.items():
        assert np.array_equal(group["t"][number - 1, step // 6], eccodes_values(data)), (number, step)
    assert np.isnan(group["t"][1, 1]).all(), "member 2 at step 6 is not stored"
    config, messages = model_levels
    ds = xarray.open_zarr(ZarrStore(MODEL_LEVELS, config=config, dtype="float64"), consolidated=False)
    assert ds["t"].dims == ("time", "step", "hybrid", "latitude", "longitude")
    got = ds["t"].sel(time=np.datetime64("2024-01-01T12:00"), step=np.timedelta64(6, "h"), hybrid=137).values
    assert np.array_equal(got.ravel(), eccodes_values(messages[1200, 6, 137]))
