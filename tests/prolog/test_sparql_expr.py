"""The SPARQL expression evaluator (prolog/sparql_eval.pl) and the RDF term
codec (epsparql/rdf/codec.py).

The evaluator's own cases are a plunit suite (tests/prolog/test_sparql_eval.pl)
run in a fresh swipl.  Here: the codec (classes, exact round trips,
properties), the agreement of the codec with sparql_eval.pl on every lexical
form (both must build the very same term, or joins by unification break),
and encoded terms going through the event core and its FILTER path.
"""
from __future__ import annotations

import datetime as dtm
import logging
import math
import random
import subprocess
import warnings
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Literal, URIRef

from conftest import ROOT
from epsparql.core import Compound, CoreEngine, PlString, term
from epsparql.core.runtime import PROLOG_DIR, runtime, swipl_executable
from epsparql.core.terms import to_prolog
from epsparql.rdf import (canonical_double, decode, encode, encode_seconds_as_datetime,
                          encode_seconds_as_duration)

XS = "http://www.w3.org/2001/XMLSchema#"


class _Xsd:
    """XSD datatype IRIs (rdflib's closed XSD namespace warns when pytest
    probes module attributes during collection)."""

    def __getattr__(self, name: str) -> URIRef:
        if name.startswith("_"):
            raise AttributeError(name)
        return URIRef(XS + name)


XSD = _Xsd()
PLUNIT = ROOT / "tests" / "prolog" / "test_sparql_eval.pl"


# ---------------------------------------------------------------------------
# the plunit suite

