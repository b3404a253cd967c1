"""`xarray.open_dataset(request, engine="fieldstore", config=...)`: what a request names as a
lazy dataset, one variable per parameter (named as cfgrib names it), dimensions, coordinates and
attributes as cfgrib gives them for the same messages ([cube](cube.py); python/tests/test_xarray.py
compares the two; docs/python.md names the differences). Nothing but one field per parameter
(its grid, names and attributes) is read until values are used, and then only the fields
needed; with dask (`chunks={}`), a chunk is one field. Missing combinations are NaN.

    ds = xarray.open_dataset({"class": "od", "expver": "0001", "stream": "oper", "date": 20240101,
                              "time": 0, "type": "fc", "levtype": "pl", "step": [0, 6],
                              "levelist": [500, 850], "param": ["130", "131"]},
                             engine="fieldstore", config="/etc/fieldstore.yaml")
"""

from __future__ import annotations

import datetime
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import xarray
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

import fieldstore
from fieldstore import _native

from .cube import LEVEL_NAMES, Cube, Dimension, variable_names


class FieldArray(BackendArray):
    """One parameter's values over the cube's dimensions, read when indexed; the grid's points
    as `grid_shape` lays them out (rows and columns of a projected grid, `y` by `x`)."""

    def __init__(self, cube: Cube, param: str, grid_shape: Tuple[int, ...]) -> None:
        self.cube = cube
        self.param = param
        self.grid_shape = grid_shape
        self.shape = cube.shape[: len(cube.dimensions)] + grid_shape
        self.dtype = cube.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._read)

    def _read(self, key: Tuple[Any, ...]) -> np.ndarray:
        if self.grid_shape == self.cube.grid.shape:
            return self.cube.read(self.param, key)
        # The cube reads whole fields as a line of points: cut rows and columns once reshaped.
        outer, inner = key[: len(self.cube.dimensions)], key[len(self.cube.dimensions) :]
        values = self.cube.read(self.param, outer)
        return values.reshape(values.shape[:-1] + self.grid_shape)[(Ellipsis,) + inner]


class FieldStoreBackend(BackendEntrypoint):
    """xarray's entry point for fieldstore (`engine="fieldstore"`)."""

    description = "Fields a MARS request names in a fieldstore (or FDB5-configured) store, read lazily"
    url = "https://github.com/fieldstore/fieldstore/blob/main/docs/python.md"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "config", "dtype")

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        drop_variables: Optional[Iterable[str]] = None,
        config: Any = None,
        dtype: str = "float32",
    ) -> xarray.Dataset:
        """`filename_or_obj` is the request: a dict or MARS text."""
        cube = Cube(config, filename_or_obj, dtype=dtype, decreasing_pressure=True)
        return dataset(cube, set(drop_variables or ()))

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        # A request is a mapping or MARS text, never a file: only `engine="fieldstore"` opens one.
        return False


