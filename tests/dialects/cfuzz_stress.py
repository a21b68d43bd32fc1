"""A differential stress of the windowed aggregates' C paths
(prolog/c/pane_accum.c, rows_batch.c, columns_buffer.c's columns_groups/5).

Why: the C code keeps the window's content in its own hash table and folds
64-bit integers natively; it must never crash the process, overflow
silently or differ from the Prolog code at scale (table growth, many
groups, long runs).  Each case is a random windowed aggregate query (C-SPARQL,
RSP-QL, CQELS or SPARQLstream syntax; shapes the C path takes and ones it
refuses) over a random stream (thousands of subjects, re-occurring
triples, late arrivals, values at the int64 boundaries and sums past
them, decimals/doubles/strings/blank nodes coming and going, float
times); the engine's answers are compared with the forced Prolog path
(``stream_panes:pane_accumulator(prolog)``), and, for the small integer
cases, with the brute-force reference (dialect_reference.py); with
``--rescan``, integer cases also with the engine re-scanning each window.  Some cases
also snapshot and restore the engine mid-stream, or add background
knowledge mid-stream under RDFS.

Run by hand (one process; it is CPU-bound)::

    PYTHONPATH=$PWD python tests/dialects/cfuzz_stress.py --seed 1 --n 200 --size 5000

test_cfuzz_stress.py runs a few small cases in the suite.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import RDFS, XSD

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dialect_cases import EX, PREFIX, S1, answers_key  # noqa: E402
from dialect_reference import RefQuery, RefWindow, Row, evaluate  # noqa: E402

V, W = URIRef(EX + "v"), URIRef(EX + "w")
BIG = 2 ** 63


def value(rnd: random.Random, kind: str):
    """An object: mostly integers (boundaries and overflowing sums in
    'edge'), other kinds in 'mixed'."""
    if kind == "small":
        return Literal(rnd.randint(-5, 9))
    k = rnd.random()
    if k < 0.6 or kind == "int":
        if rnd.random() < (0.3 if kind == "edge" else 0.05):
            return Literal(rnd.choice([BIG - 1, BIG - 2, -BIG, -BIG + 1, BIG, -BIG - 1,
                                       2 ** 62, -(2 ** 62), 2 ** 64 + 3]))
        return Literal(rnd.randint(-1000, 1000))
    if k < 0.7:
        return Literal(Decimal(rnd.choice(["0.5", "-1.25", "3.0", "1e2"])), datatype=XSD.decimal)
    if k < 0.8:
        return Literal(rnd.choice([0.5, -2.5, 1e300, float("nan")]))
    if k < 0.85:
        return Literal("7", datatype=XSD.int)
    if k < 0.9:
        return Literal(rnd.choice(["x", "y"]))
    if k < 0.95:
        return BNode(f"o{rnd.randrange(5)}")
    return URIRef(EX + f"n{rnd.randrange(5)}")


def subject(rnd: random.Random, groups: int):
    k = rnd.random()
    if k < 0.05:
        return BNode(f"b{rnd.randrange(50)}")
    if k < 0.07:                                    # generalised RDF: literal subjects
        return rnd.choice([Literal(rnd.randrange(5)), Literal("s"), Literal(2 ** 63 - 1)])
    return URIRef(EX + f"g{rnd.randrange(groups)}")


def stream(rnd: random.Random, n: int, kind: str, groups: int, float_times: bool) -> list[Row]:
    """n rows on S1: times nondecreasing in small steps (15% of streams
    start past 2^53 or near 2^63/2^64), ~3% late by 1-3 s, ~20% of rows
    repeat an earlier triple (it moves between panes); in 'mixed' streams
    the non-integers come in bursts and leave again."""
    t = Fraction(rnd.choice([0, 1, 5]))
    if kind != "small" and rnd.random() < 0.15:     # past 2^53 (floats lose units), 2^63
        t = Fraction(rnd.choice([2 ** 62, 2 ** 63 - 20, 2 ** 64 - 20, -(2 ** 62)]))
    rows: list[Row] = []
    burst = 0
    for i in range(n):
        t += rnd.choice([0, 0, 0, Fraction(1, 4), Fraction(1, 2), 1, 1, 2])
        late = kind != "small" and rnd.random() < 0.03      # the reference's cases: none
        tau = t - rnd.choice([1, 2, 3]) if late else t
        if tau.denominator == 1 and not (float_times and rnd.random() < 0.1):
            tau = int(tau)
        else:
            tau = float(tau)
        if rows and rnd.random() < 0.2:
            old = rnd.choice(rows[-200:])
            rows.append(Row(S1, old.s, old.p, old.o, tau))
            continue
        if kind == "mixed" and burst == 0 and rnd.random() < 0.02:
            burst = rnd.randint(5, 40)
        vk = "mixed" if burst else ("edge" if kind in ("edge", "mixed") else kind)
        burst = max(0, burst - 1)
        p = rnd.choice([V, V, V, W])
        rows.append(Row(S1, subject(rnd, groups), p, value(rnd, vk), tau))
    return rows


WINDOWS = [(1, 1), (3, 1), (4, 2), (2, 2), (5, 1), (10, 3), (6, 6)]


def window_text(dialect: str, a: int, b: int) -> str:
    return {"csparql": f"[RANGE {a}s STEP {b}s]",
            "rspql": f"[RANGE PT{a}S STEP PT{b}S]",
            "cqels": f"[RANGE {a}s SLIDE {b}s]",
            "sparqlstream": f"[NOW - {a} S SLIDE {b} S]"}[dialect]


def query(rnd: random.Random, dialect: str) -> tuple[str, dict]:
    """A windowed aggregate query; mostly shapes the C path takes."""
    a, b = rnd.choice(WINDOWS)
    aggs = rnd.sample(["(COUNT(*) AS ?n)", "(COUNT(?v) AS ?c)", "(SUM(?v) AS ?s)",
                       "(AVG(?v) AS ?a)"], rnd.randint(1, 4))
    if rnd.random() < 0.15:
        aggs.append(rnd.choice(["(MIN(?v) AS ?lo)", "(MAX(?v) AS ?hi)"]))   # refused by C
    grouped = rnd.random() < 0.75
    select = ("?x " if grouped else "") + " ".join(aggs)
    mods = "GROUP BY ?x" if grouped else ""
    if grouped and rnd.random() < 0.2:
        mods += " HAVING (COUNT(*) > 1)"
    if grouped and rnd.random() < 0.2:
        mods += " ORDER BY ?x LIMIT 5"
    body = rnd.choice(["?x ex:v ?v", "?x ex:v ?v", "?x ex:v ?v", "?x ?pr ?v",
                       "?x ex:v ?v FILTER (?v != 0)"])
    w = window_text(dialect, a, b)
    if dialect == "csparql":
        text = (f"REGISTER QUERY agg AS\n{PREFIX}SELECT {select}\nFROM STREAM <{S1}> {w}\n"
                f"WHERE {{ {body} }}\n{mods}")
    elif dialect == "rspql":
        text = (f"{PREFIX}REGISTER RSTREAM <{EX}out> AS\nSELECT {select}\n"
                f"FROM NAMED WINDOW <{EX}w1> ON <{S1}> {w}\n"
                f"WHERE {{ WINDOW <{EX}w1> {{ {body} }} }}\n{mods}")
    elif dialect == "cqels":
        text = f"{PREFIX}SELECT {select}\nWHERE {{ STREAM <{S1}> {w} {{ {body} }} }}\n{mods}"
    else:
        text = (f"{PREFIX}SELECT RSTREAM {select}\nFROM STREAM <{S1}> {w}\n"
                f"WHERE {{ {body} }}\n{mods}")
    return text, {"a": a, "b": b, "select": select, "body": body, "mods": mods}


def run(text: str, rows: list[Row], *, semantics: str, reasoning: str = "none",
        snapshot_at: int | None = None, bg_at: int | None = None, incremental: bool = True):
    """The answers (exact literals) and errors of one engine run; with
    snapshot_at, the engine is snapshotted there and a fresh one restored
    from it finishes the stream; with bg_at, W rdfs:subPropertyOf V and
    three ex:v triples (the window's pattern matches them too) are added to
    the background there."""
    from epsparql import Engine

    def make():
        e = Engine(reasoning=reasoning, window_semantics=semantics,
                   incremental_windows=incremental)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = e.register(text)
        return e, q

    quads = [(r.s, r.p, r.o, r.tau, None, r.stream) for r in rows]
    eng, q = make()
    cut = snapshot_at if snapshot_at is not None else bg_at
    try:
        if cut is None:
            eng.push_many(quads)
        else:
            eng.push_many(quads[:cut])
            got = list(q.results())
            if snapshot_at is not None:
                state = eng.snapshot()
                eng.close()
                eng, q = make()
                eng.restore(state)
            else:                   # and triples the window's pattern matches too
                eng.add_background([(W, RDFS.subPropertyOf, V)] +
                                   [(URIRef(EX + f"g{i}"), V, Literal(i - 1)) for i in range(3)])
            eng.push_many(quads[cut:])
        eng.flush()
        res = (got if cut is not None else []) + list(q.results())
        return ([(a.start, a.end, sorted((k, v.n3()) for k, v in a.bindings.items()))
                 for a in res], [str(e) for e in eng.errors], q.incremental)
    finally:
        eng.close()


def prolog_path(on: bool) -> None:
    from epsparql.core.runtime import runtime
    runtime().query_once(f"stream_panes:pane_accumulator({'prolog' if on else 'native'})")


def segments() -> int:
    """The segments pa_segment/7 took so far (is the C path in use?)."""
    from epsparql.core.runtime import runtime
    try:
        return int(runtime().query_once("stream_panes:pane_segments(N)")["N"])
    except Exception:           # stream_panes not loaded yet
        return 0


def bags(answers: list) -> dict:
    """Answers as a bag per instant (re-scanning may order an instant's
    rows otherwise)."""
    out: dict = {}
    for start, end, b in answers:
        out.setdefault(end, []).append((start, b))
    return {k: sorted(v) for k, v in out.items()}


def case(seed: int, size: int, *, reference: bool = True, ref_only: bool = False,
         rescan: bool = False) -> str:
    """One case; raises AssertionError on a difference.  Returns a summary.
    ref_only: a case the reference checks too (C-SPARQL, engine
    semantics, small integers, few groups, no late rows)."""
    rnd = random.Random(seed)
    dialect = rnd.choice(["csparql", "csparql", "rspql", "cqels", "sparqlstream"])
    kind = rnd.choice(["small", "int", "edge", "edge", "mixed"])
    groups = rnd.choice([3, 50, 3000, 20000])
    if ref_only:
        dialect, kind, groups, size = "csparql", "small", rnd.choice([3, 50]), min(size, 400)
    n = rnd.randint(size // 4, size)
    rows = stream(rnd, n, kind, groups, float_times=rnd.random() < 0.3)
    text, shape = query(rnd, dialect)
    semantics = "engine" if ref_only else rnd.choice(["engine", "engine", "cql", "csrbench"])
    extra = 1.0 if ref_only else rnd.random()
    opts: dict = {}
    if extra < 0.15:
        opts["snapshot_at"] = rnd.randint(0, n)
    elif extra < 0.25:
        opts.update(reasoning=rnd.choice(["rdfs", "none"]), bg_at=rnd.randint(0, n))
    segs0 = segments()
    try:
        native = run(text, rows, semantics=semantics, **opts)
        segs = segments() - segs0
        prolog_path(True)
        try:
            expected = run(text, rows, semantics=semantics, **opts)
        finally:
            prolog_path(False)
    except Exception as e:          # a refused combination (e.g. csrbench x dialect)
        if "semantics" in str(e) or "not supported" in str(e):
            return f"skip {dialect}/{semantics}: {str(e)[:60]}"
        raise
    assert native[1] == expected[1], ("errors differ", seed, text, native[1][:3], expected[1][:3])
    if native[0] != expected[0]:
        diff = next(i for i, (x, y) in enumerate(zip(native[0] + [None], expected[0] + [None]))
                    if x != y)
        raise AssertionError(("native != prolog", seed, dialect, semantics, opts, text, diff,
                              native[0][diff:diff + 2], expected[0][diff:diff + 2]))
    checked = ""
    # not with doubles (the panes sum them exactly, re-scanning in order) nor a
    # schema added mid-stream (a pane counts a triple with what it entailed
    # on arrival, re-scanning with the schema of each instant): docs/DIALECTS.md
    if (rescan and native[2] and kind in ("small", "int")
            and not ("bg_at" in opts and opts.get("reasoning") == "rdfs")):
        again = run(text, rows, semantics=semantics, incremental=False, **opts)
        got, want = bags(native[0]), bags(again[0])
        first = next((k for k in sorted(set(got) | set(want), key=float)
                      if got.get(k) != want.get(k)), None)
        assert first is None, ("native != re-scanning", seed, semantics, opts, text, first,
                               got.get(first), want.get(first))
        checked += " +rescan"
    if (reference and dialect == "csparql" and semantics == "engine" and kind == "small"
            and not opts and n <= 400 and groups <= 50):
        ref = RefQuery([RefWindow(S1, "range", Fraction(shape["a"]), Fraction(shape["b"]),
                                  default=True, t0=Fraction(0), from_t0=True)],
                       f"{PREFIX}SELECT {shape['select']}\nWHERE {{ {shape['body']} }}\n"
                       f"{shape['mods']}", ("close", True), "rstream")
        want = answers_key(evaluate(ref, rows, {}))
        from epsparql import Engine
        with Engine(reasoning="none", window_semantics="engine") as e:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                q = e.register(text)
            e.push_many((r.s, r.p, r.o, r.tau, None, r.stream) for r in rows)
            e.flush()
            got = answers_key([(a.start, a.end, a.bindings) for a in q.results()])
        assert got == want, ("engine != reference", seed, text)
        checked = " +ref"
    return (f"ok {dialect}/{semantics} {kind} n={n} groups={groups} inc={native[2]} "
            f"answers={len(native[0])} C-segments={segs} errors={len(native[1])} {sorted(opts)}{checked}")


def big_case(seed: int, n: int) -> str:
    """The content table at scale: n rows of mostly unique triples (unique
    subjects, so their atoms can be collected once they leave; integer
    objects), ~n/20 per second, through a 10 s window sliding by 1 s (the
    table grows to hold every key of the window, then they all leave and
    new ones come), atom garbage collections forced between chunks; a
    COUNT(*) and SUM over the whole window and per few groups, against
    the Prolog path."""
    from epsparql import Engine
    from epsparql.core.runtime import runtime
    rnd = random.Random(seed)
    per = max(1, n // 20)
    rows = [Row(S1, URIRef(EX + f"u{seed}-{i}") if rnd.random() < 0.9 else
                URIRef(EX + f"g{rnd.randrange(3)}"), V,
                Literal(rnd.choice([rnd.randint(-9, 9), BIG - 1, -BIG])), i // per)
            for i in range(n)]
    text = (f"REGISTER QUERY agg AS\n{PREFIX}SELECT (COUNT(*) AS ?n) (SUM(?v) AS ?s) "
            f"(COUNT(?v) AS ?c)\nFROM STREAM <{S1}> [RANGE 10s STEP 1s]\nWHERE {{ ?x ex:v ?v }}")

    def go():
        with Engine(reasoning="none") as e:
            q = e.register(text)
            quads = [(r.s, r.p, r.o, r.tau, None, r.stream) for r in rows]
            for k in range(0, n, 5000):
                e.push_many(quads[k:k + 5000])
                runtime().query_once("garbage_collect_atoms")
            e.flush()
            return [(a.start, a.end, sorted((k, v.n3()) for k, v in a.bindings.items()))
                    for a in q.results()], [str(x) for x in e.errors]
    segs0 = segments()
    native = go()
    segs = segments() - segs0
    prolog_path(True)
    try:
        expected = go()
    finally:
        prolog_path(False)
    assert native == expected, ("big: native != prolog", seed, n,
                                [(x, y) for x, y in zip(native[0], expected[0]) if x != y][:3])
    return f"big ok n={n} answers={len(native[0])} C-segments={segs}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--n", type=int, default=20, help="number of cases")
    ap.add_argument("--size", type=int, default=2000, help="largest stream length")
    ap.add_argument("--ref", action="store_true",
                    help="only cases the brute-force reference checks too (slower per row)")
    ap.add_argument("--rescan", action="store_true",
                    help="also against the engine re-scanning each window (no panes)")
    ap.add_argument("--big", type=int, default=0,
                    help="also one case of this many mostly unique triples (the table at scale)")
    args = ap.parse_args(argv)
    if args.big:
        print(big_case(args.seed, args.big), flush=True)
    c0 = time.process_time()
    bad = 0
    for s in range(args.seed, args.seed + args.n):
        try:
            print(s, case(s, args.size, ref_only=args.ref, rescan=args.rescan), flush=True)
        except AssertionError as e:
            bad += 1
            print(s, "FAIL", str(e)[:3000], flush=True)
    print(f"{args.n} cases, {bad} failed, {time.process_time() - c0:.1f} CPU s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
