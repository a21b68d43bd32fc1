"""One SPARQL front end (issue 23): EP-SPARQL and the six stream dialects
parse SPARQL 1.1 with one grammar text (language/sparql11.lark) and one
builder (language/sparql_builder.py).

Generated group patterns and expressions (seeded) mean the same AST on
every road, and a mistake in a shared construct is refused with the same
message at the same line and column on every road."""
from __future__ import annotations

import random
import warnings

import pytest

from epsparql.language import QueryError, QuerySyntaxError, parse_query
from epsparql.language.dialects import parse_dialect

PREFIX = "PREFIX ex: <http://ex.org/> "

#: Each road's query around a group body written from the start of line 3:
#: (dialect or None for EP-SPARQL, text before it, text after it, how many
#: elements of the WHERE group are the road's own).
ROADS = [
    (None, PREFIX + "\nSELECT * WHERE {\n", "\n}", 0),
    ("csparql", "REGISTER QUERY q AS " + PREFIX + "\nSELECT * FROM STREAM <http://ex.org/s> "
     "[RANGE 1s STEP 1s] WHERE {\n", "\n}", 0),
    ("cqels", PREFIX + "\nSELECT * WHERE { STREAM <http://ex.org/s> [RANGE 1s] { ?w ?w ?w } \n",
     "\n}", 1),
    ("sparqlstream", PREFIX + "\nSELECT * FROM STREAM <http://ex.org/s> [NOW - 1 S] WHERE {\n",
     "\n}", 0),
    ("streaming-sparql", PREFIX + "\nSELECT * FROM STREAM <http://ex.org/s> WINDOW RANGE 1 S "
     "FIXED WHERE {\n", "\n}", 0),
    ("luposdate", PREFIX + "\nSELECT * WHERE { WINDOW TYPE SLIDINGTRIPLES 5 { ?w ?w ?w } \n",
     "\n}", 1),
    ("rspql", PREFIX + "REGISTER RSTREAM <http://ex.org/o> AS\nSELECT * FROM NAMED WINDOW "
     "<http://ex.org/w> ON <http://ex.org/s> [RANGE PT1S STEP PT1S] WHERE {\n", "\n}", 0),
]