def test_plunit_suite() -> None:
    proc = subprocess.run([swipl_executable(), "-g", "run_tests", "-t", "halt", str(PLUNIT)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "All " in out and " tests passed" in out, out
    assert "Warning" not in out, out        # e.g. a test left a choicepoint


# ---------------------------------------------------------------------------
# helpers

@pytest.fixture(autouse=True)
def _quiet_rdflib():
    """rdflib logs a traceback (and warns) for every ill-typed literal it
    builds; these tests build thousands on purpose."""
    log = logging.getLogger("rdflib.term")
    level = log.level
    log.setLevel(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield
    log.setLevel(level)


def strict(v: Any) -> Any:
    """A comparable form that tells atoms, strings and numbers apart
    (PlString("a") == "a" and 1 == 1.0 in Python)."""
    if isinstance(v, Compound):
        return ("c", v.name, tuple(strict(a) for a in v.args))
    if isinstance(v, PlString):
        return ("s", str(v))
    if isinstance(v, str):
        return ("a", v)
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, float):
        return ("f", math.copysign(1.0, v), repr(v))
    if isinstance(v, (list, tuple)):
        return ("l", tuple(strict(a) for a in v))
    return ("?", repr(v))


def same_term(a: Any, b: Any) -> bool:
    """Identical RDF terms: kind, lexical form, datatype and language."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Literal):
        return (str(a) == str(b) and a.datatype == b.datatype
                and (a.language or "").lower() == (b.language or "").lower())
    return str(a) == str(b)


def C(name: str, *args: Any) -> Compound:
    return Compound(name, tuple(args))


def S(text: str) -> PlString:
    return PlString(text)


# ---------------------------------------------------------------------------
# encode: one case per class

with warnings.catch_warnings():          # rdflib warns on the ill-typed boolean
    warnings.simplefilter("ignore", UserWarning)
    ENCODE_CASES = [
        (URIRef("http://ex/a"), "http://ex/a"),
        (BNode("b1"), C("b", "b1")),
        (Literal("abc"), C("s", S("abc"))),
        (Literal("abc", datatype=XSD.string), C("s", S("abc"))),
        (Literal("chat", lang="FR-be"), C("l", S("chat"), "fr-be")),
        # canonical xsd:integer and xsd:double: the bare number; other forms n/3
        (Literal("42", datatype=XSD.integer), 42),
        (Literal("-7", datatype=XSD.integer), -7),
        (Literal("042", datatype=XSD.integer, normalize=False), C("n", 42, XS + "integer", S("042"))),
        (Literal("+4", datatype=XSD.integer, normalize=False), C("n", 4, XS + "integer", S("+4"))),
        (Literal("101.5", datatype=XSD.double), 101.5),
        (Literal("0.0", datatype=XSD.double, normalize=False), 0.0),
        (Literal("-0.0", datatype=XSD.double, normalize=False), C("n", -0.0, XS + "double", S("-0.0"))),
        (Literal("101.50", datatype=XSD.double, normalize=False),
         C("n", 101.5, XS + "double", S("101.50"))),
        (Literal("1000000000000000.0", datatype=XSD.double, normalize=False),
         C("n", 1e15, XS + "double", S("1000000000000000.0"))),
        (Literal("0.0001", datatype=XSD.double, normalize=False), 0.0001),
        (Literal("5e-05", datatype=XSD.double, normalize=False), C("n", 5e-05, XS + "double", S("5e-05"))),
        (Literal("007", datatype=XSD.int, normalize=False), C("n", 7, XS + "int", S("007"))),
        (Literal("-0", datatype=XSD.nonNegativeInteger, normalize=False),
         C("n", 0, XS + "nonNegativeInteger", S("-0"))),
        (Literal("1.50", datatype=XSD.decimal, normalize=False), C("n", 1.5, XS + "decimal", S("1.50"))),
        (Literal("1e3", datatype=XSD.double, normalize=False), C("n", 1000.0, XS + "double", S("1e3"))),
        (Literal("-0", datatype=XSD.double, normalize=False), C("n", -0.0, XS + "double", S("-0"))),
        (Literal("2.5", datatype=XSD.float), C("n", 2.5, XS + "float", S("2.5"))),
        (Literal("true", datatype=XSD.boolean), C("bool", "true", S("true"))),
        (Literal("0", datatype=XSD.boolean, normalize=False), C("bool", "false", S("0"))),
        (Literal("2024-01-01T01:00:00+01:00", datatype=XSD.dateTime, normalize=False),
         C("d", 1704067200.0, XS + "dateTime", S("2024-01-01T01:00:00+01:00"))),
        (Literal("2024-01-01T00:00:00.25", datatype=XSD.dateTime, normalize=False),
         C("d", 1704067200.25, XS + "dateTime", S("2024-01-01T00:00:00.25"))),
        (Literal("2024-01-02", datatype=XSD.date, normalize=False),
         C("d", 1704153600.0, XS + "date", S("2024-01-02"))),
        (Literal("P30D", datatype=XSD.duration, normalize=False), C("dur", 2592000, XS + "duration", S("P30D"))),
        (Literal("P1Y1M", datatype=XSD.duration, normalize=False),
         C("dur", 395 * 86400, XS + "duration", S("P1Y1M"))),
        (Literal("-PT1.5S", datatype=XSD.dayTimeDuration, normalize=False),
         C("dur", -1.5, XS + "dayTimeDuration", S("-PT1.5S"))),
        (Literal("PT2.0S", datatype=XSD.duration, normalize=False), C("dur", 2, XS + "duration", S("PT2.0S"))),
        (Literal("x", datatype=URIRef("http://ex/dt")), C("t", S("x"), "http://ex/dt")),
        (Literal("12:00:00", datatype=XSD.time, normalize=False), C("t", S("12:00:00"), XS + "time")),
        # ill-typed and non-finite: generic
        (Literal("abc", datatype=XSD.integer), C("t", S("abc"), XS + "integer")),
        (Literal("300", datatype=XSD.byte, normalize=False), C("t", S("300"), XS + "byte")),
        (Literal(" 5", datatype=XSD.integer, normalize=False), C("t", S(" 5"), XS + "integer")),
        (Literal("1_000", datatype=XSD.integer, normalize=False), C("t", S("1_000"), XS + "integer")),
        (Literal("INF", datatype=XSD.double, normalize=False), C("t", S("INF"), XS + "double")),
        (Literal("1e400", datatype=XSD.double, normalize=False), C("t", S("1e400"), XS + "double")),
        (Literal("2023-02-29", datatype=XSD.date, normalize=False), C("t", S("2023-02-29"), XS + "date")),
        (Literal("P1D", datatype=XSD.yearMonthDuration, normalize=False),
         C("t", S("P1D"), XS + "yearMonthDuration")),
        (Literal("yes", datatype=XSD.boolean, normalize=False), C("t", S("yes"), XS + "boolean")),
    ]


@pytest.mark.parametrize("node, expected", ENCODE_CASES, ids=lambda x: repr(x)[:60])
def test_encode_classes(node, expected) -> None:
    got = encode(node)
    assert strict(got) == strict(expected)
    back = decode(got)
    if node.__class__ is Literal and node.datatype == XSD.string:
        assert same_term(back, Literal(str(node)))      # the same RDF 1.1 term
    else:
        assert same_term(back, node)


def test_encode_python_valued_literals() -> None:
    """Literals made from Python values (rdflib picks the lexical form)."""
    for value in [5, -3, 1.5, True, Decimal("2.50"), dtm.date(2024, 1, 2),
                  dtm.datetime(2024, 1, 1, 12, 30, tzinfo=dtm.timezone.utc),
                  "text", 10**30]:
        lit = Literal(value)
        assert same_term(decode(encode(lit)), lit), lit


def test_encode_rejects_non_terms() -> None:
    for bad in [None, 5, 1.5, object(), "http://ex/a-plain-str"]:
        with pytest.raises(TypeError):
            encode(bad)


def test_decode_special_values() -> None:
    assert decode(None) is None
    assert decode("$error") is None
    assert same_term(decode(7), Literal("7", datatype=XSD.integer))
    assert decode(2.5) == Literal(2.5)
    assert same_term(decode(S("x")), Literal("x"))
    assert decode(C("b", "x")) == BNode("x")
    with pytest.raises(ValueError):
        decode(C("foo", 1))
    with pytest.raises(ValueError):
        decode([1, 2])


def test_decode_keeps_lexical_forms() -> None:
    """decode() never normalises (rdflib would turn "01" into "1")."""
    lit = decode(C("n", 1, XS + "integer", S("01")))
    assert str(lit) == "01" and lit.datatype == XSD.integer
    lit = decode(C("t", S("NaN"), XS + "double"))
    assert str(lit) == "NaN"


# ---------------------------------------------------------------------------
# round-trip properties

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
langs = st.from_regex(r"[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8}){0,2}", fullmatch=True)
datatypes = st.sampled_from([XSD.integer, XSD.decimal, XSD.double, XSD.float, XSD.boolean,
                             XSD.dateTime, XSD.date, XSD.duration, XSD.byte, XSD.string,
                             XSD.dayTimeDuration, URIRef("http://ex/dt")])


def roundtrip(lit: Literal) -> None:
    enc = encode(lit)
    assert same_term(decode(enc), lit if lit.datatype != XSD.string else Literal(str(lit)))
    assert strict(encode(decode(enc))) == strict(enc)    # decode is exact


@settings(max_examples=300, deadline=None)
@given(texts)
def test_roundtrip_simple_strings(s: str) -> None:
    roundtrip(Literal(s))


@settings(max_examples=200, deadline=None)
@given(texts, langs)
def test_roundtrip_lang_strings(s: str, lang: str) -> None:
    lit = Literal(s, lang=lang)
    enc = encode(lit)
    assert enc.args[1] == lang.lower()
    roundtrip(lit)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, datatypes)
def test_roundtrip_any_lexical_form(s: str, dt: URIRef) -> None:
    """Arbitrary text as any datatype: well- or ill-typed, it comes back."""
    roundtrip(Literal(s, datatype=dt, normalize=False))


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-10**40, max_value=10**40))
def test_integers(i: int) -> None:
    enc = encode(Literal(str(i), datatype=XSD.integer))
    assert strict(enc) == strict(i)                    # canonical: the bare integer
    roundtrip(Literal(str(i), datatype=XSD.integer))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_doubles(f: float) -> None:
    lit = Literal(repr(f), datatype=XSD.double, normalize=False)
    enc = encode(lit)
    if canonical_double(f, repr(f)):                    # the bare float
        assert strict(enc) == strict(f) and (f == 0 or 1e-4 <= abs(f) < 1e15)
        assert "e" not in repr(f) and repr(f) != "-0.0"
    else:
        assert enc.name == "n" and strict(enc.args[0]) == strict(f)
    roundtrip(lit)


@pytest.mark.parametrize("lex", ["INF", "-INF", "NaN", "inf", "nan", "1e999"])
def test_non_finite_doubles_are_generic(lex: str) -> None:
    lit = Literal(lex, datatype=XSD.double, normalize=False)
    assert strict(encode(lit)) == strict(C("t", S(lex), XS + "double"))
    roundtrip(lit)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 12).flatmap(
    lambda places: st.decimals(allow_nan=False, allow_infinity=False, places=places)))
def test_decimals(d: Decimal) -> None:
    lex = format(d, "f")
    lit = Literal(lex, datatype=XSD.decimal, normalize=False)
    enc = encode(lit)
    assert enc.name == "n" and enc.args[0] == float(lex) and enc.args[2] == lex
    roundtrip(lit)


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=dtm.datetime(1, 1, 1), max_value=dtm.datetime(9999, 12, 30),
                    timezones=st.sampled_from([None, dtm.timezone.utc,
                                               dtm.timezone(dtm.timedelta(hours=5, minutes=30)),
                                               dtm.timezone(dtm.timedelta(hours=-14))])))
def test_datetimes_against_python(when: dtm.datetime) -> None:
    """The calendar arithmetic agrees with the standard library."""
    lex = when.isoformat()
    lit = Literal(lex, datatype=XSD.dateTime, normalize=False)
    enc = encode(lit)
    aware = when if when.tzinfo else when.replace(tzinfo=dtm.timezone.utc)
    epoch = dtm.datetime(1970, 1, 1, tzinfo=dtm.timezone.utc)
    delta = aware - epoch
    expected = float(Decimal(delta.days * 86400 + delta.seconds) + Decimal(delta.microseconds) / 10**6)
    assert enc.name == "d" and enc.args[0] == expected, lex
    roundtrip(lit)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 400), st.integers(0, 48),
       st.integers(0, 120), st.integers(0, 10**6), st.booleans())
def test_durations(y: int, mo: int, d: int, h: int, mi: int, ms: int, neg: bool) -> None:
    secs = f"{ms // 1000}.{ms % 1000:03d}"
    lex = f"{'-' if neg else ''}P{y}Y{mo}M{d}DT{h}H{mi}M{secs}S"
    enc = encode(Literal(lex, datatype=XSD.duration, normalize=False))
    whole = (((y * 365 + mo * 30 + d) * 24 + h) * 60 + mi) * 60
    exact = Decimal(whole) + Decimal(ms) / 1000
    value = enc.args[0]
    if ms % 1000 == 0:
        assert type(value) is int and value == (-1 if neg else 1) * (whole + ms // 1000)
    else:
        assert value == float(-exact if neg else exact)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(min_value=-1e11, max_value=1e11, allow_nan=False),
                 st.integers(-10**11, 10**11)))
def test_seconds_helpers_are_consistent(t: float) -> None:
    """The helpers' lexical forms encode back to the very same terms."""
    d = encode_seconds_as_datetime(t)
    assert d.args[0] == float(t) and str(d.args[2]).endswith("Z")
    assert strict(encode(decode(d))) == strict(d)
    du = encode_seconds_as_duration(t)
    assert du.args[0] == t and (type(du.args[0]) is int) == float(t).is_integer()
    assert strict(encode(decode(du))) == strict(du)


def test_seconds_helpers_forms() -> None:
    assert str(encode_seconds_as_datetime(0).args[2]) == "1970-01-01T00:00:00Z"
    assert str(encode_seconds_as_datetime(1704067200.5).args[2]) == "2024-01-01T00:00:00.5Z"
    assert str(encode_seconds_as_datetime(-1).args[2]) == "1969-12-31T23:59:59Z"
    assert [str(encode_seconds_as_duration(s).args[2]) for s in (90, 2592000, 1.5, 0, -90061.25)] == \
        ["PT1M30S", "P30D", "PT1.5S", "PT0S", "-P1DT1H1M1.25S"]
    for bad in (math.inf, math.nan):
        with pytest.raises(ValueError):
            encode_seconds_as_datetime(bad)
        with pytest.raises(ValueError):
            encode_seconds_as_duration(bad)
    with pytest.raises(TypeError):
        encode_seconds_as_duration("90")


# ---------------------------------------------------------------------------
# the codec and sparql_eval.pl build the same terms

RULES = """
lit_out(L, D, T) <- lit_in(L, D) where sparql_eval:sparql_typed_literal(L, D, T).
dt_out(S, T) <- secs(S) where sparql_eval:sparql_seconds_datetime(S, T).
dur_out(S, T) <- secs(S) where sparql_eval:sparql_seconds_duration(S, T).
out(S, P, O) <- triple(S, P, O).
"""


@pytest.fixture(scope="module")
def sparql_engine():
    runtime().consult(PROLOG_DIR / "sparql_eval.pl")
    eng = CoreEngine()
    eng.add_rules(RULES)
    yield eng
    eng.close()


def lexical_corpus(seed: int = 7, n: int = 300) -> list[tuple[str, str]]:
    """Edge cases and random lexical forms for every datatype with rules."""
    rnd = random.Random(seed)
    cases = [
        ("42", "integer"), ("+42", "integer"), ("-0", "integer"), ("007", "integer"),
        ("", "integer"), ("1.0", "integer"), ("\u0661\u0662", "integer"), ("1_0", "integer"),
        ("128", "byte"), ("-128", "byte"), ("18446744073709551615", "unsignedLong"),
        ("-1", "unsignedInt"), ("0", "positiveInteger"), ("0", "nonPositiveInteger"),
        ("1.50", "decimal"), (".5", "decimal"), ("5.", "decimal"), ("-.5", "decimal"),
        ("+0.0", "decimal"), ("-0", "decimal"), ("1" + "0" * 400, "decimal"), (".", "decimal"),
        ("1e5", "double"), ("1E-5", "double"), (".5e1", "double"), ("INF", "double"),
        ("-INF", "double"), ("NaN", "double"), ("inf", "double"), ("1e400", "double"),
        ("-1e400", "double"), ("1e-400", "double"), ("-0", "double"), ("0e99999", "double"),
        ("4.9e-324", "double"), ("1.7976931348623157e308", "double"), ("1.7976931348623159e308", "double"),
        ("0.1", "float"), ("1e", "double"), ("true", "boolean"), ("0", "boolean"), ("yes", "boolean"),
        ("2024-02-29T00:00:00Z", "dateTime"), ("2023-02-29T00:00:00Z", "dateTime"),
        ("2024-01-01T24:00:00Z", "dateTime"), ("2024-01-01T24:00:00.000Z", "dateTime"),
        ("2024-01-01T24:00:00.1Z", "dateTime"), ("2024-01-01T00:00:00+14:00", "dateTime"),
        ("2024-01-01T00:00:00-14:01", "dateTime"), ("0000-01-01T00:00:00Z", "dateTime"),
        ("-0001-03-01T00:00:00", "dateTime"), ("-10000-01-01T00:00:00Z", "dateTime"),
        ("123456789-01-01T00:00:00Z", "dateTime"), ("2024-01-01T00:00:00.123456789123Z", "dateTime"),
        ("2024-01-01T00:00:00", "dateTimeStamp"), ("2024-01-01T00:00:00Z", "dateTimeStamp"),
        ("2024-01-01", "date"), ("2024-01-01-05:00", "date"), ("2024-1-1", "date"),
        ("P1Y", "duration"), ("P1M", "duration"), ("-PT1.5S", "duration"), ("PT1.S", "duration"),
        ("PT.5S", "duration"), ("P", "duration"), ("PT", "duration"), ("P1YT", "duration"),
        ("PT1.000S", "duration"), ("P1Y", "dayTimeDuration"), ("P1DT1H", "dayTimeDuration"),
        ("P1Y2M", "yearMonthDuration"), ("P1D", "yearMonthDuration"),
        ("P99999999999999999999DT0.1S", "duration"), ("plain", "string"),
    ]
    digits = "0123456789"
    for _ in range(n):
        kind = rnd.choice(["int", "dec", "dbl", "dt", "date", "dur", "junk"])
        sign = rnd.choice(["", "", "-", "+"])
        ip = "".join(rnd.choice(digits) for _ in range(rnd.randint(0, 25)))
        fp = "".join(rnd.choice(digits) for _ in range(rnd.randint(0, 25)))
        if kind == "int":
            cases.append((sign + ip, rnd.choice(["integer", "long", "int", "short", "byte",
                                                 "unsignedByte", "negativeInteger"])))
        elif kind == "dec":
            cases.append((f"{sign}{ip}.{fp}" if rnd.random() < 0.8 else sign + ip, "decimal"))
        elif kind == "dbl":
            exp = rnd.choice(["", f"e{rnd.randint(-330, 330)}", f"E+{rnd.randint(0, 400)}"])
            cases.append((f"{sign}{ip}.{fp}{exp}", rnd.choice(["double", "float"])))
        elif kind in ("dt", "date"):
            y = rnd.choice([rnd.randint(1, 9999), rnd.randint(-3000, 3000), rnd.randint(10000, 99999)])
            year = f"-{-y:04d}" if y < 0 else f"{y:04d}"
            tz = rnd.choice(["", "Z", f"+{rnd.randint(0, 15):02d}:{rnd.choice([0, 30, 45, 60]):02d}",
                             f"-{rnd.randint(0, 14):02d}:00"])
            date = f"{year}-{rnd.randint(0, 13):02d}-{rnd.randint(0, 32):02d}"
            if kind == "dt":
                frac = rnd.choice(["", "." + fp[:9] if fp else ""])
                cases.append((f"{date}T{rnd.randint(0, 24):02d}:{rnd.randint(0, 60):02d}:"
                               f"{rnd.randint(0, 60):02d}{frac}{tz}", rnd.choice(["dateTime", "dateTimeStamp"])))
            else:
                cases.append((date + tz, "date"))
        elif kind == "dur":
            parts = ["P"]
            for letter in "YMD":
                if rnd.random() < 0.4:
                    parts.append(f"{rnd.randint(0, 500)}{letter}")
            if rnd.random() < 0.7:
                parts.append("T")
                for letter in "HM":
                    if rnd.random() < 0.4:
                        parts.append(f"{rnd.randint(0, 100)}{letter}")
                if rnd.random() < 0.5:
                    parts.append(f"{ip[:6] or '0'}{'.' + fp[:6] if rnd.random() < 0.5 else ''}S")
            cases.append((("-" if sign == "-" else "") + "".join(parts),
                          rnd.choice(["duration", "dayTimeDuration", "yearMonthDuration"])))
        else:
            junk = "".join(rnd.choice("0123456789.eE+-:TZPYMDHS ") for _ in range(rnd.randint(0, 12)))
            cases.append((junk, rnd.choice(["integer", "decimal", "double", "dateTime", "date",
                                            "duration", "boolean"])))
    return cases


def prolog_encodings(engine: CoreEngine, cases: list[tuple[str, str]]) -> list[Any]:
    engine.push_many([(term("lit_in", PlString(lex), XS + dt), i) for i, (lex, dt) in enumerate(cases)])
    got = {}
    for d in engine.drain():
        if d.event.name == "lit_out":
            lex, dt, t = d.event.args
            got[(str(lex), dt)] = t
    return [got.get((lex, XS + dt)) for lex, dt in cases]


def test_codec_agrees_with_prolog(sparql_engine) -> None:
    engine = sparql_engine
    engine.clear_state()
    cases = lexical_corpus()
    prolog = prolog_encodings(engine, cases)
    bad = []
    for (lex, dt), pt in zip(cases, prolog):
        py = encode(Literal(lex, datatype=URIRef(XS + dt), normalize=False))
        if strict(py) != strict(pt):
            bad.append((lex, dt, py, pt))
    assert not bad, bad[:10]
    kinds = {getattr(pt, "name", type(pt).__name__) for pt in prolog}
    assert kinds >= {"n", "d", "dur", "bool", "s", "t", "int", "float"}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
                          | st.from_regex(r"-?[0-9]{1,20}(\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
                          st.sampled_from(["integer", "decimal", "double", "float", "byte",
                                           "boolean", "dateTime", "date", "duration"])),
                min_size=1, max_size=20))
