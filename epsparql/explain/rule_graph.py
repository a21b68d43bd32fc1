"""The binarised rule graph of the queries, explained.

:func:`analyse_rule_graph` reads ``CoreEngine.rule_graph()`` (nodes with
their Prolog pattern, window and children; rules with their root node)
and finds for every node its kind, the variables it joins on and, where
it can be traced back to a query, the query variables its Prolog
variables carry; :func:`rule_graph_tree` turns that into trees to print
or draw.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..rdf.prefixes import Prefixes
from .tree import TreeNode, clip, duration_text

__all__ = ["GraphNode", "analyse_rule_graph", "rule_graph_tree", "var_label", "topological",
           "PlTerm", "parse_pl_term", "shape", "span", "var_tokens", "IRI_ATOM"]

_PL_TOKEN = re.compile(r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|0'(?:\\.|''|.)"""
                       r"""|(?<![A-Za-z0-9_])([A-Z_][A-Za-z0-9_]*)""")
_FUNCTOR_RE = re.compile(r"([a-z][A-Za-z0-9_]*)\(")
IRI_ATOM = re.compile(r"'((?:https?|urn|file|mailto|tag):[^']*)'")
_BINARY_OPS = ("seq", "and", "par", "equals", "meets", "during", "starts", "finishes")
_JOIN_OPS = _BINARY_OPS + ("optseq", "eqopt", "leftjoin", "cnot")


def var_tokens(text: str, start: int = 0, end: int | None = None) -> list[str]:
    """The variable tokens of Prolog text, in order (quoted text skipped)."""
    end = len(text) if end is None else end
    return [m.group(1) for m in _PL_TOKEN.finditer(text, start, end) if m.group(1)]


