"""The native API (`import fieldstore`): archive and retrieve round trips, list and axes,
requests and keys as dicts, wipe/purge/control/stats/where, errors by kind, threads."""

from __future__ import annotations

import array
import io
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import fieldstore
from conftest import posix_config  # noqa: E402 - pytest puts the tests' directory on the path

BASE = {"class": "od", "expver": "0001", "stream": "oper", "date": "20231201", "time": "1200", "type": "fc", "levtype": "sfc"}
DATASET = "class=od,expver=0001,stream=oper,date=20231201,time=1200"


def key(step: int, param: int = 167) -> dict:
    return {**BASE, "step": step, "param": param}


def payload(step: int, param: int = 167, size: int = 1000) -> bytes:
    return bytes((step * 31 + param + i) % 251 for i in range(size))


def test_grib_round_trips_byte_for_byte(store, grib_steps):
    for message in grib_steps.values():
        assert store.archive(message) == 1
    store.flush()
    for step, message in grib_steps.items():
        assert store.retrieve({"class": "od", "expver": "0001", "step": step}).read() == message
    # In the order the request names values.
    whole = store.retrieve("class=od,expver=0001,step=12/0/6").read()
    assert whole == grib_steps[12] + grib_steps[0] + grib_steps[6]


def test_nothing_is_visible_before_flush(store, root):
    store.archive(payload(0), key(0))
    reader = fieldstore.FieldStore(posix_config(root))
    assert list(reader.list({"class": "od", "expver": "0001"})) == []
    store.flush()
    assert [e.key()["step"] for e in reader.list({"class": "od", "expver": "0001"})] == ["0"]


def test_the_context_manager_flushes(root):
    with fieldstore.FieldStore(posix_config(root)) as fs:
        fs.archive(payload(6), key(6))
    assert fieldstore.FieldStore(posix_config(root)).retrieve(key(6)).read() == payload(6)


def test_reads_by_size_and_field_by_field(store):
    for step in (0, 6, 12):
        store.archive(payload(step), key(step))
    store.flush()
    reader = store.retrieve({"class": "od", "expver": "0001", "step": [0, 6, 12]})
    assert (reader.size(), reader.fields()) == (3000, 3)
    first = reader.read(1500)
    assert first == payload(0) + payload(6)[:500] and reader.tell() == 1500
    assert reader.read() == payload(6)[500:] + payload(12)
    assert reader.read() == b""
    with store.retrieve({"class": "od", "expver": "0001", "step": [12, 0]}) as reader:
        fields = [(entry.key()["step"], data) for entry, data in reader]
    assert fields == [("12", payload(12)), ("0", payload(0))]


def test_a_listed_field_reads_where_it_was_listed(store):
    store.archive(payload(6), key(6))
    store.flush()
    store.archive(payload(6, size=10), key(6))
    store.flush()
    entries = list(store.list({"class": "od", "expver": "0001"}, include_superseded=True))
    got = sorted((e.superseded, store.read_entry(e).read()) for e in entries)
    assert got == [(False, payload(6, size=10)), (True, payload(6))]
    (dataset,) = store.list({"class": "od", "expver": "0001"}, depth=1)
    with pytest.raises(fieldstore.BadRequest, match="depth 3"):
        store.read_entry(dataset)


def test_list_depths_axes_and_superseded_fields(store):
    for step in (0, 6):
        store.archive(payload(step), key(step))
    store.flush()
    store.archive(payload(6, size=10), key(6))
    store.flush()
    fields = list(store.list({"class": "od", "expver": "0001"}))
    assert [(e.key()["step"], e.length) for e in fields] == [("0", 1000), ("6", 10)]
    assert fields[0].dataset["stream"] == "oper" and fields[0].element["step"] == "0" and fields[0].uri
    with_superseded = list(store.list({"class": "od", "expver": "0001"}, include_superseded=True))
    assert sorted((e.key()["step"], e.superseded) for e in with_superseded) == [("0", False), ("6", False), ("6", True)]
    (dataset,) = store.list({"class": "od", "expver": "0001"}, depth=1)
    assert dataset.collocation is None and dataset.dataset["date"] == "20231201"
    axes = store.axes({"class": "od", "expver": "0001"})
    assert axes["step"] == ["0", "6"] and axes["param"] == ["167"]


