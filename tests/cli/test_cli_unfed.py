"""A windowed query whose streams got no row says so (issue 25, finding
9): an nt file's rows are all on the default stream, and a C-SPARQL query
over a named stream would otherwise answer nothing without a word."""
from __future__ import annotations

from rdflib import Literal, URIRef

from cli_child import cli
from epsparql import Engine

EX = "http://example.org/"
QUERY = (f"REGISTER QUERY avg AS SELECT ?s (AVG(?v) AS ?a) FROM STREAM <{EX}s> "
         f"[RANGE 10s STEP 1s] WHERE {{ ?s <{EX}v> ?v }} GROUP BY ?s\n")


def lines(n: int, stream: str = "") -> str:
    return "".join(f'<{EX}k{i % 3}> <{EX}v> "{i}"^^<http://www.w3.org/2001/XMLSchema#integer> '
                   f"{stream}{i} .\n" for i in range(n))


def test_an_nt_file_on_a_named_stream_query_says_where_the_rows_were(tmp_path):
    (tmp_path / "q.rq").write_text(QUERY)
    (tmp_path / "s.nt").write_text(lines(50))
    r = cli("run", "q.rq", "--stream", "s.nt", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    assert (f"note: query q reads <{EX}s>, which had no rows: the rows were 50 on the "
            f"default stream") in r.stderr
    assert "nt lines name none" in r.stderr


def test_no_note_when_the_stream_is_fed(tmp_path):
    (tmp_path / "q.rq").write_text(QUERY)
    (tmp_path / "s.nqt").write_text(lines(50, f"<{EX}s> "))
    r = cli("run", "q.rq", "--stream", "s.nqt", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout and "note:" not in r.stderr


def test_the_engine_says_which_queries_were_not_fed():
    with Engine() as eng:
        q = eng.register(QUERY)
        assert eng.unfed_queries() == []                   # nothing pushed yet
        eng.push(URIRef(EX + "k"), URIRef(EX + "v"), Literal(1), 1, stream=EX + "other")
        assert eng.unfed_queries() == [(q, [EX + "s"])]
        assert eng.stream_rows() == {EX + "other": 1}
        eng.push(URIRef(EX + "k"), URIRef(EX + "v"), Literal(1), 2, stream=EX + "s")
        assert eng.unfed_queries() == []
