"""fieldstore: a store for weather and climate fields with FDB5's semantics.

    import fieldstore
    with fieldstore.FieldStore({"catalogue": {"type": "posix", "root": "/tmp/fields"},
                                "store": {"type": "posix", "root": "/tmp/fields"}}) as fs:
        fs.archive(open("ens.grib", "rb").read())      # keys read from each GRIB message
    fs = fieldstore.FieldStore()                       # the CLI's configuration
    for entry in fs.list({"class": "od", "expver": "0001", "step": [0, 6]}):
        print(entry.key(), entry.length)
    data = fs.retrieve("class=od,expver=0001,step=6").read()

Every storage call releases the GIL; one FieldStore may be used from many threads at once.
Errors are subclasses of `fieldstore.Error`, one per kind (`NotFound`, `BadRequest`,
`Locked`, ...). See docs/python.md.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import _native
from ._native import (
    AlreadyExists,
    BadConfig,
    BadRequest,
    Conflict,
    Denied,
    Corrupt,
    Error,
    ListEntry,
    Locked,
    NotFound,
    NothingMatched,
    Reader,
    StorageError,
    Timeout,
    Unavailable,
    Unsupported,
    __version__,
)

__all__ = [
    "FieldStore",
    "Extracted",
    "ListEntry",
    "Reader",
    "Error",
    "BadRequest",
    "BadConfig",
    "NotFound",
    "NothingMatched",
    "AlreadyExists",
    "Locked",
    "Corrupt",
    "StorageError",
    "Timeout",
    "Unavailable",
    "Unsupported",
    "Conflict",
    "Denied",
    "__version__",
]

#: A MARS request: text (`class=od,expver=0001,step=0/to/12/by/6`) or a mapping of keywords to
#: a value or a list of values.
Request = Union[str, Mapping[str, Union[str, int, Sequence[Union[str, int]]]]]
#: A field's key: text (`class=od,expver=0001,...`) or a mapping of keywords to one value each.
KeyLike = Union[str, Mapping[str, Union[str, int]]]
#: A configuration: None (the CLI's resolution), a mapping, YAML text, or a file's path.
ConfigLike = Union[None, Mapping[str, Any], str, "os.PathLike[str]"]

#: Characters the MARS request language gives a meaning (separators, quotes, comments): a value
#: holding one could change what a request names, e.g. make a wipe remove more.
_SPECIAL = set(',="\'`\\#')
#: One value made only of characters that stand for themselves in a request (printable ASCII,
#: no space, none of `_SPECIAL`, no `/`), and values of such separated by `/`: most requests'
#: values, checked at once (`_text` says what is wrong with the others).
_PLAIN_PART = "[" + re.escape("".join(c for c in map(chr, range(0x21, 0x7F)) if c not in _SPECIAL and c != "/")) + "]+"
_PLAIN_VALUE = re.compile(_PLAIN_PART)
_PLAIN_VALUES = re.compile(f"{_PLAIN_PART}(?:/{_PLAIN_PART})*")


def _text(value: Any, keyword: str, slashes: bool = False) -> str:
    """A keyword's or value's text, refused (`BadRequest`) unless every character of it stands
    for itself in a request: printable ASCII, no space, none of `_SPECIAL`, `/` only between
    values of a text value (`0/to/12`), and not `off` (which unsets a keyword)."""
    text = str(value)
    if (_PLAIN_VALUES if slashes else _PLAIN_VALUE).fullmatch(text) and "off" not in text.lower():
        return text
    if text == "" and keyword != "":
        # The absence of an optional keyword, as listings give it (`timespan=`).
        return text
    bad = next((c for c in text if not (c.isascii() and c.isprintable()) or c.isspace() or c in _SPECIAL), None)
    if bad is not None:
        raise BadRequest(f"value {text!r} of keyword {keyword!r} holds {bad!r}, which a request would not read as part of it")
    parts = text.split("/") if slashes else [text]
    if any(part == "" for part in parts) or (not slashes and "/" in text):
        raise BadRequest(f"value {text!r} of keyword {keyword!r}: '/' separates values, and no value is empty")
    if any(part.lower() == "off" for part in parts):
        raise BadRequest(f"value {text!r} of keyword {keyword!r}: 'off' unsets a keyword in a request")
    return text


def _request_text(request: Request) -> str:
    """The MARS text of a request given as text or as a mapping."""
    if isinstance(request, str):
        return request
    if not isinstance(request, Mapping):
        raise TypeError(f"a request is a str or a mapping, not {type(request).__name__}")
    items = []
    for keyword, value in request.items():
        # Requests made by the thousand repeat their pairs: each is checked once.
        seen = (keyword, type(value), value) if isinstance(value, (str, int, float)) else None
        item = _PAIRS_SEEN.get(seen) if seen is not None else None
        if item is None:
            item = _pair_text(keyword, value)
            if seen is not None:
                if len(_PAIRS_SEEN) >= 100_000:
                    _PAIRS_SEEN.clear()
                _PAIRS_SEEN[seen] = item
        items.append(item)
    return ",".join(items)


#: `keyword=value` texts of pairs checked by `_pair_text`, by keyword, value type and value.
_PAIRS_SEEN: Dict[Tuple[Any, type, Any], str] = {}


def _pair_text(keyword: Any, value: Any) -> str:
    """A request's `keyword=value` text, each part checked by `_text`."""
    keyword = _text(keyword, str(keyword))
    if isinstance(value, (str, int, float)):
        values = [_text(value, keyword, slashes=isinstance(value, str))]
    else:
        values = [_text(v, keyword) for v in value]
        if len(values) > 1 and "" in values:
            raise BadRequest(f"keyword {keyword!r}: an empty value names its absence, alone, not in a list of values")
    return f"{keyword}={'/'.join(values)}"