#: The `GRIB_*` attributes cfgrib gives a variable (cfgrib.dataset's DATA_ATTRIBUTES_KEYS, in its
#: order; then EXTRA_DATA_ATTRIBUTES_KEYS and the grid type's GRID_TYPE_MAP keys, sorted together).
DATA_KEYS = ["paramId", "dataType", "numberOfPoints", "typeOfLevel", "stepUnits", "stepType", "gridType", "uvRelativeToGrid"]
EXTRA_KEYS = ["shortName", "units", "name", "cfName", "cfVarName", "missingValue", "totalNumber", "numberOfDirections", "numberOfFrequencies", "NV", "gridDefinitionDescription"]
_LL = ["iScansNegatively", "jPointsAreConsecutive", "jScansPositively", "latitudeOfFirstGridPointInDegrees", "latitudeOfLastGridPointInDegrees", "longitudeOfFirstGridPointInDegrees", "longitudeOfLastGridPointInDegrees"]
_ROTATED = ["Nx", "Ny", "angleOfRotationInDegrees", "iDirectionIncrementInDegrees", "latitudeOfSouthernPoleInDegrees", "longitudeOfSouthernPoleInDegrees"] + _LL
GRID_KEYS = {
    "regular_ll": ["Nx", "Ny", "iDirectionIncrementInDegrees", "jDirectionIncrementInDegrees"] + _LL,
    "rotated_ll": _ROTATED + ["jDirectionIncrementInDegrees"],
    "reduced_ll": ["Ny", "jDirectionIncrementInDegrees", "jPointsAreConsecutive", "jScansPositively", "latitudeOfFirstGridPointInDegrees", "latitudeOfLastGridPointInDegrees"],
    "regular_gg": ["N", "Ni", "Nj", "iDirectionIncrementInDegrees"] + _LL,
    "rotated_gg": _ROTATED + ["N"],
    "lambert": ["LaDInDegrees", "LoVInDegrees", "iScansNegatively", "jPointsAreConsecutive", "jScansPositively", "latitudeOfFirstGridPointInDegrees", "latitudeOfSouthernPoleInDegrees",
                "longitudeOfFirstGridPointInDegrees", "longitudeOfSouthernPoleInDegrees", "DyInMetres", "DxInMetres", "Latin2InDegrees", "Latin1InDegrees", "Ny", "Nx"],
    "reduced_gg": ["N", "pl"],
    "sh": ["M", "K", "J"],
}
#: Grids cfgrib lays out as rows and columns, `y` by `x`, each point's latitude and longitude a
#: coordinate over both (cfgrib.dataset's GRID_TYPES_2D_NON_DIMENSION_COORDS).
PROJECTED = {"rotated_ll", "rotated_gg", "lambert", "lambert_azimuthal_equal_area", "albers", "polar_stereographic"}
#: The `GRIB_*` attributes cfgrib gives the dataset (GLOBAL_ATTRIBUTES_KEYS).
DATASET_KEYS = ["edition", "centre", "centreDescription", "subCentre"]
#: Values cfgrib takes for "no value" in DATA_KEYS and DATASET_KEYS: such an attribute is left out.
_NO_VALUE = ("undef", "unknown")
#: cfgrib sets every message's `missingValue` to this before decoding (its missing points then
#: read as NaN, as fieldstore's do), so this is its `GRIB_missingValue`; `cfgrib.to_grib` writes
#: it back as the missing value of the messages it encodes.
MISSING_VALUE = float(np.finfo(np.float32).max)
#: ecCodes' keys of several values, which its text of a key does not hold: left out without its
#: Python bindings.
_ARRAY_KEYS = {"pl"}
#: ecCodes' keys whose values are text, or names from its concept tables (`paramId` among them,
#: whose text is the whole number). fieldstore's own ecCodes reads them, exactly (its text is
#: their value), and has parsed the concept tables already for the variables' names: through
#: ecCodes' Python bindings, a second ecCodes would parse them again (0.4 s in a new process).
_TEXT_KEYS = {"dataType", "typeOfLevel", "stepType", "gridType", "shortName", "units", "name", "cfName", "cfVarName", "gridDefinitionDescription", "centre", "centreDescription"}
_CONCEPT_NUMBERS = {"paramId"}

#: cfgrib's coordinate attributes (cfgrib.dataset's COORD_ATTRS) as xarray shows them once
#: decoded: the times' `units`, `calendar` and `dtype` are their encoding, not attributes.
COORDINATE_ATTRIBUTES: Dict[str, Dict[str, str]] = {
    "latitude": {"units": "degrees_north", "standard_name": "latitude", "long_name": "latitude"},
    "longitude": {"units": "degrees_east", "standard_name": "longitude", "long_name": "longitude"},
    "depthBelowLand": {"units": "m", "positive": "down", "long_name": "soil depth", "standard_name": "depth"},
    "depthBelowLandLayer": {"units": "m", "positive": "down", "long_name": "soil depth", "standard_name": "depth"},
    "hybrid": {"units": "1", "positive": "down", "long_name": "hybrid level", "standard_name": "atmosphere_hybrid_sigma_pressure_coordinate"},
    "heightAboveGround": {"units": "m", "positive": "up", "long_name": "height above the surface", "standard_name": "height"},
    "isobaricInhPa": {"units": "hPa", "positive": "down", "stored_direction": "decreasing", "standard_name": "air_pressure", "long_name": "pressure"},
    "isobaricInPa": {"units": "Pa", "positive": "down", "stored_direction": "decreasing", "standard_name": "air_pressure", "long_name": "pressure"},
    "isobaricLayer": {"units": "Pa", "positive": "down", "standard_name": "air_pressure", "long_name": "pressure"},
    "number": {"units": "1", "standard_name": "realization", "long_name": "ensemble member numerical id"},
    "step": {"standard_name": "forecast_period", "long_name": "time since forecast_reference_time"},
    "time": {"standard_name": "forecast_reference_time", "long_name": "initial time of forecast"},
    "valid_time": {"standard_name": "time", "long_name": "time"},
}


