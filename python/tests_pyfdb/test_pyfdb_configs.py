"""FDB5's configuration files as pyfdb scripts use them: spaces over several roots, a select
over several FDBs, and the environment (FDB5_CONFIG_FILE, FDB5_CONFIG, their newer names
FDB_CONFIG_FILE and FDB_CONFIG, FDB_HOME). The same
file runs against pyfdb 5.25 itself, so where each data set lands is FDB5's own answer.
fieldstore keeps its store in the subdirectory `fieldstore` of each root: the tests look for
a data set's directory in the root and in that subdirectory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SCHEMA

BASE = {"stream": "oper", "date": "20070424", "time": "1200", "domain": "g", "type": "fc", "levtype": "sfc", "step": "6", "param": "130.128"}


def key(klass: str, expver: str) -> dict:
    return {"class": klass, "expver": expver, **BASE}


def placed(root: Path) -> set:
    """The data set directories in `root`, by name (FDB5's or fieldstore's)."""
    names = set()
    for where in (root, root / "fieldstore"):
        if where.is_dir():
            names |= {p.name for p in where.iterdir() if p.is_dir() and ":" in p.name}
    return names


def dataset_dir(klass: str, expver: str) -> str:
    return f"{klass}:{expver}:oper:20070424:1200:g"


@pytest.fixture
def roots(tmp_path: Path) -> dict:
    roots = {name: tmp_path / name for name in ("od", "od_readonly", "test", "rest", "missing")}
    for name, root in roots.items():
        if name != "missing":
            root.mkdir()
    return roots


def select_config(roots: dict) -> dict:
    """A select over two FDBs: class=od but expver 0002 (expver 0003 to a space of its own,
    whose first root is missing; the rest to the first writable root of two), and everything
    but class=e6."""
    return {
        "type": "select",
        "schema": str(SCHEMA),
        "fdbs": [
            {
                "select": "class=od",
                "excludes": ["expver=0002"],
                "type": "local",
                "engine": "toc",
                "spaces": [
                    {"handler": "Default", "regex": ":0003:", "roots": [{"path": str(roots["missing"])}, {"path": str(roots["test"])}]},
                    {"handler": "Default", "roots": [{"path": str(roots["od_readonly"]), "writable": False}, {"path": str(roots["od"])}]},
                ],
            },
            {"excludes": ["class=e6"], "type": "local", "engine": "toc", "spaces": [{"roots": [{"path": str(roots["rest"])}]}]},
        ],
    }


def test_select_and_spaces_place_each_data_set_where_fdb5_does(pyfdb, roots, grib):
    fdb = pyfdb.FDB(select_config(roots))
    for klass, expver in (("od", "0001"), ("od", "0002"), ("od", "0003"), ("rd", "0001")):
        fdb.archive(grib[6], key(klass, expver))
    fdb.flush()
    assert {name: placed(root) for name, root in roots.items()} == {
        "od": {dataset_dir("od", "0001")},
        "od_readonly": set(),
        "test": {dataset_dir("od", "0003")},
        "rest": {dataset_dir("od", "0002"), dataset_dir("rd", "0001")},
        "missing": set(),
    }
    # (Each data set by its class and expver: FDB5 visits a space only if its regex matches a
    # string made of the request's values, so `expver` must be given for ':0003:'.)
    for klass, expver in (("od", "0001"), ("od", "0002"), ("od", "0003"), ("rd", "0001")):
        assert [e.combined_key()["expver"] for e in fdb.list({"class": klass, "expver": expver})] == [expver]
    for klass, expver in (("od", "0003"), ("rd", "0001")):
        assert fdb.retrieve(key(klass, expver)).readall() == grib[6]


def test_a_field_no_fdb_takes_is_refused(pyfdb, roots, grib):
    fdb = pyfdb.FDB(select_config(roots))
    with pytest.raises(RuntimeError):
        fdb.archive(grib[6], key("e6", "0001"))
        fdb.flush()
    assert all(placed(root) == set() for root in roots.values())


def test_a_data_set_in_a_read_only_root_is_read_there(pyfdb, roots, grib):
    """An existing data set in a root that takes no archives is listed and retrieved where it
    is; archiving into it is refused, never sent to another root."""
    config = select_config(roots)
    writable = pyfdb.FDB(config)
    writable.archive(grib[6], key("od", "0001"))
    writable.flush()
    # The data set moved to the read-only root (as an operator moves an old one).
    name = dataset_dir("od", "0001")
    for where in (roots["od"], roots["od"] / "fieldstore"):
        if (where / name).is_dir():
            target = roots["od_readonly"] / where.relative_to(roots["od"])
            target.mkdir(exist_ok=True)
            (where / name).rename(target / name)
    fdb = pyfdb.FDB(config)
    assert fdb.retrieve(key("od", "0001")).readall() == grib[6]
    with pytest.raises(RuntimeError):
        fdb.archive(grib[12], {**key("od", "0001"), "step": "12"})
        fdb.flush()
    assert placed(roots["od"]) == set()


def in_subprocess(script: str, env: dict) -> str:
    """Runs `script` with pyfdb (or fieldstore.pyfdb) in a clean environment plus `env`."""
    name = os.environ.get("FIELDSTORE_PYFDB", "fieldstore")
    module = "pyfdb" if name == "pyfdb" else "fieldstore.pyfdb"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FDB", "FIELDSTORE_CONFIG", "FIELDSTORE_ROOT"))}
    code = f"import {module} as pyfdb\n{script}"
    done = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def archive_and_list(message: Path) -> str:
    """A script archiving `message` through the FDB the environment names, then counting
    what it lists."""
    return (
        f"fdb = pyfdb.FDB()\nfdb.archive(open({str(message)!r}, 'rb').read())\nfdb.flush()\n"
        "print(len(list(fdb.list({'class': 'od', 'expver': '0001'}))))"
    )


def local_config(root: Path) -> str:
    return json.dumps({"type": "local", "engine": "toc", "schema": str(SCHEMA), "spaces": [{"handler": "Default", "roots": [{"path": str(root)}]}]})


def archives_into(root: Path, message: Path, env: dict) -> None:
    """Archiving `message` through the FDB the environment `env` names lists one field, and
    its data set is in `root`."""
    assert in_subprocess(archive_and_list(message), env).split() == ["1"]
    assert placed(root) == {dataset_dir("od", "0001")}


def config_file(path: Path, root: Path) -> str:
    path.write_text(local_config(root))
    return str(path)


def test_the_environment_names_the_config_as_for_fdb5(roots, grib, tmp_path):
    message = tmp_path / "field.grib"
    message.write_bytes(grib[6])
    od = config_file(tmp_path / "config.yaml", roots["od"])
    archives_into(roots["od"], message, {"FDB5_CONFIG_FILE": od})
    # FDB5_CONFIG (the text) comes before FDB5_CONFIG_FILE.
    archives_into(roots["rest"], message, {"FDB5_CONFIG": local_config(roots["rest"]), "FDB5_CONFIG_FILE": od})
    # FDB_HOME's etc/fdb/config.yaml.
    home = tmp_path / "home"
    (home / "etc" / "fdb").mkdir(parents=True)
    config_file(home / "etc" / "fdb" / "config.yaml", roots["test"])
    archives_into(roots["test"], message, {"FDB_HOME": str(home)})


def test_fdb5_s_newer_variable_names_are_read_too(roots, grib, tmp_path):
    message = tmp_path / "field.grib"
    message.write_bytes(grib[6])
    od = config_file(tmp_path / "config.yaml", roots["od"])
    archives_into(roots["od"], message, {"FDB_CONFIG_FILE": od})
    archives_into(roots["rest"], message, {"FDB_CONFIG": local_config(roots["rest"])})
    # Under both names, the newer one's.
    readonly = config_file(tmp_path / "other.yaml", roots["od_readonly"])
    archives_into(roots["od_readonly"], message, {"FDB_CONFIG_FILE": readonly, "FDB5_CONFIG_FILE": od})
    archives_into(roots["test"], message, {"FDB_CONFIG": local_config(roots["test"]), "FDB5_CONFIG": local_config(roots["rest"])})


def test_the_first_fdb_whose_select_takes_a_data_set_owns_it_even_if_none_of_its_spaces_does(pyfdb, roots, grib):
    """A select sends a data set to the first FDB whose `select` and `excludes` take it; when
    none of that FDB's spaces takes it, it is refused, not passed on to the next FDB."""
    config = {
        "type": "select",
        "schema": str(SCHEMA),
        "fdbs": [
            {"select": "class=od", "type": "local", "engine": "toc", "spaces": [{"regex": ":0001:", "roots": [{"path": str(roots["od"])}]}]},
            {"excludes": ["class=e6"], "type": "local", "engine": "toc", "spaces": [{"roots": [{"path": str(roots["rest"])}]}]},
        ],
    }
    fdb = pyfdb.FDB(config)
    fdb.archive(grib[6], key("od", "0001"))
    fdb.archive(grib[6], key("rd", "0002"))
    fdb.flush()
    with pytest.raises(RuntimeError):
        fdb.archive(grib[6], key("od", "0002"))
        fdb.flush()
    assert placed(roots["od"]) == {dataset_dir("od", "0001")}
    assert placed(roots["rest"]) == {dataset_dir("rd", "0002")}
    # An FDB of a select without `select` or `excludes` is refused (FDB5: "no select or
    # excludes rule found").
    unrouted = {**config, "fdbs": [config["fdbs"][0], {k: v for k, v in config["fdbs"][1].items() if k != "excludes"}]}
    with pytest.raises(RuntimeError):
        fdb = pyfdb.FDB(unrouted)
        fdb.archive(grib[6], key("rd", "0003"))
        fdb.flush()
