"""pyfdb 5.25's result elements over fieldstore's results: `ListElement`, `IndexAxis`,
`StatusElement`, `ControlElement`, `WipeElement`, `PurgeElement`, `StatsElement` (the names
and behaviour of `pyfdb.pyfdb_iterator`)."""

from __future__ import annotations

from collections.abc import Collection, ItemsView, Iterator, KeysView, Mapping, ValuesView
from enum import IntEnum, auto
from typing import Dict, List, Optional

import fieldstore

from .pyfdb_type import URI, ControlIdentifier, DataHandle, MarsSelection, selection_values


def _sorted(pairs: Optional[Dict[str, str]], drop_absent: bool = False) -> Dict[str, str]:
    """A key's keywords in order; without the absent optional ones (an empty value) when
    `drop_absent`, as pyfdb lists a field's own keywords (its data set's and collocation's
    keep them: `timespan=`)."""
    return dict(sorted((k, v) for k, v in (pairs or {}).items() if not (drop_absent and v == "")))


class ListElement:
    """One listed data set (level 1), collocation (level 2) or field (level 3)."""

    # One is made per listed field: slots, and the reader's opener made only when asked.
    __slots__ = ("_entry", "_store")

    def __init__(self, entry: fieldstore.ListEntry, store: fieldstore.FieldStore, *, _internal: bool = False) -> None:
        if not _internal:
            raise TypeError("Creating a ListElement from user code is not supported.")
        self._entry = entry
        self._store = store

    def has_location(self) -> bool:
        """Whether the element is a field (level 3), with a location."""
        return self._entry.uri is not None

    def offset(self) -> Optional[int]:
        """Where the field starts in its file or object (level 3), else None."""
        return self._entry.offset

    def length(self) -> Optional[int]:
        """The field's length in bytes (level 3), else None."""
        return self._entry.length

    def keys(self) -> List[Dict[str, str]]:
        """The keys of the schema's three levels, each sorted by keyword; levels below the one
        listed are empty. A field's own key leaves out the optional keywords it lacks."""
        return [_sorted(self._entry.dataset), _sorted(self._entry.collocation), _sorted(self._entry.element, drop_absent=True)]

    def combined_key(self) -> Dict[str, str]:
        """The keys of every level listed, in one dict sorted by keyword."""
        combined: Dict[str, str] = {}
        for level in self.keys():
            combined.update(level)
        return dict(sorted(combined.items()))

    @property
    def data_handle(self) -> Optional[DataHandle]:
        """A handle on the field's bytes (level 3), else None."""
        if not self.has_location():
            return None
        entry, store = self._entry, self._store
        return DataHandle(lambda: store.read_entry(entry), _internal=True)

    @property
    def uri(self) -> Optional[URI]:
        """Where the field's bytes are (level 3): the data file's absolute path on POSIX, an
        object's name on object stores."""
        location = self._store.absolute_uri(self._entry)
        return None if location is None else URI(location)

    def __repr__(self) -> str:
        text = "".join("{" + ",".join(f"{k}={v}" for k, v in level.items()) + "}" for level in self._levels())
        return f"{text},length={self._entry.length or 0}"

    def _levels(self) -> List[Dict[str, str]]:
        return [level for level in (self._entry.dataset, self._entry.collocation, self._entry.element) if level is not None]


class _WipeElementType(IntEnum):
    """The kinds of a wipe's report as fieldstore's native layer gives it: each is a list of
    its report (`report_field`), or, for CATALOGUE_INFO, the data sets wiped."""

    ERROR = 0
    CATALOGUE_INFO = auto()
    CATALOGUE = auto()
    CATALOGUE_INDEX = auto()
    CATALOGUE_SAFE = auto()
    CATALOGUE_CONTROL = auto()
    STORE = auto()
    STORE_AUX = auto()
    STORE_SAFE = auto()
    UNKNOWN = auto()

    @property
    def report_field(self) -> Optional[str]:
        return _REPORT_FIELDS.get(self)


_REPORT_FIELDS = {
    _WipeElementType.CATALOGUE_INFO: "datasets",
    _WipeElementType.CATALOGUE: "catalogue_files",
    _WipeElementType.CATALOGUE_CONTROL: "control_files",
    _WipeElementType.CATALOGUE_INDEX: "catalogue_removed",
    _WipeElementType.STORE: "removed",
    _WipeElementType.STORE_SAFE: "in_use",
}


class WipeElementType(IntEnum):
    """What a wipe element reports."""

    ERROR = 0
    CATALOGUE_INFO = auto()
    CATALOGUE = auto()
    CATALOGUE_INDEX = auto()
    CATALOGUE_SAFE = auto()
    CATALOGUE_CONTROL = auto()
    STORE = auto()
    STORE_AUX = auto()
    STORE_SAFE = auto()
    UNKNOWN = auto()

    @classmethod
    def _from_raw(cls, raw: _WipeElementType) -> "WipeElementType":
        return cls[raw.name]


