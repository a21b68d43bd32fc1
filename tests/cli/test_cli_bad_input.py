"""Bad input to every command: exit code, one line saying what is wrong,
nothing already produced lost (the table of docs/CLI.md, "Bad input").

Each case runs ``epsparql`` (``epsparql.cli.main``, in this process: the
same code as the console script) on small hand-made files and checks the
exit code, that the error is one line (with the source line and a caret
under it for a query error) containing the expected words, that no
Python or Prolog report leaks, and what reached standard output.
"""
from __future__ import annotations

import gzip
import io
import sys

import pytest

from epsparql.cli import main

from cli_child import NEVER

INT = "^^<http://www.w3.org/2001/XMLSchema#integer>"


def nt(i: int, p: str = "p") -> str:
    return f'<http://ex/s> <http://ex/{p}> "{i}"{INT} {i} .\n'


FILES = {
    "ok.rq": "SELECT ?v WHERE { <http://ex/s> <http://ex/p> ?v }\n",
    "ok2.rq": "SELECT ?v WHERE { <http://ex/s> <http://ex/p> ?v }\n",
    "syntax.rq": "PREFIX ex: <http://ex/>\nSELECT ?x WHERE {\n  ?x ex:p ?y SEQ\n}\n",
    "limit.rq": "SELECT ?x WHERE { ?x <http://ex/p> ?y }\nLIMIT 5\n",
    "literal.rq": ('SELECT ?x WHERE { ?x <http://ex/p> ?y } SEQ { ?x <http://ex/p> ?z }\n'
                   'FILTER(getDURATION() < "P5"^^xsd:duration)\n'),
    "regex.rq": 'SELECT ?x WHERE { ?x <http://ex/p> ?y FILTER(REGEX(STR(?y), "(")) }\n',
    "rebind.rq": "SELECT (?y*2 AS ?y) WHERE { ?x <http://ex/p> ?y }\n",
    "prefix.rq": "SELECT ?x WHERE { ?x ex:p ?y }\n",
    "deep.rq": "SELECT * WHERE " + "{ " * 1200 + "?s ?p ?o" + " }" * 1200 + "\n",
    "empty.rq": "",
    "warn.rq": ("SELECT ?x WHERE { ?x <http://ex/p> ?y } SEQ { ?x <http://ex/p> ?z }\n"
                "FILTER(getDURATION() < 5)\n"),
    "relative.rq": "SELECT ?x WHERE { ?x <p> ?y }\n",
    "s.nt": "".join(nt(i) for i in range(1, 6)),
    "mid.nt": nt(1) + nt(2) + '<http://ex/s> <http://ex/p> "oops 3 .\n' + nt(4),
    "order.nt": nt(1) + nt(3) + nt(2) + nt(4),
    "endfirst.nt": nt(1) + '<http://ex/s> <http://ex/p> "2" 9 4 .\n' + nt(5),
    "nan.nt": nt(1) + '<http://ex/s> <http://ex/p> "2" nan .\n',
    "relative.nt": nt(1) + '<s> <http://ex/p> "2" 2 .\n',
    "s.jsonl": '{"s": "<http://ex/s>", "p": "<http://ex/p>", "o": "\\"1\\"", "start": 1}\n{oops\n',
    "nohead.csv": "s,p\n<http://ex/s>,<http://ex/p>\n",
    "bad.ttl": "garbage {{{\n",
    # the stream dialects (issue 13): the same errors, with file:line:column
    "win.rq": ("REGISTER QUERY win AS\nSELECT (COUNT(*) AS ?n)\n"
               "FROM STREAM <http://ex/st> [RANGE 4s STEP 2s]\nWHERE { ?s <http://ex/p> ?v }\n"),
    "wsyntax.rq": "SELECT ?s WHERE { STREAM <http://ex/st> [RANGE 5s { ?s <http://ex/p> ?o } }\n",
    "wagg.rq": ("SELECT ?s (COUNT(?o) AS ?n) WHERE { STREAM <http://ex/st> [RANGE 5s] "
                "{ ?s <http://ex/p> ?o } }\n"),
    "wunit.rq": "SELECT ?s WHERE { STREAM <http://ex/st> [RANGE 5 parsecs] { ?s <http://ex/p> ?o } }\n",
    "wzero.rq": "SELECT ?s WHERE { STREAM <http://ex/st> [RANGE 0s] { ?s <http://ex/p> ?o } }\n",
    "wdeep.rq": ("SELECT ?s WHERE { STREAM <http://ex/st> [NOW] " + "{ " * 1200 + "?s ?p ?o"
                 + " }" * 1200 + " }\n"),
    "wrelative.rq": "SELECT ?s WHERE { STREAM <http://ex/st> [NOW] { ?s <p> ?o } }\n",
    "s.nqt": "".join(f'<http://ex/s> <http://ex/p> "{i}" <http://ex/st> {i} .\n' for i in range(1, 6)),
    "rels.nqt": ('<http://ex/s> <http://ex/p> "1" <http://ex/st> 1 .\n'
                 '<http://ex/s> <http://ex/p> "2" <st> 2 .\n'),
    "st.jsonl": ('{"s": "<http://ex/s>", "p": "<http://ex/p>", "o": "\\"1\\"", "start": 1, '
                 '"stream": "http://ex/st"}\n'
                 '{"s": "<http://ex/s>", "p": "<http://ex/p>", "o": "\\"2\\"", "start": 2, '
                 '"stream": 5}\n'),
    "st.csv": ("s,p,o,start,stream\n<http://ex/s>,<http://ex/p>,\"\"\"1\"\"\",1,<http://ex/st>\n"
               "<http://ex/s>,<http://ex/p>,\"\"\"2\"\"\",2,not an iri\n"),
    "twice.csv": "s,p,o,start,stream,stream\n",
    "good.ttl": "<http://ex/a> <http://ex/b> <http://ex/c> .\n",
}
BINARY = {
    "latin1.rq": "SELECT ?x WHERE { ?x <http://ex/é> ?y }\n".encode("latin-1"),
    "latin1.nt": nt(1).encode() + '<http://ex/s> <http://ex/p> "é" 2 .\n'.encode("latin-1")
    + nt(3).encode(),
    "trunc.nt.gz": gzip.compress("".join(nt(i) for i in range(1, 2000)).encode())[:900],
}


