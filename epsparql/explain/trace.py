"""The trace of a small stream: push it one triple at a time and say,
after each triple, what it did to the binarised rule graph
(``epsparql run … --trace``; the text and JSON forms are in
:mod:`.trace_output`).

For every triple: the partial matches ("goals") it made the steps store,
the stored partial matches of the same join key it could pair with
("checked"), the goals removed (expired by the window's garbage collection,
or consumed), and the answers it completed.  At the end of the stream: what
the end decided, then the goals still waiting.

Everything is derived from outside the core: the rule graph as data
(:mod:`epsparql.core.rule_graph`: each store with the variables its goals
hold, each operand as a term) and the goal store before and after each
triple (``CoreEngine.goals()``), so the trace adds no Prolog code.  The
"checked" counts are therefore an estimate (see docs/CLI.md): the core
does not report which checking clause ran.

With ``justify`` (an engine made with ``Engine(justify=True)``), each
answer also comes with why it was detected (:mod:`.justification`); and
the errors rules raised at a triple are reported with it.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from rdflib.term import URIRef

from ..core.rule_graph import Child, RuleGraph, Var, functor, subterms, variables
from ..core.terms import Compound
from ..memo import BoundedCache
from ..rdf.codec import decode
from .justification import JustificationView, justify_answer
from .origins import GraphOrigins
from .rule_graph import GraphNames, is_iri

_OPTIONAL_KINDS = ("optseq", "eqopt", "leftjoin")
_RIGHT_COMPLETES = {"seq", "meets", "optseq"}     # occur when their right operand arrives


# ---------------------------------------------------------------------------
# store layouts: which variable each goal argument holds

@dataclass
class StoreLayout:
    """How to read the goals of one store ``ep_g<node><side>``."""

    name: str
    node: int
    side: str                     # l, r (join steps), n (cnot), a (aggregate), ? (unknown)
    kind: str                     # the node's operator: seq, and, eqopt, …
    window: float                 # seconds (inf: none)
    vars: list[int] | None        # the node's variables the goal holds before start, end
    keys: list[int] = field(default_factory=list)           # the join variables (a prefix of vars)
    labels: dict[int, str] = field(default_factory=dict)    # variable -> ?name or its Prolog name
    named: set[int] = field(default_factory=set)            # the variables with a query name
    other: Any = None             # the operand whose arrivals check this store (a term)
    term: Any = None              # the node's pattern
    iris: set[str] = field(default_factory=set)
    #: the predicates the pattern's stream_property/3 names per variable
    #: (:func:`_arrival`; made once: a trace step asks for every store)
    constraints: dict[int, set[str]] | None = field(default=None, repr=False, compare=False)

    @property
    def title(self) -> str:
        return f"step n{self.node} ({self.kind})"


def store_layouts(graph: RuleGraph, names: GraphNames) -> dict[str, StoreLayout]:
    """A layout per store of the rule graph (the core gives each store's
    variables: a join step stores the join variables first, then the
    variables of its own operand; ``cnot`` the negated pattern's; an
    aggregate ``Group, T1, T2, Value``)."""
    out: dict[str, StoreLayout] = {}
    for s in graph.stores:
        n = graph.nodes.get(s.node)
        if n is None or s.side == "?" or None in s.args:
            out[s.name] = StoreLayout(s.name, s.node, "?", "?", s.window, None)
            continue
        lay = StoreLayout(s.name, s.node, s.side, n.op, s.window, None, term=n.term,
                          iris={x for x in subterms(n.term) if is_iri(x)})
        if s.side in "lr":
            keys = n.join_vars() or []
            lay.vars, lay.keys = list(s.args), keys[:len(s.args)]
            ops = n.operands()
            lay.other = ops[1] if s.side == "l" else ops[0]
        elif s.side == "n":
            lay.vars = list(s.args)
        for v in lay.vars or ():
            lay.labels[v] = names.label(n.id, v)
            if names.named(n.id, v):
                lay.named.add(v)
        out[s.name] = lay
    return out


# ---------------------------------------------------------------------------
# goals

@dataclass
class Goal:
    """One stored partial match, read with its store's layout."""

    layout: StoreLayout
    args: list[Any]
    start: Any
    end: Any
    values: list[tuple[str, Any, bool]]   # (label, rdflib term or raw value, named?)


