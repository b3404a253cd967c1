"""A read-only Zarr v3 view of what a request names (zarr-python 3), so `zarr.open_group`,
`zarr.open_array` and `xarray.open_zarr` all read it. Two layouts:

- by default, cfgrib's: a group with one array per parameter (named by its `shortName`) over
  the [cube](cube.py)'s dimensions, chunks of one field (the whole grid), and the coordinates
  as arrays of their own;
- with `axes=[Axis(...), ...]`, z3fdb's: one array (`name`, default `data`) whose dimensions
  are the axes given, each over one or several keywords (the combinations of their stored
  values) and chunked as asked (a value per chunk, several, or the whole axis), then the grid.

A chunk is read and decoded when it is asked for (byte ranges cut from it), off the event loop
so zarr's concurrent reads run at once; a chunk holding no stored field is missing, and a
field not stored reads as NaN.

    store = fieldstore.arrays.ZarrStore(request, config=...)
    ds = xarray.open_zarr(store, consolidated=False)
    store = ZarrStore(request, axes=[Axis(["param", "levelist"]), Axis("step", chunk=None)])
    data = zarr.open_array(store=store, path="data", mode="r")
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
from zarr.abc.store import ByteRequest, OffsetByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarr.core.buffer import Buffer, BufferPrototype

import fieldstore

from .cube import Cube, _decode_rows, _number_or_text, handle_for, numeric, variable_names

#: The codecs of every array: raw little-endian values, no compression.
_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}}]


@dataclass(frozen=True)
class Axis:
    """One dimension of a Zarr view's array, as z3fdb's `AxisDefinition`: the keyword or keywords
    it runs over (every combination of their stored values, each keyword's in order, the first
    keyword's slowest), and how many of its values one chunk holds: 1 (z3fdb's `SINGLE_VALUE`,
    the default), `n` (`FixedSizeChunk(n)`) or None (the whole axis, `WHOLE_AXIS`)."""

    keywords: Union[str, Sequence[str]]
    chunk: Optional[int] = 1

    @property
    def names(self) -> Tuple[str, ...]:
        return (self.keywords,) if isinstance(self.keywords, str) else tuple(self.keywords)


@dataclass
class _Array:
    """One array of the view: its shape and chunks over the fields (the grid's are added), and
    the stored field at each index."""

    name: str
    dims: List[str]
    shape: List[int]
    chunks: List[int]
    attrs: Dict[str, Any]
    field_at: Callable[[Tuple[int, ...]], Optional[fieldstore.ListEntry]]


class ZarrStore(Store):
    """The Zarr view of a request (see the module's documentation)."""

    supports_writes = False
    supports_deletes = False
    supports_partial_writes = False
    supports_listing = True

    def __init__(self, request: Any, config: Any = None, dtype: str = "float32", axes: Optional[Sequence[Axis]] = None, name: str = "data") -> None:
        super().__init__(read_only=True)
        self.cube = Cube(config, request, dtype=dtype)
        self.axes = None if axes is None else list(axes)
        self._name = name
        if self.axes is None:
            arrays, coordinates = self._by_parameter()
        else:
            arrays, coordinates = self._by_axes(self.axes, name)
        self._arrays = {a.name: a for a in arrays}
        self._documents = {"zarr.json": _json({"zarr_format": 3, "node_type": "group", "attributes": {"fieldstore_request": str(request)}})}
        for a in arrays:
            grid = self.cube.grid
            self._documents[f"{a.name}/zarr.json"] = _array(a.shape + list(grid.shape), a.chunks + list(grid.shape), self.cube.dtype, a.dims + list(grid.dims), a.attrs)
        self._coordinates: Dict[str, bytes] = {}
        for coordinate, values, dims, attrs in coordinates + list(_grid_coordinates(self.cube)):
            self._documents[f"{coordinate}/zarr.json"] = _array([len(values)], [len(values)], values.dtype, dims, attrs)
            self._coordinates[f"{coordinate}/c/0"] = values.astype(values.dtype.newbyteorder("<")).tobytes()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZarrStore) and other.cube is self.cube and other.axes == self.axes

    def __reduce__(self) -> Tuple[Any, ...]:
        return (ZarrStore, (self.cube.request, self.cube.config, self.cube.dtype.name, self.axes, self._name))

    @property
    def variables(self) -> List[str]:
        """The names of the arrays of fields (parameters' `shortName`s, or the one of `axes`)."""
        return list(self._arrays)

    def _by_parameter(self) -> Tuple[List[_Array], List[Tuple[str, np.ndarray, List[str], Dict[str, Any]]]]:
        """cfgrib's layout: an array per parameter over the cube's dimensions."""
        cube = self.cube
        arrays = []
        for param, name in variable_names(cube).items():
            names = cube.attributes[param]
            attrs = {f"GRIB_{k}": v for k, v in names.items() if v not in (None, "unknown")}
            attrs["GRIB_paramId"] = param
            attrs.update(units=names.get("units") or "", long_name=names.get("name") or name)
            at: Callable[[Tuple[int, ...]], Optional[fieldstore.ListEntry]] = lambda index, param=param: cube.fields.get((param, index))
            arrays.append(_Array(name, list(cube.dims[: len(cube.dimensions)]), list(cube.shape[: len(cube.dimensions)]), [1] * len(cube.dimensions), attrs, at))
        return arrays, list(_cube_coordinates(cube))

    def _by_axes(self, axes: List[Axis], name: str) -> Tuple[List[_Array], List[Tuple[str, np.ndarray, List[str], Dict[str, Any]]]]:
        """z3fdb's layout: one array over `axes`."""
        cube = self.cube
        fields = [(_full_key(cube, param, at), entry) for (param, at), entry in cube.fields.items()]
        stored = {k: sorted({key[k] for key, _ in fields}, key=_number_or_text) for k in fields[0][0]}
        named = [k for axis in axes for k in axis.names]
        for k in named:
            if k not in stored:
                raise fieldstore.BadRequest(f"axes: '{k}' is not a keyword of the fields (they have {', '.join(sorted(stored))})")
        if len(set(named)) < len(named):
            raise fieldstore.BadRequest(f"axes: {', '.join(sorted({k for k in named if named.count(k) > 1}))} in more than one axis")
        varying = [k for k, v in stored.items() if len(v) > 1 and k not in named]
        if varying:
            raise fieldstore.BadRequest(f"axes: the fields take several values of {', '.join(sorted(varying))}, which no axis holds")
        for axis in axes:
            if axis.chunk is not None and (isinstance(axis.chunk, bool) or not isinstance(axis.chunk, int) or axis.chunk < 1):
                raise fieldstore.BadRequest(f"axes: the chunk of {'/'.join(axis.names)} is {axis.chunk!r}: a count of values (1 or more) or None for the whole axis")
        labels = [list(itertools.product(*(stored[k] for k in axis.names))) for axis in axes]
        where = [{label: i for i, label in enumerate(axis_labels)} for axis_labels in labels]
        table = {tuple(w[tuple(key[k] for k in axis.names)] for w, axis in zip(where, axes)): entry for key, entry in fields}
        dims = ["_".join(axis.names) for axis in axes]
        attrs: Dict[str, Any] = {"fieldstore_axes": [list(axis.names) for axis in axes]}
        coordinates = []
        for dim, axis, axis_labels in zip(dims, axes, labels):
            for position, k in enumerate(axis.names):
                values = numeric([label[position] for label in axis_labels], integers=True)
                if values is not None:
                    coordinates.append((k, values, [dim], {}))
        extra = [c[0] for c in coordinates if c[0] not in dims]
        if extra:
            attrs["coordinates"] = " ".join(extra)
        if len(cube.params) == 1:
            names = cube.attributes[cube.params[0]]
            attrs.update(units=names.get("units") or "", long_name=names.get("name") or "", GRIB_paramId=cube.params[0])
        shape = [len(axis_labels) for axis_labels in labels]
        chunks = [axis.chunk or size for axis, size in zip(axes, shape)]
        return [_Array(name, dims, shape, [max(1, min(c, s)) for c, s in zip(chunks, shape)], attrs, table.get)], coordinates

    async def get(self, key: str, prototype: BufferPrototype, byte_range: Optional[ByteRequest] = None) -> Optional[Buffer]:
        data = self._documents.get(key) or self._coordinates.get(key)
        if data is not None:
            return prototype.buffer.from_bytes(_cut(data, byte_range))
        chunk = await asyncio.to_thread(self._chunk, key)
        return None if chunk is None else prototype.buffer.from_array_like(_cut(chunk, byte_range))

    def _chunk(self, key: str) -> Optional[np.ndarray]:
        """A chunk's bytes (`NAME/c/i/j/.../0/0`): its fields decoded, NaN where none is stored
        (and past the array's end); None if it holds no stored field."""
        located = self._fields_in(key)
        if located is None:
            return None
        array, fields = located
        present = [(row, entry) for row, entry in enumerate(fields) if entry is not None]
        result = np.empty((len(fields), self.cube.grid.points), dtype=self.cube.dtype.newbyteorder("<"))
        if len(present) < len(fields):
            result[[row for row, entry in enumerate(fields) if entry is None]] = np.nan
        _decode_rows(handle_for(self.cube.config), [entry for _, entry in present], result, [row for row, _ in present])
        return result.reshape(-1).view(np.uint8)

    def _fields_in(self, key: str) -> Optional[Tuple[_Array, List[Optional[fieldstore.ListEntry]]]]:
        """The array a chunk key names and the field at each of its places (None where none
        is stored), in the chunk's order; None if the key names no chunk holding a field."""
        name, _, rest = key.partition("/c/")
        array = self._arrays.get(name)
        try:
            index = tuple(int(i) for i in rest.split("/"))
        except ValueError:
            return None
        outer = len(array.shape) if array else 0
        if array is None or len(index) != outer + len(self.cube.grid.shape) or any(index[outer:]):
            return None
        if any(i < 0 or i * c >= s for i, c, s in zip(index, array.chunks, array.shape)):
            return None
        starts = [i * c for i, c in zip(index, array.chunks)]
        fields = []
        for offset in np.ndindex(*array.chunks):
            at = tuple(s + o for s, o in zip(starts, offset))
            inside = all(p < s for p, s in zip(at, array.shape))
            fields.append(array.field_at(at) if inside else None)
        return (array, fields) if any(f is not None for f in fields) else None

    async def get_partial_values(self, prototype: BufferPrototype, key_ranges: Iterable[Tuple[str, Optional[ByteRequest]]]) -> List[Optional[Buffer]]:
        return list(await asyncio.gather(*(self.get(key, prototype, byte_range) for key, byte_range in key_ranges)))

    async def exists(self, key: str) -> bool:
        return key in self._documents or key in self._coordinates or self._fields_in(key) is not None

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
        for array in self._arrays.values():
            for index in np.ndindex(*(math.ceil(s / c) for s, c in zip(array.shape, array.chunks))):
                key = f"{array.name}/c/{'/'.join(map(str, index))}/{grid}"
                if self._fields_in(key) is not None:
                    yield key


def _full_key(cube: Cube, param: str, at: Tuple[int, ...]) -> Dict[str, str]:
    """A stored field's key (every keyword's value), from its place in the cube."""
    key = dict(cube.scalars)
    for dimension, i in zip(cube.dimensions, at):
        key.update(zip(dimension.keywords, dimension.labels[i]))
    key["param"] = param
    return key


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


def _cube_coordinates(cube: Cube) -> Iterable[Tuple[str, np.ndarray, List[str], Dict[str, Any]]]:
    """Each dimension's coordinate, in CF's encoding: times as seconds since 1970, steps in
    minutes, as xarray encodes (and decodes) them."""
    for d in cube.dimensions:
        values = d.coordinate()
        if d.name == "time":
            yield d.name, values.astype("datetime64[s]").astype(np.int64), [d.name], {"units": "seconds since 1970-01-01T00:00:00", "calendar": "proleptic_gregorian"}
        elif d.name == "step":
            # As xarray encodes a timedelta (the `dtype` attribute makes it decode one again).
            yield d.name, values.astype("timedelta64[m]").astype(np.int64), [d.name], {"units": "minutes", "dtype": "timedelta64[ns]"}
        elif values.dtype == object:
            # Text labels (a keyword like `type` that varies) have no Zarr v3 core type: the
            # dimension goes without a coordinate array.
            continue
        else:
            yield d.name, values, [d.name], {}


def _grid_coordinates(cube: Cube) -> Iterable[Tuple[str, np.ndarray, List[str], Dict[str, Any]]]:
    if cube.grid.latitudes:
        yield "latitude", np.array(cube.grid.latitudes), ["latitude"], {"units": "degrees_north", "standard_name": "latitude"}
        yield "longitude", np.array(cube.grid.longitudes), ["longitude"], {"units": "degrees_east", "standard_name": "longitude"}


def _cut(data: Any, byte_range: Optional[ByteRequest]) -> Any:
    """The bytes (a `bytes` or a numpy array of bytes) a byte range asks for."""
    if isinstance(byte_range, RangeByteRequest):
        return data[byte_range.start : byte_range.end]
    if isinstance(byte_range, OffsetByteRequest):
        return data[byte_range.offset :]
    if isinstance(byte_range, SuffixByteRequest):
        return data[-byte_range.suffix :] if byte_range.suffix else data[:0]
    return data


def _json(document: Dict[str, Any]) -> bytes:
    return json.dumps(document).encode()