def test_codec_agrees_with_prolog_property(sparql_engine, cases) -> None:
    sparql_engine.clear_state()
    cases = list(dict.fromkeys(cases))
    prolog = prolog_encodings(sparql_engine, cases)
    for (lex, dt), pt in zip(cases, prolog):
        py = encode(Literal(lex, datatype=URIRef(XS + dt), normalize=False))
        assert strict(py) == strict(pt), (lex, dt)


def test_seconds_helpers_agree_with_prolog(sparql_engine) -> None:
    engine = sparql_engine
    engine.clear_state()
    rnd = random.Random(3)
    values: list[float | int] = [0, 1, -1, 90, 2592000, 1.5, -0.25, 1704067200.5, 1e-7,
                                 1700000000.3, 951782400, -62167219201, 253402300800,
                                 123456.789, 0.1 + 0.2, 86399.999999]
    values += [rnd.uniform(-1e10, 1e10) for _ in range(200)]
    values += [rnd.randint(-10**10, 10**10) for _ in range(100)]
    engine.push_many([(term("secs", v), i) for i, v in enumerate(values)])
    dts, durs = {}, {}
    for d in engine.drain():
        (dts if d.event.name == "dt_out" else durs)[repr(d.event.args[0])] = d.event.args[1]
    for v in values:
        assert strict(dts[repr(v)]) == strict(encode_seconds_as_datetime(v)), v
        assert strict(durs[repr(v)]) == strict(encode_seconds_as_duration(v)), v


