"""Running the ``epsparql`` command in a child process, as a user does."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from rdflib import BNode, Literal, URIRef

from conftest import ROOT

#: What must never reach a user: Python's and Prolog's own reports.
NEVER = ("Traceback", "internal error", "Stack sizes", "--stack_limit", "set_prolog_flag",
         "Exception ignored", "BrokenPipeError", "RecursionError")


def env() -> dict:
    e = dict(os.environ)            # the package from this checkout, installed or not
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def cli(*args, input: str | None = None, cwd: Path = ROOT, timeout: int = 600,
        extra_env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m epsparql.cli ARGS`` in ``cwd``; nothing of NEVER on standard error."""
    r = subprocess.run([sys.executable, "-m", "epsparql.cli", *map(str, args)], cwd=cwd,
                       input=input, capture_output=True, text=True, timeout=timeout,
                       env={**env(), **(extra_env or {})})
    for word in NEVER:
        assert word not in r.stderr, r.stderr[-3000:]
    return r


def json_answers(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _term(obj: dict):
    if obj["type"] == "uri":
        return URIRef(obj["value"])
    if obj["type"] == "bnode":
        return BNode(obj["value"])
    return Literal(obj["value"], lang=obj.get("xml:lang"),
                   datatype=URIRef(obj["datatype"]) if obj.get("datatype") else None)


def answer_counter(stdout: str) -> Counter:
    """The JSON lines answers as the reference's Counter of (bindings, start, end)."""
    out: Counter = Counter()
    for a in json_answers(stdout):
        b = frozenset((k, _term(v)) for k, v in a["bindings"].items())
        out[(b, a["start"], a["end"])] += 1
    return out


def stream_text(rows) -> str:
    """Rows (s, p, o, start, end) in the timestamped N-Triples format."""
    out = []
    for s, p, o, t1, t2 in rows:
        out.append(f"{s.n3()} {p.n3()} {o.n3()} {t1} {t2} .")
    return "\n".join(out) + "\n"


def error_lines(stderr: str) -> list[str]:
    """The lines of standard error that report an error."""
    return [line for line in stderr.splitlines() if ": error" in line]