def test_wipe_purge_stats_where_and_locks(store, root):
    for step in (0, 6):
        store.archive(payload(step), key(step))
    store.flush()
    store.archive(payload(6, size=10), key(6))
    store.flush()
    stats = store.stats({"class": "od", "expver": "0001"})
    assert (stats["fields"], stats["superseded_fields"]) == (2, 1)
    assert store.purge(DATASET)["done"] is False
    assert store.purge(DATASET, doit=True)["superseded_fields"] == 1
    (where,) = store.where({"class": "od", "expver": "0001"})
    assert where["dataset"]["class"] == "od" and where["catalogue"] and where["store"]
    assert list(store.lock(DATASET, ["archive"]).values()) == [["archive"]]
    # A handle that opens the data set for writing after the lock is refused (as FDB5's
    # archiver, which checks when it opens a database).
    with pytest.raises(fieldstore.Locked, match="locked for archive"):
        fieldstore.FieldStore(posix_config(root)).archive(payload(12), key(12))
    assert list(store.unlock(DATASET).values()) == [[]]
    (would,) = store.hide(DATASET)
    assert would["done"] is False and would["fields"] >= 2 and len(list(store.list({"class": "od", "expver": "0001"}))) == 2
    (hidden,) = store.hide(DATASET, doit=True)
    assert hidden["done"] is True and hidden["dataset"]["class"] == "od"
    assert list(store.list({"class": "od", "expver": "0001"})) == []
    store.archive(payload(0), key(0))
    store.flush()
    dry = store.wipe(DATASET)
    assert dry["done"] is False and len(dry["datasets"]) == 1
    assert store.wipe(DATASET, doit=True)["done"] is True
    assert list(store.list({"class": "od", "expver": "0001"})) == []


def test_copy_to_another_store_is_verified_and_resumed(store, grib_steps, tmp_path: Path):
    for message in grib_steps.values():
        store.archive(message)
    store.archive(payload(0), key(0))
    store.flush()
    target = fieldstore.FieldStore(posix_config(tmp_path / "target"))
    request = {"class": "od", "expver": "0001"}
    report = store.copy_to(target, request, read_back=True)
    fields = len(grib_steps) + 1
    assert (report["fields"], report["copied"], report["verified"], report["read_back"]) == (fields, fields, fields, fields)
    grib_request = "class=od,expver=0001,date=20070424,step=12/0/6"
    assert target.retrieve(grib_request).read() == store.retrieve(grib_request).read() == grib_steps[12] + grib_steps[0] + grib_steps[6]
    again = store.copy_to(target, request)
    assert (again["copied"], again["already_there"]) == (0, fields)
    # Modifiers set keys in each GRIB message; raw payloads have none to set.
    with pytest.raises(fieldstore.BadRequest, match="setting the modifiers"):
        store.copy_to(target, request, modifiers={"expver": "0042"})
    grib_only = {"class": "od", "expver": "0001", "date": "20070424"}
    modified = store.copy_to(target, grib_only, modifiers={"expver": "0042"})
    assert modified["copied"] == len(grib_steps)
    assert sorted(e.key()["step"] for e in target.list({"class": "od", "expver": "0042"})) == sorted(str(s) for s in grib_steps)


def test_overlay_shows_a_data_set_under_another_expver_and_reindex_indexes_it_again(store, root, grib_steps, tmp_path: Path):
    for message in grib_steps.values():
        store.archive(message)
    store.flush()
    # A field's identifier names its data set (the keywords below it are left out).
    source = next(iter(store.list({"class": "od", "expver": "0001", "date": "20070424"}))).key()
    target = {**source, "expver": "0002"}
    shown = store.overlay(source, target)
    assert shown["shown"] and shown["target_created"] and len(shown["overlaid"]) == 1
    overlaid = store.retrieve({"class": "od", "expver": "0002", "date": "20070424", "step": 0}).read()
    # Read with the target's expver set in the message, as FDB5 reads it; the stored bytes keep theirs.
    assert len(overlaid) == len(grib_steps[0]) and b"0002" in overlaid and b"0002" not in grib_steps[0]
    with pytest.raises(fieldstore.BadRequest, match="not allowed to differ"):
        store.overlay(source, {**source, "stream": "enfo"})
    removed = store.overlay(source, target, remove=True)
    assert not removed["shown"] and removed["overlaid"] == []
    assert list(store.list({"class": "od", "expver": "0002"})) == []
    sink_config = {"catalogue": {"type": "posix", "root": str(tmp_path / "sink"), "create": True}, "store": {"type": "posix", "root": str(root)}}
    sink = fieldstore.FieldStore(sink_config)
    report = store.reindex_into(sink, {"class": "od", "expver": "0001"})
    assert report["fields"] == len(grib_steps) and len(report["datasets"]) == 1
    request = "class=od,expver=0001,date=20070424,step=12/0/6"
    assert sink.retrieve(request).read() == store.retrieve(request).read()
    assert not list((tmp_path / "sink").rglob("*.data")), "no data copied"


