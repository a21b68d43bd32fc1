"""Long and deep queries (issue 17, finding 8).

A UNION of 500 alternatives stopped ``check`` and ``run`` with "internal
error: RecursionError".  Now long chains of UNION, SEQ, EQUALS, joins,
OPTIONAL, OPTIONALSEQ, EQUALSOPTIONAL, FILTER conjunctions and
disjunctions are handled without Python's recursion limit at any stage
(parse, translate, passes, partitioning, compile, the Prolog core), and
what the engine cannot take is a QueryError naming the limit: nesting
deeper than MAX_NESTING (with line and column), an expression deeper than
MAX_EXPR_DEPTH, a rule step with more than MAX_VARIABLES variables, a rule
deeper than MAX_TERM_DEPTH.  Long associative chains are balanced: their
answers are checked against the reference evaluator of section 4.2.
"""
from __future__ import annotations

import random
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Literal, URIRef

import sparql_reference as R
from epsparql import Engine
from epsparql.algebra import optimise, translate
from epsparql.algebra.partition import key_plan
from epsparql.language import QueryError, parse_query
from epsparql.language.parser import MAX_NESTING
from epsparql.rdf import encode
from epsparql.rules import compile_query
from epsparql.rules.from_algebra import MAX_EXPR_DEPTH, MAX_TERM_DEPTH, MAX_VARIABLES

from cli.test_cli import cli  # tests/cli/

EX = "http://ex/"


def p(i: int) -> str:
    return f"<{EX}p{i}>"


def chain(kind: str, n: int, var: str = "?y") -> str:
    """A SELECT whose WHERE is a chain of ``n`` operands of one kind."""
    if kind == "UNION":
        return "SELECT ?x ?y WHERE { " + " UNION ".join(f"{{ ?x {p(i)} ?y }}" for i in range(n)) + " }"
    if kind in ("SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"):
        return "SELECT ?x WHERE " + f" {kind} ".join(f"{{ ?x {p(i)} {var} }}" for i in range(n))
    if kind == "join":
        return "SELECT ?x WHERE { " + " ".join(f"{{ ?x {p(i)} {var} }}" for i in range(n)) + " }"
    if kind == "OPTIONAL":
        return (f"SELECT ?x WHERE {{ ?x <{EX}q> ?z "
                + " ".join(f"OPTIONAL {{ ?x {p(i)} {var} }}" for i in range(n)) + " }")
    if kind == "&&":
        return (f"SELECT ?x WHERE {{ ?x {p(0)} ?y FILTER("
                + " && ".join(f"?y != {i + 1}" for i in range(n)) + ") }")
    if kind == "||":
        return (f"SELECT ?x WHERE {{ ?x {p(0)} ?y FILTER("
                + " || ".join(f"?y = {i}" for i in range(n)) + ") }")
    if kind == "FILTERs":
        return (f"SELECT ?x WHERE {{ ?x {p(0)} ?y "
                + " ".join(f"FILTER(?y != {i + 1})" for i in range(n)) + " }")
    raise ValueError(kind)


def python_stages(text: str, reasoning: str = "none"):
    """Parse, translate, optimise, partition and compile, no Prolog."""
    alg = translate(parse_query(text))
    alg = type(alg)(**{**alg.__dict__, "pattern": optimise(alg.pattern)})
    key_plan(alg)
    return compile_query(alg, 1, encode=encode, module="m", reasoning=reasoning)


def register_and_run(text: str, rows, reasoning: str = "none") -> list:
    engine = Engine(reasoning=reasoning)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = engine.register(text)
        engine.push_many(rows)
        engine.flush()
        assert engine.errors == []
        return q.results()
    finally:
        engine.close()


S = URIRef(EX + "s")


def rows(n: int, *, at=lambda i: i, obj=lambda i: Literal(0)):
    return [(S, URIRef(f"{EX}p{i}"), obj(i), at(i)) for i in range(n)]


# ---------------------------------------------------------------------------
# through the command line, where the defect was found

@pytest.mark.parametrize("n", [1200])          # the 500 is a shorter case of the same
def test_a_long_union_checks_and_runs(tmp_path, n):
    q = tmp_path / "union.rq"
    q.write_text(chain("UNION", n) + "\n")
    stream = tmp_path / "s.nt"
    stream.write_text("".join(f"<{EX}s> <{EX}p{i}> \"{i}\"^^<http://www.w3.org/2001/"
                              f"XMLSchema#integer> {i} .\n" for i in range(0, n, 7)))
    r = cli("check", q)
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr and f"{q}: ok" in r.stdout
    r = cli("run", q, "--stream", stream, "--output-format", "jsonl")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == len(range(0, n, 7))   # one answer per triple


