"""SPARQLstream against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import pytest

from dialect_cases import check_against_reference, sparqlstream_query


@pytest.mark.parametrize("seed", range(80))
def test_sparqlstream_matches_reference(seed):
    check_against_reference(2000 + seed, sparqlstream_query, "sparqlstream")


SRBENCH_STYLE = """\
PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
SELECT DISTINCT ?sensor ?value
FROM NAMED STREAM <http://cwi.nl/SRBench/observations> [NOW - 10 S SLIDE 5 S]
WHERE {
  ?obs om-owl:observedBy ?sensor ;
       a weather:TemperatureObservation ;
       om-owl:result ?r .
  ?r om-owl:floatValue ?value .
}
"""


def test_issue_23_morph_streams_windows_and_plain_patterns():
    """Issue 23, finding 3: SPARQLstream as morph-streams publishes it (every
    SRBench/CSRBench SPARQLstream query): ``[NOW - 10 S SLIDE 5 S]`` parses,
    and plain patterns match the named stream's triples.  Observations at
    2, 7 and 13: windows [−5, 5), [0, 10), [5, 15), [10, 20) hold {2},
    {2, 7}, {7, 13} and {13} (at the end of input every window opened is
    closed: CSRBench's oracle); a pressure observation never matches; with
    window_semantics="cql" the plain patterns read only the background."""
    from rdflib import Literal, URIRef
    from epsparql import Engine
    OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
    W = "http://knoesis.wright.edu/ssw/ont/weather.owl#"
    RDF_TYPE = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    S = "http://cwi.nl/SRBench/observations"
    rows = []
    for i, (t, kind, v) in enumerate([(2, "Temperature", 20.5), (7, "Temperature", 21.0),
                                      (9, "Pressure", 1000.0), (13, "Temperature", 19.5)]):
        obs, res = URIRef(f"http://ex.org/obs{i}"), URIRef(f"http://ex.org/res{i}")
        sensor = URIRef(f"http://ex.org/sensor{i % 2}")
        for s, p, o in [(obs, URIRef(OM + "observedBy"), sensor),
                        (obs, RDF_TYPE, URIRef(W + kind + "Observation")),
                        (obs, URIRef(OM + "result"), res),
                        (res, URIRef(OM + "floatValue"), Literal(v))]:
            rows.append((s, p, o, t, None, S))
    got = {}
    for sem in ("engine", "cql"):
        with Engine(reasoning="none", window_semantics=sem) as eng:
            q = eng.register(SRBENCH_STYLE, dialect="sparqlstream")
            eng.push_many(rows)
            eng.flush()
            got[sem] = sorted((a.end, str(a["sensor"])[-1], a["value"].toPython())
                              for a in q.results())
    assert got["engine"] == [(5, "0", 20.5), (10, "0", 20.5), (10, "1", 21.0),
                             (15, "1", 19.5), (15, "1", 21.0), (20, "1", 19.5)]
    assert got["cql"] == []
    # morph-streams' count window (the text alone reads as C-SPARQL, which
    # has the same clause: the dialect is said)
    with Engine(reasoning="none") as eng:
        q = eng.register(SRBENCH_STYLE.replace("[NOW - 10 S SLIDE 5 S]", "[TRIPLES 8]"),
                         dialect="sparqlstream")
        eng.push_many(rows)
        eng.flush()
        assert q.algebra.windows[0].window.count == 8
        assert sorted((a.end, a["value"].toPython()) for a in q.results()) == [
            (2, 20.5), (7, 20.5), (7, 21.0), (9, 21.0), (13, 19.5)]
