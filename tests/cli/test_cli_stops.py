"""What stops a run, through the command line (issue 17, findings 3 and 7).

A closed output (``| head``) ends the run quietly with exit 0; a cap
(``--max-answers``, ``--max-goals``), the engine running out of memory or
an output that cannot be written stop it with exit 1 and one line naming
the cause and the flag to change.  In every case the answers found before
are written, the events are counted as processed only for the batches the
engine finished, and no Prolog or Python report reaches the user.
"""
from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys

import pytest

from cli_child import NEVER, cli, env, error_lines

SEQ = ("SELECT ?a ?b WHERE { <http://ex/s> <http://ex/p> ?a } "
       "SEQ { <http://ex/s> <http://ex/p> ?b }\n")
ALL = "SELECT ?v WHERE { <http://ex/s> <http://ex/p> ?v }\n"


def row(i: int, p: str = "p", value: str | None = None) -> str:
    v = f'"{i}"^^<http://www.w3.org/2001/XMLSchema#integer>' if value is None else f'"{value}"'
    return f"<http://ex/s> <http://ex/{p}> {v} {i} .\n"


def shell(cmd: str, cwd) -> subprocess.CompletedProcess:
    """A shell pipeline, as a user types it; prints the command's exit code last."""
    prog = f"{sys.executable} -m epsparql.cli"
    r = subprocess.run(["bash", "-c", cmd.replace("epsparql", prog)
                        + "; s=${PIPESTATUS[0]}; echo; echo rc=$s"],
                       cwd=cwd, capture_output=True, text=True, timeout=600, env=env())
    for word in NEVER:
        assert word not in r.stderr, r.stderr[-3000:]
    return r


# ---------------------------------------------------------------------------
# finding 3: a closed output

@pytest.fixture(scope="module")
def many(tmp_path_factory):
    d = tmp_path_factory.mktemp("many")
    (d / "all.rq").write_text(ALL)
    (d / "s.nt").write_text("".join(row(i) for i in range(20_000)))
    # explain writes ~440 KB of it (far past a pipe's 64 KB), check takes
    # ~0.3 s per copy: both write into the pipe after head has gone (EPIPE,
    # checked with strace; 1,500 alternatives cost four times as much)
    big = "SELECT ?x WHERE { " + " UNION ".join(
        f"{{ ?x <http://ex/p{i}> ?y }}" for i in range(400)) + " }\n"
    (d / "big.rq").write_text(big)
    return d


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table", "sparql-json"])
def test_run_into_head_ends_quietly(many, fmt):
    r = shell(f"epsparql run all.rq --stream s.nt --output-format {fmt} | head -1", many)
    assert r.stdout.splitlines()[-1] == "rc=0"
    assert len(r.stdout.splitlines()) == 3                   # head's line, "", rc
    if fmt != "sparql-json":             # written at the end: the whole stream runs
        assert "the output was closed by its reader: the run stopped there" in r.stderr
    summary = next(line for line in r.stderr.splitlines() if " events in " in line)
    assert "20,000 events" not in summary or fmt == "sparql-json"


def test_the_other_commands_into_head(many):
    for cmd in ("epsparql explain big.rq | head -3",
                "epsparql check big.rq big.rq all.rq | head -1",
                "epsparql run all.rq --stream s.nt --trace --trace-limit 20000 | head -2",
                "epsparql run all.rq --stream s.nt -q | head -c 10"):
        r = shell(cmd, many)
        assert r.stdout.splitlines()[-1] == "rc=0", (cmd, r.stderr)


# ---------------------------------------------------------------------------
# finding 7: caps, resources, failing output

