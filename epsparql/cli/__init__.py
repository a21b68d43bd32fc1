"""The ``epsparql`` command line: one module per command, their common
plumbing in :mod:`.common`, the entry point in :mod:`.main`."""
from .main import build_parser, main

__all__ = ["main", "build_parser"]
