"""An EP-SPARQL query: the rules it compiled to, and how its detections become answers.

The core detects the head of the query's rules; repeats of a detection
(same arguments and interval) are this query's to drop, as are the rows
an ASK query has already answered, the repeated projections of DISTINCT
and the CONSTRUCT rows with no complete template triple.  What is left
is kept as columns (:class:`~epsparql.query.Query`).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .answer import Answer
from .answers import AnswerBatch, RepeatFilter, TermNodes
from .core.columns import Columns
from .core.rule_graph import RuleGraph
from .query import Query, shape_of
from .rdf.json_terms import node_from_json, node_to_json
from .rules import CompiledQuery

__all__ = ["EPQuery"]


class EPQuery(Query):
    """A registered EP-SPARQL query (SELECT, CONSTRUCT or ASK)."""

    dialect = "ep-sparql"

    def __init__(self, engine: Any, name: str, prepared: Any,
                 on_result: Callable[[Answer], None] | None, keep: bool | None = None) -> None:
        super().__init__(engine, name, prepared, on_result, keep)
        alg = prepared.algebra
        self.compiled: CompiledQuery = prepared.compiled
        self.projection: list[str] | None = None
        if alg.form == "SELECT" and alg.projection:
            self.projection = [p[1].name if isinstance(p, tuple) else p.name
                               for p in alg.projection]
        self.distinct: bool = alg.distinct
        self._seen: set[Any] = set()
        self._asked = False
        self._repeats = RepeatFilter()
        self._shape = self._answer_shape()

    @property
    def variables(self) -> list[str]:
        """The variables an answer binds (projected for SELECT)."""
        if self.projection is not None:
            return list(self.projection)
        return [v for v in self.compiled.variables if not v.startswith("_:")]

    @property
    def rules(self) -> str:
        """The rule-language text this query compiled to."""
        return self.compiled.rules

    def rule_graph(self) -> RuleGraph:
        """The part of the engine's binarised rule graph this query's rules
        reach (steps shared with other queries included), with the goals
        stored now (one Prolog crossing)."""
        g = self.engine.rule_graph()
        return g.part(g.rules_of_head(self.compiled.head))

    def _answer_shape(self):
        """Which head argument holds each variable an answer shows, and
        where the CONSTRUCT template takes its terms."""
        head = list(self.compiled.variables)
        if self.form == "ASK":
            return shape_of(self.name, self.form, (), head, ())
        if self.form == "SELECT" and self.projection is not None:
            names = [n for n in self.projection if n in head]
        else:
            names = [n for n in head if not n.startswith("_:")]
        return shape_of(self.name, self.form, names, head, self.template)

    def _deliver(self, chunk: Columns, nodes: TermNodes,
                 room: int | None = None) -> tuple[int, bool]:
        """Keep a run of detections of this query's head as answers: repeats
        of a detection (same arguments and interval) are dropped, an ASK
        query keeps its first, DISTINCT drops repeated projections,
        CONSTRUCT the rows with no complete template triple."""
        n = len(chunk)
        if n == 0:
            return 0, False
        cols, tables = self._chunk_columns(chunk, nodes)
        # set semantics: the core leaves repeats of query heads to us.  The
        # answers are then rows of the chunk's columns (none copied)
        rows = self._repeats.fresh(cols, tables, chunk.start, chunk.end)
        if rows is not None and not rows:
            return 0, False
        if self.form == "ASK":
            if self._asked:
                return 0, False
            self._asked = True
            rows = rows[:1] if rows is not None else [0]
        elif self.form == "CONSTRUCT":
            rows = self._complete_rows(cols, tables, range(n) if rows is None else rows)
        elif self.distinct:
            rows = self._new_rows(cols, tables, range(n) if rows is None else rows)
        if rows is not None:
            if not rows:
                return 0, False
            if len(rows) == n:
                rows = None
        return self._keep(AnswerBatch(self._shape, cols, tables, chunk.start, chunk.end, rows),
                          room)

    def _complete_rows(self, cols: list[Any], tables: list[TermNodes],
                       rows: Sequence[int]) -> list[int]:
        """Of ``rows``, those that make at least one template triple."""
        one = AnswerBatch(self._shape, cols, tables, (), (), list(rows))
        return [r for r, ok in zip(rows, one.makes_triples()) if ok]

    def _new_rows(self, cols: list[Any], tables: list[TermNodes],
                  rows: Sequence[int]) -> list[int]:
        """DISTINCT: of ``rows``, those whose projected bindings were not
        seen before (keys: sorted (variable, rdflib term) pairs of the
        bound ones)."""
        sh = self._shape
        order = sorted(range(len(sh.names)), key=lambda k: sh.names[k])
        named = [(sh.names[k], tables[sh.args[k]].nodes([cols[sh.args[k]][r] for r in rows]))
                 for k in order]
        seen = self._seen
        out = []
        for j, r in enumerate(rows):
            key = tuple((name, col[j]) for name, col in named if col[j] is not None)
            if key not in seen:
                seen.add(key)
                out.append(r)
        return out

    # -- snapshots -------------------------------------------------------------
    def _state(self) -> dict:
        out = super()._state()
        if self.form == "ASK":
            out["asked"] = self._asked
        if self.distinct:
            out["seen"] = [[[k, node_to_json(v)] for k, v in key] for key in self._seen]
        open_instant = self._repeats.export(node_to_json)
        if open_instant is not None:
            out["open"] = open_instant
        return out

    def _restored(self, data: Any) -> tuple[set, bool, RepeatFilter]:
        """The DISTINCT seen-set, ASK flag and open instant's detections of
        a snapshot's query state (ValueError if it does not belong to this
        query)."""
        super()._restored(data)
        asked = data.get("asked", False)
        if type(asked) is not bool:
            raise ValueError(f"malformed snapshot: ASK flag {asked!r}")
        seen: set = set()
        for key in data.get("seen", []):
            seen.add(tuple((str(k), node_from_json(v)) if type(k) is str else _bad(k) for k, v in key))
        return seen, asked, RepeatFilter.restored(data.get("open"), node_from_json)

    def _load(self, state: tuple[set, bool, RepeatFilter]) -> None:
        self._seen, self._asked, self._repeats = state
        self._batches = []

    def _reset(self) -> None:
        self._seen, self._asked, self._batches = set(), False, []
        self._repeats = RepeatFilter()


def _bad(x: Any) -> Any:
    raise ValueError(f"malformed snapshot: {str(x)[:100]!r}")