def dataset(cube: Cube, drop: set) -> xarray.Dataset:
    """The cube as a dataset, laid out as cfgrib lays out the same messages."""
    keys = DATA_KEYS + EXTRA_KEYS + DATASET_KEYS + ["level", "number", "Nx", "Ny"] + GRID_KEYS.get(cube.grid.grid_type, [])
    grib = {param: message_values(cube.first_messages[param], keys) for param in cube.params}
    # One grid for all parameters (the cube refuses several).
    first = cube.params[0]
    grid_dims, grid_shape, grid_coords = _grid(cube, cube.first_messages[first], grib[first])
    variables: Dict[str, xarray.Variable] = {}
    coords: Dict[str, xarray.Variable] = {}
    conflicting: set = set()
    chunks = {d.name: 1 for d in cube.dimensions}
    for param, name in variable_names(cube).items():
        # cfgrib adds each variable's coordinates after the previous one's: the same order here.
        for coordinate, variable in _coordinates(cube, grib[param], grid_coords).items():
            if coordinate not in coords:
                coords[coordinate] = variable
            elif coords[coordinate] is not variable and not coords[coordinate].equals(variable):
                # Two parameters at different levels of one type (10 m and 2 m above ground):
                # cfgrib refuses the file; here the level goes, the parameters stay.
                conflicting.add(coordinate)
        if name in drop or param in drop:
            continue
        data = indexing.LazilyIndexedArray(FieldArray(cube, param, grid_shape))
        encoding = {"preferred_chunks": chunks, "dtype": cube.dtype}
        dims = tuple(d.name for d in cube.dimensions) + grid_dims
        variables[name] = xarray.Variable(dims, data, variable_attributes(grib[param]), encoding)
    for coordinate in conflicting:
        del coords[coordinate]
    # Described: the first messages (megabytes each on a fine grid) need not live as long as
    # the dataset does.
    cube.first_messages.clear()
    return xarray.Dataset(variables, coords=coords, attrs=dataset_attributes(cube, list(grib.values())))


def message_values(message: bytes, keys: Sequence[str]) -> Dict[str, Any]:
    """`keys` of `message` as cfgrib reads them: each in ecCodes' own type (int, float, text, an
    array where it has several values); keys the message has not are left out. Names and other
    text (and `paramId`) from fieldstore's own ecCodes; numbers through ecCodes' Python bindings,
    as cfgrib reads them (floats to the last bit, arrays, codes); without the bindings, from
    ecCodes' text of each key (docs/python.md says what that loses)."""
    named = [k for k in keys if k in _TEXT_KEYS or k in _CONCEPT_NUMBERS]
    values = _from_text(message, named)
    numbers = [k for k in keys if k not in named]
    try:
        import eccodes  # type: ignore[import-untyped,import-not-found,unused-ignore]

        handle = eccodes.codes_new_from_message(message)
    except Exception:  # noqa: BLE001 - no bindings, or theirs cannot read what fieldstore's can
        values.update(_from_text(message, numbers))
        return values
    try:
        for key in numbers:
            try:
                if eccodes.codes_get_size(handle, key) > 1:
                    values[key] = eccodes.codes_get_array(handle, key)
                else:
                    values[key] = eccodes.codes_get(handle, key)
            except Exception:  # noqa: BLE001 - as cfgrib, a key ecCodes cannot give is left out
                continue
    finally:
        eccodes.codes_release(handle)
    return values


