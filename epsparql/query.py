"""A registered continuous query: what every query offers, whatever its language.

An EP-SPARQL query (:class:`~epsparql.ep_query.EPQuery`) and a query of a
stream dialect (:class:`~epsparql.window_runtime.WindowQuery`) compile to
different Prolog, but their answers come back the same way: the Prolog
side sends them through the columns sink under the query's head
(``prolog/bridge_columns.pl``), the engine hands each chunk to the query
of its head (:meth:`Query._deliver`), and the query keeps them as
:class:`~epsparql.answers.AnswerBatch` columns until they are taken.  So
``results()`` (an :class:`~epsparql.answers.Results`, or an Arrow table),
``limit=``, ``pending``, ``to_dataframe()`` and ``on_result`` are one
implementation, here; a subclass says how a chunk becomes answers and what
of it goes into a snapshot.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from rdflib.term import BNode

from .answer import Answer
from .answers import AnswerBatch, AnswerShape, Results, TermNodes
from .core.columns import VALUE, Columns

__all__ = ["Query"]


class Query:
    """A registered continuous query (SELECT, CONSTRUCT or ASK), of any
    language: ``name``, ``text``, ``form``, ``dialect``, ``variables``,
    ``prepared`` (every stage: syntax tree, algebra, compiled form),
    ``algebra``, ``prefixes``, ``results()``, ``pending``,
    ``to_dataframe()`` and ``on_result`` (called with each answer as it
    is delivered; answers that go to it are not kept for ``results()``
    unless ``keep`` is true)."""

    #: the language: "ep-sparql" or the dialect's name (epsparql/prepare.py)
    dialect: str = "ep-sparql"

    def __init__(self, engine: Any, name: str, prepared: Any,
                 on_result: Callable[[Answer], None] | None, keep: bool | None = None) -> None:
        alg = prepared.algebra
        self.engine = engine
        self.name = name
        #: every stage of the query: syntax tree, algebra, compiled form (epsparql/prepare.py)
        self.prepared = prepared
        self.text: str = prepared.text
        self.form: str = alg.form
        self.compiled: Any = prepared.compiled
        self.template = tuple(alg.template)
        self.on_result = on_result
        #: are answers kept for results()?  (not by default when a callback takes them)
        self.keep: bool = on_result is None if keep is None else bool(keep)
        self._batches: list[AnswerBatch] = []

    # -- what every query is ---------------------------------------------------
    @property
    def windowed(self) -> bool:
        """Is this a stream dialect's query (windows, report policy, R2S)?"""
        return self.dialect != "ep-sparql"

    @property
    def head(self) -> str:
        """The name under which the Prolog side sends this query's answers."""
        return self.compiled.head

    @property
    def variables(self) -> list[str]:
        """The variables an answer may bind, in output order."""
        raise NotImplementedError

    @property
    def algebra(self) -> Any:
        """The query's algebra after the rewrites."""
        return self.prepared.algebra

    @property
    def prefixes(self) -> dict[str, str]:
        """The prefixes the query declares (``""``: its base)."""
        return self.prepared.prefixes

    @property
    def span(self) -> float:
        """How far back in event time the query's own state reaches (its
        longest window; 0 where the engine's rule graph says it)."""
        return 0

    # -- answers -------------------------------------------------------------
    def results(self, format: str | None = None, *, limit: int | None = None,
                **options: Any) -> Any:
        """Answers found since the last call, in order (drains).

        A :class:`~epsparql.answers.Results`: a sequence of
        :class:`~epsparql.Answer` whose terms are decoded when read
        (``len()`` and the intervals decode nothing).  ``format="arrow"``:
        a pyarrow Table instead, one column per variable plus ``start`` and
        ``end`` (``options``: ``values``, ``times``; see
        :func:`epsparql.io.to_arrow`).  ``limit``: take at most that many
        (the oldest), leaving the rest for the next call."""
        if format not in (None, "arrow"):
            raise ValueError(f"format must be None or 'arrow', got {format!r}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 0):
            raise ValueError(f"limit must be a whole number >= 0 or None, got {limit!r}")
        res = Results(self._take(limit), self.name, self.variables)
        if format is None:
            if options:
                raise TypeError(f"unexpected options {sorted(options)} (they go with "
                                f"format='arrow')")
            return res
        from .io.arrow import to_arrow
        return to_arrow(res, **options)

    @property
    def pending(self) -> int:
        """How many answers wait to be taken with :meth:`results`."""
        return sum(map(len, self._batches))

    def to_dataframe(self, **options: Any):
        """The answers found since the last call as a pandas DataFrame (drains;
        options as for :func:`epsparql.io.to_dataframe`)."""
        from .io.dataframe import to_dataframe
        return to_dataframe(self.results(), variables=self.variables, **options)

    def _take(self, limit: int | None) -> list[AnswerBatch]:
        if limit is None:
            out, self._batches = self._batches, []
            return out
        out: list[AnswerBatch] = []
        left = limit
        while self._batches and left > 0:
            b = self._batches[0]
            if len(b) <= left:
                out.append(self._batches.pop(0))
                left -= len(b)
            else:
                head, self._batches[0] = b.split(left)
                out.append(head)
                left = 0
        return out

    # -- the channel -----------------------------------------------------------
    def _deliver(self, chunk: Columns, nodes: TermNodes,
                 room: int | None = None) -> tuple[int, bool]:
        """Keep a chunk of this query's head as answers, at most ``room``
        of them (the engine's ``max_answers``).  Returns how many it kept,
        and whether answers were left out for want of room."""
        raise NotImplementedError

    @staticmethod
    def _chunk_columns(chunk: Columns, nodes: TermNodes) -> tuple[list[Any], list[TermNodes]]:
        """The columns of a chunk as (ids, table) per head argument: a
        column of plain values (numbers the sink sent as they are) is a
        range over a table of its own values; none is copied."""
        n = len(chunk)
        cols: list[Any] = []
        tables: list[TermNodes] = []
        for a in range(chunk.arity):
            if chunk.kinds[a] == VALUE:
                cols.append(range(n))
                tables.append(TermNodes(chunk.ids(a)))
            else:
                cols.append(chunk.ids(a))
                tables.append(nodes)
        return cols, tables

    def _keep(self, batch: AnswerBatch, room: int | None) -> tuple[int, bool]:
        """Deliver a batch of answers (the first ``room``): kept for
        :meth:`results` (:attr:`keep`), and to ``on_result``."""
        cut = room is not None and len(batch) > room
        if cut:
            batch = batch.split(room)[0]
            if not len(batch):
                return 0, True
        if self.keep:
            self._batches.append(batch)
        if self.on_result is not None:
            for ans in batch.answers():
                self.on_result(ans)
        return len(batch), cut

    # -- snapshots -------------------------------------------------------------
    def _state(self) -> dict:
        """What of this query goes into an engine snapshot (JSON-ready)."""
        return {"name": self.name, "head": self.compiled.head}

    def _restored(self, data: Any) -> Any:
        """The query state of a snapshot, checked (ValueError if it does not
        belong to this query), for :meth:`_load`; nothing changes yet."""
        if not isinstance(data, dict) or data.get("name") != self.name \
                or data.get("head") != self.compiled.head:
            got = (data.get("name"), data.get("head")) if isinstance(data, dict) else data
            raise ValueError(f"the snapshot's query {str(got)[:100]} is not this engine's "
                             f"{(self.name, self.compiled.head)}: register the same queries in "
                             f"the same order before restoring")
        return None

    def _load(self, state: Any) -> None:
        """Take a state :meth:`_restored` checked; answers not taken go."""
        self._batches = []

    def _reset(self) -> None:
        """Forget the stream: answers not taken, and what the query itself
        remembers of it."""
        self._batches = []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.form} {self.variables}>"


def shape_of(name: str, form: str, names: Sequence[str], head: Sequence[str],
             template: Sequence[Any]) -> AnswerShape:
    """The :class:`~epsparql.answers.AnswerShape` of a query whose head
    arguments are ``head`` (variable names; a template blank node ``_:x``
    as ``_:tpl:x``) and whose answers show ``names``."""
    index = {n: a for a, n in enumerate(head)}
    tpl = []
    for t in template:
        pos = []
        for x in (t.s, t.p, t.o):
            if type(x).__name__ == "Var":
                pos.append((True, index.get(x.name)))
            elif isinstance(x, BNode):
                pos.append((True, index.get("_:tpl:" + str(x))))
            else:
                pos.append((False, x))
        tpl.append(tuple(pos))
    return AnswerShape(name, form, names, [index[n] for n in names], tpl)
