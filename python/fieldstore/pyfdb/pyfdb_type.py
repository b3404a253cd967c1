"""pyfdb 5.25's value types over fieldstore: selections and identifiers, `DataHandle`, `URI`,
`ControlAction` and `ControlIdentifier` (the names and behaviour of `pyfdb.pyfdb_type`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from enum import IntEnum, IntFlag, auto
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple, Union
from urllib import parse

import fieldstore

from ._internal import _ControlAction, _ControlIdentifier
from ._internal.pyfdb_internal import FDBToolRequest

MarsSelection = Mapping[str, Union[str, int, float, Collection]]
"""A MARS selection: keyword -> a value, a list of values, or MARS text (`0/to/12/by/6`)."""

MarsIdentifier = Union[List[Tuple[str, str]], Dict[str, str]]
"""A field's identifier: keyword -> one value, as a dict or a list of pairs."""


class UserInputMapper:
    """A selection between its user form (keyword -> a value, MARS text such as `0/to/12/by/6`,
    or a collection of values) and pyfdb's internal one (keyword -> a list of values as text)."""

    @classmethod
    def map_selection_to_internal(cls, selection: MarsSelection) -> Dict[str, List[str]]:
        """Each keyword's values as a list of text: `a/b` text split at `/`, a number as its
        text, a collection's items each as text. A mapping or another type is a ValueError
        naming the keyword."""
        result: Dict[str, List[str]] = {}
        for keyword, values in selection.items():
            if isinstance(values, Mapping) or not isinstance(values, (int, float, str, Collection)):
                raise ValueError(
                    f"the value of key '{keyword}' is not valid: a selection maps a key to a value or a collection of values, "
                    f"not {type(values).__name__}"
                )
            if isinstance(values, str):
                result[keyword] = values.split("/")
            elif isinstance(values, (int, float)):
                result[keyword] = [str(values)]
            else:
                result[keyword] = [str(v) for v in values]
        return result

    @classmethod
    def map_selection_to_external(cls, selection: Mapping[str, Union[str, int, float, Collection]]) -> Dict[str, Union[str, List[str]]]:
        """The user form of an internal selection: a collection as a list of text, one value as text."""
        result: Dict[str, Union[str, List[str]]] = {}
        for keyword, values in selection.items():
            if isinstance(values, (str, int, float)):
                result[keyword] = str(values)
            elif isinstance(values, Collection) and not isinstance(values, Mapping):
                result[keyword] = [str(v) for v in values]
            else:
                raise ValueError(f"the value of key '{keyword}' is not valid: a value or a collection of values, not {type(values).__name__}")
        return result


def selection_values(selection: MarsSelection) -> Dict[str, List[str]]:
    """A selection's values as lists of text (`UserInputMapper.map_selection_to_internal`)."""
    return UserInputMapper.map_selection_to_internal(selection)


def tool_request(selection: MarsSelection) -> FDBToolRequest:
    """The request a selection names; an empty one names all of the store."""
    return FDBToolRequest.from_internal_mars_selection(selection_values(selection))


def selection_request(selection: MarsSelection) -> str:
    """The MARS text of a selection (empty for all of the store). A value fieldstore cannot
    read is a BadRequest (a RuntimeError), named as FDB5 names it (`UserError: Bad value`)."""
    request = tool_request(selection)
    try:
        return request.text()
    except fieldstore.BadRequest as e:
        raise fieldstore.BadRequest(f"UserError: Bad value in {request!r}: {e}") from None


def identifier_key(identifier: MarsIdentifier) -> str:
    """The key text of an identifier, with pyfdb's checks: a list of pairs or a dict, each key
    once (KeyError), one value each (ValueError)."""
    if isinstance(identifier, list):
        pairs = identifier
    elif isinstance(identifier, dict):
        pairs = list(identifier.items())
    else:
        raise ValueError("an identifier is a list of (key, value) pairs or a dict of keys to values")
    seen: Dict[str, str] = {}
    for keyword, value in pairs:
        if keyword in seen:
            raise KeyError(f"key {keyword} is already in identifier {seen}")
        if isinstance(value, list) or "/" in str(value):
            raise ValueError("an identifier maps each key to one value, not a list of values")
        seen[keyword] = str(value)
    return fieldstore._key_text(seen)


