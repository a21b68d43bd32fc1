"""Windowed queries through ``epsparql run`` with issue 17's run features:
late rows named with file:line in every stream format with a stream
(nqt, jsonl, csv), ``--max-answers`` counting windowed answers, a closed
output pipe ending a windowed run quietly, and ``--background IRI=FILE``
loading a named graph (issue 13's form) next to ``--background FILE``."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.io import write_stream

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "cli"))
from cli_child import NEVER, cli, env, error_lines  # noqa: E402

EX = "http://example.org/"
S1 = EX + "s1"
COUNT = (f"REGISTER QUERY counts AS\nSELECT (COUNT(*) AS ?n)\n"
         f"FROM STREAM <{S1}> [RANGE 4s STEP 2s]\nWHERE {{ ?s <{EX}p> ?o }}\n")
NOW = f"SELECT ?s ?o WHERE {{ STREAM <{S1}> [NOW] {{ ?s <{EX}p> ?o }} }}\n"


def _rows(times):
    return [(URIRef(EX + f"n{i}"), URIRef(EX + "p"), Literal(i), t, t, S1)
            for i, t in enumerate(times)]


def _counts(stdout):
    return [(a["start"], a["end"], int(a["bindings"]["n"]["value"]))
            for a in map(json.loads, stdout.splitlines())]


@pytest.mark.parametrize("fmt", ["nqt", "jsonl", "csv"])
def test_a_late_row_on_a_named_stream_is_named_and_not_processed(tmp_path, fmt):
    times = [1, 2, 3, 5, 8, 4, 9, 10, 12, 13]           # the row at 4 comes after 8: late
    (tmp_path / "q.rq").write_text(COUNT)
    write_stream(_rows(times), tmp_path / f"s.{fmt}", fmt)
    kept = [t for t in times if t != 4]
    write_stream(_rows(kept), tmp_path / f"kept.{fmt}", fmt)
    r = cli("run", "q.rq", "--stream", f"s.{fmt}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    line = 6 + (fmt == "csv")                           # the CSV header is line 1
    named = [x for x in r.stderr.splitlines() if f"late row s.{fmt}:" in x]
    assert len(named) == 1 and f"late row s.{fmt}:{line}: it ends at 4, 4 s before" in named[0]
    assert f"1 late row not processed (first: s.{fmt}:{line};" in r.stderr
    want = cli("run", "q.rq", "--stream", f"kept.{fmt}", cwd=tmp_path)
    assert want.returncode == 0 and "late" not in want.stderr
    assert _counts(r.stdout) == _counts(want.stdout) != []
    # the Python API agrees: the answers over the stream without the late row
    with Engine() as eng:
        q = eng.register(COUNT)
        eng.push_many(_rows(kept))
        eng.flush()
        assert [(a.start, a.end, int(a["n"])) for a in q.results()] == _counts(r.stdout)
    # with --lateness it is kept, and the answers are those of the stream in order
    r = cli("run", "q.rq", "--stream", f"s.{fmt}", "--lateness", "4", cwd=tmp_path)
    write_stream(_rows(sorted(times)), tmp_path / f"sorted.{fmt}", fmt)
    ordered = cli("run", "q.rq", "--stream", f"sorted.{fmt}", cwd=tmp_path)
    assert "late row" not in r.stderr and _counts(r.stdout) == _counts(ordered.stdout)


def test_max_answers_counts_windowed_answers(tmp_path):
    (tmp_path / "q.rq").write_text(COUNT)
    (tmp_path / "ep.rq").write_text(f"SELECT ?s WHERE {{ ?s <{EX}p> ?o }}\n")
    write_stream(_rows(range(1, 30)), tmp_path / "s.nqt", "nqt")
    full = cli("run", "q.rq", "ep.rq", "--stream", "s.nqt", "--batch-size", "7", cwd=tmp_path)
    assert full.returncode == 0
    lines = full.stdout.splitlines()
    assert {json.loads(x)["query"] for x in lines} == {"q", "ep"} and len(lines) > 40
    for cap in (1, 10, 31, len(lines) - 1):
        r = cli("run", "q.rq", "ep.rq", "--stream", "s.nqt", "--batch-size", "7",
                "--max-answers", str(cap), cwd=tmp_path)
        assert r.returncode == 1
        assert r.stdout.splitlines() == lines[:cap]
        assert error_lines(r.stderr) == [
            f"epsparql: error: stopped after {cap:,} answers (--max-answers {cap:,}); they "
            f"were written (raise --max-answers for more)"]
    r = cli("run", "q.rq", "ep.rq", "--stream", "s.nqt", "--batch-size", "7",
            "--max-answers", str(len(lines)), cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.splitlines() == lines


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table"])
def test_a_windowed_run_into_head_ends_quietly(tmp_path, fmt):
    (tmp_path / "now.rq").write_text(NOW)
    write_stream(_rows(range(20_000)), tmp_path / "big.nqt", "nqt")
    prog = f"{sys.executable} -m epsparql.cli"
    r = subprocess.run(["bash", "-c", f"{prog} run now.rq --stream big.nqt --output-format {fmt}"
                        f" | head -1; s=${{PIPESTATUS[0]}}; echo; echo rc=$s"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env())
    for word in NEVER:
        assert word not in r.stderr, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == "rc=0"
    assert len(r.stdout.splitlines()) == 3
    assert "the output was closed by its reader: the run stopped there" in r.stderr
    summary = next(x for x in r.stderr.splitlines() if " events in " in x)
    assert "20,000 events" not in summary


def _conference():
    path = ROOT / "examples" / "dialects" / "conference" / "run.py"
    spec = importlib.util.spec_from_file_location("dialect_conference_run", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module              # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_background_iri_equals_file_loads_a_named_graph(tmp_path):
    """Q1 of the conference (CQELS, GRAPH <floorplan> and the profiles in
    the default graph) through the command, as examples/dialects/conference
    runs it through the API."""
    conf = _conference()
    reads = conf.ep_example.read_rfid(conf.CONFERENCE / "rfid.csv")
    write_stream([(s, p, o, t, t, conf.RFID) for s, p, o, t in reads], tmp_path / "rfid.nqt",
                 "nqt")
    q1 = conf.HERE / "q1.rq"
    floor, profiles = conf.CONFERENCE / "floorplan.ttl", conf.CONFERENCE / "profiles.ttl"
    with Engine(reasoning="none") as eng:
        eng.load_background(str(floor), graph=conf.FLOORPLAN)
        eng.load_background(str(profiles))
        q = eng.register(q1.read_text(), name="q1")
        eng.push_many((s, p, o, t, None, conf.RFID) for s, p, o, t in reads)
        eng.flush()
        want = sorted((a.end, str(a["name"]), str(a["locName"])) for a in q.results())
    assert len(want) > 10
    r = cli("run", q1, "--stream", "rfid.nqt", "--reasoning", "none",
            "--background", f"{conf.FLOORPLAN}={floor}", "--background", profiles, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got = sorted((a["end"], a["bindings"]["name"]["value"], a["bindings"]["locName"]["value"])
                 for a in map(json.loads, r.stdout.splitlines()))
    assert got == want
    # the floor plan in the default graph instead: GRAPH <floorplan> finds nothing
    r = cli("run", q1, "--stream", "rfid.nqt", "--reasoning", "none",
            "--background", floor, "--background", profiles, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""


def test_background_specs_and_their_errors(tmp_path):
    (tmp_path / "g=1.ttl").write_text(f"<{EX}a> <{EX}name> \"A\" .\n")
    (tmp_path / "q.rq").write_text(
        f"SELECT ?s ?n WHERE {{ ?s <{EX}p> ?o GRAPH <{EX}g> {{ ?s <{EX}name> ?n }} }}\n")
    (tmp_path / "s.nt").write_text(f"<{EX}a> <{EX}p> <{EX}b> 1 .\n")
    # EP-SPARQL's GRAPH <g> reads the named graph too; a file name with "=" is a file
    r = cli("run", "q.rq", "--stream", "s.nt", "--background", f"{EX}g=g=1.ttl", cwd=tmp_path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1, r.stderr
    r = cli("run", "q.rq", "--stream", "s.nt", "--background", "g=1.ttl", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""          # the default graph: no <g>
    r = cli("run", "q.rq", "--stream", "s.nt", "--background", f"{EX}g=none.ttl", cwd=tmp_path)
    assert r.returncode == 2
    assert error_lines(r.stderr) == [f"epsparql: error: background file not found: none.ttl "
                                     f"(for the named graph <{EX}g>)"]
    r = cli("spark", "run", "q.rq", "--stream", "s.nt", "--out", "o", "--background",
            f"{EX}g=g=1.ttl", cwd=tmp_path)
    assert r.returncode == 2
    [err] = error_lines(r.stderr)
    assert "named background graphs (IRI=FILE) go with epsparql run" in err


def test_the_trace_reads_a_stream_file_with_streams():
    """--trace over nqt rows (6-tuples): the EP-SPARQL query traced sees
    every stream and gives the answers of a normal run."""
    from cli_child import answer_counter
    rise, nqt = ROOT / "examples" / "formats" / "rise.rq", ROOT / "examples" / "formats" / "readings.nqt"
    r = cli("run", rise, "--stream", nqt, "--output-format", "jsonl")
    assert r.returncode == 0 and r.stdout
    t = cli("run", rise, "--stream", nqt, "--trace", "--output-format", "jsonl")
    assert t.returncode == 0, t.stderr
    objs = [json.loads(x) for x in t.stdout.splitlines()]
    traced = "\n".join(json.dumps(a) for o in objs if o["type"] in ("triple", "end")
                       for a in o["answers"])
    assert answer_counter(traced) == answer_counter(r.stdout)