def _decode(value: Any) -> Any:
    try:
        return decode(value)
    except (ValueError, TypeError):
        return value


def _goal_key(g: dict) -> Any:
    try:
        key = tuple(g["goal"])
        hash(key)
        return key
    except TypeError:                  # a list inside: compare by text
        return repr(g["goal"])


def read_goal(g: dict, layouts: dict[str, StoreLayout]) -> Goal:
    lay = layouts.get(g["store"])
    if lay is None:
        lay = StoreLayout(g["store"], g.get("node", -1), "?", "?", math.inf, None)
        layouts[g["store"]] = lay
    args = list(g["goal"])
    if lay.side == "a" and len(args) == 4:             # Group, T1, T2, Value
        return Goal(lay, args, args[1], args[2],
                    [("group", _decode(args[0]), False), ("value", _decode(args[3]), False)])
    body, (start, end) = args[:-2], (args[-2:] if len(args) >= 2 else (None, None))
    values: list[tuple[str, Any, bool]] = []
    if lay.vars is not None and len(lay.vars) == len(body):
        for v, a in zip(lay.vars, body):
            values.append((lay.labels.get(v, v), _decode(a), v in lay.named))
    else:                                               # layout unknown: by position
        values = [(f"#{i + 1}", _decode(a), False) for i, a in enumerate(body)]
    return Goal(lay, args, start, end, values)


# ---------------------------------------------------------------------------
# the tracer

class _StoreSnap:
    """One store's goals at one moment: goal key -> [goal, count], and an
    index on the join values built when first needed."""

    __slots__ = ("entries", "multi", "_index")

    def __init__(self) -> None:
        self.entries: dict[Any, list] = {}
        self.multi = False                 # some goal stored more than once
        self._index: dict[tuple, list] | None = None

    def index(self, join_values) -> dict[tuple, list]:
        if self._index is None:
            idx: dict[tuple, list] = {}
            for k, (g, c) in self.entries.items():
                args = g["goal"]
                idx.setdefault(join_values(k, g), []).append((args[-2], args[-1], c, g))
            self._index = idx
        return self._index


@dataclass
class Checked:
    layout: StoreLayout
    keys: list[dict[str, Any]]    # the join keys the triple brings: variable label -> value
    before: int                   # stored with that key before the triple
    after: int                    # and after it
    usable: int                   # of ``before``: within the window (and ended before it, for seq)
    ordered: bool                 # seq-like: a partner must end before the triple starts
    windowed: bool                # the store has a window
    derived: tuple | None = None  # a triple derived by a CONSTRUCT answer, not the pushed one
    unfixed: list[str] = field(default_factory=list)   # join variables it does not fix


_MAX_ALTERNATIVES = 100           # join keys followed per step


