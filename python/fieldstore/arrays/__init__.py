"""Fields as arrays: the hypercube a request names ([`Cube`](cube.py)), and over it the xarray
backend (`xarray.open_dataset(request, engine="fieldstore")`) and a read-only Zarr v3 view
(`ZarrStore`, zarr-python 3). Needs numpy, and xarray or zarr for those
(`pip install "fieldstore[arrays]"`). Design: docs/arrays-design.md."""

from typing import Any

from .cube import Cube

__all__ = ["Axis", "Cube", "ZarrStore"]


def __getattr__(name: str) -> Any:
    # zarr-python 3 needs Python 3.11: imported only when the view is used.
    if name in ("ZarrStore", "Axis"):
        from . import zarr_store

        return getattr(zarr_store, name)
    raise AttributeError(name)
