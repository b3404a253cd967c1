"""Decoding fields into numbers (`fieldstore._native.decode_values`, `grid`, `coordinates`, and
`FieldStore.decode_entries` for stored fields), proven identical to ecCodes itself (its Python bindings, from PyPI) on a corpus: regular and
reduced grids, GRIB 1 and 2, simple, CCSDS and second-order packing, 1 to 24 bits per value,
bitmaps of missing points."""

from __future__ import annotations

import sys

import eccodes
import numpy as np
import pytest

import fieldstore

from eccodes_fields import eccodes_values  # noqa: E402 - on the path through conftest
from fieldstore import _native

#: (sample, packingType, bitsPerValue, with missing points)
CORPUS = [
    ("regular_ll_pl_grib2", "grid_simple", 16, False),
    ("regular_ll_pl_grib2", "grid_simple", 1, False),
    ("regular_ll_pl_grib2", "grid_simple", 24, True),
    ("regular_ll_sfc_grib1", "grid_simple", 12, True),
    ("reduced_gg_pl_32_grib2", "grid_simple", 16, False),
    ("reduced_gg_pl_48_grib1", "grid_simple", 10, False),
    ("regular_gg_pl_grib2", "grid_ccsds", 16, False),
    ("regular_ll_pl_grib2", "grid_ccsds", 24, True),
    ("reduced_gg_pl_32_grib2", "grid_second_order", 16, False),
]


