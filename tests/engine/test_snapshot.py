"""State snapshots: export and restore of an engine's stream state.

The contract: ``b.restore(a.snapshot())``, where ``b`` has the same queries
registered in the same order, makes ``b`` continue exactly as ``a`` would
(the same answers, bindings, start and end, for the rest of the stream);
the same for ``CoreEngine.export_state``/``import_state`` with core rules.

Differential: generated queries/rules and streams (the generators of the
differential tests, imported) are run once uninterrupted and once cut at
random points into segments, each segment in another engine (another
Prolog module) restored from the previous segment's snapshot.  The
multiset union of the segments' answers must equal the uninterrupted
run's, and the final states must be identical.  Engines are reused through
``clear_state`` (as the Spark pipeline does per key), which is itself
checked to behave as a fresh engine.

Then: a snapshot of other queries or rules is refused with ValueError;
malformed and hostile blobs are refused with a clear error, the engine's
previous state intact and nothing run; hostile IRIs/literals survive
byte-identical.  Real SWI-Prolog, no mocks.
"""
from __future__ import annotations

import random
import subprocess
import warnings
import zlib
from collections import Counter

import pytest
from rdflib import BNode, Literal, URIRef

import sparql_reference as R
from conftest import as_tuple
from core_reference import rule_text
from epsparql import Engine
from epsparql.core import CoreEngine, PlString, term
from epsparql.core.event_engine import CORE_STATE_MAGIC
from epsparql.core.runtime import swipl_executable
from epsparql.query_engine import SNAPSHOT_MAGIC
# the case generators of tests/core/ and tests/engine/ (folders under tests/, on sys.path)
from core.test_core_differential import gen_case
from engine.test_sparql_differential import construct_case

from conftest import ROOT  # the repository root, wherever this file sits
NS = R.NS

pytestmark = pytest.mark.filterwarnings("ignore::epsparql.query_engine.UnboundedStateWarning")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def answer_key(a):
    return (frozenset(a.bindings.items()), frozenset(a.triples), a.start, a.end)


def drain(handles, into):
    for h, c in zip(handles, into):
        c.update(answer_key(a) for a in h.results())


def core_text_of_snapshot(blob: bytes) -> str:
    payload = zlib.decompress(blob[len(SNAPSHOT_MAGIC):])
    return payload.partition(b"\n")[2].decode("utf-8")


def same_state(t1: str, t2: str) -> bool:
    """Two state texts describe the same state: identical lines, the dedup
    set (o/3 lines) compared as a set (its enumeration order is a hash's)."""
    def split(t):
        lines = t.splitlines()
        return [x for x in lines if not x.startswith("o(")], Counter(x for x in lines if x.startswith("o("))
    return split(t1) == split(t2)


def play(engine, ops):
    for kind, arg in ops:
        if kind == "push":
            engine.push_many(arg)
        else:
            engine.advance(arg)


class Coverage:
    """What the cuts of a differential test carried across (so that the
    test cannot pass vacuously)."""

    def __init__(self):
        self.counts = Counter()

    def note_engine(self, blob: bytes):
        text = core_text_of_snapshot(blob)
        py = zlib.decompress(blob[len(SNAPSHOT_MAGIC):]).partition(b"\n")[0]
        self.counts["cuts"] += 1
        self.counts["goals"] += "\nep_g" in text
        self.counts["pending"] += "\np(" in text
        self.counts["dedup"] += "\no(" in text
        self.counts["buffered"] += b'"heap":[[' in py
        self.counts["distinct_seen"] += b'"seen":[[' in py
        self.counts["asked"] += b'"asked":true' in py


