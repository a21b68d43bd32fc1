"""flush() ends the stream: what comes after it is refused with a clear
error, never dropped as late without a word (issue 25, finding 2), and
the counters agree; clear_state() starts a new stream."""
from __future__ import annotations

import pyarrow as pa
import pytest
from rdflib import Literal, URIRef

from epsparql import Engine, StreamEndedError

EX = "http://example.org/"
S = EX + "s"
x, v = URIRef(EX + "x"), URIRef(EX + "v")
WINDOWED = (f"REGISTER QUERY c AS PREFIX ex: <{EX}> SELECT (COUNT(*) AS ?n) "
            f"FROM STREAM <{S}> [RANGE 10s STEP 10s] WHERE {{ ?s ex:v ?o }}")
EPSPARQL = f"PREFIX ex: <{EX}> SELECT ?o WHERE {{ ?s ex:v ?o }}"


@pytest.mark.parametrize("text", [WINDOWED, EPSPARQL])
def test_a_push_after_flush_is_refused_not_dropped(text):
    with Engine() as eng:
        q = eng.register(text)
        eng.push(x, v, Literal(1), 10, stream=S)
        eng.flush()
        first = list(q.results())
        assert len(first) == 1
        with pytest.raises(StreamEndedError, match="flush\\(\\) ended the stream"):
            eng.push(x, v, Literal(2), 20, stream=S)
        with pytest.raises(StreamEndedError):
            eng.push_many([(x, v, Literal(2), 20, None, S)])
        with pytest.raises(StreamEndedError):
            eng.push_arrow(pa.table({"s": [f"<{EX}x>"], "p": [f"<{EX}v>"],
                                     "o": ['"2"'], "start": [20]}))
        with pytest.raises(StreamEndedError, match="cannot advance"):
            eng.advance(30)
        eng.flush()                                  # again: nothing more happens
        assert len(q.results()) == 0
        assert eng.late == 0 and eng.window_stats()["late"] == 0
        # a new stream
        eng.clear_state()
        eng.push(x, v, Literal(2), 20, stream=S)
        eng.flush()
        assert len(q.results()) == 1 and eng.late == 0


def test_advance_does_not_end_the_stream():
    with Engine() as eng:
        q = eng.register(WINDOWED)
        eng.push(x, v, Literal(1), 5, stream=S)
        eng.advance(10)
        assert [a.end for a in q.results()] == [10]
        eng.push(x, v, Literal(2), 15, stream=S)
        eng.flush()
        assert [a.end for a in q.results()] == [20]


def test_restore_starts_the_stream_again():
    with Engine() as eng:
        eng.register(WINDOWED)
        eng.push(x, v, Literal(1), 5, stream=S)
        snap = eng.snapshot()
        eng.flush()
        eng.restore(snap)
        eng.push(x, v, Literal(2), 6, stream=S)      # accepted: the snapshot's stream goes on
        eng.flush()