def test_move_takes_data_sets_to_another_root_unless_a_writer_has_them_open(grib_steps, tmp_path: Path):
    tiers = [tmp_path / "tier1", tmp_path / "tier2"]
    for tier in tiers:
        tier.mkdir()
    space = {"roots": [{"path": str(tier)} for tier in tiers]}
    config = {"catalogue": {"type": "posix", "spaces": [space]}, "store": {"type": "posix", "spaces": [space]}}
    writer = fieldstore.FieldStore(config)
    for message in grib_steps.values():
        writer.archive(message)
    writer.flush()
    request = {"class": "od", "expver": "0001", "date": "20070424"}
    with pytest.raises(fieldstore.Locked, match="a writer has .* open"):
        writer.move(request, tiers[1])
    del writer
    store = fieldstore.FieldStore(config)
    before = store.retrieve(request).read()
    [moved] = store.move(request, tiers[1], threads=2)["datasets"]
    assert moved["from"].startswith(str(tiers[0])) and moved["to"].startswith(str(tiers[1])) and moved["files"] >= 4
    assert os.listdir(tiers[0]) == []
    assert store.retrieve(request).read() == before == grib_steps[0] + grib_steps[6] + grib_steps[12]
    with pytest.raises(fieldstore.BadRequest, match="needs 'class'"):
        store.move({"expver": "0001"}, tiers[0])
    with pytest.raises(fieldstore.BadRequest, match="no root of the space"):
        store.move(request, tmp_path)
    # Into another store: all of it there, none of it here.
    elsewhere = fieldstore.FieldStore(posix_config(tmp_path / "elsewhere"))
    [moved] = store.move(request, target=elsewhere)["datasets"]
    assert moved["copy"]["fields"] == len(grib_steps) and moved["copy"]["copied"] == len(grib_steps)
    assert elsewhere.retrieve(request).read() == before
    assert list(store.list({"class": "od", "expver": "0001"})) == []
    with pytest.raises(ValueError, match="dest .* or target"):
        store.move(request)


def test_errors_are_exceptions_of_their_kind(store, root, tmp_path: Path):
    with pytest.raises(fieldstore.NothingMatched, match="nothing matched"):
        store.retrieve({"class": "od", "expver": "0001", "step": 99})
    with pytest.raises(fieldstore.BadRequest, match="setp"):
        list(store.list("class=od,expver=0001,setp=6"))
    # Characters a request reads as more than the value are refused, never passed on: a
    # comment or quote would drop or merge the keywords after it (a wipe would remove more).
    for value in ("od,expver=2", "1200#", 'a"b', "x y", "12/", "off", "0/off"):
        with pytest.raises(fieldstore.BadRequest, match="value"):
            store.retrieve({"class": "od", "time": value})
    with pytest.raises(fieldstore.BadRequest):
        store.wipe({**BASE, "time": "1200#", "type": "fc"}, doit=True)
    with pytest.raises(fieldstore.BadRequest):
        store.archive(b"x", {**BASE, "step": "1/2", "param": 1})
    with pytest.raises(fieldstore.BadRequest, match="depth"):
        store.list({"class": "od", "expver": "0001"}, depth=4)
    with pytest.raises(fieldstore.BadConfig, match="colour"):
        fieldstore.FieldStore({"catalogue": {"type": "posix", "root": str(root), "colour": "red"}, "store": {"type": "posix", "root": str(root)}})
    with pytest.raises(fieldstore.Error):
        store.archive(b"not GRIB at all")
    assert issubclass(fieldstore.NotFound, fieldstore.Error) and issubclass(fieldstore.Error, Exception)
    # A bad argument is a ValueError too, as Python's own functions raise.
    assert issubclass(fieldstore.BadRequest, fieldstore.Error) and issubclass(fieldstore.BadRequest, ValueError)
    with pytest.raises(ValueError, match="setp"):
        list(store.list("class=od,expver=0001,setp=6"))


