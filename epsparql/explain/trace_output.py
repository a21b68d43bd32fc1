"""The trace as people read it, and as JSON lines (``epsparql run … --trace``).

:class:`TextRenderer` writes one block per triple (docs/CLI.md shows
one); :class:`JsonRenderer` writes a ``header`` object, one ``triple``
object per triple, an ``end`` and a ``waiting`` object.  Both take the
records :class:`~.trace.Tracer` returns.
"""
from __future__ import annotations

import io
import json
import math
from typing import IO, Any, Sequence

from rdflib.term import Node, URIRef

from ..io.results import TableWriter, answer_to_json, time_json
from ..rdf.sparql_json import term_to_json
from ..times import format_time
from .trace import Goal, Tracer, as_number, late_note
from .tree import duration_text

__all__ = ["TextRenderer", "JsonRenderer"]


class TextRenderer:
    """The trace as readable text, one block per triple."""

    def __init__(self, out: IO[str], queries: Sequence[Any], *, time_format: str = "seconds",
                 prefixes: dict[str, str] | None = None, show_quiet_steps: bool = True) -> None:
        self.out = out
        self.time_format = time_format
        self._cells = TableWriter(io.StringIO(), queries, max_width=60, prefixes=prefixes)
        self.show_quiet_steps = show_quiet_steps

    def term(self, v: Any) -> str:
        if isinstance(v, Node):
            return self._cells.cell(v)
        if v is None:
            return "(unbound)"
        return repr(v)

    def time(self, t: Any) -> str:
        try:
            return format_time(t, self.time_format)
        except (TypeError, ValueError, OverflowError):
            return str(t)

    def interval(self, a: Any, b: Any) -> str:
        return f"[{self.time(a)}, {self.time(b)}]"

    def goal(self, g: Goal) -> str:
        parts = []
        hidden = g.layout.iris
        for label, v, named in sorted(g.values, key=lambda x: not x[2]):
            if label == "_":
                continue
            if not named and not label.startswith("#") and label not in ("group", "value"):
                # an internal variable: the stream predicate under RDFS
                # reasoning (shown when it is a subproperty, not the IRI the
                # pattern names) or a helper of a condition (never shown)
                if not isinstance(v, URIRef) or str(v) in hidden:
                    continue
            parts.append(f"{label}={self.term(v)}")
        return "{" + ", ".join(parts) + "} " + self.interval(g.start, g.end)

    def write(self, line: str = "") -> None:
        self.out.write(line + "\n")

    def header(self, tracer: Tracer, source: str, rows: int) -> None:
        self._view = tracer.view
        n = len(tracer.graph.nodes)
        self.write(f"trace of {rows:,} triple{'s' if rows != 1 else ''} from {source}: "
                   f"{len(tracer.queries)} quer{'ies' if len(tracer.queries) != 1 else 'y'}, "
                   f"{n} rule graph nodes, {len(tracer.layouts)} "
                   f"store{'s' if len(tracer.layouts) != 1 else ''} of partial matches")
        for lay in tracer.layouts.values():
            win = duration_text(lay.window)
            if lay.vars is not None:
                shown = [lay.labels.get(v, v) for v in lay.vars if v in lay.named]
                keys = [lay.labels.get(v, v) for v in lay.keys]
                what = "holds " + (", ".join(shown) if shown else "no query variable")
                what += "; joins on " + (", ".join(keys) if keys else "nothing")
            else:
                what = "layout not known: values shown by position"
            found, _ = tracer.origins.of(lay.node)
            if found:
                what += "; implements " + ", ".join(f"{o.query} #{o.number} {o.element.kind}"
                                                    for o in found[:3])
            self.write(f"  {lay.title} store {lay.name}: window {win}; {what}")
        self.write("  (epsparql explain shows the whole rule graph)")

    def step(self, rec: dict) -> None:
        lines: list[str] = []
        for c in rec["checked"]:
            keys = [", ".join(f"{k}={self.term(v)}" for k, v in key.items()) for key in c.keys]
            key = " or ".join(keys[:3]) + (f" or … ({len(keys)} keys)" if len(keys) > 3 else "")
            who = "the triple"
            if c.derived is not None:
                who = "the derived triple " + " ".join(self.term(x) for x in c.derived)
            note = f"{c.before} before, {c.after} after"
            if c.ordered or c.windowed:
                cond = " and ".join(x for x in (("ended before it" if c.ordered else ""),
                                                ("within the window" if c.windowed else "")) if x)
                note += f"; {c.usable} of them {cond}"
            if c.unfixed:
                key = ", ".join(filter(None, [key, "any " + ", ".join(c.unfixed)]))
                who += " (completing the other operand, whose key came earlier)"
            elif not key:
                key = "no join variables"
            lines.append(f"    checked   {c.layout.title}: {c.before} stored partial "
                         f"match{'es' if c.before != 1 else ''} with {key}: {who} could "
                         f"pair with {'it' if c.before == 1 else 'them'} ({note})")
        for g in rec["inserted"]:
            lines.append(f"    inserted  {g.layout.title} stores partial match {self.goal(g)}")
        for g, why in rec["removed"]:
            if why == "consumed":
                lines.append(f"    consumed  {g.layout.title} partial match {self.goal(g)}")
        for a, why in zip(rec["answers"], rec.get("why") or [None] * len(rec["answers"])):
            lines.append(f"    answer    {self.answer(a)}")
            if why is not None:
                tree = self._view.lines(why, self.term, self.time)
                lines.append(f"    why       {tree[0]}")
                lines.extend(f"              {line}" for line in tree[1:])
        for e in rec.get("errors", ()):
            where = f"step n{e.node}" if e.node is not None else "outside a step"
            who = f", {', '.join(e.queries)}" if e.queries else ""
            lines.append(f"    error     {e.kind or 'error'} in {where}{who}: {e.message}")
        for g, why in rec["removed"]:
            if why == "expired":
                age = as_number(rec["now"]) - as_number(g.start)
                lines.append(f"    expired   {g.layout.title} partial match {self.goal(g)}: "
                             f"started {duration_text(age)} before now "
                             f"({self.time(rec['now'])}), window {duration_text(g.layout.window)}")
        if rec["late"]:
            by = rec.get("late_by")
            if by is None:
                lines.append("    late      ended before an earlier triple: not processed")
            else:
                lines.append(f"    late      ended {duration_text(by)} before a triple already "
                             f"processed: not processed ({late_note(by)})")
        if rec.get("held") is not None:
            until = rec["held"]
            lines.insert(0, "    held      by the reorder buffer (--lateness) until "
                         + ("the end of the stream" if until == "end" else f"triple [{until}]")
                         + ": processed in end-time order")
        if rec["row"] is not None:
            s, p, o, t1, t2 = rec["row"]
            head = (f"[{rec['step']}] {self.term(s)} {self.term(p)} {self.term(o)}  "
                    f"{self.interval(t1, t2)}")
        else:
            head = "[end of stream] closes every instant"
            if not lines:
                lines.append("    (nothing was waiting for the end of the stream)")
        if not lines and not self.show_quiet_steps:
            return
        if not lines:
            lines.append("    (no step stored, checked or removed a partial match; no answer)")
        self.write(head)
        for line in lines:
            self.write(line)

    def answer(self, a: Any) -> str:
        parts = [f"?{k}={self.term(v)}" for k, v in a.bindings.items()]
        text = f"{a.query} {{{', '.join(parts)}}} {self.interval(a.start, a.end)}"
        if a.triples:
            text += " derives " + "; ".join(" ".join(self.term(x) for x in t) for t in a.triples)
        return text

    def finish(self, tracer: Tracer) -> None:
        waiting = tracer.waiting()
        t = tracer.totals
        self.write(f"still waiting: {len(waiting)} partial match{'es' if len(waiting) != 1 else ''}")
        for g in waiting:
            self.write(f"    {g.layout.title} {self.goal(g)}")
        self.write(f"totals: {t['inserted']} inserted, {t['expired']} expired, "
                   f"{t['consumed']} consumed, {t['answers']} answers"
                   + (f", {t['late']} late (not processed)" if t["late"] else ""))
        self.out.flush()


