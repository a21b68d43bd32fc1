"""The binarised rule graph of a core engine, as data.

``prolog/core_compile.pl`` binarises every rule into steps (nodes), one
per sub-pattern, shared between rules where patterns are variants.  The
bridge (``py_rule_graph/2`` in ``prolog/bridge_python.pl``) hands the graph
over as terms; this module reads them:

- a :class:`Node` has its pattern as a term in which a variable is a
  :class:`Var` (its place among the node's variables, the arguments of the
  node's occurrence predicate) and a sub-term that is a child node's
  pattern is a :class:`Child`; plus its window, policy, children and the
  stores of partial matches it keeps (:class:`Store`, with the place of
  the variable each goal argument holds);
- a :class:`Rule` has its head as a term over its root node's variables;
- a node's ``origins`` are what the rules that made it say it implements
  (the ``'$origin'(Origin, Pattern)`` annotations of their text; for an
  EP-SPARQL query ``Head-Number``, a numbered element of its algebra, see
  :mod:`epsparql.algebra.elements`); :meth:`RuleGraph.origins_of` finds
  them for a node made from unannotated text inside an annotated one.

Other terms are as :func:`epsparql.core.terms.from_json` gives them
(:class:`~epsparql.core.terms.Compound`, ``str`` atoms, numbers,
:class:`~epsparql.core.terms.PlString`, lists).  Tools that explain the
compiled queries (``epsparql explain``, the trace, the engine's error
reports) read this instead of parsing printed Prolog.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

from .terms import Compound

__all__ = ["Var", "Child", "Store", "Node", "Rule", "RuleGraph", "subterms", "variables",
           "var_name"]


@dataclass(frozen=True)
class Var:
    """A variable of a node's pattern: its place among the node's variables
    (None: a head variable no pattern binds)."""

    index: int | None


@dataclass(frozen=True)
class Child:
    """A sub-term of a node's pattern that is the pattern of child ``node``;
    its variables are the parent's: ``vars`` are their places, in the
    child's own order (the term is written only a few levels deep: the
    child's node has all of it)."""

    node: int
    term: Any
    vars: tuple[int | None, ...] | None = None


@dataclass
class Store:
    """A store of partial matches ("goals"): ``side`` is ``l``/``r`` (the
    left or right operand of a join step), ``n`` (the negated pattern of
    ``cnot``) or ``a`` (an aggregate: Group, T1, T2, Value); ``args`` are
    the places of the node's variables a goal holds before its interval
    (the join variables first)."""

    name: str
    node: int
    side: str
    args: list[int | None]
    window: float
    goals: int


@dataclass
class Node:
    """A step of the rule graph."""

    id: int
    text: str                     # the pattern as Prolog prints it
    term: Any                     # the pattern as data (Var, Child, Compound, ...)
    vars: int                     # how many variables it has (its occurrence arguments)
    window: float                 # seconds; math.inf for none
    policy: str
    children: list[int]
    stores: list[Store] = field(default_factory=list)
    origins: list[Any] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """The functor of the pattern (``seq``, ``where``, ``within``, ``triple``, …)."""
        return functor(self.term)

    @property
    def step(self) -> Any:
        """The pattern with a condition fused into a join taken off:
        ``where(seq(L, R), C)`` is the ``seq`` step."""
        t = self.term
        if functor(t) == "where" and isinstance(t.args[0], Compound) \
                and t.args[0].name in BINARY_OPS:
            return t.args[0]
        return t

    @property
    def op(self) -> str:
        """The functor of :attr:`step`."""
        return functor(self.step)

    def operands(self) -> list[Any]:
        """The operands of a join step (left, right; pattern, negated pattern
        for ``cnot``), else []."""
        s = self.step
        if isinstance(s, Compound) and s.name in JOIN_OPS and len(s.args) >= 2:
            return [s.args[0], s.args[1]]
        return []

    def join_vars(self) -> list[int] | None:
        """The variables both operands share (left operand's order), or None
        when the node is no join."""
        ops = self.operands()
        if not ops:
            return None
        right = set(variables(ops[1]))
        return [v for v in variables(ops[0]) if v in right]


@dataclass
class Rule:
    """A rule: its head (over the root's variables) and its root node."""

    text: str
    head: Any
    node: int

    @property
    def name(self) -> str:
        """The head's name (an atom head is its own name)."""
        return self.head if isinstance(self.head, str) else functor(self.head)


#: Binary operators of the rule language (docs/CORE.md).
BINARY_OPS = ("seq", "and", "par", "equals", "meets", "during", "starts", "finishes")
#: Steps that join two operands and store partial matches.
JOIN_OPS = BINARY_OPS + ("optseq", "eqopt", "leftjoin", "cnot")


