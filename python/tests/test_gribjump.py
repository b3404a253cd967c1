"""`fieldstore.gribjump` answers as ECMWF's pygribjump 0.13 does: the same calls, made on
pygribjump over FDB5 5.25 (both from PyPI, scripts/gribjump-install.sh, in FDB5's environment:
gribjump_peer.py) and on fieldstore.gribjump over the same GRIB file, give the same values bit
for bit, the same mask words and shapes, and errors where pygribjump raises them. Where fieldstore
does more (packings gribjump cannot read) the test says so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import eccodes
import numpy as np
import pytest

import fieldstore
from fieldstore import gribjump
from gribjump_calls import answer_all  # noqa: E402 - on the path through conftest's directory
from test_decode import CORPUS as DECODE_CORPUS  # noqa: E402
from test_decode import make_message  # noqa: E402

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[1]
SCHEMA = REPOSITORY.parent / "shared" / "fdb5" / "schema"

#: The corpus: the decode tests' (GRIB 2 and GRIB 1 simple packing with and without a bitmap,
#: 1 to 24 bits, CCSDS, on regular and reduced grids, which both read; and second-order
#: packing, which gribjump refuses ("No entry in JumperFactory") and fieldstore decodes whole),
#: and a constant field.
CORPUS = DECODE_CORPUS + [("regular_gg_pl_grib2", "grid_simple", 0, False)]


def stepped(message: bytes, step: int) -> bytes:
    """The message with MARS keys and its step set (its data untouched): each field a key of
    its own."""
    h = eccodes.codes_new_from_message(message)
    try:
        eccodes.codes_set_key_vals(h, "centre=98,setLocalDefinition=1,localDefinitionNumber=1")
        eccodes.codes_set_key_vals(h, f"class=od,stream=oper,type=fc,expver=0001,step={step}")
        return bytes(eccodes.codes_get_message(h))
    finally:
        eccodes.codes_release(h)


def constant(message: bytes) -> bytes:
    """The message with every value the same (a constant field: no bits per value)."""
    h = eccodes.codes_new_from_message(message)
    try:
        eccodes.codes_set_values(h, np.full(eccodes.codes_get_size(h, "values"), 273.25))
        return bytes(eccodes.codes_get_message(h))
    finally:
        eccodes.codes_release(h)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The corpus (a field per step) in a GRIB file, archived into fieldstore with FDB5's schema,
    its packings kept (fieldstore scan); with each field's key, length and grid hash."""
    directory = tmp_path_factory.mktemp("gribjump")
    messages = []
    for i, case in enumerate(CORPUS):
        message = make_message(*case, seed=900 + i)
        messages.append(stepped(constant(message) if case[2] == 0 else message, 6 * i))
    (directory / "fields.grib").write_bytes(b"".join(messages))
    section = {"type": "posix", "root": str(directory / "fieldstore"), "create": True}
    store = fieldstore.FieldStore({"schema": str(SCHEMA), "catalogue": section, "store": dict(section)})
    store.archive(b"".join(messages))
    store.flush()
    fields = []
    for case, message in zip(CORPUS, messages):
        h = eccodes.codes_new_from_message(message)
        try:
            step, points, grid_hash = eccodes.codes_get(h, "step"), eccodes.codes_get_size(h, "values"), eccodes.codes_get(h, "md5GridSection")
        finally:
            eccodes.codes_release(h)
        (entry,) = store.list(f"class=od,step={step}")
        fields.append({"key": entry.key(), "points": points, "hash": grid_hash, "packing": case[1]})
    datasets = sorted({",".join(f"{k}={v}" for k, v in entry.dataset.items()) for entry in store.list("class=od", depth=1)})
    for dataset in datasets:
        store.keep_packings(dataset)
    (directory / "datasets.json").write_text(json.dumps(datasets))
    (directory / "fdb.yaml").write_text(
        f"type: local\nengine: toc\nschema: {SCHEMA}\nspaces:\n- handler: Default\n  roots:\n  - path: {directory / 'fdb5'}\n"
    )
    (directory / "fdb5").mkdir()
    return {"dir": directory, "store": store, "fields": fields}


