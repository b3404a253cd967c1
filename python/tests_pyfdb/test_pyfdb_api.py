"""pyfdb 5.25's API as scripts use it, written in pyfdb's style; pyfdb itself must pass it too."""

from __future__ import annotations

from pathlib import Path

import pytest

DATASET = {"class": "od", "expver": "0001", "stream": "oper", "date": "20070424", "time": "1200"}
# FDB5 reads a bare 130 with levtype=sfc as 228130 (metkit's parameter context); 130.128 is
# the same parameter to both systems.
FIELD = {**DATASET, "domain": "g", "type": "fc", "levtype": "sfc", "param": "130.128"}


def archive_steps(fdb, grib, steps=(0, 6, 12)):
    for step in steps:
        fdb.archive(grib[step])
    fdb.flush()


def test_public_names(pyfdb):
    for name in ("FDB", "URI", "DataHandle", "ListElement", "WipeElement", "StatusElement", "ControlAction",
                 "ControlIdentifier", "PurgeElement", "StatsElement", "ControlElement", "IndexAxis", "MarsSelection"):
        assert hasattr(pyfdb, name), name
    assert pyfdb.ControlAction.DISABLE != pyfdb.ControlAction.ENABLE
    assert pyfdb.ControlIdentifier.RETRIEVE | pyfdb.ControlIdentifier.ARCHIVE


def test_archive_then_retrieve_returns_the_message(fdb, grib):
    archive_steps(fdb, grib)
    with fdb.retrieve({**FIELD, "step": "6"}) as handle:
        assert handle.size() == len(grib[6])
        assert handle.read(4) == b"GRIB"
        # (A read of more than is left: pyfdb pads it with zeros to the handle's size,
        # fieldstore returns what is left. Scripts read what is left, as here.)
        assert handle.read(len(grib[6]) - 4) == grib[6][4:]
    assert fdb.retrieve({**FIELD, "step": 12}).readall() == grib[12]


def test_read_before_open_is_an_error(fdb, grib):
    archive_steps(fdb, grib, (0,))
    handle = fdb.retrieve({**FIELD, "step": "0"})
    with pytest.raises(RuntimeError):
        handle.read(4)


def test_readinto_a_memoryview(fdb, grib):
    archive_steps(fdb, grib, (6,))
    buffer = bytearray(len(grib[6]))
    with fdb.retrieve({**FIELD, "step": "6"}) as handle:
        assert handle.readinto(memoryview(buffer)) == len(grib[6])
    assert bytes(buffer) == grib[6]


def test_list_levels_keys_and_locations(fdb, grib):
    archive_steps(fdb, grib)
    elements = list(fdb.list({"class": "od", "expver": "0001"}, level=3))
    assert sorted(int(e.combined_key()["step"]) for e in elements) == [0, 6, 12]
    for element in elements:
        assert element.has_location()
        assert element.length() == len(grib[0]) and element.offset() >= 0
        dataset, collocation, field = element.keys()
        assert (dataset["class"], dataset["stream"], dataset["date"]) == ("od", "oper", "20070424")
        assert (collocation["type"], collocation["levtype"]) == ("fc", "sfc")
        assert list(field) == sorted(field) and "step" in field
        assert element.uri is not None
        assert element.data_handle.readall() == grib[int(field["step"])]
    (database,) = fdb.list({"class": "od", "expver": "0001"}, level=1)
    assert not database.has_location() and database.offset() is None and database.data_handle is None
    assert database.keys()[1:] == [{}, {}]


def test_list_shows_masked_fields_on_request(fdb, grib):
    archive_steps(fdb, grib, (6,))
    archive_steps(fdb, grib, (6,))
    assert len(list(fdb.list({"class": "od", "expver": "0001"}))) == 1
    assert len(list(fdb.list({"class": "od", "expver": "0001"}, include_masked=True))) == 2


def test_axes(fdb, grib):
    archive_steps(fdb, grib)
    axes = fdb.axes({"class": "od", "expver": "0001"})
    assert set(axes["step"]) == {"0", "6", "12"}
    assert list(axes["stream"]) == ["oper"] and "param" in axes and axes.has_key("levtype")
    with pytest.raises(TypeError):
        axes["step"] = ["1"]


def test_selections_take_lists_numbers_and_slashes(fdb, grib):
    archive_steps(fdb, grib)
    for steps in ([0, 12], ["0", "12"], "0/12"):
        assert sorted(int(e.combined_key()["step"]) for e in fdb.list({**DATASET, "step": steps})) == [0, 12]
    with pytest.raises(ValueError):
        list(fdb.list({"class": {"od": 1}}))


