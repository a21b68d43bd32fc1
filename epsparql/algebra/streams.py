"""The algebra of windowed continuous queries (the stream dialects).

SPARQL 1.1's algebra (18.2) over an RDF dataset whose graphs are windows
on streams and background graphs, plus the operators of a continuous
query: its windows (stream-to-relation), its report policy and its
relation-to-stream operator (docs/DIALECTS.md).  The pattern nodes
``BGP``, ``Join``, ``Union_``, ``LeftJoin``, ``Filter``, ``Extend`` and
``Empty`` are those of :mod:`.nodes`; what is new here:

- :class:`Quad`: one triple pattern matched over a set of *sources*
  (windows, background graphs), the union of their graphs;
- :class:`Minus`, :class:`Table` (VALUES), :class:`SubSelect`;
- :class:`Relation`: projection, grouping and aggregates, HAVING, ORDER
  BY, DISTINCT, OFFSET/LIMIT over a pattern, one evaluation's result;
- :class:`WindowDef` and :class:`ContinuousQuery`: the windows, the
  policy and the R2S operator around the relation.

:func:`translate` builds it from a :class:`~epsparql.language.dialects.ast.DialectQuery`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from rdflib import URIRef

from ..language import ast as A
from ..language.dialects import ast as D
from ..language.errors import QueryError
from ..trampoline import Walk, run
from .nodes import Empty, Extend, Filter, Join, LeftJoin, Triple, Union_

#: The engine's default background graph (epsparql.engine.BACKGROUND).
DEFAULT_BACKGROUND = "urn:epsparql:background"


@dataclass(frozen=True)
class WindowDef:
    """Window ``index`` of a query over ``stream`` (an IRI; a Var: one
    window per stream, the variable bound to it; None: every stream)."""

    index: int
    stream: Any
    window: D.Window


@dataclass(frozen=True)
class Source:
    """Where a triple pattern looks: ``window`` (an index) or a
    ``background`` graph (an IRI, or a Var ranging over graphs)."""

    kind: str
    ref: Any


@dataclass(frozen=True)
class Quad:
    """A triple pattern over the union of ``sources`` (paths only over
    background graphs)."""

    sources: tuple[Source, ...]
    triple: Triple


@dataclass(frozen=True)
class Minus:
    left: Any
    right: Any


@dataclass(frozen=True)
class Table:
    """VALUES: ``rows`` of RDF terms, None for UNDEF."""

    vars: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class Relation:
    """One evaluation's result: ``pattern`` then grouping/aggregates,
    HAVING, SELECT expressions, ORDER BY, projection, DISTINCT, slice.
    ``projection``: tuple of (expr or None, var name).  ``group_by``:
    tuple of (expr, var name or None); ``grouped``: an aggregate query."""

    pattern: Any
    projection: tuple[tuple[Any, str], ...]
    grouped: bool = False
    group_by: tuple[tuple[Any, str | None], ...] = ()
    having: tuple[Any, ...] = ()
    order_by: tuple[tuple[Any, bool], ...] = ()
    distinct: bool = False
    offset: int = 0
    limit: int | None = None


@dataclass(frozen=True)
class SubSelect:
    relation: Relation


@dataclass(frozen=True)
class ExistsExpr:
    """``EXISTS { pattern }`` (``negated``: NOT EXISTS) inside an
    expression, its group already translated."""

    pattern: Any
    negated: bool = False


@dataclass(frozen=True)
class PerStream:
    """A pattern over a window whose stream is a variable (CQELS ``STREAM
    ?g``): one window per stream, ``var`` bound to the stream's IRI."""

    pattern: Any
    var: str | None


