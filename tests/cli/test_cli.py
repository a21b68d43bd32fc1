"""The epsparql command as a user runs it: `python -m epsparql.cli …` in a
child process, on real files, with the real engine."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from epsparql.io import read_stream

from conftest import ROOT

EXAMPLES = ROOT / "examples" / "formats"
QUERIES = [str(EXAMPLES / q) for q in ("overheat.rq", "repeated_alarm.rq", "rise.rq")]
EXPECTED = {"overheat": 5, "repeated_alarm": 4, "rise": 13}


def cli(*args: str, input: str | None = None, cwd: Path = ROOT, timeout: int = 300):
    env = dict(os.environ)        # the package from this checkout, installed or not
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([sys.executable, "-m", "epsparql.cli", *map(str, args)], cwd=cwd,
                       input=input, capture_output=True, text=True, timeout=timeout, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def answers_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def counts(answers: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for a in answers:
        out[a["query"]] = out.get(a["query"], 0) + 1
    return out


def canon(answers: list[dict]) -> list[str]:
    return sorted(json.dumps(a, sort_keys=True) for a in answers)


# ---------------------------------------------------------------------------
# run

def test_run_each_stream_format_gives_the_same_answers():
    results = {}
    for fmt in ("nt", "jsonl", "csv"):
        r = cli("run", *QUERIES, "--stream", EXAMPLES / f"readings.{fmt}")
        assert r.returncode == 0, r.stderr
        ans = answers_of(r.stdout)                 # not a terminal: JSON lines by default
        assert counts(ans) == EXPECTED
        results[fmt] = canon(ans)
        assert "32 events" in r.stderr and "0 skipped lines" in r.stderr
        for name, n in EXPECTED.items():
            assert any(line.split()[:1] == [name] and f"{n} answers" in line
                       for line in r.stderr.splitlines())
    assert results["nt"] == results["jsonl"] == results["csv"]
    # the CONSTRUCT answers carry their triples
    alarms = [a for a in answers_of(cli("run", QUERIES[0], "--stream",
                                        EXAMPLES / "readings.nt").stdout)]
    assert all(a["triples"][0]["p"]["value"] == "http://example.org/ns#alarm" for a in alarms)


def test_run_from_standard_input():
    text = (EXAMPLES / "readings.csv").read_text()
    r = cli("run", *QUERIES, "--stream", "-", "--format", "csv", "-q", input=text)
    assert r.returncode == 0, r.stderr
    assert counts(answers_of(r.stdout)) == EXPECTED
    assert r.stderr == ""                                           # --quiet


def test_output_formats_to_files(tmp_path):
    stream = EXAMPLES / "readings.jsonl"
    for fmt, name in [("csv", "a.csv"), ("sparql-json", "a.json"), ("nt", "a.nt"),
                      ("table", "a.txt"), ("jsonl", "a.jsonl.gz")]:
        out = tmp_path / name
        r = cli("run", *QUERIES, "--stream", stream, "--output-format", fmt, "--out", out, "-q")
        assert r.returncode == 0, r.stderr
        assert r.stdout == ""
        assert out.stat().st_size > 0
    csv_lines = (tmp_path / "a.csv").read_text().splitlines()
    assert csv_lines[0] == "query,start,end,sensor,t,first,second,before,after"
    assert len(csv_lines) == 1 + sum(EXPECTED.values())
    docs = [json.loads(x) for x in (tmp_path / "a.json").read_text().splitlines()]
    assert {d["query"]: len(d["results"]["bindings"]) for d in docs} == EXPECTED
    # the derived alarms, as a stream that can be read again
    rows = list(read_stream(tmp_path / "a.nt"))
    assert len(rows) == 5 and all(str(r[1]).endswith("#alarm") for r in rows)
    r = cli("run", QUERIES[1], "--stream", tmp_path / "a.nt", "-q")
    assert counts(answers_of(r.stdout)) == {"repeated_alarm": 4}
    table = (tmp_path / "a.txt").read_text()
    assert "?sensor" in table and "repeated_alarm" in table
    import gzip
    with gzip.open(tmp_path / "a.jsonl.gz", "rt") as f:
        assert counts(answers_of(f.read())) == EXPECTED


def test_iso_times_and_nt_note():
    r = cli("run", *QUERIES[:2], "--stream", EXAMPLES / "readings.nt",
            "--output-format", "nt", "--time-format", "iso")
    assert r.returncode == 0
    assert "2024-05-01T10:02:00Z 2024-05-01T10:03:00Z ." in r.stdout
    assert "repeated_alarm are not written" in r.stderr


def test_hostile_literals_pass_through(tmp_path):
    texts = ['say "hi"', "back\\slash", "two\nlines", "tab\tx", "é 中文 😀", "x" * 50_000, ""]
    from rdflib import Literal, URIRef

    from epsparql.io import write_stream
    rows = [(URIRef(f"http://ex/s{i}"), URIRef("http://ex/p"), Literal(t), i, i)
            for i, t in enumerate(texts)]
    for fmt in ("nt",):             # every format's round trip: tests/test_io_streams.py
        path = tmp_path / f"h.{fmt}"
        write_stream(rows, path, fmt)
        q = tmp_path / "echo.rq"
        q.write_text("SELECT ?s ?o WHERE { ?s <http://ex/p> ?o }")
        r = cli("run", q, "--stream", path, "-q")
        assert r.returncode == 0, r.stderr
        got = {a["bindings"]["s"]["value"]: a["bindings"]["o"]["value"] for a in answers_of(r.stdout)}
        assert got == {f"http://ex/s{i}": t for i, t in enumerate(texts)}


# ---------------------------------------------------------------------------
# malformed streams

BAD_STREAM = """\
<http://ex/a> <http://ex/p> "1" 1 .
<http://ex/a> <http://ex/p> "2" 2 .
<http://ex/a> <http://ex/p> "oops 3 .
<http://ex/a> <http://ex/p> "4" 9 4 .
<http://ex/a> <http://ex/p> "5" 5 .
"""


def test_malformed_line_stops_with_exit_1_after_writing_earlier_answers(tmp_path):
    (tmp_path / "bad.nt").write_text(BAD_STREAM)
    (tmp_path / "all.rq").write_text("SELECT ?v WHERE { <http://ex/a> <http://ex/p> ?v }")
    r = cli("run", "all.rq", "--stream", "bad.nt", cwd=tmp_path)
    assert r.returncode == 1
    assert [a["bindings"]["v"]["value"] for a in answers_of(r.stdout)] == ["1", "2"]
    assert "bad.nt:3:29: literal without its closing quote" in r.stderr
    assert "--on-error skip" in r.stderr
    # SPARQL JSON is still a complete document
    r = cli("run", "all.rq", "--stream", "bad.nt", "--output-format", "sparql-json",
            "--out", "out.json", cwd=tmp_path)
    assert r.returncode == 1
    doc = json.loads((tmp_path / "out.json").read_text())
    assert len(doc["results"]["bindings"]) == 2
    # the same from standard input: the message names <stdin>
    r = cli("run", "all.rq", "--stream", "-", input=BAD_STREAM, cwd=tmp_path)
    assert r.returncode == 1 and "<stdin>:3:29:" in r.stderr


def test_malformed_lines_skipped_and_counted(tmp_path):
    (tmp_path / "bad.nt").write_text(BAD_STREAM)
    (tmp_path / "all.rq").write_text("SELECT ?v WHERE { <http://ex/a> <http://ex/p> ?v }")
    r = cli("run", "all.rq", "--stream", "bad.nt", "--on-error", "skip", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [a["bindings"]["v"]["value"] for a in answers_of(r.stdout)] == ["1", "2", "5"]
    assert "2 skipped lines" in r.stderr
    assert "bad.nt:4: end time 4 is before start time 9" in r.stderr


# ---------------------------------------------------------------------------
# usage and query errors

BAD_QUERY = "PREFIX ex: <http://ex/>\nSELECT ?x WHERE {\n  ?x ex:p ?y SEQ\n}\n"


def test_usage_errors_exit_2(tmp_path):
    (tmp_path / "q.rq").write_text("SELECT ?x WHERE { ?x <http://ex/p> ?y }")
    (tmp_path / "s.nt").write_text('<http://ex/a> <http://ex/p> "1" 1 .\n')
    cases = [
        ([], "required"),
        (["run", "q.rq"], "--stream"),
        (["run", "q.rq", "--stream", "missing.nt"], "stream file not found: missing.nt"),
        (["run", "missing.rq", "--stream", "s.nt"], "query file not found: missing.rq"),
        (["run", "q.rq", "--stream", "s.nt", "--output-format", "xml"], "invalid choice"),
        (["run", "q.rq", "--stream", "s.nt", "--out", "no/such/dir/out.jsonl"], "cannot write"),
        (["run", "q.rq", "--stream", ".", ], "directory"),
        (["frobnicate"], "invalid choice"),
    ]
    for args, message in cases:
        r = cli(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)


def test_query_error_in_run_exit_2(tmp_path):
    (tmp_path / "bad.rq").write_text(BAD_QUERY)
    (tmp_path / "s.nt").write_text('<http://ex/a> <http://ex/p> "1" 1 .\n')
    r = cli("run", "bad.rq", "--stream", "s.nt", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("bad.rq:3:14: ")
    assert r.stdout == ""


def test_check(tmp_path):
    (tmp_path / "bad.rq").write_text(BAD_QUERY)
    (tmp_path / "limit.rq").write_text("SELECT ?x WHERE { ?x <http://ex/p> ?y }\nLIMIT 5\n")
    r = cli("check", *QUERIES)
    assert r.returncode == 0, r.stderr
    assert f"{QUERIES[2]}: ok (SELECT ?sensor ?before ?after)" in r.stdout
    assert f"{QUERIES[0]}: ok (CONSTRUCT" in r.stdout
    r = cli("check", "bad.rq", "limit.rq", QUERIES[0], cwd=tmp_path)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    i = lines.index(next(x for x in lines if x.startswith("bad.rq:")))
    assert lines[i].startswith("bad.rq:3:14: ") and "SEQ" in lines[i]
    src, caret = lines[i + 1], lines[i + 2]
    assert src.strip() == "?x ex:p ?y SEQ"
    assert caret.index("^") == src.index("SEQ")
    assert any(x.startswith("limit.rq:2:1: LIMIT") for x in lines)
    assert "ok" in r.stdout                                  # the good one is still checked


# ---------------------------------------------------------------------------
# explain

def test_explain_text_and_png(tmp_path):
    png = tmp_path / "explain.png"
    r = cli("explain", QUERIES[0], QUERIES[1], "--png", png)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "SeqJoin (SEQ)" in out and "Window (duration < 30min)" in out
    assert "rule graph:" in out and "store ep_g" in out
    assert "n4 seq" in out or "seq" in out
    assert "join on ?sensor" in out                       # named after the query variables
    assert "query repeated_alarm" in out and "its triples into the stream" in out
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    r = cli("explain", str(ROOT / "examples" / "stock" / "query1.rq"))
    assert r.returncode == 0
    assert "join on ?company" in r.stdout and "both operands are" in r.stdout


def test_explain_bad_query(tmp_path):
    (tmp_path / "bad.rq").write_text(BAD_QUERY)
    r = cli("explain", "bad.rq", "--png", "x.png", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("bad.rq:3:14:")
    assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------------------
# a large stream in bounded memory

@pytest.mark.slow
def test_large_stream_is_read_incrementally(tmp_path):
    """300,000 lines (~250 MB) through the command: the child's peak memory
    stays far below the size of the file.  (Literals repeat: the engine
    caches the encoded text of up to 2**18 distinct terms, which is not
    what this test measures.)"""
    path = tmp_path / "big.nt"
    pads = [f"reading {k} " + "y" * 780 for k in range(200)]
    n, alarms = 300_000, 0
    with open(path, "w") as f:
        chunk = []
        for i in range(n):
            if i % 1000 == 999:
                chunk.append(f'<http://ex/s{i % 50}> <http://ex/alarm> "{i}" {i} .\n')
                alarms += 1
            else:
                chunk.append(f'<http://ex/s{i % 50}> <http://ex/reading> "{pads[i % 200]}" {i} .\n')
            if len(chunk) == 10_000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
    size = path.stat().st_size
    assert size > 240_000_000
    (tmp_path / "alarm.rq").write_text("SELECT ?s ?v WHERE { ?s <http://ex/alarm> ?v }")
    # the child reports its own peak: VmHWM of its address space (ru_maxrss
    # would not do: Linux keeps it across exec, so a child of a big pytest
    # process starts with the parent's size)
    wrapper = ("import resource, sys\n"
               "from epsparql.cli import main\n"
               "try:\n    rc = main(sys.argv[1:])\nexcept SystemExit as e:\n    rc = e.code\n"
               "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
               "sys.stderr.write('\\nMAXRSS %s\\n' % hwm)\n"
               "sys.exit(rc)\n")
    r = subprocess.run([sys.executable, "-c", wrapper, "run", "alarm.rq", "--stream", str(path),
                        "--progress"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == alarms
    assert f"{n:,} events" in r.stderr
    peak = int(r.stderr.rsplit("MAXRSS", 1)[1].split()[0]) * 1024    # Linux: KiB
    assert peak < 300 * 2**20, peak
    assert peak < 0.8 * size, (peak, size)
