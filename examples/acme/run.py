"""Run the ACME running-average pair on a small price stream.

    .venv/bin/python examples/acme/run.py
"""
from pathlib import Path

from rdflib import BNode, Literal, URIRef

from epsparql import Engine

HERE = Path(__file__).resolve().parent
NS = "http://epsparql.org/ns#"
DAY = 86400
PRICES = [10, 12, 11, 13, 15, 14, 16, 18, 17, 19, 20, 21]


def main() -> list:
    engine = Engine()
    engine.register((HERE / "running_sum.rq").read_text(), name="running_sum")
    avg = engine.register((HERE / "average.rq").read_text(), name="average")
    seed = BNode("seed")       # count 0, sum 0 at time 0 starts the chain
    engine.push_many([(seed, URIRef(NS + "hasCount"), Literal(0), 0),
                      (seed, URIRef(NS + "hasSum"), Literal(0), 0)])
    engine.push_many([(URIRef(NS + "ACME"), URIRef(NS + "hasStockPrice"), Literal(p), d * DAY)
                      for d, p in enumerate(PRICES, start=1)])
    engine.flush()
    rows = sorted(avg.results(), key=lambda a: int(a["count"]))
    for a in rows:
        print(f"day {a.end / DAY:4.0f}: {int(a['count']):2} prices, average {float(a['average']):.2f}")
    return rows


if __name__ == "__main__":
    main()
