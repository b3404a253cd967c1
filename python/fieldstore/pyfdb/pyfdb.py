"""pyfdb 5.25's `FDB` over a fieldstore handle: the same constructor (FDB5's configuration
format, as a dict, YAML text or a path), methods, arguments and results."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any, Dict, Generator, Iterable, List, Optional, Tuple, Union

import fieldstore

from .pyfdb_iterator import (
    ControlElement,
    IndexAxis,
    ListElement,
    PurgeElement,
    StatsElement,
    StatusElement,
    WipeElement,
    WipeElementType,
)
from ._internal import _ControlAction, _ControlIdentifier
from ._internal.pyfdb_internal import ConfigMapper, FDBToolRequest, have_yaml
from .pyfdb_iterator import _WipeElementType
from .pyfdb_type import (
    ControlAction,
    ControlIdentifier,
    DataHandle,
    MarsIdentifier,
    MarsSelection,
    identifier_key,
    selection_request,
    tool_request,
)

logger = logging.getLogger(__name__)

Config = Union[str, dict, Path, None]

#: FDB5's options that disable identifiers for the whole FDB, as `enabled` reports them:
#: `writable: false` archive and wipe, `visitable: false` list and retrieve. fieldstore's
#: configuration has no such options: they are honoured here and not passed on.
_DISABLING_OPTIONS = {
    "writable": ControlIdentifier.ARCHIVE | ControlIdentifier.WIPE,
    "visitable": ControlIdentifier.LIST | ControlIdentifier.RETRIEVE,
}


class FDB:
    """An FDB: archive, flush, retrieve, list, inspect, status, wipe, purge, stats, control, axes.

    `config`: a dict, YAML text, a `Path` to a YAML file, or None (`$FDB5_CONFIG_FILE`,
    `$FDB5_CONFIG`, `$FDB_HOME/etc/fdb/config.yaml`, as FDB5 resolves it; fieldstore's own
    variables first). `user_config` is accepted and kept; fieldstore has no user options.
    A context manager that flushes on exit."""

    def __init__(self, config: Config = None, user_config: Config = None) -> None:
        if config is not None and not isinstance(config, (str, dict, Path)):
            raise ValueError(f"Config: Unknown config type, must be str, dict or Path (not {type(config).__name__})")
        if isinstance(config, str) and (not config.strip() or os.path.exists(config)):
            raise fieldstore.BadConfig(f"FDB(config): a str is YAML text, as in pyfdb; pass a Path for a file ({config!r})")
        try:
            self._config = ConfigMapper.to_dict(config)
            self._config_error: Optional[Exception] = None
        except fieldstore.BadConfig as e:
            if have_yaml():
                raise
            # Without PyYAML, YAML text is read by fieldstore below, which says what is wrong
            # with it; `config()` says why it cannot show it.
            self._config, self._config_error = None, e
        self._user_config = ConfigMapper.to_dict(user_config) or {}
        self._disabled = ControlIdentifier.NONE
        for option, identifiers in _DISABLING_OPTIONS.items():
            value = (self._config or {}).get(option, True)
            if not isinstance(value, bool):
                raise fieldstore.BadConfig(f"FDB(config): {option} is true or false, not {value!r}")
            if not value:
                self._disabled |= identifiers
        if self._config is not None and any(option in self._config for option in _DISABLING_OPTIONS):
            # The options fieldstore's configuration does not have, honoured here.
            self._store = fieldstore.FieldStore({k: v for k, v in self._config.items() if k not in _DISABLING_OPTIONS})
        elif isinstance(config, str):
            self._store = fieldstore.FieldStore.from_yaml(config)
        else:
            self._store = fieldstore.FieldStore(config)
        self._dirty = False

    def __enter__(self) -> "FDB":
        return self

    def __exit__(self, exc_type: object, exc_value: object, exc_traceback: object) -> None:
        self.flush()

    def archive(self, data: bytes, identifier: Optional[MarsIdentifier] = None) -> None:
        """Archives `data` under `identifier`, or without one every GRIB message in `data` under
        the keys read from it. Visible after `flush()`."""
        self._check_enabled(ControlIdentifier.ARCHIVE, "archive")
        self._store.archive(data, None if identifier is None else identifier_key(identifier))
        self._dirty = True

    def flush(self) -> None:
        """Makes everything archived durable and visible. Always safe to call."""
        self._store.flush()
        self._dirty = False

    def retrieve(self, mars_selection: MarsSelection) -> DataHandle:
        """A handle on the fields `mars_selection` names (empty when none match)."""
        if len(mars_selection) == 0:
            raise TypeError("FDB.retrieve: Wildcard selection aren't support for retrieving.")
        request = selection_request(mars_selection)
        if not self.enabled(ControlIdentifier.RETRIEVE):
            logger.warning("retrieve: this FDB's configuration says visitable: false; nothing is retrieved")
            return DataHandle(lambda: None, _internal=True)
        return DataHandle(self._opener(request), _internal=True)

    def list(self, mars_selection: MarsSelection, include_masked: bool = False, level: int = 3) -> Generator[ListElement, None, None]:
        """The data sets (level 1), collocations (2) or fields (3) `mars_selection` names (all
        of the store for an empty selection); fields replaced by newer archives too when
        `include_masked`."""
        request = selection_request(mars_selection)
        if not self.enabled(ControlIdentifier.LIST):
            logger.warning("list: this FDB's configuration says visitable: false; nothing is listed")
            return
        store = self._store
        for entry in store.list(request, depth=level, include_superseded=include_masked):
            yield ListElement(entry, store, _internal=True)

    def inspect(self, mars_selection: MarsSelection) -> Generator[ListElement, None, None]:
        """The fields a (full) selection names, one element each."""
        yield from self.list(mars_selection, level=3)

    def status(self, mars_selection: MarsSelection) -> Generator[StatusElement, None, None]:
        """Each data set `mars_selection` names (all for an empty selection), with the
        identifiers disabled on it."""
        yield from self._controls(mars_selection, [], _ControlAction.NONE, StatusElement)

    def wipe(
        self, mars_selection: MarsSelection, doit: bool = False, porcelain: bool = False, unsafe_wipe_all: bool = False
    ) -> Generator[WipeElement, None, None]:
        """Removes what `mars_selection` names (a report only, unless `doit`). An empty
        selection names every data set: each is wiped in turn, as FDB5 does."""
        self._check_enabled(ControlIdentifier.WIPE, "wipe")
        request = tool_request(mars_selection)
        # Each data set the selection names in turn, under its own key: FDB5 wipes any
        # selection (an empty one: everything), where fieldstore's wipe asks for class and expver.
        for entry in self._store.list(request.text(), depth=1):
            dataset = {k: [v] for k, v in entry.dataset.items() if v != ""}
            one = FDBToolRequest({**request.key_values, **dataset}).text()
            report = _unless_nothing_matched(lambda: self._store.wipe(one, doit=doit))
            if report is not None:
                yield from self._wipe_elements(report)

    def purge(self, mars_selection: MarsSelection, doit: bool = False, porcelain: bool = False) -> Generator[PurgeElement, None, None]:
        """Reclaims fields replaced by newer archives (a report only, unless `doit`)."""
        report = _unless_nothing_matched(lambda: self._store.purge(selection_request(mars_selection), doit=doit))
        if report is None:
            return
        yield PurgeElement(f"Superseded fields: {report['superseded_fields']} ({report['superseded_bytes']} bytes)", _internal=True)
        yield PurgeElement(f"Indexes masked: {report['indexes_masked']}", _internal=True)
        yield PurgeElement("Data files to delete:" + "".join(f"\n    {u}" for u in report["removed"]), _internal=True)

    def stats(self, mars_selection: MarsSelection) -> Generator[StatsElement, None, None]:
        """Statistics of each data set `mars_selection` names (all for an empty selection), one
        element each, as FDB5 gives them: of the whole data set, whatever the selection names
        below it."""
        request = selection_request(mars_selection)
        for entry in self._store.list(request, depth=1):
            s = self._store.stats(_dataset_request(entry.dataset))
            index = _report(
                [
                    ("Fields", s["fields"] + s["superseded_fields"]),
                    ("Size of fields", _size(s["bytes"] + s["superseded_bytes"])),
                    ("Reacheable fields", s["fields"]),
                    ("Reachable size", _size(s["bytes"])),
                ],
            )
            db = _report([("Databases", s["datasets"]), *_db_statistics(s)])
            yield StatsElement(db, index, _internal=True)

    def control(
        self, mars_selection: MarsSelection, control_action: ControlAction, control_identifiers: Collection[ControlIdentifier]
    ) -> Generator[ControlElement, None, None]:
        """Disables (locks) or enables (unlocks) `control_identifiers` on the data sets
        `mars_selection` names (all for an empty selection); NONE only reports."""
        raw = [ControlIdentifier(flag)._to_raw() for identifier in control_identifiers for flag in ControlIdentifier if flag and flag & identifier]
        yield from self._controls(mars_selection, raw, ControlAction(control_action)._to_raw(), ControlElement)

    def axes(self, mars_selection: MarsSelection, level: int = 3) -> IndexAxis:
        """The values stored per keyword among what `mars_selection` names (all of the store for
        an empty selection), for the keywords of the schema's levels 1 to `level`; a keyword
        some of those fields lack (an optional one) has the empty value among its values."""
        return IndexAxis(self._store.axes(selection_request(mars_selection), level=level))

    def enabled(self, control_identifier: ControlIdentifier) -> bool:
        """Whether the configuration enables an identifier (all of them, for a combination):
        `writable: false` disables ARCHIVE and WIPE, `visitable: false` LIST and RETRIEVE.
        Locks on data sets are theirs: `status`."""
        return not (self._disabled & ControlIdentifier(control_identifier))

    def dirty(self) -> bool:
        """Whether fields were archived since the last flush."""
        return self._dirty

    def config(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """The configuration and user configuration given, as dicts (empty dicts for none)."""
        if self._config_error is not None:
            raise self._config_error
        return dict(self._config or {}), dict(self._user_config)

    def __repr__(self) -> str:
        return f"FDB(fieldstore {fieldstore.__version__})"

    def _check_enabled(self, identifier: ControlIdentifier, what: str) -> None:
        if not self.enabled(identifier):
            raise fieldstore.Locked(f"{what}: this FDB's configuration says writable: false")

    def _wipe_elements(self, report: Dict[str, Any]) -> Iterable[WipeElement]:
        absolute = self._store._native.absolute_uri
        for dataset in report["datasets"]:
            yield WipeElement(_WipeElementType.CATALOGUE_INFO, f"[Database: {_key_text(dataset)}]", [], _internal=True)
        # FDB5's order and words: the catalogue's files, its locks, its indexes, then the store's.
        messages = {
            _WipeElementType.CATALOGUE: "Catalogue URIs to delete:",
            _WipeElementType.CATALOGUE_CONTROL: "Control URIs to delete:",
            _WipeElementType.CATALOGUE_INDEX: "Index URIs to delete:",
            _WipeElementType.STORE: "Data URIs to delete:",
            _WipeElementType.STORE_SAFE: "Data URIs in use by a live writer, kept:",
        }
        for kind, message in messages.items():
            uris = report[kind.report_field]
            if uris or kind == _WipeElementType.STORE:
                yield WipeElement(kind, message, [absolute(u) for u in uris], _internal=True)

    def _opener(self, request: str):
        """Opens a reader of `request`'s fields, or None when nothing matches (pyfdb's empty handle)."""

        def open_reader() -> Optional[fieldstore.Reader]:
            try:
                return self._store.retrieve(request)
            except fieldstore.NothingMatched as e:
                logger.info("%s", e)
                return None

        return open_reader

    def _controls(self, mars_selection: MarsSelection, identifiers: List[_ControlIdentifier], action: _ControlAction, element: type) -> Iterable:
        request = selection_request(mars_selection)
        actions = [i.action for i in identifiers if i.action is not None]
        unsupported = [i.name for i in identifiers if i.action is None and i != _ControlIdentifier.NONE]
        if unsupported and action.lock is not None:
            logger.warning("control: fieldstore has no %s control (each data set has one root); it is left as it is", ", ".join(unsupported))
        lock = action.lock if actions else None
        states = _unless_nothing_matched(lambda: self._store.control(request, actions, lock))
        if states is None:
            return
        where = {_key_text(w["dataset"]): w["catalogue"] for w in self._store.where(request)}
        for dataset, locked in states.items():
            yield element(dataset, locked, where.get(dataset, ""), _internal=True)


def _dataset_request(dataset: Dict[str, str]) -> str:
    """The request naming one listed data set (its absent optional keywords left out)."""
    return fieldstore._request_text({k: v for k, v in dataset.items() if v != ""})


def _db_statistics(s: Dict[str, Any]) -> List[Tuple[str, Any]]:
    """FDB5's DB statistics (TocDbStats) from a stats report: what the catalogue says of its own
    files where it says it, else the core's counts of data files and indexes. A line whose
    value the catalogue does not know is left out; fieldstore adopts no files (FDB5's
    `fdb-adopt`), so there are none."""
    c = s.get("catalogue") or {}

    def known(key: str, otherwise: Optional[int] = None) -> Optional[int]:
        return c[key] if c.get(key) is not None else otherwise

    def sized(n: Optional[int]) -> Optional[str]:
        return None if n is None else _size(n)

    parts = [known("record_bytes"), known("schema_bytes"), known("index_bytes"), known("data_bytes")]
    total = None if None in parts else sum(parts)
    lines = [
        ("TOC records", known("records")),
        ("Size of TOC files", sized(known("record_bytes"))),
        ("Size of schemas files", sized(known("schema_bytes"))),
        ("TOC records", known("records")),
        ("Owned data files", known("data_files", s["data_objects"])),
        ("Size of owned data files", sized(known("data_bytes"))),
        ("Adopted data files", 0 if c else None),
        ("Size of adopted data files", _size(0) if c else None),
        ("Index files", known("index_files", s["indexes"])),
        ("Size of index files", sized(known("index_bytes"))),
        ("Size of TOC files", sized(known("record_bytes"))),
        ("Total owned size", sized(total)),
        ("Total size", sized(total)),
    ]
    return [(label, value) for label, value in lines if value is not None]


def _report(lines: List[Tuple[str, Any]]) -> str:
    """Statistics as FDB5 prints them: `label<padded> : value` lines."""
    return "".join(f"{label:<32}: {value}\n" for label, value in lines)


def _size(n: int) -> str:
    return f"{n:,} bytes"


def _unless_nothing_matched(call):
    """`call()`, or None when the request named no data set (pyfdb then yields nothing)."""
    try:
        return call()
    except fieldstore.NotFound as e:
        # The core's words when a request named no data set (its other NotFound errors are
        # files or objects missing, which are errors here too).
        if isinstance(e, fieldstore.NothingMatched) or str(e).startswith(("nothing to wipe", "nothing to purge", "no data set matches")):
            logger.info("%s", e)
            return None
        raise


def _key_text(key: Union[str, Dict[str, str]]) -> str:
    return key if isinstance(key, str) else ",".join(f"{k}={v}" for k, v in key.items())
