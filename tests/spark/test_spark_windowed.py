"""Windowed queries (the stream dialects) on Spark, against one engine.

Batch replay of nqt files (rows on named streams) with a real local
SparkSession: a sliding average per key and a SPARQLstream ISTREAM query
run partitioned by their key, a tumbling count over every key on one
partition, next to an EP-SPARQL query; then a per-key job (keys read from
two positions).  As a multiset, the answers must be one engine's over the
same stream.  Marked ``spark`` and ``slow``.
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from epsparql import Engine
from epsparql.io.streams import read_stream, write_stream

pytestmark = [pytest.mark.spark, pytest.mark.slow]

NS = "http://epsparql.org/ns#"
PRICES, NEWS = "http://epsparql.org/stream/prices", "http://epsparql.org/stream/news"
PFX = "PREFIX : <http://epsparql.org/ns#>\n"
T0 = 1_700_000_000

AVG = ("avg", "REGISTER QUERY avg AS " + PFX + "SELECT ?c (AVG(?p) AS ?a) (COUNT(*) AS ?n) "
       f"FROM STREAM <{PRICES}> [RANGE 10s STEP 2s] WHERE {{ ?c :price ?p }} GROUP BY ?c")
COUNT = ("count", "REGISTER QUERY count AS " + PFX + "SELECT (COUNT(*) AS ?n) "
         f"FROM STREAM <{PRICES}> [RANGE 5s TUMBLING] WHERE {{ ?c :price ?p }}")
# ISTREAM, reported at every window close: with SPARQLstream's default
# close,non-empty (morph-streams) it would not be partitioned
JUMP = ("jump", "#pragma window report=close\n" + PFX + "SELECT ISTREAM ?c ?p ?q "
        f"FROM STREAM <{PRICES}> [NOW - 6 SECONDS TO NOW STEP 3 SECONDS] "
        f"FROM STREAM <{NEWS}> [NOW - 6 SECONDS TO NOW STEP 3 SECONDS] "
        "WHERE { ?c :price ?p . ?c :price ?q . ?c :news ?h FILTER (?q > ?p * 1.05) }")
RISE = ("rise", PFX + "SELECT ?c ?p1 ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p2 > ?p1 * 1.05 && getDURATION() < \"PT4S\"^^xsd:duration)")
# keyed at the object: with AVG, keys come from two positions (per-key groups)
WATCHED = ("watched", "REGISTER QUERY watched AS " + PFX + "SELECT ?c (COUNT(*) AS ?n) "
           f"FROM STREAM <{NEWS}> [RANGE 6s STEP 3s] WHERE {{ ?w :watches ?c }} GROUP BY ?c")


def write_stream_files(folder: Path, n: int, keys: int, files: int, seed: int) -> list[Path]:
    """Prices of ``keys`` companies on PRICES (several a second), news and
    watchers on NEWS, some rows on the default stream; nqt, time-ordered
    across ``files`` files."""
    from rdflib import Literal, URIRef
    rnd = random.Random(seed)
    price = {k: rnd.uniform(20, 200) for k in range(keys)}
    rows = []
    for i in range(n):
        t = T0 + i // 4
        k = rnd.randrange(keys)
        c = URIRef(f"{NS}c{k}")
        price[k] *= rnd.choice([0.97, 1.0, 1.02, 1.08])
        rows.append((c, URIRef(NS + "price"), Literal(round(price[k], 2)), t, None,
                     PRICES if rnd.random() < 0.9 else None))
        r = rnd.random()
        if r < 0.1:
            rows.append((c, URIRef(NS + "news"), Literal(f"n{i}"), t, None, NEWS))
        elif r < 0.15:
            rows.append((URIRef(f"{NS}w{rnd.randrange(4)}"), URIRef(NS + "watches"), c, t, None,
                         NEWS))
    folder.mkdir(parents=True, exist_ok=True)
    per = -(-len(rows) // files)
    paths = []
    for f in range(files):
        p = folder / f"part{f:03d}.nqt"
        write_stream(rows[f * per:(f + 1) * per], p, "nqt")
        paths.append(p)
    return paths


def key(a) -> tuple:
    return (a.query, frozenset(a.bindings.items()), float(a.start), float(a.end))


def one_engine(queries, paths) -> Counter:
    with Engine() as e:
        qs = [e.register(t, name=n) for n, t in queries]
        for p in paths:
            e.push_many(read_stream(str(p)))
        e.flush()
        return Counter(key(a) for q in qs for a in q.results())


@pytest.fixture(scope="module")
def spark():
    """This process's session (getOrCreate: one JVM for every Spark file a
    process runs); the client JIT alone (light_jvm): the tests' jobs are
    small, and C2 spent more CPU compiling than it saved."""
    from epsparql.spark import spark_session
    return spark_session("local[2]", light_jvm=True)


def test_windowed_replay_equals_one_engine(spark, tmp_path):
    from epsparql.spark import JobSpec, collect_answers
    queries = [AVG, COUNT, JUMP, RISE]
    paths = write_stream_files(tmp_path / "in", 2400, keys=12, files=3, seed=5)
    spec = JobSpec.build(queries)
    assert spec.windowed and not spec.per_key
    assert spec.key_vars == {"avg": "c", "count": None, "jump": "c", "rise": "c"}
    expected = one_engine(queries, paths)
    assert {k[0] for k in expected} == {"avg", "count", "jump", "rise"}
    for routing in ("shuffle", "scan"):         # the last time stamp: a pass, or each task's
        got = Counter(key(a) for a in collect_answers(spark, spec, [str(p) for p in paths],
                                                      partitions=3, routing=routing))
        assert got == expected, routing


def test_windowed_replay_per_key_groups(spark, tmp_path):
    from epsparql.spark import JobSpec, collect_answers
    queries = [AVG, WATCHED]
    paths = write_stream_files(tmp_path / "in", 1200, keys=6, files=2, seed=8)
    spec = JobSpec.build(queries)
    assert spec.per_key and spec.key_vars == {"avg": "c", "watched": "c"}
    expected = one_engine(queries, paths)
    assert {k[0] for k in expected} == {"avg", "watched"}
    for routing in ("shuffle", "scan"):         # the last time stamp: a pass, or each task's
        got = Counter(key(a) for a in collect_answers(spark, spec, [str(p) for p in paths],
                                                      partitions=2, routing=routing))
        assert got == expected, routing


def test_windowed_structured_streaming_equals_one_engine_at_the_watermark(spark, tmp_path):
    """A live stream (a watched directory of nqt files, run until they are
    consumed): the keyed sliding average and the whole-stream count give
    one engine's answers up to the final watermark (no lateness: the last
    time stamp), none twice."""
    from epsparql.spark import JobSpec
    from epsparql.spark.streaming import read_answers_dir, run_stream
    from epsparql.io.results import answer_from_json
    queries = [AVG, COUNT]
    paths = write_stream_files(tmp_path / "in", 800, keys=5, files=2, seed=3)
    spec = JobSpec.build(queries)
    stats = run_stream(spark, spec, str(tmp_path / "out"), str(tmp_path / "ck"),
                       watch=str(tmp_path / "in"), format="nqt", available_now=True)
    assert stats.errors == [] and stats.late == 0
    got = Counter(rounded(answer_from_json(r)) for r in read_answers_dir(str(tmp_path / "out")))
    with Engine() as e:
        qs = [e.register(t, name=n) for n, t in queries]
        rows = [r for p in paths for r in read_stream(str(p))]
        e.push_many(rows)
        e.advance(max(r[3] for r in rows))
        expected = Counter(rounded(a) for q in qs for a in q.results())
    assert {k[0] for k in expected} == {"avg", "count"}
    assert got == expected


def rounded(a) -> tuple:
    """An answer's key with doubles to 9 digits: a key's engine is restored
    from its snapshot at every micro-batch, and the per-pane sums of
    doubles may then be added in another order (docs/DIALECTS.md)."""
    from rdflib import Literal
    from rdflib.namespace import XSD
    b = frozenset((k, round(v.toPython(), 9) if isinstance(v, Literal) and v.datatype == XSD.double
                   else v) for k, v in a.bindings.items())
    return (a.query, b, float(a.start), float(a.end))