class RuleGraph:
    """The rule graph of a core engine (``RuleGraph.of(core)``)."""

    def __init__(self, nodes: dict[int, Node], rules: list[Rule], stores: list[Store]) -> None:
        self.nodes = nodes
        self.rules = rules
        self.stores = stores

    @classmethod
    def of(cls, core: Any) -> "RuleGraph":
        """The graph of a :class:`~epsparql.core.CoreEngine` now (one crossing)."""
        return cls.from_reply(core.rule_graph())

    @classmethod
    def from_reply(cls, reply: dict) -> "RuleGraph":
        """Read ``CoreEngine.rule_graph()``'s reply."""
        nodes = {n["id"]: Node(n["id"], n["pattern"], _read(n["term"]), n["vars"],
                               _seconds(n["window"]), n["policy"], list(n["children"]),
                               origins=list(n.get("origins", ())))
                 for n in reply.get("nodes", [])}
        stores = [Store(s["name"], s["node"], s["side"], list(s["args"]), _seconds(s["window"]),
                        s["goals"]) for s in reply.get("stores", [])]
        for s in stores:
            if s.node in nodes:
                nodes[s.node].stores.append(s)
        rules = [Rule(r["head"], _read(r["term"]), r["node"]) for r in reply.get("rules", [])]
        return cls(nodes, rules, stores)

    def topological(self) -> list[int]:
        """Node ids, every parent before its children."""
        indeg = {n: 0 for n in self.nodes}
        for n in self.nodes.values():
            for c in n.children:
                if c in indeg:
                    indeg[c] += 1
        ready = sorted(n for n, d in indeg.items() if d == 0)
        out = []
        while ready:
            n = ready.pop(0)
            out.append(n)
            for c in self.nodes[n].children:
                if c in indeg:
                    indeg[c] -= 1
                    if indeg[c] == 0:
                        ready.append(c)
        out.extend(n for n in self.nodes if n not in out)       # a cycle: should not happen
        return out

    def below(self, roots: Any) -> set[int]:
        """The nodes reachable from ``roots`` (themselves included)."""
        seen: set[int] = set()
        todo = list(roots)
        while todo:
            n = todo.pop()
            if n in seen or n not in self.nodes:
                continue
            seen.add(n)
            todo.extend(self.nodes[n].children)
        return seen

    def parents(self) -> dict[int, list[int]]:
        """Each node's parents (the nodes that have it as a child)."""
        out: dict[int, list[int]] = {n: [] for n in self.nodes}
        for n in self.nodes.values():
            for c in n.children:
                if c in out and n.id not in out[c]:
                    out[c].append(n.id)
        return out

    def origins_of(self, node: int, parents: dict[int, list[int]] | None = None
                   ) -> tuple[list[Any], bool]:
        """What ``node`` implements: its own origins, or else those of the
        nearest annotated nodes above it (``True`` then: it is part of
        them, a step the text of one element made several of)."""
        if self.nodes[node].origins:
            return list(self.nodes[node].origins), False
        parents = self.parents() if parents is None else parents
        out: list[Any] = []
        seen = {node}
        todo = list(parents.get(node, ()))
        while todo:
            p = todo.pop(0)
            if p in seen:
                continue
            seen.add(p)
            if self.nodes[p].origins:
                out.extend(o for o in self.nodes[p].origins if o not in out)
            else:
                todo.extend(parents.get(p, ()))
        return out, True

    def rules_above(self, node: int) -> list[Rule]:
        """The rules whose body reaches ``node``."""
        return [r for r in self.rules if node in self.below([r.node])]

    def part(self, rules: list[Rule]) -> "RuleGraph":
        """The sub-graph of ``rules``: their nodes (shared ones included) and
        the stores of those nodes."""
        keep = self.below(r.node for r in rules)
        return RuleGraph({i: n for i, n in self.nodes.items() if i in keep}, list(rules),
                         [s for s in self.stores if s.node in keep])

    def rules_of_head(self, head: str) -> list[Rule]:
        """The rules that answer the event ``head`` or turn its answers into
        stream triples (a CONSTRUCT query's ``triple(...) <- head(...)``)."""
        return [r for r in self.rules if r.name == head or any(
            isinstance(t, Compound) and t.name == head for t in subterms(self.nodes[r.node].term))
            ] if head else []

    @property
    def largest_window(self) -> float:
        """The longest window of a store (inf: unbounded; 0: no store)."""
        return max((s.window for s in self.stores), default=0.0)


def functor(t: Any) -> str:
    """The name of a compound (of a :class:`Child`'s term); ``""`` otherwise."""
    if isinstance(t, Child):
        t = t.term
    return t.name if isinstance(t, Compound) else ""


def subterms(t: Any) -> Iterator[Any]:
    """``t`` and every term inside it, depth first, left to right (a
    :class:`Child` and then its term)."""
    stack = [t]                  # iterative: conditions can be nested deeply
    while stack:
        t = stack.pop()
        yield t
        if isinstance(t, Child):
            stack.append(t.term)
        elif isinstance(t, Compound):
            stack.extend(reversed(t.args))
        elif isinstance(t, list):
            stack.extend(reversed(t))


def variables(t: Any) -> list[int]:
    """The places of the variables in ``t``, in order of first occurrence
    (term_variables/2 order: a child's variables in its own order)."""
    out: list[int] = []
    seen: set[int] = set()
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            if x.index is not None and x.index not in seen:
                seen.add(x.index)
                out.append(x.index)
        elif isinstance(x, Child):
            if x.vars is not None:        # all of them, also below where the term is cut
                for v in x.vars:
                    if v is not None and v not in seen:
                        seen.add(v)
                        out.append(v)
            else:
                stack.append(x.term)
        elif isinstance(x, Compound):
            stack.extend(reversed(x.args))
        elif isinstance(x, list):
            stack.extend(reversed(x))
    return out


def var_name(i: int) -> str:
    """A variable's name as Prolog prints numbered variables: A … Z, A1 …"""
    return chr(65 + i % 26) + (str(i // 26) if i >= 26 else "")


def _read(x: Any) -> Any:
    if isinstance(x, dict):
        if "v" in x and len(x) == 1:
            return Var(x["v"])
        if "node" in x and "term" in x:
            vs = x.get("vars")
            return Child(x["node"], _read(x["term"]), None if vs is None else tuple(vs))
        return x
    if isinstance(x, Compound):
        return Compound(x.name, tuple(_read(a) for a in x.args))
    if isinstance(x, list):
        return [_read(a) for a in x]
    return x


def _seconds(w: Any) -> float:
    return float(w) if isinstance(w, (int, float)) else math.inf
