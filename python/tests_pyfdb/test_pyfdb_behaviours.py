"""The behaviours pyfdb 5.25's own integration tests (ecmwf/fdb, tests/pyfdb) check, written
here, not copied (CI cannot fetch them: pyfdb's packages on PyPI carry no tests): the internals
they import, the configuration, enabled/dirty, axes by level, list keys, stats, wipe, status and
control of any selection, and the errors. pyfdb itself must pass them too."""

from __future__ import annotations

import datetime
import json
import warnings
from pathlib import Path

import pytest

DATASET = {"class": "od", "expver": "0001", "stream": "oper", "date": "20070424", "time": "1200"}


def archive_steps(fdb, grib, steps=(0, 6, 12)):
    for step in steps:
        fdb.archive(grib[step])
    fdb.flush()


def yaml_text(config: dict) -> str:
    # JSON is YAML: neither implementation needs PyYAML for it.
    return json.dumps(config)


# -- internals --------------------------------------------------------------------------------


def test_raw_control_enums_have_the_public_values_and_map_both_ways(pyfdb, internals):
    raw = internals["_internal"]
    for name, value in {"NONE": 0, "LIST": 1, "RETRIEVE": 2, "ARCHIVE": 4, "WIPE": 8, "UNIQUEROOT": 16}.items():
        public = pyfdb.ControlIdentifier[name]
        assert public == value and raw._ControlIdentifier[name].value == value
        assert pyfdb.ControlIdentifier._from_raw(raw._ControlIdentifier[name]) == public
        assert pyfdb.ControlIdentifier._from_raw(public._to_raw()) == public
    for name, value in {"NONE": 0, "DISABLE": 1, "ENABLE": 2}.items():
        public = pyfdb.ControlAction[name]
        assert public.value == raw._ControlAction[name].value == value
        assert pyfdb.ControlAction._from_raw(public._to_raw()) == public
    assert str(pyfdb.ControlIdentifier.RETRIEVE | pyfdb.ControlIdentifier.NONE | pyfdb.ControlIdentifier.LIST) == "LIST|RETRIEVE"
    assert str(pyfdb.ControlAction.DISABLE) == "DISABLE"


def test_wipe_element_types_match_their_raw_form(internals):
    iterator = internals["pyfdb_iterator"]
    names = [t.name for t in iterator.WipeElementType]
    assert names[:3] == ["ERROR", "CATALOGUE_INFO", "CATALOGUE"] and "STORE_SAFE" in names
    for name in names:
        assert iterator.WipeElementType[name].value == iterator._WipeElementType[name].value