@pytest.fixture
def files(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    for name, data in BINARY.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "adir").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    try:
        code = main(list(args))
    except SystemExit as e:                 # argparse
        code = e.code
    out, err = capsys.readouterr()
    for word in NEVER:
        assert word not in err, err
    return code, out, err


def the_error(err: str) -> str:
    """The one line that reports the error (a query error: FILE:L:C: ...,
    then the source line and the caret, indented)."""
    lines = [x for x in err.splitlines()
             if ": error" in x or x.split(":")[0].endswith(".rq") and ": warning" not in x]
    assert len(lines) == 1, err
    return lines[0]


# (args, exit code, words of the error line, answers written to standard output)
RUN = [
    # queries
    (["run", "missing.rq", "--stream", "s.nt"], 2, "query file not found: missing.rq", 0),
    (["run", "adir", "--stream", "s.nt"], 2, "not a query file: adir", 0),
    (["run", "latin1.rq", "--stream", "s.nt"], 2, "cannot read query file latin1.rq: 'utf-8' codec", 0),
    (["run", "empty.rq", "--stream", "s.nt"], 2, "empty.rq:1:1: expected PREFIX/BASE or SELECT", 0),
    (["run", "syntax.rq", "--stream", "s.nt"], 2, "syntax.rq:3:14: expected", 0),
    (["run", "limit.rq", "--stream", "s.nt"], 2, "limit.rq:2:1: LIMIT", 0),
    (["run", "literal.rq", "--stream", "s.nt"], 2, 'literal.rq:2:22: "P5"^^xsd:duration is not a valid', 0),
    (["run", "regex.rq", "--stream", "s.nt"], 2, "invalid regular expression", 0),
    (["run", "rebind.rq", "--stream", "s.nt"], 2, "rebind.rq:1:", 0),
    (["run", "prefix.rq", "--stream", "s.nt"], 2, "prefix.rq:1:22: unknown prefix 'ex:'", 0),
    (["run", "deep.rq", "--stream", "s.nt"], 2, "levels deep, the limit", 0),
    (["run", "-", "--stream", "-"], 2, "cannot both come from standard input", 0),
    # streams
    (["run", "ok.rq", "--stream", "missing.nt"], 2, "stream file not found: missing.nt", 0),
    (["run", "ok.rq", "--stream", "adir"], 2, "stream path is a directory: adir", 0),
    (["run", "ok.rq", "--stream", "mid.nt"], 1, "mid.nt:3:29: literal without its closing quote", 2),
    (["run", "ok.rq", "--stream", "mid.nt", "--batch-size", "1"], 1, "mid.nt:3:29:", 2),
    (["run", "ok.rq", "--stream", "latin1.nt"], 1, "latin1.nt:2: not valid UTF-8", 1),
    (["run", "ok.rq", "--stream", "endfirst.nt"], 1, "endfirst.nt:2:", 1),
    (["run", "ok.rq", "--stream", "nan.nt"], 1, "nan.nt:2:", 1),
    (["run", "ok.rq", "--stream", "relative.nt"], 1, "relative.nt:2:1: relative IRI <s>", 1),
    (["run", "ok.rq", "--stream", "s.jsonl"], 1, "s.jsonl:2:", 1),
    (["run", "ok.rq", "--stream", "s.nt", "--format", "jsonl"], 1, "s.nt:1:1: invalid JSON", 0),
    (["run", "ok.rq", "--stream", "nohead.csv"], 1, "the CSV header must name the columns", 0),
    (["run", "ok.rq", "--stream", "nohead.csv", "--on-error", "skip"], 1, "the CSV header", 0),
    (["run", "ok.rq", "--stream", "trunc.nt.gz"], 1, "error reading trunc.nt.gz:", None),
    # queries and streams of the stream dialects
    (["run", "wsyntax.rq", "--stream", "s.nqt"], 2, "wsyntax.rq:1:51: expected ']', SLIDE or "
     "TUMBLING, found '{' (in a CQELS-QL query)", 0),
    (["run", "wagg.rq", "--stream", "s.nqt"], 2, "wagg.rq:1:8: ?s is neither grouped nor aggregated", 0),
    (["run", "wunit.rq", "--stream", "s.nqt"], 2, "wunit.rq:1:50: unknown time unit 'parsecs' (expected a duration such as 10s or 5m)", 0),
    (["run", "wzero.rq", "--stream", "s.nqt"], 2, "wzero.rq:1:", 0),
    (["run", "wdeep.rq", "--stream", "s.nqt"], 2, "levels deep, the limit", 0),
    (["run", "win.rq", "--stream", "s.nqt", "--dialect", "cqels"], 2,
     "win.rq:1:1: expected PREFIX/BASE or SELECT/CONSTRUCT/ASK, found 'REGISTER' (in a CQELS-QL", 0),
    (["run", "win.rq", "--stream", "s.nqt", "--dialect", "sql"], 2, "--dialect: invalid choice: 'sql'", 0),
    (["run", "win.rq", "--stream", "s.nqt", "--base", "st"], 2, "argument --base: not an absolute IRI", 0),
    (["run", "win.rq", "ok.rq", "--stream", "s.nqt", "--trace"], 2,
     "--trace shows EP-SPARQL queries' partial matches or windowed queries' windows, one kind "
     "at a time: trace ok and win in two runs", 0),
    (["run", "win.rq", "--stream", "s.nqt", "--trace", "--justify"], 2,
     "--justify explains EP-SPARQL answers", 0),
    (["run", "win.rq", "--stream", "rels.nqt"], 1, "rels.nqt:2:33: relative IRI <st>", 0),
    (["run", "win.rq", "--stream", "st.jsonl"], 1, 'st.jsonl:2: "stream": a term is', 0),
    (["run", "win.rq", "--stream", "st.csv"], 1, 'st.csv:3: "stream": malformed IRI', 0),
    (["run", "win.rq", "--stream", "twice.csv"], 1, "the CSV header must name the columns "
     "s,p,o,start[,end][,stream] (found 's,p,o,start,stream,stream'; a column is named twice)", 0),
    (["run", "win.rq", "--stream", "s.nqt", "--background", "http://ex/g=no.ttl"], 2,
     "background file not found: no.ttl (for the named graph <http://ex/g>)", 0),
    (["run", "win.rq", "--stream", "s.nqt", "--background", "http://ex/g=bad.ttl"], 2,
     "cannot read background file bad.ttl: at line 1", 0),
    # flags
    (["run", "ok.rq"], 2, "the following arguments are required: --stream", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--base", "not an iri"], 2,
     "argument --base: not an absolute IRI: 'not an iri'", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--batch-size", "0"], 2, "--batch-size: must be at least 1", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--lateness", "-1"], 2, "--lateness/--allowed-lateness: must be a finite", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--lateness", "nan"], 2, "--lateness/--allowed-lateness: must be a finite", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--max-answers", "x"], 2, "--max-answers: expected a whole", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--max-goals", "0"], 2, "--max-goals: must be at least 1", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--out", "no/dir/a.jsonl"], 2, "cannot write no/dir/a.jsonl", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--out", "adir"], 2, "cannot write adir: Is a directory", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--output-format", "xml"], 2, "invalid choice: 'xml'", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--format", "ttl"], 2, "invalid choice: 'ttl'", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--reasoning", "full"], 2, "invalid choice: 'full'", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--background", "no.ttl"], 2, "background file not found: no.ttl", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--background", "bad.ttl"], 2,
     "cannot read background file bad.ttl: at line 1", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--trace-limit", "5"], 2, "--trace-limit goes with --trace", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--trace", "--output-format", "csv"], 2,
     "--trace writes text (the default) or JSON lines", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--trace", "--max-answers", "3"], 2,
     "--max-answers goes with a normal run", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--trace", "--trace-limit", "3"], 2,
     "s.nt has more than 3 triples", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--frobnicate"], 2, "unrecognized arguments: --frobnicate", 0),
    (["frobnicate"], 2, "invalid choice: 'frobnicate'", 0),
    (["run", "ok.rq", "--stream", "s.nt", "--max-answers", "3"], 1,
     "stopped after 3 answers (--max-answers 3)", 3),
    (["run", "ok.rq", "--stream", "s.nt", "--max-answers", "3", "--output-format", "csv"], 1,
     "stopped after 3 answers", 4),
]