# ---------------------------------------------------------------------------
# encoded terms through the event core

STREAM = [
    URIRef("http://ex/s"), BNode("node1"), Literal("plain"), Literal("it's \"quoted\"\\ \n\t"),
    Literal("caf\u00e9 \U0001F600", lang="fr"), Literal("42", datatype=XSD.integer),
    Literal("007", datatype=XSD.int, normalize=False), Literal("1.50", datatype=XSD.decimal, normalize=False),
    Literal("-0", datatype=XSD.double, normalize=False), Literal("1e-300", datatype=XSD.double, normalize=False),
    Literal("NaN", datatype=XSD.double, normalize=False), Literal("true", datatype=XSD.boolean),
    Literal("2024-01-01T00:00:00.5+02:00", datatype=XSD.dateTime, normalize=False),
    Literal("P30D", datatype=XSD.duration), Literal("abc", datatype=XSD.integer),
    Literal("x", datatype=URIRef("http://ex/dt")), Literal("\x00nul"),
    Literal(str(10**30), datatype=XSD.integer),
]


def test_terms_pass_through_the_core(sparql_engine) -> None:
    engine = sparql_engine
    engine.clear_state()
    s, p = URIRef("http://ex/s"), URIRef("http://ex/p")
    events = [(term("triple", encode(s), encode(p), encode(o)), i) for i, o in enumerate(STREAM)]
    got = [d for d in engine.push_many(events) if d.event.name == "out"]
    assert len(got) == len(STREAM)
    for d, o in zip(got, STREAM):
        ds, dp, do = (decode(a) for a in d.event.args)
        assert same_term(ds, s) and same_term(dp, p)
        assert same_term(do, o), (do, o)
        assert strict(d.event.args[2]) == strict(encode(o))


