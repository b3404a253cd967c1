"""`FieldStore.extract`: grid points of stored fields, reading only the bytes that hold them,
every value ecCodes' own (its Python bindings from PyPI) on the decode tests' corpus: GRIB 1
and 2, simple and CCSDS packing read natively, second-order decoded whole, bitmaps."""

from __future__ import annotations

import numpy as np
import pytest

import fieldstore
from conftest import posix_config
from test_decode import CORPUS, make_message, reference  # noqa: E402 - on the path through conftest

REQUEST = "class=od,expver=0001,stream=oper,date=20240101,time=0000,domain=g,type=fc,levtype=sfc,step=0"


@pytest.fixture
def filled(store: fieldstore.FieldStore) -> list:
    """The corpus archived as params 1, 2, ...: (param, case, message)."""
    fields = []
    for i, case in enumerate(CORPUS):
        message = make_message(*case, seed=300 + i)
        store.archive(message, key=f"{REQUEST},param={i + 1}")
        fields.append((i + 1, case, message))
    store.flush()
    return fields


def test_every_extracted_point_is_ecodes_value(store, filled):
    for param, case, message in filled:
        expected = reference(message)
        n = expected.size
        ranges = [(0, 1), (n - 1, n), (n // 3, n // 3 + 50), (7, 9)]
        (got,) = store.extract(f"{REQUEST},param={param}", ranges=ranges)
        assert got.key["param"] == str(param)
        for (start, end), values, mask in zip(ranges, got.values, got.masks):
            assert np.array_equal(values, expected[start:end], equal_nan=True), (case, start, end)
            assert np.array_equal(mask, ~np.isnan(expected[start:end])), case
        assert got.decoded_whole == (case[1] == "grid_second_order"), case


def test_once_its_packing_is_known_a_field_reads_only_the_bytes_asked(store):
    for i, packing in enumerate(["grid_simple", "grid_ccsds"]):
        message = make_message("reduced_gg_pl_320_grib2", packing, 16, False, seed=400 + i)
        store.archive(message, key=f"{REQUEST},param={100 + i}")
        store.flush()
        request = f"{REQUEST},param={100 + i}"
        points = [5, 6, 200_000]
        first = store.extract(request, indices=points)[0]
        again = store.extract(request, indices=points)[0]
        assert first.bytes_read >= len(message) > 20 * again.bytes_read, (packing, first.bytes_read, again.bytes_read)
        assert [v.size for v in again.values] == [2, 1]
        assert np.array_equal(np.concatenate(again.values), reference(message)[points], equal_nan=True), packing


def test_packings_kept_at_archive_let_a_new_handle_read_only_the_bytes_asked(root):
    config = {**posix_config(root), "extract": {"keep_packings": True}}
    writer = fieldstore.FieldStore(config)
    messages = {}
    for i, packing in enumerate(["grid_simple", "grid_ccsds"]):
        messages[100 + i] = make_message("reduced_gg_pl_320_grib2", packing, 16, False, seed=500 + i)
        writer.archive(messages[100 + i], key=f"{REQUEST},param={100 + i}")
    writer.flush()
    reader = fieldstore.FieldStore(posix_config(root))
    points = [5, 6, 200_000]
    for param, message in messages.items():
        (got,) = reader.extract(f"{REQUEST},param={param}", indices=points)
        assert len(message) > 20 * got.bytes_read, (param, got.bytes_read)
        assert np.array_equal(np.concatenate(got.values), reference(message)[points], equal_nan=True), param


def test_a_mask_names_points_and_many_fields_answer_each(store, filled):
    n = reference(filled[0][2]).size
    mask = np.zeros(n, dtype=bool)
    mask[[3, 4, 10]] = True
    got = store.extract(f"{REQUEST},param=1/2/3", mask=mask)
    assert [g.key["param"] for g in got] == ["1", "2", "3"]
    for g, (_, _, message) in zip(got, filled):
        assert np.array_equal(np.concatenate(g.values), reference(message)[[3, 4, 10]], equal_nan=True)


def test_bad_extractions_say_what_is_wrong(store, filled):
    with pytest.raises(fieldstore.BadRequest, match="beyond the field"):
        store.extract(f"{REQUEST},param=1", ranges=[(0, 10**9)])
    with pytest.raises(fieldstore.BadRequest, match="one of ranges, indices or mask"):
        store.extract(f"{REQUEST},param=1", ranges=[(0, 1)], indices=[3])
    with pytest.raises(fieldstore.NotFound, match="nothing matched"):
        store.extract(f"{REQUEST},param=99", ranges=[(0, 1)])
