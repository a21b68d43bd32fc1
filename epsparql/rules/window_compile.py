"""Compile a windowed continuous query into the Prolog of stream_window.pl.

A :class:`~epsparql.algebra.streams.ContinuousQuery` becomes

- one term ``window_query(swq(Qid, Head, Windows, Policy, R2S, Pred))``
  that prolog/stream_window.pl registers (windows, report policy, R2S);
- clauses ``Pred(b(H1, ...), Rows)`` (and one per sub-query) that
  evaluate the query's SPARQL part at one instant, given each window's
  upper time bound Hi, into the result's rows.

The WHERE pattern becomes one Prolog goal whose solutions are the
SPARQL solutions, as a bag (findall/3).  A triple pattern over a window
calls ``stream_window:win_match/8``; over a background graph
``sparql_background:bg_triple/5`` or ``bg_path/5``; over several
sources their union (``distinct/2``: the default graph is a merge).
Join, OPTIONAL and MINUS evaluate their right side with the left side's
bindings when that is SPARQL's bottom-up answer (every in-scope variable
of the right side is bound by each of its solutions); otherwise the right
side runs on renamed variables and the two are then unified (SPARQL's
compatibility is unification).  A group's joins run in the order
rules/join_order.py plans (bound variables first; parts that share no
variable each once, into a list); a triple all of whose positions are
bound by then is tested once (``stream_window:win_holds/7``).
Expressions are sparql_eval.pl trees, written by the compiler
EP-SPARQL's rules use (rules/expressions.py); EXISTS is evaluated first
into a boolean.  Grouping, aggregates, ORDER BY, DISTINCT and slices
are prolog/stream_relation.pl's.

A query whose aggregates can be kept per pane (:func:`pane_plan`: one
triple pattern over one time window) gets instead a clause
``Pred_m(S0, P0, O0, Key, GK, AR)`` giving the match, group key and
aggregate arguments of an arriving triple, maybe ``Pred_b`` for the
background graphs its pattern also reads, and a ``Pred`` that reads the
groups' totals from prolog/stream_panes.pl.  A CONSTRUCT query with an
output stream gets ``Pred_t(Row, Triples)``, its template's triples for
one answer, and a term ``window_output(Qid, Stream, Pred_t)``.

Every constant goes through epsparql.core.terms (quoted, escaped): a
query's data is never Prolog source.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, NamedTuple

from rdflib import BNode, Literal, URIRef

from ..algebra.nodes import Empty, Extend, Filter, Join, LeftJoin, Union_
from ..algebra.streams import (T0_FIRST, ContinuousQuery, ExistsExpr, Minus, PerStream,
                               Quad, Relation, SubSelect, Table, WindowDef, closed_open,
                               content_change, earliest_open, in_scope)
from ..core.terms import to_prolog
from ..language import ast as A
from ..language.dialects import ast as D
from ..language.errors import QueryError
from .expressions import ExpressionCompiler
from .join_order import (JoinPlan, Part, Placed, binds_all, bound_triple, certainly_bound,
                         plan_join)

AGG_OPS = {"COUNT": "count", "SUM": "sum", "AVG": "avg", "MIN": "min", "MAX": "max",
           "SAMPLE": "sample", "GROUP_CONCAT": "group_concat"}


@dataclass
class CompiledWindowQuery:
    """The Prolog text of one windowed query and how to read its rows."""

    qid: int
    head: str
    variables: list[str]            # the names of a row's positions
    text: str                       # clauses + window_query/1, for sw_py_register
    incremental: bool = False       # aggregates kept per pane (stream_panes.pl)


def number(x: Fraction | int) -> str:
    """An exact time as Prolog number text (``3``, ``1r10``)."""
    f = Fraction(x)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}r{f.denominator}"


def template_bnodes(template: Any) -> list[str]:
    """The labels of a CONSTRUCT template's blank nodes, in order of first
    occurrence: each answer of a windowed query carries a fresh blank node
    for each, after its row's values (``window_fresh/2``)."""
    out: list[str] = []
    for t in template:
        for x in (t.s, t.p, t.o):
            if isinstance(x, BNode) and str(x) not in out:
                out.append(str(x))
    return out


class _Clause:
    """Variable naming for one Prolog clause."""

    def __init__(self) -> None:
        self.vars: dict[str, str] = {}
        self.n = 0
        self.named = 0

    def var(self, name: str) -> str:
        v = self.vars.get(name)
        if v is None:
            v = self.vars[name] = f"V{self.named}"
            self.named += 1
        return v

    def fresh(self) -> str:
        self.n += 1
        return f"F{self.n}"


