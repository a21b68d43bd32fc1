"""The binarised rule graph of the queries, explained.

The graph comes from the core as data (:mod:`epsparql.core.rule_graph`).
:class:`GraphNames` names each node's variables after the query variables
they carry: a query's rule head lists its variables in order
(``CompiledQuery.variables``), and a child's variables are the parent's
at the place where the child's pattern sits in the parent's.
:func:`rule_graph_tree` makes a tree per rule to print or draw.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from ..core.rule_graph import (JOIN_OPS, Child, Node, Rule, RuleGraph, Var, functor, subterms,
                               var_name, variables)
from ..core.terms import Compound
from ..rdf.codec import decode
from ..rdf.prefixes import Prefixes
from .origins import GraphOrigins
from .tree import TreeNode, clip, duration_text

__all__ = ["GraphNames", "rule_graph_tree", "is_iri"]

_IRI = re.compile(r"(?:https?|urn|file|mailto|tag):")
_TEMPORAL = {"GETDURATION", "GETSTARTTIME", "GETENDTIME"}


def is_iri(x: Any) -> bool:
    """Is the constant ``x`` an IRI (an atom with a usual scheme)?"""
    return type(x) is str and _IRI.match(x) is not None


class GraphNames:
    """The query variables each node's variables carry, and the query each
    rule belongs to (``queries``: the engine's :class:`~epsparql.Query`
    objects; rules added as core rules have none)."""

    def __init__(self, graph: RuleGraph, queries: Sequence[Any] = ()) -> None:
        self.graph = graph
        self.names: dict[int, dict[int, set[str]]] = {n: {} for n in graph.nodes}
        #: per rule of ``graph.rules``: "query q" or "query q, its triples into the stream"
        self.rule_labels: list[str | None] = []
        by_head = {q.compiled.head: q for q in queries}
        for rule in graph.rules:
            self.rule_labels.append(self._name_root(rule, by_head))
        for nid in graph.topological():                 # parents before children
            parent = self.names.get(nid)
            if not parent:
                continue
            for t in subterms(graph.nodes[nid].term):
                if isinstance(t, Child) and t.node in self.names:
                    child = self.names[t.node]
                    for cv, pv in enumerate(variables(t)):
                        if pv in parent:
                            child.setdefault(cv, set()).update(parent[pv])

    def _name_root(self, rule: Rule, by_head: dict[str, Any]) -> str | None:
        """Name the root's variables from the query whose answers the rule
        gives, or whose answers it turns into stream triples (a CONSTRUCT
        rule ``triple(...) <- q(...) where ...``)."""
        q = by_head.get(rule.name)
        if q is not None:
            carrier = rule.head
            label = f"query {q.name}"
        else:
            carrier = next((t for t in subterms(self.graph.nodes[rule.node].term)
                            if isinstance(t, Compound) and t.name in by_head), None)
            if carrier is None:
                return None
            q = by_head[carrier.name]
            label = f"query {q.name}, its triples into the stream"
        names = self.names[rule.node]
        for var, arg in zip(q.compiled.variables, getattr(carrier, "args", ())):
            if isinstance(arg, Child):
                arg = arg.term
            if isinstance(arg, Var) and arg.index is not None and not var.startswith("_:"):
                names.setdefault(arg.index, set()).add(var)
        return label

    def label(self, node: int, var: int) -> str:
        """``?x`` (``?x|?y`` for a step two patterns share), or the variable's
        Prolog name when it carries no query variable."""
        names = sorted(self.names.get(node, {}).get(var, ()))
        return "|".join("?" + n for n in names) if names else var_name(var)

    def named(self, node: int, var: int) -> bool:
        return bool(self.names.get(node, {}).get(var))


def _const_text(x: Any, prefixes: Prefixes) -> str:
    if is_iri(x):
        return prefixes.iri(x)
    try:
        node = decode(x)
    except (ValueError, TypeError):
        node = None
    return prefixes.term(node) if node is not None else clip(repr(x), 30)


def node_details(n: Node, names: GraphNames, prefixes: Prefixes) -> list[str]:
    """What a node does, one line each: join, triple, condition, window, stores."""
    d = []
    keys = n.join_vars()
    if keys:
        d.append("join on " + ", ".join(names.label(n.id, k) for k in keys))
    elif keys is not None:
        d.append("join on nothing (time condition only)" if n.op != "cnot"
                 else "no shared variables")
    if n.op in JOIN_OPS and len(n.children) == 1:
        d.append(f"both operands are n{n.children[0]}")
    t = n.term
    leaf = t.args[0] if n.kind == "where" else t
    if isinstance(leaf, Child):
        leaf = leaf.term
    if functor(leaf) == "triple" and len(leaf.args) == 3:
        d.append("triple " + " ".join(names.label(n.id, a.index) if isinstance(a, Var)
                                      else _const_text(a, prefixes) for a in leaf.args))
        if n.kind == "where":
            iris = [x for x in subterms(t.args[1]) if is_iri(x) and "XMLSchema#" not in x]
            if iris:
                d.append("predicate " + ", ".join(prefixes.iri(i) for i in dict.fromkeys(iris))
                         + " (or a subproperty)")
    elif n.kind == "where":
        cond = t.args[1]
        inner = set(variables(t.args[0]))
        named = [v for v in variables(cond) if v in inner and names.named(n.id, v)]
        atoms = {x for x in subterms(cond) if type(x) is str}
        if named:
            d.append("condition on " + ", ".join(names.label(n.id, v) for v in named))
        elif atoms & _TEMPORAL:
            d.append("condition on the interval")
        elif any(functor(x) == "construct_valid_triple" for x in subterms(cond)):
            d.append("condition: a valid RDF triple")
        else:
            d.append("condition")
    elif n.kind == "within" and isinstance(t.args[1], (int, float)):
        d.append(f"duration <= {duration_text(t.args[1])}")
    elif n.kind == "span":
        d.append("binds the interval")
    elif n.kind in ("optseq", "eqopt", "leftjoin"):
        d.append({"optseq": "left optional, ending before right starts",
                  "eqopt": "right optional, over the same interval",
                  "leftjoin": "right optional, ending no later"}[n.kind])
    elif n.kind == "or":
        d.append("either side")
    if n.window != float("inf"):
        d.append(f"window {duration_text(n.window)}")
    for s in n.stores:
        d.append(f"store {s.name}: {s.goals} goals")
    return d


def node_label(n: Node) -> str:
    """``n4 seq``, or ``n4 where(seq)`` for a join with its condition fused."""
    kind = n.kind if n.op == n.kind else f"{n.kind}({n.op})"
    return f"n{n.id} {kind}"


def rule_graph_tree(graph: RuleGraph, names: GraphNames, prefixes: Prefixes,
                    origins: GraphOrigins | None = None) -> list[TreeNode]:
    """One tree per rule; a node reached again is a reference to it.  With
    ``origins``, each node also says which algebra element of which query
    it implements."""
    shown: set[int] = set()

    def build(root: int) -> TreeNode:
        # iterative, depth first, children in order: a rule graph can be
        # thousands of steps deep (a chain of BINDs)
        top = TreeNode("")
        stack: list[tuple[int, TreeNode]] = [(root, top)]
        while stack:
            nid, parent = stack.pop()
            if nid in shown:
                parent.children.append(TreeNode(f"n{nid} (shared, shown above)", ref=True))
                continue
            shown.add(nid)
            n = graph.nodes[nid]
            details = node_details(n, names, prefixes)
            if origins is not None:
                details = origins.lines(nid) + details
            node = TreeNode(node_label(n), details)
            parent.children.append(node)
            stack.extend((c, node) for c in reversed(n.children) if c in graph.nodes)
        return top.children[0]

    roots = []
    for rule, label in zip(graph.rules, names.rule_labels):
        if rule.node not in graph.nodes:
            continue
        roots.append(TreeNode(f"rule {rule.name}" + (f" -> {label}" if label else ""), [],
                              [build(rule.node)]))
    return roots