def test_identifiers_archive_raw_bytes(fdb, grib):
    identifier = {**DATASET, "domain": "g", "type": "fc", "levtype": "sfc", "step": "24", "param": "130"}
    fdb.archive(grib[0], identifier)
    assert fdb.dirty()
    fdb.flush()
    assert not fdb.dirty()
    assert [e.combined_key()["step"] for e in fdb.list({"class": "od", "expver": "0001", "step": "24"})] == ["24"]
    with pytest.raises(ValueError):
        fdb.archive(grib[0], {**identifier, "step": "1/2"})
    with pytest.raises(KeyError):
        fdb.archive(grib[0], [("class", "od"), ("class", "rd")])


def test_control_status_and_a_locked_retrieve(fdb, pyfdb, grib):
    archive_steps(fdb, grib, (6,))
    (element,) = fdb.control(DATASET, pyfdb.ControlAction.DISABLE, [pyfdb.ControlIdentifier.RETRIEVE, pyfdb.ControlIdentifier.ARCHIVE])
    assert set(element.controlIdentifiers()) == {pyfdb.ControlIdentifier.RETRIEVE, pyfdb.ControlIdentifier.ARCHIVE}
    assert element.key()["class"] == ["od"]
    (status,) = fdb.status(DATASET)
    assert set(status.controlIdentifiers()) == {pyfdb.ControlIdentifier.RETRIEVE, pyfdb.ControlIdentifier.ARCHIVE}
    (element,) = fdb.control(DATASET, pyfdb.ControlAction.ENABLE, [pyfdb.ControlIdentifier.RETRIEVE])
    assert element.controlIdentifiers() == [pyfdb.ControlIdentifier.ARCHIVE]
    assert fdb.retrieve({**FIELD, "step": "6"}).readall() == grib[6]


def test_a_masked_element_reads_its_own_bytes(fdb, grib):
    fdb.archive(grib[6])
    fdb.flush()
    fdb.archive(grib[12], {**FIELD, "step": "6", "param": "130"})
    fdb.flush()
    handles = sorted(e.data_handle.readall() for e in fdb.list({"class": "od", "expver": "0001"}, include_masked=True))
    assert handles == sorted([grib[6], grib[12]])


def test_selections_naming_nothing_yield_nothing(fdb, pyfdb, grib):
    archive_steps(fdb, grib, (6,))
    other = {**DATASET, "date": "20000101"}
    assert list(fdb.list(other)) == []
    assert list(fdb.status(other)) == []
    assert list(fdb.control(other, pyfdb.ControlAction.DISABLE, [pyfdb.ControlIdentifier.RETRIEVE])) == []


def test_a_retrieve_matching_nothing_is_an_empty_handle(fdb, grib):
    archive_steps(fdb, grib, (6,))
    handle = fdb.retrieve({**FIELD, "step": "99"})
    assert handle.readall() == b""
    with pytest.raises(TypeError):
        fdb.retrieve({})


def test_wipe_reports_then_removes(fdb, grib):
    archive_steps(fdb, grib)
    report = list(fdb.wipe(DATASET))
    assert report and all(isinstance(repr(e), str) for e in report)
    assert len(list(fdb.list({"class": "od", "expver": "0001"}))) == 3, "a wipe without doit removes nothing"
    list(fdb.wipe(DATASET, doit=True))
    assert list(fdb.list({"class": "od", "expver": "0001"})) == []


def test_stats_and_purge_report(fdb, grib):
    archive_steps(fdb, grib)
    (stats,) = fdb.stats(DATASET)
    assert "Fields" in stats.index_statistics() and "Databases" in stats.db_statistics()
    assert all(isinstance(repr(e), str) for e in fdb.purge(DATASET))


def test_the_context_manager_flushes(pyfdb, config, grib):
    with pyfdb.FDB(config) as fdb:
        fdb.archive(grib[6])
    assert pyfdb.FDB(config).retrieve({**FIELD, "step": "6"}).readall() == grib[6]


def test_a_listed_uri_is_a_file_other_programs_read(fdb, grib):
    """Scripts read fields straight from the files a listing names, at its offset and length."""
    archive_steps(fdb, grib, (6, 12))
    for element in fdb.list({"class": "od", "expver": "0001"}):
        path = Path(element.uri.path())
        assert path.is_absolute() and path.is_file(), path
        with open(path, "rb") as f:
            f.seek(element.offset())
            assert f.read(element.length()) == grib[int(element.combined_key()["step"])]
