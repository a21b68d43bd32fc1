"""``explain`` and ``--trace`` on long and deep queries: no internal error.

Chains of BINDs, OPTIONALs (background ones too), SEQs, UNIONs and joins
a thousand and more long made ``explain`` and the trace stop with
"internal error: RecursionError" (the rule graph's JSON, its Python
walks, the algebra tree, the tree printing).  Every walk is iterative now:
the commands succeed, lines stay of bounded width, and ``--png`` refuses
a picture too large to read with one line.
"""
from __future__ import annotations

import json
import re
import sys

import pytest

from epsparql.cli import main
from epsparql.explain.tree import MAX_INDENT

EX = "http://ex/"


def chain(kind: str, n: int) -> str:
    if kind == "BIND":
        return (f"SELECT ?x ?y WHERE {{ ?x <{EX}p> ?y "
                + " ".join(f"BIND(?y+{i} AS ?w{i})" for i in range(n)) + " }")
    if kind == "OPTIONAL":
        return (f"SELECT ?x WHERE {{ ?x <{EX}p> ?y "
                + " ".join(f"OPTIONAL {{ ?x <{EX}p{i}> ?z }}" for i in range(n)) + " }")
    if kind == "background OPTIONAL":
        return (f"SELECT ?x WHERE {{ ?x <{EX}p> ?y "
                + " ".join(f"OPTIONAL {{ GRAPH <urn:epsparql:background> {{ ?x <{EX}b{i}> ?z }} }}"
                           for i in range(n)) + " }")
    if kind in ("SEQ", "UNION"):
        return f"SELECT ?x WHERE {{ " + f" {kind} ".join(
            f"{{ ?x <{EX}p{i}> ?y }}" for i in range(n)) + " }"
    if kind == "join":
        return "SELECT ?x WHERE { " + " ".join(f"{{ ?x <{EX}p{i}> ?y }}" for i in range(n)) + " }"
    if kind == "&&":
        return (f"SELECT ?x WHERE {{ ?x <{EX}p> ?y FILTER("
                + " && ".join(f"?y != {i}" for i in range(n)) + ") }")
    raise ValueError(kind)


#: (kind, length, trace it too): every length is past where a walk of the
#: old code hit Python's recursion limit, with the limit at :data:`LIMIT`
#: (half the default: the same test at half the lengths, half the time)
KINDS = [("BIND", 450, True), ("OPTIONAL", 495, False), ("background OPTIONAL", 550, False),
         ("SEQ", 750, True), ("UNION", 750, False), ("join", 750, False), ("&&", 1500, True)]
LIMIT = 500


@pytest.fixture
def half_recursion_limit():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(LIMIT)
    yield
    sys.setrecursionlimit(old)


@pytest.mark.parametrize("kind, n, trace", KINDS)
def test_explain_and_trace_take_long_chains(tmp_path, capsys, kind, n, trace,
                                            half_recursion_limit):
    q = tmp_path / "q.rq"
    q.write_text(chain(kind, n) + "\n")
    assert main(["explain", str(q), "--reasoning", "none"]) == 0
    out, err = capsys.readouterr()
    assert "internal error" not in err
    lines = out.splitlines()
    assert "rule graph:" in out and (len(lines) > n or kind == "&&")
    indent = max(len(line) - len(line.lstrip(" │├└─…")) for line in lines)
    assert indent <= MAX_INDENT + 5              # the tree's indentation is cut
    if not trace:
        return
    s = tmp_path / "s.nt"
    s.write_text("".join(f"<{EX}s> <{EX}p{'' if i == 0 else i}> "
                         f"\"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer> {i} .\n"
                         for i in range(0, 30)))
    assert main(["run", str(q), "--stream", str(s), "--trace", "--reasoning", "none",
                 "--output-format", "jsonl"]) == 0
    out, err = capsys.readouterr()
    assert "internal error" not in err
    objs = [json.loads(x) for x in out.splitlines()]
    assert objs[0]["type"] == "header" and objs[-1]["type"] == "waiting"


def test_png_refuses_a_picture_too_large_to_read(tmp_path, capsys):
    q = tmp_path / "q.rq"
    q.write_text(chain("UNION", 300) + "\n")
    assert main(["explain", str(q), "--png", str(tmp_path / "x.png")]) == 2
    out, err = capsys.readouterr()
    assert "rule graph:" in out                          # the text is printed all the same
    [line] = err.splitlines()
    m = re.fullmatch(r"epsparql: error: --png: the trees have ([\d,]+) boxes, more than can be "
                     r"drawn legibly \(400\); the printed trees show them all", line)
    assert m and int(m.group(1).replace(",", "")) > 600        # 300 alternatives, two trees
    assert not (tmp_path / "x.png").exists()


def test_a_png_is_written_where_asked(tmp_path, capsys):
    q = tmp_path / "q.rq"
    q.write_text(chain("SEQ", 3) + "\n")
    target = tmp_path / "plan"                     # no extension: written as given
    assert main(["explain", str(q), "--png", str(target)]) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["explain", str(q), "--png", str(tmp_path)]) == 2       # a directory
    assert "cannot write" in capsys.readouterr().err