class DataHandle:
    """The bytes of retrieved fields: `open()` before `read`/`readinto`, `readall()` on its own,
    `size()`, and a context manager that opens and closes.

    Unlike pyfdb 5.25, a `read(n)` near the end returns only the bytes that are left, never
    zeros after them."""

    def __init__(self, open_reader: Callable[[], Optional[fieldstore.Reader]], *, _internal: bool = False) -> None:
        if not _internal:
            raise TypeError("Creating a DataHandle from user code is not supported.")
        self._open_reader = open_reader
        self._reader: Optional[fieldstore.Reader] = None
        self._size: Optional[int] = None
        self.opened = False

    def __enter__(self) -> "DataHandle":
        self.open()
        return self

    def __exit__(self, exc_type: object, exc_value: object, exc_traceback: object) -> None:
        self.close()

    def open(self) -> None:
        """Opens the handle for reading (again from the start after a `close()`)."""
        if self.opened:
            return
        self._reader = self._open_reader()
        self._size = 0 if self._reader is None else self._reader.size()
        self.opened = True

    def close(self) -> None:
        """Closes the handle."""
        self.opened = False
        if self._reader is not None:
            self._reader.close()
        self._reader = None

    def size(self) -> int:
        """The length of all the retrieved fields together, in bytes."""
        if self._size is None:
            reader = self._open_reader()
            self._size = 0 if reader is None else reader.size()
        return self._size

    def _check_open(self) -> fieldstore.Reader:
        if not self.opened:
            raise RuntimeError("DataHandle: Read occured before the handle was opened. Must be opened first.")
        return self._reader

    def read(self, len: int = -1) -> bytes:  # noqa: A002 - pyfdb's name
        """Up to `len` bytes (all that are left when -1)."""
        reader = self._check_open()
        return b"" if reader is None else reader.read(len)

    def readinto(self, buffer: memoryview) -> int:
        """Reads into `buffer`; returns how many bytes were read."""
        reader = self._check_open()
        if reader is None:
            return 0
        return reader.readinto(buffer)

    def readall(self, buffer_size: int = 1024) -> bytes:
        """All the bytes, opening and closing the handle."""
        self.open()
        try:
            reader = self._reader
            return b"" if reader is None else reader.readall()
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"[{'Opened' if self.opened else 'Closed'}] Datahandle: fieldstore retrieve"


class ControlIdentifier(IntFlag):
    """What `control` acts on: LIST, RETRIEVE, ARCHIVE, WIPE (UNIQUEROOT has no meaning in
    fieldstore, where each data set has one directory)."""

    NONE = 0
    LIST = auto()
    RETRIEVE = auto()
    ARCHIVE = auto()
    WIPE = auto()
    UNIQUEROOT = auto()

    @classmethod
    def _from_raw(cls, raw: _ControlIdentifier) -> "ControlIdentifier":
        """The identifier of its raw (native) form."""
        return cls[raw.name]

    def _to_raw(self) -> _ControlIdentifier:
        """The raw (native) form of one identifier (a combination has none: ValueError)."""
        names = [flag.name for flag in ControlIdentifier if flag.value and self.value & flag.value] or ["NONE"]
        if len(names) > 1:
            raise ValueError(f"{self!r} combines identifiers; each has its own raw form")
        return _ControlIdentifier[names[0]]

    def __repr__(self) -> str:
        names = "|".join(flag.name for flag in ControlIdentifier if flag.value and self.value & flag.value)
        return names or "NONE"

    def __str__(self) -> str:
        return self.__repr__()


class ControlAction(IntEnum):
    """What `control` does: NONE (report), DISABLE (lock) or ENABLE (unlock)."""

    NONE = 0
    DISABLE = auto()
    ENABLE = auto()

    @classmethod
    def _from_raw(cls, raw: _ControlAction) -> "ControlAction":
        """The action of its raw (native) form."""
        return cls[raw.name]

    def _to_raw(self) -> _ControlAction:
        """The raw (native) form: its `lock` is what fieldstore's control takes."""
        return _ControlAction[self.name]

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.__repr__()


class URI:
    """A resource identifier (`scheme://netloc/path?query#fragment`)."""

    def __init__(self, uri: Union[str, Path], scheme: str = "", allow_fragments: bool = True) -> None:
        text = uri.as_posix() if isinstance(uri, Path) else str(uri)
        self._uri = parse.urlsplit(text, scheme=scheme, allow_fragments=allow_fragments)

    def __eq__(self, value: object, /) -> bool:
        return isinstance(value, URI) and parse.urlunsplit(self._uri) == parse.urlunsplit(value._uri)

    def __ne__(self, value: object, /) -> bool:
        return not self.__eq__(value)

    def __hash__(self) -> int:
        return hash(parse.urlunsplit(self._uri))

    def netloc(self) -> str:
        return self._uri.netloc

    def scheme(self) -> str:
        return self._uri.scheme

    def username(self) -> Optional[str]:
        return self._uri.username

    def password(self) -> Optional[str]:
        return self._uri.password

    def hostname(self) -> Optional[str]:
        return self._uri.hostname

    def port(self) -> Optional[int]:
        return self._uri.port

    def path(self) -> str:
        return self._uri.path

    def query(self) -> str:
        return self._uri.query

    def fragment(self) -> str:
        return self._uri.fragment

    def __repr__(self) -> str:
        return parse.urlunsplit(self._uri)
