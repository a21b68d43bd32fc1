"""Aggregates kept per pane (prolog/stream_panes.pl), on generated streams
and queries: against the brute-force reference (numeric values, which
rdflib aggregates), and against the engine's own re-scanning evaluation of
the same query (any values, SUM/AVG errors, RDFS sub-properties, background
triples that also match the window's pattern)."""
from __future__ import annotations

import random
import warnings
from decimal import Decimal
from fractions import Fraction

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import RDFS

from dialect_cases import EX, NODES, PREFIX, S1, S2, answers_key
from dialect_reference import BACKGROUND, RefQuery, RefWindow, Row, evaluate
from epsparql import Engine

V, W, P = URIRef(EX + "v"), URIRef(EX + "w"), URIRef(EX + "p")


def value(rnd: random.Random, numeric_only: bool):
    k = rnd.random()
    if k < 0.45:
        return Literal(rnd.randint(-2, 5))
    if k < 0.65:
        return Literal(Decimal(rnd.choice(["0.5", "1.25", "-2.0", "3.5"])))
    if k < 0.85 or numeric_only:
        return Literal(rnd.choice([0.5, 2.5, -1.0, 4.0]))      # doubles, exact sums
    return rnd.choice([Literal("x"), Literal("7"), rnd.choice(NODES)])


def agg_stream(rnd: random.Random, n: int, numeric_only: bool) -> list[Row]:
    """Rows with few distinct triples (so that triples recur and move
    between panes), nondecreasing times with steps of 0, 1/4, 1/2, 1, 2."""
    t = Fraction(rnd.choice([0, 1]))
    rows = []
    for _ in range(n):
        t += rnd.choice([0, 0, Fraction(1, 4), Fraction(1, 2), 1, 1, 2])
        pred = rnd.choice([V, V, V, W, P])
        o = rnd.choice(NODES) if pred == P else value(rnd, numeric_only)
        tau = int(t) if t.denominator == 1 else float(t)
        rows.append(Row(rnd.choice([S1, S1, S1, S2]), rnd.choice(NODES[:3]), pred, o, tau))
    return rows


def pane_query(rnd: random.Random, numeric_only: bool) -> tuple[str, RefQuery]:
    """A C-SPARQL aggregate query the pane path takes, and its neutral form."""
    a, b = rnd.choice([(1, 1), (2, 1), (3, 1), (5, 2), (4, 2), (3, 3), (2, 3), (Fraction(3, 2),
                                                                                Fraction(1, 2))])
    wtext = (f"[RANGE {a}s STEP {b}s]" if Fraction(a).denominator == 1 else
             f"[RANGE {int(a * 1000)}ms STEP {int(b * 1000)}ms]")
    body = rnd.choice(["?x ex:v ?v", "?x ex:v ?v FILTER (?v > 0)", "?x ?pr ?v",
                       "?x ex:v ?v FILTER (isNumeric(?v))"])
    if numeric_only and body == "?x ?pr ?v":
        body = "?x ex:v ?v"
    aggs = ["(COUNT(*) AS ?n)"] + rnd.sample(
        ["(COUNT(?v) AS ?c)", "(SUM(?v) AS ?s)", "(AVG(?v) AS ?a)", "(MIN(?v) AS ?lo)",
         "(MAX(?v) AS ?hi)"], rnd.randint(1, 3))
    if not numeric_only and "isNumeric" not in body:
        aggs = [x for x in aggs if "MIN" not in x and "MAX" not in x] or aggs[:1]
    grouped = rnd.random() < 0.7
    group_expr = rnd.random() < 0.2
    if grouped and group_expr:
        select, mods = "?k " + " ".join(aggs), "GROUP BY (STR(?x) AS ?k)"
    elif grouped:
        select, mods = "?x " + " ".join(aggs), "GROUP BY ?x"
    else:
        select, mods = " ".join(aggs), ""
    if grouped and rnd.random() < 0.3:
        mods += " HAVING (COUNT(*) > 1)"
    if grouped and rnd.random() < 0.2:
        mods += " ORDER BY DESC(?n) ?" + ("k" if group_expr else "x") + " LIMIT 2"
    text = (f"REGISTER QUERY agg AS\n{PREFIX}SELECT {select}\nFROM STREAM <{S1}> {wtext}\n"
            f"WHERE {{ {body} }}\n{mods}")
    ref = f"{PREFIX}SELECT {select}\nWHERE {{ {body} }}\n{mods}"
    # C-SPARQL's engine reading: closed-open windows from t0 = 0
    win = RefWindow(S1, "range", Fraction(a), Fraction(b), default=True, t0=Fraction(0),
                    from_t0=True)
    return text, RefQuery([win], ref, ("close", True), "rstream")