def _key_text(key: KeyLike) -> str:
    """The text of a field's key given as text or as a mapping."""
    if isinstance(key, str):
        return key
    if not isinstance(key, Mapping):
        raise TypeError(f"a key is a str or a mapping, not {type(key).__name__}")
    items = []
    for keyword, value in key.items():
        if not isinstance(value, (str, int)):
            raise BadRequest(f"keyword {keyword!r} of a key takes one value, not {type(value).__name__}")
        items.append(f"{_text(keyword, str(keyword))}={_text(value, str(keyword))}")
    return ",".join(items)


def _open(config: ConfigLike) -> "_native.FieldStore":
    if config is None:
        return _native.FieldStore()
    if isinstance(config, Mapping):
        # JSON is YAML.
        return _native.FieldStore(config_text=json.dumps(config))
    if isinstance(config, os.PathLike):
        return _native.FieldStore(config_path=os.fspath(config))
    if isinstance(config, str):
        # YAML text has a line break, a mapping's colon or braces; a path has none of these.
        if "\n" in config or ": " in config or config.lstrip().startswith("{"):
            return _native.FieldStore(config_text=config)
        return _native.FieldStore(config_path=config)
    raise TypeError(f"a configuration is None, a mapping, YAML text or a path, not {type(config).__name__}")


class Extracted(NamedTuple):
    """One field's points extracted by `FieldStore.extract`."""

    #: The field's key: keyword to value.
    key: Dict[str, str]
    #: Per range, a float64 array of its points' values (NaN where the field has none).
    values: List[Any]
    #: Per range, a bool array: whether each point has a value.
    masks: List[Any]
    #: The bytes read for the field (its whole message the first time this handle reads it).
    bytes_read: int
    #: Whether the field was read whole and decoded by ecCodes (a packing not read natively).
    decoded_whole: bool


def _extracted(answers: List[List[Tuple[str, bytes, bytes, int, bool]]], ranges: List[List[Tuple[int, int]]]) -> List[List[Extracted]]:
    """The native layer's extracted fields of each request (`ranges` its ranges) as
    `Extracted`, their points split by range: views of one array of every field's values and
    one of their masks (made at once: a request per field is common, thousands of them)."""
    import numpy as np

    fields = [field for answer in answers for field in answer]
    all_values = np.frombuffer(b"".join(field[1] for field in fields), dtype=np.float64)
    all_masks = np.frombuffer(b"".join(field[2] for field in fields), dtype=np.uint8).astype(bool)
    out, at = [], 0
    for answer, asked in zip(answers, ranges):
        extracted = []
        for identifier, _, _, bytes_read, decoded_whole in answer:
            key = dict(pair.split("=", 1) for pair in identifier.split(","))
            split_values, split_masks = [], []
            for start, end in asked:
                split_values.append(all_values[at : at + end - start])
                split_masks.append(all_masks[at : at + end - start])
                at += end - start
            extracted.append(Extracted(key, split_values, split_masks, bytes_read, decoded_whole))
        out.append(extracted)
    return out


