"""The internals pyfdb 5.25's own tests and tools import (`pyfdb._internal`), over fieldstore:
the raw forms of the control enums (what fieldstore's native layer takes), the configuration
and tool-request mappers, and the check, made when the package is imported, that the native
module loaded is the one this package was installed with (pyfdb's check of the loaded libfdb5)."""

from __future__ import annotations

import sys
import warnings
from enum import IntEnum
from typing import List, Optional, Sequence, Tuple

from fieldstore import _native

from .pyfdb_internal import ConfigMapper, FDBToolRequest

__all__ = ["ConfigMapper", "FDBToolRequest", "_ControlAction", "_ControlIdentifier", "_check_fdb5_version_compatibility"]


class _ControlIdentifier(IntEnum):
    """A control identifier as fieldstore's native layer takes it: `action` is the name of the
    lock (`list`, `retrieve`, `archive`, `wipe`); NONE and UNIQUEROOT name none (fieldstore
    places each data set in one root, so FDB5's unique-root control has nothing to act on)."""

    NONE = 0
    LIST = 1
    RETRIEVE = 2
    ARCHIVE = 4
    WIPE = 8
    UNIQUEROOT = 16

    @property
    def action(self) -> Optional[str]:
        return None if self in (_ControlIdentifier.NONE, _ControlIdentifier.UNIQUEROOT) else self.name.lower()


class _ControlAction(IntEnum):
    """A control action as fieldstore's native layer takes it: `lock` is True to lock (DISABLE),
    False to unlock (ENABLE), None to only report (NONE)."""

    NONE = 0
    DISABLE = 1
    ENABLE = 2

    def __str__(self) -> str:
        return f"ControlAction.{self.name}"

    @property
    def lock(self) -> Optional[bool]:
        return {_ControlAction.DISABLE: True, _ControlAction.ENABLE: False}.get(self)


_HINT = "Run 'python -m fieldstore.pyfdb --print-home-deps' to see which fieldstore package and native module were loaded."


def _check_fdb5_version_compatibility(build_version: str, runtime_info: Sequence[Tuple[str, str, str, str]]) -> None:
    """Warns (UserWarning) when the library loaded (the entry named `fdb` of `runtime_info`:
    name, version, revision, path) is not of `build_version`; raises RuntimeError when no
    library named `fdb` was loaded at all."""
    versions = [version for name, version, _, _ in runtime_info if name == "fdb"]
    if not versions:
        raise RuntimeError(f"fieldstore.pyfdb could not tell which native module was loaded (runtime info: {list(runtime_info)!r}). {_HINT}")
    if versions[0] != build_version:
        warnings.warn(
            f"fieldstore.pyfdb was installed with fieldstore {build_version} but the native module loaded is version {versions[0]}: "
            f"behaviour may differ (a stale build of the native module?). {_HINT}",
            UserWarning,
            stacklevel=2,
        )


def _installed_version() -> str:
    """The version the fieldstore package was installed as (the native module's when the
    installation has no metadata, as when run from a source tree)."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python 3.9 has importlib.metadata
        return _native.__version__
    try:
        return version("fieldstore")
    except PackageNotFoundError:
        return _native.__version__


def _version_info() -> List[Tuple[str, str, str, str]]:
    """The libraries loaded, as pyfdb reports them (name, version, revision, path): the native
    module, which stands where libfdb5 does for pyfdb."""
    return [("fdb", _native.__version__, "", getattr(_native, "__file__", "") or "")]


_fdb5_build_version = _installed_version()

_check_fdb5_version_compatibility(_fdb5_build_version, _version_info())

