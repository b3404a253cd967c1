"""The earthkit-data source `fieldstore`, through the real earthkit-data 1.3 from PyPI and its
plugin entry point: field lists that select, order and convert; a stream read field by field;
a lazy list that reads a field when its values are used. (earthkit-data 1.3 needs Python 3.10:
the test command runs this file on that build only.)"""

from __future__ import annotations

import sys
from pathlib import Path

import earthkit.data
import numpy as np
import pytest

import fieldstore
import fieldstore.pyfdb
from conftest import posix_config
from eccodes_fields import eccodes_values, sample_field  # noqa: E402 - on the path through conftest
from test_arrays_corpus import ENSEMBLE, MODEL_LEVELS, ensemble, model_levels  # noqa: F401 - fixtures shared
from test_xarray import MISSING, REQUEST, stored, values  # noqa: F401 - the store fixture is shared

STORED = 3 * 2 * 2 - 1


def test_from_source_gives_a_field_list_that_selects_and_converts(stored):  # noqa: F811
    config, messages = stored
    fields = earthkit.data.from_source("fieldstore", REQUEST, config=config).to_fieldlist()
    assert len(fields) == STORED
    t500 = fields.sel({"metadata.shortName": "t", "vertical.level": 500}).order_by({"time.step": "ascending"})
    assert len(t500) == 3
    for field, step in zip(t500, (0, 6, 12)):
        assert np.array_equal(field.to_numpy(), values(messages[step, 500, 130]))
    ds = t500.to_xarray()
    assert "t" in ds.data_vars and ds["t"].sizes["step"] == 3


def test_stream_reads_field_by_field(stored):  # noqa: F811
    config, messages = stored
    data = earthkit.data.from_source("fieldstore", REQUEST, config=config, stream=True)
    steps = [field.metadata("step") for field in data.to_fieldlist()]
    assert len(steps) == STORED


def test_lazy_lists_first_and_reads_a_field_when_its_values_are_used(stored, monkeypatch):  # noqa: F811
    config, messages = stored
    reads = []
    real = fieldstore.FieldStore.read_entries
    monkeypatch.setattr(fieldstore.FieldStore, "read_entries", lambda self, entries: reads.append(len(entries)) or real(self, entries))
    fields = earthkit.data.from_source("fieldstore", REQUEST, config=config, lazy=True).to_fieldlist()
    assert len(fields) == STORED and reads == []
    last = fields[len(fields) - 1]
    before = len(reads)
    # A lazy field's MARS keys are its own (its raw GRIB keys are the first field's, as in
    # earthkit's own lazy fdb source).
    step = int(last.get("time.step").total_seconds() // 3600)
    level, param = int(last.get("vertical.level")), {"t": 130, "u": 131}[last.get("parameter.variable")]
    assert reads == [] or len(reads) == before, "the keys come from the listing"
    got = last.to_numpy()
    assert len(reads) > before, "values are read when used"
    assert np.array_equal(got, values(messages[step, level, param]))
    levels = fields.sel({"vertical.level": 850, "parameter.variable": "t"})
    assert [int(f.get("time.step").total_seconds() // 3600) for f in levels] == [0, 6, 12]
    assert MISSING not in messages


def test_the_corpus_through_earthkit_an_ensemble_on_a_reduced_grid_and_model_levels(ensemble, model_levels):  # noqa: F811
    # (The samples' messages hold neither the ensemble number nor the model level, only their
    # MARS keys do: earthkit reads the messages' own, so each field is known by its values,
    # all different.)
    for (config, messages), request in ((ensemble, ENSEMBLE), (model_levels, MODEL_LEVELS)):
        expected = {eccodes_values(data).tobytes(): place for place, data in messages.items()}
        for options in ({}, {"stream": True}, {"lazy": True}):
            fields = earthkit.data.from_source("fieldstore", request, config=config, **options).to_fieldlist()
            got = [expected.get(f.to_numpy().ravel().tobytes()) for f in fields]
            assert sorted(got, key=str) == sorted(messages, key=str), options


# earthkit-data's own FDB source (`from_source("fdb", ...)`), with fieldstore.pyfdb as the
# `pyfdb` it imports: FDB5's schema, whose rules carry the optional `timespan`, so listed keys
# hold `timespan=` (its absence), which the lazy mode sends back as a request.
FDB5_SCHEMA = Path(__file__).resolve().parents[3] / "shared" / "fdb5" / "schema"
FDB_DATASET = {"class": "od", "expver": "0001", "stream": "oper", "date": "20240101", "time": "0000", "domain": "g", "type": "fc", "levtype": "pl"}
FDB_STEPS = (0, 6)


@pytest.fixture(scope="module")
def fdb_stored(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("fdb-source")
    config = {"schema": str(FDB5_SCHEMA), **posix_config(root)}
    messages = {}
    with fieldstore.FieldStore(config) as fs:
        for step in FDB_STEPS:
            messages[step] = sample_field("regular_ll_pl_grib2", 250 + step, dataDate=20240101, dataTime=0, step=step, level=500, paramId=130)
            fs.archive(messages[step], {**FDB_DATASET, "step": step, "levelist": 500, "param": 130})
    return config, messages


@pytest.fixture
def fieldstore_as_pyfdb(monkeypatch):
    """earthkit's fdb source imported with fieldstore.pyfdb as `pyfdb` (a fresh import)."""
    monkeypatch.setitem(sys.modules, "pyfdb", fieldstore.pyfdb)
    monkeypatch.delitem(sys.modules, "earthkit.data.sources.fdb", raising=False)
    yield
    sys.modules.pop("earthkit.data.sources.fdb", None)


@pytest.mark.parametrize("mode", [{"stream": True}, {"stream": False}, {"lazy": True}], ids=["stream", "file", "lazy"])
def test_earthkits_own_fdb_source_reads_through_fieldstore_pyfdb(fdb_stored, fieldstore_as_pyfdb, mode, tmp_path, monkeypatch):
    config, messages = fdb_stored
    monkeypatch.setenv("EARTHKIT_DATA_CACHE_POLICY", "temporary")
    request = {**FDB_DATASET, "step": list(FDB_STEPS), "levelist": 500, "param": 130}
    fields = list(iter(earthkit.data.from_source("fdb", request, config=config, **mode).to_fieldlist()))
    assert len(fields) == len(FDB_STEPS)
    for field, step in zip(fields, FDB_STEPS):
        got = field.to_numpy()
        assert np.array_equal(got, values(messages[step]).reshape(got.shape))