def _ranges(ranges: Optional[Sequence[Tuple[int, int]]], indices: Any, mask: Any) -> List[Tuple[int, int]]:
    """The ranges `extract` was given, or made of indices or of a mask (runs of points, as
    gribjump's `from_indices` and `from_mask` make them)."""
    given = [value is not None for value in (ranges, indices, mask)]
    if sum(given) != 1:
        raise BadRequest("extract takes one of ranges, indices or mask")
    if ranges is not None:
        return [(int(start), int(end)) for start, end in ranges]
    points = [int(i) for i in indices] if indices is not None else [i for i, marked in enumerate(mask) if marked]
    runs: List[Tuple[int, int]] = []
    for point in points:
        if runs and runs[-1][1] == point:
            runs[-1] = (runs[-1][0], point + 1)
        else:
            runs.append((point, point + 1))
    if not runs:
        raise BadRequest("no grid point to extract: the indices or mask name none")
    return runs


class FieldStore:
    """A handle on a store: archive, flush, retrieve, list, axes, wipe, purge, control, stats, where.

    `config`: None (as the CLI: `$FIELDSTORE_CONFIG`, FDB5's variables, else a POSIX store under
    `$FIELDSTORE_ROOT`), a mapping, YAML text, or the path of a YAML file; fieldstore's format or
    FDB5's. As a context manager, the handle flushes when the block ends without an error.
    """

    def __init__(self, config: ConfigLike = None) -> None:
        self._native = _open(config)

    @classmethod
    def from_yaml(cls, text: str) -> "FieldStore":
        """A handle on the store a configuration's YAML text names (never read as a path)."""
        store = cls.__new__(cls)
        store._native = _native.FieldStore(config_text=text)
        return store

    def __enter__(self) -> "FieldStore":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.flush()

    def archive(self, data: Union[bytes, bytearray, memoryview], key: Optional[KeyLike] = None) -> int:
        """Archives `data` under `key`, or without a key every GRIB message in `data` under the
        keys read from it; returns the fields archived. Visible after `flush()`."""
        if isinstance(data, memoryview):
            data = data.tobytes()
        return self._native.archive(data, None if key is None else _key_text(key))

    def flush(self) -> None:
        """Makes everything archived through this handle durable and visible to readers."""
        self._native.flush()

    def retrieve(self, request: Request) -> Reader:
        """A reader of the fields `request` names, in the order it names values: `read()`, or
        iteration field by field. Raises `NotFound` saying why when nothing matched."""
        return self._native.retrieve(_request_text(request))

    def read_entry(self, entry: ListEntry) -> Reader:
        """A reader of a listed field's bytes where the listing found them (a superseded
        field's too), not resolved again."""
        return self._native.read_entries([entry])

    def read_entries(self, entries: Sequence[ListEntry]) -> Reader:
        """A reader of listed fields' bytes, in the order given, where the listing found them;
        adjacent fields are read together. Iterate it for each field's bytes."""
        return self._native.read_entries(list(entries))

    def decode_entries(self, entries: Sequence[ListEntry], points: int, dtype: str = "float64", out: Any = None) -> Optional[bytes]:
        """Listed fields' values, read where the listing found them and decoded (GRIB through
        ecCodes, or natively where identical: `docs/arrays-design.md`), `points` values of
        `dtype` (`float32` or `float64`) per field, missing points NaN: as one `bytes` of
        little-endian values, or into `out` (a writable C-contiguous buffer of as many fields,
        such as a numpy array; then None). Reads and decodes on several threads, the GIL
        released, without a `bytes` object for any message."""
        entries = list(entries)
        if out is None:
            return self._native.decode_entries(entries, points, dtype)
        if hasattr(self._native, "decode_entries_into"):
            self._native.decode_entries_into(entries, out, dtype)
        else:
            # A build for Python before 3.11 (no buffer protocol in its stable ABI): one copy.
            memoryview(out).cast("B")[:] = self._native.decode_entries(entries, points, dtype)
        return None

    def absolute_uri(self, entry: ListEntry) -> Optional[str]:
        """Where a listed field's bytes are, as other programs open them: on POSIX, the data
        file's absolute path (`entry.uri` is relative to its root); None above fields."""
        return None if entry.uri is None else self._native.absolute_uri(entry.uri)

    def list(self, request: Request, depth: int = 3, include_superseded: bool = False) -> Iterator[ListEntry]:
        """The data sets (depth 1), collocations (2) or fields (3) `request` names; fields hidden
        by a newer archive of the same key too when `include_superseded`."""
        return iter(self._native.list(_request_text(request), depth, include_superseded))

    def axes(self, request: Request, level: Optional[int] = None) -> Dict[str, List[str]]:
        """The values stored for each keyword among what `request` names. With `level` (1, 2
        or 3, as FDB5's axes take it): the keywords of the schema's levels 1 to `level` only,
        in name order, a keyword some of those fields lack (an optional one) with the empty
        value first among its values; nothing matched is then no keyword, not an error."""
        text = _request_text(request)
        if level is None:
            return self._native.axes(text)
        if level not in (1, 2, 3):
            raise ValueError(f"axes: level {level}: the schema's levels are 1, 2 and 3")
        values = self._native.axes(text)
        lacking: Dict[str, bool] = {}
        for entry in self.list(text, depth=level):
            for part in (entry.dataset, entry.collocation, entry.element)[:level]:
                for keyword, value in (part or {}).items():
                    lacking[keyword] = lacking.get(keyword, False) or value == ""
        return {k: ([""] if absent else []) + list(values.get(k, [])) for k, absent in sorted(lacking.items())}

    def wipe(self, request: Request, doit: bool = False) -> Dict[str, Any]:
        """Removes what `request` names (FDB5's minimum keys: class, expver, stream, date,
        time). A dry run, reporting what would go, unless `doit`."""
        return json.loads(self._native.wipe(_request_text(request), doit))

    def purge(self, request: Request, doit: bool = False) -> Dict[str, Any]:
        """Reclaims fields replaced by newer archives among what `request` names. A dry run
        unless `doit`."""
        return json.loads(self._native.purge(_request_text(request), doit))

    def hide(self, request: Request, doit: bool = False) -> List[Dict[str, Any]]:
        """Hides every field of the data sets `request` names from readers, removing nothing
        (FDB5's fdb-hide); fields archived afterwards are seen as usual. A dry run unless
        `doit`: one report per data set (its key, indexes and fields)."""
        return json.loads(self._native.hide(_request_text(request), doit))

    def overlay(
        self,
        source: Request,
        target: Request,
        remove: bool = False,
        force: bool = False,
        variable_keys: Optional[Sequence[str]] = None,
    ) -> Dict[str, Any]:
        """Shows the data set `source` names as part of the one `target` names, whose key
        differs only in `variable_keys` (class and expver), copying nothing (FDB5's
        fdb-overlay): readers of the target then see the source's fields, read with the
        target's keys set in each message. The target is made unless it exists (then
        `force`); `remove` stops showing the source. Returns the source, the target, whether
        the source is shown, whether the target was made, and the data sets overlaid now."""
        keys = list(variable_keys) if variable_keys is not None else None
        return json.loads(self._native.overlay(_request_text(source), _request_text(target), remove, force, keys))

    def reindex_into(self, sink: "FieldStore", request: Request, ignore_no_data: bool = False) -> Dict[str, Any]:
        """Indexes the fields `request` names again in the catalogue of `sink`, over their data
        where it lies (FDB5's fdb-reindex): no byte is copied, so `sink`'s store must read
        this store's data (the same root, bucket or pool; checked first). Returns the fields,
        their bytes and the sink's data sets indexed."""
        return json.loads(self._native.reindex_into(sink._native, _request_text(request), ignore_no_data))

    def copy_to(
        self,
        target: "FieldStore",
        request: Request,
        modifiers: Optional[Mapping[str, Any]] = None,
        sort_by_location: bool = False,
        read_back: bool = False,
        batch_bytes: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Copies the fields `request` names into `target`, another store (FDB5's fdb-copy):
        streamed, resumable (what `target` holds already with the same bytes is not copied
        again) and verified (every copy's checksum checked in `target`; with `read_back`,
        each read back). `modifiers` sets GRIB keys in each message through ecCodes
        (`{"expver": "0042"}`); `batch_bytes` is how much is archived between flushes of
        `target` (256 MiB). Returns the counts: fields, bytes, copied, bytes_copied,
        already_there, verified, read_back."""
        modifier_text = ",".join(f"{k}={v}" for k, v in (modifiers or {}).items())
        return json.loads(
            self._native.copy_to(target._native, _request_text(request), modifier_text or None, sort_by_location, read_back, batch_bytes)
        )

    def move(
        self,
        request: Request,
        dest: Optional[Union[str, "os.PathLike[str]"]] = None,
        keep: bool = False,
        delay: float = 0.0,
        threads: int = 1,
        target: Optional["FieldStore"] = None,
    ) -> Dict[str, Any]:
        """Moves the data sets `request` names (at least class and expver) to `dest`, another
        root of their space in this store's POSIX configuration (FDB5's fdb-move): readers
        find every field throughout, writers are refused while a data set moves, and a move
        killed at any instant leaves each data set whole in one root (run it again to finish
        it). `keep` keeps each source, hidden in its root; `delay` is the seconds between the
        switch and the removal of a source; `threads` the files copied at once. Returns, per
        data set, its directories before and after and the files and bytes copied.

        Or, with `target` (another `FieldStore`, any backend) instead of `dest`: each data set
        is locked for archiving, copied with one flush, every field checked in `target`, then
        wiped here; per data set, its copy's counts."""
        if (dest is None) == (target is None):
            raise ValueError("move needs dest (a root) or target (another FieldStore), not both")
        if target is not None:
            return json.loads(self._native.move_to_store(target._native, _request_text(request)))
        return json.loads(self._native.move_to(_request_text(request), os.fspath(dest), keep, delay, threads))

    def compact(self, request: Request) -> Dict[str, Any]:
        """Merges the small indexes of the data sets `request` names into larger ones
        (object-store catalogues), changing nothing any reader sees; per data set, its
        indexes before and after and what was written."""
        return json.loads(self._native.compact(_request_text(request)))

    def control(self, request: Request, actions: Iterable[str] = (), lock: Optional[bool] = None) -> Dict[str, List[str]]:
        """Locks (`lock=True`), unlocks (`False`) or reports (`None`) `actions` (archive,
        retrieve, list, wipe; all when none are named) on the data sets `request` names;
        returns each data set's locked actions."""
        states = json.loads(self._native.control(_request_text(request), list(actions), lock))
        return {dataset: locked for dataset, locked in states}

    def lock(self, request: Request, actions: Iterable[str] = ()) -> Dict[str, List[str]]:
        """Locks `actions` (all when none are named) on the data sets `request` names."""
        return self.control(request, actions, True)

    def unlock(self, request: Request, actions: Iterable[str] = ()) -> Dict[str, List[str]]:
        """Unlocks `actions` (all when none are named) on the data sets `request` names."""
        return self.control(request, actions, False)

    def stats(self, request: Request) -> Dict[str, Any]:
        """Counts of what `request` names: data sets, indexes, fields, bytes, superseded ones;
        under `catalogue`, what the catalogue says of its own files (POSIX: TOC records and
        sizes, index and owned data files), or None where it does not say."""
        return json.loads(self._native.stats(_request_text(request)))

    def where(self, request: Request) -> List[Dict[str, Any]]:
        """Where each data set `request` names lives: its key, catalogue and store."""
        return json.loads(self._native.where_is(_request_text(request)))

    def extract(
        self,
        request: Request,
        ranges: Optional[Sequence[Tuple[int, int]]] = None,
        indices: Any = None,
        mask: Any = None,
    ) -> List[Extracted]:
        """Grid points of every field `request` names, reading only the bytes that hold them:
        `ranges` of `[start, end)` points, or `indices` of points, or a boolean `mask` with a
        value per point (one of them). Needs numpy. Raises `NotFound` saying why when
        nothing matched, `BadRequest` for a range beyond a field."""
        chosen = _ranges(ranges, indices, mask)
        return _extracted([self._native.extract(_request_text(request), chosen)], [chosen])[0]

    def extract_each(self, requests: Sequence[Tuple[Request, Sequence[Tuple[int, int]]]]) -> List[List[Extracted]]:
        """`extract` of several requests, each with its `[start, end)` ranges, read at once
        (many fields in flight): per request, its fields' `Extracted`, in the requests' order.
        Raises as `extract` does for the first request that fails."""
        chosen = [(_request_text(request), [(int(start), int(end)) for start, end in ranges]) for request, ranges in requests]
        answers = self._native.extract_each(chosen)
        return _extracted(answers, [ranges for _, ranges in chosen])

    def keep_packings(self, request: Request) -> Dict[str, Any]:
        """Keeps the packing of every field `request` names beside its data (`fieldstore
        scan`, gribjump-scan's job), so that extractions read only their points' bytes; says
        how many fields, how many were kept already, learnt, the bytes read and the side
        objects written."""
        return json.loads(self._native.keep_packings(_request_text(request)))
