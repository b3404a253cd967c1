"""`xarray.open_dataset(request, engine="fieldstore", config=...)`: what a request names as a
lazy dataset, one variable per parameter (named by its `shortName`), dimensions and coordinates
as cfgrib gives them ([cube](cube.py)). Nothing but one field per parameter (its grid and names)
is read until values are used, and then only the fields needed; with dask (`chunks={}`), a chunk
is one field. Missing combinations are NaN.

    ds = xarray.open_dataset({"class": "od", "expver": "0001", "stream": "oper", "date": 20240101,
                              "time": 0, "type": "fc", "levtype": "pl", "step": [0, 6],
                              "levelist": [500, 850], "param": ["130", "131"]},
                             engine="fieldstore", config="/etc/fieldstore.yaml")
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Tuple

import numpy as np
import xarray
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from .cube import LEVEL_NAMES, Cube, Dimension, variable_names


class FieldArray(BackendArray):
    """One parameter's values over the cube's dimensions, read when indexed."""

    def __init__(self, cube: Cube, param: str) -> None:
        self.cube = cube
        self.param = param
        self.shape = cube.shape
        self.dtype = cube.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._read)

    def _read(self, key: Tuple[Any, ...]) -> np.ndarray:
        return self.cube.read(self.param, key)


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
        cube = Cube(config, filename_or_obj, dtype=dtype)
        return dataset(cube, set(drop_variables or ()))

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        # A request is a mapping or MARS text, never a file: only `engine="fieldstore"` opens one.
        return False


def dataset(cube: Cube, drop: set) -> xarray.Dataset:
    """The cube as a dataset."""
    coords: Dict[str, Any] = {}
    for d in cube.dimensions:
        coords[d.name] = xarray.Variable((d.name,), d.coordinate(), _coordinate_attributes(d.name))
    if cube.grid.latitudes:
        coords["latitude"] = xarray.Variable(("latitude",), np.array(cube.grid.latitudes), _coordinate_attributes("latitude"))
        coords["longitude"] = xarray.Variable(("longitude",), np.array(cube.grid.longitudes), _coordinate_attributes("longitude"))
    _scalar_coordinates(cube, coords)
    variables = {}
    chunks = {d.name: 1 for d in cube.dimensions}
    for param, name in variable_names(cube).items():
        names = cube.attributes[param]
        if name in drop or param in drop:
            continue
        attrs = {f"GRIB_{k}": v for k, v in names.items() if v not in (None, "unknown")}
        attrs["GRIB_paramId"] = param
        attrs.update({"units": names.get("units") or "", "long_name": names.get("name") or name})
        if names.get("cfName") not in (None, "unknown", "~"):
            attrs["standard_name"] = names["cfName"]
        data = indexing.LazilyIndexedArray(FieldArray(cube, param))
        encoding = {"preferred_chunks": chunks, "dtype": cube.dtype}
        variables[name] = xarray.Variable(cube.dims, data, attrs, encoding)
    attrs = {"Conventions": "CF-1.7", "institution": "fieldstore", "fieldstore_request": str(cube.request)}
    return xarray.Dataset(variables, coords=coords, attrs=attrs)


def _scalar_coordinates(cube: Cube, coords: Dict[str, Any]) -> None:
    """Single-valued time, step, level and member as scalar coordinates, and `valid_time`."""
    scalars = cube.scalars
    if "time" not in coords and scalars.get("date"):
        coords["time"] = xarray.Variable((), Dimension("time", ("date", "time"), [(scalars["date"], scalars.get("time", ""))]).coordinate()[0])
    if "step" not in coords and scalars.get("step"):
        coords["step"] = xarray.Variable((), Dimension("step", ("step",), [(scalars["step"],)]).coordinate()[0])
    level = LEVEL_NAMES.get(scalars.get("levtype", ""), "level")
    if level not in coords and scalars.get("levelist"):
        coords[level] = xarray.Variable((), float(scalars["levelist"]))
    if "number" not in coords and scalars.get("number"):
        coords["number"] = xarray.Variable((), int(scalars["number"]))
    for name in ("time", "step"):
        if name in coords:
            coords[name].attrs.update(_coordinate_attributes(name))
    if "time" in coords and "step" in coords:
        time, step = coords["time"], coords["step"]
        dims = tuple(d for d in ("time", "step") if coords[d].dims)
        valid = (time.values[..., None] + step.values[None, ...]) if len(dims) == 2 else time.values + step.values
        coords["valid_time"] = xarray.Variable(dims, valid, {"standard_name": "time", "long_name": "time"})


def _coordinate_attributes(name: str) -> Dict[str, str]:
    return {
        "latitude": {"units": "degrees_north", "standard_name": "latitude", "long_name": "latitude"},
        "longitude": {"units": "degrees_east", "standard_name": "longitude", "long_name": "longitude"},
        "time": {"standard_name": "forecast_reference_time", "long_name": "initial time of forecast"},
        "step": {"standard_name": "forecast_period", "long_name": "time since forecast_reference_time"},
        "number": {"standard_name": "realization", "long_name": "ensemble member numerical id"},
        "isobaricInhPa": {"units": "hPa", "positive": "down", "standard_name": "air_pressure", "long_name": "pressure"},
    }.get(name, {"long_name": name})
