"""Fields made and decoded by ecCodes itself (its Python bindings), for the tests of the array
interfaces: what fieldstore's decoding and arrays are checked against. Needs numpy and eccodes
(the test extras), so the pyfdb suite, which runs in FDB5's environment too, does not import it."""

from __future__ import annotations

import eccodes
import numpy as np


def sample_field(sample: str, base: float, **keys: object) -> bytes:
    """A message of ecCodes' `sample` with `keys` set and values `base` plus a ramp of 0 to 1."""
    h = eccodes.codes_grib_new_from_samples(sample)
    try:
        eccodes.codes_set_key_vals(h, ",".join(f"{k}={v}" for k, v in keys.items()))
        n = eccodes.codes_get_size(h, "values")
        eccodes.codes_set_values(h, base + np.linspace(0, 1, n))
        return bytes(eccodes.codes_get_message(h))
    finally:
        eccodes.codes_release(h)


def eccodes_values(message: bytes, as_grid: bool = False) -> np.ndarray:
    """ecCodes' values of `message`, missing points as NaN; as rows and columns (Nj x Ni) when
    `as_grid`."""
    h = eccodes.codes_new_from_message(message)
    try:
        values = eccodes.codes_get_values(h)
        if eccodes.codes_get(h, "bitmapPresent"):
            values[values == eccodes.codes_get(h, "missingValue")] = np.nan
        return values.reshape(eccodes.codes_get(h, "Nj"), eccodes.codes_get(h, "Ni")) if as_grid else values
    finally:
        eccodes.codes_release(h)
