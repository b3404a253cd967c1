"""A read-only Zarr v3 view of what a request names (zarr-python 3): a group at the root with one
array per parameter (named by its `shortName`) over the [cube](cube.py)'s dimensions, chunks of
one field (the whole grid), and the coordinates as arrays of their own, so `zarr.open_group`,
`zarr.open_array` and `xarray.open_zarr` all read it. A chunk is decoded when it is asked for
(byte ranges served from it); a field not stored is a missing chunk, read as NaN. Chunks are
read and decoded outside the event loop, so zarr's concurrent reads run at once.

    store = fieldstore.arrays.ZarrStore(request, config=...)
    ds = xarray.open_zarr(store, consolidated=False)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Dict, Iterable, List, Optional, Tuple

import numpy as np
from zarr.abc.store import ByteRequest, OffsetByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarr.core.buffer import Buffer, BufferPrototype

from .cube import Cube, variable_names

#: The codecs of every array: raw little-endian values, no compression.
_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}}]


class ZarrStore(Store):
    """The Zarr view of a request (see the module's documentation)."""

    supports_writes = False
    supports_deletes = False
    supports_partial_writes = False
    supports_listing = True

    def __init__(self, request: Any, config: Any = None, dtype: str = "float32") -> None:
        super().__init__(read_only=True)
        self.cube = Cube(config, request, dtype=dtype)
        self._variables = {name: param for param, name in variable_names(self.cube).items()}
        self._documents, self._coordinates = self._describe()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZarrStore) and other.cube is self.cube

    def __reduce__(self) -> Tuple[Any, ...]:
        return (ZarrStore, (self.cube.request, self.cube.config, self.cube.dtype.name))

    @property
    def variables(self) -> List[str]:
        """The names of the parameters' arrays (their `shortName`s)."""
        return list(self._variables)

    def _describe(self) -> Tuple[Dict[str, bytes], Dict[str, bytes]]:
        """Every `zarr.json`, and each coordinate array's one chunk."""
        cube = self.cube
        documents = {"zarr.json": _json({"zarr_format": 3, "node_type": "group", "attributes": {"fieldstore_request": str(cube.request)}})}
        chunk = [1] * len(cube.dimensions) + list(cube.grid.shape)
        for name, param in self._variables.items():
            names = cube.attributes[param]
            attrs = {f"GRIB_{k}": v for k, v in names.items() if v not in (None, "unknown")}
            attrs["GRIB_paramId"] = param
            attrs.update(units=names.get("units") or "", long_name=names.get("name") or name)
            documents[f"{name}/zarr.json"] = _array(list(cube.shape), chunk, cube.dtype, list(cube.dims), attrs)
        coordinates: Dict[str, bytes] = {}
        for name, values, attrs in _coordinate_arrays(cube):
            documents[f"{name}/zarr.json"] = _array([len(values)], [len(values)], values.dtype, [name], attrs)
            coordinates[f"{name}/c/0"] = values.astype(values.dtype.newbyteorder("<")).tobytes()
        return documents, coordinates

    async def get(self, key: str, prototype: BufferPrototype, byte_range: Optional[ByteRequest] = None) -> Optional[Buffer]:
        data = self._documents.get(key) or self._coordinates.get(key)
        if data is None:
            data = await asyncio.to_thread(self._chunk, key)
        if data is None:
            return None
        return prototype.buffer.from_bytes(_cut(data, byte_range))

    def _chunk(self, key: str) -> Optional[bytes]:
        """A variable's chunk `NAME/c/i/j/.../0/0`: one field's values, or None if not stored."""
        field = self._field_at(key)
        return None if field is None else self.cube.field_bytes(*field)

    def _field_at(self, key: str) -> Optional[Tuple[str, Tuple[int, ...]]]:
        """The parameter and index of the stored field whose chunk `key` names, if any."""
        name, _, rest = key.partition("/c/")
        param = self._variables.get(name)
        try:
            index = tuple(int(i) for i in rest.split("/"))
        except ValueError:
            return None
        outer = len(self.cube.dimensions)
        if param is None or len(index) != len(self.cube.shape) or any(index[outer:]):
            return None
        return (param, index[:outer]) if (param, index[:outer]) in self.cube.fields else None

    async def get_partial_values(self, prototype: BufferPrototype, key_ranges: Iterable[Tuple[str, Optional[ByteRequest]]]) -> List[Optional[Buffer]]:
        return list(await asyncio.gather(*(self.get(key, prototype, byte_range) for key, byte_range in key_ranges)))

    async def exists(self, key: str) -> bool:
        return key in self._documents or key in self._coordinates or self._field_at(key) is not None

    async def set(self, key: str, value: Buffer) -> None:
        raise PermissionError("a fieldstore Zarr view is read-only: archive through fieldstore")

    async def delete(self, key: str) -> None:
        raise PermissionError("a fieldstore Zarr view is read-only: wipe through fieldstore")

    async def list(self) -> AsyncIterator[str]:
        for key in self._keys():
            yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        for key in self._keys():
            if key.startswith(prefix):
                yield key

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        base = prefix.rstrip("/") + "/" if prefix else ""
        for child in sorted({key[len(base) :].split("/")[0] for key in self._keys() if key.startswith(base)}):
            yield child

    def _keys(self) -> Iterable[str]:
        yield from self._documents
        yield from self._coordinates
        grid = "/".join("0" for _ in self.cube.grid.shape)
        names = {param: name for name, param in self._variables.items()}
        for (param, index) in self.cube.fields:
            yield f"{names[param]}/c/{'/'.join(map(str, index))}/{grid}"


