"""The all-pairs stream of the Spark tests, and comparing answers by the million.

Issue 14's stream (bench/allpairs.py's generator) with the query that
reports every pair of rising prices of a company within 1,000 s: about
4.9 answers per event.  Millions of answers are compared as multisets of
JSON lines by their count and a sum of 64-bit hashes, not in memory.
"""
from __future__ import annotations

import random
from pathlib import Path

from epsparql.spark.batch import lines_digest  # noqa: F401  (the tests compare with it)

NS = "http://epsparql.org/ns#"
PFX = "PREFIX : <http://epsparql.org/ns#>\n"

ALLPAIRS = ("allpairs", PFX + "SELECT ?k ?p1 ?p2 WHERE { ?k :price ?p1 } SEQ { ?k :price ?p2 } "
            "FILTER (?p2 > ?p1 && getDURATION() <= \"PT1000S\"^^xsd:duration)")


def write_allpairs(path: Path, n: int, keys: int = 100, seed: int = 1) -> Path:
    """Issue 14's all-pairs stream (bench/allpairs.py's generator): ``keys``
    companies, one price a second, AR(1) log-prices; with ALLPAIRS about
    4.9 answers per event."""
    import math
    if path.exists():
        return path
    rnd = random.Random(seed)
    base = [rnd.uniform(20, 200) for _ in range(keys)]
    dev = [0.0] * keys
    sd = 0.01 * math.sqrt(1 - 0.81)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as f:
        for t in range(1, n + 1):
            k = rnd.randrange(keys)
            dev[k] = 0.9 * dev[k] + rnd.gauss(0, sd)
            p = round(base[k] * math.exp(dev[k]), 2)
            f.write(f"<{NS}k{k}> <{NS}price> \"{p!r}\"^^<http://www.w3.org/2001/XMLSchema#double>"
                    f" {t} .\n")
    tmp.rename(path)
    return path


def one_engine_lines(stream: Path, out: Path) -> Path:
    """The JSON lines one engine writes (``epsparql run --output-format jsonl``)."""
    from epsparql import Engine
    from epsparql.io import answer_writer
    from epsparql.io.streams import read_stream
    with Engine() as e:
        q = e.register(ALLPAIRS[1], name=ALLPAIRS[0])
        w = answer_writer("jsonl", str(out), [q])
        batch: list = []
        for row in read_stream(str(stream)):
            batch.append(row)
            if len(batch) == 20000:
                e.push_many(batch)
                w.write_many(q.results())
                batch = []
        e.push_many(batch)
        e.flush()
        w.write_many(q.results())
        w.close()
    return out
