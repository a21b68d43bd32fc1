"""The columns sink (``prolog/bridge_columns.pl``) against the JSON
encoding of what was emitted, on random detections.

Each case emits random detections straight into ``columns_sink/3`` inside
``with_columns/3`` calls on one engine's dictionary: heads of arities 0..7
(one name with several arities too), arguments of every kind (atoms,
strings, ints, big ints, floats, compounds flat and nested, lists, unbound
variables, a variable twice in one detection), tiny buffers (runs split
across buffers, rows wider than a buffer) and small dictionary bounds
(generations start afresh between calls), and calls that raise halfway
(the dictionary starts afresh after them).  What the chunks decode to
must equal, value and type, the reference: the same detections written
by the bridge's JSON encoder (``bridge_json:json_term//1``) and read by
``terms.from_json`` -- the Detection path of the bridge."""
from __future__ import annotations

import random
from typing import Any

import pytest

from conftest import same_strict

from epsparql.core import Compound, Detection, PlString
from epsparql.core.columns import ColumnReceiver, Columns, TermTable
from epsparql.core.runtime import PrologError, runtime
from epsparql.core.terms import Raw, from_json, to_prolog

ATOMS = ["a", "ACME", "it's", "quote\"d", "ünï €", "", "[]", "X", "_", "a b", "http://x#p"]
STRINGS = [PlString(s) for s in ("", "str", "it's \"x\"", "a\\b")]
NUMBERS = [0, 1, -7, 255, 256, 2**40, 2**70, -(2**65), 0.0, -0.0, 2.5, -1e300, 1e-300, 123456.789]
#: Lexical forms of typed literals: short printable ASCII ones cross
#: inline (kind 8), the others (a newline, non-ASCII, too long) by the
#: dictionary.
LEXES = ["01.50", "-0.0", "1.5E300", "", "3", " 4 ", "2024-01-01T00:00:00Z", "P1DT2.5S",
         "a\nb", "ü1", "9" * 300, "9" * 256]
HEADS = [("h", 0), ("h", 2), ("g", 1), ("f", 3), ("w", 4), ("v", 5), ("u", 7), ("t", 6)]

_DRIVE = ("term_string(_Ds, Text), "
          "bridge_columns:with_columns(Engine, R, "
          "    forall(member(d(_E, _T1, _T2), _Ds), bridge_columns:columns_sink(_E, _T1, _T2))), "
          "findall([_J, _T1, _T2], ( member(d(_E, _T1, _T2), _Ds), "
          "                          phrase(bridge_json:json_term(_E), _Cs), "
          "                          string_codes(_J, _Cs) ), Want)")
_DRIVE_RAISING = ("term_string(_Ds, Text), "
                  "catch(bridge_columns:with_columns(Engine, R, "
                  "    ( forall(member(d(_E, _T1, _T2), _Ds), "
                  "             bridge_columns:columns_sink(_E, _T1, _T2)), "
                  "      throw(stop_here) )), stop_here, true)")


def _arg(rng: random.Random, depth: int, shared: list[str]) -> Any:
    r = rng.random()
    if r < 0.12:
        return _literal(rng)
    r = rng.random()
    if r < 0.3:
        return rng.choice(ATOMS)
    if r < 0.55:
        return rng.choice(NUMBERS)
    if r < 0.65:
        return rng.choice(STRINGS)
    if r < 0.75:
        if shared and rng.random() < 0.5:
            return Raw(shared[0])                   # the same variable again
        name = f"_V{rng.randrange(10**9)}"
        shared[:] = [name]
        return Raw(name)
    if r < 0.88 and depth < 2:
        n = rng.randint(1, 3)
        return Compound(rng.choice(("n", "f", "g")),
                        tuple(_arg(rng, depth + 1, shared) for _ in range(n)))
    if depth < 2:
        return [_arg(rng, depth + 1, shared) for _ in range(rng.randint(0, 3))]
    return rng.choice(ATOMS)


