"""Issue 23, finding 2: C-SPARQL's and RSP-QL's time windows are closed at
the start and open at the end, [t0 + k·β, t0 + k·β + ω), reported at their
close, as CSRBench's oracle (C-SPARQL 0.9), YASPER and rsp-js open them;
t0 per query and on the command line."""
from __future__ import annotations

from decimal import Decimal

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine

EX = "http://ex.org/"
ISSUE = ("REGISTER QUERY q AS SELECT (AVG(?v) AS ?avg) FROM STREAM <http://ex.org/s> "
         "[RANGE 4s STEP 4s] WHERE {?x <http://ex.org/p> ?v}")
ROWS = [(10, 0), (20, 2), (30, 4), (40, 6)]


def _run(text, **options):
    with Engine(reasoning="none", **options) as eng:
        q = eng.register(text)
        eng.push_many((URIRef(f"{EX}x{i}"), URIRef(EX + "p"), Literal(v), t, None, EX + "s")
                      for i, (v, t) in enumerate(ROWS))
        eng.flush()
        return [(a["avg"].toPython(), a.start, a.end) for a in q.results()]


@pytest.mark.parametrize("incremental", [True, False])
def test_the_issues_example_through_the_api(incremental):
    # [0, 4) holds 10 and 20, [4, 8) holds 30 and 40: no window before the stream
    assert _run(ISSUE, incremental_windows=incremental) == [
        (Decimal("15.0"), 0, 4), (Decimal("35.0"), 4, 8)]
    # the CQL reading stays: (−4, 0], (0, 4], (4, 8]
    assert _run(ISSUE, incremental_windows=incremental, window_semantics="cql") == [
        (Decimal("10.0"), -4, 0), (Decimal("25.0"), 0, 4), (Decimal("40.0"), 4, 8)]


@pytest.mark.parametrize("incremental", [True, False])
def test_a_non_zero_t0(incremental):
    # t0 = 1: [1, 5) holds 20 and 30, [5, 9) holds 40; 10 at 0 is before the first window
    assert _run(ISSUE, incremental_windows=incremental, window_t0=1) == [
        (Decimal("25.0"), 1, 5), (Decimal("40.0"), 5, 9)]
    assert _run(ISSUE, incremental_windows=incremental, window_t0="-2") == [
        (Decimal("10.0"), -2, 2), (Decimal("25.0"), 2, 6), (Decimal("40.0"), 6, 10)]
    with Engine(window_t0=5) as eng:                        # per query, over the engine's
        q = eng.register(ISSUE, window_t0=Decimal("0.5"))
        assert q.algebra.window_t0 == Decimal("0.5") and q.algebra.t0 == Decimal("0.5")
    with pytest.raises(ValueError, match="number of seconds"):
        Engine(window_t0="soon")


def test_rspql_windows_open_before_t0_too():
    # YASPER's and rsp-js's scope(): every k, so [−2, 2) holds the row at 1
    text = ("REGISTER RSTREAM <http://ex.org/o> AS SELECT (COUNT(*) AS ?n) "
            "FROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s> [RANGE PT4S STEP PT2S] "
            "WHERE { WINDOW <http://ex.org/w> { ?x ?p ?v } }")
    with Engine(reasoning="none") as eng:
        q = eng.register(text)
        eng.push(URIRef(EX + "a"), URIRef(EX + "p"), Literal(1), 1, stream=EX + "s")
        eng.push(URIRef(EX + "b"), URIRef(EX + "p"), Literal(2), 5, stream=EX + "s")
        eng.flush()
        got = [(a.start, a.end, int(a["n"])) for a in q.results()]
    # empty windows are reported (YASPER: rsp_engine.non_empty_content=false)
    assert got == [(-2, 2, 1), (0, 4, 1), (2, 6, 1), (4, 8, 1)]


def test_the_issues_example_through_the_command_line(tmp_path):
    from cli.cli_child import cli
    q = tmp_path / "q.rq"
    q.write_text(ISSUE + "\n")
    s = tmp_path / "s.nqt"
    s.write_text("".join(f'<{EX}x{i}> <{EX}p> "{v}"^^<http://www.w3.org/2001/XMLSchema#integer> '
                         f'<{EX}s> {t} .\n' for i, (v, t) in enumerate(ROWS)))

    def run(*opts):
        r = cli("run", q, "--stream", s, "--output-format", "csv", "-q", *opts)
        assert r.returncode == 0, r.stderr
        return [tuple(line.split(",")[1:4]) for line in r.stdout.splitlines()[1:]]

    def avg(x):
        return f'"""{x}""^^<http://www.w3.org/2001/XMLSchema#decimal>"'

    assert run() == [("0", "4", avg("15.0")), ("4", "8", avg("35.0"))]
    assert run("--window-t0", "1") == [("1", "5", avg("25.0")), ("5", "9", avg("40.0"))]
    assert run("--window-semantics", "cql") == [("-4", "0", avg("10.0")), ("0", "4", avg("25.0")),
                                                ("4", "8", avg("40.0"))]
    r = cli("run", q, "--stream", s, "--window-t0", "never")
    assert r.returncode == 2 and "--window-t0" in r.stderr
