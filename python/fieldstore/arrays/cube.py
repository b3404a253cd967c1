"""What a request names, as a hypercube: the listing (no field read) turned into dimensions and,
per parameter, a field at each index where one is stored; missing combinations are known before
anything is read, and read as NaN. The xarray backend and the Zarr view read through it
(docs/arrays-design.md).

    cube = Cube(config, {"class": "od", "expver": "0001", "step": [0, 6], "param": [130, 131]})
    cube.dims                 # ("step", "isobaricInhPa")
    cube.read("130", (slice(None), 0))   # numpy array: steps x grid points

Dimensions follow cfgrib's conventions, which notebooks expect: `number` (ensemble members),
`time` (date and time of the forecast's start), `step`, the level named by its level type
(`isobaricInhPa` for `levtype=pl`, `hybrid` for `ml`, ...), then the grid (`latitude` and
`longitude` for grids of rows and columns, else `values`); any other keyword whose value varies
is a dimension of its own name. A keyword with one value is a scalar coordinate. Labels increase,
but pressure levels decrease where `decreasing_pressure` asks for cfgrib's order (the xarray
backend does; the Zarr view keeps them increasing).
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import fieldstore
from fieldstore import _native

#: The level dimension's name for each level type (cfgrib's).
LEVEL_NAMES = {"pl": "isobaricInhPa", "ml": "hybrid", "pt": "theta", "pv": "potentialVorticity", "sol": "soilLayer", "hl": "heightAboveGround"}

#: Level dimensions cfgrib lays out from the largest value down (its `stored_direction:
#: decreasing`): pressure, so that the first level is the one nearest the ground.
DECREASING = {"isobaricInhPa", "isobaricInPa"}

#: Keywords that are not dimensions: the parameter (a variable each) and those folded into `time`.
_FOLDED = {"param", "date", "time"}

#: Keys of the first field of each parameter, for its variable's name and attributes.
NAME_KEYS = ["shortName", "cfVarName", "name", "units", "cfName", "typeOfLevel", "gridType"]


@dataclass
class Dimension:
    """One dimension of the cube: its name, the keyword(s) it stands for, and its labels (the
    stored values, as the store names them)."""

    name: str
    keywords: Tuple[str, ...]
    labels: List[Tuple[str, ...]]
    index: Dict[Tuple[str, ...], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {label: i for i, label in enumerate(self.labels)}

    def coordinate(self) -> np.ndarray:
        """The labels as numbers, times or text, as cfgrib gives them."""
        if self.name == "time":
            return np.array([_datetime(date, time) for date, time in self.labels], dtype="datetime64[ns]")
        values = [label[0] for label in self.labels]
        if self.name == "step":
            return np.array([_step(v) for v in values], dtype="timedelta64[ns]")
        if self.keywords != ("levelist",) and self.name != "number":
            # Keywords of text values (expver 0001 is no number): as stored.
            return np.array(values, dtype=object)
        numbers = numeric(values, integers=self.name == "number")
        return np.array(values, dtype=object) if numbers is None else numbers


@dataclass
class Grid:
    """The grid the cube's fields are on: `latitude`/`longitude` rows and columns, or `values`."""

    grid_type: str
    points: int
    latitudes: List[float]
    longitudes: List[float]

    @property
    def dims(self) -> Tuple[str, ...]:
        return ("latitude", "longitude") if self.latitudes else ("values",)

    @property
    def shape(self) -> Tuple[int, ...]:
        return (len(self.latitudes), len(self.longitudes)) if self.latitudes else (self.points,)


