"""The Python API through `fieldstore serve` (type: remote): the same calls as on a local
store, answered by a server over one (docs/remote.md); refusals raise `Denied`."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

import fieldstore
from conftest import posix_config  # noqa: E402 - pytest puts the tests' directory on the path

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
        (tmp_path / "wrong").write_text("not-the-token\n")
        with pytest.raises(fieldstore.Denied, match="unknown token"):
            fieldstore.FieldStore(remote(address, tmp_path / "wrong"))
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_client_of_no_server_fails_at_once_naming_it(tmp_path: Path):
    with pytest.raises(fieldstore.Unavailable, match="server http://127.0.0.1:9"):
        fieldstore.FieldStore(remote("127.0.0.1:9"))
