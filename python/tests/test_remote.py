"""The Python API through `fieldstore serve` (type: remote): the same calls as on a local
store, answered by a server over one (docs/remote.md); refusals raise `Denied`."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import fieldstore
from conftest import posix_config  # noqa: E402 - pytest puts the tests' directory on the path
from test_decode import CORPUS, make_message, reference  # noqa: E402

def serve(tmp_path: Path, extra: list[str]) -> tuple[subprocess.Popen, str]:
    """`fieldstore serve` over a POSIX store in `tmp_path` ($FIELDSTORE_BIN: scripts/python-test.sh builds it)."""
    config = tmp_path / "store.yaml"
    root = tmp_path / "root"
    config.write_text(f"catalogue: {{type: posix, root: {root}, create: true}}\nstore: {{type: posix, root: {root}, create: true}}\n")
    binary = os.environ["FIELDSTORE_BIN"]
    server = subprocess.Popen(
        [binary, "--config", str(config), "serve", "--listen", "127.0.0.1:0", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    line = server.stdout.readline()
    assert line.startswith("listening on "), line
    return server, line.split()[-1]


def remote(address: str, token_file: Path | None = None) -> dict:
    section = {"type": "remote", "endpoint": f"http://{address}", "connect_timeout": 5}
    if token_file is not None:
        section["token_file"] = str(token_file)
    return {"catalogue": section, "store": dict(section)}


@pytest.fixture
def served(tmp_path: Path):
    server, address = serve(tmp_path, [])
    yield address, tmp_path / "root"
    server.terminate()
    assert server.wait(timeout=30) == 0, "a server stopped by SIGTERM exits 0"


def test_archive_list_retrieve_and_wipe_through_a_server(served, grib_steps):
    address, root = served
    with fieldstore.FieldStore(remote(address)) as fs:
        for message in grib_steps.values():
            assert fs.archive(message) == 1
    # Flushed when the context ended: the server's store holds them, read locally too.
    local = fieldstore.FieldStore(posix_config(root))
    through = fieldstore.FieldStore(remote(address))
    request = {"class": "od", "expver": "0001"}
    assert [e.key()["step"] for e in through.list(request)] == [e.key()["step"] for e in local.list(request)] == ["0", "6", "12"]
    for step, message in grib_steps.items():
        assert through.retrieve({**request, "step": step}).read() == message
    assert through.axes(request)["step"] == ["0", "6", "12"]
    assert through.stats(request)["fields"] == 3
    (dataset,) = through.list(request, depth=1)
    report = through.wipe(dataset.dataset, doit=True)
    assert report["done"]
    assert list(local.list(request)) == []


EXTRACTED = "class=od,expver=0001,stream=oper,date=20240101,time=0000,domain=g,type=fc,levtype=sfc,step=0"


def test_the_server_extracts_what_a_local_handle_does_and_sends_only_values(served):
    address, root = served
    messages = {}
    with fieldstore.FieldStore(remote(address)) as fs:
        for i, case in enumerate(CORPUS):
            messages[i + 1] = make_message(*case, seed=700 + i)
            fs.archive(messages[i + 1], key=f"{EXTRACTED},param={i + 1}")
    local = fieldstore.FieldStore(posix_config(root))
    through = fieldstore.FieldStore(remote(address))
    requests = []
    for param, message in messages.items():
        n = reference(message).size
        requests.append((f"{EXTRACTED},param={param}", [(0, 1), (n - 1, n), (n // 3, n // 3 + 50), (7, 9)]))
    requests.append((f"{EXTRACTED},param=1/2", [(2, 4)]))
    served_each = through.extract_each(requests)
    assert len(served_each) == len(requests)
    for (request, ranges), answer, alone in zip(requests, served_each, local.extract_each(requests)):
        assert [g.key for g in answer] == [g.key for g in alone], request
        for got, expected in zip(answer, alone):
            assert got.decoded_whole == expected.decoded_whole
            for values, mask, want, want_mask in zip(got.values, got.masks, expected.values, expected.masks):
                assert values.tobytes() == want.tobytes(), request
                assert np.array_equal(mask, want_mask)
    (one,) = through.extract(f"{EXTRACTED},param=1", ranges=[(5, 8)])
    assert np.array_equal(one.values[0], reference(messages[1])[5:8], equal_nan=True)
    # The server learnt the packings: another client's extraction reads a few bytes a field.
    (again,) = fieldstore.FieldStore(remote(address)).extract(f"{EXTRACTED},param=1", ranges=[(5, 8)])
    assert 0 < again.bytes_read < len(messages[1]) // 20, again.bytes_read
    # A scan through the server keeps them beside its data: a local handle reads little too.
    kept = through.keep_packings(EXTRACTED)
    assert (kept["fields"], kept["already_kept"] + kept["learnt"], kept["side_objects"]) == (len(messages), len(messages), 1), kept
    (alone,) = local.extract(f"{EXTRACTED},param=1", ranges=[(5, 8)])
    assert 0 < alone.bytes_read < len(messages[1]) // 20, alone.bytes_read
    n = reference(messages[1]).size
    with pytest.raises(fieldstore.BadRequest, match="beyond the field"):
        through.extract(f"{EXTRACTED},param=1", ranges=[(0, n + 1)])
    with pytest.raises(fieldstore.BadRequest, match="more than the server's memory budget .* split its requests"):
        through.extract(f"{EXTRACTED},param=1", ranges=[(0, 10**9)])
    with pytest.raises(fieldstore.NotFound, match="nothing matched"):
        through.extract(f"{EXTRACTED},param=99", ranges=[(0, 1)])


def test_a_server_refuses_what_an_identity_may_not_do(tmp_path: Path, grib_steps):
    token = "python-test-token-0123456789abcdef"
    access = tmp_path / "access.yaml"
    access.write_text(
        "identities:\n- name: reader\n  token_sha256: " + hashlib.sha256(token.encode()).hexdigest() + "\n  allow: {read: ['class=od']}\n"
    )
    server, address = serve(tmp_path, ["--access", str(access)])
    try:
        (tmp_path / "token").write_text(token + "\n")
        reader = fieldstore.FieldStore(remote(address, tmp_path / "token"))
        assert list(reader.list({"class": "od", "expver": "0001"})) == []
        with pytest.raises(fieldstore.Denied, match="identity 'reader' may not archive"):
            with fieldstore.FieldStore(remote(address, tmp_path / "token")) as fs:
                fs.archive(grib_steps[0])
        with pytest.raises(fieldstore.Denied, match="may not read 'class=rd"):
            list(reader.list({"class": "rd", "expver": "0001"}))
        with pytest.raises(fieldstore.Denied, match="may not read 'class=rd"):
            reader.extract_each([("class=od,expver=0001,param=1", [(0, 1)]), ("class=rd,expver=0001,param=1", [(0, 1)])])
        (tmp_path / "wrong").write_text("not-the-token\n")
        with pytest.raises(fieldstore.Denied, match="unknown token"):
            fieldstore.FieldStore(remote(address, tmp_path / "wrong"))
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_client_of_no_server_fails_at_once_naming_it(tmp_path: Path):
    with pytest.raises(fieldstore.Unavailable, match="server http://127.0.0.1:9"):
        fieldstore.FieldStore(remote("127.0.0.1:9"))