class Cube:
    """The fields a request names, as one hypercube per parameter over shared dimensions. Opening
    lists (reads no field's bytes) and reads the first field of each parameter, for its grid
    and names; values are read only by `read`, and only the fields it needs."""

    def __init__(
        self,
        config: Any,
        request: Any,
        dtype: str = "float32",
        described: Optional[Tuple[Grid, Dict[str, Dict[str, Optional[str]]]]] = None,
        decreasing_pressure: bool = False,
    ) -> None:
        if dtype not in ("float32", "float64"):
            raise ValueError(f"dtype '{dtype}': the arrays are float32 or float64")
        self.config = config
        self.request = request
        self.dtype = np.dtype(dtype)
        self.decreasing_pressure = decreasing_pressure
        entries = list(handle_for(config).list(request))
        if not entries:
            raise fieldstore.NothingMatched(f"nothing to open: {fieldstore._request_text(request)} names no field")
        keys = [entry.key() for entry in entries]
        self.scalars, self.dimensions = _dimensions(keys, decreasing_pressure)
        self.params: List[str] = sorted({k["param"] for k in keys}, key=_number_or_text)
        self.fields: Dict[Tuple[str, Tuple[int, ...]], fieldstore.ListEntry] = {}
        for entry, key in zip(entries, keys):
            at = tuple(d.index[tuple(key.get(k, "") for k in d.keywords)] for d in self.dimensions)
            # The listing is newest first within a key: the first one seen is the visible one.
            self.fields.setdefault((key["param"], at), entry)
        #: The first stored field of each parameter, as read to describe the cube (none when a
        #: pickled cube brings its description): the xarray backend's attributes come from them.
        self.first_messages: Dict[str, bytes] = {}
        # The grid and names, unless a pickled cube brings them (ecCodes' definitions cost a new
        # process about 0.2 s to parse).
        self.grid, self.attributes = described or self._describe()

    def __reduce__(self) -> Tuple[Any, ...]:
        # Dask sends arrays to its workers pickled: a cube travels as what opens it again
        # (listing once more in the worker's process, with a handle of its own), with its layout
        # to check that the listing there gives the same indexes, and its grid and names.
        return (_reopen, (self.config, self.request, self.dtype.name, self.layout(), (self.grid, self.attributes), self.decreasing_pressure))

    def layout(self) -> Tuple[Any, ...]:
        """What the cube's indexes mean: its dimensions' labels, parameters and stored fields."""
        return (tuple((d.name, tuple(d.labels)) for d in self.dimensions), tuple(self.params), tuple(sorted(self.fields)))

    @property
    def dims(self) -> Tuple[str, ...]:
        """The dimensions of every parameter's array, the grid's last."""
        return tuple(d.name for d in self.dimensions) + self.grid.dims

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(len(d.labels) for d in self.dimensions) + self.grid.shape

    def _describe(self) -> Tuple[Grid, Dict[str, Dict[str, Optional[str]]]]:
        """The grid (the same for every parameter) and each parameter's names, from the first
        stored field of each."""
        firsts = [next(entry for (param, _), entry in sorted(self.fields.items(), key=lambda f: f[0][1]) if param == p) for p in self.params]
        messages = [data for _, data in handle_for(self.config).read_entries(firsts)]
        self.first_messages = dict(zip(self.params, messages))
        grids = [_native.grid(m) for m in messages]
        identities = {g["identity"] for g in grids}
        if len(identities) > 1:
            raise fieldstore.BadRequest(
                f"the parameters {', '.join(self.params)} are on {len(identities)} different grids: open one grid at a time"
            )
        g = grids[0]
        grid = Grid(g["grid_type"], g["points"], g["latitudes"], g["longitudes"])
        return grid, {p: _native.message_keys(m, NAME_KEYS) for p, m in zip(self.params, messages)}

    def read(self, param: str, index: Tuple[Any, ...]) -> np.ndarray:
        """Parameter `param`'s values at `index` (an int or a slice per dimension, the grid's
        included): the fields it needs, read together and decoded on several threads; NaN
        where no field is stored."""
        index = tuple(index) + (slice(None),) * (len(self.shape) - len(index))
        outer, inner = index[: len(self.dimensions)], index[len(self.dimensions) :]
        ranges = [range(len(d.labels))[i] if isinstance(i, slice) else [range(len(d.labels))[i]] for d, i in zip(self.dimensions, outer)]
        shape = [len(r) for r in ranges]
        positions = list(np.ndindex(*shape)) if shape else [()]
        result = np.empty((len(positions), self.grid.points), dtype=self.dtype)
        wanted = [(i, self.fields.get((param, tuple(r[p] for r, p in zip(ranges, pos))))) for i, pos in enumerate(positions)]
        present = [(i, entry) for i, entry in wanted if entry is not None]
        if len(present) < len(positions):
            result[[i for i, entry in wanted if entry is None]] = np.nan
        if present:
            _decode_rows(handle_for(self.config), [entry for _, entry in present], result, [i for i, _ in present])
        values = result.reshape(tuple(shape) + self.grid.shape)
        # Integer indexes drop their dimension, as numpy does.
        squeeze = tuple(axis for axis, i in enumerate(outer) if not isinstance(i, slice))
        return values.squeeze(axis=squeeze)[(Ellipsis,) + inner] if squeeze else values[(Ellipsis,) + inner]


