"""``epsparql run … --trace``: push a small stream one triple at a time and
show, after each triple, what it did to the binarised rule graph.

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

import io
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any, Sequence

from .cli import (GraphNode, _IRI_ATOM, _Term, _duration_text, _parse_term, _span,
                  _var_label, _var_tokens, analyse_rule_graph)

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
    other: _Term | None = None    # the operand whose arrivals check this store
    text: str = ""                # the node's pattern text
    iris: set[str] = field(default_factory=set)

    @property
    def title(self) -> str:
        return f"step n{self.node} ({self.kind})"


def _unique_tokens(text: str, span: tuple[int, int]) -> list[str]:
    """Variables of a span in term_variables/2 order; every ``_`` is its own."""
    out: list[str] = []
    anon = 0
    for v in _var_tokens(text, *span):
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
        tree = _parse_term(text)
        t = tree
        if t is not None and t.functor == "where" and t.args and isinstance(t.args[0], _Term):
            t = t.args[0]                   # where(op(L, R), Cond): the condition is fused
        kind = t.functor if t is not None else n.kind
        lay = StoreLayout(name, nid, side, kind, s.get("window"), None, text=text,
                          iris=set(_IRI_ATOM.findall(text)))
        if t is not None and len(t.args) >= 2 and side in "lr":
            lvars = _unique_tokens(text, _span(t.args[0]))
            rvars = _unique_tokens(text, _span(t.args[1]))
            keys = [v for v in lvars if v in rvars]
            own = lvars if side == "l" else rvars
            lay.vars = keys + [v for v in own if v not in keys]
            lay.keys = keys
            other = t.args[1] if side == "l" else t.args[0]
            lay.other = other if isinstance(other, _Term) else None
        elif t is not None and side == "n" and len(t.args) >= 2:
            lay.vars = _unique_tokens(text, _span(t.args[1]))
        elif side == "a":
            lay.vars = None                 # Group, T1, T2, Value: shown by position
        for v in lay.vars or ():
            label = _var_label(n, v) if not v.startswith("_#") else "_"
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
    from .rdf.codec import decode
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
        self._keycache: dict[str, tuple] = {}
        from .cli import _shape, _topological
        order = {nid: i for i, nid in enumerate(reversed(_topological(self.nodes)))}
        self._check_order = sorted(self.layouts.values(), key=lambda l: order.get(l.node, 0))
        self._shapes = {_shape(l.text): (l.node, l.text) for l in self.layouts.values() if l.text}
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
            vals = tuple(_decode(a) for a in g["goal"][:len(lay.keys)])
            if len(self._keycache) > 200_000:
                self._keycache.clear()
            self._keycache[k] = vals
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
                            ok = (lim is None or _num(gs) >= lim) and \
                                (not ordered or _num(ge) < _num(t1))
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
        out.sort(key=lambda g: (g.layout.node, g.layout.name, _num(g.start), _num(g.end)))
        return out

    def _count(self, rec: dict) -> None:
        self.totals["inserted"] += len(rec["inserted"])
        for _, why in rec["removed"]:
            self.totals[why] += 1
        self.totals["answers"] += len(rec["answers"])


def _num(t: Any) -> float:
    try:
        return float(t)
    except (TypeError, ValueError):
        return math.inf


def _simple(t: _Term | None) -> bool:
    """Is the operand one triple pattern (under where/within/span)?"""
    while t is not None and t.functor in ("where", "within", "span") and t.args \
            and isinstance(t.args[0], _Term):
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


def _arrive(t: _Term, text: str, triple: tuple, constraints: dict[str, set[str]],
            shapes: dict[str, tuple[int, str]],
            done: dict[int, list[dict]]) -> list[dict[str, Any]] | None:
    from rdflib.term import URIRef

    from .cli import _shape
    f = t.functor
    if f == "triple" and len(t.args) == 3:
        fixed: dict[str, Any] = {}
        for i, a in enumerate(t.args):
            s, e = _span(a)
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
    hit = shapes.get(_shape(text, t.start, t.end))
    if hit is not None:
        node, node_text = hit
        if node in done:               # its occurrences: the partners' values, renamed
            mapping = dict(zip(_var_tokens(node_text), _var_tokens(text, t.start, t.end)))
            return [{mapping[v]: val for v, val in b.items() if v in mapping}
                    for b in done[node]]
        inner = t.args[0] if f == "where" and t.args and isinstance(t.args[0], _Term) else t
        if inner.functor not in _OPTIONAL_KINDS:
            return None                # a step with a store that found no partner now
        # an optional step can occur with its mandatory side alone
    kids = [a for a in t.args if isinstance(a, _Term)]
    if f in ("where", "within", "span") and kids:
        kids = kids[:1]
    elif f == "aggregate":
        kids = kids[1:2]
    elif f in _RIGHT_COMPLETES and len(t.args) >= 2:
        kids = [t.args[1]] if isinstance(t.args[1], _Term) else []
    elif f in ("cnot", "eqopt", "leftjoin") and kids:
        kids = kids[:1]
    else:
        kids = kids[:2]
    for k in kids:
        r = _arrive(k, text, triple, constraints, shapes, done)
        if r:
            return r
    return None


# ---------------------------------------------------------------------------
# rendering

class TextRenderer:
    """The trace as readable text, one block per triple."""

    def __init__(self, out: IO[str], queries: Sequence[Any], *, time_format: str = "seconds",
                 prefixes: dict[str, str] | None = None, show_quiet_steps: bool = True) -> None:
        from .io.results import TableWriter
        self.out = out
        self.time_format = time_format
        self._cells = TableWriter(io.StringIO(), queries, max_width=60, prefixes=prefixes)
        self.show_quiet_steps = show_quiet_steps

    def term(self, v: Any) -> str:
        from rdflib.term import Node
        if isinstance(v, Node):
            return self._cells._cell(v)
        if v is None:
            return "(unbound)"
        return repr(v)

    def time(self, t: Any) -> str:
        from .io.streams import format_time
        try:
            return format_time(t, self.time_format)
        except (TypeError, ValueError, OverflowError):
            return str(t)

    def interval(self, a: Any, b: Any) -> str:
        return f"[{self.time(a)}, {self.time(b)}]"

    def goal(self, g: Goal) -> str:
        from rdflib.term import URIRef
        parts = []
        hidden = g.layout.iris
        for label, v, named in sorted(g.values, key=lambda x: not x[2]):
            if label == "_":
                continue
            if not named and not label.startswith("#") and label not in ("group", "value"):
                # an internal variable: the stream predicate under RDFS
                # reasoning (shown when it is a subproperty, not the IRI the
                # pattern names) or a helper of a condition (never shown)
                if not isinstance(v, URIRef) or str(v) in hidden:
                    continue
            parts.append(f"{label}={self.term(v)}")
        return "{" + ", ".join(parts) + "} " + self.interval(g.start, g.end)

    def write(self, line: str = "") -> None:
        self.out.write(line + "\n")

    def header(self, tracer: Tracer, source: str, rows: int) -> None:
        n = len(tracer.nodes)
        self.write(f"trace of {rows:,} triple{'s' if rows != 1 else ''} from {source}: "
                   f"{len(tracer.queries)} quer{'ies' if len(tracer.queries) != 1 else 'y'}, "
                   f"{n} rule graph nodes, {len(tracer.layouts)} "
                   f"store{'s' if len(tracer.layouts) != 1 else ''} of partial matches")
        for lay in tracer.layouts.values():
            win = _duration_text(lay.window)
            if lay.vars is not None:
                shown = [lay.labels.get(v, v) for v in lay.vars if v in lay.named]
                keys = [lay.labels.get(v, v) for v in lay.keys]
                what = "holds " + (", ".join(shown) if shown else "no query variable")
                what += "; joins on " + (", ".join(keys) if keys else "nothing")
            else:
                what = "layout not known: values shown by position"
            self.write(f"  {lay.title} store {lay.name}: window {win}; {what}")
        self.write("  (epsparql explain shows the whole rule graph)")

    def step(self, rec: dict) -> None:
        lines: list[str] = []
        for c in rec["checked"]:
            keys = [", ".join(f"{k}={self.term(v)}" for k, v in key.items()) for key in c.keys]
            key = " or ".join(keys[:3]) + (f" or … ({len(keys)} keys)" if len(keys) > 3 else "")
            who = "the triple"
            if c.derived is not None:
                who = "the derived triple " + " ".join(self.term(x) for x in c.derived)
            note = f"{c.before} before, {c.after} after"
            if c.ordered or c.windowed:
                cond = " and ".join(x for x in (("ended before it" if c.ordered else ""),
                                                ("within the window" if c.windowed else "")) if x)
                note += f"; {c.usable} of them {cond}"
            if c.unfixed:
                key = ", ".join(filter(None, [key, "any " + ", ".join(c.unfixed)]))
                who += " (completing the other operand, whose key came earlier)"
            elif not key:
                key = "no join variables"
            lines.append(f"    checked   {c.layout.title}: {c.before} stored partial "
                         f"match{'es' if c.before != 1 else ''} with {key}: {who} could "
                         f"pair with {'it' if c.before == 1 else 'them'} ({note})")
        for g in rec["inserted"]:
            lines.append(f"    inserted  {g.layout.title} stores partial match {self.goal(g)}")
        for g, why in rec["removed"]:
            if why == "consumed":
                lines.append(f"    consumed  {g.layout.title} partial match {self.goal(g)}")
        for a in rec["answers"]:
            lines.append(f"    answer    {self.answer(a)}")
        for g, why in rec["removed"]:
            if why == "expired":
                age = _num(rec["now"]) - _num(g.start)
                lines.append(f"    expired   {g.layout.title} partial match {self.goal(g)}: "
                             f"started {_duration_text(age)} before now "
                             f"({self.time(rec['now'])}), window {_duration_text(g.layout.window)}")
        if rec["late"]:
            lines.append("    late      ended before an earlier triple: not processed")
        if rec["row"] is not None:
            s, p, o, t1, t2 = rec["row"]
            head = (f"[{rec['step']}] {self.term(s)} {self.term(p)} {self.term(o)}  "
                    f"{self.interval(t1, t2)}")
        else:
            head = "[end of stream] closes every instant"
            if not lines:
                lines.append("    (nothing was waiting for the end of the stream)")
        if not lines and not self.show_quiet_steps:
            return
        if not lines:
            lines.append("    (no step stored, checked or removed a partial match; no answer)")
        self.write(head)
        for line in lines:
            self.write(line)

    def answer(self, a: Any) -> str:
        parts = [f"?{k}={self.term(v)}" for k, v in a.bindings.items()]
        text = f"{a.query} {{{', '.join(parts)}}} {self.interval(a.start, a.end)}"
        if a.triples:
            text += " derives " + "; ".join(" ".join(self.term(x) for x in t) for t in a.triples)
        return text

    def finish(self, tracer: Tracer) -> None:
        waiting = tracer.waiting()
        t = tracer.totals
        self.write(f"still waiting: {len(waiting)} partial match{'es' if len(waiting) != 1 else ''}")
        for g in waiting:
            self.write(f"    {g.layout.title} {self.goal(g)}")
        self.write(f"totals: {t['inserted']} inserted, {t['expired']} expired, "
                   f"{t['consumed']} consumed, {t['answers']} answers")
        self.out.flush()


class JsonRenderer:
    """The trace as JSON lines: a ``header`` object, one ``triple`` object
    per triple, an ``end`` object, a ``waiting`` object."""

    def __init__(self, out: IO[str], queries: Sequence[Any], *, time_format: str = "seconds",
                 **_: Any) -> None:
        self.out = out
        self.time_format = time_format

    def _time(self, t: Any) -> Any:
        from .io.results import _time_json
        try:
            return _time_json(t, self.time_format)
        except (TypeError, ValueError, OverflowError):
            return t

    @staticmethod
    def _term(v: Any) -> Any:
        from rdflib.term import Node

        from .io.streams import term_to_json
        if isinstance(v, Node):
            return term_to_json(v)
        if v is None:
            return None
        return {"type": "raw", "value": repr(v)}

    def goal(self, g: Goal) -> dict:
        lay = g.layout
        obj: dict[str, Any] = {"store": lay.name, "node": lay.node, "kind": lay.kind,
                               "start": self._time(g.start), "end": self._time(g.end),
                               "bindings": {}, "internal": {}}
        for label, v, named in g.values:
            if label == "_":
                continue
            if named:
                obj["bindings"][label.replace("?", "")] = self._term(v)
            else:
                obj["internal"][label] = self._term(v)
        return obj

    def write(self, obj: dict) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def header(self, tracer: Tracer, source: str, rows: int) -> None:
        stores = []
        for lay in tracer.layouts.values():
            stores.append({"store": lay.name, "node": lay.node, "kind": lay.kind,
                           "window": None if lay.window in (None, "inf") else lay.window,
                           "variables": [lay.labels.get(v, v) for v in lay.vars]
                           if lay.vars is not None else None,
                           "join": [lay.labels.get(v, v) for v in lay.keys]})
        self.write({"type": "header", "source": source, "triples": rows,
                    "queries": [q.name for q in tracer.queries], "stores": stores})

    def step(self, rec: dict) -> None:
        from .io.results import answer_to_json
        obj: dict[str, Any] = {"type": "triple" if rec["row"] is not None else "end"}
        if rec["row"] is not None:
            s, p, o, t1, t2 = rec["row"]
            obj["step"] = rec["step"]
            obj["triple"] = {"s": self._term(s), "p": self._term(p), "o": self._term(o)}
            obj["start"], obj["end"] = self._time(t1), self._time(t2)
        obj["now"] = self._time(rec["now"])
        obj["checked"] = []
        for c in rec["checked"]:
            item = {"store": c.layout.name, "node": c.layout.node, "kind": c.layout.kind,
                    "keys": [{k.replace("?", ""): self._term(v) for k, v in key.items()}
                             for key in c.keys],
                    "before": c.before, "after": c.after, "usable": c.usable}
            if c.derived is not None:
                item["derived"] = {"s": self._term(c.derived[0]), "p": self._term(c.derived[1]),
                                   "o": self._term(c.derived[2])}
            obj["checked"].append(item)
        obj["inserted"] = [self.goal(g) for g in rec["inserted"]]
        obj["removed"] = [dict(self.goal(g), reason=why) for g, why in rec["removed"]]
        obj["answers"] = [answer_to_json(a, time_format=self.time_format) for a in rec["answers"]]
        if rec["late"]:
            obj["late"] = True
        self.write(obj)

    def finish(self, tracer: Tracer) -> None:
        self.write({"type": "waiting", "goals": [self.goal(g) for g in tracer.waiting()],
                    "totals": dict(tracer.totals)})
        self.out.flush()


# ---------------------------------------------------------------------------
# the command

DEFAULT_LIMIT = 10_000


def run_trace(args: Any, qfs: Sequence[Any]) -> int:
    """``epsparql run QUERY.rq… --stream FILE --trace`` (``qfs``: the query
    files, already read by the command)."""
    from .cli import EXIT_OK, EXIT_RUNTIME, PROG, UsageError, _make_engine, _register, _say
    from .core.runtime import PrologError
    from .io.streams import StreamFormatError, StreamReader, guess_format, open_output

    fmt = args.format or guess_format(args.stream)
    limit = args.trace_limit if args.trace_limit is not None else DEFAULT_LIMIT
    if limit < 1:
        raise UsageError("--trace-limit must be at least 1")
    out_format = args.output_format
    if out_format not in (None, "table", "jsonl"):
        raise UsageError(f"--trace writes text (the default) or JSON lines "
                         f"(--output-format jsonl), not {out_format}")
    engine = _make_engine(args.base)
    queries = _register(engine, qfs)

    # read first: a trace is for small streams, and refusing a long one
    # before printing anything is kinder than stopping half way
    reader = StreamReader(args.stream, fmt, on_error=args.on_error,
                          on_skip=None if args.quiet else
                          (lambda err: _say(f"{PROG}: skipped {err}")))
    rows: list[tuple] = []
    failure: BaseException | None = None
    try:
        for row in reader:
            rows.append(row)
            if len(rows) > limit:
                raise UsageError(
                    f"--trace prints a block per triple and is meant for small streams: "
                    f"{reader.path} has more than {limit:,} triples (cut it, e.g. with head, "
                    f"or raise the limit with --trace-limit N)")
    except StreamFormatError as e:
        failure = e
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            raise
        failure = e
    finally:
        reader.close()

    try:
        out, close = open_output(args.out)
    except OSError as e:
        raise UsageError(f"cannot write {args.out}: {e.strerror or e}") from None
    prefixes = {"": args.base} if args.base else None
    renderer_cls = JsonRenderer if out_format == "jsonl" else TextRenderer
    renderer = renderer_cls(out, queries, time_format=args.time_format, prefixes=prefixes)
    code = EXIT_OK
    try:
        tracer = Tracer(engine, queries)
        renderer.header(tracer, reader.path, len(rows))
        for row in rows:
            renderer.step(tracer.push(row))
        if failure is None:
            renderer.step(tracer.end())
        renderer.finish(tracer)
    except PrologError as e:
        _say(f"{PROG}: error in the engine: {e}")
        code = EXIT_RUNTIME
    finally:
        if close:
            out.close()
        else:
            out.flush()
    if failure is not None:
        if isinstance(failure, StreamFormatError):
            _say(f"{PROG}: error: {failure}")
            _say(f"{PROG}: stopped at the malformed line; the triples before it were traced "
                 f"(--on-error skip skips such lines)")
        else:
            _say(f"{PROG}: error reading {reader.path}: {failure}")
        return EXIT_RUNTIME
    return code


__all__ = ["Tracer", "TextRenderer", "JsonRenderer", "StoreLayout", "Goal", "run_trace",
           "store_layouts", "read_goal", "DEFAULT_LIMIT"]