def test_configs_as_yaml_text_and_files(root, tmp_path: Path):
    text = f"catalogue: {{type: posix, root: {root}, create: true}}\nstore: {{type: posix, root: {root}, create: true}}\n"
    fieldstore.FieldStore(text).archive(payload(0), key(0))
    path = tmp_path / "config.yaml"
    path.write_text(text)
    for config in (path, str(path)):
        fs = fieldstore.FieldStore(config)
        fs.archive(payload(0), key(0))
        fs.flush()
        assert fs.retrieve(key(0)).read() == payload(0)
    # One line of YAML, which FieldStore(str) would take for a path: from_yaml says which.
    one_line = f"{{catalogue: {{type: posix, root: {root}}}, store: {{type: posix, root: {root}}}}}"
    assert fieldstore.FieldStore.from_yaml(one_line).retrieve(key(0)).read() == payload(0)
    with pytest.raises(fieldstore.BadConfig, match="config.yaml"):
        fieldstore.FieldStore.from_yaml(str(path))


def test_one_handle_serves_many_threads(store):
    def write(step: int) -> None:
        for param in range(1, 21):
            store.archive(payload(step, param), key(step, param))

    def read(step: int) -> None:
        reader = store.retrieve({"class": "od", "expver": "0001", "step": step})
        got = {entry.key()["param"]: data for entry, data in reader}
        assert got == {str(p): payload(step, p) for p in range(1, 21)}

    # The pool's map raises, here, what a thread raised.
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(4)))
        store.flush()
        list(pool.map(read, range(4)))


SHARED_READER = """
import sys, threading, fieldstore
reader = fieldstore.FieldStore(sys.argv[1]).retrieve("class=od,expver=0001,step=0")
chunks = []
def drain():
    while True:
        chunk = reader.read(7000)
        if not chunk:
            return
        chunks.append(chunk)
threads = [threading.Thread(target=drain) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sum(map(len, chunks)), reader.size())
"""


