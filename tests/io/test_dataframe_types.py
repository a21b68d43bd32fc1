"""``to_dataframe`` column types (issue 17, finding 2), on generated answers.

A plain reference says which dtype a column of values must get and what
each cell must hold; hypothesis generates columns of literals of every
kind (integers, decimals, doubles, booleans, dateTimes with and without a
timezone, durations, strings, IRIs, blank nodes), unbound cells and
answer times, and the DataFrame must agree cell by cell.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import BNode, Literal, URIRef

from epsparql import Answer, Engine
from epsparql.io import to_dataframe

XSD = "http://www.w3.org/2001/XMLSchema#"

ints = st.integers(-2**70, 2**70).map(Literal)
small_ints = st.integers(-10**6, 10**6).map(Literal)
decimals = st.decimals(-10**6, 10**6, places=3, allow_nan=False,
                       allow_infinity=False).map(lambda d: Literal(d, datatype=URIRef(XSD + "decimal")))
doubles = st.floats(-1e9, 1e9, allow_nan=False).map(Literal)
bools = st.booleans().map(Literal)
naive = st.datetimes(datetime(1970, 1, 2), datetime(2200, 1, 1))
aware = st.datetimes(datetime(1970, 1, 2), datetime(2200, 1, 1),
                     timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=2)),
                                                timezone(timedelta(hours=-5))]))
datetimes = st.one_of(naive, aware).map(
    lambda d: Literal(d.isoformat(), datatype=URIRef(XSD + "dateTime")))
durations = st.integers(0, 10**6).map(
    lambda s: Literal(f"PT{s}S", datatype=URIRef(XSD + "dayTimeDuration")))
strings = st.text(max_size=5).map(Literal)
iris = st.integers(0, 9).map(lambda i: URIRef(f"http://ex/{i}"))
blanks = st.integers(0, 9).map(lambda i: BNode(f"b{i}"))
KINDS = [ints, small_ints, decimals, doubles, bools, datetimes, durations, strings, iris, blanks]


def column(kinds):
    """A column: values of one kind or of several, some cells unbound."""
    return st.lists(st.one_of(st.none(), *kinds), min_size=1, max_size=8)


columns = st.one_of(*(column([k]) for k in KINDS), column(KINDS),
                    column([small_ints, decimals, doubles]), column([ints, small_ints]))
times = st.one_of(st.integers(-10**9, 10**10), st.floats(0, 1e9, allow_nan=False))


def python(node):
    """The reference's Python value of a term (to_dataframe's values="python")."""
    if isinstance(node, BNode):
        return "_:" + str(node)
    if isinstance(node, URIRef):
        return str(node)
    v = node.toPython()
    if isinstance(v, Decimal):              # decimals are floats in every column
        return float(v)
    if isinstance(v, datetime):             # dateTimes in UTC (none given: UTC)
        return v.replace(tzinfo=timezone.utc) if v.tzinfo is None else v.astimezone(timezone.utc)
    return str(node) if v is None else v


def kind(v) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, (float, Decimal)):
        return "number"
    if isinstance(v, datetime):
        return "datetime"
    if isinstance(v, timedelta):
        return "timedelta"
    return "other"


def expected_dtype(values) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return "object"
    kinds = {kind(v) for v in present}
    missing = len(present) < len(values)
    if kinds == {"bool"}:
        return "boolean" if missing else "bool"
    if kinds == {"int"} and not missing and all(-2**63 <= v < 2**63 for v in present):
        return "int64"
    if kinds <= {"int", "number"}:
        return "float64"
    if kinds == {"datetime"}:
        return "datetime64[ns, UTC]"
    if kinds == {"timedelta"}:
        return "timedelta64[ns]"
    return "object"


def same_cell(got, want, dtype: str) -> bool:
    if want is None:
        return got is None or got is pd.NA or (isinstance(got, float) and math.isnan(got)) \
            or got is pd.NaT
    if dtype == "float64":
        return got == float(want)
    if dtype.startswith("datetime64"):
        w = pd.Timestamp(want)
        w = w.tz_localize("UTC") if w.tzinfo is None else w.tz_convert("UTC")
        return got == w
    if dtype.startswith("timedelta64"):
        return got == pd.Timedelta(want)
    return got == want and type(got) is type(want) if dtype == "object" else got == want


@settings(max_examples=300, deadline=None)
@given(st.lists(columns, min_size=1, max_size=3), st.data())
def test_each_column_gets_the_type_its_values_share(cols, data):
    n = min(len(c) for c in cols)
    cols = [c[:n] for c in cols]
    ts = [(data.draw(times), data.draw(times)) for _ in range(n)]
    answers = [Answer({f"v{j}": c[i] for j, c in enumerate(cols) if c[i] is not None},
                      ts[i][0], ts[i][1], (), "q") for i in range(n)]
    df = to_dataframe(answers, variables=[f"v{j}" for j in range(len(cols))])
    whole = all(isinstance(t, int) or float(t).is_integer() for pair in ts for t in pair)
    for c in ("start", "end"):
        assert str(df[c].dtype) == ("int64" if whole else "float64")
        assert list(df[c]) == [p[0 if c == "start" else 1] for p in ts]
    for j, c in enumerate(cols):
        want = [None if x is None else python(x) for x in c]
        dtype = expected_dtype(want)
        assert str(df[f"v{j}"].dtype) == dtype, (want, df[f"v{j}"])
        for got, w in zip(df[f"v{j}"].tolist(), want):
            assert same_cell(got, w, dtype), (got, w, dtype)


def test_datetimes_keep_their_microseconds_far_from_the_epoch():
    """The codec's seconds are a float, which past ~2100 holds less than a
    microsecond: the typed columns read a dateTime from its lexical form
    (found by hypothesis: 2106-03-01T00:00:00.000233 came back ...232)."""
    dt = URIRef(XSD + "dateTime")
    lex = ["2106-03-01T00:00:00.000233", "2199-12-31T23:59:59.999999+02:00", "1970-01-02T00:00:00Z"]
    answers = [Answer({"v": Literal(x, datatype=dt)}, 0, 0, (), "q") for x in lex]
    want = [datetime.fromisoformat(x.replace("Z", "+00:00")) for x in lex]
    want = [w.replace(tzinfo=timezone.utc) if w.tzinfo is None else w for w in want]
    df = to_dataframe(answers, variables=["v"])
    assert [t.to_pydatetime() for t in df["v"]] == want
    assert to_dataframe(answers, variables=["v"], values="python")["v"].tolist() == \
        [pd.Timestamp(w) for w in want]


def test_times_as_datetimes_and_the_engine_path():
    """The issue's case through a real engine: decimals as float64, whole
    times as int64, dateTimes as datetime64 in UTC."""
    e = Engine()
    try:
        q = e.register("SELECT ?v ?w WHERE { ?s <http://ex/p> ?v . ?s <http://ex/q> ?w }")
        s = URIRef("http://ex/s")
        e.push_many([(s, URIRef("http://ex/p"), Literal(Decimal("1.25")), 10, 20),
                     (s, URIRef("http://ex/q"), Literal("2024-05-01T10:00:00+02:00",
                                                       datatype=URIRef(XSD + "dateTime")), 20)])
        e.flush()
        df = q.to_dataframe()
        assert str(df["start"].dtype) == "int64" and str(df["end"].dtype) == "int64"
        assert str(df["v"].dtype) == "float64" and df["v"][0] == 1.25
        assert str(df["w"].dtype) == "datetime64[ns, UTC]"
        assert df["w"][0] == pd.Timestamp("2024-05-01T08:00:00Z")
        assert str(q.to_dataframe(times="datetime")["start"].dtype) == "datetime64[ns, UTC]"
        f = Engine()
        q = f.register("SELECT ?v WHERE { ?s <http://ex/p> ?v }")
        f.push_many([(s, URIRef("http://ex/p"), Literal(3), 30, 40.5)])
        f.flush()
        df = q.to_dataframe(times="datetime")
        assert str(df["start"].dtype) == "datetime64[ns, UTC]"
        assert df["start"][0] == pd.Timestamp(30, unit="s", tz="UTC")
        assert df["end"][0] == pd.Timestamp(40.5, unit="s", tz="UTC")
        f.close()
    finally:
        e.close()
