"""Handles across processes: multiprocessing pools (the fork start method) writing and
reading one data set, each worker with its own handle; a handle or reader inherited through
fork() refuses, naming both processes, instead of hanging or publishing the parent's fields."""

from __future__ import annotations

import multiprocessing
import os

import pytest

import fieldstore
from conftest import posix_config  # noqa: E402 - pytest puts the tests' directory on the path

BASE = {"class": "od", "expver": "0001", "stream": "oper", "date": "20231201", "time": "1200", "type": "fc", "levtype": "sfc"}

#: What forked workers inherit (set before the pool starts).
INHERITED: dict = {}


def key(step: int, param: int) -> dict:
    return {**BASE, "step": step, "param": param}


def payload(step: int, param: int) -> bytes:
    return f"{step}:{param};".encode() * 100


def write_step(step: int) -> int:
    fs = fieldstore.FieldStore(INHERITED["config"])
    for param in range(1, 11):
        fs.archive(payload(step, param), key(step, param))
    fs.flush()
    return step


def read_step(step: int) -> dict:
    fs = fieldstore.FieldStore(INHERITED["config"])
    return {entry.key()["param"]: data for entry, data in fs.retrieve({"class": "od", "expver": "0001", "step": step})}


def use_inherited(call: str) -> str:
    try:
        if call == "handle":
            INHERITED["store"].flush()
        else:
            INHERITED["reader"].read(10)
    except fieldstore.Unsupported as e:
        return str(e)
    return "no error"


@pytest.fixture
def fork():
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("this platform has no fork()")
    return multiprocessing.get_context("fork")


def test_a_pool_writes_and_reads_one_data_set(fork, root):
    INHERITED.clear()
    INHERITED["config"] = posix_config(root)
    with fork.Pool(4) as pool:
        assert sorted(pool.map(write_step, range(8))) == list(range(8))
        read = pool.map(read_step, range(8))
    for step, fields in enumerate(read):
        assert fields == {str(p): payload(step, p) for p in range(1, 11)}
    assert fieldstore.FieldStore(posix_config(root)).stats({"class": "od", "expver": "0001"})["fields"] == 80


def test_a_handle_or_reader_inherited_through_fork_refuses_by_name(fork, store):
    store.archive(payload(0, 1), key(0, 1))
    store.flush()
    store.archive(payload(0, 2), key(0, 2))  # pending: a child's flush must not publish it
    INHERITED.clear()
    INHERITED["store"] = store
    INHERITED["reader"] = store.retrieve({"class": "od", "expver": "0001"})
    with fork.Pool(1) as pool:
        for call in ("handle", "reader"):
            message = pool.apply(use_inherited, (call,))
            assert "after fork()" in message and str(os.getpid()) in message, message
    # The parent goes on: its pending field is published once, by its own flush.
    store.flush()
    assert INHERITED["reader"].read(10) == payload(0, 1)[:10]
    assert [e.key()["param"] for e in store.list({"class": "od", "expver": "0001"})] == ["1", "2"]