class WindowCompiler(ExpressionCompiler):
    """Writes one query's clauses."""

    def __init__(self, q: ContinuousQuery, qid: int, *, module: str,
                 encode: Callable[[Any], Any], is_function: Callable[[str], bool],
                 reasoning: str, panes: bool = True, reorder: bool = True) -> None:
        self.q = q
        self.reorder = reorder
        self.qid = qid
        self.module = to_prolog(module)
        self.encode = encode
        self.is_function = is_function
        self.reasoning = "rdfs" if reasoning == "rdfs" else "none"
        self.clauses: list[str] = []
        self.subs = 0
        self.windows = {w.index: w for w in q.windows}
        self.var_windows = {w.index for w in q.windows if isinstance(w.stream, A.Var)}
        self.bounds = "b(" + ", ".join(f"H{w.index}" for w in q.windows) + ")" if q.windows else "b"
        #: the aggregates' variables of the relation being written, by structure_key
        self.agg_vars: dict[str, str] = {}
        self.panes = pane_plan(q) if panes else None

    def store(self, i: int) -> str:
        return f"swc{self.qid}_{i}"

    # -- the query -------------------------------------------------------------
    def compile(self) -> CompiledWindowQuery:
        pred = f"swe{self.qid}"
        rel = self.q.relation
        if self.q.form == "ASK":
            c = _Clause()
            where = self.pattern(rel.pattern, c)
            self.clauses.append(f"{pred}({self.bounds}, Rows) :- "
                                f"( \\+ \\+ ({where}) -> Rows = [row(bool(true, \"true\"))] "
                                f"; Rows = [row(bool(false, \"false\"))] ).")
            names = ["ask"]
        elif self.panes is not None:
            names = self.pane_relation(pred, rel, self.panes)
        else:
            names = self.relation(pred, rel)
        head = f"sparql_w{self.qid}"
        windows = "[" + ", ".join(self.window_term(w) for w in self.q.windows) + "]"
        policy = self.policy_term()
        output = ""
        if self.q.form == "CONSTRUCT" and self.q.output is not None:
            self.template_clause(f"{pred}_t", names)
            output = f"window_output({self.qid}, {to_prolog(str(self.q.output))}, {pred}_t).\n"
        fresh = template_bnodes(self.q.template) if self.q.form == "CONSTRUCT" else []
        if fresh:
            # each answer carries fresh blank nodes for the template's (stream_window.pl)
            output += f"window_fresh({self.qid}, {len(fresh)}).\n"
        text = "\n".join(self.clauses) + (
            f"\nwindow_query(swq({self.qid}, {head}, {windows}, {policy}, "
            f"{self.q.r2s}, {pred})).\n") + output
        return CompiledWindowQuery(self.qid, head, names, text, self.panes is not None)

    def template_clause(self, pred: str, names: list[str]) -> None:
        """``pred(Row, Triples)``: the CONSTRUCT template's triples for one
        answer row (ground, '$u' for unbound), fresh blank nodes per
        answer, without the triples RDF does not allow (an unbound
        position, a literal subject, a predicate that is not an IRI)."""
        c = _Clause()
        row = "row(" + ", ".join(c.var(n) for n in names) + ")" if names else "row"
        bnodes: dict[str, str] = {}
        triples = []
        for t in self.q.template:
            parts = []
            for x in (t.s, t.p, t.o):
                if isinstance(x, BNode):
                    if str(x) not in bnodes:
                        bnodes[str(x)] = f"B{len(bnodes)}"
                    parts.append(bnodes[str(x)])
                else:
                    parts.append(self.term(x, c))
            triples.append("t(" + ", ".join(parts) + ")")
        fresh = [f"stream_window:fresh_bnode({b})" for b in bnodes.values()]
        self.clauses.append(
            f"{pred}({row}, Triples) :- "
            + ", ".join([*fresh, f"include(stream_window:rdf_triple, [{', '.join(triples)}], Triples)"])
            + ".")

    def window_term(self, w: WindowDef) -> str:
        win = w.window
        if isinstance(w.stream, A.Var):
            src = "var"
        elif w.stream is None:
            src = "all"
        else:
            src = f"iri({to_prolog(str(w.stream))})"
        step = "none" if win.step is None else number(win.step)
        if earliest_open(self.q, win):
            # CSRBench's oracle's CQELS: at an arrival t, the earliest
            # window [t0 + kβ, t0 + kβ + ω) still open, cut at t
            o = self.q.origin(win)
            t0 = "first" if o == T0_FIRST else number(o)
            kind = f"cc({number(win.width)}, {step}, {t0}, {self.q.scope})"
        elif content_change(self.q, win):
            # CQELS reports on content change: an arrival is in the window
            # at once, whatever its SLIDE (docs/DIALECTS.md, CQELS-QL)
            kind = f"range({number(win.width)}, none)"
        elif closed_open(self.q, win):
            # C-SPARQL, RSP-QL as their engines: [t0 + kβ, t0 + kβ + ω),
            # evaluated at the close (docs/DIALECTS.md, "Window semantics");
            # evaluated between its closes too (another window's, a period):
            # occurrences wait until a close passes them, as for past()
            pending = "none" if self.own_closes_only(win) else f"swp{self.qid}_{w.index}"
            kind = self.closed_open_kind(win)[:-1] + f", {pending})"
        elif win.kind == "range" and win.step is not None and not self.own_instants_only(win.step):
            # evaluated between its steps too: its content is that of its
            # latest step, so occurrences wait until a step passes them
            kind = f"past({number(win.width)}, 0, {step}, swp{self.qid}_{w.index})"
        elif win.kind == "range":
            kind = f"range({number(win.width)}, {step})"
        elif win.kind == "count":
            kind = f"count({win.count})"
        elif win.kind == "past":
            kind = f"past({number(win.width)}, {number(win.delay or 0)}, {step}, swp{self.qid}_{w.index})"
        elif win.kind in ("now", "all"):
            kind = win.kind
        else:
            raise QueryError(f"unknown window kind {win.kind}")
        if self.panes is not None:
            return f"w({self.store(w.index)}, {src}, {kind}, {self.pane_term()})"
        return f"w({self.store(w.index)}, {src}, {kind})"

    def own_closes_only(self, win: D.Window) -> bool:
        """Is every evaluation instant of the query a close of this
        closed-open window (the query's closed-open windows all close
        together)?"""
        if self.q.policy.kind != "close":
            return False
        return self.closed_open_grids() == {self.grid(win)}

    def grid(self, w: D.Window) -> tuple:
        """(step, close mod step, from the first event) of a closed-open window."""
        o = self.q.origin(w)
        first = o == T0_FIRST
        return Fraction(w.step), ((0 if first else o) + Fraction(w.width)) % Fraction(w.step), first

    def closed_open_grids(self) -> set[tuple]:
        """The grids of the query's closed-open windows, found once (a query
        of 1,000 windows asks for each of them)."""
        if not hasattr(self, "_co_grids"):
            self._co_grids = {self.grid(w.window) for w in self.q.windows
                              if closed_open(self.q, w.window)}
        return self._co_grids

    def closed_open_kind(self, win: D.Window) -> str:
        """co(Width, Step, T0, Scope) of a closed-open window (oc(...): an
        open-closed one): T0 a number or first (the first arrival's time),
        Scope from_t0 (windows k >= 0 only, C-SPARQL) or grid (every k)."""
        scope = self.q.scope
        o = self.q.origin(win)
        t0 = "first" if o == T0_FIRST else number(o)
        return f"{self.q.content}({number(win.width)}, {number(win.step)}, {t0}, {scope})"

    # -- per-pane aggregates (prolog/stream_panes.pl) ------------------------------
    def pane_values(self, rel: Relation, aggs: list[D.Aggregate], scope: set[str],
                    c: _Clause) -> tuple[str, str, list[str]]:
        """The group key and aggregate arguments of one match, ground: the
        pattern's variables are all bound, an expression's value is a term
        or '$error', COUNT(*) needs none; a grouping variable the pattern
        does not bind is unbound ('$u')."""
        goals: list[str] = []
        parts: list[str] = []
        for expr, _ in rel.group_by:
            if isinstance(expr, A.Var) and expr.name in scope:
                parts.append(c.var(expr.name))
            elif isinstance(expr, A.Var):
                parts.append("'$u'")
            else:
                x = c.fresh()
                goals.append(self.value(expr, c, x))
                parts.append(x)
        args: list[str] = []
        for a in aggs:
            if a.arg is None:
                args.append("0")
            elif isinstance(a.arg, A.Var) and a.arg.name in scope:
                args.append(c.var(a.arg.name))
            else:
                x = c.fresh()
                goals.append(self.value(a.arg, c, x))
                args.append(x)
        gk = "gk(" + ", ".join(parts) + ")" if parts else "gk"
        ar = "ar(" + ", ".join(args) + ")" if args else "ar"
        return gk, ar, goals

    def pane_names(self) -> str:
        """pn(G, Specs, Store, Pane, Run, Live, Raw, Unf) of the query's window."""
        st = self.store(0)
        specs = "[" + ", ".join(f"agg({'count_star' if a.arg is None else AGG_OPS[a.name]}, false, ' ')"
                                for a in self.panes.aggregates) + "]"
        g = number(self.panes.width)
        if self.panes.origin is not None:
            g = f"at({g}, {number(self.panes.origin)})"
        return f"pn({g}, {specs}, {st}, {st}_p, {st}_r, {st}_l, {st}_w, {st}_u)"

    def pane_term(self) -> str:
        return f"panes({self.pane_names()}, swe{self.qid}_m)"

    def pane_relation(self, pred: str, rel: Relation, plan: "PanePlan") -> list[str]:
        """The clauses of a query kept per pane: ``swm<N>`` gives the
        matches of an arriving triple (with their group keys and aggregate
        arguments), ``swb<N>`` those of the background graphs the pattern
        also reads, and ``pred`` reads the groups' totals."""
        names = [n for _, n in rel.projection]
        aggs = plan.aggregates
        # the match clause
        c = _Clause()
        t = plan.quad.triple
        ts, tp, to = self.term(t.s, c), self.term(t.p, c), self.term(t.o, c)
        scope = in_scope(plan.quad)
        conds = [self.condition(f, scope, c) for f in plan.filters]
        gk, ar, value_goals = self.pane_values(rel, aggs, scope, c)
        self.clauses.append(
            f"swe{self.qid}_m(S0, P0, O0, t({ts}, {tp}, {to}), {gk}, {ar}) :- "
            + ", ".join([f"stream_panes:entails({self.module}, {self.reasoning}, S0, P0, O0, "
                         f"{ts}, {tp}, {to})", *conds, *value_goals]) + ".")
        goals = []
        pn = self.pane_names()
        if plan.backgrounds:
            c2 = _Clause()
            ts2, tp2, to2 = self.term(t.s, c2), self.term(t.p, c2), self.term(t.o, c2)
            alts = " ; ".join(f"sparql_background:bg_triple({self.module}, {to_prolog(str(g))}, "
                              f"{ts2}, {tp2}, {to2})" for g in plan.backgrounds)
            conds2 = [self.condition(f, scope, c2) for f in plan.filters]
            gk2, ar2, value_goals2 = self.pane_values(rel, aggs, scope, c2)
            self.clauses.append(
                f"swe{self.qid}_b(t({ts2}, {tp2}, {to2}), {gk2}, {ar2}) :- "
                f"distinct(t({ts2}, {tp2}, {to2}), ( {alts} )), "
                + ", ".join([*conds2, *value_goals2] or ["true"]) + ".")
            goals.append(f"findall(GKx-ARx, ( swe{self.qid}_b(Kx, GKx, ARx), "
                         f"\\+ stream_panes:pane_in_window({self.module}, {pn}, Kx) ), Extras)")
        else:
            goals.append("Extras = []")
        c3 = _Clause()
        kp3, _, _ = self.group_key(rel, c3)
        goals.append(f"stream_panes:pane_groups({self.module}, {pn}, "
                     f"{'true' if rel.group_by else 'false'}, Extras, Groups)")
        finish = self.per_group(rel, aggs, kp3, ["member(GK0-AV0, Groups)"], c3)
        self.clauses.append(f"{pred}({self.bounds}, Rows) :- " + ", ".join(goals) + ", " + finish)
        direct = direct_map(rel, aggs)
        if direct is not None:
            bg = f"swe{self.qid}_b" if plan.backgrounds else "none"
            self.clauses.append(f"{pred}_direct({'true' if rel.group_by else 'false'}, "
                                f"[{', '.join(direct)}], {bg}).")
        return names

    def own_instants_only(self, step: Fraction) -> bool:
        """Is every evaluation instant of the query a multiple of ``step``?
        (Found once per step: each window of the query asks.)"""
        memo = self.__dict__.setdefault("_own_instants", {})
        if step not in memo:
            memo[step] = self._own_instants_only(step)
        return memo[step]

    def _own_instants_only(self, step: Fraction) -> bool:
        p = self.q.policy
        if p.kind == "period":
            return Fraction(p.period) % step == 0
        if p.kind != "close":
            return False
        for w in self.q.windows:
            ws = w.window
            if not (ws.kind in ("range", "past") and ws.step is not None):
                return False                    # arrival instants
            if Fraction(ws.step) % step != 0:
                return False
        return True

    def policy_term(self) -> str:
        """policy(Steps, ArrivalSources, Every, NonEmpty, Final)."""
        p = self.q.policy
        ws = list(self.q.windows)

        def source(w: WindowDef) -> str:
            if isinstance(w.stream, A.Var):
                return "var"
            if w.stream is None:
                return "all"
            return f"iri({to_prolog(str(w.stream))})"

        def uniq(xs: list[str]) -> str:
            return "[" + ", ".join(dict.fromkeys(xs)) + "]"

        co = [w for w in ws if closed_open(self.q, w.window)]
        if p.kind == "close" and co:
            # closed-open windows (C-SPARQL, RSP-QL as their engines): the
            # query is evaluated at their closes t0 + ω + kβ only (time-driven),
            # over the occurrences before each (its other windows' too)
            steps = [self.closed_open_kind(w.window) for w in co]
            nonempty = "true" if p.non_empty else "false"
            return f"policy({uniq(steps)}, [], none, {nonempty}, false)"
        if p.kind == "close" and ws:
            steps = [number(w.window.step) for w in ws
                     if w.window.kind in ("range", "past") and w.window.step is not None]
            arrivals = [source(w) for w in ws
                        if not (w.window.kind in ("range", "past") and w.window.step is not None)]
            nonempty = "true" if p.non_empty else "false"
            return f"policy({uniq(steps)}, {uniq(arrivals)}, none, {nonempty}, false)"
        nonempty = "true" if p.non_empty else "false"
        if p.kind == "eager" and ws and self.q.tick == "tuple":
            # tuple-driven: evaluated after each event on the query's windows
            return f"policy([], [], 1, {nonempty}, false)"
        if p.kind == "eager" and ws:
            return f"policy([], {uniq([source(w) for w in ws])}, none, {nonempty}, false)"
        if p.kind == "period":
            # C-SPARQL's COMPUTED EVERY reports non-empty windows only (its policy says so)
            return f"policy([{number(p.period)}], [], none, {nonempty}, false)"
        if p.kind == "triples":
            return f"policy([], [], {int(p.count)}, false, false)"
        return "policy([], [], none, false, true)"

    # -- relations ---------------------------------------------------------------
    def relation(self, pred: str, rel: Relation) -> list[str]:
        """Clauses of ``pred(Bounds, Rows)``; the names of a row's positions."""
        c = _Clause()
        where = self.pattern(rel.pattern, c)
        names = [n for _, n in rel.projection]
        dirs = "[" + ", ".join("desc" if d else "asc" for _, d in rel.order_by) + "]"
        slice_ = f"slice({rel.offset}, {'inf' if rel.limit is None else rel.limit})"
        distinct = "true" if rel.distinct else "false"
        if not rel.grouped:
            post = self.selects(rel, c)
            keys, kgoals = self.order_keys(rel, c)
            row = "row(" + ", ".join(c.var(n) for n in names) + ")" if names else "row"
            body = ", ".join(x for x in [where, *post, *kgoals,
                                         f"stream_relation:ground_row({row}, Row)"] if x)
            self.clauses.append(
                f"{pred}({self.bounds}, Rows) :- findall({keys}-Row, ({body}), Keyed), "
                f"stream_relation:finish_rows(Keyed, {dirs}, {distinct}, {slice_}, Rows).")
            return names
        # aggregate query: two phases (see the module docstring)
        aggs = self.collect_aggregates(rel)
        key_parts, key_goals, gk = self.group_key(rel, c)
        arg_goals, ar, specs = self.aggregate_args(rel, aggs, c)
        gkey = c.fresh()
        phase1 = ", ".join(x for x in [where, *key_goals, *arg_goals,
                                       f"stream_relation:ground_row({gk}, {gkey})"] if x)
        access = ["member(GK0-AggRows, Groups)",
                  f"stream_relation:aggregate_values([{', '.join(specs)}], AggRows, AV0)"]
        finish = self.per_group(rel, aggs, key_parts, access, c)
        self.clauses.append(
            f"{pred}({self.bounds}, Rows) :- "
            f"findall({gkey}-{ar}, ({phase1}), Pairs), "
            f"stream_relation:group_rows(Pairs, {'true' if rel.group_by else 'false'}, Groups), "
            f"{finish}")
        return names

    def group_key(self, rel: Relation, c: _Clause) -> tuple[list[str], list[str], str]:
        """The parts of a solution's group key, the goals computing them,
        and the key term ``gk(...)``."""
        key_parts: list[str] = []
        key_goals: list[str] = []
        for expr, name in rel.group_by:
            if isinstance(expr, A.Var):
                key_parts.append(c.var(expr.name))
            else:
                x = c.fresh()
                key_goals.append(self.value(expr, c, x))
                key_parts.append(x)
        gk = "gk(" + ", ".join(key_parts) + ")" if key_parts else "gk"
        return key_parts, key_goals, gk

    def aggregate_args(self, rel: Relation, aggs: list[D.Aggregate], c: _Clause
                       ) -> tuple[list[str], str, list[str]]:
        """Goals computing each aggregate's argument for one solution, the
        term ``ar(...)`` of them, and the aggregates' specs."""
        arg_vals: list[str] = []
        arg_goals: list[str] = []
        specs: list[str] = []
        all_vars = sorted(in_scope(rel.pattern))
        for a in aggs:
            x = c.fresh()
            op = AGG_OPS[a.name]
            if a.arg is None:
                sol = "s(" + ", ".join(c.var(n) for n in all_vars) + ")" if all_vars else "s"
                arg_goals.append(f"stream_relation:ground_row({sol}, {x})")
                op = "count_star"
            else:
                arg_goals.append(self.value(a.arg, c, x))
            arg_vals.append(x)
            specs.append(f"agg({op}, {'true' if a.distinct else 'false'}, {to_prolog(a.separator)})")
        ar = "ar(" + ", ".join(arg_vals) + ")" if arg_vals else "ar"
        return arg_goals, ar, specs

    def per_group(self, rel: Relation, aggs: list[D.Aggregate], key_parts: list[str],
                  access: list[str], c: _Clause) -> str:
        """The goals after grouping: for each group (``access`` binds GK0
        and AV0, its key and aggregate values), HAVING, the SELECT
        expressions, the ORDER BY keys and the row; then ORDER BY,
        DISTINCT and the slice over all rows."""
        names = [n for _, n in rel.projection]
        dirs = "[" + ", ".join("desc" if d else "asc" for _, d in rel.order_by) + "]"
        slice_ = f"slice({rel.offset}, {'inf' if rel.limit is None else rel.limit})"
        distinct = "true" if rel.distinct else "false"
        k2: list[str] = []
        for (expr, name), part in zip(rel.group_by, key_parts):
            if isinstance(expr, A.Var):
                k2.append(part)
            elif name is not None:
                k2.append(c.var(name))
            else:
                k2.append("_")
        gk2 = "gk(" + ", ".join(k2) + ")" if k2 else "gk"
        from ..language.dialects.builder import structure_key
        agg_vars = {structure_key(a): c.fresh() for a in aggs}
        av = "av(" + ", ".join(agg_vars.values()) + ")" if aggs else "av"
        self.agg_vars = agg_vars
        having = [self.condition(h, None, c) for h in rel.having]
        post = self.selects(rel, c)
        keys, kgoals = self.order_keys(rel, c)
        self.agg_vars = {}
        row = "row(" + ", ".join(c.var(n) for n in names) + ")" if names else "row"
        phase2 = ", ".join([
            access[0],
            f"stream_relation:unground(GK0, {gk2})",
            *access[1:],
            f"stream_relation:unground(AV0, {av})",
            *having, *post, *kgoals,
            f"stream_relation:ground_row({row}, Row)"])
        return (f"findall({keys}-Row, ({phase2}), Keyed), "
                f"stream_relation:finish_rows(Keyed, {dirs}, {distinct}, {slice_}, Rows).")

    def collect_aggregates(self, rel: Relation) -> list[D.Aggregate]:
        from ..language.dialects.builder import distinct_aggregates
        return distinct_aggregates([e for e, _ in rel.projection if e is not None]
                                   + list(rel.having) + [e for e, _ in rel.order_by])

    def selects(self, rel: Relation, c: _Clause) -> list[str]:
        goals = []
        for expr, name in rel.projection:
            if expr is None:
                continue
            x = c.fresh()
            goals.append(f"{self.value(expr, c, x)}, "
                         f"( {x} == '$error' -> true ; {c.var(name)} = {x} )")
        return goals

    def order_keys(self, rel: Relation, c: _Clause) -> tuple[str, list[str]]:
        keys, goals = [], []
        for expr, desc in rel.order_by:
            x, k = c.fresh(), c.fresh()
            goals.append(f"{self.value(expr, c, x)}, "
                         f"stream_relation:order_key({'desc' if desc else 'asc'}, {x}, {k})")
            keys.append(k)
        return "[" + ", ".join(keys) + "]", goals

    # -- patterns ----------------------------------------------------------------
    def pattern(self, p: Any, c: _Clause, bound: frozenset[str] = frozenset()) -> str:
        """The goal whose solutions are ``p``'s; ``bound``: variables bound
        by every solution of what runs before it (they order its joins)."""
        if isinstance(p, Empty):
            return "true"
        if isinstance(p, Quad):
            return self.quad(p, c)
        if isinstance(p, PerStream):
            return self.pattern(p.pattern, c, bound)
        plan = plan_join(p, bound) if self.reorder else None
        if plan is not None:
            return self.join_plan(plan, c, bound)
        if isinstance(p, Join):
            left = self.pattern(p.left, c, bound)
            if self.safe(p.right):
                return f"{left}, {self.pattern(p.right, c, bound | certainly_bound(p.left))}"
            right, pairs = self.renamed(p.right, in_scope(p.left), c)
            unify = ", ".join(f"{a} = {b}" for a, b in pairs) or "true"
            return f"{left}, {right}, {unify}"
        if isinstance(p, Union_):
            return f"( {self.pattern(p.left, c, bound)} ; {self.pattern(p.right, c, bound)} )"
        if isinstance(p, LeftJoin):
            left = self.pattern(p.left, c, bound)
            if self.safe(p.right):
                right = self.pattern(p.right, c, bound | certainly_bound(p.left))
            else:
                r, pairs = self.renamed(p.right, in_scope(p.left), c)
                right = ", ".join([r] + [f"{a} = {b}" for a, b in pairs])
            cond = self.condition(p.expr, in_scope(p.left) | in_scope(p.right), c) \
                if p.expr is not None else "true"
            return f"{left}, ( ({right}, {cond}) *-> true ; true )"
        if isinstance(p, Minus):
            left = self.pattern(p.left, c, bound)
            shared = in_scope(p.left) & in_scope(p.right)
            if not shared:
                return left
            r, pairs = self.renamed(p.right, shared, c, rename_all=True)
            lst = "[" + ", ".join(f"{a}-{b}" for a, b in pairs) + "]"
            return f"{left}, \\+ ({r}, stream_relation:minus_compatible({lst}))"
        if isinstance(p, Filter):
            inner = self.pattern(p.pattern, c, bound)
            return f"{inner}, {self.condition(p.expr, in_scope(p.pattern), c)}"
        if isinstance(p, Extend):
            inner = self.pattern(p.pattern, c, bound)
            x = c.fresh()
            goal = self.value(p.expr, c, x, in_scope(p.pattern))
            return (f"{inner}, {goal}, "
                    f"( {x} == '$error' -> true ; {c.var(p.var.name)} = {x} )")
        if isinstance(p, Table):
            rows = []
            for r in p.rows:
                vals = ["_" if v is None else to_prolog(self.encode(v)) for v in r]
                rows.append("row(" + ", ".join(vals) + ")" if vals else "row")
            tpl = "row(" + ", ".join(c.var(n) for n in p.vars) + ")" if p.vars else "row"
            return f"member({tpl}, [{', '.join(rows)}])"
        if isinstance(p, SubSelect):
            self.subs += 1
            pred = f"swe{self.qid}_s{self.subs}"
            names = self.relation(pred, p.relation)
            row = "row(" + ", ".join(c.var(n) for n in names) + ")" if names else "row"
            rows = c.fresh()
            return f"{pred}({self.bounds}, {rows}), stream_relation:member_row({row}, {rows})"
        raise QueryError(f"unsupported pattern {type(p).__name__} in a stream query")

    def join_plan(self, plan: JoinPlan, c: _Clause, bound: frozenset[str]) -> str:
        """The goal of a pure join in the order rules/join_order.py gives:
        one part as a conjunction; several (no variable shared) each
        evaluated once into a list, then their members combined."""
        goals = [self.condition(f.expr, f.scope, c) for f in plan.before]
        if len(plan.parts) == 1:
            goals += self.join_steps(plan.parts[0], c, bound)
        else:
            members = []
            for part in plan.parts:
                body = ", ".join(self.join_steps(part, c, bound)) or "true"
                row = "row(" + ", ".join(c.var(n) for n in part.variables) + ")" \
                    if part.variables else "row"
                rows = c.fresh()
                goals.append(f"findall({row}, ({body}), {rows}), {rows} \\== []")
                members.append(f"member({row}, {rows})")
            goals += members
        goals += [self.condition(f.expr, f.scope, c) for f in plan.after]
        return ", ".join(goals) or "true"

    def join_steps(self, part: Part, c: _Clause, bound: frozenset[str]) -> list[str]:
        """One part's goals: a unit every solution of which binds its
        variables runs under the bindings before it; another on its own,
        its solutions then unified with them (SPARQL's compatibility)."""
        goals: list[str] = []
        known = set(bound)
        for step in part.steps:
            if isinstance(step, Placed):
                goals.append(self.condition(step.expr, step.scope, c))
                continue
            if isinstance(step, Quad) and bound_triple(step, known, self.var_windows):
                goals.append(self.check(step, c))
            elif self.safe(step):
                goals.append(self.pattern(step, c, frozenset(known)))
            else:
                goal, pairs = self.renamed(step, set(c.vars), c)
                goals.append(", ".join([goal] + [f"{a} = {b}" for a, b in pairs]))
            known |= certainly_bound(step)
        return goals

    def check(self, q: Quad, c: _Clause) -> str:
        """The goal of a triple pattern whose positions are bound: true
        once when the triple is in one of its sources (no duplicate check
        to set up, as matching it does)."""
        t = q.triple
        s, p, o = self.term(t.s, c), self.term(t.p, c), self.term(t.o, c)
        alts = []
        for src in q.sources:
            if src.kind == "window":
                alts.append(f"stream_window:win_holds({self.module}, {self.store(src.ref)}, "
                            f"H{src.ref}, {self.reasoning}, {s}, {p}, {o})")
            else:
                g = c.var(src.ref.name) if isinstance(src.ref, A.Var) else to_prolog(str(src.ref))
                alts.append(f"sparql_background:bg_triple({self.module}, {g}, {s}, {p}, {o})")
        return f"once(( {' ; '.join(alts)} ))"

    def safe(self, p: Any) -> bool:
        """Does every solution of ``p`` bind every in-scope variable (so
        that evaluating it under outer bindings is the bottom-up join)?"""
        return binds_all(p)

    def renamed(self, p: Any, outer: set[str], c: _Clause, rename_all: bool = False
                ) -> tuple[str, list[tuple[str, str]]]:
        """``p``'s goal evaluated on its own: its variables shared with
        ``outer`` renamed (all of its variables when ``rename_all``: MINUS's
        right side binds nothing outside); the (outer, renamed) pairs."""
        shared = sorted(in_scope(p) & outer)
        saved = dict(c.vars)
        pairs = [(c.var(n), c.fresh()) for n in shared]
        outer_names = dict(c.vars)
        c.vars = {} if rename_all else dict(outer_names)
        for n, (_, fresh) in zip(shared, pairs):
            c.vars[n] = fresh
        if rename_all:
            # every other variable of p is private: fresh Prolog names
            c.vars.update({k: c.fresh() for k in outer_names if k not in c.vars})
        goal = self.pattern(p, c)
        if rename_all:
            c.vars = saved
        else:
            new = {k: v for k, v in c.vars.items() if k not in saved}
            c.vars = {**saved, **new}
        return goal, pairs

    def quad(self, q: Quad, c: _Clause) -> str:
        t = q.triple
        path = not (isinstance(t.p, (URIRef, A.Var)))
        s, o = self.term(t.s, c), self.term(t.o, c)
        if path and any(src.kind == "window" for src in q.sources):
            # a path over windows (and background graphs): one merged graph
            srcs = []
            for src in q.sources:
                if src.kind == "window":
                    w = self.windows[src.ref]
                    g = c.var(w.stream.name) if isinstance(w.stream, A.Var) else "_"
                    srcs.append(f"win({self.store(src.ref)}, H{src.ref}, {self.reasoning}, {g})")
                else:
                    g = c.var(src.ref.name) if isinstance(src.ref, A.Var) else to_prolog(str(src.ref))
                    srcs.append(f"bg({g})")
            return (f"stream_paths:sw_path({self.module}, [{', '.join(srcs)}], "
                    f"{self.path(t.p)}, {s}, {o})")
        p = None if path else self.term(t.p, c)
        alts = []
        for src in q.sources:
            if src.kind == "window":
                w = self.windows[src.ref]
                g = c.var(w.stream.name) if isinstance(w.stream, A.Var) else "_"
                alts.append(f"stream_window:win_match({self.module}, {self.store(src.ref)}, "
                            f"H{src.ref}, {self.reasoning}, {g}, {s}, {p}, {o})")
            else:
                g = c.var(src.ref.name) if isinstance(src.ref, A.Var) else to_prolog(str(src.ref))
                if path:
                    alts.append(f"sparql_background:bg_path({self.module}, {g}, "
                                f"{self.path(t.p)}, {s}, {o})")
                else:
                    alts.append(f"sparql_background:bg_triple({self.module}, {g}, {s}, {p}, {o})")
        if len(alts) == 1:
            return alts[0]
        tpl = f"t({s}, {o})" if path else f"t({s}, {p}, {o})"
        return f"distinct({tpl}, ( {' ; '.join(alts)} ))"

    def timestamp(self, e: Any, args: list[str], c: _Clause, pre: list[str] | None) -> str:
        """C-SPARQL's timestamp(?s, ?p, ?o) (and timestamp(?x[, <stream>]),
        the tutorial's form): the time of the latest occurrence in the
        query's windows at this instant, as xsd:dateTime."""
        if pre is None:
            raise QueryError("timestamp() is not supported here")
        if len(args) not in (1, 2, 3):
            raise QueryError("timestamp() takes (?s, ?p, ?o), (?x) or (?x, <stream>)")
        x = c.fresh()
        # (a query kept per pane has no timestamp(): pane_plan excludes it)
        wins = "[" + ", ".join(f"s({self.store(w.index)}, H{w.index}, {_window_ref(w)})"
                               for w in self.q.windows) + "]"
        pre.append(f"stream_window:timestamp_value({self.module}, {wins}, [{', '.join(args)}], {x})")
        return f"var({x})"

    def term(self, x: Any, c: _Clause) -> str:
        if isinstance(x, A.Var):
            return c.var(x.name)
        if isinstance(x, BNode):
            return c.var("_:" + str(x))
        if isinstance(x, (URIRef, Literal)):
            return to_prolog(self.encode(x))
        raise QueryError(f"unsupported term {x!r}")

    def path(self, p: Any) -> str:
        if isinstance(p, URIRef):
            return to_prolog(str(p))
        if isinstance(p, A.PathSeq):
            out = self.path(p.parts[0])
            for q in p.parts[1:]:
                out = f"seq({out}, {self.path(q)})"
            return out
        if isinstance(p, A.PathAlt):
            out = self.path(p.parts[0])
            for q in p.parts[1:]:
                out = f"alt({out}, {self.path(q)})"
            return out
        if isinstance(p, A.PathInv):
            return f"inv({self.path(p.path)})"
        if isinstance(p, A.PathMod):
            return f"{ {'*': 'star', '+': 'plus', '?': 'opt'}[p.mod]}({self.path(p.path)})"
        raise QueryError(f"unsupported property path {p!r}")

    # -- expressions -------------------------------------------------------------
    def value(self, e: Any, c: _Clause, out: str, scope: set[str] | None = None) -> str:
        """Goals binding ``out`` to the value of ``e`` ('$error' for an
        error), its EXISTS and timestamp() goals first."""
        pre: list[str] = []
        tree = self.expr(e, c, scope, pre)
        return ", ".join(pre + [f"sparql_eval:sparql_eval({tree}, {out})"])

    def condition(self, e: Any, scope: set[str] | None, c: _Clause) -> str:
        pre: list[str] = []
        tree = self.expr(e, c, scope, pre)
        return ", ".join(pre + [f"sparql_eval:sparql_true({tree})"])

    def expr(self, e: Any, c: _Clause, scope: set[str] | None = None,
             pre: list[str] | None = None) -> str:
        """A sparql_eval tree (rules/expressions.py).  Variables outside
        ``scope`` (when given) are unbound there (SPARQL's filter scoping);
        EXISTS and timestamp() go to ``pre``, goals run before it."""
        return self.tree(e, _Where(c, scope, pre))

    # -- the expression compiler's hooks (rules/expressions.py) ----------------
    def expr_var(self, v: A.Var, at: "_Where") -> str:
        if at.scope is not None and v.name not in at.scope:
            return at.c.fresh()
        return at.c.var(v.name)

    def expr_builtin(self, e: A.FunctionCall, name: str, args: list[str],
                     at: "_Where") -> str | None:
        if name == "TIMESTAMP":
            return self.timestamp(e, args, at.c, at.pre)
        if name in ("GETDURATION", "GETSTARTTIME", "GETENDTIME"):
            p = e.pos
            raise QueryError(f"{e.name}() is EP-SPARQL's, for patterns joined in time; in a "
                             f"windowed query use timestamp(?s, ?p, ?o)",
                             p.line if p else None, p.column if p else None)
        return None

    def expr_other(self, e: Any, at: "_Where") -> str:
        """An aggregate (its value, a variable of the group's row) or EXISTS
        (evaluated first, into a boolean)."""
        if isinstance(e, D.Aggregate):
            from ..language.dialects.builder import structure_key
            v = self.agg_vars.get(structure_key(e))
            if v is None:
                raise QueryError("an aggregate outside SELECT, HAVING or ORDER BY")
            return f"var({v})"
        if isinstance(e, ExistsExpr):
            if at.pre is None:
                raise QueryError("EXISTS is not supported here")
            x = at.c.fresh()
            inner = self.pattern(e.pattern, at.c)
            at.pre.append(f"stream_relation:exists_value(({inner}), {x})")
            return f"not(var({x}))" if e.negated else f"var({x})"
        return super().expr_other(e, at)