@dataclass(frozen=True)
class ContinuousQuery:
    """A registered windowed query: form, relation, windows, policy, R2S."""

    dialect: str
    form: str
    relation: Relation
    windows: tuple[WindowDef, ...]
    policy: D.Policy
    r2s: str
    template: tuple[Triple, ...] = ()
    name: str | None = None
    output: URIRef | None = None
    source: Any = field(default=None, compare=False)
    #: ``engine`` (each dialect as its reference engine answers) or ``cql``
    #: (the project's CQL reading for every dialect): :data:`WINDOW_SEMANTICS`
    semantics: str = "engine"
    #: the origin t0 of the windows on a grid (:func:`closed_open`) in
    #: seconds, or ``first`` (the first event's time): None is the
    #: dialect's default (windows closing on multiples of their step)
    t0: Fraction | str | None = None
    #: which boundary of a window on a grid is closed: ``co`` [o, c) or ``oc`` (o, c]
    content: str = "oc"
    #: ``time`` (evaluated after every event of one time stamp) or ``tuple``
    tick: str = "time"
    #: the SECRET parameters in force and where each came from (secret.Secret)
    secret: Any = field(default=None, compare=False)

    @property
    def window_t0(self) -> Fraction | str:
        """The t0 in force: the query's, else its dialect's default."""
        if self.t0 == T0_FIRST:
            return T0_FIRST
        return Fraction(self.t0) if self.t0 is not None else DEFAULT_T0.get(self.dialect, Fraction(0))

    @property
    def scope(self) -> str:
        """``from_t0`` (windows k >= 0 only: C-SPARQL's, engine reading) or
        ``grid`` (every integer k)."""
        if self.secret is not None:
            return self.secret.scope
        return "from_t0" if engine_reading(self.semantics) and self.dialect in FROM_T0_DIALECTS \
            else "grid"

    def origin(self, window: D.Window) -> Fraction | str:
        """The t0 of one window on a grid: the query's, else the one that
        closes its windows on multiples of its step (the CQL grid)."""
        if self.t0 is not None:
            return self.window_t0
        return (-Fraction(window.width)) % Fraction(window.step)


def _err(msg: str, node: Any) -> QueryError:
    p = getattr(node, "pos", None)
    return QueryError(msg, p.line if p else None, p.column if p else None)


#: The dialects whose time windows with a step are closed-open under the
#: engine reading, [t0 + k·β, t0 + k·β + ω), reported at their close
#: (docs/DIALECTS.md, "Window semantics"): C-SPARQL as CSRBench's oracle
#: reproduces C-SPARQL 0.9 (WindowOperator, WindowerWindowCloseTest), RSP-QL
#: as YASPER (RSP4J's CSPARQLStreamToRelationOp) and rsp-js open them.
#: Dialects whose windows start at t0 (k ≥ 0: the oracle's first window is
#: [t0, t0 + ω)); the others open windows for every integer k (YASPER's and
#: rsp-js's scope(): a window holding an early event may open before t0).
from .secret import (CLOSED_OPEN_DIALECTS, FROM_T0_DIALECTS, T0_FIRST,  # noqa: E402,F401
                     WINDOW_SEMANTICS, check_semantics, engine_reading)

#: Each dialect's default t0: 0 (the oracle's ``window.firstt0 = 0`` of
#: every CSRBench query; YASPER's ``rsp_engine.t0=ZERO``; rsp-js's
#: ``start_time`` 0).
DEFAULT_T0: dict[str, Fraction] = {"csparql": Fraction(0), "rspql": Fraction(0),
                                   "sparqlstream": Fraction(0)}


def check_t0(t0: Any) -> Fraction | str | None:
    """``t0`` (seconds: a number or its text) as an exact Fraction, ``first``
    and None kept; else ValueError."""
    from .secret import parse_t0
    return parse_t0(t0)


def closed_open(q: "ContinuousQuery", window: D.Window) -> bool:
    """Is this window of ``q`` on a grid from t0, [t0 + k·β, t0 + k·β + ω)
    (or open-closed, ``q.content``), evaluated at its closes?  A time
    window with a step (TUMBLING included) not read on content change,
    in the engine reading of C-SPARQL, SPARQLstream and RSP-QL, or wherever a t0 or
    closed-open content was asked for (the CQL reading's own windows are
    open-closed, closing on multiples of the step)."""
    if window.kind != "range" or window.step is None or content_change(q, window):
        return False
    return q.t0 is not None or q.content == "co"


