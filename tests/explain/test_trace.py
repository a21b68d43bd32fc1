"""`epsparql run … --trace`: one block per triple with the partial matches
it stored, checked or expired and the answers it completed."""
from __future__ import annotations

import json
import re

import pytest

from epsparql.cli import main

QUERY = """PREFIX ex: <http://example.org/ns#>
SELECT ?sensor ?before ?after
WHERE { ?sensor ex:temperature ?before }
SEQ   { ?sensor ex:temperature ?after }
FILTER (?after > ?before + 5 && getDURATION() < "PT10M"^^xsd:duration)
"""

T = "<http://example.org/ns#temperature>"
H = "<http://example.org/ns#humidity>"
S1, S2 = "<http://example.org/s1>", "<http://example.org/s2>"


def lit(n: int) -> str:
    return f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'


# 1: s1's first reading (stored, waits for a later one)
# 2: another sensor
# 3: s1 again: pairs with 1 but rises only by 2 (no answer)
# 4: s1 at 30: completes 20 -> 30 and 22 -> 30
# 5: another predicate: nothing
# 6: eleven minutes after the first: the 10-minute window has passed for 1, 2, 3
STREAM = "\n".join([
    f"{S1} {T} {lit(20)} 0 .",
    f"{S2} {T} {lit(25)} 30 .",
    f"{S1} {T} {lit(22)} 60 .",
    f"{S1} {T} {lit(30)} 120 .",
    f"{S1} {H} {lit(30)} 130 .",
    f"{S1} {T} {lit(21)} 700 .",
]) + "\n"


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "rise.rq"
    q.write_text(QUERY)
    s = tmp_path / "readings.nt"
    s.write_text(STREAM)
    return q, s


def blocks(text: str) -> dict[str, str]:
    """The trace split at its block heads ([1], [2], …, [end of stream])."""
    out: dict[str, str] = {}
    key = "header"
    for line in text.splitlines():
        m = re.match(r"\[(\d+|end of stream)\]", line)
        if m:
            key = m.group(1)
        elif line.startswith("still waiting"):
            key = "waiting"
        out[key] = out.get(key, "") + line + "\n"
    return out


def test_text_trace_shows_insertion_answer_and_expiry(files, capsys):
    q, s = files
    assert main(["run", str(q), "--stream", str(s), "--trace"]) == 0
    out = capsys.readouterr().out
    b = blocks(out)
    assert set(b) == {"header", "1", "2", "3", "4", "5", "6", "end of stream", "waiting"}
    assert re.search(r"step n\d+ \(seq\) store ep_g\d+l: window 10min; holds \?sensor, \?before; "
                     r"joins on \?sensor", b["header"])
    # the first part is stored and waits
    assert b["1"].startswith("[1] <http://example.org/s1> ex:temperature 20  [0, 0]")
    assert re.search(r"inserted  step n\d+ \(seq\) stores partial match "
                     r"\{\?sensor=<http://example.org/s1>, \?before=20\} \[0, 0\]", b["1"])
    assert "answer" not in b["1"] and "checked" not in b["1"]
    # another sensor's reading is not a candidate for s1
    assert "checked" not in b["2"]
    # s1's second reading pairs with the first, but the filter rejects it
    assert re.search(r"checked   step n\d+ \(seq\): 1 stored partial match with "
                     r"\?sensor=<http://example.org/s1>: the triple could pair with it "
                     r"\(1 before, 2 after; 1 of them ended before it and within the window\)",
                     b["3"])
    assert "answer" not in b["3"]
    # the second part arrives: two answers
    assert "2 stored partial matches with ?sensor=<http://example.org/s1>" in b["4"]
    assert "answer    rise {?sensor=<http://example.org/s1>, ?before=20, ?after=30} [0, 120]" in b["4"]
    assert "answer    rise {?sensor=<http://example.org/s1>, ?before=22, ?after=30} [60, 120]" in b["4"]
    assert "no step stored, checked or removed a partial match; no answer" in b["5"]
    # eleven minutes later: the window has passed for the first three readings
    expired = [l for l in b["6"].splitlines() if l.strip().startswith("expired")]
    assert len(expired) == 3
    assert re.search(r"expired   step n\d+ \(seq\) partial match \{\?sensor=<http://example.org/s1>, "
                     r"\?before=20\} \[0, 0\]: started 700s before now \(700\), window 10min", b["6"])
    assert "?sensor=<http://example.org/s2>, ?before=25} [30, 30]" in b["6"]
    # of the three stored readings of s1 only the one at 120 is still in the window
    assert "(3 before, 2 after; 1 of them ended before it and within the window)" in b["6"]
    assert "answer" not in b["6"]
    assert b["waiting"].startswith("still waiting: 2 partial matches")
    assert "?before=30} [120, 120]" in b["waiting"] and "?before=21} [700, 700]" in b["waiting"]
    assert "totals: 5 inserted, 3 expired, 0 consumed, 2 answers" in out