@pytest.mark.parametrize("args, code, words, written", RUN, ids=[" ".join(c[0]) for c in RUN])
def test_run(files, capsys, monkeypatch, args, code, words, written):
    got, out, err = run(capsys, *args, stdin="" if "-" in args else None, monkeypatch=monkeypatch)
    assert got == code, err
    line = the_error(err)
    assert words in line, err
    if written is not None:
        assert len(out.splitlines()) == written, out
    if code == 1 and "--max-answers" not in args:       # a failure of the stream: the summary
        assert " events in " in err


def test_a_query_error_shows_the_source_line_and_a_caret(files, capsys):
    code, out, err = run(capsys, "check", "syntax.rq")
    lines = err.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("syntax.rq:3:14:"))
    assert lines[i + 1] == "    ?x ex:p ?y SEQ" and lines[i + 2].index("^") == lines[i + 1].index("SEQ")


def test_the_trace_keeps_what_it_traced(files, capsys):
    code, out, err = run(capsys, "run", "ok.rq", "--stream", "mid.nt", "--trace")
    assert code == 1 and "mid.nt:3:29: literal without its closing quote (the triples before " \
                         "it were traced" in the_error(err)
    assert "[1]" in out and "[2]" in out and "[3]" not in out


@pytest.mark.parametrize("args, code, words", [
    (["check", "missing.rq"], 2, "query file not found: missing.rq"),
    (["check", "ok.rq", "syntax.rq", "ok2.rq"], 2, "syntax.rq:3:14:"),
    (["check", "ok.rq", "--base", "x"], 2, "argument --base: not an absolute IRI: 'x'"),
    (["check"], 2, "the following arguments are required: QUERY.rq"),
    (["explain", "syntax.rq"], 2, "syntax.rq:3:14:"),
    (["check", "win.rq", "wagg.rq"], 2, "wagg.rq:1:8:"),
    (["check", "win.rq", "--dialect", "rspql"], 2, "win.rq:1:10: expected"),
    (["explain", "wsyntax.rq"], 2, "wsyntax.rq:1:51:"),
    (["explain", "win.rq", "--base", "x"], 2, "argument --base: not an absolute IRI: 'x'"),
    (["spark", "run", "win.rq", "--stream", "s.nqt", "--out", "o", "--background",
      "http://ex/g=good.ttl"], 2, "named background graphs (IRI=FILE) go with epsparql run"),
    (["explain", "ok.rq", "--background", "no.ttl"], 2, "background file not found: no.ttl"),
    (["explain", "ok.rq", "--background", "bad.ttl"], 2, "cannot read background file bad.ttl"),
    (["explain", "ok.rq", "--png", "adir"], 2, "cannot write adir: Is a directory"),
    (["explain", "ok.rq", "--png", "no/dir/x.png"], 2, "cannot write no/dir/x.png"),
    (["spark", "run", "ok.rq", "--stream", "none*.nt", "--out", "o"], 2, "no stream file matches none*.nt"),
    (["spark", "run", "ok.rq", "--stream", "s.nt", "--out", "o", "--partitions", "0"], 2,
     "--partitions: must be at least 1"),
    (["spark", "run", "syntax.rq", "--stream", "s.nt", "--out", "o"], 2, "syntax.rq:3:14:"),
    (["spark", "run", "ok.rq", "--stream", "s.nt", "--out", "o", "--background", "bad.ttl"], 2,
     "cannot read background file bad.ttl"),
    (["spark", "run", "ok.rq", "--stream", "s.nt", "--out", "o", "--base", "x y"], 2,
     "--base: not an absolute IRI"),
    (["spark", "stream", "ok.rq", "--out", "o", "--checkpoint", "c"], 2,
     "give --watch DIR or --socket HOST:PORT"),
    (["spark", "stream", "ok.rq", "--watch", "nodir", "--out", "o", "--checkpoint", "c"], 2,
     "--watch needs a directory: nodir"),
    (["spark", "stream", "ok.rq", "--socket", "h:99999", "--out", "o", "--checkpoint", "c"], 2,
     "--socket takes HOST:PORT"),
    (["spark", "stream", "ok.rq", "--watch", "adir", "--out", "o", "--checkpoint", "c",
      "--format", "csv"], 2, "invalid choice: 'csv'"),
    (["spark", "stream", "ok.rq", "--watch", "adir", "--out", "o", "--checkpoint", "c",
      "--lateness", "-5"], 2, "--allowed-lateness/--lateness: must be a finite"),
])
def test_other_commands(files, capsys, args, code, words):
    got, out, err = run(capsys, *args)
    assert got == code, err
    assert words in the_error(err), err