def test_version_check_warns_on_a_mismatch_and_raises_without_the_library(internals):
    check = internals["_internal"]._check_fdb5_version_compatibility
    matching = [("fdb", "5.25.0", "abc", "/lib/libfdb5.so"), ("eckit", "1.0", "def", "/lib/libeckit.so")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check("5.25.0", matching)
    assert not caught
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check("5.25.0", [("fdb", "5.99.1", "abc", "/lib/libfdb5.so")])
    assert len(caught) == 1 and issubclass(caught[0].category, UserWarning)
    message = str(caught[0].message)
    assert "5.25.0" in message and "5.99.1" in message and "--print-home-deps" in message
    for runtime in ([], [("eckit", "1.0", "def", "/lib/libeckit.so")]):
        with pytest.raises(RuntimeError, match="--print-home-deps"):
            check("5.25.0", runtime)


def test_selection_mapper_both_ways(internals):
    mapper = internals["pyfdb_type"].UserInputMapper
    internal = mapper.map_selection_to_internal({"a": "x/y", "b": 0.5, "c": [1, "2", 1.5], "d": range(2)})
    assert internal == {"a": ["x", "y"], "b": ["0.5"], "c": ["1", "2", "1.5"], "d": ["0", "1"]}
    assert mapper.map_selection_to_external({"a": "x", "b": ["1", "2"]}) == {"a": "x", "b": ["1", "2"]}
    with pytest.raises(ValueError):
        mapper.map_selection_to_internal({"a": {"nested": 1}})


def test_config_mapper(internals, config, tmp_path):
    mapper = internals["_internal.pyfdb_internal"].ConfigMapper
    assert mapper.to_json(None) is None
    with pytest.raises(ValueError):
        mapper.to_json(0)
    path = tmp_path / "config.yaml"
    path.write_text(yaml_text(config))
    assert json.loads(mapper.to_json(path)) == json.loads(mapper.to_json(path.read_text())) == json.loads(mapper.to_json(config)) == config


def test_tool_request_makes_relative_dates_absolute_and_names_all(internals):
    request = internals["_internal.pyfdb_internal"].FDBToolRequest
    yesterday = (datetime.date.today() - datetime.timedelta(days=1)).strftime("%Y%m%d")
    text = repr(request.from_internal_mars_selection({"date": ["-1"]}))
    assert "retrieve" in text and f"date={yesterday}" in text
    assert "ALL" in repr(request.from_internal_mars_selection({}))
    with pytest.raises(ValueError, match="Expecting collection of values"):
        request.from_internal_mars_selection({"date": "-1"})


# -- configuration, enabled, dirty ------------------------------------------------------------


def test_config_is_the_same_given_as_text_path_or_dict_with_the_user_config_parsed(pyfdb, config, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml_text(config))
    by_path, by_text, by_dict = pyfdb.FDB(path), pyfdb.FDB(path.read_text()), pyfdb.FDB(config)
    assert by_path.config() == by_text.config() == by_dict.config()
    assert by_dict.config()[0]["spaces"] == config["spaces"] and by_dict.config()[1] == {}
    user = "type: local\nengine: toc\nuseSubToc: true\nspaces:\n- roots:\n  - path: /a/path\n"
    system, user_config = pyfdb.FDB(config, user).config()
    assert system == by_dict.config()[0]
    assert user_config["useSubToc"] is True
    again = pyfdb.FDB(system, user_config)
    assert again.config() == (system, user_config)
    with pytest.raises(ValueError, match="Unknown config type"):
        pyfdb.FDB(0)


def test_enabled_follows_writable_and_visitable(pyfdb, config):
    ids = pyfdb.ControlIdentifier
    every = [ids.NONE, ids.LIST, ids.RETRIEVE, ids.ARCHIVE, ids.WIPE, ids.UNIQUEROOT]
    assert all(pyfdb.FDB(config).enabled(i) is True for i in every)
    read_only = pyfdb.FDB(yaml_text({**config, "writable": False}))
    assert [read_only.enabled(i) for i in every] == [True, True, True, False, False, True]
    hidden = pyfdb.FDB(yaml_text({**config, "visitable": False}))
    assert [hidden.enabled(i) for i in every] == [True, False, False, True, True, True]


def test_dirty_until_flushed(fdb, grib):
    assert fdb.dirty() is False
    fdb.archive(grib[0])
    assert fdb.dirty() is True
    fdb.flush()
    assert fdb.dirty() is False


# -- axes, list keys, selections --------------------------------------------------------------


def test_axes_by_level_with_the_empty_value_of_absent_optional_keywords(fdb, grib):
    archive_steps(fdb, grib)
    dataset_keywords = {"class", "date", "domain", "expver", "stream", "time"}
    assert set(fdb.axes({"class": "od"}, level=1)) == dataset_keywords
    level2 = fdb.axes({"class": "od"}, level=2)
    assert set(level2) == dataset_keywords | {"type", "levtype", "timespan"}
    axes = fdb.axes({"class": "od"})
    assert len(axes) == 13
    assert sorted(axes["step"]) == ["0", "12", "6"]
    # The rule's optional frequency and direction, which these fields lack.
    assert list(axes["frequency"]) == [""] and list(axes["direction"]) == [""]
    assert axes == {**{k: list(v) for k, v in axes.items()}, "frequency": "", "type": "fc"}
    assert axes == fdb.axes({})
    with pytest.raises(KeyError, match="Couldn't find key"):
        axes["levelist"]


def test_list_keys_leave_out_the_optional_keywords_a_field_lacks(fdb, grib):
    archive_steps(fdb, grib)
    fields = list(fdb.list({"class": "od"}))
    assert len(fields) == 3
    dataset, collocation, element = fields[0].keys()
    assert len(dataset) == 6 and collocation["type"] == "fc"
    assert set(element) == {"step", "param"}
    assert "frequency" not in fields[0].combined_key()
    assert [e.keys()[1:] for e in fdb.list({"class": "od"}, level=1)] == [[{}, {}]]
    assert len(list(fdb.list({}, level=2))) == 1


def test_a_value_holding_a_separator_in_a_list_is_a_user_error(fdb, grib):
    archive_steps(fdb, grib)
    assert len(list(fdb.list({**DATASET, "step": "0/6"}))) == 2
    with pytest.raises(RuntimeError, match="UserError"):
        list(fdb.list({**DATASET, "step": ["0/6"]}))


# -- stats, status, control, wipe -------------------------------------------------------------


def test_stats_one_element_per_data_set_in_fdb5_labels(fdb, grib):
    archive_steps(fdb, grib)
    fdb.archive(grib[0])
    fdb.flush()
    (element,) = list(fdb.stats({**DATASET, "step": "6"}))
    index, db = element.index_statistics(), element.db_statistics()
    # Of the whole data set, the step 0 archived twice counted once among the reachable.
    assert f"{'Fields':<32}: 4" in index and f"{'Reacheable fields':<32}: 3" in index
    assert "Size of fields" in index and "Reachable size" in index and "Databases" not in index
    assert f"{'Databases':<32}: 1" in db and "Owned data files" in db and "Index files" in db and "Fields" not in db
    assert "Index Statistics:" in repr(element) and "DB Statistics:" in repr(element)
    assert len(list(fdb.stats({}))) == 1


def test_stats_say_what_the_catalogue_keeps_in_fdb5_labels(fdb, grib):
    archive_steps(fdb, grib)
    (element,) = list(fdb.stats(DATASET))
    db = element.db_statistics()
    # One flush of one writer: the TOC's first record and one index record, one index file, one
    # data file.
    for label, value in [("TOC records", 2), ("Owned data files", 1), ("Index files", 1)]:
        assert f"{label:<32}: {value}\n" in db, db
    for label in ["Size of TOC files", "Size of schemas files", "Size of owned data files", "Size of index files", "Total owned size", "Total size"]:
        assert f"{label:<32}: " in db, db


def test_a_dry_run_wipe_names_every_file_it_would_remove(fdb, grib):
    archive_steps(fdb, grib)
    report = list(fdb.wipe(DATASET))
    by_type = {e.type().name: [Path(u.path()) for u in e.uris()] for e in report}
    assert {"CATALOGUE_INFO", "CATALOGUE", "CATALOGUE_INDEX", "STORE"} <= set(by_type), report
    assert {"toc", "schema"} <= {p.name for p in by_type["CATALOGUE"]}, report
    assert len(report) > 3, "more elements than fields, as pyfdb's test_wipe_dryrun_all asks"
    assert all(p.exists() for kind in ["CATALOGUE", "CATALOGUE_INDEX", "STORE"] for p in by_type[kind]), "a dry run removes nothing"
    assert len(list(fdb.list(DATASET))) == 3


def test_status_and_control_of_every_data_set_agree(pyfdb, fdb, grib):
    archive_steps(fdb, grib)
    fdb.archive(grib[0], identifier={**DATASET, "time": "0000", "domain": "g", "type": "fc", "levtype": "sfc", "step": "0", "param": "130.128"})
    fdb.flush()
    ids = pyfdb.ControlIdentifier
    controlled = list(fdb.control({}, pyfdb.ControlAction.DISABLE, [ids.LIST, ids.WIPE]))
    statuses = list(fdb.status({}))
    assert len(controlled) == 2 and controlled == statuses and controlled[0] != statuses[1]
    assert all(e.controlIdentifiers() == [ids.LIST, ids.WIPE] for e in statuses)
    assert {e.key()["time"][0] for e in statuses} == {"0000", "1200"}
    enabled = list(fdb.control(DATASET, pyfdb.ControlAction.ENABLE, [ids.LIST, ids.WIPE]))
    assert [e.controlIdentifiers() for e in enabled] == [[]]
    assert enabled[0].key() == {k: [v] for k, v in {**DATASET, "domain": "g"}.items()}


def test_wipe_of_a_selection_without_expver_and_of_everything(pyfdb, config, fdb, grib):
    archive_steps(fdb, grib)
    report = list(fdb.wipe({"class": "od"}))
    assert "CATALOGUE_INFO" in {e.type().name for e in report}
    assert len(list(fdb.list({}))) == 3
    assert list(fdb.wipe({"class": "od", "date": "20070424"}, doit=True))
    assert list(fdb.list({})) == []
    # A new handle: FDB5's cannot archive into a data set it wiped (it keeps its catalogue open).
    fdb = pyfdb.FDB(config)
    archive_steps(fdb, grib)
    assert list(fdb.wipe({}, doit=True))
    assert list(fdb.list({})) == []


# -- the shim ---------------------------------------------------------------------------------


def test_the_shim_is_fieldstore_under_pyfdb_names(pyfdb):
    if not pyfdb.__name__.startswith("fieldstore."):
        pytest.skip("pyfdb itself: no shim")
    import importlib
    import sys

    shim = str(Path(__file__).resolve().parents[1] / "pyfdb_shim")
    if shim not in sys.path:
        sys.path.insert(0, shim)
    assert importlib.import_module("pyfdb") is pyfdb
    for name in ("pyfdb", "pyfdb_type", "pyfdb_iterator", "_internal", "_internal.pyfdb_internal"):
        assert importlib.import_module(f"pyfdb.{name}") is importlib.import_module(f"fieldstore.pyfdb.{name}")


def test_without_pyyaml_yaml_text_still_opens_and_config_says_what_it_needs(pyfdb, config, monkeypatch):
    if not pyfdb.__name__.startswith("fieldstore."):
        pytest.skip("pyfdb itself needs PyYAML")
    import sys

    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now fails
    assert pyfdb.FDB(yaml_text(config)).config()[0] == config
    text = "".join(f"{k}: {json.dumps(v)}\n" for k, v in config.items())
    fdb = pyfdb.FDB(text)
    assert list(fdb.list({})) == []
    with pytest.raises(RuntimeError, match="needs PyYAML"):
        fdb.config()