def test_jsonl_trace_parses(files, capsys):
    q, s = files
    assert main(["run", str(q), "--stream", str(s), "--trace", "--output-format", "jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["type"] for o in lines] == ["header"] + ["triple"] * 6 + ["end", "waiting"]
    head, steps = lines[0], lines[1:7]
    assert head["queries"] == ["rise"] and len(head["stores"]) == 1
    assert head["stores"][0]["kind"] == "seq" and head["stores"][0]["window"] == 600
    assert [o["step"] for o in steps] == [1, 2, 3, 4, 5, 6]
    one = steps[0]
    assert one["triple"]["s"] == {"type": "uri", "value": "http://example.org/s1"}
    assert (one["start"], one["end"]) == (0, 0)
    [ins] = one["inserted"]
    assert ins["bindings"]["sensor"]["value"] == "http://example.org/s1"
    assert ins["bindings"]["before"]["value"] == "20" and (ins["start"], ins["end"]) == (0, 0)
    assert steps[2]["checked"][0]["before"] == 1 and steps[2]["checked"][0]["usable"] == 1
    answers = steps[3]["answers"]
    assert sorted((a["bindings"]["before"]["value"], a["start"], a["end"]) for a in answers) == \
        [("20", 0, 120), ("22", 60, 120)]
    assert all(a["query"] == "rise" for a in answers)
    assert [r["reason"] for r in steps[5]["removed"]] == ["expired"] * 3
    assert sorted(r["bindings"]["before"]["value"] for r in steps[5]["removed"]) == ["20", "22", "25"]
    assert len(lines[-1]["goals"]) == 2
    assert lines[-1]["totals"] == {"inserted": 5, "expired": 3, "consumed": 0, "answers": 2,
                                   "late": 0}


def test_trace_refuses_long_streams(files, capsys):
    q, s = files
    assert main(["run", str(q), "--stream", str(s), "--trace", "--trace-limit", "5"]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert "more than 5 triples" in cap.err and "--trace-limit" in cap.err
    assert main(["run", str(q), "--stream", str(s), "--trace", "--trace-limit", "6"]) == 0


def test_trace_options_checked(files, capsys):
    q, s = files
    assert main(["run", str(q), "--stream", str(s), "--trace-limit", "6"]) == 2
    assert "--trace-limit goes with --trace" in capsys.readouterr().err
    assert main(["run", str(q), "--stream", str(s), "--trace", "--output-format", "csv"]) == 2
    assert "JSON lines" in capsys.readouterr().err


def test_trace_of_construct_and_optional_steps(tmp_path, capsys):
    """A derived triple checks the step it reaches; an OPTIONALSEQ step and an
    EQUALSOPTIONAL answer decided when its instant closes."""
    (tmp_path / "alarm.rq").write_text(
        "PREFIX ex: <http://example.org/ns#>\n"
        "CONSTRUCT { ?s ex:alarm ?t } WHERE { ?s ex:temperature ?t FILTER (?t > 25) }\n")
    (tmp_path / "twice.rq").write_text(
        "PREFIX ex: <http://example.org/ns#>\n"
        "SELECT ?s ?a ?b WHERE { ?s ex:alarm ?a } SEQ { ?s ex:alarm ?b }\n"
        "FILTER (getDURATION() < \"PT1H\"^^xsd:duration)\n")
    (tmp_path / "hum.rq").write_text(
        "PREFIX ex: <http://example.org/ns#>\n"
        "SELECT ?s ?t ?h WHERE { ?s ex:temperature ?t } EQUALSOPTIONAL { ?s ex:humidity ?h }\n"
        "FILTER (getDURATION() < \"PT1H\"^^xsd:duration)\n")
    (tmp_path / "s.nt").write_text("\n".join([
        f"{S1} {T} {lit(30)} 0 .",
        f"{S1} {H} {lit(50)} 0 .",
        f"{S1} {T} {lit(31)} 60 .",
    ]) + "\n")
    args = ["run", *(str(tmp_path / f) for f in ("alarm.rq", "twice.rq", "hum.rq")),
            "--stream", str(tmp_path / "s.nt"), "--trace"]
    assert main(args) == 0
    b = blocks(capsys.readouterr().out)
    assert "answer    alarm {?s=<http://example.org/s1>, ?t=30} [0, 0] derives " \
           "<http://example.org/s1> ex:alarm 30" in b["1"]
    assert re.search(r"inserted  step n\d+ \(eqopt\) stores partial match "
                     r"\{\?s=<http://example.org/s1>, \?t=30\} \[0, 0\]", b["1"])
    assert "answer    hum {?s=<http://example.org/s1>, ?t=30, ?h=50} [0, 0]" in b["2"]
    assert re.search(r"checked   step n\d+ \(seq\): 1 stored partial match with "
                     r"\?s=<http://example.org/s1>: the derived triple <http://example.org/s1> "
                     r"ex:alarm 31 could pair with it", b["3"])
    assert "answer    twice {?s=<http://example.org/s1>, ?a=30, ?b=31} [0, 60]" in b["3"]
    # the reading at 60 closes instant 0 ... and the end closes instant 60: ?t=31 alone
    assert "answer    hum {?s=<http://example.org/s1>, ?t=31} [60, 60]" in b["end of stream"]


def test_the_trace_reports_rule_errors_at_their_triple_and_step():
    """Errors cross as data: the trace names the step and the query."""
    from rdflib import Literal, URIRef
    from epsparql import Engine
    from epsparql.explain.trace import Tracer
    with Engine() as eng:
        q = eng.register(QUERY, name="rise")
        eng.add_rules("boom(S) <- triple(S, 'http://example.org/ns#humidity', O) "
                      "where sparql_eval:sparql_number(O, V), V > 25, atom_length(f(O), _).")
        tracer = Tracer(eng, [q])
        s1 = URIRef("http://example.org/s1")
        ok = tracer.push((s1, URIRef("http://example.org/ns#humidity"), Literal(20), 1, 1))
        bad = tracer.push((s1, URIRef("http://example.org/ns#humidity"), Literal(30), 2, 2))
        assert ok["errors"] == []
        (err,) = bad["errors"]
        graph = eng.rule_graph()
        (boom,) = [r for r in graph.rules if r.name == "boom"]
        assert err.node == boom.node and err.queries == ["boom"]
        assert err.kind == "type_error" and "atom_length" in err.message