def test_the_unbounded_seq_of_the_issue_stops_at_max_answers(tmp_path):
    """200,000 rows of one subject and predicate, gzip, a SEQ with no bound:
    the first 1,000 answers are written and the run stops in its first batch."""
    (tmp_path / "seq.rq").write_text(SEQ)
    with gzip.open(tmp_path / "s.nt.gz", "wt") as f:
        f.write("".join(row(i) for i in range(200_000)))
    r = cli("run", "seq.rq", "--stream", "s.nt.gz", "--max-answers", "1000", cwd=tmp_path)
    assert r.returncode == 1
    got = [(int(a["bindings"]["a"]["value"]), int(a["bindings"]["b"]["value"]))
           for a in map(json.loads, r.stdout.splitlines())]
    assert len(got) == len(set(got)) == 1000
    assert all(a < b <= 45 for a, b in got)        # the earliest pairs: 45*44/2 < 1000
    assert error_lines(r.stderr) == [
        "epsparql: error: stopped after 1,000 answers (--max-answers 1,000); they were "
        "written (raise --max-answers for more)"]
    assert "0 events in" in r.stderr and "stopped inside the batch of lines 1-5,000" in r.stderr
    assert "seq    SELECT     1,000 answers" in r.stderr


def test_max_goals_stops_after_the_batch_and_keeps_the_answers(tmp_path):
    (tmp_path / "q.rq").write_text("SELECT ?a ?b WHERE { ?s <http://ex/p> ?a } "
                                   "SEQ { ?s <http://ex/q> ?b }\n")
    rows = [row(i, "q" if i == 500 else "p") for i in range(10_000)]
    (tmp_path / "s.nt").write_text("".join(rows))
    r = cli("run", "q.rq", "--stream", "s.nt", "--max-goals", "3500", "--batch-size", "1000",
            cwd=tmp_path)
    assert r.returncode == 1
    assert len(r.stdout.splitlines()) == 500                # ?a before the q row at 500
    assert "4,000 events in" in r.stderr and "stopped inside" not in r.stderr
    [err] = error_lines(r.stderr)
    assert "3,999 partial matches stored, more than --max-goals 3,500" in err
    assert "getDURATION()" in err and "raise --max-goals" in err


def test_out_of_memory_is_one_line_and_earlier_answers_stay(tmp_path):
    (tmp_path / "all.rq").write_text(ALL)
    # 30 kB literals, each its own (one repeated literal would cross once per
    # batch), each with an escape: a long literal without one crosses by
    # reference and never fills Prolog's stack (docs/CORE.md, "Long texts")
    rows = [row(i) for i in range(1000)] + [row(i, value=f"{i}" + "x" * 30_000 + "\\t")
                                            for i in range(1000, 2000)]
    (tmp_path / "s.nt").write_text("".join(rows))
    r = cli("run", "all.rq", "--stream", "s.nt", "--batch-size", "1000", cwd=tmp_path,
            extra_env={"EPSPARQL_STACK_LIMIT": "20000000"})
    assert r.returncode == 1
    # batches end at 1,000 rows or at the end of a block of the reader
    # (long lines make smaller blocks): every batch before the one that ran
    # out went in whole, with its answers
    [err] = error_lines(r.stderr)
    m = re.match(r"epsparql: error in the engine in the batch of lines ([\d,]+)-([\d,]+) of s.nt: "
                 r"the engine ran out of memory \(Stack limit", err)
    assert m, err
    first, last = (int(x.replace(",", "")) for x in m.groups())
    assert 1001 <= first <= last <= 2000
    done = first - 1
    assert len(r.stdout.splitlines()) == done
    assert "--batch-size" in err and "EPSPARQL_STACK_LIMIT" in err
    assert f"{done:,} events in" in r.stderr


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table", "sparql-json"])
def test_a_full_disk_is_one_line(many, fmt):
    r = cli("run", "all.rq", "--stream", "s.nt", "--output-format", fmt, "--out", "/dev/full",
            cwd=many)
    assert r.returncode == 1
    assert error_lines(r.stderr) == ["epsparql: error writing the answers to /dev/full: No "
                                     "space left on device; the run stopped there"]
    r = cli("run", "all.rq", "--stream", "s.nt", "--trace", "--trace-limit", "20000",
            "--out", "/dev/full", cwd=many)
    assert r.returncode == 1 and "error writing the trace to /dev/full" in r.stderr