class Tracer:
    """Wraps an :class:`~epsparql.Engine` whose queries are registered:
    :meth:`push` one row and get what it did; :meth:`end` ends the stream."""

    def __init__(self, engine: Any, queries: Sequence[Any], justify: bool = False) -> None:
        self.engine = engine
        self.queries = list(queries)
        self.graph = engine.rule_graph()
        self.names = GraphNames(self.graph, self.queries)
        self.origins = GraphOrigins(self.graph, self.queries)
        self.justify = justify
        self.view = JustificationView(self.graph, self.names, self.origins, self.queries)
        self._errors = len(engine.errors)
        self.layouts = store_layouts(self.graph, self.names)
        self._keycache = BoundedCache(200_000)
        # children first: a step's partners found at this triple feed the steps above
        order = {nid: i for i, nid in enumerate(reversed(self.graph.topological()))}
        self._check_order = sorted(self.layouts.values(), key=lambda l: order.get(l.node, 0))
        self._goals = self._snapshot()
        self.step_no = 0
        self.now: Any = None
        self.totals = Counter({"inserted": 0, "expired": 0, "consumed": 0, "answers": 0,
                               "late": 0})

    def _snapshot(self) -> dict[str, "_StoreSnap"]:
        """The goal store now, per store."""
        out: dict[str, _StoreSnap] = {}
        for g in self.engine.core.goals():
            store = out.get(g["store"])
            if store is None:
                store = out[g["store"]] = _StoreSnap()
            k = _goal_key(g)
            e = store.entries.get(k)
            if e is None:
                store.entries[k] = [g, 1]
            else:
                e[1] += 1
                store.multi = True
        return out

    def _diff(self, before: dict, after: dict) -> tuple[list[Goal], list[Goal]]:
        new, gone = [], []
        empty = _StoreSnap()
        for name in sorted(set(before) | set(after)):
            b, a = before.get(name, empty).entries, after.get(name, empty).entries
            added = a.keys() - b.keys()
            removed = b.keys() - a.keys()
            changed = []
            if before.get(name, empty).multi or after.get(name, empty).multi:
                changed = [k for k in a.keys() & b.keys() if a[k][1] != b[k][1]]
            plus, minus = added.union(changed), removed.union(changed)
            for k in (k for k in a if k in plus) if plus else ():     # in store order
                g, c = a[k]
                c0 = b[k][1] if k in b else 0
                new.extend(read_goal(g, self.layouts) for _ in range(c - c0))
            for k in (k for k in b if k in minus) if minus else ():
                g, c = b[k]
                c1 = a[k][1] if k in a else 0
                gone.extend(read_goal(g, self.layouts) for _ in range(c - c1))
        return new, gone

    def _reason(self, g: Goal, now: Any) -> str:
        if now is not None and as_number(now) - as_number(g.start) > g.layout.window:
            return "expired"
        return "consumed"

    def _drain(self) -> list[Any]:
        out = []
        for q in self.queries:
            out.extend(q.results())
        return out

    def _join_values(self, lay: StoreLayout, k: Any, g: dict) -> tuple:
        k = (lay.name, k)
        vals = self._keycache.get(k)
        if vals is None:
            vals = self._keycache.put(k, tuple(_decode(a) for a in g["goal"][:len(lay.keys)]))
        return vals

    def _checked(self, triple: tuple, t1: Any, t2: Any, before: dict, after: dict,
                 derived: bool = False) -> list[Checked]:
        """The stores whose checking operand ``triple`` could arrive on, with
        the stored partial matches of the join keys it brings."""
        out = []
        # per step that found partners: the bindings (in its own pattern's
        # variables) of the occurrences it could build, for the steps above
        done: dict[int, list[dict]] = {}
        for lay in self._check_order:
            if lay.other is None or lay.vars is None:
                continue
            alts = _arrival(lay, triple, self.graph, done)
            if not alts:
                continue
            nkeys = len(lay.keys)
            probes: dict[tuple, dict] = {}      # (index, value)… -> the bindings bringing it
            for alt in alts[:_MAX_ALTERNATIVES]:
                probe = tuple((i, alt[v]) for i, v in enumerate(lay.keys) if v in alt)
                probes.setdefault(probe, alt)
            lim = as_number(t2) - lay.window if math.isfinite(lay.window) else None
            # a partner must end before the arriving operand starts: known
            # only when that operand is the triple itself
            ordered = lay.kind in ("seq", "optseq") and lay.side == "l" and _simple(lay.other)

            def matches(snapshot: dict):
                """(goal, count, usable?, bindings of the arrival) per match."""
                snap = snapshot.get(lay.name)
                if snap is None:
                    return
                index = snap.index(lambda k, g: self._join_values(lay, k, g))
                seen: set[int] = set()
                for probe, alt in probes.items():
                    if len(probe) == nkeys:
                        groups = [index.get(tuple(v for _, v in probe), ())]
                    else:
                        groups = [items for vals, items in index.items()
                                  if all(vals[i] == v for i, v in probe)]
                    for items in groups:
                        for item in items:
                            if id(item) in seen:
                                continue
                            seen.add(id(item))
                            gs, ge, c, g = item
                            ok = (lim is None or as_number(gs) >= lim) and \
                                (not ordered or as_number(ge) < as_number(t1))
                            yield g, c, ok, alt

            n_before = usable = 0
            built: list[dict] = []
            for g, c, ok, alt in matches(before):
                n_before += c
                if ok:
                    usable += c
                    if len(built) < _MAX_ALTERNATIVES:
                        vals = dict(zip(lay.vars, (_decode(x) for x in g["goal"][:-2])))
                        built.append({**alt, **vals})
            if usable:
                done.setdefault(lay.node, []).extend(built)
            complete = [p for p in probes if len(p) == nkeys]
            if n_before and (complete or not lay.keys or not _simple(lay.other)):
                n_after = sum(c for _, c, _, _ in matches(after))
                keys = [{lay.labels.get(lay.keys[i], lay.keys[i]): v for i, v in p}
                        for p in probes if p]
                unfixed = sorted({lay.labels.get(v, v) for i, v in enumerate(lay.keys)
                                  if any(i not in dict(p) for p in probes)})
                out.append(Checked(lay, keys, n_before, n_after, usable, ordered,
                                   lim is not None, triple if derived else None, unfixed))
        return out

    def push(self, row: tuple, step: int | None = None, held: int | str | None = None) -> dict:
        """Push one row ``(s, p, o, start[, end[, stream]])``; what it did.
        ``step`` numbers it (default: one more than the last); ``held`` is
        the step whose arrival released it, when the reorder buffer held it
        back.  The record's row is ``(s, p, o, start, end)`` (EP-SPARQL
        queries, the ones traced, see every stream)."""
        self.step_no = step if step is not None else self.step_no + 1
        stream = row[5] if len(row) > 5 else None
        row = _five(row)
        before = self._goals
        late0 = self.engine.late
        self.engine.push(*row, stream=stream)
        self.engine.gc()                   # expire at the step the window passes
        after = self._snapshot()
        if self.engine.late == late0:      # the core's clock: the latest end time pushed
            self.now = row[4] if self.now is None else max(self.now, row[4])
        now = self.now
        new, gone = self._diff(before, after)
        answers = self._drain()
        checked = self._checked(row[:3], row[3], row[4], before, after)
        seen = {row[:3]}
        for a in answers:              # triples derived by CONSTRUCT answers enter the stream too
            for t in a.triples:
                if t not in seen:
                    seen.add(t)
                    checked.extend(self._checked(t, a.start, a.end, before, after, derived=True))
        rec = {"step": self.step_no, "row": row, "now": now,
               "checked": checked,
               "inserted": new,
               "removed": [(g, self._reason(g, now)) for g in gone],
               "answers": answers,
               "late": self.engine.late > late0}
        if held is not None:
            rec["held"] = held
        self._explain(rec)
        self._goals = after
        self._count(rec)
        return rec

    def late(self, row: tuple, step: int, by: float) -> dict:
        """A row the reorder buffer found late (``by`` seconds before a row
        already processed): not pushed, and nothing happened."""
        self.step_no = step
        row = _five(row)
        rec = {"step": step, "row": row, "now": self.now, "checked": [], "inserted": [],
               "removed": [], "answers": [], "late": True, "late_by": by}
        self._explain(rec)
        self._count(rec)
        return rec

    def _explain(self, rec: dict) -> None:
        """Why each answer of a step was detected (with ``justify``), and
        the errors rules raised in it."""
        rec["why"] = [justify_answer(self.engine, a) for a in rec["answers"]] \
            if self.justify else [None] * len(rec["answers"])
        errors = self.engine.errors
        rec["errors"], self._errors = errors[self._errors:], len(errors)

    def end(self) -> dict:
        """End of stream (``Engine.flush()``): what it decided."""
        before = self._goals
        self.engine.flush()
        after = self._snapshot()
        now = self.now
        new, gone = self._diff(before, after)
        rec = {"step": "end", "row": None, "now": now, "checked": [], "inserted": new,
               "removed": [(g, self._reason(g, now)) for g in gone],
               "answers": self._drain(), "late": False}
        self._explain(rec)
        self._goals = after
        self._count(rec)
        return rec

    def waiting(self) -> list[Goal]:
        out = []
        for store in self._goals.values():
            for g, c in store.entries.values():
                out.extend(read_goal(g, self.layouts) for _ in range(c))
        out.sort(key=lambda g: (g.layout.node, g.layout.name, as_number(g.start), as_number(g.end)))
        return out

    def _count(self, rec: dict) -> None:
        self.totals["inserted"] += len(rec["inserted"])
        for _, why in rec["removed"]:
            self.totals[why] += 1
        self.totals["answers"] += len(rec["answers"])
        if rec["late"]:
            self.totals["late"] += 1


