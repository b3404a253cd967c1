"""Fields as arrays: the hypercube a request names ([`Cube`](cube.py)), and over it the xarray
backend (`xarray.open_dataset(request, engine="fieldstore")`). Needs numpy, and xarray for the
backend (`pip install "fieldstore[arrays]"`). Design: docs/arrays-design.md."""

from .cube import Cube

__all__ = ["Cube"]