def _array(shape: List[int], chunk: List[int], dtype: np.dtype, dims: List[str], attrs: Dict[str, Any]) -> bytes:
    return _json(
        {
            "zarr_format": 3,
            "node_type": "array",
            "shape": shape,
            "data_type": np.dtype(dtype).name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": "NaN" if np.dtype(dtype).kind == "f" else 0,
            "codecs": _CODECS,
            "attributes": attrs,
            "dimension_names": dims,
        }
    )


def _coordinate_arrays(cube: Cube) -> Iterable[Tuple[str, np.ndarray, Dict[str, str]]]:
    """Each dimension's coordinate, in CF's encoding: times as seconds since 1970, steps in
    minutes, as xarray encodes (and decodes) them."""
    for d in cube.dimensions:
        values = d.coordinate()
        if d.name == "time":
            yield d.name, values.astype("datetime64[s]").astype(np.int64), {"units": "seconds since 1970-01-01T00:00:00", "calendar": "proleptic_gregorian"}
        elif d.name == "step":
            # As xarray encodes a timedelta (the `dtype` attribute makes it decode one again).
            yield d.name, values.astype("timedelta64[m]").astype(np.int64), {"units": "minutes", "dtype": "timedelta64[ns]"}
        elif values.dtype == object:
            # Text labels (a keyword like `type` that varies) have no Zarr v3 core type: the
            # dimension goes without a coordinate array.
            continue
        else:
            yield d.name, values, {}
    if cube.grid.latitudes:
        yield "latitude", np.array(cube.grid.latitudes), {"units": "degrees_north", "standard_name": "latitude"}
        yield "longitude", np.array(cube.grid.longitudes), {"units": "degrees_east", "standard_name": "longitude"}


def _cut(data: bytes, byte_range: Optional[ByteRequest]) -> bytes:
    if isinstance(byte_range, RangeByteRequest):
        return data[byte_range.start : byte_range.end]
    if isinstance(byte_range, OffsetByteRequest):
        return data[byte_range.offset :]
    if isinstance(byte_range, SuffixByteRequest):
        return data[-byte_range.suffix :] if byte_range.suffix else b""
    return data


def _json(document: Dict[str, Any]) -> bytes:
    return json.dumps(document).encode()
