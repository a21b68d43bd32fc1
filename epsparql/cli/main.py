"""The ``epsparql`` command: its parser and its one entry point.

    epsparql run QUERY.rq... --stream FILE|- [...]      cli/run.py (--trace: cli/trace.py)
    epsparql check QUERY.rq...                          cli/check.py
    epsparql explain QUERY.rq... [--png FILE]           cli/explain.py
    epsparql spark run|stream ...                       cli/spark.py
    epsparql serve [--state DIR] [--mqtt HOST:PORT] ... cli/serve.py

Every command module has an ``add_parser(subparsers)``; :func:`main` runs
the chosen one and turns its errors into messages and exit codes (0 ok,
2 usage or query error, 1 runtime failure, 130 interrupted).  See
docs/CLI.md.
"""
from __future__ import annotations

import argparse
import logging
import os
import warnings
from typing import Sequence

from . import check, explain, run, serve, spark
from ..core.runtime import PrologError
from .common import (EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, PROG, ArgumentParser, QueryFileError,
                     UsageError, engine_failure, one_line, say, silence_closed_output,
                     warning_hook)

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command and option."""
    ap = ArgumentParser(prog=PROG, description="Run EP-SPARQL continuous queries over "
                        "timestamped RDF streams.  See docs/CLI.md.")
    ap.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    sub.required = True
    for command in (run, check, explain, spark, serve):
        command.add_parser(sub)
    return ap


def _version() -> str:
    try:
        from .. import __version__
        return __version__
    except Exception:
        return "?"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``epsparql`` console script."""
    args = build_parser().parse_args(argv)
    warnings.showwarning = warning_hook
    logging.getLogger("rdflib").setLevel(logging.ERROR)   # ill-typed literals are data, not news
    try:
        return args.func(args)
    except UsageError as e:
        say(f"{PROG}: error: {e}")
        return EXIT_USAGE
    except QueryFileError as e:
        say(str(e))
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader of our output went away (`| head`): stop quietly, as a
        # Unix filter does; what is still buffered goes nowhere
        silence_closed_output()
        return EXIT_OK
    except KeyboardInterrupt:
        say(f"{PROG}: interrupted")
        return 130
    except PrologError as e:                       # the engine failed outside a run's loop
        say(f"{PROG}: error in the engine: {engine_failure(e)}")
        return EXIT_RUNTIME
    except Exception as e:                         # a bug, or the environment (no SWI-Prolog…)
        if os.environ.get("EPSPARQL_DEBUG"):
            raise
        say(f"{PROG}: internal error: {type(e).__name__}: {one_line(e)} "
            f"(set EPSPARQL_DEBUG=1 for the traceback)")
        return EXIT_RUNTIME
