"""Constants and expression types checked when a query is registered
(epsparql/algebra/constants.py, epsparql/language/regex.py).

An invalid typed literal or regular expression is a QueryError at
registration; a comparison or arithmetic whose operand types can never fit
is a QueryWarning naming the types and the fix.  Before, all of them were
accepted and the query silently never answered.  The verdicts are checked
against the engine itself (prolog/sparql_eval.pl): on the literal corpus
of the codec tests, on generated regular expressions and flags, and on
generated comparisons of constants and time functions.
"""
from __future__ import annotations

import logging
import random
import warnings
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine, QueryWarning
from epsparql.algebra import translate
from epsparql.algebra.constants import INTERPRETED_DATATYPES, literal_problem
from epsparql.core import CoreEngine, term
from epsparql.core.runtime import PROLOG_DIR, runtime
from epsparql.core.terms import to_prolog
from epsparql.language import QueryError, parse_query
from epsparql.language.regex import regex_problem
from epsparql.rdf import encode
from epsparql.rules.from_algebra import RuleWriter

from conftest import ROOT
from cli.test_cli import cli  # tests/cli/
from prolog.test_sparql_expr import lexical_corpus  # tests/prolog/

XS = "http://www.w3.org/2001/XMLSchema#"
EX = "PREFIX : <http://ex/> "


@pytest.fixture(autouse=True)
def _quiet_rdflib():
    """rdflib logs a traceback for every ill-typed literal it builds."""
    log = logging.getLogger("rdflib.term")
    level = log.level
    log.setLevel(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module="rdflib")
        yield
    log.setLevel(level)