def _close_paren(text: str, i: int) -> int:
    """Index of the bracket closing the one at ``i`` (quotes respected)."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            m = _PL_TOKEN.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c == "0" and text.startswith("0'", i):
            m = _PL_TOKEN.match(text, i)
            i = m.end() if m else i + 2
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_args(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, depth, i, s = [], 0, start, start
    while i < end:
        c = text[i]
        if c in "'\"" or (c == "0" and text.startswith("0'", i)):
            m = _PL_TOKEN.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((s, i))
            s = i + 1
        i += 1
    spans.append((s, end))
    return spans


@dataclass
class PlTerm:
    functor: str
    start: int
    end: int
    args: list[Any]               # PlTerm or (start, end) spans of other text


def parse_pl_term(text: str, start: int = 0, end: int | None = None) -> PlTerm | None:
    end = len(text) if end is None else end
    m = _FUNCTOR_RE.match(text, start, end)
    if m is None:
        return None
    op = m.end() - 1
    close = _close_paren(text, op)
    if close != end - 1:
        return None
    args: list[Any] = []
    for s, e in _split_args(text, op + 1, close):
        t = parse_pl_term(text, s, e)
        args.append(t if t is not None else (s, e))
    return PlTerm(m.group(1), start, end, args)


def shape(text: str, start: int = 0, end: int | None = None) -> str:
    """Text with variables renamed canonically (singletons as ``_``)."""
    end = len(text) if end is None else end
    counts: dict[str, int] = {}
    for v in var_tokens(text, start, end):
        counts[v] = counts.get(v, 0) + 1
    names: dict[str, str] = {}

    def rename(m: re.Match) -> str:
        v = m.group(1)
        if not v:
            return m.group(0)
        if v == "_" or counts.get(v, 0) < 2:
            return "_"
        if v not in names:
            names[v] = f"V{len(names)}"
        return names[v]

    return _PL_TOKEN.sub(rename, text[start:end])


def span(a: Any) -> tuple[int, int]:
    return (a.start, a.end) if isinstance(a, PlTerm) else a


@dataclass
class GraphNode:
    id: int
    pattern: str
    kind: str                      # the pattern's functor
    op: str                        # the functor under where/within/span wrappers
    window: Any
    children: list[int]
    keys: list[str] | None         # variables shared by the two operands (joins only)
    iris: list[str]
    names: dict[str, set[str]] = field(default_factory=dict)
    stores: list[dict] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)


def analyse_rule_graph(graph: dict, queries: Sequence[Any] = ()) -> dict[int, GraphNode]:
    """Nodes of ``engine.core.rule_graph()`` with their kind, join keys and,
    where they can be traced back to a query, variable names."""
    nodes: dict[int, GraphNode] = {}
    trees: dict[int, PlTerm | None] = {}
    for n in graph.get("nodes", []):
        text = n["pattern"]
        tree = parse_pl_term(text)
        trees[n["id"]] = tree
        kind = tree.functor if tree else text.split("(", 1)[0]
        t = tree
        if t is not None and t.functor == "where" and t.args and isinstance(t.args[0], PlTerm) \
                and t.args[0].functor in _BINARY_OPS:
            t = t.args[0]          # where(binary(L, R), Cond): one join node
        op = t.functor if t is not None else kind
        keys: list[str] | None = None
        if t is not None and op in _JOIN_OPS and len(t.args) >= 2:
            left = var_tokens(text, *span(t.args[0]))
            right = set(var_tokens(text, *span(t.args[1])))
            keys = [v for v in dict.fromkeys(left) if v in right and v != "_"]
        iris = list(dict.fromkeys(IRI_ATOM.findall(text)))
        nodes[n["id"]] = GraphNode(n["id"], text, kind, op, n.get("window"),
                                   list(n.get("children", [])), keys, iris)
    for s in graph.get("stores", []):
        if s.get("node") in nodes:
            nodes[s["node"]].stores.append(s)

    # names: from each query's rule text to its root node, then down the edges
    clauses = []                   # (query, head functor, body, {head var: name})
    for q in queries:
        comp = getattr(q, "compiled", None)
        if comp is None:
            continue
        var_names: dict[str, str] = {}
        for clause in re.split(r"\.[ \t]*(?:\n|$)", comp.rules):
            if "<-" not in clause:
                continue
            head_text, body = clause.split("<-", 1)
            functor = head_text.strip().split("(", 1)[0]
            if functor == comp.head:
                args = var_tokens(head_text)
                if len(args) == len(comp.variables):
                    var_names = dict(zip(args, comp.variables))
            clauses.append((q, functor, body, var_names))
    for r in graph.get("rules", []):
        head = r["head"].split("(", 1)[0]
        root = nodes.get(r["node"])
        if root is None:
            continue
        node_vars = var_tokens(root.pattern)
        node_iris = set(IRI_ATOM.findall(root.pattern))
        for q, functor, body, var_names in clauses:
            rule_vars = var_tokens(body)
            if functor != head or len(rule_vars) != len(node_vars) \
                    or set(IRI_ATOM.findall(body)) != node_iris:
                continue
            root.rules.append(q.name if functor == q.compiled.head
                              else f"{q.name}, its triples into the stream")
            for rv, nv in zip(rule_vars, node_vars):
                name = var_names.get(rv)
                if name is not None and nv != "_" and not name.startswith("_:"):
                    root.names.setdefault(nv, set()).add(name)
            break

    # propagate down in topological order (parents before children)
    order = topological(nodes)
    for nid in order:
        parent = nodes[nid]
        tree = trees.get(nid)
        if tree is None or not parent.children:
            continue
        shapes = {c: shape(nodes[c].pattern) for c in parent.children if c in nodes}
        for c, s, e in _child_occurrences(parent.pattern, tree, shapes):
            child = nodes[c]
            for cv, pv in zip(var_tokens(child.pattern), var_tokens(parent.pattern, s, e)):
                if cv != "_" and pv in parent.names:
                    child.names.setdefault(cv, set()).update(parent.names[pv])
    return nodes


def _child_occurrences(text: str, tree: PlTerm, shapes: dict[int, str]):
    """(child id, start, end) for the maximal subterms of ``tree`` whose
    shape is a child's."""
    stack = [a for a in reversed(tree.args) if isinstance(a, PlTerm)]
    while stack:
        t = stack.pop()
        sh = shape(text, t.start, t.end)
        hit = [c for c, s in shapes.items() if s == sh]
        if hit:
            for c in hit:
                yield c, t.start, t.end
            continue
        stack.extend(a for a in reversed(t.args) if isinstance(a, PlTerm))


def topological(nodes: dict[int, GraphNode]) -> list[int]:
    indeg = {n: 0 for n in nodes}
    for n in nodes.values():
        for c in n.children:
            if c in indeg:
                indeg[c] += 1
    ready = sorted(n for n, d in indeg.items() if d == 0)
    out = []
    while ready:
        n = ready.pop(0)
        out.append(n)
        for c in nodes[n].children:
            if c in indeg:
                indeg[c] -= 1
                if indeg[c] == 0:
                    ready.append(c)
    out.extend(n for n in nodes if n not in out)       # a cycle: should not happen
    return out