def _five(row: tuple) -> tuple:
    """A stream row as ``(s, p, o, start, end)`` (end filled in, stream dropped)."""
    end = row[4] if len(row) > 4 and row[4] is not None else row[3]
    return (row[0], row[1], row[2], row[3], end)


def late_note(gap: float) -> str:
    """What keeps a row that came ``gap`` seconds late (the run's flag)."""
    text = f"{gap:g}" if not float(gap).is_integer() else f"{int(gap)}"
    return f"--lateness {text} or more would keep it"


def as_number(t: Any) -> float:
    """A time as a float (inf when it is not a number)."""
    try:
        return float(t)
    except (TypeError, ValueError):
        return math.inf


def _simple(t: Any) -> bool:
    """Is the operand one triple pattern (under where/within/span)?"""
    while True:
        if isinstance(t, Child):
            t = t.term
        if functor(t) in ("where", "within", "span"):
            t = t.args[0]
            continue
        return functor(t) == "triple"


def _arrival(lay: StoreLayout, triple: tuple, graph: RuleGraph,
             done: dict[int, list[dict]]) -> list[dict[int, Any]] | None:
    """Could ``triple`` make the operand that checks this store occur now?
    The bindings of the operand's variables (of the store's node) it could
    occur with, one dict per alternative, or None.

    A triple pattern matches on its constant IRIs and on the predicate a
    pattern names (``stream_property``; subproperties are not followed).  A
    composite operand occurs when the triple arrives on the part that
    completes it (the right operand of a ``seq``, either operand of an
    ``and``, …); if the operand is a step with a store, only when that step
    found partners in this same trace step (``done``), and with their
    values."""
    if lay.other is None:
        return None
    if lay.constraints is None:
        lay.constraints = {}
        for x in subterms(lay.term):
            if functor(x) == "stream_property" and len(x.args) == 3 \
                    and isinstance(x.args[1], Var) and is_iri(x.args[2]):
                lay.constraints.setdefault(x.args[1].index, set()).add(x.args[2])
    return _arrive(lay.other, triple, lay.constraints, graph, done)