def _where(road, body: str):
    """The elements of ``body``'s group as ``road`` builds them."""
    dialect, before, after, own = road
    text = before + body + after
    if dialect is None:
        return parse_query(text).where.elements[own:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return parse_dialect(text, dialect=dialect).where.elements[own:]


# ------------------------------------------------------------ generators

_VARS = ["?a", "?b", "$c", "?long_name"]
_IRIS = ["<http://ex.org/p>", "ex:q", "ex:r\\.s", "rdf:type", "xsd:integer"]
_LITERALS = ['"s"', "'t'@en", '"x\\ty\\u00e9"', '"""multi\nline"""', '"5"^^xsd:integer',
             '"2024-01-01T00:00:00Z"^^xsd:dateTime', "true", "FALSE", "42", "-7", "+3",
             "1.5", "-0.25", "1e3", "-2.5E-2"]
_CALLS = [("STR", 1), ("REGEX", 2), ("IF", 3), ("CONCAT", 3), ("ABS", 1), ("STRLEN", 1),
          ("COALESCE", 2), ("SUBSTR", 3), ("isIRI", 1), ("uri", 1), ("LANGMATCHES", 2)]
_BINARY = ["||", "&&", "=", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/"]


def _expr(rnd: random.Random, depth: int) -> str:
    """A random SPARQL 1.1 expression, each operand parenthesised as needed."""
    if depth <= 0:
        return rnd.choice(_VARS + _LITERALS + _IRIS[:2])
    kind = rnd.randrange(9)
    sub = lambda: _expr(rnd, depth - 1)     # noqa: E731
    if kind < 3:
        return f"({sub()}) {rnd.choice(_BINARY)} ({sub()})"
    if kind == 3:
        return f"({sub()})"
    if kind == 4:
        operand = rnd.choice(_VARS + _LITERALS[8:] + ["(" + sub() + ")"])
        return f"{rnd.choice(['!', '-', '+'])}{rnd.choice(['', ' '])}{operand}"
    if kind == 5:
        name, n = rnd.choice(_CALLS)
        return f"{name}({', '.join(sub() for _ in range(n))})"
    if kind == 6:
        values = ", ".join(sub() for _ in range(rnd.randrange(3)))
        return f"({sub()}) {rnd.choice(['IN', 'NOT IN'])} ({values})"
    if kind == 7:
        return f"{rnd.choice(['EXISTS', 'NOT EXISTS'])} {{ {_triples(rnd)} }}"
    return f"BOUND({rnd.choice(_VARS)})" if rnd.random() < 0.5 else f"ex:f({sub()})"


def _term(rnd: random.Random) -> str:
    return rnd.choice(_VARS + _IRIS + _LITERALS + ["[]"])


def _path(rnd: random.Random, depth: int = 2) -> str:
    if depth <= 0 or rnd.random() < 0.5:
        return rnd.choice(_IRIS[:3] + ["a"])
    kind = rnd.randrange(4)
    if kind == 0:
        return f"{_path(rnd, depth - 1)}/{_path(rnd, depth - 1)}"
    if kind == 1:
        return f"({_path(rnd, depth - 1)}|{_path(rnd, depth - 1)})"
    if kind == 2:
        return f"^({_path(rnd, depth - 1)})"
    return f"({_path(rnd, depth - 1)}){rnd.choice('*+?')}"


def _triples(rnd: random.Random) -> str:
    """A triples block: property lists, object lists, [ ... ] and paths."""
    out = []
    for _ in range(rnd.randrange(1, 3)):
        subject = rnd.choice(_VARS + _IRIS[:2] + ["[]"])
        verbs = []
        for _ in range(rnd.randrange(1, 3)):
            verb = rnd.choice(_VARS[:2]) if rnd.random() < 0.3 else _path(rnd)
            objects = [_term(rnd) if rnd.random() < 0.8 else f"[ ex:q {_term(rnd)} ]"
                       for _ in range(rnd.randrange(1, 3))]
            verbs.append(f"{verb} {', '.join(objects)}")
        out.append(f"{subject} {' ; '.join(verbs)}")
    return " . ".join(out)


def _group_body(rnd: random.Random, depth: int, bound: list[str] | None = None) -> str:
    """A group body of SPARQL 1.1 patterns, FILTERs and BINDs (each BIND
    to a new variable)."""
    parts = []
    bound = [] if bound is None else bound
    for _ in range(rnd.randrange(1, 4)):
        kind = rnd.randrange(8 if depth > 0 else 3)
        if kind == 0:
            parts.append(_triples(rnd) + " .")
        elif kind == 1:
            parts.append(f"FILTER ({_expr(rnd, 3)})")
        elif kind == 2:
            var = f"?bound{len(bound)}"
            bound.append(var)
            parts.append(f"BIND ({_expr(rnd, 2)} AS {var})")
        elif kind == 3:
            parts.append(f"OPTIONAL {{ {_group_body(rnd, depth - 1, bound)} }}")
        elif kind == 4:
            parts.append(f"MINUS {{ {_group_body(rnd, depth - 1, bound)} }}")
        elif kind == 5:
            parts.append(f"{{ {_group_body(rnd, depth - 1, bound)} }} UNION "
                         f"{{ {_group_body(rnd, depth - 1, bound)} }}")
        elif kind == 6:
            parts.append(f"GRAPH {rnd.choice(['?g', 'ex:g'])} {{ {_group_body(rnd, depth - 1, bound)} }}")
        else:
            parts.append(f"FILTER {rnd.choice(['', 'NOT '])}EXISTS {{ {_triples(rnd)} }}")
    return "\n".join(parts)


def test_generated_patterns_build_the_same_ast_on_every_road():
    rnd = random.Random(23)
    checked = 0
    for _ in range(40):
        body = _group_body(rnd, 2)
        try:
            expected = _where(ROADS[0], body)
        except QueryError:          # a generated scope error (BIND of a bound variable)
            continue
        for road in ROADS[1:]:
            assert _where(road, body) == expected, (road[0], body)
        checked += 1
    assert checked >= 30


# -------------------------------------------------- errors, every road

_ERRORS = [
    # (body, column of the error on line 3, words of the message)
    ("?s ?p ?o FILTER (?s + )", 23, "expected"),
    ("?s ?p ?o FILTER (STR(?s, ?p))", 18, "STR() takes 1 argument, got 2"),
    ("?s ?p ?o FILTER (CONCAT(?s; separator = \",\"))", 18, "does not take '*', DISTINCT"),
    ("?s ?p ?o FILTER (nofun(?s))", 18, "unknown function 'nofun'"),
    ("?s ?p ?o FILTER (BOUND(1))", 18, "BOUND needs a variable"),
    ("?s ?p \"a\\qb\"", 9, "invalid escape sequence '\\q'"),
    ("?s nope:p ?o", 4, "unknown prefix 'nope:'"),
    ("?s ?p \"open", 7, "unterminated string"),
    ("?s ?p ?o FILTER (CONCAT(?s; sep = \",\"))", 29, "expected SEPARATOR, found 'sep'"),
    ("?s ?p ?o . FILTER (?s IN (1 2))", 29, "expected"),
    ("?s <http://ex.org/p> ?o FILTER (REGEX(?o))", 33, "REGEX() takes 2 to 3 arguments, got 1"),
]


@pytest.mark.parametrize("body, column, words", _ERRORS)
def test_an_error_in_a_shared_construct_reads_the_same_on_every_road(body, column, words):
    """The same message (a dialect's syntax errors add which dialect's
    query it is), at line 3 and the same column, on all seven roads."""
    messages = set()
    for road in ROADS:
        with pytest.raises(QueryError) as info:
            _where(road, body)
        err = info.value
        assert (err.line, err.column) == (3, column), (road[0], str(err))
        assert words in err.message, (road[0], err.message)
        message = err.message
        if road[0] is not None and isinstance(err, QuerySyntaxError):
            message = message.split(" (in a ")[0]
        messages.add(message)
    assert len(messages) == 1, messages


def test_each_road_lexes_with_one_lexer(monkeypatch):
    """The nesting check before each parse lexes the text: with the lexer
    of its parser, not a new one a query (building one compiles every
    terminal's regular expression: a third of a parse).  Speed itself is
    measured in bench/parsing.py."""
    from lark import Lark
    built = []
    real = Lark._build_lexer

    def counting(self, *args, **kwargs):
        built.append(self)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(Lark, "_build_lexer", counting)
    for road in ROADS:
        for _ in range(3):
            _where(road, "?s ?p ?o FILTER (?o > 1)")
    assert len(built) <= len(ROADS)
