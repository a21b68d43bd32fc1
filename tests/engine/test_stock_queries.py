"""The paper's queries (1)-(3) and the downratedby CONSTRUCT rule over the
bundled stock data (examples/stock: prices.csv and ratings.nt), run as
examples/stock/run_sparql.py runs them: one engine, one merged stream.

The expected companies follow from what generate.py planted (crashes of
ACME day 120, GLOBEX 300, INITECH 450, HOOLI 600; rebounds all but
GLOBEX) and what ratings.nt holds (Moodys downrates GLOBEX, Fitch INITECH
and HOOLI, each before its crash; S&P upgrades ACME; one lone rating of
UMBRELLA).  The answer counts are checked against a brute-force reading
of each query over the price file (the stream is a set: one answer per
distinct solution and interval).
"""
from __future__ import annotations

import csv
import importlib.util
from collections import Counter, defaultdict
from datetime import datetime
from decimal import Decimal

import pytest
from rdflib import URIRef

from conftest import ROOT

STOCK = ROOT / "examples" / "stock"
NS = "http://epsparql.org/ns#"
DAY = 86400
START = 1_704_067_200          # 2024-01-01T00:00:00Z, day 0 of generate.py


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"stock_{name}", STOCK / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


run_sparql = _load("run_sparql")
generate = _load("generate")


def ts(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def day(n: float) -> int:
    return int(START + n * DAY)


def local(node) -> str:
    return str(node)[len(NS):]


@pytest.fixture(scope="module")
def results():
    return run_sparql.run(fixed3=True)


@pytest.fixture(scope="module")
def prices() -> dict[str, list[tuple[int, Decimal]]]:
    by: dict[str, list] = defaultdict(list)
    with (STOCK / "prices.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            by[row["company"]].append((int(row["time"]), Decimal(row["price"])))
    return by


# ratings.nt: the downratings (second rating of each pair), by company
DOWNRATED = {"GLOBEX": ("Moodys", ts("2024-09-07T12:00:00Z"), ts("2024-10-07T12:00:00Z")),
             "INITECH": ("Fitch", ts("2025-02-24T12:00:00Z"), ts("2025-03-16T12:00:00Z")),
             "HOOLI": ("Fitch", ts("2025-07-14T12:00:00Z"), ts("2025-08-13T12:00:00Z"))}


def test_downratedby_rule(results):
    got = {(local(a["company"]), local(a["ratingagency"]), a.start, a.end)
           for a in results["downratedby"]}
    assert got == {(c, agency, s, e) for c, (agency, s, e) in DOWNRATED.items()}
    assert len(results["downratedby"]) == 3       # ACME's upgrade and UMBRELLA's lone rating: none
    for a in results["downratedby"]:
        (triple,) = a.triples
        assert triple == (a["company"], URIRef(NS + "downratedby"), a["ratingagency"])
        crash_day = generate.PLANTED[local(a["company"])][0]
        assert a.end < day(crash_day)                  # before the planted crash


def test_query1_finds_the_rebounds(results, prices):
    got = Counter(local(a["company"]) for a in results["query1"])
    assert set(got) == {c for c, (_, rebound) in generate.PLANTED.items() if rebound} \
        == {"ACME", "INITECH", "HOOLI"}
    # brute force: price1, price2, price3 in this order, 2 < 0.7 * 1, 3 > 1.05 * 1, < 30 days
    want: Counter = Counter()
    for c, ps in prices.items():
        seen = set()
        for i, (t1, p1) in enumerate(ps):
            for j in range(i + 1, len(ps)):
                t2, p2 = ps[j]
                if t2 - t1 >= 30 * DAY:
                    break
                if p2 < p1 * Decimal("0.7"):
                    for t3, p3 in ps[j + 1:]:
                        if t3 - t1 >= 30 * DAY:
                            break
                        if p3 > p1 * Decimal("1.05"):
                            seen.add((p1, p2, p3, t1, t3))
        if seen:
            want[c] = len(seen)
    assert got == want
    for a in results["query1"]:
        assert a.end - a.start < 30 * DAY


def test_query2_drops_with_the_earlier_downrating(results, prices):
    got = Counter((local(a["company"]),
                   local(a["ratingagency"]) if "ratingagency" in a.bindings else None,
                   a.start, a.end) for a in results["query2"])
    assert {(c, agency) for c, agency, _, _ in got} == \
        {("GLOBEX", "Moodys"), ("GLOBEX", None), ("HOOLI", None)}
    # brute force: every later price below half of an earlier one; the
    # downrating is added when it ended before the first price (then the
    # answer starts with the downrating), else the drop occurs alone
    want = set()
    for c, ps in prices.items():
        down = DOWNRATED.get(c)
        for i, (t1, p1) in enumerate(ps):
            for t2, p2 in ps[i + 1:]:
                if p2 < p1 * Decimal("0.5"):
                    if down is not None and down[2] < t1:
                        want.add((c, down[0], p1, p2, down[1], t2))
                    else:
                        want.add((c, None, p1, p2, t1, t2))
    assert got == Counter((c, agency, s, e) for c, agency, _, _, s, e in want)
    # GLOBEX's drops that start after Moodys' downrating carry it; HOOLI's
    # drops start from its early-2024 prices, long before Fitch's downrating
    assert sum(n for (c, agency, _, _), n in got.items() if agency == "Moodys") == 4316
    assert sum(n for (c, _, _, _), n in got.items() if c == "HOOLI") == 44


def test_query3_as_printed_finds_nothing(results):
    # hasStockprice (lower-case p) is not the predicate of the price stream
    text = (STOCK / "query3.rq").read_text()
    assert "{ ?company hasStockprice ?price1 }" in text and "?price2 < ?price1 * 1.5" in text
    assert results["query3"] == []


def test_query3_corrected_finds_the_rebounds(results, prices):
    got = Counter(local(a["company"]) for a in results["query3_fixed"])
    want: Counter = Counter()
    for c, ps in prices.items():
        for i, (t1, p1) in enumerate(ps):
            for t2, p2 in ps[i + 1:]:
                if t2 - t1 >= 15 * DAY:
                    break
                if p2 > p1 * Decimal("1.5"):
                    want[c] += 1
    assert got == want
    assert set(got) == {"ACME", "INITECH", "HOOLI"}


def test_query3_corrected_an_acquisition_rules_a_company_out():
    # HOOLI acquires another company the day before its crash: every later
    # price has an earlier acquisition (the optional side of OPTIONALSEQ),
    # so ?othercompany is bound and !BOUND rejects HOOLI's rebound
    acq = (URIRef(NS + "HOOLI"), URIRef(NS + "hasAcquired"), URIRef(NS + "PIEDPIPER"),
           day(599) + 12 * 3600)
    res = run_sparql.run(fixed3=True, extra=[acq], only=["query3_fixed"])
    assert set(res) == {"query3_fixed"}
    assert {local(a["company"]) for a in res["query3_fixed"]} == {"ACME", "INITECH"}


def test_script_prints_the_answers_per_query(results, capsys, monkeypatch):
    monkeypatch.setattr(run_sparql, "run", lambda *a, **k: results)    # the same run
    assert run_sparql.main(["--fixed-query3"]) == 0
    out = capsys.readouterr().out
    for line in ("== downratedby", "== query1", "== query2", "== query3"):
        assert line in out
    assert "GLOBEX by Moodys" in out and "HOOLI (no earlier downrating)" in out
    assert "0 answers" in out and "hasStockprice" in out and "== query3_fixed" in out