def test_too_deep_nesting_is_one_line_with_position_and_limit(tmp_path):
    q = tmp_path / "deep.rq"
    q.write_text("SELECT * WHERE " + "{ " * 3000 + "?s ?p ?o" + " }" * 3000 + "\n")
    r = cli("check", q)
    assert r.returncode == 2
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{q}:1:") and f"more than {MAX_NESTING:,} levels deep, the limit" in first
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------
# every stage, every chain: no recursion limit

@pytest.fixture
def recursion_limit():
    """Python's default recursion limit for the test (a library loaded by
    a test run earlier in the same process may have raised it)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)


@pytest.fixture
def low_recursion_limit():
    """Half Python's default recursion limit for the test: a chain past it
    shows what one past the default shows, at half the length (and a
    fraction of the time)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(500)
    yield
    sys.setrecursionlimit(old)


@pytest.mark.parametrize("kind", ["UNION", "SEQ", "EQUALS", "join", "OPTIONAL", "OPTIONALSEQ",
                                  "EQUALSOPTIONAL", "&&", "||", "FILTERs"])
def test_python_stages_take_chains_five_times_the_recursion_limit(kind, low_recursion_limit):
    """Far beyond Python's recursion limit: each stage is iterative."""
    assert sys.getrecursionlimit() <= 500
    try:
        python_stages(chain(kind, 2500))
    except QueryError as err:           # only the engine's documented limits
        assert (f"the limit is {MAX_TERM_DEPTH:,}" in err.message
                or f"the limit is {MAX_VARIABLES:,}" in err.message), err.message


@pytest.mark.parametrize("kind, n", [("UNION", 1000), ("SEQ", 1000), ("EQUALS", 1000),
                                     ("join", 1000), ("&&", 1000), ("||", 1000),
                                     ("FILTERs", 1000), ("OPTIONAL", 550),
                                     ("OPTIONALSEQ", 550), ("EQUALSOPTIONAL", 550)])
def test_long_chains_register_and_answer(kind, n, low_recursion_limit):
    """Through the Prolog core.  Non-associative chains (OPTIONAL…) stay as
    deep as they are long; 550 links is past the recursion limit set."""
    if kind in ("&&", "||", "FILTERs"):
        got = register_and_run(chain(kind, n), [(S, URIRef(EX + "p0"), Literal(0), 1)])
        assert len(got) == 1
        return
    if kind == "UNION":
        got = register_and_run(chain(kind, n), rows(n, obj=Literal))
        assert len(got) == n
        return
    if kind == "EQUALS":
        got = register_and_run(chain(kind, n), rows(n, at=lambda i: 5))
    elif kind == "OPTIONAL":
        got = register_and_run(chain(kind, n), [(S, URIRef(EX + "q"), Literal(9), 0)])
    else:
        got = register_and_run(chain(kind, n), rows(n))
    assert len(got) == 1, kind
    assert got[0].bindings["x"] == S


def test_rdfs_reasoning_fits_a_union_of_any_length_and_names_the_limit_otherwise(
        low_recursion_limit):
    got = register_and_run(chain("UNION", 1000), rows(1000, obj=Literal), reasoning="rdfs")
    assert len(got) == 1000
    got = register_and_run(chain("SEQ", 900), rows(900), reasoning="rdfs")
    assert len(got) == 1
    with pytest.raises(QueryError) as info:
        python_stages(chain("SEQ", 2000), reasoning="rdfs")
    msg = info.value.message
    assert "needs 2,0" in msg and "variables, 2 of them the query's own" in msg
    assert "RDFS reasoning adds one per stream triple pattern" in msg
    assert f"the limit is {MAX_VARIABLES:,}" in msg
    assert (info.value.line, info.value.column) == (1, 1)


def test_too_many_variables_and_too_deep_expressions_are_named():
    python_stages(chain("join", 1500, var="?y"), reasoning="none")   # two variables: fits
    with pytest.raises(QueryError) as info:
        python_stages("SELECT * WHERE { "
                      + " ".join(f"{{ ?x {p(i)} ?y{i} }}" for i in range(1500)) + " }")
    assert "1,501 of them the query's own" in info.value.message
    text = f"SELECT ?x WHERE {{ ?x {p(0)} ?y FILTER(?y < 0" + " + 1" * 3000 + ") }"
    with pytest.raises(QueryError) as info:
        python_stages(text)
    err = info.value
    assert f"more than {MAX_EXPR_DEPTH:,} operators deep, the limit" in err.message
    assert err.line == 1 and text[err.column - 1] == "+"


def test_nested_group_chains_as_tools_print_them_are_balanced():
    """``{ { {A} UNION {B} } UNION {C} }``: flattened like a flat chain."""
    text = "SELECT ?x ?y WHERE " + "{ " * 600 + f"{{ ?x {p(0)} ?y }}"
    for i in range(1, 600):
        text += f" UNION {{ ?x {p(i)} ?y }} }}"
    text += " }"
    got = register_and_run(text, rows(600, obj=Literal))
    assert len(got) == 600


# ---------------------------------------------------------------------------
# balanced chains mean the same: against the reference evaluator

