"""The read-only Zarr v3 view (`fieldstore.arrays.ZarrStore`): zarr.open_group/open_array and
xarray.open_zarr read it; values are ecCodes', missing fields NaN, byte ranges served from
decoded chunks; it refuses writes. (zarr-python 3 needs Python 3.11: the test command runs this
file on that build only.)"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import xarray
import zarr
from zarr.abc.store import RangeByteRequest, SuffixByteRequest
from zarr.core.buffer import default_buffer_prototype

from fieldstore.arrays import ZarrStore
from test_xarray import MISSING, REQUEST, stored, values  # noqa: F401 - the store fixture is shared


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
