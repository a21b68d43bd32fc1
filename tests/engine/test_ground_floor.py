"""The ground floor the engine and io/ stand on: times.py (seconds, the
calendar, stream time text), memo.py (the bounded caches) and prepare.py
(a query through every stage, once)."""
from __future__ import annotations

import warnings
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epsparql import Engine, QuerySyntaxError
from epsparql.algebra import optimise, translate
from epsparql.language import parse_query
from epsparql.memo import BoundedCache, Memo
from epsparql.prepare import prepare
from epsparql.times import (civil_from_days, date_days, days_from_civil, format_time,
                            parse_time, seconds, tz_offset)

EPOCH = date(1970, 1, 1)


@given(st.dates())
def test_calendar_agrees_with_python(d):
    days = (d - EPOCH).days
    assert days_from_civil(d.year, d.month, d.day) == days
    assert date_days(d.year, d.month, d.day) == days
    assert civil_from_days(days) == (d.year, d.month, d.day)


@given(st.integers(-800_000, 800_000))
def test_civil_from_days_inverts_days_from_civil(z):
    assert days_from_civil(*civil_from_days(z)) == z


def test_dates_that_do_not_exist():
    assert date_days(2023, 2, 29) is None and date_days(2024, 2, 29) is not None
    assert date_days(1900, 2, 29) is None and date_days(2000, 2, 29) is not None
    assert date_days(2024, 13, 1) is None and date_days(2024, 4, 31) is None
    assert tz_offset("+14:00") == 14 * 3600 and tz_offset("-05:30") == -(5 * 3600 + 1800)
    assert tz_offset("+14:01") is None and tz_offset("Z") == 0 and tz_offset(None) == 0


@settings(max_examples=300)
@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30)),
       st.sampled_from(["Z", "+02:00", "-11:30", ""]))
def test_parse_time_agrees_with_datetime(dt, tz):
    dt = dt.replace(microsecond=0)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0") + tz
    offset = {"Z": 0, "": 0, "+02:00": 7200, "-11:30": -41400}[tz]
    want = (dt - datetime(1970, 1, 1)) // timedelta(seconds=1) - offset
    assert parse_time(text) == want
    if tz in ("Z", "") and dt.year >= 1970:
        assert format_time(want, "iso") == dt.strftime("%Y-%m-%dT%H:%M:%S") + "Z"


def test_times_as_numbers_and_datetimes():
    assert parse_time(" 12.5 ") == 12.5 and parse_time("3.0") == 3 and parse_time("-2") == -2
    assert format_time(3.0) == "3" and format_time(0.1) == "0.1"
    assert seconds(datetime(1970, 1, 2, tzinfo=timezone.utc)) == 86400
    assert seconds(datetime(1970, 1, 2)) == 86400              # naive: UTC
    for bad in ("nan", "inf", "2024-02-30T00:00:00Z", "2024-01-01T25:00:00Z", "soon"):
        with pytest.raises(ValueError):
            parse_time(bad)
    with pytest.raises(TypeError):
        seconds("12")
    with pytest.raises(ValueError):
        seconds(float("inf"))


@given(st.lists(st.integers(0, 50), max_size=400), st.integers(1, 20))
def test_bounded_cache_never_grows_past_its_limit(keys, limit):
    c = BoundedCache(limit)
    for k in keys:
        if c.get(k) is None:
            assert c.put(k, k * 2) == k * 2
        assert len(c) <= limit and c[k] == k * 2


def test_memo_computes_once_per_argument_until_full():
    calls = []
    m = Memo(lambda x: calls.append(x) or x + 1, limit=3)
    assert [m[1], m[1], m[2], m[1]] == [2, 2, 3, 2] and calls == [1, 2]
    m[3], m[4]                                   # the fourth entry empties the table first
    assert len(m) <= 3 and calls == [1, 2, 3, 4]


QUERY = """PREFIX ex: <http://example.org/ns#>
SELECT ?s ?a ?b WHERE { ?s ex:p ?a } SEQ { ?s ex:p ?b }
FILTER (?b > ?a && getDURATION() < "PT1H"^^xsd:duration)"""


def test_a_query_is_prepared_once_and_keeps_every_stage():
    p = prepare(QUERY, qid=7, name="rise")
    assert p.syntax == parse_query(QUERY)
    alg = translate(parse_query(QUERY))
    assert p.algebra.pattern == optimise(alg.pattern) and p.algebra.form == "SELECT"
    assert p.compiled.head == "sparql_q7" and "seq" in p.compiled.rules
    assert p.key.variable == "s" and p.prefixes["ex"] == "http://example.org/ns#"
    with Engine() as eng, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = eng.register(QUERY, name="rise")
        assert q.algebra == p.algebra and q.prepared.syntax == p.syntax
        assert q.compiled.variables == p.compiled.variables and q.compiled.head == "sparql_q1"
        assert [k.variable for k in eng.partitioning().queries] == ["s"]


def test_preparing_a_bad_query_names_line_and_column():
    with pytest.raises(QuerySyntaxError) as e:
        prepare("SELECT ?x WHERE {\n  ?x ?y\n}", qid=1)
    assert e.value.line == 3