def test_join_by_unification_is_term_equality(make_engine) -> None:
    """Equal encodings join; a different lexical form of the same value
    does not (it is a different RDF term)."""
    runtime().consult(PROLOG_DIR / "sparql_eval.pl")
    eng = make_engine()
    eng.add_rules("pair(X) <- a(X) seq b(X).")
    one = encode(Literal("1", datatype=XSD.integer))
    one_again = encode(Literal("1", datatype=XSD.integer))
    zero_one = encode(Literal("01", datatype=XSD.integer, normalize=False))
    got = eng.push_many([(term("a", one), 1), (term("b", one_again), 2), (term("b", zero_one), 3)])
    assert [strict(d.event.args[0]) for d in got] == [strict(one)]


def test_filters_through_the_core(make_engine) -> None:
    """A FILTER as the compiler writes it: numeric comparison across types,
    string functions, errors dropping the solution, GETDURATION on the span."""
    runtime().consult(PROLOG_DIR / "sparql_eval.pl")
    eng = make_engine()
    ten = to_prolog(encode(Literal(10)))
    month = to_prolog(encode(Literal("P30D", datatype=XSD.duration)))
    eng.add_rules(f"""
        big(O) <- triple(_, _, O) where sparql_eval:sparql_true(gt(var(O), const({ten}))).
        en(O) <- triple(_, _, O) where sparql_eval:sparql_true(call('LANGMATCHES', [call('LANG', [var(O)]), const(s("en"))])).
        short(A, B) <- span(triple(A, _, _) seq triple(B, _, _), S, E)
                       where sparql_eval:sparql_true(lt(call('GETDURATION', [S, E]), const({month}))).
    """)
    objs = [Literal(11), Literal("10.5", datatype=XSD.decimal), Literal(9.5), Literal("12", datatype=XSD.byte),
            Literal("abc"), Literal("hi", lang="en-GB"), Literal("abc", datatype=XSD.integer),
            URIRef("http://ex/o")]
    events = [(term("triple", f"http://ex/s{i}", "http://ex/p", encode(o)), i * 86400 * 10)
              for i, o in enumerate(objs)]
    got = eng.push_many(events)
    big = [decode(d.event.args[0]) for d in got if d.event.name == "big"]
    assert [str(x) for x in big] == ["11", "10.5", "12"]
    assert [str(decode(d.event.args[0])) for d in got if d.event.name == "en"] == ["hi"]
    short = {(d.event.args[0], d.event.args[1]) for d in got if d.event.name == "short"}
    assert ("http://ex/s0", "http://ex/s2") in short          # 20 days apart
    assert ("http://ex/s0", "http://ex/s3") not in short      # 30 days: not shorter
    assert eng.errors == []