def run(text, rows, bg, *, incremental, reasoning="none"):
    with Engine(reasoning=reasoning, incremental_windows=incremental) as eng:
        for g, triples in bg.items():
            eng.add_background(triples, graph=g)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = eng.register(text)
        assert q.incremental == incremental
        eng.push_many((r.s, r.p, r.o, r.tau, None, r.stream) for r in rows)
        eng.flush()
        assert eng.errors == []
        return [(a.start, a.end, a.bindings) for a in q.results()]


@pytest.mark.parametrize("seed", range(70))
def test_panes_match_reference(seed):
    rnd = random.Random(7000 + seed)
    rows = agg_stream(rnd, rnd.randint(0, 30), numeric_only=True)
    text, ref = pane_query(rnd, numeric_only=True)
    expected = evaluate(ref, rows, {})
    got = run(text, rows, {}, incremental=True)
    assert answers_key(got) == answers_key(expected), (text, rows)


def exact_key(answers):
    """Answers with their exact terms (datatypes and lexical forms), as a
    bag per instant: both paths must build the very same literals."""
    out: dict = {}
    for start, end, b in answers:
        bag = out.setdefault(Fraction(end), [])
        bag.append((Fraction(start), tuple(sorted((k, v.n3()) for k, v in b.items()))))
    return {k: sorted(v) for k, v in out.items()}


@pytest.mark.parametrize("seed", range(70))
def test_panes_match_rescanning(seed):
    rnd = random.Random(8000 + seed)
    rows = agg_stream(rnd, rnd.randint(0, 40), numeric_only=False)
    text, _ = pane_query(rnd, numeric_only=False)
    reasoning = rnd.choice(["none", "rdfs"])
    bg = {BACKGROUND: [(W, RDFS.subPropertyOf, V)] +
          [(rnd.choice(NODES), V, value(rnd, False)) for _ in range(rnd.randint(0, 3))]}
    got = run(text, rows, bg, incremental=True, reasoning=reasoning)
    expected = run(text, rows, bg, incremental=False, reasoning=reasoning)
    assert exact_key(got) == exact_key(expected), (text, reasoning, bg, rows)