def test_check_still_checks_the_good_queries(files, capsys):
    code, out, err = run(capsys, "check", "ok.rq", "syntax.rq", "limit.rq", "ok2.rq")
    assert code == 2
    assert out.splitlines() == ["ok.rq: ok (SELECT ?v)", "ok2.rq: ok (SELECT ?v)"]
    assert sum(x.startswith(("syntax.rq:", "limit.rq:")) for x in err.splitlines()) == 2


def test_warnings_name_file_and_position_every_time(files, capsys):
    code, out, err = run(capsys, "check", "warn.rq", "relative.rq", "warn.rq")
    assert code == 0 and len(out.splitlines()) == 3
    lines = err.splitlines()
    assert sum(x.startswith("warn.rq:2:22: warning: getDURATION() < 5: it compares an "
                            "xsd:duration with a number") for x in lines) == 2
    assert any(x.startswith("relative.rq:1:19: warning: <p> is a relative IRI and the query "
                            "has no BASE") for x in lines)
    code, out, err = run(capsys, "check", "relative.rq", "--base", "http://ex/")
    assert code == 0 and "relative IRI" not in err


def test_dialect_queries_warn_of_relative_iris_as_ep_sparql_does(files, capsys):
    code, out, err = run(capsys, "check", "wrelative.rq")
    assert code == 0 and out.splitlines() == ["wrelative.rq: ok (cqels: SELECT ?s)"]
    assert any(x.startswith("wrelative.rq:1:52: warning: <p> is a relative IRI and the query "
                            "has no BASE") for x in err.splitlines()), err
    code, out, err = run(capsys, "check", "wrelative.rq", "--base", "http://ex/")
    assert code == 0 and "relative IRI" not in err
