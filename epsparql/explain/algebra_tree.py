"""The algebra of a query (after the rewrites) as a tree to print or draw.

One :class:`~.tree.TreeNode` per operator of section 4.2, with the join
variables of every binary operator, conditions and windows; terms and
expressions written as in the query, IRIs abbreviated with its prefixes.
Every operator and triple carries its number (``#5``,
:mod:`epsparql.algebra.elements`): the rule graph says which of them each
of its steps implements.
"""
from __future__ import annotations

from typing import Any

from rdflib.term import BNode, Literal, URIRef

from ..algebra.elements import numbers
from ..algebra.passes import all_vars
from ..rdf.prefixes import Prefixes
from ..times import format_time
from ..trampoline import Walk, run
from .tree import TreeNode, duration_text

__all__ = ["algebra_tree", "term_text", "expr_text"]

_ALG_NAMES = {"Join": "Join", "Union_": "Union", "LeftJoin": "LeftJoin (OPTIONAL)",
              "SeqJoin": "SeqJoin (SEQ)", "EqJoin": "EqJoin (EQUALS)",
              "SeqRightJoin": "SeqRightJoin (OPTIONALSEQ)",
              "EqLeftJoin": "EqLeftJoin (EQUALSOPTIONAL)"}
_TEMPORAL_NAMES = {"GETDURATION": "getDURATION", "GETSTARTTIME": "getSTARTTIME",
                   "GETENDTIME": "getENDTIME"}


def term_text(t: Any, prefixes: Prefixes) -> str:
    """A term, variable or property path of the algebra as query text."""
    kind = type(t).__name__
    if kind == "Var":
        return "?" + t.name
    if isinstance(t, (URIRef, Literal)):
        return prefixes.term(t)
    if isinstance(t, BNode):
        return "_:" + str(t)
    if kind == "PathSeq":
        return "/".join(term_text(x, prefixes) for x in t.parts)
    if kind == "PathAlt":
        return "(" + "|".join(term_text(x, prefixes) for x in t.parts) + ")"
    if kind == "PathInv":
        return "^" + term_text(t.path, prefixes)
    if kind == "PathMod":
        return term_text(t.path, prefixes) + t.mod
    return str(t)


def expr_text(e: Any, prefixes: Prefixes) -> str:
    """An expression of the algebra as query text (fully parenthesised)."""
    return run(_expr_text(e, prefixes))


def _expr_text(e: Any, prefixes: Prefixes) -> Walk[str]:
    # a walker (epsparql/trampoline.py): chains of thousands of && or + nest that deep
    kind = type(e).__name__
    if kind == "BinaryOp":
        left = yield _expr_text(e.left, prefixes)
        right = yield _expr_text(e.right, prefixes)
        return f"({left} {e.op} {right})"
    if kind == "UnaryOp":
        return f"{e.op}{(yield _expr_text(e.operand, prefixes))}"
    if kind == "FunctionCall":
        name = e.name if isinstance(e.name, str) and not hasattr(e.name, "n3") \
            else prefixes.iri(str(e.name))
        name = _TEMPORAL_NAMES.get(name, name)
        args = []
        for a in e.args:
            args.append((yield _expr_text(a, prefixes)))
        return f"{name}({', '.join(args)})"
    if kind in ("In", "NotIn"):
        op = "IN" if kind == "In" else "NOT IN"
        values = []
        for v in e.values:
            values.append((yield _expr_text(v, prefixes)))
        operand = yield _expr_text(e.expr, prefixes)
        return f"({operand} {op} ({', '.join(values)}))"
    if kind in ("Exists", "ExistsExpr"):
        return ("NOT " if e.negated else "") + "EXISTS {…}"
    if kind == "Aggregate":            # the stream dialects' aggregates
        arg = "*" if e.arg is None else (yield _expr_text(e.arg, prefixes))
        sep = f'; SEPARATOR="{e.separator}"' if e.name == "GROUP_CONCAT" and e.separator != " " else ""
        return f"{e.name}({'DISTINCT ' if e.distinct else ''}{arg}{sep})"
    return term_text(e, prefixes)


def _triple_text(t: Any, prefixes: Prefixes) -> str:
    return " ".join(term_text(x, prefixes) for x in (t.s, t.p, t.o))


def algebra_tree(alg: Any, prefixes: Prefixes) -> TreeNode:
    """The algebra of a translated query (after the rewrites) as a TreeNode,
    each operator and triple numbered."""
    number = numbers(alg)

    def no(x: Any) -> str:
        n = number.get(id(x))
        return "" if n is None else f"#{n} "

    # walkers (epsparql/trampoline.py): OPTIONAL and BIND chains nest thousands deep
    def pat(p: Any) -> Walk[TreeNode]:
        node = yield _pat(p)
        node.label = no(p) + node.label
        return node

    def _pat(p: Any) -> Walk[TreeNode]:
        kind = type(p).__name__
        if kind == "BGP":
            n = TreeNode(f"BGP ({len(p.triples)} triple{'s' if len(p.triples) != 1 else ''})")
            n.details = [no(t) + _triple_text(t, prefixes) for t in p.triples]
            return n
        if kind in _ALG_NAMES:
            keys = sorted(all_vars(p.left) & all_vars(p.right))
            n = TreeNode(_ALG_NAMES[kind])
            if kind != "Union_":
                n.details.append("join on " + (", ".join("?" + k for k in keys) if keys
                                               else "nothing (cross product)"))
            if getattr(p, "expr", None) is not None:
                n.details.append("condition " + expr_text(p.expr, prefixes))
            left = yield pat(p.left)
            right = yield pat(p.right)
            n.children = [left, right]
            return n
        if kind == "Filter":
            return TreeNode("Filter", [expr_text(p.expr, prefixes)], [(yield pat(p.pattern))])
        if kind == "Extend":
            return TreeNode("Extend (BIND)", [f"?{p.var.name} := {expr_text(p.expr, prefixes)}"],
                            [(yield pat(p.pattern))])
        if kind == "Window":
            op = "<" if p.strict else "≤"
            return TreeNode(f"Window (duration {op} {duration_text(p.seconds)})",
                            [f"{format_time(p.seconds)} s, bounds every binary step below"],
                            [(yield pat(p.pattern))])
        if kind == "Background":
            return TreeNode(f"Background GRAPH {term_text(p.graph, prefixes)}",
                            [_triple_text(t, prefixes) for t in p.triples])
        if kind == "Empty":
            return TreeNode("Empty {}")
        return TreeNode(kind, [repr(p)[:80]])

    body = run(pat(alg.pattern))
    if alg.form == "SELECT":
        if alg.projection:
            items = []
            for it in alg.projection:
                if isinstance(it, tuple):
                    items.append(f"({expr_text(it[0], prefixes)} AS ?{it[1].name})")
                else:
                    items.append("?" + it.name)
            proj = " ".join(items)
        else:
            proj = "*"
        return TreeNode(f"#0 SELECT{' DISTINCT' if alg.distinct else ''}", [proj], [body])
    if alg.form == "CONSTRUCT":
        return TreeNode("#0 CONSTRUCT", [no(t) + _triple_text(t, prefixes) for t in alg.template],
                        [body])
    return TreeNode(f"#0 {alg.form}", [], [body])
