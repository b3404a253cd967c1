"""pygribjump's API over fieldstore: code written for ECMWF's `pygribjump` 0.13 (Polytope's
feature extraction among it) runs unchanged with `from fieldstore import gribjump as pygribjump`.

    from fieldstore.gribjump import GribJump
    gj = GribJump()                                       # the configuration FieldStore() opens
    request = {"class": "od", "expver": "0001", "stream": "oper", "date": "20231201",
               "time": "1200", "type": "fc", "levtype": "sfc", "step": "6", "param": "167"}
    for result in gj.extract([(request, [(0, 10), (5000, 5001)])]):
        print(result.values, result.masks)                # an array per range; uint64 mask words

Each field's points are read by `FieldStore.extract_each` (many fields in flight), from only
the bytes that hold them where the field's packing is kept (`fieldstore scan`, gribjump-scan's
job). Results, errors and shapes are pygribjump's; where fieldstore differs (a grid hash is
neither needed nor checked, `extract_from_paths` is not offered, axes' values are in order)
docs/extract.md says so. Needs numpy, as pygribjump does.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

import fieldstore

__all__ = ["GribJump", "ExtractionRequest", "ExtractionResult", "ExtractionIterator", "GribJumpException"]

Ranges = List[Tuple[int, int]]


class GribJumpException(RuntimeError):
    """What pygribjump raises for a failed extraction (no such field, a range beyond a field);
    the fieldstore error that caused it is its `__cause__`."""


class ExtractionRequest:
    """One request (of one field, as in a list given to `GribJump.extract`) and the `[lo, hi)`
    ranges of grid points to extract from it."""

    def __init__(self, req: Dict[str, str], ranges: Ranges, gridHash: Optional[str] = None):
        if not ranges:
            raise ValueError(f"Must provide at least one range but found {ranges=}")
        for lo, hi in ranges:
            if not lo < hi:
                raise ValueError(f"Found invalid range {(lo, hi)}: Expected lo < hi for ranges [lo, hi).")
        self._request = dict(req)
        self._ranges = [(int(lo), int(hi)) for lo, hi in ranges]
        self._grid_hash = gridHash

    @classmethod
    def from_mask(cls, req: Dict[str, str], mask: Any, gridHash: Optional[str] = None) -> "ExtractionRequest":
        """A request for the points a 1-D boolean mask marks True (one range per run of them)."""
        marked = np.asarray(mask, dtype=bool).ravel()
        if not marked.any():
            raise ValueError("Mask must contain at least one True value")
        edges = np.diff(np.concatenate(([False], marked, [False])).astype(int))
        return cls(req, list(zip(np.where(edges == 1)[0], np.where(edges == -1)[0])), gridHash)

    @classmethod
    def from_indices(cls, req: Dict[str, str], points: Any, gridHash: Optional[str] = None) -> "ExtractionRequest":
        """A request for each of the points (one range per point)."""
        return cls(req, [(p, p + 1) for p in points], gridHash)

    @property
    def shape(self) -> List[int]:
        """The number of points of each range."""
        return [hi - lo for lo, hi in self._ranges]

    @property
    def ranges(self) -> Ranges:
        """The ranges, as given."""
        return list(self._ranges)

    def indices(self) -> np.ndarray:
        """The points the ranges cover, in order."""
        return np.fromiter((i for lo, hi in self._ranges for i in range(lo, hi)), int, count=sum(self.shape))


class ExtractionResult:
    """One field's extraction: `values` (a float64 array per range, NaN where the field has no
    value) and `masks` (per range, uint64 words: bit k of word j says whether point 64j + k of
    the range has a value), each also flat."""

    def __init__(self, extracted: fieldstore.Extracted):
        self._extracted = extracted
        self._masks: Optional[List[np.ndarray]] = None

    @property
    def values(self) -> List[np.ndarray]:
        return self._extracted.values

    @property
    def values_flat(self) -> np.ndarray:
        return np.concatenate(self._extracted.values) if self._extracted.values else np.empty(0)

    @property
    def masks(self) -> List[np.ndarray]:
        if self._masks is None:
            self._masks = [_mask_words(present) for present in self._extracted.masks]
        return self._masks

    @property
    def masks_flat(self) -> np.ndarray:
        return np.concatenate(self.masks) if self.masks else np.empty(0, dtype=np.uint64)

    def compute_bool_masks(self) -> List[np.ndarray]:
        """The masks as a boolean array per range."""
        return [present.copy() for present in self._extracted.masks]

    def copy_values(self) -> List[np.ndarray]:
        return [v.copy() for v in self.values]

    def copy_masks(self) -> List[np.ndarray]:
        return [m.copy() for m in self.masks]

    @property
    def key(self) -> Dict[str, str]:
        """The field's key (fieldstore's addition)."""
        return self._extracted.key

    @property
    def bytes_read(self) -> int:
        """The bytes read for the field (fieldstore's addition)."""
        return self._extracted.bytes_read


def _mask_words(present: np.ndarray) -> np.ndarray:
    """Booleans packed as gribjump packs them: bit k of word j is point 64j + k."""
    padded = np.zeros((len(present) + 63) // 64 * 64, dtype=np.uint64)
    padded[: len(present)] = present
    weights = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))
    return (padded.reshape(-1, 64) * weights).sum(axis=1, dtype=np.uint64)


