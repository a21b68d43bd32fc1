"""The stream dialects through the epsparql command: stream files with a
stream column (nqt, jsonl, csv), every output format with the windows'
start and end, --dialect, check, explain, and the errors with positions."""
from __future__ import annotations

import json
import sys

import pytest

from epsparql import Engine
from epsparql.io import read_stream, write_stream

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "cli"))
from test_cli import cli  # noqa: E402  (the CLI in a child process)

FORMATS = ROOT / "examples" / "formats"
AVERAGE = FORMATS / "average.rq"
TEMP = "http://example.org/stream/temperature"


def _engine_answers():
    """The answers of average.rq through the Python API, as the CLI writes them."""
    with Engine() as eng:
        q = eng.register(AVERAGE.read_text(), name="average")
        eng.push_many(read_stream(FORMATS / "readings.nqt"))
        eng.flush()
        return sorted((a.start, a.end, str(a["sensor"]), float(a["avg"]), int(a["n"]))
                      for a in q.results())


@pytest.fixture(scope="module")
def streams(tmp_path_factory):
    """readings.nqt written again as JSON lines and CSV, streams kept."""
    d = tmp_path_factory.mktemp("streams")
    rows = list(read_stream(FORMATS / "readings.nqt"))
    assert sum(len(r) == 6 for r in rows) == 30 and {r[5] for r in rows if len(r) == 6} == {TEMP}
    out = {"nqt": FORMATS / "readings.nqt"}
    for fmt in ("jsonl", "csv"):
        out[fmt] = d / f"readings.{fmt}"
        write_stream(rows, out[fmt], fmt)
    return out


def _jsonl(stdout):
    return sorted((a["start"], a["end"], a["bindings"]["sensor"]["value"],
                   float(a["bindings"]["avg"]["value"]), int(a["bindings"]["n"]["value"]))
                  for a in map(json.loads, stdout.splitlines()))


def test_every_format_with_a_stream_column_gives_the_engines_answers(streams):
    want = _engine_answers()
    # C-SPARQL's windows [09:55, 10:05), … up to the last opened by the last reading
    assert len(want) == 15 and want[0][:2] == (1714557300, 1714557900)
    for fmt, path in streams.items():
        r = cli("run", AVERAGE, "--stream", path, "--output-format", "jsonl")
        assert r.returncode == 0, r.stderr
        assert _jsonl(r.stdout) == want, fmt
        assert "average" in r.stderr and "15 answers" in r.stderr
    # the same rows without streams: nothing is on the temperature stream
    r = cli("run", AVERAGE, "--stream", FORMATS / "readings.nt")
    assert r.returncode == 0 and r.stdout == ""


def test_ep_sparql_queries_see_every_stream(streams):
    r1 = cli("run", FORMATS / "rise.rq", "--stream", streams["nqt"])
    r2 = cli("run", FORMATS / "rise.rq", "--stream", FORMATS / "readings.nt")
    assert r1.returncode == r2.returncode == 0
    assert sorted(r1.stdout.splitlines()) == sorted(r2.stdout.splitlines())
    assert len(r1.stdout.splitlines()) == 13


@pytest.mark.parametrize("fmt", ["csv", "sparql-json", "table"])
def test_every_output_format_carries_start_and_end(streams, fmt):
    r = cli("run", AVERAGE, "--stream", streams["nqt"], "--output-format", fmt,
            "--time-format", "iso")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    if fmt == "csv":
        lines = out.splitlines()
        assert lines[0] == "query,start,end,sensor,avg,n" and len(lines) == 16
        assert lines[1].startswith("average,2024-05-01T09:55:00Z,2024-05-01T10:05:00Z,")
    elif fmt == "sparql-json":
        doc = json.loads(out)
        assert doc["head"]["vars"][-2:] == ["start", "end"]
        rows = doc["results"]["bindings"]
        assert len(rows) == 15 and rows[0]["end"]["value"] == "2024-05-01T10:05:00Z"
    else:
        assert "2024-05-01T09:55:00Z  2024-05-01T10:05:00Z" in out and out.count("\n") >= 14


def test_construct_answers_as_a_stream(tmp_path, streams):
    q = tmp_path / "hot.rq"
    q.write_text("REGISTER STREAM hot AS PREFIX ns: <http://example.org/ns#>\n"
                 "CONSTRUCT { ?s ns:hot ?t } FROM STREAM <%s> [RANGE 1m TUMBLING]\n"
                 "WHERE { ?s ns:temperature ?t FILTER (?t > 30) }" % TEMP)
    r = cli("run", q, "--stream", streams["nqt"], "--output-format", "nt")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 5 and all("<http://example.org/ns#hot>" in x for x in lines)


def test_dialect_flag_forces_the_language(tmp_path, streams):
    r = cli("check", AVERAGE, "--dialect", "csparql")
    assert r.returncode == 0 and "ok (csparql: SELECT ?sensor ?avg ?n)" in r.stdout
    r = cli("check", AVERAGE, "--dialect", "ep-sparql")
    assert r.returncode == 2 and "average.rq:" in r.stderr
    r = cli("run", AVERAGE, "--stream", streams["nqt"], "--dialect", "klingon")
    assert r.returncode == 2 and "invalid choice" in r.stderr


