"""The native API on every configured backend: POSIX, RADOS (the test cluster that
scripts/test-services.sh starts), S3 (the RADOS gateway it starts) and DAOS (the project's
libdaos emulation: DAOS cannot be installed here). Without a service a backend's tests skip, saying why; with
FIELDSTORE_TEST_REQUIRE_SERVICES set (the test command sets it) they fail instead."""

from __future__ import annotations

import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import fieldstore

REQUEST = {"class": "od", "expver": "0001", "stream": "oper", "date": "20070424", "time": "1200"}


def missing(service: str, how: str):
    if os.environ.get("FIELDSTORE_TEST_REQUIRE_SERVICES"):
        pytest.fail(f"{service} is needed ({how})")
    pytest.skip(f"no {service} ({how})")


def section(kind: str, tmp_path: Path) -> str:
    """A backend section of its own: a directory, a namespace prefix, a container label."""
    unique = uuid.uuid4().hex[:12]
    if kind == "posix":
        return f"{{type: posix, root: {tmp_path / 'root'}, create: true}}"
    if kind == "rados":
        conf = os.environ.get("FIELDSTORE_TEST_CEPH_CONF")
        if not conf:
            missing("Ceph cluster", "scripts/ceph-cluster.sh start DIR, then export DIR/env")
        pool = os.environ.get("FIELDSTORE_TEST_RADOS_POOL", "fieldstore")
        return f"{{type: rados, pool: {pool}, ceph_conf: {conf}, namespace_prefix: 'py-{unique}-'}}"
    if kind == "s3":
        endpoint, key, secret = (os.environ.get(f"FIELDSTORE_TEST_S3_{v}") for v in ("ENDPOINT", "ACCESS_KEY", "SECRET_KEY"))
        if not (endpoint and key and secret):
            missing("S3 server", "scripts/ceph-cluster.sh start DIR --rgw, then export DIR/env")
        return (
            f"{{type: s3, endpoint: '{endpoint}', bucket: fieldstore-test, prefix: 'py-{unique}/', "
            f"access_key_id: '{key}', secret_access_key: '{secret}'}}"
        )
    library, root = os.environ.get("FIELDSTORE_TEST_DAOS_LIBRARY"), os.environ.get("DAOS_EMULATION_ROOT")
    if not (library and root and Path(library).exists()):
        missing("libdaos emulation", "set FIELDSTORE_TEST_DAOS_LIBRARY and DAOS_EMULATION_ROOT, as scripts/test-services.sh does")
    (Path(root) / "tests").mkdir(parents=True, exist_ok=True)
    return f"{{type: daos, pool: tests, library: {library}, root_container: 'py{unique}'}}"


@pytest.fixture(params=["posix", "rados", "s3", "daos"])
def store(request, tmp_path: Path) -> fieldstore.FieldStore:
    kind = request.param
    # The catalogue and the store on the same backend; the other pairings are covered by the
    # Rust conformance suite.
    config = f"catalogue: {section(kind, tmp_path)}\nstore: {section(kind, tmp_path)}\n"
    fs = fieldstore.FieldStore.from_yaml(config)
    yield fs
    # What a test left on a shared service goes (a POSIX root goes with its directory).
    if kind != "posix":
        try:
            fs.wipe(REQUEST, doit=True)
        except fieldstore.NotFound:
            pass


def test_round_trips_list_readinto_and_wipe(store, grib_steps):
    for message in grib_steps.values():
        store.archive(message)
    store.flush()
    entries = list(store.list({**REQUEST, "step": [0, 6, 12]}))
    assert sorted(int(e.key()["step"]) for e in entries) == [0, 6, 12]
    stream = b"".join(grib_steps[s] for s in (12, 0, 6))
    reader = store.retrieve({**REQUEST, "step": [12, 0, 6]})
    buffer = bytearray(reader.size())
    assert reader.readinto(buffer) == len(stream) and buffer == stream
    assert reader.seek(len(grib_steps[12])) == len(grib_steps[12]) and reader.read(len(grib_steps[0])) == grib_steps[0]
    assert store.stats(REQUEST)["fields"] == 3
    assert store.wipe(REQUEST, doit=True)["done"]
    assert list(store.list(REQUEST)) == []


def test_compact_merges_indexes_and_changes_nothing_a_reader_sees(store, grib_steps):
    """Each step archived and flushed on its own, then compacted: the object-store catalogues
    merge the three indexes into one, POSIX has nothing to merge; a reader sees the same."""
    for message in grib_steps.values():
        store.archive(message)
        store.flush()
    before = sorted((str(e.key()), e.length) for e in store.list(REQUEST))
    (report,) = store.compact(REQUEST)["datasets"]
    assert report["dataset"]["class"] == "od" and report["dataset"]["stream"] == "oper"
    expected = (3, 3, 0) if store.where(REQUEST)[0]["catalogue"].startswith("posix") else (3, 1, 1)
    assert (report["indexes_before"], report["indexes_after"], report["indexes_written"]) == expected
    assert sorted((str(e.key()), e.length) for e in store.list(REQUEST)) == before
    assert b"".join(data for _, data in store.retrieve({**REQUEST, "step": [0, 6, 12]})) == b"".join(grib_steps[s] for s in (0, 6, 12))


def test_threads_archive_and_read_one_data_set(store, grib_steps):
    """Four threads archive the same fields under steps of their own through one handle, each
    flushing; then four read them all back at once."""

    def archive(thread: int) -> None:
        for step, message in grib_steps.items():
            store.archive(message, {**REQUEST, "domain": "g", "type": "fc", "levtype": "sfc", "param": 167, "step": 100 * (thread + 1) + step})
        store.flush()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(archive, range(4)))
    steps = [100 * (t + 1) + s for t in range(4) for s in grib_steps]

    def read(_: int) -> int:
        return sum(len(data) for _, data in store.retrieve({**REQUEST, "step": steps, "param": 167}))

    with ThreadPoolExecutor(4) as pool:
        assert set(pool.map(read, range(4))) == {4 * sum(len(m) for m in grib_steps.values())}