def _literal(rng: random.Random) -> Any:
    """A typed literal as the codec makes them, or a near miss (another
    functor or arity, a datatype that is not an atom, a lexical form that
    is an atom, a big integer value, a value that is not a number)."""
    name = rng.choice(("n", "n", "d", "dur", "t"))
    value = rng.choice(NUMBERS + [PlString("1"), "x"])
    dt = rng.choice(("http://www.w3.org/2001/XMLSchema#decimal", "dt", "ACME", "[]",
                     PlString("dt"), "ünï €"))
    lex = rng.choice(LEXES)
    lex = PlString(lex) if rng.random() < 0.9 else lex
    args = [value, dt, lex] if rng.random() < 0.95 else [value, dt]
    return Compound(name, tuple(args))


def _detections(rng: random.Random, n: int, repeat: float) -> list[tuple]:
    """n detections; with probability ``repeat`` a row repeats the head
    and some arguments of the row before (as the answers of one event do)."""
    out: list[tuple] = []
    t = 0
    for _ in range(n):
        t += rng.choice((0, 0, 1, 2))
        if out and rng.random() < repeat:
            name, args = out[-1][0]
            args = [a if rng.random() < 0.6 else _arg(rng, 0, []) for a in args]
        else:
            name, ar = rng.choice(HEADS)
            shared: list[str] = []
            args = [_arg(rng, 0, shared) for _ in range(ar)]
        t1 = rng.choice((t, t - 1, float(t) - 0.5))
        out.append(((name, args), t1, t))
    return out


def _text(dets: list[tuple]) -> str:
    items = []
    for (name, args), t1, t2 in dets:
        e = Compound(name, tuple(args)) if args else name
        items.append(f"d({to_prolog(e)}, {to_prolog(t1)}, {to_prolog(t2)})")
    return "[" + ",".join(items) + "]"


def _decoded(chunks: list[Columns]) -> list[Detection]:
    """The chunks' detections, after checking that the columns say the
    same as the Detection objects."""
    out = []
    for c in chunks:
        dets = c.detections()
        assert len(c) == len(dets) == len(c.start) == len(c.end)
        assert same_strict(list(c.start), [d.start for d in dets])
        assert same_strict(list(c.end), [d.end for d in dets])
        for i in range(c.arity):
            col = c.column(i)
            assert same_strict(list(col), [d.event.args[i] for d in dets])
            if c.kinds[i] == "id":
                assert same_strict([c.terms[k] for k in c.ids(i)], list(col))
        out.extend(dets)
    return out


def _runs(chunks: list[Columns]) -> list[tuple[str, int]]:
    return [(c.name, c.arity) for c in chunks]