def variable_names(cube: "Cube") -> Dict[str, str]:
    """Each parameter's variable name as cfgrib names it: its `cfVarName` (`t2m` for `2t`),
    else its `shortName`; else `paramN`, and a name two parameters share gets their ids
    appended, so none hides another (cfgrib drops all but one)."""
    names = {}
    for param in cube.params:
        attributes = cube.attributes[param]
        known = [n for n in (attributes.get("cfVarName"), attributes.get("shortName")) if n and n not in ("unknown", "undef", "~")]
        names[param] = known[0] if known else f"param{param}"
    counts = {n: list(names.values()).count(n) for n in names.values()}
    return {param: f"{name}_{param}" if counts[name] > 1 else name for param, name in names.items()}


def _reopen(
    config: Any, request: Any, dtype: str, layout: Tuple[Any, ...], described: Tuple[Grid, Dict[str, Dict[str, Optional[str]]]], decreasing_pressure: bool = False
) -> "Cube":
    """A pickled cube opened again, refused if the store's listing has changed meanwhile (its
    indexes would name other fields)."""
    cube = Cube(config, request, dtype=dtype, described=described, decreasing_pressure=decreasing_pressure)
    if cube.layout() != layout:
        raise fieldstore.Conflict(f"the fields {fieldstore._request_text(request)} names changed since the array was opened: open it again")
    return cube


def _decode_rows(handle: fieldstore.FieldStore, entries: List[fieldstore.ListEntry], result: np.ndarray, rows: List[int]) -> None:
    """Reads and decodes the fields `entries` list into `result`'s `rows`: in place when they
    are all its rows, else through one `bytes` of them."""
    dtype = result.dtype
    if len(rows) == len(result) and dtype.byteorder in ("=", "<", "|"):
        handle.decode_entries(entries, result.shape[1], dtype.name, out=result)
        return
    decoded = np.frombuffer(handle.decode_entries(entries, result.shape[1], dtype.name), dtype=dtype.newbyteorder("<"))
    result[rows] = decoded.reshape(len(rows), result.shape[1])