class ExtractionIterator:
    """The results of an extraction, one per field, in the requests' order."""

    def __init__(self, results: List[ExtractionResult]):
        self._results = results

    def __iter__(self) -> Iterator[ExtractionResult]:
        return iter(self._results)

    def dump_legacy(self) -> List[List[List[Tuple[np.ndarray, np.ndarray]]]]:
        """pygribjump's legacy nesting: [request][0][range] = (values, mask words)."""
        return [[list(zip(result.copy_values(), result.copy_masks()))] for result in self]

    def dump_values(self) -> List[List[np.ndarray]]:
        return [result.copy_values() for result in self]


PolyRequest = Union[Sequence[Tuple[Any, ...]], Sequence[ExtractionRequest]]


class GribJump:
    """Extraction from the fields of a store: `config` as `fieldstore.FieldStore` takes it (by
    default the configuration the CLI uses, FDB5's `FDB5_CONFIG_FILE` among its sources), or an
    open `FieldStore`."""

    def __init__(self, config: Union[fieldstore.ConfigLike, fieldstore.FieldStore] = None):
        self._store = config if isinstance(config, fieldstore.FieldStore) else fieldstore.FieldStore(config)

    def extract(self, polyrequest: PolyRequest, ctx: Any = None) -> ExtractionIterator:
        """The extraction of each request of a list (each naming one field): `(request, ranges)`
        or `(request, ranges, gridHash)` tuples, or `ExtractionRequest`s."""
        if not isinstance(polyrequest, list):
            raise ValueError("Polyrequest should be a list of tuples or ExtractionRequest objects")
        if len(polyrequest) == 0:
            raise ValueError("Polyrequest should not be empty")
        if isinstance(polyrequest[0], tuple):
            requests = [_unpacked(item) for item in polyrequest]
        elif isinstance(polyrequest[0], ExtractionRequest):
            requests = list(polyrequest)
        else:
            raise ValueError("Polyrequest should be a list of tuples or ExtractionRequest objects")
        answers = self._extract_each([(r._request, r._ranges) for r in requests])
        results = []
        for request, fields in zip(requests, answers):
            if len(fields) != 1:
                raise GribJumpException(f"{_text(request._request)} names {len(fields)} fields: each request of a list must name one")
            results.append(ExtractionResult(fields[0]))
        return ExtractionIterator(results)

    def extract_single(self, request: Dict[str, Any], ranges: Ranges, gridHash: Optional[str] = None, ctx: Any = None) -> ExtractionIterator:
        """The same ranges of every field one request names (values may be lists: many fields)."""
        ExtractionRequest(request, ranges)  # refuses bad ranges as pygribjump does
        (fields,) = self._extract_each([(request, ranges)])
        return ExtractionIterator([ExtractionResult(field) for field in fields])

    def extract_from_mask(self, requests: List[Dict[str, str]], mask: Any, gridHash: Optional[str] = None, ctx: Any = None) -> ExtractionIterator:
        """The points a 1-D boolean mask marks, from the field of each request."""
        if not isinstance(requests, list):
            raise ValueError("Requests should be a list of dictionaries")
        return self.extract([ExtractionRequest.from_mask(r, mask, gridHash) for r in requests], ctx)

    def extract_from_indices(self, requests: List[Dict[str, str]], indices: Any, gridHash: Optional[str] = None, ctx: Any = None) -> ExtractionIterator:
        """The points `indices` names (one range each), from the field of each request."""
        if not isinstance(requests, list):
            raise ValueError("Requests should be a list of dictionaries")
        return self.extract([ExtractionRequest.from_indices(r, indices, gridHash) for r in requests], ctx)

    def extract_from_ranges(self, requests: List[Dict[str, str]], ranges: Ranges, gridHash: Optional[str] = None, ctx: Any = None) -> ExtractionIterator:
        """The `[lo, hi)` ranges, from the field of each request."""
        if not isinstance(requests, list):
            raise ValueError("Requests should be a list of dictionaries")
        return self.extract([ExtractionRequest(r, ranges, gridHash) for r in requests], ctx)

    def axes(self, req: Dict[str, str], level: int = 3, ctx: Any = None) -> Dict[str, List[str]]:
        """The values stored per keyword of the schema's levels 1 to `level` among what `req`
        names; an optional keyword some fields lack has the empty value among its values."""
        return self._store.axes(req, level=level)

    def _extract_each(self, requests: List[Tuple[Dict[str, Any], Ranges]]) -> List[List[fieldstore.Extracted]]:
        try:
            return self._store.extract_each([(request, ranges) for request, ranges in requests])
        except fieldstore.Error as e:
            raise GribJumpException(str(e)) from e


def _unpacked(item: Tuple[Any, ...]) -> ExtractionRequest:
    """A polyrequest's tuple: `(request, ranges)` or `(request, ranges, gridHash)`."""
    if len(item) not in (2, 3):
        raise ValueError("Polyrequest should be a list of tuples of length 2 or 3")
    return ExtractionRequest(item[0], list(item[1]), item[2] if len(item) == 3 else None)


def _text(request: Dict[str, Any]) -> str:
    return ",".join(f"{k}={'/'.join(map(str, v)) if isinstance(v, (list, tuple)) else v}" for k, v in request.items())


# pygribjump's helpers, for code that imports them.
def rangestr_to_list(rangestr: str) -> Ranges:
    """`"0-6,7-12"` -> `[(0, 6), (7, 12)]`."""
    return [tuple(map(int, r.split("-"))) for r in rangestr.split(",")]  # type: ignore[misc]


def list_to_rangestr(ranges: Ranges) -> str:
    """`[(0, 6), (7, 12)]` -> `"0-6,7-12"`."""
    return ",".join("-".join(map(str, r)) for r in ranges)