# ---------------------------------------------------------------------------
# EP-SPARQL: differential over generated queries and streams
# ---------------------------------------------------------------------------
def make_ops(rng, stream, *, lateness=0.0, advance=0.0, too_late=0.0):
    """The stream as a sequence of push/advance operations: rows in small
    batches, disordered within ``lateness`` (plus some rows later than
    that), with heartbeats now and then."""
    rows = list(stream)
    if lateness:
        keyed = [(r[4] + rng.uniform(0, lateness * 0.99), i, r) for i, r in enumerate(rows)]
        keyed.sort()
        rows = [r for _, _, r in keyed]
        if too_late and len(rows) > 3:
            for _ in range(rng.randint(1, 2)):
                r = rng.choice(rows[: len(rows) // 2])
                rows.insert(rng.randint(len(rows) - 2, len(rows)), r)   # far too late
    ops, i = [], 0
    while i < len(rows):
        n = rng.choice((1, 1, 2, 3, 5))
        ops.append(("push", rows[i:i + n]))
        i += n
        if advance and rng.random() < advance:
            ops.append(("advance", max(r[4] for r in rows[:i]) - rng.choice((0, 0, 1, 2)) - lateness))
    return ops


def sparql_case(seed):
    """Queries (EP-SPARQL texts), their kinds, an op sequence, engine options."""
    rng = random.Random(seed)
    kind = seed % 5
    opts = {"gc_every": rng.choice((100, 1, 2, 3))}
    if kind == 4:
        constructs, q, stream = construct_case(80_000 + seed)
        texts = [R.render(c) for c in constructs] + [R.render(q)]
    else:
        g = R.QueryGen(rng, filtered_optional_operand=(seed % 7 == 0 and "always"))
        stream = R.gen_stream(rng, n=rng.randint(6, 16))
        texts = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            t = R.render(g.select())
            r = rng.random()
            if r < 0.3:
                t = t.replace("SELECT ", "SELECT DISTINCT ", 1)
            elif r < 0.4:
                t = R.PREFIXES + "ASK WHERE " + R.render_group(g.pattern())
            texts.append(t)
    lateness = 0.0
    if kind == 2:
        lateness = float(rng.choice((1, 2, 3)))
        opts["allowed_lateness"] = lateness
    ops = make_ops(rng, stream, lateness=lateness, advance=0.3 if kind in (1, 2) else 0.0,
                   too_late=0.5 if kind == 2 else 0.0)
    cuts = sorted(rng.sample(range(1, len(ops)), min(len(ops) - 1, rng.randint(1, 3))))
    return texts, ops, cuts, opts


def run_sparql_case(seed, cov: Coverage):
    texts, ops, cuts, opts = sparql_case(seed)
    x, y = Engine(**opts), Engine(**opts)
    try:
        hx = [x.register(t) for t in texts]
        hy = [y.register(t) for t in texts]
        # uninterrupted, in x
        whole = [Counter() for _ in texts]
        play(x, ops)
        x.flush()
        drain(hx, whole)
        whole_state, whole_late = x.core._export_text(), x.late
        # clear_state: x is a fresh engine again
        x.clear_state()
        fresh = Engine(**opts)
        try:
            for t in texts:
                fresh.register(t)
            assert x.snapshot() == fresh.snapshot(), "clear_state left state behind"
        finally:
            fresh.close()
        # cut into segments, alternating between x and y
        parts = [Counter() for _ in texts]
        engines = [(x, hx), (y, hy)]
        bounds = [0] + cuts + [len(ops)]
        for i in range(len(bounds) - 1):
            eng, hs = engines[i % 2]
            if i > 0:
                eng.restore(blob)
            play(eng, ops[bounds[i]:bounds[i + 1]])
            drain(hs, parts)
            if i < len(bounds) - 2:
                blob = eng.snapshot()
                cov.note_engine(blob)
        eng.flush()
        drain(hs, parts)
        problems = []
        for t, w, p in zip(texts, whole, parts):
            if w != p:
                problems.append(f"query:\n{t}\nmissing: {dict(w - p)}\nextra: {dict(p - w)}")
        if not same_state(eng.core._export_text(), whole_state):
            problems.append("final states differ")
        if eng.late != whole_late:
            problems.append(f"late {eng.late} != {whole_late}")
        if problems:
            return f"seed {seed}, cuts {cuts} of {len(ops)} ops, options {opts}:\n" + "\n".join(problems)
        return None
    finally:
        x.close()
        y.close()


SPARQL_SEEDS = range(100, 220)


def test_sparql_snapshots_continue_exactly():
    cov = Coverage()
    failures = [f for f in (run_sparql_case(s, cov) for s in SPARQL_SEEDS) if f]
    assert not failures, f"{len(failures)} cases differ; first:\n{failures[0]}"
    c = cov.counts
    # the cuts carried every kind of state across
    assert c["cuts"] >= 150, c
    for k, least in (("goals", 60), ("pending", 10), ("dedup", 10), ("buffered", 10),
                     ("distinct_seen", 5), ("asked", 3)):
        assert c[k] >= least, (k, c)


def test_snapshot_chain_with_lateness_and_late_rows():
    # rows disordered within the allowed lateness, some later than that;
    # a snapshot after every push, each restored into the other engine
    rng = random.Random(5)
    a_, b_, c_ = (URIRef(NS + n) for n in "abc")
    p, q = URIRef(NS + "p"), URIRef(NS + "q")
    text = (R.PREFIXES + "SELECT ?s ?x ?y WHERE { ?s :p ?x } SEQ { ?s :q ?y } "
            "FILTER (getDURATION() < \"PT6S\"^^xsd:duration)")
    rows = [(rng.choice((a_, b_, c_)), rng.choice((p, q)), Literal(rng.randint(0, 3)), t, t)
            for t in range(40)]
    ops = make_ops(rng, rows, lateness=3.0, too_late=1.0)
    whole_e = Engine(allowed_lateness=3.0)
    whole_q = whole_e.register(text)
    play(whole_e, ops)
    whole_e.flush()
    whole = Counter(answer_key(a) for a in whole_q.results())
    engines = [Engine(allowed_lateness=3.0), Engine(allowed_lateness=3.0)]
    qs = [e.register(text) for e in engines]
    got, buffered = Counter(), 0
    for i, op in enumerate(ops):
        e, h = engines[i % 2], qs[i % 2]
        if i:
            e.restore(blob)
        play(e, [op])
        got.update(answer_key(a) for a in h.results())
        blob = e.snapshot()
        buffered += e._order.buffered > 0
    e = engines[(len(ops) - 1) % 2]
    e.flush()
    got.update(answer_key(a) for a in qs[(len(ops) - 1) % 2].results())
    assert sum(whole.values()) > 5
    assert got == whole
    assert buffered > len(ops) // 2            # rows sat in the reorder buffer at the cuts
    assert whole_e.late >= 1 and e.late == whole_e.late   # the late count is state
    # late_rows are side output, not state: only the engine that saw them has them
    assert len(whole_e.late_rows) == whole_e.late
    assert len(e.late_rows) < e.late
    for x in engines + [whole_e]:
        x.close()


# ---------------------------------------------------------------------------
# the core: differential over generated rules, and policies
# ---------------------------------------------------------------------------
CORE_EXTRA_RULES = """
agg(K, N) <- aggregate(count, price(K, _P), count(3), N).
avg(K, A) <- aggregate(avg(P), price(K, P), time(4), A).
opt(K, P, Q) <- optseq(price(K, P), vol(K, Q), true) within 5.
eq(K, P, Q) <- eqopt(price(K, P), vol(K, Q), true).
lj(K, P, Q) <- leftjoin(price(K, P), vol(K, Q), Q > 1) within 6.
quiet(K) <- (price(K, _) seq price(K, _) within 4) cnot vol(K, _).
both(K, P, Q) <- price(K, P) and vol(K, Q) within 3.
"""


def core_events(rng, n):
    evs, t = [], 0
    for _ in range(n):
        t += rng.choice((0, 1, 1, 2))
        name = rng.choice(("price", "vol"))
        start = max(0, t - rng.choice((0, 0, 1, 2)))
        ev = (name, (rng.choice(("a", "b")), rng.randint(0, 3)), start, t)
        evs.append(ev)
        if rng.random() < 0.1:
            evs.append(ev)                      # duplicates (dedup)
    return evs


def core_case(seed):
    rng = random.Random(seed)
    if seed % 3 == 0:
        rules = CORE_EXTRA_RULES
        events = core_events(rng, rng.randint(10, 30))
        gc_every = rng.choice((1, 2, 5, 100))
    else:
        rs, events, _, gc_every = gen_case(seed)
        rules = "\n".join(rule_text(*r) for r in rs)
    policy = rng.choice(("unrestricted", "recent", "chronological"))
    dedup = rng.random() < 0.4
    ops, i = [], 0
    while i < len(events):
        n = rng.choice((1, 2, 3))
        ops.append(("push", [(term(nm, *args), s, e) for nm, args, s, e in events[i:i + n]]))
        i += n
        if rng.random() < 0.15:
            ops.append(("advance", events[min(i, len(events)) - 1][3]))
    cuts = sorted(rng.sample(range(1, len(ops)), min(len(ops) - 1, rng.randint(1, 4))))
    return rules, ops, cuts, dict(policy=policy, gc_every=gc_every), dedup


def core_play(eng, ops, out: Counter):
    for kind, arg in ops:
        ds = eng.push_many(arg) if kind == "push" else eng.advance(arg)
        out.update((as_tuple(d.event), d.start, d.end) for d in ds)
    eng.drain()


def new_core(rules, opts, dedup):
    e = CoreEngine(**opts)
    if dedup:
        e.set_option("dedup", True)
    e.add_rules(rules)
    return e


def run_core_case(seed, cov: Counter):
    rules, ops, cuts, opts, dedup = core_case(seed)
    x, y = new_core(rules, opts, dedup), new_core(rules, opts, dedup)
    try:
        whole = Counter()
        core_play(x, ops, whole)
        whole.update((as_tuple(d.event), d.start, d.end) for d in x.flush())
        whole_state = x._export_text()
        x.clear_state()
        got = Counter()
        bounds = [0] + cuts + [len(ops)]
        for i in range(len(bounds) - 1):
            eng = (x, y)[i % 2]
            if i > 0:
                eng.import_state(blob)
            core_play(eng, ops[bounds[i]:bounds[i + 1]], got)
            if i < len(bounds) - 2:
                blob = eng.export_state()
                text = zlib.decompress(blob[len(CORE_STATE_MAGIC):]).decode()
                cov["cuts"] += 1
                cov["goals"] += "\nep_g" in text
                cov["pending"] += "\np(" in text
                cov["dedup"] += "\no(" in text
                cov["swept"] += "\nw(" in text
        got.update((as_tuple(d.event), d.start, d.end) for d in eng.flush())
        assert eng.errors == [] and x.errors == []
        problems = []
        if got != whole:
            problems.append(f"missing: {dict(whole - got)}\nextra: {dict(got - whole)}")
        if not same_state(eng._export_text(), whole_state):
            problems.append("final states differ")
        if problems:
            return (f"seed {seed}, options {opts}, dedup {dedup}, cuts {cuts} of {len(ops)} ops\n"
                    f"rules:\n{rules}\nops: {ops}\n" + "\n".join(problems))
        return None
    finally:
        x.close()
        y.close()


def test_core_snapshots_continue_exactly():
    cov = Counter()
    failures = [f for f in (run_core_case(s, cov) for s in range(300, 420)) if f]
    assert not failures, f"{len(failures)} cases differ; first:\n{failures[0]}"
    assert cov["cuts"] >= 200, cov
    for k, least in (("goals", 100), ("pending", 10), ("dedup", 5), ("swept", 20)):
        assert cov[k] >= least, (k, cov)


def test_core_restore_into_a_used_engine_replaces_everything():
    rules = "r(X, Y) <- a(X) seq b(Y) within 10.\nz(X) <- eqopt(a(X), b(X), true)."
    a, b = CoreEngine(), CoreEngine()
    try:
        for e in (a, b):
            e.add_rules(rules)
        a.push_many([(term("a", 1), 1), (term("a", 2), 2)])
        b.push_many([(term("a", 9), 1), (term("b", 9), 3), (term("a", 7), 4)])   # other state
        b.import_state(a.export_state())
        assert b.drain() == []                           # b's undrained detections are gone
        assert b._export_text() == a._export_text()
        assert a.stats()["waiting"] == b.stats()["waiting"] == 1     # z(2) waits for instant 2
        assert a.stats()["goals"] == b.stats()["goals"]
        da = a.push(term("b", 2), 5) + a.flush()
        db = b.push(term("b", 2), 5) + b.flush()
        assert sorted(map(repr, da)) == sorted(map(repr, db))
        # z(1) was decided in a (instant 1 closed when a(2) came); z(2) waited
        assert {as_tuple(d.event) for d in db} == {("r", (1, 2)), ("r", (2, 2)), ("z", (2,))}
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------------------
# mismatched rules or queries
# ---------------------------------------------------------------------------
def test_restoring_other_rules_raises_value_error():
    a = CoreEngine()
    b = CoreEngine()
    c = CoreEngine()
    d = CoreEngine(policy="recent")
    try:
        a.add_rules("r(X) <- a(X) seq b(X).\ns(X) <- a(X) and c(X).")
        b.add_rules("s(X) <- a(X) and c(X).\nr(X) <- a(X) seq b(X).")     # other order
        c.add_rules("r(X) <- a(X) seq b(X) within 5.\ns(X) <- a(X) and c(X).")
        d.add_rules("r(X) <- a(X) seq b(X).\ns(X) <- a(X) and c(X).")     # other policy
        a.push(term("a", 1), 1)
        blob = a.export_state()
        for other in (b, c, d):
            before = other._export_text()
            with pytest.raises(ValueError, match="other rules"):
                other.import_state(blob)
            assert other._export_text() == before
        e = CoreEngine()
        e.add_rules("r(X) <- a(X) seq b(X).\ns(X) <- a(X) and c(X).")  # the same: fine
        e.import_state(blob)
        assert [as_tuple(x.event) for x in e.push(term("b", 1), 2)] == [("r", (1,))]
        e.close()
    finally:
        for x in (a, b, c, d):
            x.close()


def test_restoring_other_queries_raises_value_error():
    q1 = R.PREFIXES + "SELECT * WHERE { ?s :p ?x } SEQ { ?s :q ?y }"
    q2 = R.PREFIXES + "SELECT * WHERE { ?s :p ?x } EQUALSOPTIONAL { ?s :q ?y }"
    q1b = R.PREFIXES + "SELECT * WHERE { ?s :p ?x } SEQ { ?s :r ?y }"
    a = Engine()
    a.register(q1)
    a.register(q2)
    a.push(URIRef(NS + "a"), URIRef(NS + "p"), Literal(1), 1)
    blob = a.snapshot()
    cases = [[q2, q1], [q1], [q1, q2, q1], [q1b, q2], []]
    for texts in cases:
        e = Engine()
        for t in texts:
            e.register(t)
        before = e.snapshot()
        with pytest.raises(ValueError, match="queries|other rules"):
            e.restore(blob)
        assert e.snapshot() == before
        e.close()
    a.close()


# ---------------------------------------------------------------------------
# malformed and hostile blobs
# ---------------------------------------------------------------------------
def _blob(text: str | bytes) -> bytes:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return CORE_STATE_MAGIC + zlib.compress(data)


def test_malformed_and_hostile_core_blobs_are_refused_state_intact(tmp_path):
    rules = "r(X, Y) <- a(X) seq b(Y) within 10.\nz(X) <- eqopt(a(X), b(X), true)."
    eng = CoreEngine()
    eng.add_rules(rules)
    eng.push_many([(term("a", 1), 1), (term("a", 2), 2)])
    good = eng._export_text()
    header, clock = good.splitlines()[:2]
    stores = [s["name"] for s in eng.rule_graph()["stores"]]
    close = next(n for n in (f"ep_c{i}" for i in range(1, 20)) if f"{n}(" in good)
    marker = tmp_path / "ran"
    touch = f"open('{marker}', write, S), close(S)"
    bad_texts = {
        "clause with a body": good + f"{stores[0]}(1,2,3) :- {touch}.\n",
        "directive": good + f":- {touch}.\n",
        "initialization": good + f":- initialization({touch}).\n",
        "unknown predicate": good + "halt.\n",
        "wrong arity": good + f"{stores[0]}(1).\n",
        "pending goal not a closing step": good + f"p(3, 5, ({touch})).\n",
        "pending halt": good + "p(3, 5, halt).\n",
        "pending other step": good + f"p(3, 999, {close}(1,1,1)).\n",
        "module-qualified goal": good + f"user:{stores[0]}(1,2,3).\n",
        "a variable": good + "X.\n",
        "a list": good + "[halt].\n",
        "curly": good + "{halt}.\n",
        "syntax error": good + "ep_g1l(1,\n",
        "no full stop": good + f"{stores[0]}(1,2,3)",
        "operator text": good + f"{stores[0]}(1,2,3) ; halt.\n",
        "no clock": header + "\n",
        "two clocks": good + clock + "\n",
        "bad clock": header + "\ns(a,0,0,0,0,0).\n",
        "negative count": header + "\ns(1,-1,0,0,0,0).\n",
        "sweep of unknown store": good + "w(nope, 1, 1).\n",
        "other fingerprint": good.replace(header, "epsparql_state(1,'0000').", 1),
        "other version": good.replace("epsparql_state(1,", "epsparql_state(2,", 1),
        "no header": "\n".join(good.splitlines()[1:]) + "\n",
        "empty": "",
        "dedup entry with a bad time": good + "o(x, a, 1).\n",
        "hidden after end_of_file": header + "\nend_of_file.\n" + "\n".join(good.splitlines()[1:]) + "\n",
    }
    blobs = {k: _blob(v) for k, v in bad_texts.items()}
    blobs["not utf-8"] = _blob(b"\xff\xfe" + good.encode())
    blobs["random bytes"] = CORE_STATE_MAGIC + bytes(random.Random(1).randrange(256) for _ in range(300))
    blobs["truncated"] = _blob(good)[:-5]
    blobs["trailing bytes"] = _blob(good) + b"xx"
    blobs["wrong magic"] = b"EPSE1" + _blob(good)[5:]
    blobs["no magic"] = zlib.compress(good.encode())
    blobs["empty blob"] = b""
    for name, blob in blobs.items():
        with pytest.raises(ValueError) as info:
            eng.import_state(blob)
        msg = str(info.value)
        assert msg and ("state" in msg.lower() or "magic" in msg.lower()), (name, msg)
        assert eng._export_text() == good, name          # the previous state, untouched
    with pytest.raises(TypeError):
        eng.import_state(good)                           # text, not a blob
    assert not marker.exists()                           # nothing was run
    # the specific messages say what is wrong
    with pytest.raises(ValueError, match="clause with a body"):
        eng.import_state(blobs["clause with a body"])
    with pytest.raises(ValueError, match="syntax error"):
        eng.import_state(blobs["syntax error"])
    with pytest.raises(ValueError, match="other rules"):
        eng.import_state(blobs["other fingerprint"])
    # and the engine goes on as if nothing had happened
    ds = eng.push(term("b", 2), 3) + eng.flush()
    assert sorted(as_tuple(d.event) for d in ds) == [("r", (1, 2)), ("r", (2, 2)), ("z", (2,))]
    eng.close()


def test_malformed_engine_snapshots_are_refused_state_intact():
    text = R.PREFIXES + "SELECT DISTINCT ?s WHERE { ?s :p ?x } SEQ { ?s :q ?y }"
    eng = Engine(allowed_lateness=5)
    q = eng.register(text)
    a, p_ = URIRef(NS + "a"), URIRef(NS + "p")
    eng.push_many([(a, p_, Literal(1), 1), (a, p_, Literal(2), 9)])   # one row buffered
    good = eng.snapshot()
    payload = zlib.decompress(good[len(SNAPSHOT_MAGIC):])
    head, _, core = payload.partition(b"\n")

    def blob(h, c=core):
        return SNAPSHOT_MAGIC + zlib.compress(h + b"\n" + c)

    bad = {
        "not json": blob(b"{nope"),
        "not an object": blob(b"[1,2]"),
        "other version": blob(head.replace(b'"v":1', b'"v":2')),
        "bad node": blob(head.replace(b'"http://epsparql.org/ns#a"', b'["x"]', 1)),
        "bad time": blob(head.replace(b'"released":', b'"released":"soon","x":', 1)),
        "bad seen": blob(head.replace(b'"seen":[]', b'"seen":[[[1,2]]]', 1)),
        "bad seen node": blob(head.replace(b'"seen":[]', b'"seen":[[["s",["l"]]]]', 1)),
        "no core": SNAPSHOT_MAGIC + zlib.compress(head),
        "bad core": blob(head, core + b"halt.\n"),
        "core blob": CORE_STATE_MAGIC + zlib.compress(core),
    }
    for name, b in bad.items():
        assert b != good, name
        with pytest.raises(ValueError):
            eng.restore(b)
        assert eng.snapshot() == good, name
    assert eng._order.buffered == 1
    eng.push(a, URIRef(NS + "q"), Literal(3), 10)
    eng.flush()
    assert [x.bindings for x in q.results()] == [{"s": a}]
    eng.close()


HOSTILE = [
    "it's", 'say "hi"', "a :- halt.", ":- halt.", "halt", "back\\slash\\", "nul\x00byte",
    "new\nline\ttab", "0'c", "{}", "[]", "'", "\"", "\\u0000", "end.\n", "x" * 100_000,
    "日本語 ∀x", "$VAR", "_G123", "A", "epsparql_engine_1:foo",
]


def test_hostile_literals_and_iris_survive_byte_identical():
    text = R.PREFIXES + "SELECT * WHERE { ?s :p ?x } SEQ { ?s :q ?y }"
    rows, t = [], 0
    for h in HOSTILE:
        s = URIRef(NS + "s" + str(t))
        rows.append((s, URIRef(NS + "p"), Literal(h), t, t))
        rows.append((URIRef("http://x/" + h.replace("\n", "").replace("\x00", "")[:200] + str(t)),
                     URIRef(NS + "p"), Literal(h, lang="en"), t, t))
        t += 1
    rows.append((BNode("b'\\1"), URIRef(NS + "p"), Literal("x", datatype=URIRef("http://t/'q")), t, t))
    a, b = Engine(allowed_lateness=2), Engine(allowed_lateness=2)
    qa, qb = a.register(text), b.register(text)
    a.push_many(rows)                                    # the last rows sit in the reorder buffer
    assert a._order.buffered > 0
    blob = a.snapshot()
    b.restore(blob)
    assert b.snapshot() == blob                          # byte-identical state
    ends = [(r[0], URIRef(NS + "q"), Literal("end"), t + 5, t + 5) for r in rows]
    for e in (a, b):
        e.push_many(ends)
        e.flush()
    ra, rb = qa.results(), qb.results()
    assert len(ra) == len(rows)
    assert Counter(map(answer_key, ra)) == Counter(map(answer_key, rb))
    got = {str(x.bindings["x"]) for x in rb}
    assert set(HOSTILE) <= got
    assert any(len(v) == 100_000 for v in got)
    a.close()
    b.close()


def test_hostile_terms_survive_the_core_byte_identical():
    values = [PlString(h) for h in HOSTILE] + [h for h in HOSTILE if "\x00" not in h] + [
        term(":", "epsparql_engine_1", "foo"), term(":-", "a", "halt"), term("halt"),
        [1, [2, "x"], PlString("")], 2 ** 100, -(2 ** 70), 1e-300, -0.0, 0.1, 1.5e300,
        term("$VAR", 1), term("$VAR", "X"), term("{}", "halt"), "[]", "", term("'", "\\"),
    ]
    a, b = CoreEngine(), CoreEngine()
    for e in (a, b):
        e.add_rules("r(X, Y) <- a(X) seq b(Y).")
    a.push_many([(term("a", v), i) for i, v in enumerate(values)])
    blob = a.export_state()
    b.import_state(blob)
    assert b.export_state() == blob
    n = len(values)
    da, db = a.push(term("b", "end"), n), b.push(term("b", "end"), n)
    assert da == db and len(db) == n
    assert [d.event.args[0] for d in db] == values


# ---------------------------------------------------------------------------
# clear_state, sizes, the Prolog API
# ---------------------------------------------------------------------------
def test_clear_state_behaves_as_a_fresh_engine():
    text = R.PREFIXES + "SELECT DISTINCT ?s WHERE { ?s :p ?x } EQUALSOPTIONAL { ?s :q ?y }"
    ask = R.PREFIXES + "ASK WHERE { ?s :q ?y }"
    a, p_, q_ = URIRef(NS + "a"), URIRef(NS + "p"), URIRef(NS + "q")
    rows = [(a, p_, Literal(1), 1), (a, q_, Literal(1), 1), (a, p_, Literal(2), 2)]
    used = Engine(allowed_lateness=1)
    src = used.source("sensor")
    hs = [used.register(text), used.register(ask)]
    used.push_many(rows)
    src.push(a, p_, Literal(5), 3)
    used.push(a, p_, Literal(0), -5)                     # late
    assert used.late == 1 and hs[0].results()
    used.clear_state()
    assert used.late == 0 and used.late_rows == [] and all(h.results() == [] for h in hs)
    fresh = Engine(allowed_lateness=1)
    fresh.source("sensor")
    hf = [fresh.register(text), fresh.register(ask)]
    assert used.snapshot() == fresh.snapshot()
    for e in (used, fresh):
        e.push_many(rows)
        e.flush()
    for h1, h2 in zip(hs, hf):
        r1 = Counter(map(answer_key, h1.results()))
        assert r1 and r1 == Counter(map(answer_key, h2.results()))
    used.close()
    fresh.close()


def test_empty_snapshots_are_small():
    e = Engine()
    e.register(R.PREFIXES + "SELECT * WHERE { ?s :p ?x } SEQ { ?s :q ?y }")
    assert len(e.snapshot()) < 300
    c = CoreEngine()
    c.add_rules("r(X) <- a(X) seq b(X).")
    assert len(c.export_state()) < 150
    e.close()
    c.close()


def test_prolog_api_without_python(tmp_path):
    script = tmp_path / "snap.pl"
    script.write_text(f"""\
:- use_module('{ROOT / 'prolog' / 'epsparql_core.pl'}').
main :-
    Rules = [(r(X, Y) <- a(X) seq b(Y) within 10)],
    engine_create(e1), engine_add_rules(e1, Rules),
    engine_create(e2), engine_add_rules(e2, Rules),
    engine_events(e1, [e(a('it''s'), 1, 1), e(a("q"), 2, 2)]),
    engine_export_state(e1, S),
    engine_import_state(e2, S),
    engine_export_state(e2, S2),
    ( S2 == S -> writeln(same) ; writeln(differ) ),
    engine_event(e2, b(z), [3, 3]),
    engine_drain(e2, D), print(D), nl,
    catch(engine_import_state(e2, "halt."), error(E, _), (print(E), nl)),
    writeln(alive).
""")
    r = subprocess.run([swipl_executable(), "-q", "-g", "main", "-t", "halt", str(script)],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout.splitlines()
    assert out[0] == "same", r.stdout + r.stderr
    assert out[1] == "[detected(r('it\\'s',z),[1,3]),detected(r(\"q\",z),[2,3])]"
    assert out[2].startswith("invalid_engine_state(")
    assert out[3] == "alive"


def test_terms_that_cannot_be_read_back_are_refused_at_export():
    from epsparql.core import PrologError
    for cond in ("current_output(Y)", "clause(lists:append(_, _, _), _, Y)"):
        e = CoreEngine()
        e.add_rules(f"r(X, Y, Z) <- (a(X) where {cond}) seq b(Z).")
        e.push(term("a", 1), 1)
        assert e.stats()["goals"] >= 1
        with pytest.raises(PrologError, match="exportable_term"):
            e.export_state()
        e.close()
    # quoted text that looks like a blob is fine
    e = CoreEngine()
    e.add_rules("r(X, Z) <- a(X) seq b(Z).")
    e.push(term("a", "<stream>(0x1234)"), 1)
    blob = e.export_state()
    e.clear_state()
    e.import_state(blob)
    assert [d.event.args[0] for d in e.push(term("b", 1), 2)] == ["<stream>(0x1234)"]
    e.close()


def test_source_watermarks_are_state():
    # the quiet source holds the watermark back: rows of the other one wait
    # in the buffer across the snapshot, and go out when it advances
    text = R.PREFIXES + "SELECT * WHERE { ?s :p ?x } SEQ { ?s :q ?y }"
    a_, p_, q_ = URIRef(NS + "a"), URIRef(NS + "p"), URIRef(NS + "q")
    engines, handles = [], []
    for _ in range(2):
        e = Engine()
        e.source("fast")
        e.source("slow")
        engines.append(e)
        handles.append(e.register(text))
    x, y = engines
    x.source("fast").push_many([(a_, p_, Literal(1), 1), (a_, q_, Literal(2), 2)])
    assert x._order.buffered == 2 and handles[0].results() == []
    y.restore(x.snapshot())
    for e, h in zip(engines, handles):
        e.source("slow").advance(5)
        assert [(r.start, r.end) for r in h.results()] == [(1, 2)]


def test_snapshot_restores_in_another_process(tmp_path):
    # the crash case: the snapshot was taken by a process that is gone
    import sys
    text = (R.PREFIXES + "SELECT * WHERE { ?s :p ?x } EQUALSOPTIONAL { ?s :q ?y } "
            "SEQ { ?s :r ?z } FILTER (getDURATION() < \"PT10S\"^^xsd:duration)")
    a_, p_, q_, r_ = (URIRef(NS + n) for n in ("a", "p", "q", "r"))
    first = [(a_, p_, Literal(1), 1), (a_, q_, Literal(2), 1), (a_, p_, Literal("it's :- halt."), 2)]
    rest = [(a_, r_, Literal(3), 4), (a_, r_, Literal(4), 5)]
    out = tmp_path / "snap.bin"
    script = tmp_path / "take.py"
    script.write_text(f"""\
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {str(ROOT)!r})
from rdflib import URIRef, Literal
from epsparql import Engine
e = Engine(allowed_lateness=1)
e.register({text!r})
e.register({text!r}.replace("SELECT *", "SELECT DISTINCT ?s"))
NS = {NS!r}
a, p, q = URIRef(NS + "a"), URIRef(NS + "p"), URIRef(NS + "q")
e.push_many([(a, p, Literal(1), 1), (a, q, Literal(2), 1), (a, p, Literal("it's :- halt."), 2)])
open({str(out)!r}, "wb").write(e.snapshot())
""")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    whole = Engine(allowed_lateness=1)
    hw = [whole.register(text), whole.register(text.replace("SELECT *", "SELECT DISTINCT ?s"))]
    whole.push_many(first)
    before = [Counter(map(answer_key, h.results())) for h in hw]
    assert before == [Counter(), Counter()]       # nothing decided before the cut
    e = Engine(allowed_lateness=1)
    he = [e.register(text), e.register(text.replace("SELECT *", "SELECT DISTINCT ?s"))]
    e.restore(out.read_bytes())
    for x in (whole, e):
        x.push_many(rest)
        x.flush()
    got = [Counter(map(answer_key, h.results())) for h in he]
    exp = [Counter(map(answer_key, h.results())) for h in hw]
    assert got == exp and sum(exp[0].values()) == 4 and sum(exp[1].values()) == 1
    whole.close()
    e.close()