def _dimensions(keys: Sequence[Mapping[str, str]], decreasing_pressure: bool = False) -> Tuple[Dict[str, str], List[Dimension]]:
    """The keywords of one value (scalars) and the cube's dimensions, in cfgrib's order (and
    pressure levels in its decreasing order if `decreasing_pressure`)."""
    # Every keyword of every field (fields of several schema rules hold different ones), in
    # the order first met.
    keywords = list(dict.fromkeys(k for key in keys for k in key if k not in _FOLDED))
    values: Dict[str, List[str]] = {k: sorted({key.get(k, "") for key in keys}, key=_number_or_text) for k in keywords}
    scalars = {k: v[0] for k, v in values.items() if len(v) == 1}
    times = sorted({(key.get("date", ""), key.get("time", "")) for key in keys})
    if len(times) == 1:
        scalars.update(date=times[0][0], time=times[0][1])
    if len(values.get("levtype", [])) > 1:
        # A level means something else on each (and surface fields have none): cfgrib and
        # earthkit-data refuse such a mix too.
        raise fieldstore.BadRequest(
            f"the fields are on {len(values['levtype'])} level types ({', '.join(values['levtype'])}): open one at a time (levtype=... in the request)"
        )
    levtype = scalars.get("levtype")
    dims: List[Dimension] = []
    if len(values.get("number", [])) > 1:
        dims.append(Dimension("number", ("number",), [(v,) for v in values["number"]]))
    if len(times) > 1:
        dims.append(Dimension("time", ("date", "time"), times))
    if len(values.get("step", [])) > 1:
        dims.append(Dimension("step", ("step",), [(v,) for v in values["step"]]))
    if len(values.get("levelist", [])) > 1:
        name = LEVEL_NAMES.get(levtype or "", "level")
        levels = values["levelist"][::-1] if decreasing_pressure and name in DECREASING else values["levelist"]
        dims.append(Dimension(name, ("levelist",), [(v,) for v in levels]))
    ordered = {"number", "step", "levelist"}
    for k, v in values.items():
        if len(v) > 1 and k not in ordered:
            dims.append(Dimension(k, (k,), [(x,) for x in v]))
    return scalars, dims


def numeric(values: Sequence[str], integers: bool) -> Optional[np.ndarray]:
    """Labels as numbers: whole ones as int64 if `integers` allows, else float64; None if any
    is text."""
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return None
    if integers and all(n.is_integer() for n in numbers):
        return np.array(numbers, dtype=np.int64)
    return np.array(numbers, dtype=np.float64)


def _number_or_text(value: str) -> Tuple[int, Any]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)


def _datetime(date: str, time: str) -> np.datetime64:
    day = datetime.datetime.strptime(date, "%Y%m%d")
    hhmm = int(time or 0)
    return np.datetime64(day + datetime.timedelta(hours=hhmm // 100, minutes=hhmm % 100), "ns")


def _step(value: str) -> np.timedelta64:
    """A step as the store names it (`6`, `30m`, `1h30m`: hours unless a unit says otherwise)."""
    minutes, number = 0, ""
    for c in value:
        if c.isdigit():
            number += c
        elif c in "hm" and number:
            minutes += int(number) * (60 if c == "h" else 1)
            number = ""
        else:
            raise ValueError(f"step '{value}' is not hours or hours and minutes")
    minutes += int(number) * 60 if number else 0
    return np.timedelta64(minutes, "m").astype("timedelta64[ns]")


#: One handle per configuration and process: arrays are pickled into dask's workers, and a
#: handle belongs to the process that opened it.
_HANDLES: Dict[Tuple[str, int], fieldstore.FieldStore] = {}


#: What names the store when no configuration is given (as `FieldStore()` resolves it).
_RESOLVED_FROM = ("FIELDSTORE_CONFIG", "FIELDSTORE_ROOT", "FDB_CONFIG", "FDB5_CONFIG", "FDB_CONFIG_FILE", "FDB5_CONFIG_FILE", "FDB_HOME", "XDG_DATA_HOME", "HOME")


def handle_for(config: Any) -> fieldstore.FieldStore:
    """The handle of this process on the store `config` names, opened on first use (without a
    configuration, on the store the environment names now)."""
    if config is None:
        named = json.dumps([os.environ.get(name) for name in _RESOLVED_FROM])
    else:
        named = config if isinstance(config, str) else json.dumps(config, sort_keys=True, default=str)
    identity = (named, os.getpid())
    handle = _HANDLES.get(identity)
    if handle is None:
        handle = _HANDLES[identity] = fieldstore.FieldStore(config)
    return handle