class _Where(NamedTuple):
    """Where an expression is compiled: its clause, the variables in scope
    (None: all), the goals to run before it (None: none allowed)."""

    c: _Clause
    scope: set[str] | None
    pre: list[str] | None


@dataclass
class PanePlan:
    """A query whose aggregates are kept per pane (docs/DIALECTS.md,
    "Incremental aggregates"): one triple pattern over one time window
    (plus background graphs), filters and group keys and aggregate
    arguments computable when a triple arrives, invertible or per-pane
    aggregates."""

    quad: Quad
    filters: list[Any]
    backgrounds: list[Any]
    aggregates: list[D.Aggregate]
    width: Fraction                 # the pane width
    #: panes [t0 + (J-1)·width, t0 + J·width) of a closed-open window
    #: (:func:`~epsparql.algebra.streams.closed_open`), else None: ((J-1)·width, J·width]
    origin: Fraction | None = None


#: Functions whose value depends on when they are called, or that make
#: new terms each time: never evaluated ahead, at arrival.
_VOLATILE = {"NOW", "RAND", "UUID", "STRUUID", "BNODE", "TIMESTAMP", "GETDURATION",
             "GETSTARTTIME", "GETENDTIME"}
_PANE_AGGREGATES = {"COUNT", "SUM", "AVG", "MIN", "MAX", "SAMPLE"}


