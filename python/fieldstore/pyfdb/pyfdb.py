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
from .pyfdb_type import ControlAction, ControlIdentifier, DataHandle, MarsIdentifier, MarsSelection, identifier_key, selection_request

logger = logging.getLogger(__name__)

Config = Union[str, dict, Path, None]

#: fieldstore's name for each identifier `control` acts on (UNIQUEROOT has none).
_ACTIONS = {
    ControlIdentifier.LIST: "list",
    ControlIdentifier.RETRIEVE: "retrieve",
    ControlIdentifier.ARCHIVE: "archive",
    ControlIdentifier.WIPE: "wipe",
}


class FDB:
    """An FDB: archive, flush, retrieve, list, inspect, status, wipe, purge, stats, control, axes.

    `config`: a dict, YAML text, a `Path` to a YAML file, or None (`$FDB5_CONFIG_FILE`,
    `$FDB5_CONFIG`, `$FDB_HOME/etc/fdb/config.yaml`, as FDB5 resolves it; fieldstore's own
    variables first). `user_config` is accepted and kept; fieldstore has no user options.
    A context manager that flushes on exit."""

    def __init__(self, config: Config = None, user_config: Config = None) -> None:
        self._config = _as_dict(config)
        self._user_config = _as_dict(user_config) or {}
        if config is None or isinstance(config, (Path, dict)):
            self._store = fieldstore.FieldStore(config)
        else:
            self._store = _from_text(str(config))
        self._dirty = False

    def __enter__(self) -> "FDB":
        return self

    def __exit__(self, exc_type: object, exc_value: object, exc_traceback: object) -> None:
        self.flush()

    def archive(self, data: bytes, identifier: Optional[MarsIdentifier] = None) -> None:
        """Archives `data` under `identifier`, or without one every GRIB message in `data` under
        the keys read from it. Visible after `flush()`."""
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
        return DataHandle(self._opener(selection_request(mars_selection)), _internal=True)

    def list(self, mars_selection: MarsSelection, include_masked: bool = False, level: int = 3) -> Generator[ListElement, None, None]:
        """The data sets (level 1), collocations (2) or fields (3) `mars_selection` names;
        fields replaced by newer archives too when `include_masked`."""
        store = self._store
        for entry in store.list(selection_request(mars_selection), depth=level, include_superseded=include_masked):
            yield ListElement(entry, store, _internal=True)

    def inspect(self, mars_selection: MarsSelection) -> Generator[ListElement, None, None]:
        """The fields a (full) selection names, one element each."""
        yield from self.list(mars_selection, level=3)

    def status(self, mars_selection: MarsSelection) -> Generator[StatusElement, None, None]:
        """Each data set `mars_selection` names, with the identifiers disabled on it."""
        yield from self._controls(mars_selection, None, StatusElement)

    def wipe(
        self, mars_selection: MarsSelection, doit: bool = False, porcelain: bool = False, unsafe_wipe_all: bool = False
    ) -> Generator[WipeElement, None, None]:
        """Removes what `mars_selection` names (a report only, unless `doit`)."""
        report = _unless_nothing_matched(lambda: self._store.wipe(selection_request(mars_selection), doit=doit))
        if report is None:
            return
        for dataset in report["datasets"]:
            yield WipeElement(WipeElementType.CATALOGUE_INFO, f"[Database: {_key_text(dataset)}]", [], _internal=True)
        if report["catalogue_removed"]:
            yield WipeElement(WipeElementType.CATALOGUE, "Catalogue URIs to delete:", report["catalogue_removed"], _internal=True)
        yield WipeElement(WipeElementType.STORE, "Store URIs to delete:", report["removed"], _internal=True)
        if report["in_use"]:
            yield WipeElement(WipeElementType.STORE_SAFE, "Store URIs in use by a live writer, kept:", report["in_use"], _internal=True)

    def purge(self, mars_selection: MarsSelection, doit: bool = False, porcelain: bool = False) -> Generator[PurgeElement, None, None]:
        """Reclaims fields replaced by newer archives (a report only, unless `doit`)."""
        report = _unless_nothing_matched(lambda: self._store.purge(selection_request(mars_selection), doit=doit))
        if report is None:
            return
        yield PurgeElement(f"Superseded fields: {report['superseded_fields']} ({report['superseded_bytes']} bytes)", _internal=True)
        yield PurgeElement(f"Indexes masked: {report['indexes_masked']}", _internal=True)
        yield PurgeElement("Data files to delete:" + "".join(f"\n    {u}" for u in report["removed"]), _internal=True)

    def stats(self, mars_selection: MarsSelection) -> Generator[StatsElement, None, None]:
        """Counts of what `mars_selection` names."""
        s = self._store.stats(selection_request(mars_selection))
        index = f"Index Statistics:\nFields : {s['fields']}\nSize of fields : {s['bytes']}\nSuperseded fields : {s['superseded_fields']}\n"
        db = f"DB Statistics:\nDatabases : {s['datasets']}\nIndexes : {s['indexes']}\nData files : {s['data_objects']}\n"
        yield StatsElement(db, index, _internal=True)

    def control(
        self, mars_selection: MarsSelection, control_action: ControlAction, control_identifiers: Collection[ControlIdentifier]
    ) -> Generator[ControlElement, None, None]:
        """Disables (locks) or enables (unlocks) `control_identifiers` on the data sets
        `mars_selection` names; NONE only reports."""
        lock = {ControlAction.DISABLE: True, ControlAction.ENABLE: False}.get(ControlAction(control_action))
        actions = [name for identifier in control_identifiers for flag, name in _ACTIONS.items() if flag & identifier]
        if lock is not None and not actions:
            return
        yield from self._controls(mars_selection, (actions, lock), ControlElement)

    def axes(self, mars_selection: MarsSelection, level: int = 3) -> IndexAxis:
        """The values stored per keyword among what `mars_selection` names."""
        return IndexAxis(self._store.axes(selection_request(mars_selection)))

    def enabled(self, control_identifier: ControlIdentifier) -> bool:
        """Whether the configuration enables an identifier: always, in fieldstore (locks are
        per data set: `status`)."""
        return True

    def dirty(self) -> bool:
        """Whether fields were archived since the last flush."""
        return self._dirty

    def config(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """The configuration and user configuration given (empty dicts for none)."""
        return dict(self._config or {}), dict(self._user_config)

    def __repr__(self) -> str:
        return f"FDB(fieldstore {fieldstore.__version__})"

    def _opener(self, request: str):
        """Opens a reader of `request`'s fields, or None when nothing matches (pyfdb's empty handle)."""

        def open_reader() -> Optional[fieldstore.Reader]:
            try:
                return self._store.retrieve(request)
            except fieldstore.NothingMatched as e:
                logger.info("%s", e)
                return None

        return open_reader

    def _controls(self, mars_selection: MarsSelection, change: Optional[Tuple[List[str], bool]], element: type) -> Iterable:
        request = selection_request(mars_selection)
        actions, lock = change if change is not None else ([], None)
        states = _unless_nothing_matched(lambda: self._store.control(request, actions, lock))
        if states is None:
            return
        where = {_key_text(w["dataset"]): w["catalogue"] for w in self._store.where(request)}
        for dataset, locked in states.items():
            yield element(dataset, locked, where.get(dataset, ""), _internal=True)


def _unless_nothing_matched(call):
    """`call()`, or None when the request named no data set (pyfdb then yields nothing)."""
    try:
        return call()
    except fieldstore.NotFound as e:
        # The core's words when a request named no data set (its other NotFound errors are
        # files or objects missing, which are errors here too).
        if str(e).startswith(("nothing to wipe", "nothing to purge", "no data set matches")):
            logger.info("%s", e)
            return None
        raise


def _key_text(key: Union[str, Dict[str, str]]) -> str:
    return key if isinstance(key, str) else ",".join(f"{k}={v}" for k, v in key.items())


def _as_dict(config: Config) -> Optional[Dict[str, Any]]:
    if config is None:
        return None
    if isinstance(config, dict):
        return config
    text = Path(config).read_text() if isinstance(config, Path) else str(config)
    try:
        return json.loads(text)
    except ValueError:
        return {"yaml": text}


def _from_text(text: str) -> fieldstore.FieldStore:
    """A handle from YAML text (pyfdb takes a str as YAML, never as a path)."""
    if not text.strip() or os.path.exists(text):
        raise fieldstore.BadConfig(f"FDB(config): a str is YAML text, as in pyfdb; pass a Path for a file ({text!r})")
    return fieldstore.FieldStore.from_yaml(text)
