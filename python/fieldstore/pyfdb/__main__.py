"""`python -m fieldstore.pyfdb --print-home-deps`: which fieldstore package and native module
were loaded (what pyfdb's `--print-home-deps` shows of libfdb5 and its libraries)."""

from __future__ import annotations

import argparse
import sys

import fieldstore
from fieldstore import _native

from ._internal import _fdb5_build_version, _version_info


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fieldstore.pyfdb", description=__doc__)
    parser.add_argument("--print-home-deps", action="store_true", help="print the package and native module loaded, with their versions")
    args = parser.parse_args(argv)
    if not args.print_home_deps:
        parser.print_help()
        return 2
    print(f"fieldstore package: {fieldstore.__file__} (installed as version {_fdb5_build_version})")
    for name, version, _, path in _version_info():
        print(f"native module ({name}): {path or _native.__name__} (version {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