def test_threads_sharing_one_reader_neither_hang_nor_lose_bytes(store, root):
    for param in range(1, 41):
        store.archive(payload(0, param, size=100_000), key(0, param))
    store.flush()
    config = json.dumps(posix_config(root))
    # In a process of its own: a deadlock between the GIL and the reader's lock fails the test
    # instead of hanging the suite.
    done = subprocess.run([sys.executable, "-c", SHARED_READER, config], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4000000", "4000000"]


def test_iteration_and_reads_mix_at_field_boundaries(store):
    sizes = {0: 1_500_000, 6: 10, 12: 2_097_152}
    for step, size in sizes.items():
        store.archive(payload(step, size=size), key(step))
    store.flush()
    request = {"class": "od", "expver": "0001", "step": [0, 6, 12]}
    assert [(e.key()["step"], data) for e, data in store.retrieve(request)] == [(str(s), payload(s, size=n)) for s, n in sizes.items()]
    reader = store.retrieve(request)
    assert reader.read(1_500_000) == payload(0, size=1_500_000)
    assert [(e.key()["step"], data) for e, data in reader] == [("6", payload(6, size=10)), ("12", payload(12, size=2_097_152))]
    reader = store.retrieve(request)
    reader.read(100)
    with pytest.raises(fieldstore.BadRequest, match="partly read"):
        next(iter(reader))


def test_readinto_fills_any_writable_buffer_in_place(store):
    sizes = {0: 1_500_000, 6: 10, 12: 2_097_152}
    for step, size in sizes.items():
        store.archive(payload(step, size=size), key(step))
    store.flush()
    stream = b"".join(payload(s, size=n) for s, n in sizes.items())
    reader = store.retrieve({"class": "od", "expver": "0001", "step": [0, 6, 12]})
    # A buffer of 1 MiB and more (filled straight from storage), then smaller ones.
    whole = bytearray(1_600_000)
    assert reader.readinto(whole) == 1_600_000 and whole == stream[:1_600_000]
    doubles = array.array("d", bytes(80))  # items of 8 bytes: filled byte for byte
    assert reader.readinto(doubles) == 80 and doubles.tobytes() == stream[1_600_000:1_600_080]
    window = bytearray(20)
    assert reader.readinto(memoryview(window)[5:15]) == 10 and window[5:15] == stream[1_600_080:1_600_090]
    rest = bytearray(len(stream))
    assert reader.readinto(rest) == len(stream) - 1_600_090 and rest[: len(stream) - 1_600_090] == stream[1_600_090:]
    assert reader.readinto(bytearray(10)) == 0 and reader.tell() == len(stream)
    with pytest.raises(TypeError):
        reader.readinto(b"read-only")


def test_seek_moves_forward_and_back_and_iteration_goes_on_from_a_boundary(store):
    for step in (0, 6, 12):
        store.archive(payload(step), key(step))
    store.flush()
    stream = payload(0) + payload(6) + payload(12)
    reader = store.retrieve({"class": "od", "expver": "0001", "step": [0, 6, 12]})
    assert reader.seekable() and reader.readable()
    assert reader.seek(1500) == 1500 and reader.read(700) == stream[1500:2200]
    assert reader.seek(-300, 1) == 1900 and reader.tell() == 1900 and reader.read(10) == stream[1900:1910]
    assert reader.seek(-5, 2) == 2995 and reader.read() == stream[2995:]
    assert reader.seek(10_000) == 3000 and reader.read() == b""
    assert reader.seek(1000) == 1000
    assert [(e.key()["step"], data) for e, data in reader] == [("6", payload(6)), ("12", payload(12))]
    with pytest.raises(ValueError, match="outside the stream"):
        reader.seek(-1)
    with pytest.raises(ValueError, match="whence 3"):
        reader.seek(0, 3)
    # io's wrappers take it as a raw stream.
    reader.seek(0)
    assert io.BufferedReader(reader).read() == stream  # type: ignore[arg-type]


def test_a_closed_reader_refuses_reads(store):
    store.archive(payload(0), key(0))
    store.flush()
    with store.retrieve(key(0)) as reader:
        assert not reader.closed and reader.read(10) == payload(0)[:10]
    assert reader.closed
    for call in (reader.read, reader.tell, lambda: reader.readinto(bytearray(4)), lambda: reader.seek(0), lambda: next(reader)):
        with pytest.raises(ValueError, match="closed reader"):
            call()
    reader.close()


def test_hostile_text_and_key_names_are_refused_by_name(store):
    """A NUL in a text key or request is refused naming it, as the dict form is; key names
    ecCodes cannot take (which crashed it) are refused, never passed on."""
    store.archive(payload(0), key(0))
    store.flush()
    with pytest.raises(fieldstore.BadRequest, match="'class'"):
        store.archive(b"x", "class=o\x00d,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=0,param=167")
    with pytest.raises(fieldstore.BadRequest, match="control character"):
        list(store.list("class=o\x00d,expver=0001"))
    with pytest.raises(fieldstore.BadRequest, match="control character"):
        store.retrieve("class=od,expver=0001,step=0\x00")
    from eccodes_fields import sample_field
    from fieldstore import _native

    message = sample_field("regular_ll_sfc_grib2", 280.0, step=0)
    for name in ("é", "short\x00Name", ""):
        with pytest.raises(fieldstore.BadRequest, match="not a key name"):
            _native.message_keys(message, ["shortName", name])


def test_a_combination_never_stored_raises_nothing_matched_with_why(store):
    """Every value is on its axis, but not together: the retrieve raises, saying so, instead
    of returning an empty reader."""
    store.archive(payload(0, 167), key(0, 167))
    store.archive(payload(6, 165), key(6, 165))
    store.flush()
    with pytest.raises(fieldstore.NothingMatched, match="not together"):
        store.retrieve({**BASE, "step": 0, "param": 165})


def test_ctrl_c_interrupts_a_long_read_between_pieces(store):
    """A signal during a long read is acted on within a piece of it, not at its end (behind a
    slow server, Ctrl-C waited for the whole read); the bytes read so far are consumed (tell),
    as an interrupted file read leaves them."""
    import os
    import signal
    import threading

    class Interrupted(Exception):
        pass

    raised: list = []

    def handler(signum, frame):  # raises once: a late signal must not escape the test
        if not raised:
            raised.append(signum)
            raise Interrupted

    field = bytes(range(256)) * (4 << 12)  # 4 MiB
    for step in range(128):
        store.archive(field, key(step))
    store.flush()
    reader = store.retrieve({**BASE, "step": list(range(128))})
    buffer = bytearray(reader.size())
    reading, done = threading.Event(), threading.Event()

    def interrupt() -> None:
        reading.wait(10)
        for _ in range(1000):  # bounded: a signal every 2 ms until one was acted on
            if done.wait(0.002) or raised:
                return
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, handler)
    sender = threading.Thread(target=interrupt)
    sender.start()
    try:
        with pytest.raises(Interrupted):
            reading.set()
            reader.readinto(buffer)
    finally:
        done.set()
        sender.join()
        signal.signal(signal.SIGINT, previous)
    assert reader.tell() < reader.size(), "the read was interrupted before its end"
    assert reader.tell() % (4 << 20) == 0, "whole pieces were read"
