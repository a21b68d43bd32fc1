"""The SECRET parameters of every dialect (issue 23): scope (t0, from the
first event too), content boundaries, report policy, tick.

For each dialect and a grid of parameter settings, seeded generated
streams (integer and decimal sub-second times) are run through the engine
and through tests/dialects/secret_reference.py, an evaluator of the
SECRET model that shares no code with it; the answers must be the same.
Then the roads the parameters come by: arguments, ``#pragma window``
(with line and column in its errors), the command line, and ``explain``.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from fractions import Fraction

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.language.errors import QueryError, QuerySyntaxError

from secret_reference import Params, evaluate

S = "http://ex.org/s"
P = "http://ex.org/p"
SUBJECTS = [URIRef(f"http://ex.org/{x}") for x in "abcd"]
OBJECTS = [URIRef(f"http://ex.org/o{i}") for i in (1, 2)]
PREDICATES = [URIRef(P), URIRef("http://ex.org/q")]


def _ms(x: Fraction) -> str:
    return str(int(x * 1000))


def _pt(x: Fraction) -> str:
    return f"PT{float(x):g}S"


def _proj(form: str) -> str:
    return {"count": "(COUNT(*) AS ?n)", "select": "?s ?o", "subjects": "?s"}[form]


#: the answer forms a case rotates through (``subjects``: SELECT ?s, a
#: subject once per object, so ISTREAM on bags and on sets differ)
FORMS = ("count", "select", "subjects")


#: each dialect's query over one window of width w and step b
TEXTS = {
    "csparql": lambda w, b, f: (f"REGISTER QUERY q AS SELECT {_proj(f)} FROM STREAM <{S}> "
                                f"[RANGE {_ms(w)}ms STEP {_ms(b)}ms] WHERE {{ ?s <{P}> ?o }}"),
    "rspql": lambda w, b, f: (f"REGISTER RSTREAM <http://ex.org/out> AS SELECT {_proj(f)} "
                              f"FROM NAMED WINDOW <http://ex.org/w> ON <{S}> [RANGE {_pt(w)} "
                              f"STEP {_pt(b)}] WHERE {{ WINDOW <http://ex.org/w> {{ ?s <{P}> ?o }} }}"),
    "cqels": lambda w, b, f: (f"SELECT {_proj(f)} WHERE {{ STREAM <{S}> [RANGE {_ms(w)}ms "
                              f"SLIDE {_ms(b)}ms] {{ ?s <{P}> ?o }} }}"),
    "sparqlstream": lambda w, b, f: (f"SELECT RSTREAM {_proj(f)} FROM STREAM <{S}> [FROM NOW - "
                                     f"{_ms(w)} MILLISECONDS TO NOW STEP {_ms(b)} MILLISECONDS] "
                                     f"WHERE {{ ?s <{P}> ?o }}"),
    "streaming-sparql": lambda w, b, f: (f"SELECT {_proj(f)} FROM STREAM <{S}> WINDOW RANGE "
                                         f"{_ms(w)} MS SLIDE {_ms(b)} MS WHERE {{ ?s <{P}> ?o }}"),
}


def defaults(dialect: str, w: Fraction, b: Fraction, semantics: str = "engine") -> Params:
    """Each dialect's parameters, as docs/DIALECTS.md's table gives them
    (written here by hand, not read from the engine)."""
    grid_t0 = (-w) % b                      # the CQL grid: windows close on multiples of b
    if semantics == "csrbench":
        # CSRBench's oracle: the engine reading, relations as sets for the
        # three dialects it configures; CQELS on content change over the
        # earliest window still open at each arrival, from t0 = 0, cut there
        # (cqels.properties: contentchange, nonemptycontent; firstt0 = 0)
        if dialect == "cqels":
            return Params(w, b, t0=0, from_t0=True, content="co", report="change",
                          non_empty=True, earliest=True, r2s="istream", relation="set")
        p = defaults(dialect, w, b, "engine")
        return replace(p, relation="set") if dialect in ("csparql", "sparqlstream") else p
    if semantics == "engine" and dialect == "csparql":
        return Params(w, b, t0=0, from_t0=True, content="co", non_empty=True)
    if semantics == "engine" and dialect == "rspql":
        return Params(w, b, t0=0, content="co")
    if semantics == "engine" and dialect == "sparqlstream":
        return Params(w, b, t0=0, content="co", non_empty=True)
    base = Params(w, b, t0=grid_t0, non_empty=dialect == "csparql")
    if dialect == "cqels":
        return replace(base, report="change", sliding=semantics == "engine", r2s="istream")
    return base


def settings(rng: random.Random, dialect: str, decimal: bool) -> list[tuple[dict, dict]]:
    """(engine arguments, what they change in the reference's Params)."""
    t0 = Fraction(rng.choice([3, 7, 13]), 10) if decimal else Fraction(rng.choice([-3, 1, 2]))
    d = Fraction(rng.choice([4, 5]), 10) if decimal else Fraction(rng.choice([2, 3]))
    base = defaults(dialect, Fraction(1), Fraction(1))
    flip = "oc" if base.content == "co" else "co"
    out = [({}, {}),
           ({"window_t0": "first"}, {"t0": "first"}),
           ({"window_t0": t0}, {"t0": t0}),
           ({"window_report": "close"}, {"report": "close", "non_empty": False, "sliding": False}),
           ({"window_report": "close,non-empty"}, {"report": "close", "non_empty": True,
                                                   "sliding": False}),
           ({"window_report": f"periodic({float(d):g}s)"},
            {"report": "periodic", "period": d, "non_empty": False, "sliding": False}),
           ({"window_report": f"periodic({float(d):g}s),non-empty"},
            {"report": "periodic", "period": d, "non_empty": True, "sliding": False}),
           ({"window_report": "change"}, {"report": "change", "non_empty": False,
                                          "sliding": True}),
           ({"window_report": "change", "window_tick": "tuple"},
            {"report": "change", "non_empty": False, "sliding": True, "tick": "tuple"}),
           ({"window_semantics": "cql", "window_report": "change", "window_tick": "tuple"},
            {"semantics": "cql", "report": "change", "non_empty": False, "tick": "tuple"}),
           ({"window_semantics": "cql"}, {"semantics": "cql"}),
           # the CQL grid's origin (each window closing on multiples of its
           # step) and its content: SPARQLstream's default before issue 23
           ({"window_t0": "grid", "window_content": "(o,c]", "window_report": "close"},
            {"t0": "grid", "content": "oc", "report": "close", "non_empty": False,
             "sliding": False})]
    # SELECT ?s: ISTREAM (CQELS) and RSTREAM rows on sets, not bags
    out.append(({"window_semantics": "csrbench"}, {"semantics": "csrbench", "form": "subjects"}))
    if dialect == "cqels":
        # the oracle's reading from another t0, from the first event, tuple-driven;
        # its window [o, t] in the engine reading (every k, the CQL grid's
        # origin or a t0); and csrbench with CQELS 1.x's (t - w, t]
        out += [({"window_semantics": "csrbench", "window_t0": t0},
                 {"semantics": "csrbench", "t0": t0}),
                ({"window_semantics": "csrbench", "window_t0": "first", "window_tick": "tuple"},
                 {"semantics": "csrbench", "t0": "first", "tick": "tuple"}),
                ({"window_content": "[o,c)"},
                 {"content": "co", "t0": "grid", "sliding": False, "earliest": True}),
                ({"window_content": "[o,c)", "window_t0": t0, "window_report": "change,non-empty"},
                 {"content": "co", "t0": t0, "sliding": False, "earliest": True,
                  "non_empty": True}),
                ({"window_semantics": "csrbench", "window_content": "(o,c]"},
                 {"semantics": "csrbench", "content": "oc", "sliding": True, "earliest": False})]
    if base.report != "change":
        out.append(({"window_content": "[o,c)" if flip == "co" else "(o,c]"}, {"content": flip}))
        out.append(({"window_t0": "first", "window_content": "[o,c)" if flip == "co" else "(o,c]",
                     "window_report": "close"},
                    {"t0": "first", "content": flip, "report": "close", "non_empty": False}))
    return out


def expected_params(dialect: str, w: Fraction, b: Fraction, change: dict) -> Params:
    semantics = change.get("semantics", "engine")
    p = defaults(dialect, w, b, semantics)
    if semantics == "cql" and dialect in ("csparql", "rspql"):
        p = replace(p, content="oc")
    fields = {k: v for k, v in change.items() if k != "semantics"}
    if fields.get("t0") == "grid":            # the CQL grid: every k, no t0
        fields["t0"], fields["from_t0"] = (-w) % b, False
    if "sliding" in fields:
        fields["sliding"] = fields["sliding"] and semantics in ("engine", "csrbench")
    if fields.get("report") == "change" and p.content == "co":
        fields.setdefault("content", "oc")  # a changed window holds its arrival: (t - w, t]
        fields.setdefault("earliest", False)
    return replace(p, **fields)


def stream(rng: random.Random, decimal: bool) -> list[tuple]:
    n = rng.randint(6, 12)
    if decimal:
        times = sorted(Fraction(rng.randint(0, 40), 10) for _ in range(n))
        times = [float(t) for t in times]
    else:
        times = sorted(rng.randint(0, 18) for _ in range(n))
    return [(rng.choice(SUBJECTS), rng.choice(PREDICATES), rng.choice(OBJECTS), t) for t in times]


def engine_answers(q, form: str) -> Counter:
    out: Counter = Counter()
    for a in q.results():
        if form == "count":
            value = int(a.bindings["n"])
        elif form == "subjects":
            value = str(a.bindings["s"])
        else:
            value = (str(a.bindings["s"]), str(a.bindings["o"]))
        out[(round(float(a.start), 9), round(float(a.end), 9), value)] += 1
    return out


def reference_answers(rows, p: Params, form: str) -> Counter:
    out: Counter = Counter()
    ref_rows = [(str(s), str(pr), str(o), t) for s, pr, o, t in rows]
    for start, end, value in evaluate(ref_rows, p, P, form):
        values = [value] if form == "count" else value
        for v in values:
            out[(round(float(start), 9), round(float(end), 9), v)] += 1
    return out


@pytest.mark.parametrize("dialect", sorted(TEXTS))
@pytest.mark.parametrize("seed", range(6))
def test_engine_equals_the_secret_reference(dialect, seed):
    rng = random.Random(f"{dialect}-{seed}")
    decimal = seed % 2 == 1
    if decimal:
        w, b = Fraction(rng.choice([5, 7, 12]), 10), Fraction(rng.choice([2, 3, 5, 9]), 10)
    else:
        w, b = Fraction(rng.choice([3, 4, 6])), Fraction(rng.choice([1, 2, 3, 5]))
    rows = stream(rng, decimal)
    cases = []
    with Engine() as eng:
        for i, (args, change) in enumerate(settings(rng, dialect, decimal)):
            change = dict(change)
            form = change.pop("form", FORMS[(i + seed) % len(FORMS)])
            q = eng.register(TEXTS[dialect](w, b, form), name=f"q{i}", **args)
            cases.append((q, form, args, expected_params(dialect, w, b, change)))
        eng.push_many([(s, p, o, t) for s, p, o, t in rows], stream=S)
        eng.flush()
        for q, form, args, params in cases:
            got, want = engine_answers(q, form), reference_answers(rows, params, form)
            assert got == want, (dialect, args, params, [(str(s)[-1], t) for s, _, _, t in rows
                                                         if str(_) == P])


def test_luposdate_report_and_tick():
    """LUPOSDATE's windows have no step (no scope, no content boundary):
    its report and tick are selectable, over (t - w, t]."""
    rng = random.Random("lupos")
    rows = stream(rng, True)
    text = (f"SELECT (COUNT(*) AS ?n) STREAM INTERMEDIATERESULT DURATION 500 WHERE {{ "
            f"WINDOW TYPE SLIDINGDURATION 1200 {{ ?s <{P}> ?o }} }}")
    w = Fraction(12, 10)
    grid = [({}, Params(w, None, report="periodic", period=Fraction(1, 2))),
            ({"window_report": "periodic(0.5s),non-empty"},
             Params(w, None, report="periodic", period=Fraction(1, 2), non_empty=True)),
            ({"window_report": "change"}, Params(w, None, report="change")),
            ({"window_report": "change", "window_tick": "tuple"},
             Params(w, None, report="change", tick="tuple"))]
    with Engine() as eng:
        qs = [eng.register(text, name=f"l{i}", **args) for i, (args, _) in enumerate(grid)]
        eng.push_many(rows, stream=S)
        eng.flush()
        for q, (args, params) in zip(qs, grid):
            assert engine_answers(q, "count") == reference_answers(rows, params, "count"), args


def test_luposdate_triples_report_can_be_replaced():
    text = (f"SELECT (COUNT(*) AS ?n) STREAM INTERMEDIATERESULT TRIPLES 2 WHERE {{ "
            f"WINDOW TYPE SLIDINGDURATION 1200 {{ ?s <{P}> ?o }} }}")
    with Engine() as eng:
        q = eng.register(text)
        assert (q.algebra.secret.report.text, q.algebra.secret.tick.text) == (
            "every 2 triples", "tuple-driven")
        q = eng.register(text, window_report="periodic(1s)")
        assert (q.algebra.policy.kind, q.algebra.tick) == ("period", "time")


def _run(text, rows, **kw):
    with Engine() as eng:
        q = eng.register(text, **kw)
        eng.push_many(rows, stream=S)
        eng.flush()
        return sorted(engine_answers(q, "count").elements()), q


ROWS = [(SUBJECTS[0], URIRef(P), OBJECTS[0], 1), (SUBJECTS[1], URIRef(P), OBJECTS[0], 2),
        (SUBJECTS[2], URIRef(P), OBJECTS[0], 9)]
CS = TEXTS["csparql"](Fraction(4), Fraction(4), "count")


def test_computed_every_reports_non_empty_content_only():
    """C-SPARQL's COMPUTED EVERY: its policy says non-empty content, so an
    instant whose windows are empty reports nothing (not COUNT = 0)."""
    text = CS.replace("REGISTER QUERY q AS", "REGISTER QUERY q COMPUTED EVERY 2s AS")
    got, q = _run(text, ROWS)
    assert got == [(0, 4, 2), (0, 6, 2)]
    assert q.algebra.policy.kind == "period" and q.algebra.policy.non_empty
    got, _ = _run(text, ROWS, window_report="periodic(2s)")          # empty windows asked for
    assert (0, 2, 0) in got and (4, 8, 0) in got


def test_pragma_sets_parameters_and_arguments_win():
    text = "#pragma window t0=first report=close content=(o,c]\n" + CS
    got, q = _run(text, ROWS)
    # windows (1, 5], (5, 9]: the first event (at t0) is in none, c@9 in the second
    assert got == [(1, 5, 1), (5, 9, 1)]
    sec = q.algebra.secret
    assert (sec.t0.source, sec.content.source, sec.report.source, sec.tick.source) == (
        "pragma, line 1", "pragma, line 1", "pragma, line 1", "default of C-SPARQL")
    got, q = _run(text, ROWS, window_t0=0, window_content="[o,c)")   # an argument wins
    assert got == [(0, 4, 2), (4, 8, 0), (8, 12, 1)]
    assert q.algebra.secret.t0.source == "argument"
    # a pragma in a comment later in the query, and not inside a string or IRI
    text2 = CS.replace("WHERE", "# pragma window t0=2\nWHERE")
    assert _run(text2, ROWS)[1].algebra.t0 == 2
    text3 = CS.replace("?o }", '?o FILTER(STR(?o) != "#pragma window t0=x") }')
    assert _run(text3, ROWS)[1].algebra.secret.t0.source == "default of C-SPARQL"


@pytest.mark.parametrize("pragma, message, column", [
    ("#pragma window t0=soon", "window t0 must be a number of seconds, 'first' or 'grid'", 19),
    ("#pragma window report=sometimes", "unknown report policy 'sometimes'", 23),
    ("#pragma window report=close,change", "a report policy is one of close, change", 23),
    ("#pragma window  tick=batch", "a batch-driven tick is not implemented", 22),
    ("#pragma window content=[o,c]", "unknown window content", 24),
    ("#pragma window size=3", "expected key=value in the window pragma", 16),
    ("#pragma windows t0=1", "a pragma is '#pragma window key=value ...'", 9),
    ("#pragma window t0=1 t0=2", "sets t0 twice (first at line 2, column 16)", 21),
    ("#pragma window semantics=oracle", "window semantics must be one of engine, cql, csrbench",
     26),
])
def test_pragma_errors_name_line_and_column(pragma, message, column):
    with Engine() as eng, pytest.raises(QuerySyntaxError) as e:
        eng.register("# a query\n" + pragma + "\n" + CS)
    assert message in str(e.value) and (e.value.line, e.value.column) == (2, column), str(e.value)


def test_combinations_that_make_no_sense():
    cq = TEXTS["cqels"](Fraction(4), Fraction(2), "count")
    with Engine() as eng:
        # [o,c) on change is the earliest open window cut at each arrival:
        # the engine readings have it, the cql one (latest step) does not
        with pytest.raises(ValueError, match="not in the cql one"):
            eng.register(cq, window_semantics="cql", window_content="[o,c)")
        with pytest.raises(QueryError, match="not in the cql one") as e:
            eng.register("#pragma window semantics=cql content=[o,c)\n" + cq)
        assert (e.value.line, e.value.column) == (1, 30)
        with pytest.raises(QueryError, match="tuple-driven tick") as e:
            eng.register("#pragma window tick=tuple\n" + CS)
        assert (e.value.line, e.value.column) == (1, 16)
        with pytest.raises(ValueError, match="periodic needs its period"):
            eng.register(CS, window_report="periodic")
        with pytest.raises(ValueError, match="non-empty"):
            Engine(window_report="non-empty")


def test_tuple_tick_evaluates_after_each_event():
    rows = [(SUBJECTS[0], URIRef(P), OBJECTS[0], 1), (SUBJECTS[1], URIRef(P), OBJECTS[0], 1),
            (SUBJECTS[2], URIRef(P), OBJECTS[0], 3)]
    cq = TEXTS["cqels"](Fraction(4), Fraction(2), "count")
    assert _run(cq, rows)[0] == [(-3, 1, 2), (-1, 3, 3)]             # time-driven: ties together
    assert _run(cq, rows, window_tick="tuple")[0] == [(-3, 1, 1), (-3, 1, 2), (-1, 3, 3)]


def test_first_t0_survives_a_snapshot():
    text = "#pragma window t0=first\n" + CS
    rows = [(SUBJECTS[0], URIRef(P), OBJECTS[0], 1.5), (SUBJECTS[1], URIRef(P), OBJECTS[0], 2)]
    with Engine() as a:
        a.register(text)
        a.push_many(rows, stream=S)
        state = a.snapshot()
    with Engine() as b:
        q = b.register(text)
        b.restore(state)
        b.push(SUBJECTS[2], URIRef(P), OBJECTS[0], 6.5, stream=S)
        b.flush()
        # windows [1.5, 5.5), [5.5, 9.5): the restored engine keeps t0 = 1.5
        assert sorted(engine_answers(q, "count").elements()) == [(1.5, 5.5, 2), (5.5, 9.5, 1)]


def test_command_line_and_explain(tmp_path, capsys):
    from epsparql.cli.main import main
    qf = tmp_path / "q.rq"
    qf.write_text("#pragma window report=close\n" + CS + "\n")
    sf = tmp_path / "s.nqt"
    sf.write_text("".join(f"<{s}> <{p}> <{o}> <{S}> {t} ." + "\n" for s, p, o, t in ROWS))
    assert main(["run", str(qf), "--stream", str(sf), "--window-t0", "first",
                 "--window-content", "(o,c]", "--output-format", "jsonl"]) == 0
    out = capsys.readouterr().out
    assert out.count('"n"') == 2 and '"start": 1' in out, out
    assert main(["explain", str(qf), "--window-tick", "time",
                 "--window-report", "close,non-empty"]) == 0
    out = capsys.readouterr().out
    for line in ("SECRET scope     t0 = 0s; windows from t0 on (k >= 0)  [default of C-SPARQL]",
                 "SECRET content   [o,c)  [default of C-SPARQL]",
                 "SECRET report    close,non-empty  [argument]",
                 "SECRET tick      time-driven  [argument]"):
        assert line in out, out
    assert main(["check", str(qf), "--window-t0", "first"]) == 0
    assert capsys.readouterr().out == f"{qf}: ok (csparql: SELECT ?n; window t0=first report=close)\n"
    with pytest.raises(SystemExit) as e:
        main(["check", str(qf), "--window-report", "periodic"])
    assert e.value.code == 2 and "periodic needs its period" in capsys.readouterr().err


def test_explain_shows_sparqlstream_s_defaults_and_the_previous_reading(capsys):
    """SPARQLstream's defaults are morph-streams' as CSRBench's oracle
    configures them; ``t0=grid`` with ``(o,c]`` and ``close`` is the reading
    before issue 23 (the CQL grid), from the command line too."""
    from pathlib import Path
    from epsparql.cli.main import main
    qf = Path(__file__).resolve().parents[2] / "examples" / "csrbench" / "sparqlstream" / "q4.rq"
    assert main(["explain", str(qf)]) == 0
    out = capsys.readouterr().out
    for line in ("SECRET scope     t0 = 0s; windows for every k (one may open before t0)  "
                 "[default of SPARQLstream]",
                 "SECRET content   [o,c)  [default of SPARQLstream]",
                 "SECRET report    close,non-empty  [default of SPARQLstream]",
                 "SECRET tick      time-driven  [default of SPARQLstream]"):
        assert line in out, out
    previous = ["--window-t0", "grid", "--window-content", "(o,c]", "--window-report", "close"]
    assert main(["explain", str(qf), *previous]) == 0
    out = capsys.readouterr().out
    for line in ("SECRET scope     t0 = closes on multiples of the step; windows for every k",
                 "SECRET content   (o,c]  [argument]", "SECRET report    close  [argument]",
                 "instants t = k·4s (the first at or after the first arrival), holds the "
                 "triples with t − 4s < τ ≤ t"):
        assert line in out, out
    assert main(["check", str(qf), *previous]) == 0
    assert capsys.readouterr().out.endswith("window t0=grid content=(o,c] report=close)\n")


def test_first_t0_is_not_partitioned():
    """Each Spark group would find its own first event: one group runs it."""
    from epsparql.algebra.partition import NO_SCHEMA
    text = (f"REGISTER QUERY q AS SELECT ?s (COUNT(*) AS ?n) FROM STREAM <{S}> [RANGE 4s STEP 2s] "
            f"WHERE {{ ?s <{P}> ?o }} GROUP BY ?s")
    with Engine() as eng:
        eng.register(text, name="keyed")
        eng.register(text, name="first", window_t0="first")
        plans = {k.query: k for k in eng.partitioning(NO_SCHEMA).queries}
    assert plans["keyed"].variable == "s"
    assert plans["first"].variable is None and "t0 = first" in plans["first"].reason


def test_a_pragma_on_an_ep_sparql_query_is_warned_about():
    from epsparql.language.errors import QueryWarning
    with Engine() as eng, pytest.warns(QueryWarning, match="line 2, column 1: a '#pragma window'"):
        eng.register("PREFIX ex: <http://ex.org/>\n#pragma window t0=first\n"
                     "SELECT ?x WHERE { ?x ex:p ?y }")


def test_csrbench_relations_are_sets_on_dense_streams():
    """``semantics=csrbench``: CQELS's ISTREAM is the oracle's set
    difference (a subject seen again with another object is not new) and
    C-SPARQL's RSTREAM has no repeats, on streams dense enough that bags
    and sets differ (checked: the reference on bags answers otherwise)."""
    differs = 0
    for seed in range(4):
        rng = random.Random(f"dense-{seed}")
        w, b = Fraction(rng.choice([3, 4, 6])), Fraction(rng.choice([1, 2, 3]))
        rows = sorted(((rng.choice(SUBJECTS[:2]), URIRef(P), rng.choice(OBJECTS),
                        rng.randint(0, 15)) for _ in range(14)), key=lambda r: r[3])
        cases = [("cqels", {}), ("cqels", {"window_t0": 1}), ("csparql", {})]
        with Engine() as eng:
            qs = [eng.register(TEXTS[d](w, b, "subjects"), name=f"d{i}",
                               window_semantics="csrbench", **args)
                  for i, (d, args) in enumerate(cases)]
            eng.push_many(rows, stream=S)
            eng.flush()
        for q, (d, args) in zip(qs, cases):
            p = replace(defaults(d, w, b, "csrbench"),
                        **({"t0": Fraction(args["window_t0"])} if args else {}))
            want = reference_answers(rows, p, "subjects")
            assert engine_answers(q, "subjects") == want, (d, args, seed)
            differs += want != reference_answers(rows, replace(p, relation="bag"), "subjects")
    assert differs >= 4


def test_csrbench_reading_by_pragma_explain_and_trace(capsys, tmp_path):
    """``#pragma window semantics=csrbench`` on a CQELS query: explain
    prints the oracle's parameters, each from its reading, and the window
    tracer shows the content at an arrival t as [o, t] (the issue's
    example: a@1, b@3, c@12 in [RANGE 10s SLIDE 10s]: at 12, [10, 12])."""
    from epsparql.cli.main import main
    from epsparql.explain.window_trace import window_bounds, window_members
    text = ("#pragma window semantics=csrbench\n"
            + TEXTS["cqels"](Fraction(10), Fraction(10), "count"))
    qf = tmp_path / "q.rq"
    qf.write_text(text)
    assert main(["explain", str(qf)]) == 0
    out = capsys.readouterr().out
    src = "[default of CQELS-QL in CSRBench's oracle]"
    for line in (("window semantics: csrbench (each dialect as CSRBench's oracle reads it)  "
                  "[pragma, line 1]"),
                 f"SECRET scope     t0 = 0s; windows from t0 on (k >= 0)  {src}",
                 ("SECRET content   [o,c): at an arrival t, the earliest window still open, "
                  f"[o, t]  {src}"),
                 f"SECRET report    change,non-empty  {src}",
                 f"SECRET tick      time-driven  {src}",
                 ("SECRET relations sets: an evaluation's rows without repeats, ISTREAM and "
                  f"DSTREAM set differences  {src}"),
                 "t0 + k·10s ≤ τ ≤ t (a set)"):
        assert line in out, out
    got, q = _run(text, ROWS + [(SUBJECTS[3], URIRef(P), OBJECTS[0], 12)])
    assert got == [(0, 1, 1), (0, 2, 2), (0, 9, 3), (10, 12, 1)]   # the oracle counts 1 at 12
    rows = [(s, p, o, t, t, S) for s, p, o, t in ROWS + [(SUBJECTS[3], URIRef(P), OBJECTS[0], 12)]]
    w = q.algebra.windows[0]
    assert window_bounds(w, 12, q.algebra) == ("closed", 10, 12)
    assert window_members(w, 12, rows, q.algebra) == [3]
    assert window_bounds(w, 9, q.algebra) == ("closed", 0, 9)


def test_csrbench_first_t0_survives_a_snapshot():
    """The oracle's CQELS window from t0 = first: the restored engine keeps
    t0 = 1.5 (windows [1.5, 5.5), [5.5, 9.5), each cut at the arrival)."""
    text = ("#pragma window semantics=csrbench t0=first\n"
            + TEXTS["cqels"](Fraction(4), Fraction(4), "count"))
    rows = [(SUBJECTS[i], URIRef(P), OBJECTS[0], t) for i, t in enumerate([1.5, 3, 5, 6])]
    with Engine() as a:
        qa = a.register(text, name="q")
        a.push_many(rows[:2], stream=S)
        state = a.snapshot()
        before = sorted(engine_answers(qa, "count").elements())
    with Engine() as b:
        qb = b.register(text, name="q")
        b.restore(state)
        b.push_many(rows[2:], stream=S)
        b.flush()
        after = sorted(engine_answers(qb, "count").elements())
    assert before + after == [(1.5, 1.5, 1), (1.5, 3, 2), (1.5, 5, 3), (5.5, 6, 1)]
