"""Query-aware partitioning: a key every stream pattern of a query binds.

A query can run partitioned by a variable ``?k`` when every stream triple
pattern of it (optional sides included) has ``?k`` at a position that
carries ``?k``'s value in the input triple.  Route each triple to the group
of the value it holds at every such position; in the group of value ``v``
keep only the answers with ``?k = v``.  Then group ``v`` holds every triple
of every answer with ``?k = v`` (each such triple has ``v`` at the key
position of the pattern it matches), and every optional part compatible
with such an answer (it binds ``?k`` too), so its answers are exactly the
answers of the whole stream with ``?k = v``.  Sending a triple to more
groups than needed costs time, never correctness; sending it to fewer
would lose answers, so routing is conservative.

RDFS entailment can move values between positions (``rdfs:range`` turns
``x :p k`` into ``k a C``) or replace them (``rdfs:subClassOf`` and
``rdfs:subPropertyOf`` rewrite the class and the property): a key position
is kept only where every entailment the background allows preserves the
value, and routing adds the positions entailment moves it from.

Not partitioned (one group sees the whole stream), with the reason said:
queries with no stream pattern or no common variable, ASK (one answer for
the whole stream), DISTINCT whose projection drops the key (duplicates
could come from different groups), and CONSTRUCT rules whose derived
triples could reach a pattern in another group (their key would not be
the key of the answer that derived them).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from rdflib import RDF
from rdflib.term import BNode, Node

from .nodes import (BGP, Background, Extend, Filter, Query, Triple, Window)

POSITIONS = ("subject", "predicate", "object")
KEY_PREFERENCE = (0, 2, 1)         # subject first, then object, predicate last


@dataclass(frozen=True)
class Schema:
    """Which RDFS entailments the background allows on stream triples."""

    sub_class: bool = False
    sub_property: bool = False
    domain: bool = False
    range: bool = False
    #: the predicates of the background's triples (None: not known, so any);
    #: windowed queries need them (algebra/window_partition.py)
    predicates: frozenset | None = frozenset()

    @property
    def any(self) -> bool:
        return self.sub_class or self.sub_property or self.domain or self.range


NO_SCHEMA = Schema()


def schema_of(triples: Iterable[Sequence[Node]], entailment: bool = True) -> Schema:
    """The entailments a background graph enables (``entailment=False``:
    reasoning off, none), and the predicates it holds."""
    from rdflib import RDFS
    preds = frozenset(t[1] for t in triples)
    if not entailment:
        return Schema(predicates=preds)
    return Schema(RDFS.subClassOf in preds, RDFS.subPropertyOf in preds,
                  RDFS.domain in preds, RDFS.range in preds, preds)


def _var(x: Any) -> str | None:
    """The variable name at a pattern position (blank nodes are variables)."""
    if type(x).__name__ == "Var":
        return x.name
    if isinstance(x, BNode):
        return "_:" + str(x)
    return None


def stream_patterns(p: Any) -> list[Triple]:
    """The stream triple patterns of an algebra pattern (GRAPH ones
    excluded), left to right; iterative, for chains thousands long."""
    out: list[Triple] = []
    stack = [p]
    while stack:
        x = stack.pop()
        if isinstance(x, BGP):
            out.extend(x.triples)
        elif x is not None and not isinstance(x, Background):
            stack.extend(c for c in (getattr(x, n, None) for n in ("pattern", "right", "left"))
                         if c is not None)
    return out


def _may_be_type(t: Triple) -> bool:
    """Could the pattern match an ``rdf:type`` triple?"""
    return _var(t.p) is not None or t.p == RDF.type


def pattern_key(t: Any, var: str, schema: Schema) -> "PatternKey | None":
    """Where pattern ``t`` binds ``var`` so that its input triples carry
    the key (the first such position in KEY_PREFERENCE), or None."""
    for pos in KEY_PREFERENCE:
        if _var((t.s, t.p, t.o)[pos]) == var:
            ins = input_positions(t, pos, schema)
            if ins is not None:
                return PatternKey(t, pos, ins)
    return None


def input_positions(t: Triple, pos: int, schema: Schema) -> frozenset[int] | None:
    """Positions of an input triple that may hold the value matched at
    ``pos`` of pattern ``t`` (directly or through entailment); None when
    entailment may put a value there that no input position holds."""
    out = {pos}
    typed = _may_be_type(t)
    if pos == 1 and (schema.sub_property or (typed and (schema.domain or schema.range))):
        return None
    if pos == 2 and typed and (schema.sub_class or schema.domain or schema.range):
        return None
    if pos == 0 and typed and schema.range:
        out.add(2)                    # x :p k, :p rdfs:range C  =>  k a C
    return frozenset(out)


@dataclass(frozen=True)
class PatternKey:
    """Where one stream pattern carries the key: its position in the pattern
    and the input-triple positions that may hold the value."""

    pattern: Triple
    position: int
    inputs: frozenset[int]


@dataclass(frozen=True)
class KeyPlan:
    """How one query is partitioned: its key variable (None: not
    partitioned), the key position of each stream pattern, and why."""

    query: str
    variable: str | None
    patterns: tuple[PatternKey, ...] = ()
    reason: str = ""

    @property
    def partitioned(self) -> bool:
        return self.variable is not None

    @property
    def positions(self) -> frozenset[int]:
        """Input-triple positions that may hold a key value."""
        out: set[int] = set()
        for pk in self.patterns:
            out |= pk.inputs
        return frozenset(out)

    def describe(self) -> str:
        if not self.partitioned:
            return f"{self.query}: not partitioned (one group sees the whole stream): {self.reason}"
        pats = "".join(f"\n    {_show(pk.pattern)} at {POSITIONS[pk.position]}"
                         + ("" if pk.inputs == {pk.position}
                            else f" (input {'/'.join(POSITIONS[i] for i in sorted(pk.inputs))})")
                         for pk in self.patterns)
        return f"{self.query}: key ?{self.variable}: {self.reason}{pats}"


def _show(t: Triple) -> str:
    def one(x: Any) -> str:
        v = _var(x)
        if v is not None:
            return v if v.startswith("_:") else "?" + v
        return x.n3() if hasattr(x, "n3") else str(x)
    return "{ " + " ".join(one(x) for x in (t.s, t.p, t.o)) + " }"


def _projection_vars(q: Query) -> set[str] | None:
    if q.form != "SELECT" or not q.projection:
        return None
    return {p[1].name if isinstance(p, tuple) else p.name for p in q.projection}


def key_plan(q: Query, name: str = "query", schema: Schema = NO_SCHEMA) -> KeyPlan:
    """Choose the partitioning key of one translated query."""
    pats = stream_patterns(q.pattern)
    if not pats:
        return KeyPlan(name, None, reason="it has no stream pattern (background only)")
    if q.form == "ASK":
        return KeyPlan(name, None, reason="ASK has one answer for the whole stream")
    best: tuple | None = None
    unsafe: list[str] = []
    common = None
    for t in pats:
        vs = {v for v in (_var(t.s), _var(t.p), _var(t.o)) if v is not None}
        common = vs if common is None else common & vs
    for var in sorted(common or ()):
        keys: list[PatternKey] = []
        for t in pats:
            choice = pattern_key(t, var, schema)
            if choice is None:
                break
            keys.append(choice)
        if len(keys) < len(pats):
            unsafe.append(var)
            continue
        spread = len(frozenset().union(*(k.inputs for k in keys)))
        rank = (spread, sum(KEY_PREFERENCE.index(k.position) for k in keys), var.startswith("_:"), var)
        if best is None or rank < best[0]:
            best = (rank, var, tuple(keys))
    if best is None:
        if unsafe:
            return KeyPlan(name, None, reason=(
                "RDFS entailment over the background may rewrite the values of "
                + ", ".join("?" + v for v in unsafe) + ", the only variables every stream pattern shares"))
        return KeyPlan(name, None, reason="no variable occurs in every stream pattern")
    _, var, keys = best
    proj = _projection_vars(q)
    if q.distinct and proj is not None and var not in proj:
        return KeyPlan(name, None, reason=(
            f"DISTINCT projects away ?{var}, the only possible key: equal answers could "
            "come from different groups"))
    n = len(pats)
    why = f"it occurs in all {n} stream pattern{'s' if n > 1 else ''}"
    others = sorted(set(common) - {var} - set(unsafe))
    if others:
        why += " (also possible: " + ", ".join("?" + v for v in others) + "; this one spreads triples least)"
    return KeyPlan(name, var, keys, why)


# -- several queries in one engine: CONSTRUCT feedback ----------------------
def _unifies(a: Triple, b: Triple, loose_p: bool) -> bool:
    for i, (x, y) in enumerate(zip((a.s, a.p, a.o), (b.s, b.p, b.o))):
        if i == 1 and loose_p:
            continue
        if _var(x) is None and _var(y) is None and not isinstance(x, BNode) and x != y:
            return False
    return True


@dataclass
class Plan:
    """Partitioning of the queries an engine runs together."""

    queries: list[KeyPlan]
    schema: Schema = NO_SCHEMA
    notes: list[str] = field(default_factory=list)

    @property
    def keyed(self) -> list[KeyPlan]:
        return [k for k in self.queries if k.partitioned]

    @property
    def whole(self) -> list[KeyPlan]:
        return [k for k in self.queries if not k.partitioned]

    @property
    def positions(self) -> frozenset[int]:
        """Input positions the router reads keys from (keyed queries)."""
        out: set[int] = set()
        for k in self.keyed:
            out |= k.positions
        return frozenset(out)

    def describe(self) -> list[str]:
        lines = [k.describe() for k in self.queries]
        if self.keyed:
            lines.append("routing: each triple goes to the group of its "
                         + " and ".join(POSITIONS[i] for i in sorted(self.positions))
                         + (" (one group per distinct value)" if len(self.positions) > 1 else ""))
        return lines + self.notes


def plan(queries: Sequence[tuple[str, Query]], schema: Schema = NO_SCHEMA) -> Plan:
    """Partition several queries that share one stream.

    A CONSTRUCT rule whose template could feed a pattern of another query
    keeps both partitioned only if the template carries the producing
    answer's key exactly where the consuming pattern reads its key;
    otherwise both run on the whole stream (and so does everything
    connected to them by feedback)."""
    plans = {n: key_plan(q, n, schema) for n, q in queries}
    changed = True
    while changed:
        changed = False
        for a, qa in queries:
            if qa.form != "CONSTRUCT":
                continue
            for b, qb in queries:
                pb = plans[b]
                for tpl in qa.template:
                    for pat in stream_patterns(qb.pattern):
                        if not _unifies(tpl, pat, schema.sub_property):
                            continue
                        pa = plans[a]
                        reason = None
                        if not pa.partitioned and pb.partitioned:
                            reason = f"it consumes triples derived by {a}, which is not partitioned"
                            victim = b
                        elif pa.partitioned and not pb.partitioned:
                            reason = f"it derives triples that {b} consumes, which is not partitioned"
                            victim = a
                        elif pa.partitioned and pb.partitioned:
                            keyat = next(k for k in pb.patterns if k.pattern is pat)
                            ok = all(_var((tpl.s, tpl.p, tpl.o)[i]) == pa.variable for i in keyat.inputs)
                            if not ok:
                                reason = (f"its derived triple {_show(tpl)} reaches {b}'s pattern "
                                          f"{_show(pat)} without ?{pa.variable} at the key position")
                                victim = a
                        if reason:
                            plans[victim] = KeyPlan(victim, None, reason=reason)
                            if victim == a and b != a and plans[b].partitioned:
                                plans[b] = KeyPlan(b, None, reason=f"it consumes triples derived by {a}, which is not partitioned")
                            changed = True
    return Plan([plans[n] for n, _ in queries], schema)
