"""pyfdb 5.25's public API over fieldstore: scripts written for pyfdb run unchanged after

    import fieldstore.pyfdb as pyfdb

with FDB5's configuration (`type: local`, `engine: toc`, `schema`, `spaces` and `roots`) as a
dict, YAML text or a Path. The differences from pyfdb are in docs/python.md."""

from .pyfdb import FDB
from .pyfdb_iterator import ControlElement, IndexAxis, ListElement, PurgeElement, StatsElement, StatusElement, WipeElement
from .pyfdb_type import URI, ControlAction, ControlIdentifier, DataHandle, MarsSelection

__version__ = "5.25.0+fieldstore"

__all__ = [
    "FDB",
    "URI",
    "DataHandle",
    "ListElement",
    "WipeElement",
    "StatusElement",
    "ControlAction",
    "ControlIdentifier",
    "PurgeElement",
    "StatsElement",
    "ControlElement",
    "IndexAxis",
    "MarsSelection",
]
