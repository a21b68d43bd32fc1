"""The trace of windowed queries as people read it, and as JSON lines.

:class:`WindowTextRenderer` writes a header (each query's report policy,
relation-to-stream operator and windows), one block per triple (the
windows it entered, then every instant the queries answered at: each
window's bounds and content, the answers) and the totals;
:class:`WindowJsonRenderer` writes ``header``, ``triple``, ``end`` and
``totals`` objects.  Both take :class:`~.window_trace.WindowTracer`'s
records.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..io.results import answer_to_json
from ..rdf.prefixes import Prefixes
from .trace_output import JsonRenderer, TextRenderer
from .window_trace import InstantView, WindowTracer, WindowView, row_stream, row_time
from .window_tree import policy_text, window_text

__all__ = ["WindowTextRenderer", "WindowJsonRenderer"]

#: the most triples of a window listed at an instant (the rest counted)
SHOWN = 20


def _number(x: Fraction | None) -> Any:
    if x is None:
        return None
    return int(x) if x.denominator == 1 else float(x)


class WindowTextRenderer(TextRenderer):
    """The windowed trace as readable text, one block per triple."""

    def header(self, tracer: WindowTracer, source: str, rows: int) -> None:  # type: ignore[override]
        n = len(tracer.queries)
        self.write(f"trace of {rows:,} triple{'s' if rows != 1 else ''} from {source}: "
                   f"{n} windowed quer{'ies' if n != 1 else 'y'}")
        for q in tracer.queries:
            alg = q.algebra
            self.write(f"  {q.name} ({alg.dialect}): evaluated {policy_text(alg)}; "
                       f"{alg.r2s.upper()}")
            for w in alg.windows:
                self.write(f"    {window_text(w, Prefixes(q.prefixes), alg)}")
        self.write("  (window content computed from the rows processed, as docs/DIALECTS.md "
                   "defines it; epsparql explain shows the whole query)")

    def bounds(self, v: WindowView) -> str:
        if v.kind == "range":
            return f"({self.time(_number(v.lo))}, {self.time(_number(v.hi))}]"
        if v.kind == "closed-open":
            return f"[{self.time(_number(v.lo))}, {self.time(_number(v.hi))})"
        if v.kind == "closed":
            return f"[{self.time(_number(v.lo))}, {self.time(_number(v.hi))}]"
        if v.kind == "now":
            return f"τ = {self.time(_number(v.hi))}"
        if v.kind == "count":
            return f"the last {v.window.window.count} with τ ≤ {self.time(_number(v.hi))}"
        return f"τ ≤ {self.time(_number(v.hi))}"

    def instant(self, tracer: WindowTracer, view: InstantView) -> list[str]:
        lines = [f"    instant   {self.time(view.t)}: {view.query.name} evaluated"]
        for v in view.windows:
            n = len(v.members)
            lines.append(f"      window {v.window.index} {self.bounds(v)} holds {n} "
                         f"triple{'s' if n != 1 else ''}" + (":" if n else ""))
            for i in v.members[:SHOWN]:
                r = tracer.rows[i]
                on = "" if v.window.stream is not None and type(v.window.stream).__name__ != "Var" \
                    else f" on {self.term_iri(row_stream(r))}"
                lines.append(f"        [{tracer.row_steps[i]}] {self.term(r[0])} {self.term(r[1])} "
                             f"{self.term(r[2])} at {self.time(row_time(r))}{on}")
            if n > SHOWN:
                lines.append(f"        … and {n - SHOWN} more")
        for a in view.answers:
            lines.append(f"      answer  {self.answer(a)}")
        return lines

    def term_iri(self, iri: str) -> str:
        from rdflib import URIRef
        return self.term(URIRef(iri))

    def step(self, rec: dict, tracer: WindowTracer | None = None) -> None:  # type: ignore[override]
        lines: list[str] = []
        if rec.get("held") is not None:
            until = rec["held"]
            lines.append("    held      by the reorder buffer (--lateness) until "
                         + ("the end of the stream" if until == "end" else f"triple [{until}]")
                         + ": processed in end-time order")
        if rec["late"]:
            lines.append("    late      ended before a triple already processed: not processed")
        elif rec["row"] is not None:
            entered = [f"{q.name} window {w.index}" for q, w in rec["entered"]]
            lines.append("    entered   " + (", ".join(entered) if entered else
                                             "no window (no query reads its stream "
                                             f"{self.term_iri(row_stream(rec['row']))})"))
        for view in rec["instants"]:
            lines.extend(self.instant(tracer, view))
        for e in rec.get("errors", ()):
            lines.append(f"    error     {e.kind or 'error'}: {e.message}")
        if rec["row"] is not None:
            s, p, o = rec["row"][:3]
            head = (f"[{rec['step']}] {self.term(s)} {self.term(p)} {self.term(o)}  at "
                    f"{self.time(row_time(rec['row']))}")
        else:
            head = "[end of stream] closes every instant"
            if not rec["instants"]:
                lines.append("    (no instant was waiting for the end of the stream)")
        self.write(head)
        for line in lines:
            self.write(line)

    def finish(self, tracer: WindowTracer) -> None:  # type: ignore[override]
        t = tracer.totals
        self.write(f"totals: {t['rows']} triples processed, {t['instants']} instants with "
                   f"answers, {t['answers']} answers"
                   + (f", {t['late']} late (not processed)" if t["late"] else ""))
        self.out.flush()


class WindowJsonRenderer(JsonRenderer):
    """The windowed trace as JSON lines."""

    def header(self, tracer: WindowTracer, source: str, rows: int) -> None:  # type: ignore[override]
        queries = []
        for q in tracer.queries:
            alg = q.algebra
            queries.append({"query": q.name, "dialect": alg.dialect, "policy": policy_text(alg),
                            "r2s": alg.r2s, "windows": [
                                {"index": w.index, "text": window_text(w, Prefixes(q.prefixes), alg),
                                 "stream": None if w.stream is None else str(w.stream)}
                                for w in alg.windows]})
        self.write({"type": "header", "source": source, "triples": rows, "queries": queries})

    def instant(self, tracer: WindowTracer, view: InstantView) -> dict:
        windows = []
        for v in view.windows:
            content = []
            for i in v.members:
                r = tracer.rows[i]
                content.append({"step": tracer.row_steps[i], "s": self._term(r[0]),
                                "p": self._term(r[1]), "o": self._term(r[2]),
                                "time": self._time(row_time(r)), "stream": row_stream(r)})
            windows.append({"index": v.window.index, "kind": v.kind,
                            "lo": _number(v.lo), "hi": _number(v.hi), "content": content})
        return {"query": view.query.name, "instant": self._time(view.t), "windows": windows,
                "answers": [answer_to_json(a, time_format=self.time_format)
                            for a in view.answers]}

    def step(self, rec: dict, tracer: WindowTracer | None = None) -> None:  # type: ignore[override]
        obj: dict[str, Any] = {"type": "triple" if rec["row"] is not None else "end"}
        if rec["row"] is not None:
            r = rec["row"]
            obj["step"] = rec["step"]
            obj["triple"] = {"s": self._term(r[0]), "p": self._term(r[1]), "o": self._term(r[2])}
            obj["time"] = self._time(row_time(r))
            obj["stream"] = row_stream(r)
            obj["entered"] = [{"query": q.name, "window": w.index} for q, w in rec["entered"]]
        obj["instants"] = [self.instant(tracer, v) for v in rec["instants"]]
        if rec["late"]:
            obj["late"] = True
        if rec.get("held") is not None:
            obj["held_until"] = rec["held"]
        if rec.get("errors"):
            obj["errors"] = [{"message": e.message, "kind": e.kind} for e in rec["errors"]]
        self.write(obj)

    def finish(self, tracer: WindowTracer) -> None:  # type: ignore[override]
        self.write({"type": "totals", "totals": dict(tracer.totals)})
        self.out.flush()