BAD_QUERIES = [
    ("REGISTER QUERY q AS SELECT ?s FROM STREAM <http://ex.org/s> [RANGE 0s STEP 1s] "
     "WHERE { ?s ?p ?o }", "1:", "width"),
    ("REGISTER QUERY q AS\nSELECT ?s FROM STREAM <http://ex.org/s> [RANGE 5 fortnights STEP 1s] "
     "WHERE { ?s ?p ?o }", "2:", ""),
    ("PREFIX ex: <http://ex.org/>\nREGISTER RSTREAM <http://ex.org/o> AS SELECT ?s\n"
     "WHERE { WINDOW ex:w { ?s ?p ?o } }", "3:", "not declared"),
    ("REGISTER QUERY q AS SELECT ?s (COUNT(*) AS ?n) FROM STREAM <http://ex.org/s> "
     "[RANGE 5s STEP 1s]\nWHERE { ?s ?p ?o }", "1:", "?s"),
]


def test_check_reports_dialect_errors_with_line_and_column(tmp_path):
    files = []
    for i, (text, _, _) in enumerate(BAD_QUERIES):
        files.append(tmp_path / f"bad{i}.rq")
        files[-1].write_text(text)
    r = cli("check", *files)                     # one run, every file reported
    assert r.returncode == 2
    firsts = [line for line in r.stderr.splitlines() if line.startswith(str(tmp_path))]
    assert len(firsts) == len(BAD_QUERIES), r.stderr
    for f, (_, where, message), line in zip(files, BAD_QUERIES, firsts):
        assert line.startswith(f"{f}:{where}") and message in line, r.stderr
    assert r.stderr.count("^") >= len(BAD_QUERIES)


def test_explain_shows_windows_policy_and_key():
    r = cli("explain", AVERAGE, FORMATS / "rise.rq")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "RSTREAM at each window close, non-empty windows only" in out
    assert "window 0 on <http://example.org/stream/temperature>: RANGE 10min STEP 5min" in out
    # boundaries, first instant and set semantics (issue 25, finding 12)
    assert ("RANGE 10min STEP 5min; windows [t0 + k·5min, t0 + k·5min + 10min) with t0 = 0s, "
            "k ≥ 0 (closed at the start, open at the end); instants: their closes c = t0 + "
            "k·5min + 10min (the first after the first arrival); holds the triples with "
            "c − 10min ≤ τ < c (a set)") in out
    assert "window semantics: engine (each dialect as its reference engine answers)  " \
        "[default]" in out
    assert "SECRET scope     t0 = 0s; windows from t0 on (k >= 0)  [default of C-SPARQL]" in out
    r = cli("explain", AVERAGE, "--window-t0", "-2.5")
    assert r.returncode == 0 and "t0 = -2.5s; windows from t0 on (k >= 0)  [argument]" \
        in r.stdout, r.stderr
    r = cli("explain", AVERAGE, "--window-semantics", "cql")
    assert ("RANGE 10min STEP 5min; instants t = k·5min (the first at or after the first "
            "arrival), holds the triples with t − 10min < τ ≤ t (a set)") in r.stdout
    assert "(AVG(?t) AS ?avg)" in out and "aggregates kept per pane" in out
    assert "average: key ?sensor" in out and "rise: key ?sensor" in out
    assert "SeqJoin (SEQ)" in out and "rule graph:" in out        # the EP-SPARQL query beside it


def test_trace_shows_windowed_queries_and_refuses_mixing_kinds(streams, tmp_path):
    r = cli("run", AVERAGE, "--stream", streams["nqt"], "--trace")
    assert r.returncode == 0, r.stderr
    assert "instant" in r.stdout and "holds" in r.stdout and "answer  average" in r.stdout
    ep = tmp_path / "ep.rq"
    ep.write_text("SELECT ?s WHERE { ?s <http://ex.org/p> ?o }")
    r = cli("run", AVERAGE, ep, "--stream", streams["nqt"], "--trace")
    assert r.returncode == 2 and "one kind at a time" in r.stderr


def test_bad_nqt_lines_name_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.nqt"
    good = '<http://ex.org/a> <http://ex.org/p> "1" <http://ex.org/s> 1 .\n'
    bad.write_text(good + '<http://ex.org/a> <http://ex.org/p> "1" _:g 2 .\n' + good.replace(" 1 .", " 3 ."))
    q = tmp_path / "q.rq"
    q.write_text("REGISTER QUERY q AS SELECT ?a FROM STREAM <http://ex.org/s> [RANGE 10s STEP 10s] "
                 "WHERE { ?a ?p ?o }")
    r = cli("run", q, "--stream", bad)
    assert r.returncode == 1
    assert f"{bad}:2:41: the stream (the graph position) must be an IRI" in r.stderr
    r = cli("run", q, "--stream", bad, "--on-error", "skip")
    assert r.returncode == 0 and "1 skipped lines" in r.stderr
    assert len(r.stdout.splitlines()) == 1          # a at 10, from both good lines (a set)
