"""The earthkit-data source `fieldstore` (registered under the entry point group
`earthkit.data.sources`, so earthkit-data needs no change):

    import earthkit.data
    data = earthkit.data.from_source("fieldstore", request, config=...)   # all fields, read now
    fields = data.to_fieldlist()          # sel, order_by, to_numpy, to_xarray, metadata
    earthkit.data.from_source("fieldstore", request, stream=True)   # field by field, one pass
    earthkit.data.from_source("fieldstore", request, lazy=True)     # listed now, read when used

`lazy=True` lists the request (no field read but the first, whose headers the others share, as
earthkit's own `fdb` source does) and reads a field's bytes when its values are used, from
where the listing found them. Unlike earthkit's `fdb` source, the listing's empty optional
keys are not sent back as requests, so FDB5's real schema (its optional `timespan`) works.
Needs earthkit-data 1.3 (Python 3.10+).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple

from earthkit.data.field.grib.create import create_grib_field_from_message
from earthkit.data.field.grib.virtual import VirtualGribFieldList
from earthkit.data.indexing.simple import SimpleFieldList
from earthkit.data.sources import Source
from earthkit.data.sources.stream import StreamSource

import fieldstore

from .cube import handle_for

#: Keywords earthkit's MARS fields hold as numbers.
_NUMBERS = ("date", "time", "step", "levelist")


class FieldStoreSource(Source):
    """`from_source("fieldstore", request, config=None, stream=False, lazy=False, **keys)`: the
    fields a request (a dict or MARS text, extended by keyword arguments) names in the store a
    configuration names (as `fieldstore.FieldStore` takes it)."""

    def __init__(self, *args: Any, request: Any = None, config: Any = None, stream: bool = False, lazy: bool = False, **keys: Any) -> None:
        super().__init__()
        if stream and lazy:
            raise ValueError("from_source('fieldstore'): stream and lazy exclude each other")
        parts = [a for a in args if a is not None] + ([request] if request is not None else [])
        if len(parts) > 1:
            raise ValueError("from_source('fieldstore') takes one request")
        base = parts[0] if parts else {}
        if isinstance(base, str):
            base = fieldstore._request_text(base)
            self.request: Any = base if not keys else base + "," + fieldstore._request_text(keys)
        else:
            self.request = {**dict(base), **keys}
        self.config, self.stream, self.lazy = config, stream, lazy

    def mutate(self) -> Any:
        store = handle_for(self.config)
        if self.lazy:
            listing = Listing(self.config, self.request)
            return VirtualGribFieldList(listing, listing)
        reader = store.retrieve(self.request)
        if self.stream:
            return StreamSource(reader)
        return SimpleFieldList([create_grib_field_from_message(data) for _, data in reader])


class Listing:
    """What `lazy=True` lists, as earthkit's virtual field list asks for it: the request of each
    field (`request_at`), and the field a request names (`get`), read from where the listing
    found it."""

    def __init__(self, config: Any, request: Any) -> None:
        self.config, self.request = config, request
        entries = list(handle_for(config).list(request))
        if not entries:
            raise fieldstore.NothingMatched(f"nothing to read: {fieldstore._request_text(request)} names no field")
        self.entries = entries
        self.requests = [_as_request(e.key()) for e in entries]
        self.by_request: Dict[Tuple[Tuple[str, str], ...], int] = {_identity(r): i for i, r in enumerate(self.requests)}

    def __len__(self) -> int:
        return len(self.requests)

    def __reduce__(self) -> Tuple[Any, ...]:
        # Listed again where it is unpickled, with a handle of that process.
        return (Listing, (self.config, self.request))

    def request_at(self, n: int) -> Dict[str, Any]:
        return dict(self.requests[n])

    def get(self, request: Mapping[str, Any]) -> SimpleFieldList:
        """The field `request` (one of `request_at`'s) names, read now."""
        index = self.by_request.get(_identity(request))
        if index is None:
            raise fieldstore.NotFound(f"{request} is not one of the fields listed")
        (_, data), = handle_for(self.config).read_entries([self.entries[index]])
        return SimpleFieldList([create_grib_field_from_message(data)])


def _as_request(key: Mapping[str, str]) -> Dict[str, Any]:
    """A listed field's key as earthkit's MARS fields take it: empty optional keys left out,
    dates, times, steps and levels as numbers."""
    out: Dict[str, Any] = {}
    for k, v in key.items():
        if v == "":
            continue
        out[k] = int(v) if k in _NUMBERS and v.isdigit() else v
    return out


def _identity(request: Mapping[str, Any]) -> Tuple[Tuple[str, str], ...]:
    return tuple(sorted((k, str(v)) for k, v in request.items()))

