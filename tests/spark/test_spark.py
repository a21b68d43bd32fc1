"""The Spark pipeline with a real local SparkSession (no mocks).

* Batch replay: answers, as a multiset, equal one engine's over the same
  (sorted) stream, on generated prices of many keys, partitioned by key,
  per key group, and with queries that run on the whole stream.
* Structured Streaming: a query killed (SIGKILL, JVM and all) in the middle
  of the stream and restarted from its checkpoint gives, over both runs,
  exactly the answers of an uninterrupted run: none lost, none twice.

Marked ``spark`` (and ``slow``): about two minutes, run in CI.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from epsparql import Engine
from epsparql.io.results import answer_from_json
from epsparql.io.streams import read_stream

pytestmark = [pytest.mark.spark, pytest.mark.slow]

NS = "http://epsparql.org/ns#"
XSD_DEC = "http://www.w3.org/2001/XMLSchema#decimal"
PFX = "PREFIX : <http://epsparql.org/ns#>\n"
T0 = 1_700_000_000          # Spark's watermark starts at the epoch: times after it

RISE = ("rise", PFX + "SELECT ?c ?p1 ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p2 > ?p1 * 1.2 && getDURATION() < \"PT200S\"^^xsd:duration)")
CRASH = ("crash", PFX + "SELECT ?c WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
         "SEQ { ?c :price ?p3 } FILTER (?p2 < ?p1 * 0.7 && ?p3 > ?p1 * 1.05 "
         "&& getDURATION() < \"PT300S\"^^xsd:duration)")
# no variable in every stream pattern: runs on the whole stream
PAIR = ("pair", PFX + "SELECT ?a ?b WHERE { ?a :price ?x } SEQ { ?b :alarm ?y } "
        "FILTER (getDURATION() < \"PT3S\"^^xsd:duration)")
# keyed at the object: with RISE, triples go to two groups (per-key mode)
WATCH = ("watch", PFX + "SELECT ?w ?c WHERE { ?w :watches ?c } SEQ { ?c :price ?p } "
         "FILTER (getDURATION() < \"PT50S\"^^xsd:duration)")


def write_prices(folder: Path, n: int, keys: int, files: int, seed: int = 3,
                 extra: bool = False) -> list[Path]:
    """Prices of ``keys`` companies, one event a second, in ``files`` files
    (time-ordered across files); rare spikes and crashes make answers."""
    rnd = random.Random(seed)
    price = {k: rnd.uniform(20, 200) for k in range(keys)}
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"part{i:03d}.nt" for i in range(files)]
    outs = [p.open("w") for p in paths]
    per = -(-n // files)
    for t in range(n):
        k = rnd.randrange(keys)
        r = rnd.random()
        price[k] *= 0.6 if r < 0.01 else 1.3 if r < 0.02 else rnd.uniform(0.99, 1.01)
        f = outs[t // per]
        f.write(f"<{NS}c{k}> <{NS}price> \"{price[k]:.2f}\"^^<{XSD_DEC}> {T0 + t} .\n")
        if extra and rnd.random() < 0.05:
            f.write(f"<{NS}w{rnd.randrange(5)}> <{NS}watches> <{NS}c{k}> {T0 + t} .\n")
        if extra and rnd.random() < 0.02:
            f.write(f"<{NS}c{k}> <{NS}alarm> \"{t}\" {T0 + t} .\n")
    for f in outs:
        f.close()
    return paths


def single_engine(queries, paths, flush: bool = True, lateness: float = 0) -> Counter:
    e = Engine(allowed_lateness=lateness)
    qs = [e.register(t, name=n) for n, t in queries]
    for p in paths:
        e.push_many(read_stream(str(p)))
    if flush:
        e.flush()
    out = Counter(key(a) for q in qs for a in q.results())
    e.close()
    return out


def key(a) -> tuple:
    return (a.query, frozenset(a.bindings.items()), float(a.start), float(a.end))


@pytest.fixture(scope="module")
def spark():
    """This process's session (getOrCreate: one JVM for every Spark file a
    process runs); the client JIT alone (light_jvm): the tests' jobs are
    small, and C2 spent more CPU compiling than it saved."""
    from epsparql.spark import spark_session
    return spark_session("local[2]", light_jvm=True)


# ---------------------------------------------------------------------------
# batch replay
# ---------------------------------------------------------------------------
def test_batch_replay_equals_one_engine_keyed(spark, tmp_path):
    from epsparql.spark import JobSpec, collect_answers
    paths = write_prices(tmp_path / "in", 6000, 120, 3)
    spec = JobSpec.build([RISE, CRASH])
    assert spec.keyed == ["rise", "crash"] and not spec.per_key
    expected = single_engine([RISE, CRASH], paths)
    assert sum(expected.values()) > 20
    for n, routing in ((1, "scan"), (2, "scan"), (4, "scan"), (4, "shuffle")):
        got = Counter(key(a) for a in collect_answers(spark, spec, [str(p) for p in paths],
                                                       partitions=n, routing=routing))
        assert got == expected, (f"{n} partitions, {routing}: missing {expected - got}, "
                                 f"extra {got - expected}")


def test_batch_replay_per_key_groups_and_whole_stream(spark, tmp_path):
    from epsparql.spark import JobSpec, expand_paths, read_answers, run_batch
    paths = write_prices(tmp_path / "in", 3000, 40, 2, extra=True)
    queries = [RISE, WATCH, PAIR]
    spec = JobSpec.build(queries)
    assert spec.per_key and spec.whole == ["pair"] and spec.positions == (0, 2)
    expected = single_engine(queries, paths)
    assert {q for q, *_ in expected} == {"rise", "watch", "pair"}
    out = tmp_path / "out"
    files = expand_paths([str(tmp_path / "in")])
    assert files == [str(p) for p in paths]
    res = run_batch(spark, spec, files, str(out), partitions=2, order="time", routing="shuffle")
    assert res.routing == "shuffle"
    assert res.answers == sum(expected.values()) and res.errors == 0 and res.late == 0
    assert res.per_query == {q: n for q, n in Counter(k[0] for k in expected.elements()).items()}
    assert res.events == sum(1 for p in paths for _ in p.open())
    parts = sorted((out / "answers.jsonl").glob("part-*"))
    assert len(parts) > 1                          # written by several tasks
    lines = [line for f in parts for line in f.read_text().splitlines() if line]
    got = Counter(key(answer_from_json(json.loads(line))) for line in lines)
    assert got == expected
    times = [(json.loads(line)["end"], json.loads(line)["start"]) for line in lines]
    assert times == sorted(times)                  # one total time order, file after file
    pq = spark.read.parquet(str(out / "answers.parquet"))
    assert pq.count() == res.answers
    assert set(pq.columns) == {"query", "key", "start", "end", "bindings", "triples"}
    # the default order: each file as its engines found the answers, the same multiset
    res = run_batch(spark, spec, files, str(tmp_path / "o2"), partitions=3,
                    write=("jsonl",))
    assert res.routing == "scan"                   # few partitions, a small input
    assert (res.events, res.answers) == (sum(1 for p in paths for _ in p.open()),
                                         sum(expected.values()))
    assert Counter(key(a) for a in read_answers(str(tmp_path / "o2"))) == expected
    assert res.outputs == {"jsonl": str(tmp_path / "o2" / "answers.jsonl")}
    assert not (tmp_path / "o2" / "answers.parquet").exists()


def test_batch_replay_malformed_lines(spark, tmp_path):
    from epsparql.spark import JobSpec, run_batch
    paths = write_prices(tmp_path / "in", 200, 5, 2)
    with paths[1].open("a") as f:
        f.write("<http://ex/a> <http://ex/p> oops 5 .\n")
    spec = JobSpec.build([RISE])
    for routing in ("shuffle", "scan"):      # every scan task reads the line: counted once
        res = run_batch(spark, spec, [str(p) for p in paths], None, on_error="skip",
                        partitions=2, routing=routing)
        assert res.skipped == 1 and res.skipped_lines[0].startswith(f"{paths[1]}:101:")
        assert res.events == 200
        with pytest.raises(Exception) as err:
            run_batch(spark, spec, [str(p) for p in paths], None, on_error="stop",
                      routing=routing)
        assert f"{paths[1]}:101:" in str(err.value)


def test_cli_spark_run_and_explain(spark, tmp_path, capsys):
    """`epsparql explain` shows the key; `epsparql spark run` (in this
    process, so it shares the session; the streaming test below runs the
    command in a process of its own) writes the answers of one engine."""
    from epsparql.cli import main
    paths = write_prices(tmp_path / "in", 2000, 20, 2)
    q = tmp_path / "rise.rq"
    q.write_text(RISE[1])
    assert main(["explain", str(q)]) == 0
    assert "key ?c" in capsys.readouterr().out
    assert main(["spark", "run", str(q), "--stream", str(tmp_path / "in" / "*.nt"),
                 "--out", str(tmp_path / "out"), "--master", "local[2]"]) == 0
    err = capsys.readouterr().err
    assert "key ?c" in err and "2,000 events" in err
    expected = single_engine([("rise", RISE[1])], paths)
    lines = [line for f in (tmp_path / "out" / "answers.jsonl").glob("part-*")
             for line in f.read_text().splitlines() if line]
    assert Counter(key(answer_from_json(json.loads(line))) for line in lines) == expected
    assert main(["spark", "run", str(q), "--stream", str(tmp_path / "nothere"),
                 "--out", str(tmp_path / "o2")]) == 2
    assert "nothere" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# structured streaming: kill, restart, nothing lost or duplicated
# ---------------------------------------------------------------------------
def land(files: list[Path], folder: Path) -> None:
    """Move files into the watched folder the way producers should: written
    under a temporary name, renamed into place, modification times in order."""
    folder.mkdir(parents=True, exist_ok=True)
    base = time.time() - 1000
    for i, f in enumerate(files):
        tmp = folder / f".{f.name}.tmp"
        tmp.write_bytes(f.read_bytes())
        os.utime(tmp, (base + i, base + i))
        tmp.rename(folder / f.name)


def committed(out: Path) -> list[dict]:
    from epsparql.spark import read_answers_dir
    return read_answers_dir(str(out))


def stream_cmd(q: Path, watch: Path, out: Path, ck: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "epsparql.cli", "spark", "stream", str(q), "--watch", str(watch),
            "--out", str(out), "--checkpoint", str(ck), "--master", "local[2]",
            "--max-files-per-trigger", "1", "--allowed-lateness", "2",
            # the client JIT alone, as the module's session (a JVM of seconds)
            "--conf", "spark.driver.defaultJavaOptions=-XX:TieredStopAtLevel=1", *extra]


def test_streaming_kill_and_restart_loses_and_duplicates_nothing(spark, tmp_path):
    """A stream killed (-9, JVM and all) after two of its four micro-batches
    and restarted from its checkpoint commits exactly what one engine finds
    over the whole stream: nothing lost, nothing twice.  (One engine is the
    reference, not an uninterrupted streaming run: that run cost a third
    of this test and checked the same multiset.)"""
    from epsparql.spark import JobSpec
    from epsparql.spark.streaming import run_stream
    src = write_prices(tmp_path / "src", 1200, 12, 4)
    queries = [RISE]
    q = tmp_path / "rise.rq"
    q.write_text(RISE[1])
    spec = JobSpec.build(queries, allowed_lateness=2)
    # what one engine finds with the same lateness, the stream not ended (the
    # last 2 seconds wait in the reorder buffer for a watermark to pass them)
    want = single_engine(queries, src, flush=False, lateness=2)
    assert sum(want.values()) > 10 and max(want.values()) == 1

    w2, o2, c2 = tmp_path / "w2", tmp_path / "o2", tmp_path / "c2"
    land(src, w2)
    proc = subprocess.Popen(stream_cmd(q, w2, o2, c2, "-q"), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            done = list((o2 / "answers.jsonl").glob("batch=*/_SUCCESS")) if o2.exists() else []
            if len(done) >= 2:
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)      # the JVM goes too
        proc.wait()
    before = len(list((o2 / "answers.jsonl").glob("batch=*/_SUCCESS")))
    assert 2 <= before < 4                        # killed mid-stream
    st2 = run_stream(spark, spec, str(o2), str(c2), watch=str(w2), available_now=True,
                     max_files_per_trigger=1)
    assert st2.batches >= 1 and st2.late == 0 and st2.dropped_by_watermark == 0
    union = committed(o2)
    lines = Counter(json.dumps(a, sort_keys=True) for a in union)
    assert max(lines.values()) == 1, "an answer committed twice"
    got = Counter(key(answer_from_json(a)) for a in union)
    assert got == want, f"missing {want - got}, extra {got - want}"


def test_cli_spark_stream_reports_its_batches_and_summary(spark, tmp_path, capsys):
    """`epsparql spark stream` without -q: its progress lines and summary
    (the summary used to recurse into itself: RecursionError)."""
    from epsparql.cli import main
    src = write_prices(tmp_path / "src", 300, 5, 2)
    land(src, tmp_path / "w")
    q = tmp_path / "rise.rq"
    q.write_text(RISE[1])
    assert main(["spark", "stream", str(q), "--watch", str(tmp_path / "w"), "--out",
                 str(tmp_path / "o"), "--checkpoint", str(tmp_path / "c"), "--available-now",
                 "--master", "local[2]", "--lateness", "2"]) == 0
    err = capsys.readouterr().err
    assert "epsparql: batch 0: " in err
    summary = [line for line in err.splitlines() if " batch(es), " in line]
    assert len(summary) == 1 and "300 events" in summary[0], err


def test_bundled_spark_example_finds_the_planted_crashes(spark):
    """examples/spark/run.py: query (1) by batch replay and by streaming."""
    import importlib.util
    from conftest import ROOT
    path = ROOT / "examples" / "spark" / "run.py"
    mod = importlib.util.spec_from_file_location("spark_example", path)
    example = importlib.util.module_from_spec(mod)
    mod.loader.exec_module(example)
    found = example.main(spark)
    assert set(found["batch"]) == {"ACME", "INITECH", "HOOLI"}
    assert found["stream"] == found["batch"]