def calls(fields: list) -> list:
    """Calls of every kind over the corpus: edge ranges of each field; points, masks and ranges
    of several fields; a request of several fields; axes; and what must fail."""
    out = []
    for field in fields:
        n = field["points"]
        ranges = [(0, 1), (7, 9), (n // 3, n // 3 + 50), (n - 1, n)]
        call = {"kind": "extract", "hash": field["hash"], "requests": [(field["key"], ranges)]}
        if field["packing"] == "grid_second_order":
            call["differs"] = "gribjump reads no second-order packing"
        out.append(call)
    # gribjump refuses ranges out of order ("checkIntervals"); fieldstore answers them.
    unordered = [(9, 12), (0, 2)]
    out.append({"kind": "extract", "hash": fields[0]["hash"], "requests": [(fields[0]["key"], unordered)], "differs": "ranges out of order"})
    first, second = fields[0], fields[2]
    both = [first["key"], second["key"]]
    out.append({"kind": "requests", "hash": first["hash"], "requests": [(first["key"], [(3, 70)]), (second["key"], [(0, 2), (5, 6)])]})
    out.append({"kind": "indices", "hash": first["hash"], "requests": both, "indices": [0, 5, 6, 7, 100, 101, 102]})
    mask = np.zeros(first["points"], dtype=bool)
    mask[[1, 2, 3, 64, 65, 200]] = True
    mask[300:430] = True
    out.append({"kind": "mask", "hash": first["hash"], "requests": both, "mask": mask.tolist()})
    out.append({"kind": "ranges", "hash": first["hash"], "requests": both, "ranges": [(0, 130), (140, 141)]})
    single = {**first["key"], "step": [second["key"]["step"], first["key"]["step"]]}
    out.append({"kind": "single", "hash": first["hash"], "request": single, "ranges": [(0, 3)]})
    for level in (1, 2, 3):
        out.append({"kind": "axes", "request": {"class": "od", "expver": "0001"}, "level": level})
    missing = {**first["key"], "step": "999"}
    out.append({"kind": "extract", "hash": first["hash"], "requests": [(missing, [(0, 1)])]})
    out.append({"kind": "extract", "hash": first["hash"], "requests": [(first["key"], [(0, first["points"] + 1)])]})
    return out


def test_every_call_answers_as_pygribjump_over_fdb5(site: dict) -> None:
    sp = subprocess.run(["bash", str(REPOSITORY / "scripts" / "gribjump-install.sh")], check=True, capture_output=True, text=True).stdout.strip()
    venv_python = Path(os.environ.get("FDB5_PEER_VENV", Path.home() / ".cache" / "fdb5-peer")) / "bin" / "python"
    todo = calls(site["fields"])
    (site["dir"] / "calls.json").write_text(json.dumps(todo))
    peer = subprocess.run([str(venv_python), str(HERE / "gribjump_peer.py"), sp, str(site["dir"])], capture_output=True, text=True)
    assert peer.returncode == 0, peer.stderr[-3000:]
    theirs = json.loads(peer.stdout.strip().splitlines()[-1])
    ours = answer_all(gribjump, gribjump.GribJump(site["store"]), todo)
    assert len(theirs) == len(ours) == len(todo)
    for call, mine, oracle in zip(todo, ours, theirs):
        what = f"{call['kind']} {json.dumps(call)[:300]}: {oracle}"
        if "differs" in call:
            assert "error" in oracle and "error" not in mine, what
        else:
            assert without_message(mine) == without_message(oracle), what


def without_message(answer: object) -> object:
    """An answer without its error's message (each system words its own)."""
    return {k: v for k, v in answer.items() if k != "message"} if isinstance(answer, dict) else answer


def test_results_have_pygribjump_s_shapes_and_mask_words(site: dict) -> None:
    gj = gribjump.GribJump(site["store"])
    field = site["fields"][2]  # 24 bits with a bitmap
    (result,) = gj.extract([(field["key"], [(0, 130), (200, 201)])])
    assert [len(v) for v in result.values] == [130, 1]
    assert [len(m) for m in result.masks] == [3, 1]
    assert result.masks[0].dtype == np.uint64
    present = result.compute_bool_masks()[0]
    for i in range(130):
        assert bool((int(result.masks[0][i // 64]) >> (i % 64)) & 1) == present[i] == (not np.isnan(result.values[0][i]))
    assert not present.all(), "the bitmap marks some points missing"
    assert np.array_equal(result.values_flat, np.concatenate(result.values), equal_nan=True)
    assert result.bytes_read < 4096, "packings kept: only the points' bytes are read"
    legacy = gribjump.ExtractionIterator([result]).dump_legacy()
    assert len(legacy) == 1 and len(legacy[0][0]) == 2


def test_bad_input_is_refused_as_pygribjump_refuses_it(site: dict) -> None:
    gj = gribjump.GribJump(site["store"])
    key = site["fields"][0]["key"]
    with pytest.raises(ValueError, match="lo < hi"):
        gribjump.ExtractionRequest(key, [(5, 5)])
    with pytest.raises(ValueError, match="at least one range"):
        gribjump.ExtractionRequest(key, [])
    with pytest.raises(ValueError, match="at least one True"):
        gribjump.ExtractionRequest.from_mask(key, np.zeros(10, dtype=bool))
    with pytest.raises(ValueError, match="should be a list"):
        gj.extract((key, [(0, 1)]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="should not be empty"):
        gj.extract([])
    with pytest.raises(ValueError, match="list of dictionaries"):
        gj.extract_from_ranges(key, [(0, 1)])  # type: ignore[arg-type]
    several = {k: v for k, v in key.items() if k != "step"}
    with pytest.raises(gribjump.GribJumpException, match="must name one") as raised:
        gj.extract([(several, [(0, 1)])])
    assert raised.value.__cause__ is None
    with pytest.raises(gribjump.GribJumpException) as missing:
        gj.extract([({**key, "step": "999"}, [(0, 1)])])
    assert isinstance(missing.value.__cause__, fieldstore.NotFound)
