"""LUPOSDATE: monitoring eBay auctions (seed 000, Figure 6).

    .venv/bin/python examples/dialects/luposdate/run.py

A stream like the demonstration's: every 0.25 s the engine polls one of
six "Wii" auctions and gets its current price and its title (two
triples); prices go up as bids come in (seeded).  auctions.rq reports,
every second (DURATION 1000 ms), the statistics of the current prices of
the auctions in the last 100 triples (SLIDINGTRIPLES 100).
"""
from __future__ import annotations

import random
from pathlib import Path

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from epsparql import Engine

HERE = Path(__file__).resolve().parent
EBAY = "http://developer.ebay.com/DevZone/finding/CallRef/findItemsByKeywords.html#"
PRICE = URIRef(EBAY + "Response.searchResult.item.sellingStatus.currentPrice")
TITLE = URIRef(EBAY + "Response.searchResult.item.title")
ITEMS = {f"http://example.org/ebay/item/{n}": t for n, t in [
    (110001, "Nintendo Wii console, white"), (110002, "Wii Sports bundle"),
    (110003, "Wii Fit balance board"), (110004, "Wii remote, 2 pieces"),
    (110005, "Mario Kart Wii with wheel"), (110006, "Wii console, black, boxed")]}


def stream(polls: int = 400, seed: int = 0) -> list[tuple]:
    """Rows (s, p, o, time) of ``polls`` polls, 0.25 s apart (default stream)."""
    rnd = random.Random(seed)
    price = {i: round(rnd.uniform(20, 120), 2) for i in ITEMS}
    out = []
    for k in range(polls):
        i = rnd.choice(list(ITEMS))
        if rnd.random() < 0.3:
            price[i] = round(price[i] + rnd.choice([0.5, 1, 2.5, 5]), 2)
        t = k / 4
        out.append((URIRef(i), PRICE, Literal(f"{price[i]:.2f}", datatype=XSD.decimal), t))
        out.append((URIRef(i), TITLE, Literal(ITEMS[i]), t))
    return out


def run(rows=None) -> list:
    with Engine() as engine:
        q = engine.register((HERE / "auctions.rq").read_text(), name="auctions")
        engine.push_many(rows if rows is not None else stream())
        engine.flush()
        return q.results()


def main() -> list:
    answers = run()
    instants = sorted({a.end for a in answers})
    print(f"{len(answers)} answers at {len(instants)} instants (every second); the last one:")
    for a in sorted((a for a in answers if a.end == instants[-1]), key=lambda a: str(a["id"])):
        print(f"  {str(a['title']):28} avg {float(a['avg']):7.2f}  min {float(a['min']):7.2f}  "
              f"max {float(a['max']):7.2f}  sum {float(a['sum']):8.2f}")
    return answers


if __name__ == "__main__":
    main()
