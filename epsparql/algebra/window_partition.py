"""Partitioning windowed queries (the stream dialects) by a key.

A windowed query can run partitioned by ``?k`` (each group of the Spark
pipeline sees the triples whose key position holds its value, as for
EP-SPARQL in :mod:`.partition`) when the answers of the whole stream
are, evaluation by evaluation, the union of the groups' answers.  That
holds when:

1. **every triple pattern over a window binds ?k** at a position that
   carries its value in the input triple (through RDFS entailment too:
   :func:`~.partition.input_positions`), and no property path reads a
   window: then every window triple of an answer with ``?k = v`` is in
   ``v``'s group, and a window's content in that group is the whole
   window's content restricted to ``v``;
2. **every answer needs window content**: the pattern's mandatory part
   reads a window, and a pattern over a window merged with background
   graphs (C-SPARQL's default graph) cannot match the background (none
   of its predicates is there), so no answer is made of background alone
   (it would come from every group);
3. **the evaluation instants do not depend on the data**: the report
   policy is a window close on windows with steps, a period, or the end;
   not eager (CQELS), not every n triples, no window whose instants are
   arrivals, no count window (the last n triples of a stream mix keys);
4. **an evaluation decomposes by ?k**: aggregates are grouped by ``?k``;
   the result keeps ``?k`` (SELECT projects it; CONSTRUCT's rows have it)
   so DISTINCT and the ISTREAM/DSTREAM bag differences compare rows of
   one group only; no LIMIT/OFFSET (they cut across groups); sub-queries
   that read windows obey the same; no ``timestamp()`` (it reads any
   triple that mentions a term);
5. **no stream written by a query is involved**: its triples are made
   in one group and read in another.

Otherwise the query runs on one partition that sees every stream, with
the reason said.  C-SPARQL's rule "skip an instant when every window is
empty" and a query's first instant are per group then, which changes
nothing by 2: a group whose windows are empty has no answers.  At the
end of input every group must evaluate up to the same last instant: the
Spark worker advances each group to the last timestamp of the whole
input before flushing it.
"""
from __future__ import annotations

from typing import Any, Sequence

from rdflib import RDF

from ..language import ast as A
from ..language.dialects import ast as D
from .nodes import Extend, Filter, Join, LeftJoin, Triple, Union_
from .partition import KEY_PREFERENCE, NO_SCHEMA, KeyPlan, PatternKey, Plan, Schema, pattern_key
from .streams import (T0_FIRST, ContinuousQuery, ExistsExpr, Minus, PerStream, Quad, Relation,
                      SubSelect, closed_open)

__all__ = ["window_key_plan", "window_plan"]



class _NotKeyed(Exception):
    """Why a query cannot be partitioned."""


def _var(x: Any) -> str | None:
    return x.name if isinstance(x, A.Var) else None


def _is_path(x: Any) -> bool:
    return type(x).__name__ in ("PathSeq", "PathAlt", "PathInv", "PathMod")


def _walk(p: Any, out: list[Quad], exists: list[Any]) -> None:
    """The quads of a pattern (sub-queries and EXISTS included)."""
    stack = [p]
    while stack:
        x = stack.pop()
        if isinstance(x, Quad):
            out.append(x)
        elif isinstance(x, (Join, LeftJoin, Union_, Minus)):
            stack.extend((x.left, x.right))
            if isinstance(x, LeftJoin) and x.expr is not None:
                exists.append(x.expr)
        elif isinstance(x, Filter):
            stack.append(x.pattern)
            exists.append(x.expr)
        elif isinstance(x, Extend):
            stack.append(x.pattern)
            exists.append(x.expr)
        elif isinstance(x, PerStream):
            stack.append(x.pattern)
        elif isinstance(x, SubSelect):
            stack.append(x.relation.pattern)


def _exprs(e: Any, found: list[Any]) -> None:
    """EXISTS patterns and function names inside an expression."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ExistsExpr):
            found.append(x)
        elif isinstance(x, A.FunctionCall):
            found.append(x)
            stack.extend(x.args)
        elif isinstance(x, A.BinaryOp):
            stack.extend((x.left, x.right))
        elif isinstance(x, A.UnaryOp):
            stack.append(x.operand)
        elif isinstance(x, (A.In, A.NotIn)):
            stack.append(x.expr)
            stack.extend(x.values)
        elif isinstance(x, D.Aggregate) and x.arg is not None:
            stack.append(x.arg)


def _reads_window(q: Quad) -> bool:
    return any(s.kind == "window" for s in q.sources)


def _background_may_match(q: Quad, schema: Schema) -> bool:
    """Could a background graph of the quad's sources match its triple?"""
    if not any(s.kind == "background" for s in q.sources):
        return False
    preds = schema.predicates
    if preds is None:
        return True                          # the background is not known
    if not preds:
        return False                         # there is none
    p = q.triple.p
    if _var(p) is not None or _is_path(p):
        return True
    if schema.sub_property or (p == RDF.type and (schema.sub_class or schema.domain
                                                   or schema.range)):
        return True
    return p in preds


