"""The trace of a small stream: push it one triple at a time and say,
after each triple, what it did to the binarised rule graph
(``epsparql run … --trace``; the text and JSON forms are in
:mod:`.trace_output`).

For every triple: the partial matches ("goals") it made the steps store,
the stored partial matches of the same join key it could pair with
("checked"), the goals removed (expired by the window's garbage collection,
or consumed), and the answers it completed.  At the end of the stream: what
the end decided, then the goals still waiting.

Everything is derived from outside the core: the rule graph
(``CoreEngine.rule_graph()``) and the goal store before and after each
triple (``CoreEngine.goals()``), so the trace adds no Prolog code.  The
"checked" counts are therefore an estimate (see docs/CLI.md): the core
does not report which checking clause ran.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..memo import BoundedCache
from .rule_graph import (IRI_ATOM, GraphNode, PlTerm, analyse_rule_graph, parse_pl_term, shape,
                         span, topological, var_label, var_tokens)

_STORE_NAME = re.compile(r"ep_g(\d+)([lrna])$")
_STREAM_PROPERTY = re.compile(r"stream_property\([^,()]*,\s*([A-Z_][A-Za-z0-9_]*)\s*,\s*'([^']*)'\)")


# ---------------------------------------------------------------------------
# store layouts: which variable each goal argument holds

@dataclass
class StoreLayout:
    """How to read the goals of one store ``ep_g<node><side>``."""

    name: str
    node: int
    side: str                     # l, r (binary and optional steps), n (cnot), a (aggregate)
    kind: str                     # the node's operator: seq, and, eqopt, …
    window: Any                   # seconds, or "inf"
    vars: list[str] | None        # the Prolog variables of the arguments before start, end
    keys: list[str] = field(default_factory=list)   # the join variables (a prefix of vars)
    labels: dict[str, str] = field(default_factory=dict)   # variable -> ?name or itself
    named: set[str] = field(default_factory=set)            # the variables with a query name
    other: PlTerm | None = None    # the operand whose arrivals check this store
    text: str = ""                # the node's pattern text
    iris: set[str] = field(default_factory=set)

    @property
    def title(self) -> str:
        return f"step n{self.node} ({self.kind})"


def _unique_tokens(text: str, span: tuple[int, int]) -> list[str]:
    """Variables of a span in term_variables/2 order; every ``_`` is its own."""
    out: list[str] = []
    anon = 0
    for v in var_tokens(text, *span):
        if v == "_":
            anon += 1
            out.append(f"_#{span[0]}.{anon}")
        elif v not in out:
            out.append(v)
    return out


def store_layouts(graph: dict, nodes: dict[int, GraphNode]) -> dict[str, StoreLayout]:
    """A layout per store of the rule graph (see prolog/core_compile.pl: a
    binary step stores ``J1..Jj, L1..Ll, T1, T2`` on the left, ``J1..Jj,
    R1..Rr, T3, T4`` on the right, the join variables first in the left
    operand's order; ``cnot`` stores the negated pattern's variables, an
    aggregate ``Group, T1, T2, Value``)."""
    out: dict[str, StoreLayout] = {}
    for s in graph.get("stores", []):
        name, nid = s["name"], s.get("node")
        n = nodes.get(nid)
        m = _STORE_NAME.match(name)
        if n is None or m is None:
            out[name] = StoreLayout(name, nid if nid is not None else -1, "?", "?",
                                    s.get("window"), None)
            continue
        side = m.group(2)
        text = n.pattern
        tree = parse_pl_term(text)
        t = tree
        if t is not None and t.functor == "where" and t.args and isinstance(t.args[0], PlTerm):
            t = t.args[0]                   # where(op(L, R), Cond): the condition is fused
        kind = t.functor if t is not None else n.kind
        lay = StoreLayout(name, nid, side, kind, s.get("window"), None, text=text,
                          iris=set(IRI_ATOM.findall(text)))
        if t is not None and len(t.args) >= 2 and side in "lr":
            lvars = _unique_tokens(text, span(t.args[0]))
            rvars = _unique_tokens(text, span(t.args[1]))
            keys = [v for v in lvars if v in rvars]
            own = lvars if side == "l" else rvars
            lay.vars = keys + [v for v in own if v not in keys]
            lay.keys = keys
            other = t.args[1] if side == "l" else t.args[0]
            lay.other = other if isinstance(other, PlTerm) else None
        elif t is not None and side == "n" and len(t.args) >= 2:
            lay.vars = _unique_tokens(text, span(t.args[1]))
        elif side == "a":
            lay.vars = None                 # Group, T1, T2, Value: shown by position
        for v in lay.vars or ():
            label = var_label(n, v) if not v.startswith("_#") else "_"
            lay.labels[v] = label
            if label.startswith("?"):
                lay.named.add(v)
        out[name] = lay
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
    from ..rdf.codec import decode
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
        lay = StoreLayout(g["store"], g.get("node", -1), "?", "?", None, None)
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

    def __init__(self, engine: Any, queries: Sequence[Any]) -> None:
        self.engine = engine
        self.queries = list(queries)
        self.graph = engine.core.rule_graph()
        self.nodes = analyse_rule_graph(self.graph, self.queries)
        self.layouts = store_layouts(self.graph, self.nodes)
        self._keycache = BoundedCache(200_000)
        order = {nid: i for i, nid in enumerate(reversed(topological(self.nodes)))}
        self._check_order = sorted(self.layouts.values(), key=lambda l: order.get(l.node, 0))
        self._shapes = {shape(l.text): (l.node, l.text) for l in self.layouts.values() if l.text}
        self._goals = self._snapshot()
        self.step_no = 0
        self.now: Any = None
        self.totals = Counter({"inserted": 0, "expired": 0, "consumed": 0, "answers": 0})

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
        w = g.layout.window
        try:
            if w not in (None, "inf") and now is not None and float(now) - float(g.start) > float(w):
                return "expired"
        except (TypeError, ValueError):
            pass
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
            alts = _arrival(lay, triple, self._shapes, done)
            if not alts:
                continue
            nkeys = len(lay.keys)
            probes: dict[tuple, dict] = {}      # (index, value)… -> the bindings bringing it
            for alt in alts[:_MAX_ALTERNATIVES]:
                probe = tuple((i, alt[v]) for i, v in enumerate(lay.keys) if v in alt)
                probes.setdefault(probe, alt)
            w = lay.window
            lim = None
            if w not in (None, "inf"):
                try:
                    lim = float(t2) - float(w)
                except (TypeError, ValueError):
                    lim = None
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

    def push(self, row: tuple) -> dict:
        """Push one row ``(s, p, o, start, end)``; what it did."""
        self.step_no += 1
        if len(row) == 4 or row[4] is None:
            row = (row[0], row[1], row[2], row[3], row[3])
        before = self._goals
        late0 = self.engine.late
        self.engine.push(*row)
        self.engine.core.gc()              # expire at the step the window passes
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
        self._goals = after
        self._count(rec)
        return rec

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


def as_number(t: Any) -> float:
    """A time as a float (inf when it is not a number)."""
    try:
        return float(t)
    except (TypeError, ValueError):
        return math.inf


def _simple(t: PlTerm | None) -> bool:
    """Is the operand one triple pattern (under where/within/span)?"""
    while t is not None and t.functor in ("where", "within", "span") and t.args \
            and isinstance(t.args[0], PlTerm):
        t = t.args[0]
    return t is not None and t.functor == "triple"


_RIGHT_COMPLETES = {"seq", "meets", "optseq"}     # occur when their right operand arrives


def _arrival(lay: StoreLayout, triple: tuple, shapes: dict[str, tuple[int, str]],
             done: dict[int, list[dict]]) -> list[dict[str, Any]] | None:
    """Could ``triple`` make the operand that checks this store occur now?
    The bindings of the operand's variables (in this store's pattern text)
    it could occur with, one dict per alternative, or None.

    A triple pattern matches on its constant IRIs and on the predicate a
    pattern names (``stream_property``; subproperties are not followed).  A
    composite operand occurs when the triple arrives on the part that
    completes it (the right operand of a ``seq``, either operand of an
    ``and``, …); if the operand is a step with a store, only when that step
    found partners in this same trace step (``done``), and with their
    values."""
    if lay.other is None:
        return None
    text = lay.text
    constraints: dict[str, set[str]] = {}
    for m in _STREAM_PROPERTY.finditer(text):
        constraints.setdefault(m.group(1), set()).add(m.group(2))
    return _arrive(lay.other, text, triple, constraints, shapes, done)


_OPTIONAL_KINDS = ("optseq", "eqopt", "leftjoin")


def _arrive(t: PlTerm, text: str, triple: tuple, constraints: dict[str, set[str]],
            shapes: dict[str, tuple[int, str]],
            done: dict[int, list[dict]]) -> list[dict[str, Any]] | None:
    from rdflib.term import URIRef

    f = t.functor
    if f == "triple" and len(t.args) == 3:
        fixed: dict[str, Any] = {}
        for i, a in enumerate(t.args):
            s, e = span(a)
            txt = text[s:e].strip()
            val = triple[i]
            if re.fullmatch(r"[A-Z_][A-Za-z0-9_]*", txt):
                if txt in constraints and not (isinstance(val, URIRef)
                                               and str(val) in constraints[txt]):
                    return None
                if txt != "_":
                    if txt in fixed and fixed[txt] != val:
                        return None
                    fixed[txt] = val
            elif txt.startswith("'") and txt.endswith("'") and len(txt) > 1:
                if not (isinstance(val, URIRef) and str(val) == txt[1:-1]):
                    return None
            # other constants (literals): not compared
        return [fixed]
    hit = shapes.get(shape(text, t.start, t.end))
    if hit is not None:
        node, node_text = hit
        if node in done:               # its occurrences: the partners' values, renamed
            mapping = dict(zip(var_tokens(node_text), var_tokens(text, t.start, t.end)))
            return [{mapping[v]: val for v, val in b.items() if v in mapping}
                    for b in done[node]]
        inner = t.args[0] if f == "where" and t.args and isinstance(t.args[0], PlTerm) else t
        if inner.functor not in _OPTIONAL_KINDS:
            return None                # a step with a store that found no partner now
        # an optional step can occur with its mandatory side alone
    kids = [a for a in t.args if isinstance(a, PlTerm)]
    if f in ("where", "within", "span") and kids:
        kids = kids[:1]
    elif f == "aggregate":
        kids = kids[1:2]
    elif f in _RIGHT_COMPLETES and len(t.args) >= 2:
        kids = [t.args[1]] if isinstance(t.args[1], PlTerm) else []
    elif f in ("cnot", "eqopt", "leftjoin") and kids:
        kids = kids[:1]
    else:
        kids = kids[:2]
    for k in kids:
        r = _arrive(k, text, triple, constraints, shapes, done)
        if r:
            return r
    return None


__all__ = ["Tracer", "StoreLayout", "Goal", "Checked", "store_layouts", "read_goal", "as_number"]