def test_sparql_eval_results_decode(make_engine) -> None:
    """SELECT expressions: results (and errors as unbound) come back decoded."""
    runtime().consult(PROLOG_DIR / "sparql_eval.pl")
    eng = make_engine()
    eng.add_rules("""
        r(X, V) <- v(X) where sparql_eval:sparql_eval(mul(var(X), const(n(3, 'http://www.w3.org/2001/XMLSchema#integer', "3"))), V).
        c(V) <- v(X) where sparql_eval:sparql_eval(call('CONCAT', [call('STR', [var(X)]), const(l("!", en))]), V).
    """)
    xs = [Literal("1.1", datatype=XSD.decimal), Literal(2),
          Literal("2.5E0", datatype=XSD.double, normalize=False), Literal("a")]
    got = eng.push_many([(term("v", encode(x)), i) for i, x in enumerate(xs)])
    r = [decode(d.event.args[1]) for d in got if d.event.name == "r"]
    assert same_term(r[0], Literal("3.3", datatype=XSD.decimal))
    assert same_term(r[1], Literal("6", datatype=XSD.integer))
    assert same_term(r[2], Literal("7.5E0", datatype=XSD.double, normalize=False))
    assert r[3] is None                                          # "a" * 3: error -> unbound
    c = [decode(d.event.args[0]) for d in got if d.event.name == "c"]
    assert [str(x) for x in c] == ["1.1!", "2!", "2.5E0!", "a!"]
    assert all(x.language is None for x in c)                    # mixed kinds: simple literal
