"""Calls of pygribjump's API, made the same way on ECMWF's pygribjump (gribjump_peer.py) and on
fieldstore.gribjump (test_gribjump.py), answered as JSON so that the two can be compared: values
as exact hexadecimal floats (`nan` where missing), masks as their uint64 words, errors as the
exception's class name (and its message, which differs)."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np


def answer_all(module: Any, gribjump: Any, calls: List[Dict[str, Any]]) -> List[Any]:
    """Each call's answer, in order."""
    return [answer(module, gribjump, call) for call in calls]


def answer(module: Any, gribjump: Any, call: Dict[str, Any]) -> Any:
    """One call's answer: per result, its values and masks (and flat forms); or the error."""
    kind, hash_ = call["kind"], call.get("hash")
    try:
        if kind == "extract":
            results = gribjump.extract([(r, [tuple(x) for x in ranges], hash_) for r, ranges in call["requests"]])
        elif kind == "requests":
            made = [module.ExtractionRequest(r, [tuple(x) for x in ranges], hash_) for r, ranges in call["requests"]]
            results = gribjump.extract(made)
        elif kind == "indices":
            results = gribjump.extract_from_indices(call["requests"], np.array(call["indices"]), hash_)
        elif kind == "mask":
            results = gribjump.extract_from_mask(call["requests"], np.array(call["mask"], dtype=bool), hash_)
        elif kind == "ranges":
            results = gribjump.extract_from_ranges(call["requests"], [tuple(x) for x in call["ranges"]], hash_)
        elif kind == "single":
            results = gribjump.extract_single(call["request"], [tuple(x) for x in call["ranges"]], hash_)
        elif kind == "axes":
            return {k: sorted(v) for k, v in gribjump.axes(call["request"], call["level"]).items()}
        else:
            raise ValueError(f"unknown call {kind}")
        return [result_answer(result) for result in results]
    except Exception as e:  # noqa: BLE001 - the error's class is the answer
        return {"error": type(e).__name__, "message": str(e)[:400]}


def result_answer(result: Any) -> Dict[str, Any]:
    """A result's values (exact), mask words and flat forms, and its booleans."""
    return {
        "values": [[_exact(v) for v in values] for values in result.values],
        "masks": [[int(w) for w in words] for words in result.masks],
        "values_flat": [_exact(v) for v in result.values_flat],
        "masks_flat": [int(w) for w in result.masks_flat],
        "bool_masks": [[bool(b) for b in mask] for mask in result.compute_bool_masks()],
        "legacy_ranges": len(result.copy_values()),
    }


def _exact(value: float) -> str:
    return "nan" if np.isnan(value) else float(value).hex()
