"""pyfdb 5.25's `pyfdb._internal.pyfdb_internal` over fieldstore: `ConfigMapper` (a
configuration given as a dict, YAML text or a Path, as JSON text) and `FDBToolRequest` (a
selection as the request fieldstore resolves: MARS text, or all of the store)."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import fieldstore

InternalMarsSelection = Dict[str, Collection]
"""A selection as pyfdb's internals hold it: keyword -> a collection of values as text."""


def have_yaml() -> bool:
    """Whether PyYAML is there to read YAML text."""
    try:
        import yaml  # noqa: F401
    except ImportError:
        return False
    return True


def yaml_load(text: str, what: str) -> Any:
    """YAML text parsed (with PyYAML, which pyfdb needs too; JSON, a subset of YAML, without it)."""
    try:
        import yaml
    except ImportError:
        try:
            return json.loads(text)
        except ValueError:
            raise fieldstore.BadConfig(f"{what}: reading YAML text needs PyYAML (pip install pyyaml), as pyfdb does") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise fieldstore.BadConfig(f"{what} is not YAML: {e}") from None


class ConfigMapper:
    """A configuration as JSON text, whatever form it was given in."""

    @classmethod
    def to_dict(cls, config: Union[str, dict, Path, None]) -> Optional[Dict[str, Any]]:
        """The configuration as a dict: a dict as it is, a str parsed as YAML text, a Path's
        file parsed as YAML; None stays None. Any other type is a ValueError."""
        if config is None:
            return None
        if isinstance(config, Mapping):
            return dict(config)
        if isinstance(config, Path):
            parsed = yaml_load(config.read_text(), f"configuration file {config}")
        elif isinstance(config, str):
            parsed = yaml_load(config, "configuration text")
        else:
            raise ValueError(f"Config: Unknown config type, must be str, dict or Path (not {type(config).__name__})")
        if parsed is None:
            return {}
        if not isinstance(parsed, Mapping):
            raise fieldstore.BadConfig(
                f"a configuration is a mapping of options, not {type(parsed).__name__} ({parsed!r}; a str is YAML text, a Path a file)"
            )
        return dict(parsed)

    @classmethod
    def to_json(cls, config: Union[str, dict, Path, None]) -> Optional[str]:
        """The configuration as JSON text (None for None)."""
        as_dict = cls.to_dict(config)
        return None if as_dict is None else json.dumps(as_dict)

    @classmethod
    def from_json(cls, config: str) -> Dict[str, Any]:
        return json.loads(config)


def _mars_date(value: str) -> str:
    """A date value as MARS reads it: 0 is today, -N N days before, anything else as given."""
    if re.fullmatch(r"0|-[0-9]{1,6}", value):
        return (datetime.date.today() + datetime.timedelta(days=int(value))).strftime("%Y%m%d")
    return value


class FDBToolRequest:
    """A request as fieldstore's tools take it: the selection's keywords and values (relative
    dates made absolute, as MARS does), or all of the store (`all`, for an empty selection).
    `minimum_key_set`: keywords the selection must name (KeyError naming the first missing)."""

    def __init__(self, key_values: Optional[InternalMarsSelection] = None, all: bool = False, minimum_key_set: Optional[List[str]] = None) -> None:  # noqa: A002 - pyfdb's name
        key_values = dict(key_values or {})
        missing = [k for k in minimum_key_set or [] if k not in key_values]
        if missing and not all:
            raise KeyError(f"the request must name {', '.join(minimum_key_set or [])}; it does not name {', '.join(missing)}")
        self.all = all
        self.key_values: Dict[str, List[str]] = {
            k: [_mars_date(str(v)) if k == "date" else str(v) for v in values] for k, values in key_values.items()
        }

    @classmethod
    def from_internal_mars_selection(cls, selection: Optional[InternalMarsSelection]) -> "FDBToolRequest":
        """The request of a selection in pyfdb's internal form (keyword -> a collection of
        values); an empty or absent selection names all of the store."""
        if not selection:
            return cls({}, all=True)
        for keyword, values in selection.items():
            if isinstance(values, str) or not isinstance(values, Collection):
                raise ValueError(f"Expecting collection of values for key {keyword}, not {values!r}")
        return cls(selection)

    def text(self) -> str:
        """The MARS text fieldstore resolves (empty for all of the store)."""
        return "" if self.all else fieldstore._request_text(self.key_values)

    def __repr__(self) -> str:
        what = "ALL" if self.all else ",".join(["retrieve", *(f"{k}={'/'.join(v)}" for k, v in self.key_values.items())])
        return f"FDBToolRequest({what})"
