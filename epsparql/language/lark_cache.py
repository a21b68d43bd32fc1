"""LALR parsers built once per machine, not once per process.

Lark's grammar analysis of the SPARQL grammar takes ~0.7 s: most of the
start-up of a command such as ``epsparql check``.  The analysed parser is
saved (``Lark.save``) in the user's cache directory under a digest of the
grammar, the options and the Lark and Python versions, and loaded from
there (``Lark.load``) next time.  A cache that cannot be read or written
is rebuilt or skipped, never an error: it only saves time.  The file is
written to a temporary name and renamed, so a process never reads half of
one another process is writing; a grammar's earlier versions are removed
then.

The directory: ``$EPSPARQL_CACHE_DIR``, else ``$XDG_CACHE_HOME/epsparql``,
else ``~/.cache/epsparql``; ``EPSPARQL_CACHE_DIR=`` (empty) turns it off.
"""
from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import lark
from lark import Lark


def cache_dir() -> Path | None:
    """Where analysed parsers are kept (None: not kept)."""
    explicit = os.environ.get("EPSPARQL_CACHE_DIR")
    if explicit is not None:
        return Path(explicit) if explicit else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "epsparql"


def cached_lark(name: str, grammar: str, **options: Any) -> Lark:
    """``Lark(grammar, **options)``, from the cache when it holds this
    grammar with these options (``name`` only names the file)."""
    where = cache_dir()
    if where is None:
        return Lark(grammar, **options)
    key = hashlib.sha256("\0".join([grammar, repr(sorted(options.items())), lark.__version__,
                                    sys.version]).encode("utf-8")).hexdigest()[:24]
    path = where / f"{name}-{key}.lark"
    try:
        with open(path, "rb") as f:
            return Lark.load(f)
    except Exception:               # absent, unreadable, truncated, another Lark's
        pass
    parser = Lark(grammar, **options)
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=f".{name}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                parser.save(f)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        for old in where.glob(f"{name}-*.lark"):    # this grammar's earlier versions
            if old != path and len(old.name) == len(path.name):
                old.unlink(missing_ok=True)
    except Exception:               # a read-only home, a full disk: no cache
        pass
    return parser
