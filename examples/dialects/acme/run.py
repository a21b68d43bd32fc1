"""The ACME sliding average of the stock example, as a C-SPARQL window.

    .venv/bin/python examples/dialects/acme/run.py

examples/stock/prices.csv (two years of daily closing prices) as the
stock example pushes it (``:ACME :hasStockPrice price``, average.rq) and
as quotes (one node per day, average_quotes.rq), each on its own stream;
every day, the average over the last 10 days.  EP-SPARQL's running-sum
rule (examples/acme) stops ten days after its seed: a window of the
stream dialects slides.
"""
from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from epsparql import Engine

HERE = Path(__file__).resolve().parent
PRICES_CSV = HERE.parent.parent / "stock" / "prices.csv"
NS = "http://epsparql.org/ns#"
PRICES, QUOTES = "http://epsparql.org/streams/prices", "http://epsparql.org/streams/quotes"
DAY = 86400


def acme() -> list[tuple[int, Decimal]]:
    """(midnight in seconds, closing price) of ACME, in time order."""
    with PRICES_CSV.open(newline="") as f:
        return [(int(r["time"]), Decimal(r["price"])) for r in csv.DictReader(f)
                if r["company"] == "ACME"]


def rows(days):
    acme_, has, company, price = (URIRef(NS + n) for n in ("ACME", "hasStockPrice", "company", "price"))
    for t, p in days:
        lit = Literal(p, datatype=XSD.decimal)
        yield (acme_, has, lit, t, None, PRICES)
        quote = URIRef(f"{NS}quote-ACME-{t // DAY}")
        yield (quote, company, acme_, t, None, QUOTES)
        yield (quote, price, lit, t, None, QUOTES)


def run() -> dict[str, list]:
    with Engine() as engine:
        qs = [engine.register((HERE / f).read_text(), name=n)
              for f, n in (("average.rq", "prices"), ("average_quotes.rq", "quotes"))]
        engine.push_many(rows(acme()))
        engine.flush()
        return {q.name: q.results() for q in qs}


def rolling(days, distinct: bool) -> list[tuple[int, Decimal, int]]:
    """Every midnight's (close, mean, count) over the prices of the 10 days
    before it (C-SPARQL's windows [c - 10 days, c), reported at their close
    c, t0 = 0), each distinct price once with ``distinct``: from the first
    close after the first day to the last window opened by the last day."""
    out = []
    t = days[0][0] + DAY
    while t - 10 * DAY <= days[-1][0]:
        window = [p for s, p in days if t - 10 * DAY <= s < t]
        if distinct:
            window = list(set(window))
        if window:
            out.append((t, sum(window) / len(window), len(window)))
        t += DAY
    return out


def main() -> dict[str, list]:
    res = run()
    prices = {int(a.end): a for a in res["prices"]}
    quotes = {int(a.end): a for a in res["quotes"]}
    days = sorted(quotes)
    differ = [t for t in days if float(prices[t]["average"]) != float(quotes[t]["average"])]
    print(f"{len(days)} days; the 10-day average of ACME's closing price:")
    for t in days[:3] + days[118:128] + days[-2:]:
        a, b = quotes[t], prices[t]
        note = "" if t not in differ else (f"   (hasStockPrice triples: {float(b['average']):.3f} "
                                           f"over {int(b['prices'])} distinct prices)")
        print(f"  day {(t - days[0]) // DAY + 1:3d}: {float(a['average']):8.3f} "
              f"over {int(a['prices'])} quotes{note}")
    print(f"on {len(differ)} days a price repeats within the 10 days: the hasStockPrice "
          "triple is there once, so that average is over distinct prices")
    return res


if __name__ == "__main__":
    main()