def content_change(q: "ContinuousQuery", window: D.Window) -> bool:
    """Does this window of ``q`` report on content change (report change,
    CQELS's, in the engine reading): its SLIDE (or TUMBLING) does not delay
    answers, its content at an arrival instant t is t - width < τ <= t, or,
    with content [o,c) (:func:`earliest_open`), the earliest window still
    open at t, cut at t?"""
    return (engine_reading(q.semantics) and q.policy.kind == "eager"
            and window.kind == "range" and window.step is not None)


def earliest_open(q: "ContinuousQuery", window: D.Window) -> bool:
    """Is this window of ``q`` read on content change over the earliest of
    its windows [t0 + k·β, t0 + k·β + ω) still open at each arrival t, cut
    at t: t0 + k·β <= τ <= t (CSRBench's oracle's CQELS,
    ``WindowOperator.getNextWindowScope`` with contentchange)?"""
    return content_change(q, window) and q.content == "co"


class _Scope:
    """Translation state: the query's windows and named graphs."""

    def __init__(self, q: D.DialectQuery, semantics: str = "engine") -> None:
        self.q = q
        self.windows: list[WindowDef] = []
        self.named_windows: dict[str, int] = {}      # GRAPH/WINDOW name -> window
        self.whole_stream: int | None = None         # LUPOSDATE's window on everything
        default: list[Source] = []
        for decl in q.streams:
            i = self.add_window(decl.stream, decl.window)
            if decl.name is None:
                default.append(Source("window", i))
            else:
                self.named_windows[str(decl.name)] = i
        if q.dialect == "sparqlstream" and engine_reading(semantics) and not default:
            # only named stream windows: morph-streams matches their triples
            # with plain patterns (a query with an unnamed one keeps the
            # seed's dataset: docs/DIALECTS.md, SPARQLstream)
            default.extend(Source("window", i) for i in self.named_windows.values())
        if q.dialect == "luposdate":
            # patterns outside every WINDOW TYPE read the whole stream so
            # far; the window is made only if such a pattern exists
            default.append(WHOLE_STREAM)
        graphs = q.graphs or (URIRef(DEFAULT_BACKGROUND),)
        default.extend(Source("background", g) for g in graphs)
        self.default = tuple(default)

    def add_window(self, stream: Any, window: D.Window) -> int:
        i = len(self.windows)
        self.windows.append(WindowDef(i, stream, window))
        return i

    def resolve(self, sources: tuple[Source, ...]) -> tuple[Source, ...]:
        """``sources`` with the whole-stream placeholder made a window."""
        if WHOLE_STREAM not in sources:
            return sources
        if self.whole_stream is None:
            self.whole_stream = self.add_window(None, D.Window("all"))
        return tuple(Source("window", self.whole_stream) if s == WHOLE_STREAM else s
                     for s in sources)


#: LUPOSDATE's default stream source before it is needed (see _Scope.resolve).
WHOLE_STREAM = Source("whole-stream", None)


