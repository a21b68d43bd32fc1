"""Set semantics on the columns (epsparql.answers.RepeatFilter): a detection
equal to one kept before (same arguments, same interval) is dropped, one
chunk after another, whatever the chunks look like.  Checked against the
definition (a set of the rows kept so far) on generated chunk sequences:
chunks in strictly ascending (end, start) order (the pre-checked way) and
not, repeats inside a chunk and across chunk boundaries within one end
instant, int and float times that are equal as numbers, the dictionary
starting afresh (a new term table) inside an instant, plain value columns,
and a snapshot of the open instant taken between chunks.  Then the
Engine end to end: an all-pairs query over price streams with duplicated
triples, against a plain evaluation of the query."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.answers import RepeatFilter, TermNodes
from epsparql.rdf.json_terms import node_from_json, node_to_json

TERMS = ["http://ex.org/a", "http://ex.org/b", "http://ex.org/c"]


def _chunks(rnd: random.Random, n_chunks: int, ordered: bool) -> list[list[tuple]]:
    """Chunks of rows (args, start, end): ends ascending over the whole
    sequence; ``ordered``: each chunk in strictly ascending (end, start)
    order, repeats only across chunk boundaries."""
    out: list[list[tuple]] = []
    t = 10
    prev_last: list[tuple] = []
    for _ in range(n_chunks):
        rows: list[tuple] = []
        if prev_last and rnd.random() < 0.7:           # continue the open instant
            if rnd.random() < 0.6:                      # with a repeat of a kept row
                rows.append(rnd.choice(prev_last))
        for _ in range(rnd.randrange(1, 12)):
            if rnd.random() < 0.6:
                t += rnd.choice([0, 1, 1, 2])
            args = (rnd.randrange(3), rnd.randrange(3))
            s = t - rnd.randrange(4)
            if rnd.random() < 0.3:                      # equal as numbers, another type
                s = float(s)
            rows.append((args, s, t if rnd.random() < 0.7 else float(t)))
            if not ordered and rnd.random() < 0.3:
                rows.append(rnd.choice(rows))           # a repeat inside the chunk
        if ordered:
            uniq = {}
            for r in rows:
                uniq.setdefault((r[2], r[1]), r)       # one row per interval
            rows = [uniq[k] for k in sorted(uniq)]
            if out and prev_last and rows[0][2] < prev_last[-1][2]:
                rows = [r for r in rows if r[2] >= prev_last[-1][2]] or [prev_last[-1]]
        else:
            rows.sort(key=lambda r: r[2])              # ends ascending, starts any order
            if out and rows[0][2] < out[-1][-1][2]:
                rows = [r for r in rows if r[2] >= out[-1][-1][2]] or [out[-1][-1]]
        out.append(rows)
        last = rows[-1][2]
        prev_last = [r for r in rows if r[2] == last]
    return out


def _reference(chunks: list[list[tuple]]) -> list[list[int]]:
    """Per chunk, the rows kept: those not equal to one kept before."""
    kept: set = set()
    out = []
    for rows in chunks:
        mine = []
        for r, (args, s, e) in enumerate(rows):
            k = (tuple(TERMS[a] for a in args), s, e)
            if k not in kept:
                kept.add(k)
                mine.append(r)
        out.append(mine)
    return out


def _run(chunks: list[list[tuple]], rnd: random.Random, snapshot: bool) -> list[list[int]]:
    f = RepeatFilter()
    table = TermNodes(list(TERMS))
    out = []
    for rows in chunks:
        if rnd.random() < 0.15:             # the dictionary starts afresh, same terms
            table = TermNodes(list(TERMS))
        if snapshot and rnd.random() < 0.3:
            f = RepeatFilter.restored(f.export(node_to_json), node_from_json)
        value_col = rnd.random() < 0.2      # the second argument as plain values
        cols: list = [[a[0] for a, _, _ in rows]]
        tables = [table]
        if value_col:
            cols.append(range(len(rows)))
            tables.append(TermNodes([TERMS[a[1]] for a, _, _ in rows]))
        else:
            cols.append([a[1] for a, _, _ in rows])
            tables.append(table)
        got = f.fresh(cols, tables, [r[1] for r in rows], [r[2] for r in rows])
        out.append(list(range(len(rows))) if got is None else got)
    return out


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ordered=st.booleans(), snapshot=st.booleans())
def test_repeat_filter_keeps_exactly_the_first_of_equal_rows(seed, ordered, snapshot):
    rnd = random.Random(seed)
    chunks = _chunks(rnd, rnd.randrange(1, 8), ordered)
    assert _run(chunks, rnd, snapshot) == _reference(chunks)


def test_an_ordered_chunk_repeating_the_open_instant_is_filtered():
    # the pre-checked way: each chunk strictly ordered, the repeats at the
    # boundary (the first row of a chunk = the last kept of the one before)
    f = RepeatFilter()
    t = TermNodes(list(TERMS))
    assert f.fresh([[0, 1], [1, 2]], [t, t], [1, 2], [5, 5]) is None
    assert f.fresh([[1, 0], [2, 2]], [t, t], [2, 3], [5, 5]) == [1]
    assert f.fresh([[1], [2]], [t, t], [2.0], [5.0]) == []          # equal as numbers
    assert f.fresh([[1], [2]], [t, t], [2], [6]) is None             # another instant


# ---------------------------------------------------------------------------
# the Engine end to end

EX = "http://ex.org/"
PRICE = URIRef(EX + "price")
QUERY = """PREFIX : <http://ex.org/>
SELECT ?k ?p1 ?p2 WHERE { ?k :price ?p1 } SEQ { ?k :price ?p2 }
FILTER (?p2 > ?p1 && getDURATION() <= "PT%dS"^^xsd:duration)"""


@pytest.mark.parametrize("seed", range(4))
def test_engine_all_pairs_with_duplicate_triples_is_a_set(seed):
    rnd = random.Random(seed)
    w = rnd.choice([5, 50, 10_000])
    keys = [URIRef(f"{EX}k{i}") for i in range(rnd.randrange(1, 3))]
    events = []
    t = 0
    for _ in range(rnd.randrange(200, 400)):
        t += rnd.choice([0, 1, 1, 1, 2])               # several events at one instant
        k = rnd.choice(keys)
        p = rnd.choice([1.0, 2.0, 2.5, 3.0, 4.0, rnd.uniform(0, 10)])
        events.append((k, p, t))
        if rnd.random() < 0.2:                          # the same triple again, same time
            events.append((k, p, t))
    rows = [(k, PRICE, Literal(p), t) for k, p, t in events]
    want = {(str(k1), p1, p2, t1, t2)
            for k1, p1, t1 in events for k2, p2, t2 in events
            if k1 == k2 and t1 < t2 and p2 > p1 and t2 - t1 <= w}
    with Engine(batch_size=rnd.choice([7, 64, 5000])) as eng:
        q = eng.register(QUERY % w)
        eng.push_many(rows)
        eng.flush()
        got = [(str(a["k"]), a["p1"].toPython(), a["p2"].toPython(), a.start, a.end)
               for a in q.results()]
    assert len(got) == len(set(got))
    assert set(got) == want