def _flat(kind: str, leaves: list) -> str:
    groups = [R.render_group(leaf) for leaf in leaves]
    if kind == "join":
        return "{ " + " ".join(groups) + " }"
    return "{ " + f" {kind} ".join(groups) + " }"


def _chain_case(kind: str, rng: random.Random, n: int) -> tuple[list, list]:
    """Leaves ``?s :c<i> ?o`` and a stream that holds the chain about once
    (in order for SEQ, at one instant for EQUALS), with stray rows and
    the odd wrong object, so that some cases answer and some do not."""
    preds = [URIRef(f"{R.NS}c{i}") for i in range(n)]
    leaves = [R.BGP(((R.Var("s"), preds[i], R.Var("o")),)) for i in range(n)]
    o, other = R.OBJECTS[0], R.OBJECTS[1]
    rows, t = [], 0
    for i in range(n):
        if kind != "EQUALS":
            t += 0 if rng.random() < 0.02 else rng.choice((1, 2))
        rows.append((R.SUBJECTS[0], preds[i], o if rng.random() < 0.99 else other, t, t))
    for _ in range(rng.randint(0, 4)):
        u = rng.randint(0, t + 2)
        rows.append((R.SUBJECTS[0], rng.choice(preds), rng.choice((o, other)), u, u))
    rows.sort(key=lambda r: r[4])
    return leaves, rows


@pytest.mark.parametrize("kind", ["UNION", "SEQ", "EQUALS", "join"])
def test_balanced_chains_answer_as_the_reference(kind):
    """Chains of 17 to 40 operands (past the left-deep CHAIN of 16) on
    random streams: the engine's answers are the reference's."""
    make = {"UNION": R.Union, "SEQ": R.SeqJoin, "EQUALS": R.EqJoin, "join": R.Join}[kind]
    rng = random.Random(kind)
    gen = R.QueryGen(rng, predicate_vars=False)
    failures, answered = [], 0
    for case in range(10):
        n = rng.randint(17, 40)
        if kind == "UNION":
            leaves = [R.BGP((gen.triple(),)) for _ in range(n)]
            stream = R.gen_stream(rng, rng.randint(5, 20))
        else:
            leaves, stream = _chain_case(kind, rng, n)
        ref = leaves[0]
        for leaf in leaves[1:]:
            ref = make(ref, leaf)
        text = f"{R.PREFIXES}SELECT * WHERE {_flat(kind, leaves)}"
        expected = R.answers(R.Select(ref), stream)
        got = R.engine_counter(register_and_run(text, stream, reasoning="rdfs"))
        answered += bool(expected)
        if got != expected:
            failures.append(R.diff_message(text, stream, expected, got))
    assert not failures, failures[0]
    assert 3 <= answered                     # not only empty answers


# ---------------------------------------------------------------------------
# generated long and deep queries: only QueryErrors, limits named

_LEAF = st.sampled_from([f"{{ ?x {p(0)} ?y }}", f"{{ ?x {p(1)} ?z }}", f"{{ ?y {p(2)} ?x }}"])


@st.composite
def long_queries(draw) -> str:
    """A WHERE clause mixing long chains, deep nesting and long expressions."""
    def pattern(depth: int) -> str:
        kind = draw(st.sampled_from(["leaf", "chain", "nest", "optional", "filter"]
                                    if depth < 4 else ["leaf"]))
        if kind == "leaf":
            return draw(_LEAF)
        if kind == "chain":
            op = draw(st.sampled_from(["UNION", "SEQ", "EQUALS", "OPTIONALSEQ",
                                       "EQUALSOPTIONAL", ""]))
            n = draw(st.integers(2, 700))
            parts = [pattern(depth + 1) for _ in range(min(n, 3))] + [draw(_LEAF)] * (n - 3)
            return "{ " + f" {op} ".join(parts) + " }"
        if kind == "nest":
            k = draw(st.integers(1, MAX_NESTING + 50))
            return "{ " * k + pattern(depth + 1) + " }" * k
        if kind == "optional":
            n = draw(st.integers(1, 700))
            return "{ " + draw(_LEAF)[1:-1] + f" OPTIONAL {draw(_LEAF)}" * n + " }"
        n = draw(st.integers(1, MAX_EXPR_DEPTH + 300))
        op = draw(st.sampled_from(["&&", "||", "+", "*"]))
        expr = f" {op} ".join(["?y"] * n)
        if op in "+*":
            expr = f"({expr}) > 0"
        return "{ " + pattern(depth + 1)[1:-1] + f" FILTER({expr}) }}"
    return "SELECT * WHERE " + pattern(0)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(long_queries())
def test_generated_long_queries_raise_only_query_errors(text):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            python_stages(text)
    except QueryError as err:
        assert "the limit" in err.message or "not supported" in err.message, err.message
    except RecursionError as err:         # pragma: no cover - the defect
        pytest.fail(f"RecursionError on a {len(text):,}-character query: {err}")