def _from_text(message: bytes, keys: Sequence[str]) -> Dict[str, Any]:
    """`keys` as fieldstore's ecCodes gives their text: text keys as they are, others as
    numbers where the text is one (an array's text is not its values: left out)."""
    values: Dict[str, Any] = {}
    for key, text in _native.message_keys(message, [k for k in keys if k not in _ARRAY_KEYS]).items():
        if text is None:
            continue
        values[key] = text if key in _TEXT_KEYS else _number(text)
    return values


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def variable_attributes(grib: Dict[str, Any]) -> Dict[str, Any]:
    """A variable's attributes from its first field's keys, as cfgrib gives them: `GRIB_*`,
    `long_name`, `units` and `standard_name` (but for a parameter of no CF name, where cfgrib
    writes `unknown`, which CF's standard names do not hold)."""
    attrs = {f"GRIB_{k}": grib[k] for k in DATA_KEYS if k in grib and not _is_no_value(grib[k])}
    extra = sorted(EXTRA_KEYS + GRID_KEYS.get(grib.get("gridType", ""), []))
    attrs.update({f"GRIB_{k}": grib[k] for k in extra if k in grib})
    if "GRIB_missingValue" in attrs:
        attrs["GRIB_missingValue"] = MISSING_VALUE
    attrs["long_name"] = attrs.get("GRIB_name", f"original GRIB paramId: {attrs.get('GRIB_paramId', 'undef')}")
    attrs["units"] = attrs.get("GRIB_units", "1")
    if attrs.get("GRIB_cfName") not in (None, *_NO_VALUE):
        attrs["standard_name"] = attrs["GRIB_cfName"]
    return attrs


def dataset_attributes(cube: Cube, firsts: List[Dict[str, Any]]) -> Dict[str, Any]:
    """cfgrib's dataset attributes: the `GRIB_*` keys every parameter's first field agrees on,
    `Conventions`, `institution` (the centre's description) and a `history` naming the request
    read; and the request itself."""
    attrs: Dict[str, Any] = {}
    for key in DATASET_KEYS:
        values = [first.get(key) for first in firsts]
        if values and all(v is not None and not _is_no_value(v) and v == values[0] for v in values):
            attrs[f"GRIB_{key}"] = values[0]
    attrs["Conventions"] = "CF-1.7"
    if "GRIB_centreDescription" in attrs:
        attrs["institution"] = attrs["GRIB_centreDescription"]
    request = str(cube.request)
    timestamp = datetime.datetime.now().isoformat().partition(".")[0][:16]
    attrs["history"] = f"{timestamp} GRIB to CDM+CF via fieldstore-{fieldstore.__version__} with {request}"
    attrs["fieldstore_request"] = request
    return attrs


def _is_no_value(value: Any) -> bool:
    return isinstance(value, str) and value in _NO_VALUE


