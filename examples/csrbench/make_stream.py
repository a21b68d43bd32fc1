"""Rebuild stream/*.nqt.gz from CSRBench's stream: data/data_XX.ttl of
dellaglio/csrbench-oracle (commit ac823b2), the triples of second XX.

    .venv/bin/python examples/csrbench/make_stream.py CSRBENCH_ORACLE_CHECKOUT

The oracle imports data_XX.ttl as the graph of time XX·1000 ms
(``SRBenchImporter.importData``, ``importer.data.interval = 1000``); the
engines' feeders (csrbench-oracle-engines) push one file a second.  Here
each triple of data_XX.ttl is one row at time XX (seconds), on the stream
the queries read: ``<http://ex.org/streams/test>`` (C-SPARQL, CQELS) and
``<http://cwi.nl/SRBench/observations>`` (SPARQLstream).  The rows are
sorted per second and gzip's header carries no time, so the output is the
same byte for byte on every run.
"""
from __future__ import annotations

import gzip
import sys
from pathlib import Path

from rdflib import Graph

HERE = Path(__file__).resolve().parent
STREAMS = {"srbench-test.nqt.gz": "http://ex.org/streams/test",
           "srbench-observations.nqt.gz": "http://cwi.nl/SRBench/observations"}
SECONDS = range(34)                    # importer.data.maxtime = 33


def lines(data_dir: Path, stream: str) -> list[str]:
    out = []
    for t in SECONDS:
        g = Graph()
        g.parse(data_dir / f"data_{t:02d}.ttl", format="turtle")
        out += sorted(f"{s.n3()} {p.n3()} {o.n3()} <{stream}> {t} .\n" for s, p, o in g)
    return out


def main(checkout: str) -> None:
    data_dir = Path(checkout) / "data"
    for name, stream in STREAMS.items():
        with open(HERE / "stream" / name, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
            f.write("".join(lines(data_dir, stream)).encode("utf-8"))


if __name__ == "__main__":
    main(sys.argv[1])