def translate(q: D.DialectQuery, semantics: "str | Any" = "engine",
              t0: Fraction | str | None = None) -> ContinuousQuery:
    """The algebra of a parsed dialect query, its windows read as
    ``semantics`` says: :data:`WINDOW_SEMANTICS` (then ``t0`` the origin of
    its windows, None: the dialect's default) or a resolved
    :class:`~.secret.Secret` (the query's SECRET parameters)."""
    from .secret import Secret, WindowSettings, resolve
    secret = semantics if isinstance(semantics, Secret) else \
        resolve(q, WindowSettings.of(check_semantics(semantics), t0))
    semantics = secret.semantics.value
    sc = _Scope(q, semantics)
    where = _group(q.where, sc, sc.default)
    if q.values is not None:
        where = _join(where, _table(q.values))
    if q.form == "SELECT":
        # relations as sets (csrbench): DISTINCT rows make ISTREAM's and
        # DSTREAM's bag differences the oracle's set differences
        rel = _relation(q.projection, where, q.modifiers,
                        q.distinct or secret.relation.value == "set", sc)
    elif q.form == "CONSTRUCT":
        names = sorted({x.name for t in q.template for x in (t.s, t.p, t.o) if isinstance(x, A.Var)})
        rel = _relation(tuple(A.Var(n) for n in names), where, q.modifiers,
                        secret.relation.value == "set", sc)
    else:
        rel = Relation(where, (), False, (), (), (), False, 0, 1)
    template = tuple(Triple(t.s, t.p, t.o) for t in q.template)
    return ContinuousQuery(q.dialect, q.form, rel, tuple(sc.windows), secret.report.value.policy(),
                           q.r2s, template, q.name, q.output, source=q, semantics=semantics,
                           t0=secret.t0.value, content=secret.content.value,
                           tick=secret.tick.value, secret=secret)


def in_scope(p: Any) -> set[str]:
    """In-scope variables of a pattern (SPARQL 1.1, 18.2.1)."""
    if isinstance(p, Quad):
        out = {x.name for x in (p.triple.s, p.triple.p, p.triple.o) if isinstance(x, A.Var)}
        for s in p.sources:
            if s.kind == "background" and isinstance(s.ref, A.Var):
                out.add(s.ref.name)
        return out
    if isinstance(p, (Join, Union_, LeftJoin)):
        return in_scope(p.left) | in_scope(p.right)
    if isinstance(p, Minus):
        return in_scope(p.left)
    if isinstance(p, Filter):
        return in_scope(p.pattern)
    if isinstance(p, Extend):
        return in_scope(p.pattern) | {p.var.name}
    if isinstance(p, Table):
        return set(p.vars)
    if isinstance(p, SubSelect):
        return {v for _, v in p.relation.projection}
    if isinstance(p, PerStream):
        return in_scope(p.pattern) | ({p.var} if p.var else set())
    return set()


def _join(a: Any, b: Any) -> Any:
    if isinstance(a, Empty):
        return b
    if isinstance(b, Empty):
        return a
    return Join(a, b)


def _table(v: D.Values) -> Table:
    return Table(tuple(x.name for x in v.vars), v.rows)


def _group(g: A.Group, sc: _Scope, sources: tuple[Source, ...]) -> Any:
    """SPARQL 1.1's translation of a group (18.2.2.6) over ``sources``."""
    acc: Any = Empty()
    filters: list[Any] = []
    for e in g.elements:
        if isinstance(e, A.Filter):
            filters.append(_expr(e.expr, sc, sources))
        elif isinstance(e, A.Optional):
            inner = _group(e.pattern, sc, sources)
            cond = None
            if isinstance(inner, Filter):
                inner, cond = inner.pattern, inner.expr
            acc = LeftJoin(acc, inner, cond)
        elif isinstance(e, A.Minus):
            acc = Minus(acc, _group(e.pattern, sc, sources))
        elif isinstance(e, A.Bind):
            if e.var.name in in_scope(acc):
                raise _err(f"BIND to ?{e.var.name}, which is already in scope", e)
            acc = Extend(acc, e.var, _expr(e.expr, sc, sources))
        elif isinstance(e, A.BGP):
            for t in e.triples:
                acc = _join(acc, Quad(sc.resolve(sources), Triple(t.s, t.p, t.o)))
        elif isinstance(e, A.Group):
            acc = _join(acc, _group(e, sc, sources))
        elif isinstance(e, A.Union):
            acc = _join(acc, _union(e, sc, sources))
        elif isinstance(e, A.Graph):
            acc = _join(acc, _graph(e, sc))
        elif isinstance(e, D.Values):
            acc = _join(acc, _table(e))
        elif isinstance(e, D.SubQuery):
            inner = _group(e.where, sc, sc.default)
            if e.values is not None:
                inner = _join(inner, _table(e.values))
            acc = _join(acc, SubSelect(_relation(e.projection, inner, e.modifiers, e.distinct, sc)))
        elif isinstance(e, D.StreamPattern):
            i = sc.add_window(e.stream, e.window)
            inner = _group(e.pattern, sc, (Source("window", i),))
            var = e.stream.name if isinstance(e.stream, A.Var) else None
            acc = _join(acc, PerStream(inner, var) if var else inner)
        elif isinstance(e, D.WindowPattern):
            acc = _join(acc, _window_graph(e, sc))
        elif isinstance(e, D.WindowedGroup):
            acc = _join(acc, _windowed_group(e, sc, sources))
        else:
            raise _err(f"{type(e).__name__} is not supported in a stream query", e)
    for f in filters:
        acc = Filter(f, acc)
    return acc