def check(text: str) -> list[str]:
    """The QueryWarning messages of translating ``text`` (errors raise)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        translate(parse_query(text))
    return [str(w.message) for w in caught if issubclass(w.category, QueryWarning)]


def query_error(text: str) -> QueryError:
    with pytest.raises(QueryError) as info:
        check(text)
    return info.value


def marked(text: str) -> tuple[str, tuple[int, int]]:
    """``text`` without its '‸' mark, and the (line, column) of the mark."""
    i = text.index("‸")
    before = text[:i]
    return text.replace("‸", ""), (before.count("\n") + 1, i - before.rfind("\n"))


# ---------------------------------------------------------------------------
# invalid literals: errors, wherever they are

@pytest.mark.parametrize("text, words", [
    (EX + 'SELECT ?x WHERE { ?x :p ?y } SEQ { ?x :p ?z } FILTER(getDURATION() ‸< "P5"^^xsd:duration)',
     '"P5"^^xsd:duration is not a valid xsd:duration (e.g. "PT5S"^^xsd:duration)'),
    (EX + 'SELECT * { ?x :p ?y FILTER(?y ‸> "2024-13-01T00:00:00"^^xsd:dateTime) }',
     "is not a valid xsd:dateTime"),
    (EX + 'SELECT * { ‸?x :p "5,0"^^xsd:decimal }', '"5,0"^^xsd:decimal is not a valid xsd:decimal'),
    (EX + 'SELECT * { ?x :p ?y ‸BIND("yes"^^xsd:boolean AS ?b) }', "is not a valid xsd:boolean"),
    (EX + 'SELECT ("abc"^^xsd:integer AS ‸?n) { ?x :p ?y }', "is not a valid xsd:integer"),
    (EX + 'CONSTRUCT { ‸?x :q "2024-02-30"^^xsd:date } WHERE { ?x :p ?y }',
     "is not a valid xsd:date"),
    (EX + 'SELECT * { ‸?x :p "300"^^xsd:byte }', "is not a valid xsd:byte"),
    (EX + 'SELECT * { ?x :p ?y FILTER(?y ‸= "5"^^xsd:integr) }',
     "xsd:integr is not an XML Schema datatype"),
    (EX + 'SELECT * { ?x :p ?y FILTER(DATATYPE(?y) ‸= xsd:dateTim) }',
     "xsd:dateTim is not an XML Schema datatype"),
])
def test_invalid_literals_are_errors_with_a_position(text, words):
    text, position = marked(text)
    err = query_error(text)
    assert words in err.message
    assert (err.line, err.column) == position, str(err)


@pytest.mark.parametrize("lexical, datatype", [
    ("PT5S", "duration"), ("-P1Y2M3DT4H5M6.7S", "duration"), ("P1D", "dayTimeDuration"),
    ("2024-02-29T12:00:00+01:00", "dateTime"), ("2024-01-01", "date"), ("1", "boolean"),
    ("INF", "double"), ("-INF", "float"), ("NaN", "double"), ("1e400", "double"),
    ("12:00:00", "time"), ("anything", "string"), ("x", "gYear"),
])
def test_valid_and_uninterpreted_literals_are_accepted(lexical, datatype):
    assert check(f'{EX} SELECT * {{ ?x :p "{lexical}"^^<{XS}{datatype}> }}') == []


@pytest.fixture(scope="module")
def sparql_core():
    """A core engine that evaluates sparql_eval expressions given as rules."""
    runtime().consult(PROLOG_DIR / "sparql_eval.pl")
    eng = CoreEngine()
    yield eng
    eng.close()


def evaluate(core: CoreEngine, trees: list[str]) -> list:
    """The values (encoded terms, or '$error') of expression trees."""
    rules = "\n".join(f"x{i}(V) <- go where sparql_eval:sparql_eval({t}, V)."
                      for i, t in enumerate(trees))
    core.add_rules(rules)
    got = core.push_many([(term("go"), len(trees))])
    out: dict[int, object] = {}
    for d in got:
        name = d.event.name if hasattr(d.event, "name") else str(d.event)
        out[int(name[1:])] = d.event.args[0]
    return [out[i] for i in range(len(trees))]


def test_literal_verdicts_are_the_engines(sparql_core):
    """literal_problem() accepts exactly the lexical forms sparql_eval.pl
    reads as a value (the corpus of edge cases and random forms the codec
    tests use), normalised by rdflib or not."""
    cases = [(lex, XS + dt) for lex, dt in lexical_corpus(seed=11, n=400)
             if URIRef(XS + dt) in INTERPRETED_DATATYPES]
    trees = []
    for lex, dt in cases:
        typed = f"sparql_eval:sparql_typed_literal({to_prolog(_plstr(lex))}, {to_prolog(dt)}, T)"
        trees.append(typed)
    rules = "\n".join(
        f"y{i}(T, V) <- go where ({t}, sparql_eval:sparql_eval(add(const(T), const(0)), V))."
        for i, t in enumerate(trees))
    eng = CoreEngine()
    try:
        eng.add_rules(rules)
        got = {int(d.event.name[1:]): d.event.args for d in eng.push_many([(term("go"), 1)])}
    finally:
        eng.close()
    valid_count = 0
    for i, (lex, dt) in enumerate(cases):
        typed, plus_zero = got[i]
        generic = getattr(typed, "name", None) == "t"
        numeric_special = (dt[len(XS):] in ("double", "float") and plus_zero != "$error")
        valid = not generic or numeric_special
        for lit in (Literal(lex, datatype=URIRef(dt), normalize=False),):
            assert (literal_problem(lit) is None) == valid, (lex, dt, typed)
        valid_count += valid
    assert 0.2 * len(cases) < valid_count < 0.9 * len(cases)


def _plstr(text: str):
    from epsparql.core.terms import PlString
    return PlString(text)


# ---------------------------------------------------------------------------
# regular expressions: errors, with the engine's own verdicts

@pytest.mark.parametrize("call, words", [
    ('REGEX(STR(?x), "(")', 'REGEX with the pattern "(": invalid regular expression: '
                            "missing closing parenthesis"),
    ('REGEX(STR(?x), "a", "g")', "unknown flag 'g' (the flags are i, s, m, x and q)"),
    ('REGEX(STR(?x), "[a b", "x")', "missing terminating ] for character class"),
    ('REGEX(STR(?x), "a{2,1}")', "numbers out of order"),
    ('REPLACE(STR(?x), "a*", "b")', "the pattern matches the empty string"),
    ('REPLACE(STR(?x), "a", "$x")', "invalid replacement: '$' at character 1"),
    ('REPLACE(STR(?x), "a", "$1")', "$1 refers to group 1, but the pattern has 0 groups"),
])
def test_invalid_regular_expressions_are_errors(call, words):
    text, position = marked(f"{EX} SELECT * {{ ?x :p ?y FILTER(‸{call} = {call}) }}")
    err = query_error(text)
    assert words in err.message, err.message
    assert (err.line, err.column) == position


@pytest.mark.parametrize("call", [
    'REGEX(STR(?x), "^a.*b$", "i")', 'REGEX(STR(?x), "a b", "x")', 'REGEX(STR(?x), "((", "q")',
    'REGEX(STR(?x), "\\\\p{L}+")', 'REGEX(STR(?x), ?y)', 'REPLACE(STR(?x), "(a)", "$1$1")',
    'REPLACE(STR(?x), "a", "\\\\$")', 'REPLACE(STR(?x), "a", "$", "q")',
])
def test_valid_regular_expressions_pass(call):
    assert check(f"{EX} SELECT * {{ ?x :p ?y FILTER(STR({call}) != \"\") }}") == []


_PIECES = ["a", "b", "(", ")", "[", "]", "{", "}", "{2}", "{2,1}", "*", "+", "?", "|", "\\",
           "^", "$", ".", " ", "-", ",", "1", "\\d", "\\p{L}", "\\p{Zz}", "(?<n_Q>", "(?<n>",
           "(?=", "\\1", "(?i)", "[^", "\\k<n>", "\n"]
_REPLACEMENTS = ["x", "$1", "$", "\\$", "\\\\", "\\x", "a$0b", "$12", ""]


def test_regex_verdicts_are_the_engines(sparql_core):
    """On generated patterns, flags and replacements, regex_problem() and
    replacement_problem() say 'error' exactly when sparql_eval.pl's REGEX
    and REPLACE give an error."""
    if regex_problem("(") is None:
        pytest.skip("libpcre2-8 cannot be loaded here: the check is skipped")
    rnd = random.Random(5)
    cases = []
    for _ in range(300):
        pattern = "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 6)))
        flags = "".join(rnd.sample("ismxqg", rnd.randint(0, 2))) if rnd.random() < 0.6 else ""
        cases.append((pattern, flags, rnd.choice(_REPLACEMENTS)))

    def s(text: str) -> str:
        return f"const({to_prolog(encode(Literal(text)))})"

    text = s("ab1 a")
    trees = []
    for p, f, r in cases:
        trees.append(f"call('REGEX', [{text}, {s(p)}, {s(f)}])")
        trees.append(f"call('REPLACE', [{text}, {s(p)}, {s(r)}, {s(f)}])")
    eng = CoreEngine()
    try:
        values = evaluate(eng, trees)
    finally:
        eng.close()
    errors = 0
    for i, (p, f, r) in enumerate(cases):
        regex_error = values[2 * i] == "$error"
        replace_error = values[2 * i + 1] == "$error"
        assert (regex_problem(p, f) is not None) == regex_error, (p, f, values[2 * i])
        problem = regex_problem(p, f, for_replace=True, replacement=r)
        if problem and "refers to group" in problem:
            # a missing group fails every replacement, i.e. whenever the pattern matches
            matched = getattr(values[2 * i], "args", [None])[0] == "true"
            assert replace_error == matched, (p, f, r, values[2 * i + 1])
        else:
            assert (problem is not None) == replace_error, (p, f, r, values[2 * i + 1])
        errors += regex_error
    assert 0.2 * len(cases) < errors < 0.9 * len(cases)


# ---------------------------------------------------------------------------
# operand types that can never fit: warnings with the fix

@pytest.mark.parametrize("condition, words", [
    ("getDURATION() < 5",
     'getDURATION() < 5: it compares an xsd:duration with a number, which is an error for '
     'every solution, so it is never true; times are seconds, but 5 must be written as a '
     'duration: getDURATION() < "PT5S"^^xsd:duration'),
    ("getDURATION() <= 2.5", 'getDURATION() <= "PT2.5S"^^xsd:duration'),
    ("60 > getDURATION()", '"PT60S"^^xsd:duration > getDURATION()'),
    ("getSTARTTIME() >= 86400", 'getSTARTTIME() >= "1970-01-02T00:00:00Z"^^xsd:dateTime'),
    ('getDURATION() < "PT5S"',
     'it compares an xsd:duration with a string, which is an error for every solution, so it '
     'is never true; to compare with an xsd:duration, give the string a datatype: '
     'getDURATION() < "PT5S"^^xsd:duration'),
    ("getENDTIME() - getSTARTTIME() > 5",
     "arithmetic on an xsd:dateTime (getENDTIME()) is an error for every solution; the "
     "length of a match is getDURATION()"),
    ('STR(?x) = <http://ex/a>', "a string is never equal to an IRI"),
    ('STRLEN(?x) = "3"', "it compares a number with a string"),
    ('"2024-01-01"^^xsd:date < getSTARTTIME()', "compares an xsd:date with an xsd:dateTime"),
    ("<http://ex/a> < <http://ex/b>", "IRIs and blank nodes have no order"),
])
def test_type_mismatches_are_warnings_with_the_fix(condition, words):
    text = f"{EX} SELECT ?x WHERE {{ ?x :p ?y }} SEQ {{ ?x :p ?z }} FILTER({condition})"
    got = check(text)
    assert len(got) == 1, got
    assert words in got[0], got[0]
    assert got[0].startswith("line 1, column ")


@pytest.mark.parametrize("condition", [
    'getDURATION() < "PT5S"^^xsd:duration', "?y < 5", 'STR(?x) = "http://ex/a"',
    "YEAR(getSTARTTIME()) = 2024", "STRLEN(STR(?x)) * 2 > ?y", "?x = <http://ex/a>",
    'getSTARTTIME() < "2024-01-01T00:00:00Z"^^xsd:dateTime', "IF(?y > 1, 2, 3) < 5",
    'COALESCE(?y, 1) + 1 < 3', '"12:00:00"^^xsd:time = "12:00:00"^^xsd:time',
])
def test_fitting_operands_give_no_warning(condition):
    assert check(f"{EX} SELECT ?x WHERE {{ ?x :p ?y }} SEQ {{ ?x :p ?z }} "
                 f"FILTER({condition})") == []


def test_the_projects_queries_give_no_warning():
    from epsparql.language.dialects import detect_dialect
    texts = [p.read_text() for p in sorted((ROOT / "examples").rglob("*.rq"))]
    texts = [t for t in texts if detect_dialect(t) is None]    # EP-SPARQL's only
    assert len(texts) > 10
    for t in texts:
        assert check(t) == [], t


_OPERANDS = {
    "a number": ["5", "2.5", '"1e3"^^xsd:double', "STRLEN(\"abc\")", "YEAR(getSTARTTIME())"],
    "a string": ['"a"', '"PT5S"', 'STR(<http://ex/a>)'],
    "a language-tagged string": ['"a"@en', 'LCASE("A"@en)'],
    "a boolean": ["true", "(1 < 2)"],
    "an xsd:dateTime": ['"2024-01-01T00:00:00Z"^^xsd:dateTime', "getSTARTTIME()", "getENDTIME()"],
    "an xsd:date": ['"2024-01-01"^^xsd:date'],
    "an xsd:duration": ['"PT5S"^^xsd:duration', "getDURATION()"],
    "an IRI": ["<http://ex/a>", "DATATYPE(5)"],
}
_OPS = ["<", ">", "<=", ">=", "=", "!=", "+", "-", "*"]


def test_warnings_agree_with_the_engine(sparql_core):
    """For generated operator applications on constants and time functions:
    a warning is given exactly when sparql_eval.pl gives an error for the
    application (or, for '=' between an IRI and a literal, false), with
    the interval of a match passed to the time functions."""
    rnd = random.Random(3)
    pool = [(kind, text) for kind, texts in _OPERANDS.items() for text in texts]
    cases = []
    for _ in range(400):
        (ka, a), (kb, b) = rnd.choice(pool), rnd.choice(pool)
        cases.append((a, rnd.choice(_OPS), b))
    writer = RuleWriter("t", encode, lambda iri: False)
    exprs, warned = [], []
    for a, op, b in cases:
        text = f"{EX} SELECT ?x WHERE {{ ?x :p ?y }} SEQ {{ ?x :p ?z }} FILTER({a} {op} {b})"
        q = parse_query(text)
        flt = q.where.elements[-1].expr
        exprs.append(writer.expr(flt, ("0", "7")))
        warned.append(bool(check(text)))
    eng = CoreEngine()
    try:
        values = evaluate(eng, exprs)
    finally:
        eng.close()
    for (a, op, b), value, w in zip(cases, values, warned):
        never = value == "$error" or (op == "=" and getattr(value, "args", [None])[0] == "false"
                                      and (_kind(a) == "an IRI") != (_kind(b) == "an IRI"))
        assert w == never, (a, op, b, value)
    assert 0.2 * len(cases) < sum(warned) < 0.9 * len(cases)


def _kind(text: str) -> str:
    return next(k for k, texts in _OPERANDS.items() if text in texts)


# ---------------------------------------------------------------------------
# through the command line and the Python API

def test_register_warns_with_the_dedicated_category():
    engine = Engine()
    try:
        with pytest.warns(QueryWarning, match=r'getDURATION\(\) < "PT5S"\^\^xsd:duration'):
            engine.register(f"{EX} SELECT ?x WHERE {{ ?x :p ?y }} SEQ {{ ?x :p ?z }} "
                            "FILTER(getDURATION() < 5)")
        with warnings.catch_warnings():
            warnings.simplefilter("error", QueryWarning)      # a user can make it fatal
            with pytest.raises(QueryWarning):
                engine.register(f"{EX} SELECT ?x WHERE {{ ?x :p ?y }} SEQ {{ ?x :p ?z }} "
                                "FILTER(getDURATION() < 6)")
    finally:
        engine.close()


def test_check_and_run_show_errors_and_warnings(tmp_path: Path):
    warn = tmp_path / "warn.rq"
    warn.write_text("SELECT ?x WHERE { ?x <http://ex/p> ?y } SEQ { ?x <http://ex/p> ?z }\n"
                    "FILTER(getDURATION() < 5)\n")
    bad = tmp_path / "bad.rq"
    bad.write_text("SELECT ?x WHERE { ?x <http://ex/p> ?y } SEQ { ?x <http://ex/p> ?z }\n"
                   'FILTER(getDURATION() < "P5"^^xsd:duration)\n')
    regex = tmp_path / "regex.rq"
    regex.write_text('SELECT ?x WHERE { ?x <http://ex/p> ?y FILTER(REGEX(STR(?x), "(")) }\n')
    r = cli("check", warn)
    assert r.returncode == 0 and f"{warn}: ok" in r.stdout
    assert (f"{warn}:2:22: warning: getDURATION() < 5: it compares an xsd:duration with "
            "a number") in r.stderr
    assert 'getDURATION() < "PT5S"^^xsd:duration' in r.stderr
    r = cli("check", bad, regex)
    assert r.returncode == 2
    assert f'{bad}:2:22: "P5"^^xsd:duration is not a valid xsd:duration' in r.stderr
    column = regex.read_text().index("REGEX") + 1
    assert f'{regex}:1:{column}: REGEX with the pattern "(": invalid regular expression' in r.stderr
    stream = tmp_path / "s.nt"
    stream.write_text("<http://ex/s> <http://ex/p> <http://ex/o> 1 .\n"
                      "<http://ex/s> <http://ex/p> <http://ex/o2> 3 .\n")
    r = cli("run", bad, "--stream", stream)
    assert r.returncode == 2 and r.stdout == ""
    r = cli("run", warn, "--stream", stream)
    assert r.returncode == 0 and "getDURATION() < 5: it compares" in r.stderr


@pytest.mark.parametrize("text, words", [
    (EX + "SELECT ?x WHERE { ?x :p ?price FILTER(‸?prce > 5) }",
     "?prce is not bound by any pattern of the query (a typo?): an expression using it "
     "has no value"),
    (EX + "SELECT ?x ‸?company WHERE { ?x :p ?y }", "?company is not bound by any pattern "
                                                  "of the query (a typo?): its column is "
                                                  "always empty"),
    (EX + "CONSTRUCT { ?x :q ‸?z } WHERE { ?x :p ?y }",
     "a template triple with it is never constructed"),
    (EX + "SELECT ?x WHERE { ?x :p ?y BIND(‸?w + 1 AS ?v) }", "?w is not bound"),
])
def test_variables_no_pattern_binds_are_warnings(text, words):
    text, (line, column) = marked(text)
    got = check(text)
    assert len(got) == 1 and words in got[0], got
    assert got[0].startswith(f"line {line}, column {column}: ")


@pytest.mark.parametrize("text", [
    EX + "SELECT ?x ?v WHERE { ?x :p ?y OPTIONAL { ?x :q ?v } FILTER(!BOUND(?v) || ?v > 1) }",
    EX + "SELECT ?x ?n WHERE { ?x :p ?y BIND(?y + 1 AS ?n) }",
    EX + "SELECT (?y * 2 AS ?d) ?d2 WHERE { ?x :p ?y BIND(?y AS ?d2) }",
    EX + "SELECT ?g WHERE { ?x :p ?y GRAPH ?g { ?x :q ?z } }",
])
def test_bound_variables_give_no_warning(text):
    assert check(text) == []