def _mandatory_window(p: Any) -> bool:
    """Does every solution of ``p`` include a match in a window?"""
    if isinstance(p, Quad):
        return _reads_window(p)
    if isinstance(p, Join):
        return _mandatory_window(p.left) or _mandatory_window(p.right)
    if isinstance(p, (LeftJoin, Minus)):
        return _mandatory_window(p.left)
    if isinstance(p, Union_):
        return _mandatory_window(p.left) and _mandatory_window(p.right)
    if isinstance(p, (Filter, Extend, PerStream)):
        return _mandatory_window(p.pattern)
    if isinstance(p, SubSelect):
        r = p.relation
        return (not r.grouped or bool(r.group_by)) and _mandatory_window(r.pattern)
    return False


def _check_relation(r: Relation, key: str, top: bool) -> None:
    names = {v for _, v in r.projection}
    if r.limit is not None or r.offset:
        raise _NotKeyed("LIMIT/OFFSET cut each evaluation's result across keys")
    if r.grouped:
        plain = {e.name for e, v in r.group_by if isinstance(e, A.Var) and v is None} | \
                {v for e, v in r.group_by if isinstance(e, A.Var) and v is not None
                 and e.name == key}
        if key not in plain:
            raise _NotKeyed(f"its aggregates are not grouped by ?{key}")
    if key not in names:
        raise _NotKeyed(f"{'the result' if top else 'a sub-query'} does not keep ?{key} "
                        "(rows of different keys could be equal)")


def _check(q: ContinuousQuery, key: str, schema: Schema) -> list[PatternKey]:
    """The key position of each window pattern, or _NotKeyed."""
    pol = q.policy
    if pol.kind in ("eager", "triples"):
        raise _NotKeyed(f"it is evaluated {'at each arrival' if pol.kind == 'eager' else 'every n triples'}, "
                        "instants that depend on every key's triples")
    if pol.non_empty and q.r2s in ("istream", "dstream"):
        raise _NotKeyed(f"it skips the evaluations whose windows are all empty (non-empty): "
                        f"which are skipped depends on every key's triples, and "
                        f"{q.r2s.upper()} compares each result with the previous one evaluated")
    for w in q.windows:
        win = w.window
        if closed_open(q, win) and q.origin(win) == T0_FIRST:
            raise _NotKeyed("its windows start at t0 = first, the first event of all keys")
        if win.kind == "count":
            raise _NotKeyed("a count window holds the last n triples of all keys")
        if pol.kind == "close" and (win.kind in ("now", "all") or win.step is None):
            raise _NotKeyed("a window without a step is evaluated at arrival instants, "
                            "which depend on every key's triples")
    if q.output is not None and q.form == "CONSTRUCT":
        raise _NotKeyed("it writes a stream (its triples would be made in one group, read in another)")
    if q.form == "ASK":
        raise _NotKeyed("ASK answers for all keys at once")
    quads: list[Quad] = []
    exprs: list[Any] = []
    _walk(q.relation.pattern, quads, exprs)
    for e in list(q.relation.having) + [e for e, _ in q.relation.projection if e is not None] + \
            [e for e, _ in q.relation.order_by] + [e for e, _ in q.relation.group_by]:
        exprs.append(e)
    found: list[Any] = []
    seen_exists: set[int] = set()
    while exprs:
        _exprs(exprs.pop(), found)
        for x in found:
            if isinstance(x, ExistsExpr) and id(x) not in seen_exists:
                seen_exists.add(id(x))
                _walk(x.pattern, quads, exprs)
            elif isinstance(x, A.FunctionCall):
                name = str(x.name).lower()
                if name.endswith("timestamp"):
                    raise _NotKeyed("timestamp() reads the latest occurrence of any triple")
        found.clear()
    _check_relation(q.relation, key, True)
    for sub in _subselects(q.relation.pattern):
        if _reads_any_window(sub.relation.pattern):
            _check_relation(sub.relation, key, False)
    if not _mandatory_window(q.relation.pattern):
        raise _NotKeyed("some answers need no window content (they would come from every group)")
    keys: list[PatternKey] = []
    for quad in quads:
        if not _reads_window(quad):
            continue
        t = quad.triple
        if _is_path(t.p):
            raise _NotKeyed("a property path over a window walks across keys")
        if _background_may_match(quad, schema):
            raise _NotKeyed(f"the pattern {_show(t)} also reads background graphs that may "
                            "match it (answers from the background alone would come from every group)")
        choice = pattern_key(t, key, schema)
        if choice is None:
            raise _NotKeyed(f"the window pattern {_show(t)} does not bind ?{key} where the input "
                            "triple carries it")
        keys.append(choice)
    if not keys:
        raise _NotKeyed("it reads no window")
    return keys