def _expr(e: Any, sc: _Scope, sources) -> Any:
    """An expression with its EXISTS groups translated (over ``sources``);
    walked without recursion (a chain of 1,500 additions is as deep)."""
    return run(_expr_walk(e, sc, sources))


def _expr_walk(e: Any, sc: _Scope, sources) -> Walk[Any]:
    if isinstance(e, A.Exists):
        return ExistsExpr(_group(e.pattern, sc, sources), e.negated)
    if isinstance(e, A.BinaryOp) and e.op in ("||", "&&"):
        # a chain of one logical operator (associative in SPARQL's logic
        # with errors) as a balanced tree: a generated FILTER of 2,000
        # alternatives is log-deep for every pass after this one
        operands: list[Any] = []
        stack: list[Any] = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, A.BinaryOp) and x.op == e.op:
                stack += (x.right, x.left)
            else:
                operands.append((yield _expr_walk(x, sc, sources)))
        return _balanced_op(e, operands)
    if isinstance(e, A.BinaryOp):
        left = yield _expr_walk(e.left, sc, sources)
        return replace(e, left=left, right=(yield _expr_walk(e.right, sc, sources)))
    if isinstance(e, A.UnaryOp):
        return replace(e, operand=(yield _expr_walk(e.operand, sc, sources)))
    if isinstance(e, A.FunctionCall):
        args = []
        for a in e.args:
            args.append((yield _expr_walk(a, sc, sources)))
        return replace(e, args=tuple(args))
    if isinstance(e, (A.In, A.NotIn)):
        head = yield _expr_walk(e.expr, sc, sources)
        values = []
        for v in e.values:
            values.append((yield _expr_walk(v, sc, sources)))
        return replace(e, expr=head, values=tuple(values))
    if isinstance(e, D.Aggregate) and e.arg is not None:
        return replace(e, arg=(yield _expr_walk(e.arg, sc, sources)))
    return e


def _balanced_op(e: A.BinaryOp, operands: list[Any]) -> Any:
    if len(operands) == 1:
        return operands[0]
    mid = len(operands) // 2
    return replace(e, left=_balanced_op(e, operands[:mid]), right=_balanced_op(e, operands[mid:]))


def _union(u: A.Union, sc: _Scope, sources) -> Any:
    """A chain of UNIONs (nested either way) as one list of alternatives,
    walked without recursion, then a balanced tree: a generated query's
    UNION of 1,000 branches is log-deep for every pass after this one."""
    alternatives: list[Any] = []
    stack: list[Any] = [u]
    while stack:
        x = stack.pop()
        if isinstance(x, A.Union):
            stack.append(x.right)
            stack.append(x.left)
        else:
            alternatives.append(_group(x, sc, sources))
    return _union_all(alternatives)


