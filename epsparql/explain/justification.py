"""Why an answer was detected: the tree of steps and events that made it.

An engine made with ``Engine(justify=True)`` has the core record, for
every step that occurs, which occurrences of its operands made it
(``prolog/core_justify.pl``).  :func:`justify_answer` fetches the tree
of one answer (``CoreEngine.justifications``: the rule's detection, its
steps with the values of their variables, down to the events received,
through events other rules derived: a CONSTRUCT's triples) and
:class:`JustificationView` shows it in the rule graph's terms: each step
as ``n4 seq`` with the query variables it binds and the algebra element
it implements, each event received as the triple it is; as text lines
(``epsparql run --trace --justify``) or as JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, Union

from ..answer import Answer
from ..core.rule_graph import RuleGraph
from ..core.terms import Compound
from ..rdf.codec import decode
from .origins import GraphOrigins
from .rule_graph import GraphNames, node_label
from .tree import TreeNode, tree_lines

__all__ = ["Step", "Received", "Detection", "Alarm", "Unknown", "read_tree",
           "justify_answer", "JustificationView"]


@dataclass
class Step:
    """A step of a rule occurred: its node, the values of the node's
    variables, its interval and what made it."""

    node: int
    values: list[Any]
    start: Any
    end: Any
    children: list["Why"] = field(default_factory=list)


@dataclass
class Received:
    """An event pushed into the engine (a stream triple ``triple(S, P, O)``)."""

    event: Any
    start: Any
    end: Any


@dataclass
class Detection:
    """A detection of a rule: its event (head), interval, the rule's text,
    and why (an event another rule derived is one too)."""

    event: Any
    start: Any
    end: Any
    rule: str
    why: "Why"


@dataclass
class Alarm:
    """An alarm fired; ``why`` is the detection of the step that set it."""

    why: "Why"


@dataclass
class Unknown:
    """A step with no record (its rule was added without justify)."""

    node: int
    start: Any
    end: Any


Why = Union[Step, Received, Detection, Alarm, Unknown]


def _interval(x: Any) -> tuple[Any, Any]:
    return (x[0], x[1]) if isinstance(x, list) and len(x) == 2 else (None, None)


def read_tree(t: Any) -> Why:
    """The tree of ``CoreEngine.justifications`` (terms) as dataclasses."""
    if not isinstance(t, Compound):
        raise ValueError(f"not a justification: {t!r}")
    a = t.args
    if t.name == "detection" and len(a) == 4:
        return Detection(a[0], *_interval(a[1]), str(a[2]), read_tree(a[3]))
    if t.name == "step" and len(a) == 4:
        return Step(a[0], list(a[1]), *_interval(a[2]), [read_tree(c) for c in a[3]])
    if t.name == "received" and len(a) == 2:
        return Received(a[0], *_interval(a[1]))
    if t.name == "alarm" and len(a) == 1:
        return Alarm(read_tree(a[0]))
    if t.name == "unknown" and len(a) == 2:
        return Unknown(a[0], *_interval(a[1]))
    raise ValueError(f"not a justification: {t!r}")


def _decode(v: Any) -> Any:
    try:
        return decode(v)
    except (ValueError, TypeError):
        return v


def justify_answer(engine: Any, answer: Answer) -> Detection | None:
    """Why ``answer`` (of a query of ``engine``, made with
    ``Engine(justify=True)``) was detected; None when nothing was recorded
    (the engine does not justify)."""
    q = next((q for q in engine.queries if q.name == answer.query), None)
    if q is None:
        return None
    names = q.compiled.variables
    trees = engine.core.justifications(q.compiled.head, len(names), answer.start, answer.end)
    for t in trees:
        d = read_tree(t)
        if not isinstance(d, Detection):
            continue
        args = d.event.args if isinstance(d.event, Compound) else ()
        row = {n: _decode(v) for n, v in zip(names, args) if v is not None}
        if all(row.get(k) == v for k, v in answer.bindings.items()):
            return d
    return None


class JustificationView:
    """Justification trees in the rule graph's terms (see the module).

    ``term`` writes an RDF term (or a raw value) for people, ``time`` a
    time; ``term_json`` and ``time_json`` the same for JSON."""

    def __init__(self, graph: RuleGraph, names: GraphNames, origins: GraphOrigins,
                 queries: Sequence[Any]) -> None:
        self.graph = graph
        self.names = names
        self.origins = origins
        self.heads = {q.compiled.head: q for q in queries}

    # -- what a piece says ------------------------------------------------------
    def bindings(self, s: Step) -> list[tuple[str, Any]]:
        """The query variables a step binds, with their values (RDF terms)."""
        out = []
        for i, v in enumerate(s.values):
            if v is not None and self.names.named(s.node, i):
                out.append((self.names.label(s.node, i), _decode(v)))
        return out

    def event_terms(self, e: Any) -> tuple[Any, ...] | None:
        """A stream triple event as its three RDF terms (None: another event)."""
        if isinstance(e, Compound) and e.name == "triple" and len(e.args) == 3:
            return tuple(_decode(x) for x in e.args)
        return None

    def answer_bindings(self, d: Detection) -> list[tuple[str, Any]] | None:
        """A query's answer event as the query's variables and their values
        (None for another event)."""
        name = d.event.name if isinstance(d.event, Compound) else str(d.event)
        q = self.heads.get(name)
        if q is None:
            return None
        args = d.event.args if isinstance(d.event, Compound) else ()
        return [("?" + n, _decode(v)) for n, v in zip(q.compiled.variables, args)
                if v is not None and not n.startswith("_:")]

    def whose(self, d: Detection) -> str:
        """Which query's rule made a detection."""
        name = d.event.name if isinstance(d.event, Compound) else str(d.event)
        q = self.heads.get(name)
        if q is not None:
            return f"answer of query {q.name}"
        if name == "triple":
            carrier = [q.name for h, q in self.heads.items() if h + "(" in d.rule]
            if carrier:
                return f"triple constructed by query {carrier[0]}"
        return f"derived by the rule {d.rule}"

    # -- text -------------------------------------------------------------------
    def tree(self, d: Why, term: Callable[[Any], str],
             time: Callable[[Any], str]) -> TreeNode:
        """The tree to print: unary chains of steps on one line (``n1 where
        > n2 span > n4 seq``), an event received as a leaf."""
        def interval(a: Any, b: Any) -> str:
            return f"[{time(a)}, {time(b)}]"

        def node(w: Why) -> TreeNode:
            if isinstance(w, Detection):
                ev = self.event_terms(w.event)
                b = self.answer_bindings(w)
                if b is not None:
                    what = "{" + ", ".join(f"{k}={term(v)}" for k, v in b) + "}"
                elif ev is not None:
                    what = " ".join(term(x) for x in ev)
                else:
                    what = term(w.event)
                return TreeNode(f"{self.whose(w)} {what} {interval(w.start, w.end)}", [],
                                [node(w.why)])
            if isinstance(w, Received):
                ev = self.event_terms(w.event)
                what = " ".join(term(x) for x in ev) if ev else term(w.event)
                return TreeNode(f"received {what} {interval(w.start, w.end)}")
            if isinstance(w, Alarm):
                return TreeNode("alarm set when this occurred:", [], [node(w.why)])
            if isinstance(w, Unknown):
                return TreeNode(f"n{w.node} {interval(w.start, w.end)} (not recorded)")
            chain = [w]
            while len(chain[-1].children) == 1 and isinstance(chain[-1].children[0], Step):
                chain.append(chain[-1].children[0])
            last = chain[-1]
            if len(last.children) == 1 and isinstance(last.children[0], Received):
                r = last.children[0]
                leaf = node(r)
                leaf.label += "  (" + " > ".join(self._step_name(s) for s in chain) + ")"
                return leaf
            label = " > ".join(self._step_name(s) for s in chain) + f" {interval(w.start, w.end)}"
            details = []
            b = self.bindings(w)
            if b:
                details.append(", ".join(f"{k}={term(v)}" for k, v in b))
            elements = []
            for s in chain:
                for o in self.origins.of(s.node)[0]:
                    text = f"{o.query} #{o.number} {o.element.kind}"
                    if text not in elements:
                        elements.append(text)
            if elements:
                details.append("implements " + ", ".join(elements))
            return TreeNode(label, details, [node(c) for c in last.children])

        return node(d)

    def _step_name(self, s: Step) -> str:
        n = self.graph.nodes.get(s.node)
        return node_label(n) if n is not None else f"n{s.node}"

    def lines(self, d: Detection, term: Callable[[Any], str],
              time: Callable[[Any], str], answer: bool = True) -> list[str]:
        """The tree as indented lines; of an answer (``answer``: the answer
        is shown already), from its rule's steps down."""
        return tree_lines(self.tree(d.why if answer else d, term, time))

    # -- JSON -------------------------------------------------------------------
    def as_json(self, w: Why, term_json: Callable[[Any], Any],
                time_json: Callable[[Any], Any]) -> dict[str, Any]:
        """The whole tree, nothing collapsed: ``{"detection": …}``,
        ``{"step": node, …, "children": […]}``, ``{"received": …}``,
        ``{"alarm": …}``, ``{"unknown": node, …}`` (docs/CLI.md)."""
        def times(a: Any, b: Any) -> dict[str, Any]:
            return {"start": time_json(a), "end": time_json(b)}

        def event(e: Any) -> Any:
            ev = self.event_terms(e)
            if ev is not None:
                return {"s": term_json(ev[0]), "p": term_json(ev[1]), "o": term_json(ev[2])}
            return {"event": term_json(e)}

        if isinstance(w, Detection):
            b = self.answer_bindings(w)
            what = ({"bindings": {k[1:]: term_json(v) for k, v in b}} if b is not None
                    else event(w.event))
            return {"detection": what, **times(w.start, w.end), "by": self.whose(w),
                    "rule": w.rule, "why": self.as_json(w.why, term_json, time_json)}
        if isinstance(w, Received):
            return {"received": event(w.event), **times(w.start, w.end)}
        if isinstance(w, Alarm):
            return {"alarm": self.as_json(w.why, term_json, time_json)}
        if isinstance(w, Unknown):
            return {"unknown": w.node, **times(w.start, w.end)}
        n = self.graph.nodes.get(w.node)
        return {"step": w.node, "kind": node_label(n).split(" ", 1)[1] if n else None,
                **times(w.start, w.end),
                "bindings": {k.lstrip("?"): term_json(v) for k, v in self.bindings(w)},
                "implements": [o.as_json() for o in self.origins.of(w.node)[0]],
                "children": [self.as_json(c, term_json, time_json) for c in w.children]}
