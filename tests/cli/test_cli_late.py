"""Late rows through ``epsparql run`` and ``--trace`` (issue 17, finding 1).

A row that ends before rows already processed (beyond ``--lateness``) is
not processed: the summary counts it, the first one is named once on
standard error with file:line and the ``--lateness`` that keeps it, and
the trace marks it ``late`` where it arrived.  On generated disordered
streams the answers, the count and the first late line agree with plain
references: tests/sparql_reference.py over the stream without its late
rows, and the rule for late rows written out directly.
"""
from __future__ import annotations

import json
import random

import pytest

from sparql_reference import QueryGen, answers, diff_message, gen_stream, render
from cli_child import answer_counter, cli, stream_text
from ordering_reference import disorder, late_reference

SEQ = "SELECT ?a ?b WHERE { <http://ex/s> <http://ex/p> ?a } SEQ { <http://ex/s> <http://ex/p> ?b }\n"
ISSUE_STREAM = "".join(f'<http://ex/s> <http://ex/p> "{v}"^^<http://www.w3.org/2001/XMLSchema#'
                       f'integer> {t} .\n' for v, t in ((1, 10), (2, 30), (3, 20), (4, 40)))


@pytest.fixture
def issue(tmp_path):
    (tmp_path / "seq.rq").write_text(SEQ)
    (tmp_path / "late.nt").write_text(ISSUE_STREAM)
    return tmp_path


def pairs(stdout):
    return sorted((int(a["bindings"]["a"]["value"]), int(a["bindings"]["b"]["value"]))
                  for a in map(json.loads, stdout.splitlines()))


def test_the_late_row_is_counted_and_named_once(issue):
    r = cli("run", "seq.rq", "--stream", "late.nt", cwd=issue)
    assert r.returncode == 0
    assert pairs(r.stdout) == [(1, 2), (1, 4), (2, 4)]
    named = [line for line in r.stderr.splitlines() if "late row late.nt:" in line]
    assert len(named) == 1
    assert ("late row late.nt:3: it ends at 20, 10 s before a row already processed "
            "(ending at 30)") in named[0] and "--lateness 10" in named[0]
    summary = next(line for line in r.stderr.splitlines() if " events in " in line)
    assert "4 events" in summary and "1 late row not processed (first: late.nt:3" in summary


def test_lateness_keeps_them(issue):
    for flag in ("--lateness", "--allowed-lateness"):
        r = cli("run", "seq.rq", "--stream", "late.nt", flag, "10", cwd=issue)
        assert r.returncode == 0
        assert pairs(r.stdout) == [(1, 2), (1, 3), (1, 4), (2, 4), (3, 2), (3, 4)]
        assert "late" not in r.stderr.replace("--lateness", "")


def test_the_trace_agrees(issue):
    r = cli("run", "seq.rq", "--stream", "late.nt", "--trace", "--output-format", "jsonl",
            cwd=issue)
    assert r.returncode == 0
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    steps = {x["step"]: x for x in lines if x["type"] == "triple"}
    assert steps[3]["late"] is True and steps[3]["late_by"] == 10
    assert not steps[3]["answers"] and not steps[3]["inserted"]
    assert lines[-1]["totals"]["late"] == 1 and lines[-1]["totals"]["answers"] == 3
    assert "late row late.nt:3" in r.stderr
    text = cli("run", "seq.rq", "--stream", "late.nt", "--trace", cwd=issue).stdout
    assert "late      ended 10s before a triple already processed: not processed " \
           "(--lateness 10 or more would keep it)" in text
    # with --lateness the trace shows the row held back, then processed in order
    r = cli("run", "seq.rq", "--stream", "late.nt", "--trace", "--lateness", "10",
            "--output-format", "jsonl", cwd=issue)
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    order = [x["step"] for x in lines if x["type"] == "triple"]
    assert order == [1, 3, 2, 4]
    got = sorted((int(a["bindings"]["a"]["value"]), int(a["bindings"]["b"]["value"]))
                 for x in lines if x["type"] in ("triple", "end") for a in x["answers"])
    assert got == [(1, 2), (1, 3), (1, 4), (2, 4), (3, 2), (3, 4)]
    held = {x["step"]: x.get("held_until") for x in lines if x["type"] == "triple"}
    assert held == {1: 2, 3: 4, 2: 4, 4: "end"}


@pytest.mark.parametrize("seed", range(8))
def test_generated_disordered_streams(tmp_path, seed):
    rng = random.Random(500 + seed)
    q = QueryGen(rng, ops=("Join", "Union", "SeqJoin", "EqJoin", "Filter")).select()
    rows = disorder(rng, gen_stream(rng, rng.randint(8, 20)), rng.randint(2, 8))
    lateness = rng.choice((0, 1, 2))
    late = late_reference(rows, lateness)
    kept = [r for i, r in enumerate(rows) if i not in set(late)]
    (tmp_path / "q.rq").write_text(render(q))
    (tmp_path / "s.nt").write_text(stream_text(rows))
    r = cli("run", "q.rq", "--stream", "s.nt", "--lateness", str(lateness), "--batch-size",
            str(rng.randint(1, 6)), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    expected = answers(q, kept)
    got = answer_counter(r.stdout)
    assert got == expected, diff_message(render(q), kept, expected, got)
    if late:
        assert f"{len(late)} late row" in r.stderr
        assert f"(first: s.nt:{late[0] + 1};" in r.stderr
        assert sum("late row s.nt:" in x for x in r.stderr.splitlines()) == 1
    else:
        assert "late row" not in r.stderr
    # the trace processes the same rows: the same answers
    t = cli("run", "q.rq", "--stream", "s.nt", "--lateness", str(lateness), "--trace",
            "--output-format", "jsonl", cwd=tmp_path)
    objs = [json.loads(x) for x in t.stdout.splitlines()]
    traced = "\n".join(json.dumps(a) for o in objs if o["type"] in ("triple", "end")
                       for a in o["answers"])
    assert answer_counter(traced) == got
    assert objs[-1]["totals"]["late"] == len(late)
