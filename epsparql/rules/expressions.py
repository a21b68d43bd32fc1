"""One compiler of SPARQL expressions into prolog/sparql_eval.pl trees.

Both roads compile a query's expressions (``language/ast.py`` nodes) here:
EP-SPARQL's rules (:mod:`epsparql.rules.from_algebra`) and the windowed
queries of the stream dialects (:mod:`epsparql.rules.window_compile`).
What differs by road is a hook of :class:`ExpressionCompiler`:

* :meth:`~ExpressionCompiler.expr_var`: the Prolog variable of a query
  variable (EP-SPARQL's rule variables; a window's clause variables, a
  fresh one outside a filter's scope);
* :meth:`~ExpressionCompiler.expr_builtin`: the road's own functions
  (EP-SPARQL's getDURATION(), getSTARTTIME(), getENDTIME() read the
  span; the windows' timestamp() reads their content);
* :meth:`~ExpressionCompiler.expr_other`: nodes only one road has
  (a dialect's aggregates and EXISTS).

``ctx`` is the road's own context, passed through to the hooks (the span
variables; a clause, a scope and the goals to run first).  The walk is
iterative (:mod:`epsparql.trampoline`) and refuses expressions deeper
than :data:`MAX_EXPR_DEPTH`, as SWI-Prolog reads and compiles terms
with C recursion.
"""
from __future__ import annotations

from typing import Any, Callable

from rdflib import Literal, URIRef

from ..core.terms import to_prolog
from ..language import ast as A
from ..language.errors import QueryError
from ..trampoline import Walk, run

__all__ = ["ExpressionCompiler", "BINARY_OPS", "UNARY_OPS", "MAX_EXPR_DEPTH"]

BINARY_OPS = {"||": "or", "&&": "and", "=": "eq", "!=": "ne", "<": "lt", ">": "gt",
              "<=": "le", ">=": "ge", "+": "add", "-": "sub", "*": "mul", "/": "div"}
UNARY_OPS = {"!": "not", "-": "neg", "+": "pos"}

#: Deepest expression (operators inside operators, a chain of additions).
#: SWI-Prolog reads, writes and compiles terms with C recursion; embedded
#: in Python a term about 12,000 levels deep overflows the C stack
#: (measured), so this leaves a margin (rules/from_algebra.py:
#: MAX_TERM_DEPTH for a whole rule).
MAX_EXPR_DEPTH = 2000


class ExpressionCompiler:
    """sparql_eval trees of expressions; a road subclasses it and fills
    in the hooks.  It needs ``encode`` (a constant to its engine term) and
    ``is_function`` (is an IRI a registered extension function?)."""

    encode: Callable[[Any], Any]
    is_function: Callable[[str], bool]

    # -- hooks ---------------------------------------------------------------
    def expr_var(self, v: A.Var, ctx: Any) -> str:
        """The Prolog variable holding query variable ``v``."""
        raise NotImplementedError

    def expr_builtin(self, e: A.FunctionCall, name: str, args: list[str],
                     ctx: Any) -> str | None:
        """The tree of a built-in call this road evaluates its own way
        (``args``: its arguments' trees), or None for ``call(NAME, Args)``."""
        return None

    def expr_other(self, e: Any, ctx: Any) -> str:
        """The tree of an expression node the SPARQL grammar of this module
        does not know (a dialect's aggregate, EXISTS)."""
        raise QueryError(f"unsupported expression {e!r}")

    # -- the walk ------------------------------------------------------------
    def tree(self, e: Any, ctx: Any = None) -> str:
        """The sparql_eval tree of ``e``."""
        return run(self.tree_walk(e, ctx))

    def tree_walk(self, e: Any, ctx: Any = None) -> Walk[str]:
        """The tree of ``e`` as a step of a walk, refused past
        :data:`MAX_EXPR_DEPTH` levels."""
        depth = self.__dict__.setdefault("_expr_depth", [])
        pos = getattr(e, "pos", None)
        depth.append(pos or (depth[-1] if depth else None))
        try:
            if len(depth) > MAX_EXPR_DEPTH:
                at = depth[-1]
                raise QueryError(f"this expression is nested or chained more than "
                                 f"{MAX_EXPR_DEPTH:,} operators deep, the limit",
                                 at.line if at else None, at.column if at else None)
            return (yield self._node(e, ctx))
        finally:
            depth.pop()

    def _node(self, e: Any, ctx: Any) -> Walk[str]:
        if isinstance(e, A.Var):
            return f"var({self.expr_var(e, ctx)})"
        if isinstance(e, (URIRef, Literal)):
            return f"const({to_prolog(self.encode(e))})"
        if isinstance(e, A.BinaryOp) and e.op in ("||", "&&"):
            # associative in SPARQL's three-valued logic: a long chain of
            # them becomes a balanced tree, as shallow as its log
            parts = []
            for x in _operands(e, e.op):
                parts.append((yield self.tree_walk(x, ctx)))
            return _balanced_call(BINARY_OPS[e.op], parts)
        if isinstance(e, A.BinaryOp):
            op = BINARY_OPS.get(e.op)
            if op is None:
                raise QueryError(f"unsupported operator {e.op}")
            left = yield self.tree_walk(e.left, ctx)
            right = yield self.tree_walk(e.right, ctx)
            return f"{op}({left}, {right})"
        if isinstance(e, A.UnaryOp):
            return f"{UNARY_OPS[e.op]}({(yield self.tree_walk(e.operand, ctx))})"
        if isinstance(e, (A.In, A.NotIn)):
            head = yield self.tree_walk(e.expr, ctx)
            items = []
            for x in e.values:
                items.append((yield self.tree_walk(x, ctx)))
            return f"{'in' if isinstance(e, A.In) else 'notin'}({head}, [{', '.join(items)}])"
        if isinstance(e, A.FunctionCall):
            args = []
            for a in e.args:
                args.append((yield self.tree_walk(a, ctx)))
            if isinstance(e.name, URIRef):
                iri = str(e.name)
                if not self.is_function(iri):
                    p = e.pos
                    raise QueryError(f"unknown function <{iri}>: register it with "
                                     f"Engine.register_function() before registering the "
                                     f"query", p.line if p else None, p.column if p else None)
                return f"call({to_prolog(iri)}, [{', '.join(args)}])"
            name = e.name.upper()
            own = self.expr_builtin(e, name, args, ctx)
            if own is not None:
                return own
            return f"call({to_prolog(name)}, [{', '.join(args)}])"
        return self.expr_other(e, ctx)


def _operands(e: Any, op: str) -> list[Any]:
    """The operands of a tree of one binary operator, left to right."""
    out: list[Any] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, A.BinaryOp) and x.op == op:
            stack += (x.right, x.left)
        else:
            out.append(x)
    return out


def _balanced_call(functor: str, parts: list[str]) -> str:
    """``functor(functor(a, b), functor(c, d))``: a balanced tree of parts."""
    if len(parts) == 1:
        return parts[0]
    mid = len(parts) // 2
    return (f"{functor}({_balanced_call(functor, parts[:mid])}, "
            f"{_balanced_call(functor, parts[mid:])})")