class JsonRenderer:
    """The trace as JSON lines: a ``header`` object, one ``triple`` object
    per triple, an ``end`` object, a ``waiting`` object."""

    def __init__(self, out: IO[str], queries: Sequence[Any], *, time_format: str = "seconds",
                 **_: Any) -> None:
        self.out = out
        self.time_format = time_format

    def _time(self, t: Any) -> Any:
        try:
            return time_json(t, self.time_format)
        except (TypeError, ValueError, OverflowError):
            return t

    @staticmethod
    def _term(v: Any) -> Any:
        if isinstance(v, Node):
            return term_to_json(v)
        if v is None:
            return None
        return {"type": "raw", "value": repr(v)}

    def goal(self, g: Goal) -> dict:
        lay = g.layout
        obj: dict[str, Any] = {"store": lay.name, "node": lay.node, "kind": lay.kind,
                               "start": self._time(g.start), "end": self._time(g.end),
                               "bindings": {}, "internal": {}}
        for label, v, named in g.values:
            if label == "_":
                continue
            if named:
                obj["bindings"][label.replace("?", "")] = self._term(v)
            else:
                obj["internal"][label] = self._term(v)
        return obj

    def write(self, obj: dict) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def header(self, tracer: Tracer, source: str, rows: int) -> None:
        self._view = tracer.view
        stores = []
        for lay in tracer.layouts.values():
            stores.append({"store": lay.name, "node": lay.node, "kind": lay.kind,
                           "window": lay.window if math.isfinite(lay.window) else None,
                           "variables": [lay.labels.get(v, v) for v in lay.vars]
                           if lay.vars is not None else None,
                           "join": [lay.labels.get(v, v) for v in lay.keys],
                           "implements": [o.as_json() for o in tracer.origins.of(lay.node)[0]]})
        self.write({"type": "header", "source": source, "triples": rows,
                    "queries": [q.name for q in tracer.queries], "stores": stores})

    def step(self, rec: dict) -> None:
        obj: dict[str, Any] = {"type": "triple" if rec["row"] is not None else "end"}
        if rec["row"] is not None:
            s, p, o, t1, t2 = rec["row"]
            obj["step"] = rec["step"]
            obj["triple"] = {"s": self._term(s), "p": self._term(p), "o": self._term(o)}
            obj["start"], obj["end"] = self._time(t1), self._time(t2)
        obj["now"] = self._time(rec["now"])
        obj["checked"] = []
        for c in rec["checked"]:
            item = {"store": c.layout.name, "node": c.layout.node, "kind": c.layout.kind,
                    "keys": [{k.replace("?", ""): self._term(v) for k, v in key.items()}
                             for key in c.keys],
                    "before": c.before, "after": c.after, "usable": c.usable}
            if c.derived is not None:
                item["derived"] = {"s": self._term(c.derived[0]), "p": self._term(c.derived[1]),
                                   "o": self._term(c.derived[2])}
            obj["checked"].append(item)
        obj["inserted"] = [self.goal(g) for g in rec["inserted"]]
        obj["removed"] = [dict(self.goal(g), reason=why) for g, why in rec["removed"]]
        obj["answers"] = []
        for a, why in zip(rec["answers"], rec.get("why") or [None] * len(rec["answers"])):
            item = answer_to_json(a, time_format=self.time_format)
            if why is not None:
                item["justification"] = self._view.as_json(why, self._term, self._time)
            obj["answers"].append(item)
        if rec.get("errors"):
            obj["errors"] = [{"message": e.message, "kind": e.kind, "node": e.node,
                              "queries": e.queries} for e in rec["errors"]]
        if rec["late"]:
            obj["late"] = True
            if rec.get("late_by") is not None:
                obj["late_by"] = rec["late_by"]
        if rec.get("held") is not None:
            obj["held_until"] = rec["held"]
        self.write(obj)

    def finish(self, tracer: Tracer) -> None:
        self.write({"type": "waiting", "goals": [self.goal(g) for g in tracer.waiting()],
                    "totals": dict(tracer.totals)})
        self.out.flush()