@pytest.mark.parametrize("seed", range(40))
def test_sink_decodes_to_what_was_emitted(seed, limits):
    rng = random.Random(seed)
    rt = runtime()
    max_rows = rng.choice((1, 2, 3, 5, 17, 4096))
    limits(max_rows, rng.choice((1, 4, 30, 1048576)))
    engine = f"test_columns_sink_{seed}"
    table = TermTable()
    kept: list[tuple[list[Columns], list[Detection]]] = []   # across generations
    try:
        for call in range(rng.randint(2, 6)):
            dets = _detections(rng, rng.randint(0, 60), rng.choice((0.0, 0.5, 0.9)))
            text = _text(dets)
            rec = ColumnReceiver(table)
            if rng.random() < 0.2:
                # a call that raises halfway: what was sent stays right,
                # the next call starts a new generation
                gen = table.generation
                rt.query_once(_DRIVE_RAISING, {"Engine": engine, "R": rec, "Text": text})
                assert sum(map(len, rec.chunks)) <= len(dets)
                if rec.chunks:
                    assert all(len(c) <= max_rows for c in rec.chunks)
                kept.append((rec.chunks, None))
                after = ColumnReceiver(table)
                rt.query_once(_DRIVE, {"Engine": engine, "R": after, "Text": "[d(z(a), 0, 0)]"})
                assert table.generation != gen
                assert _decoded(after.chunks) == [Detection(Compound("z", ("a",)), 0, 0)]
                continue
            want_json = rt.query_once(_DRIVE, {"Engine": engine, "R": rec, "Text": text})["Want"]
            want = [Detection(from_json(j), t1, t2) for j, t1, t2 in want_json]
            got = _decoded(rec.chunks)
            assert same_strict(got, want), next((g, w) for g, w in zip(got, want) if not same_strict(g, w))
            assert all(1 <= len(c) <= max_rows for c in rec.chunks)
            # a chunk is a run of one head: consecutive chunks of one head
            # only where a buffer was full
            heads = [((n, len(a)) if a else (n, 0)) for (n, a), _, _ in dets]
            runs = [h for i, h in enumerate(heads) if i == 0 or heads[i - 1] != h]
            merged = [h for i, h in enumerate(_runs(rec.chunks))
                      if i == 0 or _runs(rec.chunks)[i - 1] != h]
            assert merged == [h for i, h in enumerate(runs) if i == 0 or runs[i - 1] != h]
            kept.append((rec.chunks, got))
        for chunks, got in kept:              # older chunks decode as they did
            if got is not None:
                assert same_strict(_decoded(chunks), got)
    finally:
        rt.query_once("bridge_columns:columns_drop(E)", {"E": engine})


def test_a_receiver_that_raises_stops_the_call(limits):
    """No chunk after the one the receiver refused; the error comes back
    as a resource error and the dictionary starts afresh."""
    limits(2, 1048576)
    rt = runtime()
    engine = "test_columns_sink_raise"
    table = TermTable()
    seen: list[Columns] = []

    def take(chunk: Columns) -> None:
        seen.append(chunk)
        if len(seen) == 2:
            raise RuntimeError("enough")

    rec = ColumnReceiver(table, take)
    text = _text([(("g", [f"k{i}"]), i, i) for i in range(20)])
    try:
        with pytest.raises(PrologError) as err:
            rt.query_once(_DRIVE, {"Engine": engine, "R": rec, "Text": text})
        assert "detection_receiver" in str(err.value)
        assert len(seen) == 2 and isinstance(rec.error, RuntimeError)
        assert [d.event.args[0] for c in seen for d in c.detections()] == ["k0", "k1", "k2", "k3"]
        gen = table.generation
        again = ColumnReceiver(table)
        rt.query_once(_DRIVE, {"Engine": engine, "R": again, "Text": text})
        assert table.generation == gen + 1
        assert [d.event.args[0] for d in _decoded(again.chunks)] == [f"k{i}" for i in range(20)]
    finally:
        rt.query_once("bridge_columns:columns_drop(E)", {"E": engine})


def test_the_atom_shortcut_does_not_outlive_a_binding():
    """An unbound argument, then the same position bound by the engine on
    backtracking: each row gets its own term (a variable is not kept as
    "the term before")."""
    rt = runtime()
    engine = "test_columns_sink_var"
    rec = ColumnReceiver(TermTable())
    try:
        rt.query_once("bridge_columns:with_columns(Engine, R, "
                      "  ( bridge_columns:columns_sink(h(a, p), 1, 2), "
                      "    ( member(_W, [_, q, _, q]), bridge_columns:columns_sink(h(a, _W), 1, 2), "
                      "      fail ; true ), "
                      "    member(_V, [_]), bridge_columns:columns_sink(h(a, f(_V)), 1, 2), _V = r, "
                      "    bridge_columns:columns_sink(h(a, f(_V)), 1, 2) ))",
                      {"Engine": engine, "R": rec})
        got = [d.event.args[1] for d in _decoded(rec.chunks)]
        assert got == ["p", None, "q", None, "q", Compound("f", (None,)), Compound("f", ("r",))]
    finally:
        rt.query_once("bridge_columns:columns_drop(E)", {"E": engine})