def _arrival_safe(e: Any) -> bool:
    """Can ``e`` be evaluated once, when its triple arrives?  (Iterative:
    an expression may be thousands of operators deep.)"""
    from ..language.dialects.builder import children
    todo = [e]
    while todo:
        x = todo.pop()
        if isinstance(x, (ExistsExpr, D.Aggregate)):
            return False
        if isinstance(x, A.FunctionCall) and isinstance(x.name, str) \
                and x.name.upper() in _VOLATILE:
            return False
        todo.extend(children(x))
    return True


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    a, b = Fraction(a), Fraction(b)
    den = a.denominator * b.denominator // math.gcd(a.denominator, b.denominator)
    return Fraction(math.gcd(int(a * den), int(b * den)), den)


def pane_plan(q: ContinuousQuery) -> PanePlan | None:
    """The per-pane plan of ``q``, or None when it is evaluated by reading
    its windows' contents at each instant."""
    rel = q.relation
    if q.form != "SELECT" or not rel.grouped or len(q.windows) != 1:
        return None
    w = q.windows[0]
    win = w.window
    if isinstance(w.stream, A.Var) or win.kind != "range":
        return None
    p = q.policy
    origin = None
    if closed_open(q, win):
        # evaluated at its closes only (the query's one window): panes from t0
        # (closed-open panes, a t0 known when the query is compiled)
        if p.kind != "close" or q.content != "co" or q.origin(win) == T0_FIRST:
            return None
        lattice, origin = Fraction(win.step), q.origin(win)
    elif p.kind == "close" and win.step is not None:
        lattice = Fraction(win.step)
    elif p.kind == "period" and (win.step is None or Fraction(p.period) % win.step == 0):
        lattice = Fraction(p.period)
    else:
        return None
    pat, filters = rel.pattern, []
    while isinstance(pat, Filter):
        filters.append(pat.expr)
        pat = pat.pattern
    if not isinstance(pat, Quad) or not isinstance(pat.triple.p, (URIRef, A.Var)):
        return None
    windows = [s for s in pat.sources if s.kind == "window"]
    backgrounds = [s.ref for s in pat.sources if s.kind == "background"]
    if len(windows) != 1 or any(isinstance(g, A.Var) for g in backgrounds):
        return None
    from ..language.dialects.builder import distinct_aggregates
    aggs = distinct_aggregates([x for x, _ in rel.projection if x is not None]
                               + list(rel.having) + [x for x, _ in rel.order_by])
    if any(a.name not in _PANE_AGGREGATES or a.distinct for a in aggs):
        return None
    exprs = filters + [e for e, _ in rel.group_by] + [a.arg for a in aggs if a.arg is not None]
    if not all(_arrival_safe(e) for e in exprs):
        return None
    return PanePlan(pat, filters, backgrounds, aggs, _gcd(Fraction(win.width), lattice), origin)