def make_message(sample: str, packing: str, bits: int, missing: bool, seed: int) -> bytes:
    """A field of `sample`'s grid holding a smooth pattern plus noise, packed as asked."""
    h = eccodes.codes_grib_new_from_samples(sample)
    try:
        n = eccodes.codes_get_size(h, "values")
        rng = np.random.default_rng(seed)
        values = 250 + 30 * np.sin(np.linspace(0, 12, n)) + rng.normal(0, 2, n)
        if missing:
            eccodes.codes_set(h, "bitmapPresent", 1)
            values[rng.choice(n, n // 7, replace=False)] = eccodes.codes_get(h, "missingValue")
        eccodes.codes_set(h, "bitsPerValue", bits)
        eccodes.codes_set_values(h, values)
        if packing != "grid_simple":
            eccodes.codes_set(h, "packingType", packing)
        return bytes(eccodes.codes_get_message(h))
    finally:
        eccodes.codes_release(h)


def reference(message: bytes) -> np.ndarray:
    """ecCodes' values, missing points as NaN."""
    return eccodes_values(message)


@pytest.fixture(scope="module")
def corpus() -> list:
    return [(case, make_message(*case, seed=i)) for i, case in enumerate(CORPUS)]


def test_values_are_ecodes_values_bit_for_bit(corpus):
    for case, message in corpus:
        expected = reference(message)
        got = np.frombuffer(_native.decode_values([message], expected.size, "float64"), dtype="<f8")
        assert np.array_equal(got, expected, equal_nan=True), case
        as_float32 = np.frombuffer(_native.decode_values([message], expected.size, "float32"), dtype="<f4")
        assert np.array_equal(as_float32, expected.astype(np.float32), equal_nan=True), case
        if case[3]:
            assert np.isnan(got).any(), case


def test_many_fields_decode_in_order_on_several_threads(corpus):
    same_grid = [make_message("regular_ll_pl_grib2", "grid_simple", 16, i % 3 == 0, seed=100 + i) for i in range(13)]
    points = reference(same_grid[0]).size
    got = np.frombuffer(_native.decode_values(same_grid, points, "float32"), dtype="<f4").reshape(13, points)
    for row, message in zip(got, same_grid):
        assert np.array_equal(row, reference(message).astype(np.float32), equal_nan=True)


def test_fields_of_another_size_or_not_grib_are_refused_by_index(corpus):
    regular, reduced = corpus[0][1], corpus[4][1]
    points = reference(regular).size
    with pytest.raises(_native.BadRequest, match="message 1:"):
        _native.decode_values([regular, reduced], points)
    with pytest.raises(_native.BadRequest, match="message 0:"):
        _native.decode_values([b"GRIB but not really"], points)
    with pytest.raises(ValueError, match="float32 or float64"):
        _native.decode_values([regular], points, "int8")
    assert _native.decode_values([], points) == b""


def test_grids_give_rows_and_columns_or_every_point(corpus):
    regular = corpus[0][1]
    g = _native.grid(regular)
    h = eccodes.codes_new_from_message(regular)
    try:
        ni, nj = eccodes.codes_get(h, "Ni"), eccodes.codes_get(h, "Nj")
        lats, lons = eccodes.codes_get_array(h, "latitudes"), eccodes.codes_get_array(h, "longitudes")
        identity = eccodes.codes_get(h, "md5GridSection")
    finally:
        eccodes.codes_release(h)
    assert (g["grid_type"], g["points"], g["identity"]) == ("regular_ll", ni * nj, identity)
    assert g["latitudes"] == list(lats[::ni]) and g["longitudes"] == list(lons[:ni])
    reduced = _native.grid(corpus[4][1])
    assert reduced["grid_type"] == "reduced_gg" and reduced["latitudes"] == [] == reduced["longitudes"]
    all_lats, all_lons = (np.frombuffer(b, dtype="<f8") for b in _native.coordinates(corpus[4][1]))
    assert all_lats.size == reduced["points"] == all_lons.size


def test_decode_into_fills_an_array_in_place(corpus):
    if sys.version_info < (3, 11):
        # A build for an older Python has no buffer protocol in its stable ABI: decode_values only.
        assert not hasattr(_native, "decode_into")
        return
    same_grid = [make_message("regular_ll_pl_grib2", "grid_simple", 16, False, seed=200 + i) for i in range(5)]
    points = reference(same_grid[0]).size
    for dtype in ("float32", "float64"):
        out = np.full((5, points), -1.0, dtype=dtype)
        _native.decode_into(same_grid, out, dtype)
        for row, message in zip(out, same_grid):
            assert np.array_equal(row, reference(message).astype(dtype))
    with pytest.raises(ValueError, match="does not hold"):
        _native.decode_into(same_grid, np.empty((5, points + 1), dtype="float32")[:, :-1].copy()[:4], "float32")
    with pytest.raises(TypeError):
        _native.decode_into(same_grid, bytes(5 * points * 8))


def test_fields_of_no_points_are_refused(corpus):
    with pytest.raises(ValueError, match="at least one value"):
        _native.decode_values([corpus[0][1]], 0)


def test_stored_fields_decode_as_their_messages_in_the_order_given(store):
    fields = [make_message("regular_ll_pl_grib2", "grid_simple", 16, i % 3 == 0, seed=300 + i) for i in range(13)]
    base = {"class": "od", "expver": "0001", "stream": "oper", "date": "20240101", "time": "0000", "type": "fc", "levtype": "pl", "levelist": 500, "param": 130}
    for step, message in enumerate(fields):
        store.archive(message, {**base, "step": step})
    store.flush()
    by_step = {int(e.key()["step"]): e for e in store.list({"class": "od", "expver": "0001"})}
    steps = [12, 0, 7, 3, 11, 1, 10, 2, 9, 4, 8, 5, 6]  # not the order they are stored in
    entries = [by_step[s] for s in steps]
    points = reference(fields[0]).size
    got = np.frombuffer(store.decode_entries(entries, points, "float32"), dtype="<f4").reshape(len(steps), points)
    for row, step in zip(got, steps):
        assert np.array_equal(row, reference(fields[step]).astype(np.float32), equal_nan=True), step
    out = np.full((len(steps), points), -1.0)
    assert store.decode_entries(entries, points, "float64", out=out) is None
    for row, step in zip(out, steps):
        assert np.array_equal(row, reference(fields[step]), equal_nan=True), step
    # A field of another size is named by its place in the order given (here on the second thread).
    store.archive(make_message("reduced_gg_pl_32_grib2", "grid_simple", 16, False, seed=1), {**base, "step": 99})
    store.flush()
    other = next(e for e in store.list({"class": "od", "expver": "0001", "step": 99}))
    with pytest.raises(fieldstore.BadRequest, match="message 13:"):
        store.decode_entries(entries + [other], points)
    with pytest.raises(fieldstore.BadRequest, match="depth 3"):
        store.decode_entries(list(store.list({"class": "od", "expver": "0001"}, depth=1)), points)
    store.lock({"class": "od", "expver": "0001", "stream": "oper", "date": "20240101", "time": "0000"}, ["retrieve"])
    with pytest.raises(fieldstore.Locked):
        store.decode_entries(entries, points)