def _coordinates(cube: Cube, grib: Dict[str, Any], grid_coords: Dict[str, xarray.Variable]) -> Dict[str, xarray.Variable]:
    """The coordinates of a parameter (`grib`: its first field's keys) in cfgrib's order:
    member, forecast start, step, level (as dimensions where they take several values, scalars
    where one), other keywords that vary, the grid, then `valid_time`."""
    coords: Dict[str, xarray.Variable] = {}
    dimensions = {d.name: d for d in cube.dimensions}
    scalars = cube.scalars
    level = LEVEL_NAMES.get(scalars.get("levtype", ""), "level")
    for name in ("number", "time", "step", level):
        if name in dimensions:
            coords[name] = xarray.Variable((name,), dimensions[name].coordinate(), _coordinate_attributes(name))
    if "number" not in coords and (scalars.get("number") or isinstance(grib.get("number"), int)):
        # A member number the request's keys lack may be in the message (GRIB1's ECMWF local
        # section has one, 0 for a forecast): cfgrib gives it, so here too.
        member = scalars["number"] if scalars.get("number") else grib["number"]
        coords["number"] = xarray.Variable((), np.int64(member), _coordinate_attributes("number"))
    if "time" not in coords and scalars.get("date"):
        start = Dimension("time", ("date", "time"), [(scalars["date"], scalars.get("time", ""))]).coordinate()[0]
        coords["time"] = xarray.Variable((), start, _coordinate_attributes("time"))
    if "step" not in coords and scalars.get("step"):
        coords["step"] = xarray.Variable((), Dimension("step", ("step",), [(scalars["step"],)]).coordinate()[0], _coordinate_attributes("step"))
    if level not in coords and scalars.get("levelist"):
        coords[level] = xarray.Variable((), float(scalars["levelist"]), _coordinate_attributes(level))
    elif "levelist" not in scalars and level not in dimensions and "typeOfLevel" in grib and "level" in grib:
        # No level in the request's keys (surface fields): the message's own, named by its type
        # (`heightAboveGround` 2 for 2 m temperature), as cfgrib names it.
        coords[grib["typeOfLevel"]] = xarray.Variable((), float(grib["level"]), _coordinate_attributes(grib["typeOfLevel"]))
    # cfgrib's order is member, time, step, level: put them so.
    ordered: Dict[str, xarray.Variable] = {name: coords[name] for name in ("number", "time", "step") if name in coords}
    ordered.update({name: variable for name, variable in coords.items() if name not in ordered})
    for d in cube.dimensions:
        if d.name not in ordered:
            ordered[d.name] = xarray.Variable((d.name,), d.coordinate(), {"long_name": d.name})
    ordered.update(grid_coords)
    if "time" in ordered and "step" in ordered:
        time, step = ordered["time"], ordered["step"]
        dims = tuple(d for d in ("time", "step") if ordered[d].dims)
        valid = (time.values[..., None] + step.values[None, ...]) if len(dims) == 2 else time.values + step.values
        ordered["valid_time"] = xarray.Variable(dims, valid, _coordinate_attributes("valid_time"))
    return ordered


def _grid(cube: Cube, message: bytes, grib: Dict[str, Any]) -> Tuple[Tuple[str, ...], Tuple[int, ...], Dict[str, xarray.Variable]]:
    """The grid's dimensions, shape and coordinates as cfgrib lays them out: `latitude` and
    `longitude` dimensions for a regular grid; rows and columns (`y`, `x`) of a projected grid
    with each point's latitude and longitude; else a line of `values`, with each point's
    (none for spherical harmonics, which have no points)."""
    grid = cube.grid
    if grid.latitudes:
        latitudes = np.array(grid.latitudes)
        attrs = _coordinate_attributes("latitude")
        if latitudes[0] > latitudes[-1]:
            attrs["stored_direction"] = "decreasing"
        return grid.dims, grid.shape, {
            "latitude": xarray.Variable(("latitude",), latitudes, attrs),
            "longitude": xarray.Variable(("longitude",), np.array(grid.longitudes), _coordinate_attributes("longitude")),
        }
    try:
        point_latitudes, point_longitudes = _native.coordinates(message)
    except fieldstore.BadRequest:
        # ecCodes has no points for the grid (spherical harmonics): as cfgrib, no coordinates.
        return ("values",), (grid.points,), {}
    latitudes = np.frombuffer(point_latitudes, dtype="<f8").astype(np.float64)
    longitudes = np.frombuffer(point_longitudes, dtype="<f8").astype(np.float64)
    rows, columns = grib.get("Ny"), grib.get("Nx")
    if grid.grid_type in PROJECTED and isinstance(rows, int) and isinstance(columns, int) and rows * columns == grid.points:
        dims: Tuple[str, ...] = ("y", "x")
        shape: Tuple[int, ...] = (rows, columns)
    else:
        dims, shape = ("values",), (grid.points,)
    return dims, shape, {
        "latitude": xarray.Variable(dims, latitudes.reshape(shape), _coordinate_attributes("latitude")),
        "longitude": xarray.Variable(dims, longitudes.reshape(shape), _coordinate_attributes("longitude")),
    }


def _coordinate_attributes(name: str) -> Dict[str, str]:
    """cfgrib's attributes of coordinate `name`; for a level type it has none for, its default."""
    if name in COORDINATE_ATTRIBUTES:
        return dict(COORDINATE_ATTRIBUTES[name])
    return {"long_name": f"original GRIB coordinate for key: level({name})", "units": "1"}