def _graph(g: A.Graph, sc: _Scope) -> Any:
    """GRAPH <g>: the window declared under that name, else background g;
    GRAPH ?g: each named window (?g bound to its name) and every
    background graph (?g bound to its IRI)."""
    if isinstance(g.name, A.Var):
        parts = _each_named_window(g.name, g.pattern, sc)
        parts.append(_group(g.pattern, sc, (Source("background", g.name),)))
        return _union_all(parts)
    i = sc.named_windows.get(str(g.name))
    if i is not None:
        return _group(g.pattern, sc, (Source("window", i),))
    return _group(g.pattern, sc, (Source("background", g.name),))


def _each_named_window(var: A.Var, pattern: A.Group, sc: _Scope) -> list[Any]:
    """``pattern`` over each named window, ``var`` bound to its name."""
    return [Join(Table((var.name,), ((URIRef(name),),)), _group(pattern, sc, (Source("window", i),)))
            for name, i in sc.named_windows.items()]


def _union_all(parts: list[Any]) -> Any:
    """The UNION of ``parts`` (in order), as a balanced tree (UNION is
    associative: the same bag of solutions whatever the grouping)."""
    if not parts:
        return Table((), ())                   # no solution
    level = list(parts)
    while len(level) > 1:
        level = [Union_(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    return level[0]


def _window_graph(w: D.WindowPattern, sc: _Scope) -> Any:
    """RSP-QL WINDOW <w>: that window; WINDOW ?w: each named window."""
    if isinstance(w.name, A.Var):
        return _union_all(_each_named_window(w.name, w.pattern, sc))
    i = sc.named_windows.get(str(w.name))
    if i is None:
        raise _err(f"window <{w.name}> is not declared (FROM NAMED WINDOW <{w.name}> ON <stream> [...])", w)
    return _group(w.pattern, sc, (Source("window", i),))


def _windowed_group(w: D.WindowedGroup, sc: _Scope, sources: tuple[Source, ...]) -> Any:
    """A group read through its own window (Streaming SPARQL's innermost
    window, LUPOSDATE's WINDOW TYPE): each stream the group would read
    gets a window of that kind instead; background graphs stay."""
    out: list[Source] = []
    for src in sources:
        if src == WHOLE_STREAM:
            out.append(Source("window", sc.add_window(None, w.window)))
        elif src.kind == "window":
            out.append(Source("window", sc.add_window(sc.windows[src.ref].stream, w.window)))
        else:
            out.append(src)
    if not any(s.kind == "window" for s in out):
        raise _err("this WINDOW has no stream to read: declare one with FROM STREAM <s> "
                   "WINDOW … (a window in GRAPH <g> reads a FROM NAMED STREAM <g>)", w)
    return _group(w.pattern, sc, tuple(out))


def _relation(projection, where, mods: D.Modifiers, distinct: bool, sc: _Scope) -> Relation:
    """SELECT's modifiers around ``where`` (SPARQL 1.1, 18.2.4)."""
    from ..language.dialects.builder import aggregates_in

    def ex(e):
        return _expr(e, sc, sc.default)
    items = () if projection == "*" else projection
    grouped = mods.grouped or bool(mods.having) or any(
        isinstance(i, tuple) and aggregates_in(i[0]) for i in items) or any(
        aggregates_in(e) for e, _ in mods.order_by)
    if projection == "*":
        proj = tuple((None, n) for n in sorted(in_scope(where)))
    else:
        proj = tuple((None, i.name) if isinstance(i, A.Var) else (ex(i[0]), i[1].name) for i in items)
    group_by = []
    for gexpr in mods.group_by:
        if isinstance(gexpr, A.Var):
            group_by.append((gexpr, None))
        else:
            expr, var = gexpr
            group_by.append((ex(expr), var.name if var is not None else None))
    return Relation(where, proj, grouped, tuple(group_by), tuple(ex(h) for h in mods.having),
                    tuple((ex(e), d) for e, d in mods.order_by), distinct, mods.offset, mods.limit)