class WipeElement:
    """One part of a wipe's report: what it is, a message, and the files or objects it names."""

    def __init__(self, kind: WipeElementType, msg: str, uris: List[str], *, _internal: bool = False) -> None:
        if not _internal:
            raise TypeError("Creating a WipeElement from user code is not supported.")
        self._type, self._msg, self._uris = kind, msg, [URI(u) for u in uris]

    def type(self) -> WipeElementType:
        return self._type

    def msg(self) -> str:
        return self._msg

    def uris(self) -> List[URI]:
        return self._uris

    def __repr__(self) -> str:
        return "\n".join([self._msg, *(f"    {u!r}" for u in self._uris)])


class _DatasetControls:
    """A data set's key (keyword -> [value]), where it is, and its disabled identifiers."""

    def __init__(self, dataset: str, locked: List[str], location: str, *, _internal: bool = False) -> None:
        if not _internal:
            raise TypeError(f"Creating a {type(self).__name__} from user code is not supported.")
        pairs = [item.split("=", 1) for item in dataset.split(",") if item]
        self._key = {k: [v] for k, v in sorted(pairs) if v}
        self._identifiers = [ControlIdentifier[action.upper()] for action in _IDENTIFIER_ORDER if action in locked]
        self._location = URI(location)

    def __eq__(self, other: object, /) -> bool:
        # A status and a control element of the same data set and identifiers are equal, as in pyfdb.
        return isinstance(other, _DatasetControls) and (self._key, self._identifiers, self._location) == (other._key, other._identifiers, other._location)

    def __ne__(self, other: object, /) -> bool:
        return not self.__eq__(other)

    def location(self) -> URI:
        return self._location

    def controlIdentifiers(self) -> List[ControlIdentifier]:  # noqa: N802 - pyfdb's name
        """The identifiers disabled on the data set."""
        return list(self._identifiers)

    def key(self) -> MarsSelection:
        return dict(self._key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(control_identifiers={self._identifiers}, key={self._key}, location={self._location!r})"


#: The order pyfdb lists disabled identifiers in.
_IDENTIFIER_ORDER = ["list", "retrieve", "archive", "wipe"]


class StatusElement(_DatasetControls):
    """A data set and the identifiers disabled on it (`FDB.status`)."""


class ControlElement(_DatasetControls):
    """A data set and the identifiers disabled on it after `FDB.control`."""


class PurgeElement:
    """One line of a purge's report."""

    def __init__(self, line: str, *, _internal: bool = False) -> None:
        if not _internal:
            raise TypeError("Creating a PurgeElement from user code is not supported.")
        self._line = line

    def __repr__(self) -> str:
        return self._line


class StatsElement:
    """A report of what a selection names: data set and index statistics, as text."""

    def __init__(self, db: str, index: str, *, _internal: bool = False) -> None:
        if not _internal:
            raise TypeError("Creating a StatsElement from user code is not supported.")
        self._db, self._index = db, index

    def db_statistics(self) -> str:
        return self._db

    def index_statistics(self) -> str:
        return self._index

    def __repr__(self) -> str:
        return f"Index Statistics:\n{self._index}\nDB Statistics:\n{self._db}"


class IndexAxis(Mapping):
    """The values stored per keyword (`FDB.axes`): a read-only mapping of keyword -> values."""

    def __init__(self, index_axis: Mapping) -> None:
        if not isinstance(index_axis, Mapping):
            raise TypeError(f"IndexAxis: unknown type {type(index_axis)}; only a dict[str, Collection[str]] is allowed")
        self._axes: Dict[str, List[str]] = selection_values(index_axis)

    def __getitem__(self, key: str) -> Collection:
        try:
            return self._axes[key]
        except KeyError:
            raise KeyError(f"Couldn't find key: {key!r} (the axes are of {', '.join(self._axes) or 'no keyword'})") from None

    def __setitem__(self, key: str, value: object) -> None:
        raise TypeError("This mapping is read-only")

    def __delitem__(self, key: str) -> None:
        raise TypeError("This mapping is read-only")

    def clear(self) -> None:
        raise TypeError("This mapping is read-only")

    def __len__(self) -> int:
        return len(self._axes)

    def __iter__(self) -> Iterator[str]:
        return iter(self._axes)

    def __eq__(self, value: object) -> bool:
        if not isinstance(value, Mapping):
            return False
        other = {k: [v] if isinstance(v, str) else [str(v)] if not isinstance(v, Collection) else list(v) for k, v in value.items()}
        return {k: list(v) for k, v in self._axes.items()} == other

    def __ne__(self, value: object, /) -> bool:
        return not self.__eq__(value)

    def has_key(self, k: str) -> bool:
        return k in self._axes

    def keys(self) -> KeysView:
        return KeysView(self)

    def values(self) -> ValuesView:
        return ValuesView(self)

    def items(self) -> ItemsView:
        return ItemsView(self)

    def __repr__(self) -> str:
        return "IndexAxis[axis={" + ",".join(f"{k}=({','.join(v)})" for k, v in self._axes.items()) + "}]"
