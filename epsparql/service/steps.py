"""A deployment's processing steps as a graph, with live counters (the live view).

:func:`deployment_steps` runs in the engine room (``room.call``): it
touches Prolog.  It gives, as JSON, nodes and edges in the direction the
events flow (input → steps → answers):

- for EP-SPARQL queries (and ETALIS rules), the binarised rule graph of
  ``explain`` (:meth:`epsparql.Engine.rule_graph`), each node labelled and
  detailed as ``epsparql explain`` writes it
  (:func:`epsparql.explain.rule_graph.node_label`, ``node_details``, the
  algebra elements it implements), with ``held``: the partial matches its
  stores hold now (the sum of their goals, read from the core in the same
  crossing that gives the graph), per store too;
- for a query of a stream dialect, its window operators as
  :func:`epsparql.explain.window_tree.window_algebra_tree` draws them:
  the streams it reads (``in``: the rows pushed on each, the engine's own
  per-stream count), its windows (``held``: what each holds now: distinct
  triples, or, for a window aggregated pane by pane, the matches its panes
  keep, as ``prolog/stream_window.pl``'s ``sw_windows/3`` counts them;
  ``bounds``: the window's bounds at the windows' clock; ``sample``: for a
  window without panes, the first triples it holds, the next to leave),
  the relation
  and its pattern, and the query's output (``out``: its answers);
- an ``events`` node (``in``: the events fed to the deployment) and one
  ``answers`` node per query or rule (``out``: its answers).

Counters that no engine keeps are not computed per event: the engine
room counts each query's answers per run of answers it hands out
(``Deployed.per_query``, kept in checkpoints).  What a step does with each event it is offered (how many occurrences an
inner step makes) is not counted by the core, so inner steps show what
they hold, not what passed through them.

The static part of a deployment's graph (labels, details, edges) is
computed once per deployment and kept; each call then costs one crossing
for the rule graph (its goal counts) and, with windowed queries, two for
the windows' counts.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

__all__ = ["deployment_steps"]


# ---------------------------------------------------------------------------
# the static part, once per deployment

class _Static:
    """Nodes (without counters) and edges of a deployment; the maps from
    counters to nodes."""

    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.edges: list[dict[str, Any]] = []
        self.rule_nodes: dict[int, str] = {}          # rule graph node id -> view id
        self.query_sinks: dict[str, str] = {}         # query name -> answers node
        self.windows: dict[tuple[int, int], str] = {}  # (qid, window index) -> node
        self.window_defs: dict[str, tuple[Any, Any]] = {}   # node -> (WindowDef, query)
        self.streams: dict[str | None, str] = {}      # stream IRI (None: every) -> node
        self.prefixes: Any = None
        self.has_rules = False
        self.windowed = False


def _static(d: Any, graph: Any) -> _Static:
    """The deployment's static part, made the first time and kept on it
    (it goes with the deployment when that is deleted)."""
    st = d.view_cache.get("steps")
    if st is None:
        st = d.view_cache["steps"] = _build_static(d, graph)
    return st


def _build_static(d: Any, graph: Any) -> _Static:
    from ..explain.origins import GraphOrigins
    from ..explain.rule_graph import GraphNames, node_details, node_label
    from ..rdf.prefixes import Prefixes

    st = _Static()
    st.nodes.append({"id": "events", "kind": "input", "label": "events in",
                     "details": ["every event pushed to this deployment"]})
    eps = [q for q in d.queries if not q.windowed]
    win = [q for q in d.queries if q.windowed]
    known: dict[str, str] = {}
    for q in d.queries:
        known.update(q.prefixes)
    prefixes = Prefixes(known)
    st.prefixes = prefixes

    if graph is not None and graph.nodes and (eps or d.spec.rules):
        st.has_rules = True
        names = GraphNames(graph, eps)
        origins = GraphOrigins(graph, eps)
        for nid in graph.topological():
            n = graph.nodes[nid]
            details = [x for x in node_details(n, names, prefixes) if not x.startswith("store ")]
            details = details + origins.lines(nid)
            vid = f"n{nid}"
            st.rule_nodes[nid] = vid
            kind = "join" if n.stores or n.join_vars() is not None else (
                "pattern" if not n.children else "step")
            st.nodes.append({"id": vid, "kind": kind, "label": node_label(n),
                             "details": details, "window": _secs(n.window),
                             "stores": [{"name": s.name, "side": s.side,
                                         "window": _secs(s.window)} for s in n.stores]})
            for c in n.children:
                if c in graph.nodes:
                    side = _side_of(n, c, graph)
                    st.edges.append({"from": f"n{c}", "to": vid, "side": side})
            if not n.children:
                st.edges.append({"from": "events", "to": vid})
        by_head = {q.compiled.head: q for q in eps}
        for i, (rule, label) in enumerate(zip(graph.rules, names.rule_labels)):
            if rule.node not in graph.nodes:
                continue
            q = by_head.get(rule.name)
            sink = f"a{i}"
            if q is not None:
                st.query_sinks.setdefault(q.name, sink)
                text = f"answers of query {q.name}"
            else:
                text = f"rule {rule.name}" + (f" -> {label}" if label else "")
            st.nodes.append({"id": sink, "kind": "answers", "label": text,
                             "details": [f"rule {rule.name}"], "query": q.name if q else None})
            st.edges.append({"from": f"n{rule.node}", "to": sink})

    for q in win:
        _windowed_static(st, q, prefixes)
    return st


def _side_of(n: Any, child: int, graph: Any) -> str | None:
    """``l`` or ``r`` when ``child`` is the left or right operand of join ``n``."""
    ops = n.operands()
    if not ops:
        return None
    from ..core.rule_graph import Child
    sides = []
    for side, op in zip("lr", ops):
        if isinstance(op, Child) and op.node == child:
            sides.append(side)
    return "".join(sides) or None


def _windowed_static(st: _Static, q: Any, prefixes: Any) -> None:
    from ..explain.window_tree import policy_text, window_algebra_tree, window_text
    st.windowed = True
    alg = q.algebra
    qid = q.compiled.qid
    tree = window_algebra_tree(alg, prefixes)
    prefix = f"q{qid}"
    for w in alg.windows:
        if w.stream is None or not isinstance(w.stream, str):
            key = None
            label = "every stream" if w.stream is None else f"each stream ?{w.stream.name}"
        else:
            key = str(w.stream)
            label = "stream " + prefixes.term(w.stream)
        sid = st.streams.get(key)
        if sid is None:
            sid = f"s{len(st.streams)}"
            st.streams[key] = sid
            st.nodes.append({"id": sid, "kind": "stream", "label": label,
                             "details": [key] if key else []})
            st.edges.append({"from": "events", "to": sid})
        text = window_text(w, prefixes, alg)
        head, _, content = text.partition("; ")
        wid = f"{prefix}w{w.index}"
        st.windows[(qid, w.index)] = wid
        st.window_defs[wid] = (w, alg)
        what = head.split(": ", 1)[1] if ": " in head else head
        st.nodes.append({"id": wid, "kind": "window", "label": f"window {w.index}: {what}",
                         "details": [head] + ([content] if content else []),
                         "query": q.name})
        st.edges.append({"from": sid, "to": wid})
    # the relation and its pattern, as the explain tree has them
    counter = [0]

    def add(node: Any, parent: str | None) -> str:
        counter[0] += 1
        vid = f"{prefix}o{counter[0]}"
        st.nodes.append({"id": vid, "kind": "operator", "label": node.label,
                         "details": list(node.details)[:6], "query": q.name})
        if parent is not None:
            st.edges.append({"from": vid, "to": parent})
        leaf = not node.children
        for c in node.children:
            add(c, vid)
        if leaf:
            for m in re.finditer(r"window (\d+)", node.label):
                wid = st.windows.get((qid, int(m.group(1))))
                if wid is not None:
                    st.edges.append({"from": wid, "to": vid})
        return vid

    out = f"{prefix}out"
    st.nodes.append({"id": out, "kind": "answers",
                     "label": f"answers of query {q.name}",
                     "details": [f"{alg.r2s.upper()} {policy_text(alg)}",
                                 f"{alg.dialect}, {alg.form}"], "query": q.name})
    st.query_sinks[q.name] = out
    for c in tree.children:               # the Relation (per evaluation)
        top = add(c, None)
        st.edges.append({"from": top, "to": out})


def _secs(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isinf(x)) else float(x)


# ---------------------------------------------------------------------------
# the counters, at each call

#: the first triples a window without panes holds (the oldest: the next to leave)
_SAMPLE = 5


def _windows(engine: Any) -> tuple[dict[tuple[int, int], int] | None, float | None,
                                   dict[tuple[int, int], list[list[Any]]]]:
    """Per window (query id, index) what it holds now and, for a window
    without panes, its first triples; the windows' clock
    (``prolog/stream_window.pl``'s ``sw_windows/3``, one crossing)."""
    from ..core.runtime import PrologError, runtime
    try:
        r = runtime().query_once("stream_window:sw_windows(M, N, windows(C, L))",
                                 {"M": engine.core.module, "N": _SAMPLE})
    except PrologError:
        return None, None, {}
    if not r or not r.get("truth", True):
        return None, None, {}
    counts = {(int(q), int(i)): int(n) for q, i, n, _ in r["L"]}
    samples = {(int(q), int(i)): xs for q, i, _, xs in r["L"] if xs}
    clock = r.get("C")
    return counts, clock if isinstance(clock, (int, float)) else None, samples


def _sample_text(xs: list[list[Any]], prefixes: Any) -> list[dict[str, Any]]:
    from ..rdf.codec import decode
    out = []
    for s, p, o, t in xs:
        try:
            out.append({"s": prefixes.term(decode(s)), "p": prefixes.term(decode(p)),
                        "o": prefixes.term(decode(o)), "time": t})
        except (ValueError, TypeError):
            continue
    return out


def _bounds(w: Any, alg: Any, clock: float | None) -> dict[str, Any] | None:
    if clock is None:
        return None
    from ..explain.window_trace import window_bounds
    kind, lo, hi = window_bounds(w, clock, alg)
    f = (lambda x: None if x is None else float(Fraction(x)))
    if kind == "closed-open":
        # the window filling now: the next to close (after the clock), not
        # the last closed (what a C-SPARQL window holds is reported at its close)
        step = Fraction(w.window.step if w.window.step is not None else w.window.width)
        kind, lo, hi = window_bounds(w, Fraction(clock) + step, alg)
        t0 = alg.origin(w.window)
        if lo == hi and t0 != "first":    # before the first close
            lo, hi = t0, t0 + Fraction(w.window.width)
        return {"kind": kind, "from": f(lo), "to": f(hi), "filling": True}
    return {"kind": kind, "from": f(lo), "to": f(hi)}


def deployment_steps(room: Any, name: str) -> dict[str, Any]:
    """The deployment's steps and counters (call it in the engine room)."""
    from .engine_room import NotFound
    d = room.deployments.get(name)
    if d is None:
        raise NotFound(f"no deployment named {name!r}")
    engine = d.engine
    has_core = any(not q.windowed for q in d.queries) or bool(d.spec.rules)
    graph = None
    if has_core and d.error is None:
        graph = engine.rule_graph()
    st = _static(d, graph)
    goals: dict[int, list[Any]] = {}
    for s in (graph.stores if graph is not None else ()):
        goals.setdefault(s.node, []).append(s)
    per_query = {q.name: d.per_query.get(q.name, 0) for q in d.queries}

    win_counts, clock, wtotals = (None, None, {})
    samples: dict[tuple[int, int], list[list[Any]]] = {}
    if st.windowed and d.error is None:
        wtotals = engine.window_stats()   # (commits the panes' pending matches first)
        win_counts, clock, samples = _windows(engine)
    stream_rows = engine.stream_rows() if st.windowed else {}

    held_total = 0
    nodes = []
    by_rule = {v: k for k, v in st.rule_nodes.items()}
    win_ids = {v: k for k, v in st.windows.items()}
    stream_ids = {v: k for k, v in st.streams.items()}
    for n in st.nodes:
        out = dict(n)
        vid = n["id"]
        if vid == "events":
            out["in"] = d.events
        elif vid in by_rule:
            stores = goals.get(by_rule[vid], [])
            if n["stores"]:
                got = {s.name: s.goals for s in stores}
                out["stores"] = [dict(s, goals=got.get(s["name"], 0)) for s in n["stores"]]
                out["held"] = sum(got.values())
                held_total += out["held"]
        elif vid in win_ids:
            out["held"] = None if win_counts is None else win_counts.get(win_ids[vid], 0)
            w, alg = st.window_defs[vid]
            out["bounds"] = _bounds(w, alg, clock)
            got = samples.get(win_ids[vid])
            if got is not None:
                out["sample"] = _sample_text(got, st.prefixes)
        elif vid in stream_ids:
            key = stream_ids[vid]
            out["in"] = sum(stream_rows.values()) if key is None else stream_rows.get(key, 0)
        if n["kind"] == "answers" and n.get("query") is not None:
            out["out"] = per_query.get(n["query"], 0)
        nodes.append(out)
    core = engine.core.stats() if d.error is None else {}
    return {
        "name": name, "state": d.state, "error": d.error,
        "events": d.events, "answers": d.answers, "late": d.late,
        "partial_matches": core.get("goals", held_total),
        "window_content": wtotals.get("content") if st.windowed else None,
        "window_pending": wtotals.get("pending") if st.windowed else None,
        "window_clock": clock,
        "queries": [{"name": q.name, "dialect": q.dialect, "form": q.form,
                     "windowed": bool(q.windowed), "answers": per_query[q.name],
                     "text": q.text} for q in d.queries],
        "nodes": nodes, "edges": st.edges,
    }