def test_integer_sums_turn_full_and_back():
    """A group's SUM/AVG is kept small while its values are all integers,
    in full once a decimal, a double or a non-number joins it, and small
    again once those left the window: at every instant the same answers
    as the reference and as re-scanning, literals and all."""
    def lit(k: int, i: int):
        return (Literal(Decimal("0.5")) if k == 1 else Literal(2.5) if k == 2 else
                Literal("x") if k == 3 else Literal(i))

    rows = []
    for t in range(12):                   # two keys; the odd values come at t = 2, 5, 8 only
        for i, s in enumerate((URIRef(EX + "a"), URIRef(EX + "b"))):
            k = (t // 3) % 4 if t % 3 == 2 and i == 0 else 0
            rows.append(Row(S1, s, V, lit(k, t * 3 + i), t))
    agg = "(SUM(?v) AS ?s) (AVG(?v) AS ?a) (COUNT(?v) AS ?c)"
    text = (f"REGISTER QUERY agg AS\n{PREFIX}SELECT ?x {agg}\nFROM STREAM <{S1}> "
            f"[RANGE 2s STEP 1s]\nWHERE {{ ?x ex:v ?v }}\nGROUP BY ?x")
    got = run(text, rows, {}, incremental=True)
    assert exact_key(got) == exact_key(run(text, rows, {}, incremental=False))
    numeric = [r for r in rows if r.o != Literal("x")]
    ntext = text.replace("?x ex:v ?v", "?x ex:v ?v FILTER (isNumeric(?v))")
    ref = RefQuery([RefWindow(S1, "range", Fraction(2), Fraction(1), default=True,
                              t0=Fraction(0), from_t0=True)],
                   f"{PREFIX}SELECT ?x {agg}\nWHERE {{ ?x ex:v ?v FILTER (isNumeric(?v)) }}\n"
                   "GROUP BY ?x", ("close", True), "rstream")
    assert answers_key(run(ntext, numeric, {}, incremental=True)) == \
        answers_key(evaluate(ref, numeric, {}))
    # key a's window [9, 11) after the decimal at 8 left: integers only again
    last = [b for _, end, b in got if end == 11 and b["x"] == URIRef(EX + "a")]
    assert [(b["s"], b["a"]) for b in last] == [(Literal(27 + 30), Literal(Decimal("28.5")))]


def test_pane_path_is_taken_only_where_it_applies():
    cases = {
        "SELECT ?x (AVG(?v) AS ?a) FROM STREAM <%s> [RANGE 10s STEP 1s] WHERE { ?x ex:v ?v } GROUP BY ?x": True,
        "SELECT (COUNT(*) AS ?n) FROM STREAM <%s> [RANGE 1s TUMBLING] WHERE { ?x ?p ?v }": True,
        # DISTINCT aggregate, two patterns, a count window, no aggregate: read per instant
        "SELECT (COUNT(DISTINCT ?v) AS ?n) FROM STREAM <%s> [RANGE 1s TUMBLING] WHERE { ?x ?p ?v }": False,
        "SELECT (COUNT(*) AS ?n) FROM STREAM <%s> [RANGE 1s TUMBLING] WHERE { ?x ?p ?v . ?v ?q ?z }": False,
        "SELECT (COUNT(*) AS ?n) FROM STREAM <%s> [TRIPLES 5] WHERE { ?x ?p ?v }": False,
        "SELECT ?x FROM STREAM <%s> [RANGE 1s TUMBLING] WHERE { ?x ?p ?v }": False,
        "SELECT (MAX(?v) AS ?m) FROM STREAM <%s> [RANGE 2s STEP 1s] WHERE { ?x ?p ?v FILTER (?v < NOW()) }": False,
    }
    with Engine() as eng:
        for text, incremental in cases.items():
            q = eng.register("REGISTER QUERY q%d AS %sSELECT" % (len(eng.queries), PREFIX) +
                             (text % S1)[len("SELECT"):])
            assert q.incremental == incremental, text


def test_pane_memory_is_bounded_by_the_window():
    text = (f"REGISTER QUERY agg AS {PREFIX}SELECT ?x (AVG(?v) AS ?a) FROM STREAM <{S1}> "
            f"[RANGE 10s STEP 1s] WHERE {{ ?x ex:v ?v }} GROUP BY ?x")
    with Engine() as eng:
        q = eng.register(text)
        assert q.incremental
        sizes, answers = [], 0
        for block in range(5):
            rows = [(URIRef(EX + f"k{i % 7}"), V, Literal(block * 5000 + i),
                     (block * 5000 + i) / 100, None, S1) for i in range(5000)]
            eng.push_many(rows)
            sizes.append(eng.window_stats()["content"])
            answers += len(q.results())
        eng.flush()
        # the closes 10 ... 259 of the windows [c - 10, c) opened by 249.99,
        # with the 7 keys each
        assert answers + len(q.results()) == 250 * 7
        # 100 rows a second, a 10 s window: about 1,000 matches whatever the length
        assert max(sizes) <= 1100 and sizes[-1] == sizes[1]