def _subselects(p: Any) -> list[SubSelect]:
    out: list[SubSelect] = []
    stack = [p]
    while stack:
        x = stack.pop()
        if isinstance(x, SubSelect):
            out.append(x)
            stack.append(x.relation.pattern)
        elif isinstance(x, (Join, LeftJoin, Union_, Minus)):
            stack.extend((x.left, x.right))
        elif isinstance(x, (Filter, Extend, PerStream)):
            stack.append(x.pattern)
    return out


def _reads_any_window(p: Any) -> bool:
    quads: list[Quad] = []
    _walk(p, quads, [])
    return any(_reads_window(q) for q in quads)


def _show(t: Triple) -> str:
    def one(x: Any) -> str:
        v = _var(x)
        if v is not None:
            return "?" + v
        return x.n3() if hasattr(x, "n3") else str(x)
    return "{ " + " ".join(one(x) for x in (t.s, t.p, t.o)) + " }"


def window_key_plan(q: ContinuousQuery, name: str = "query",
                    schema: Schema = NO_SCHEMA) -> KeyPlan:
    """The partitioning key of one windowed query (see the module docstring),
    or why it runs on one partition."""
    quads: list[Quad] = []
    _walk(q.relation.pattern, quads, [])
    window_quads = [x for x in quads if _reads_window(x)]
    if not window_quads:
        return KeyPlan(name, None, reason="it reads no window")
    common: set[str] | None = None
    for x in window_quads:
        vs = {v for v in (_var(x.triple.s), _var(x.triple.p), _var(x.triple.o)) if v}
        common = vs if common is None else common & vs
    reasons: list[str] = []
    best: tuple | None = None
    for var in sorted(common or ()):
        try:
            keys = _check(q, var, schema)
        except _NotKeyed as e:
            reasons.append(str(e))
            continue
        spread = len(frozenset().union(*(k.inputs for k in keys)))
        rank = (spread, sum(KEY_PREFERENCE.index(k.position) for k in keys), var)
        if best is None or rank < best[0]:
            best = (rank, var, tuple(keys))
    if best is None:
        if not common:
            return KeyPlan(name, None, reason="no variable occurs in every window pattern")
        return KeyPlan(name, None, reason=reasons[0] if len(set(reasons)) == 1
                       else "; ".join(dict.fromkeys(reasons)))
    _, var, keys = best
    n = len(keys)
    why = (f"windowed ({q.dialect}): it occurs in all {n} window pattern{'s' if n > 1 else ''}, "
           "the result keeps it and the instants do not depend on the data")
    return KeyPlan(name, var, keys, why)


def window_plan(base: Plan, queries: Sequence[tuple[str, ContinuousQuery]],
                schema: Schema = NO_SCHEMA, order: Sequence[str] | None = None) -> Plan:
    """``base`` (the EP-SPARQL queries' plan) with the windowed queries
    added, in ``order`` (the engine's registration order) when given.  A
    query reading a stream another query writes runs on one partition,
    as does the writer."""
    written = {str(q.output) for _, q in queries if q.output is not None and q.form == "CONSTRUCT"}
    plans = {k.query: k for k in base.queries}
    for name, q in queries:
        kp = window_key_plan(q, name, schema)
        if kp.partitioned and written and any(
                w.stream is None or not isinstance(w.stream, A.Var) and str(w.stream) in written
                or isinstance(w.stream, A.Var) for w in q.windows):
            kp = KeyPlan(name, None, reason="it reads streams other queries write")
        plans[name] = kp
    names = list(order) if order is not None else [k.query for k in base.queries] + \
        [n for n, _ in queries]
    return Plan([plans[n] for n in names if n in plans], schema, list(base.notes))