def _arrive(t: Any, triple: tuple, constraints: dict[int, set[str]], graph: RuleGraph,
            done: dict[int, list[dict]]) -> list[dict[int, Any]] | None:
    if isinstance(t, Child):
        if t.node in done:             # its occurrences: the partners' values, renamed
            mapping = variables(t)     # the child's variable j is our mapping[j]
            return [{mapping[v]: val for v, val in b.items() if v < len(mapping)}
                    for b in done[t.node]]
        node = graph.nodes.get(t.node)
        if node is not None and node.stores and node.op not in _OPTIONAL_KINDS:
            return None                # a step with a store that found no partner now
        t = t.term                     # an optional step can occur with its mandatory side alone
    f = functor(t)
    if f == "triple" and len(t.args) == 3:
        fixed: dict[int, Any] = {}
        for a, val in zip(t.args, triple):
            if isinstance(a, Var):
                if a.index in constraints and not (isinstance(val, URIRef)
                                                   and str(val) in constraints[a.index]):
                    return None
                if a.index in fixed and fixed[a.index] != val:
                    return None
                fixed[a.index] = val
            elif is_iri(a) and not (isinstance(val, URIRef) and str(val) == a):
                return None
            # other constants (literals): not compared
        return [fixed]
    if not isinstance(t, Compound):
        return None
    kids = [a for a in t.args if isinstance(a, (Compound, Child))]
    if f in ("where", "within", "span", "cnot", "eqopt", "leftjoin"):
        kids = kids[:1]
    elif f == "aggregate":
        kids = [t.args[1]]
    elif f in _RIGHT_COMPLETES and len(t.args) >= 2:
        kids = [t.args[1]]
    else:
        kids = kids[:2]
    for k in kids:
        r = _arrive(k, triple, constraints, graph, done)
        if r:
            return r
    return None


__all__ = ["Tracer", "StoreLayout", "Goal", "Checked", "store_layouts", "read_goal", "as_number",
           "late_note"]