def direct_map(rel: Relation, aggs: list[D.Aggregate]) -> list[str] | None:
    """The columns of a per-pane query whose rows are its groups' keys and
    aggregates as they are: ``k(I)`` the I-th group key, ``v(J)`` the J-th
    aggregate, per projected variable (stream_window.pl's direct
    evaluation, ``Pred_direct/3``); None when the rows need the compiled
    projection (an expression, HAVING, ORDER BY, DISTINCT, a slice, a
    variable that is neither)."""
    if rel.having or rel.order_by or rel.distinct or rel.offset or rel.limit is not None:
        return None
    keys = {e.name: i for i, (e, _) in enumerate(rel.group_by, 1) if isinstance(e, A.Var)}
    out = []
    for expr, name in rel.projection:
        if expr is None and name in keys:
            out.append(f"k({keys[name]})")
        elif isinstance(expr, D.Aggregate) and expr in aggs:
            out.append(f"v({aggs.index(expr) + 1})")
        else:
            return None
    return out


def _window_ref(w: WindowDef) -> str:
    """A window's source as stream_window.pl writes it."""
    if isinstance(w.stream, A.Var):
        return "var"
    if w.stream is None:
        return "all"
    return f"iri({to_prolog(str(w.stream))})"


def compile_window_query(q: ContinuousQuery, qid: int, *, module: str,
                         encode: Callable[[Any], Any],
                         is_function: Callable[[str], bool] = lambda iri: False,
                         reasoning: str = "rdfs", panes: bool = True,
                         reorder: bool = True) -> CompiledWindowQuery:
    """The Prolog text of a windowed query (see the module docstring);
    ``panes=False`` reads every window at each instant even where the
    query could keep its aggregates per pane; ``reorder=False`` joins in
    the query's order (rules/join_order.py: for comparisons)."""
    comp = WindowCompiler(q, qid, module=module, encode=encode, is_function=is_function,
                          reasoning=reasoning, panes=panes, reorder=reorder)
    return comp.compile()
