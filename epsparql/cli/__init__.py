"""The ``epsparql`` command line: one module per command, their common
plumbing in :mod:`.common`, the entry point in :mod:`.main`.

Importing this package loads the commands, and with them the engine (the
package ``epsparql`` itself loads nothing yet): a Ctrl-C while they load
ends the command with one line and exit code 130, as it does later, not
with the traceback of an import.
"""
from __future__ import annotations

import sys

try:
    from .main import build_parser, main
except KeyboardInterrupt:          # Ctrl-C while the command starts
    print("epsparql: interrupted", file=sys.stderr, flush=True)
    raise SystemExit(130) from None

__all__ = ["main", "build_parser"]