def var_label(node: GraphNode, v: str) -> str:
    names = sorted(node.names.get(v, ()))
    return "|".join("?" + n for n in names) if names else v


def _node_label(n: GraphNode) -> str:
    kind = n.kind if n.op == n.kind else f"{n.kind}({n.op})"
    return f"n{n.id} {kind}"


def _node_details(n: GraphNode, prefixes: Prefixes) -> list[str]:
    d = []
    if n.keys:
        d.append("join on " + ", ".join(var_label(n, k) for k in n.keys))
    elif n.keys is not None:
        d.append("join on nothing (time condition only)" if n.op != "cnot" else "no shared variables")
    if n.op in _JOIN_OPS and len(n.children) == 1:
        d.append(f"both operands are n{n.children[0]}")
    leaf = parse_pl_term(n.pattern)
    if leaf is not None and leaf.functor == "where" and leaf.args and isinstance(leaf.args[0], PlTerm):
        leaf = leaf.args[0]
    if leaf is not None and leaf.functor == "triple" and len(leaf.args) == 3:
        parts = []
        for a in leaf.args:
            s, e = span(a)
            txt = n.pattern[s:e].strip()
            if re.fullmatch(r"[A-Z_][A-Za-z0-9_]*", txt):
                parts.append(var_label(n, txt))
            elif txt.startswith("'") and txt.endswith("'"):
                parts.append(prefixes.iri(txt[1:-1]))
            else:
                parts.append(clip(txt, 30))
        d.append("triple " + " ".join(parts))
        iris = [i for i in n.iris if "XMLSchema#" not in i and i not in n.pattern[leaf.start:leaf.end]]
        if n.kind == "where" and iris:
            d.append("predicate " + ", ".join(prefixes.iri(i) for i in iris)
                     + " (or a subproperty)")
    tree = parse_pl_term(n.pattern)
    if tree is not None and leaf is not None and leaf.functor != "triple":
        if n.kind == "where" and len(tree.args) == 2:
            s, e = span(tree.args[1])
            cond = n.pattern[s:e]
            inner = set(var_tokens(n.pattern, *span(tree.args[0])))
            named = [v for v in dict.fromkeys(var_tokens(cond)) if v in inner and n.names.get(v)]
            if named:
                d.append("condition on " + ", ".join(var_label(n, v) for v in named))
            elif "GETDURATION" in cond or "GETSTARTTIME" in cond or "GETENDTIME" in cond:
                d.append("condition on the interval")
            elif "construct_valid_triple" in cond:
                d.append("condition: a valid RDF triple")
            else:
                d.append("condition")
        elif n.kind == "within" and len(tree.args) == 2:
            s, e = span(tree.args[1])
            try:
                d.append(f"duration <= {duration_text(float(n.pattern[s:e]))}")
            except ValueError:
                pass
        elif n.kind == "span":
            d.append("binds the interval")
        elif n.kind in ("optseq", "eqopt", "leftjoin"):
            d.append({"optseq": "left optional, ending before right starts",
                      "eqopt": "right optional, over the same interval",
                      "leftjoin": "right optional, ending no later"}[n.kind])
        elif n.kind == "or":
            d.append("either side")
    if n.window not in (None, "inf"):
        d.append(f"window {duration_text(n.window)}")
    for s in n.stores:
        d.append(f"store {s['name']}: {s['goals']} goals")
    return d


def rule_graph_tree(nodes: dict[int, GraphNode], graph: dict,
                    prefixes: Prefixes) -> list[TreeNode]:
    """One TreeNode per rule; a node reached again is a reference."""
    shown: set[int] = set()

    def build(nid: int) -> TreeNode:
        n = nodes[nid]
        if nid in shown:
            return TreeNode(f"n{nid} (shared, shown above)", ref=True)
        shown.add(nid)
        return TreeNode(_node_label(n), _node_details(n, prefixes),
                        [build(c) for c in n.children if c in nodes])

    roots = []
    for r in graph.get("rules", []):
        if r["node"] not in nodes:
            continue
        head = r["head"].split("(", 1)[0]
        names = nodes[r["node"]].rules
        label = f"rule {head}" + (f" -> query {names[0]}" if names else "")
        roots.append(TreeNode(label, [], [build(r["node"])]))
    return roots
