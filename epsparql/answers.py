"""A query's answers as columns, each term materialised when it is read.

The core sends a query's detections as columns of term ids into the
engine's term dictionary (:mod:`epsparql.core.columns`).  A query keeps
them that way: an :class:`AnswerBatch` is one such run of detections with
the rows that are answers (an ASK query keeps one, DISTINCT drops
repeats, CONSTRUCT drops rows with no complete template triple), and
:class:`Results` (what ``Query.results()`` returns) is a sequence of
:class:`~epsparql.answer.Answer` over the batches.  An Answer is made when
it is indexed or iterated; its ``bindings`` (:class:`LazyBindings`) and
CONSTRUCT ``triples`` (:class:`LazyTriples`) decode a term into an rdflib
term when it is read, once per distinct term (:class:`TermNodes`).  So
``len(results)``, ``results.intervals()`` and ``a.start`` for every ``a``
decode nothing, and bulk consumers (the writers of :mod:`epsparql.io`,
the Arrow table, Spark) turn each distinct term into text once, not once
per answer.

Terms stay valid however long the answers are kept: the core starts its
dictionary afresh under a new list, never changing an old one.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate, groupby, islice
from operator import and_, le, lt, or_
from typing import Any, Callable, Iterable, Iterator

from rdflib.term import BNode, Node, URIRef

from .answer import Answer
from .core.terms import Compound
from .memo import LONG_KEY
from .rdf.codec import decode, encode

__all__ = ["AnswerBatch", "AnswerShape", "LazyBindings", "LazyTriples", "RepeatFilter", "Results",
           "TermNodes"]

_UNSET = object()
#: What an expression that raised leaves in an answer (an unbound variable).
ERROR = "$error"


class TermNodes:
    """The rdflib side of one term table (a list of encoded terms, the
    core's dictionary of one generation, which only grows): the rdflib
    term of an id, decoded on first use, and named per-term views (text
    forms, Python values) computed once per term.  ``None`` (an unbound
    variable) and the evaluator's error marker decode to None."""

    __slots__ = ("terms", "_nodes", "_views", "_keys")

    def __init__(self, terms: list[Any]) -> None:
        self.terms = terms
        self._nodes: list[Any] = []
        self._views: dict[Any, list[Any]] = {}
        self._keys: list[Any] | None = None

    def keys(self) -> list[Any]:
        """The terms as keys for sets and dicts: the terms themselves, but
        a float with an integral value (a bare xsd:double, see the codec)
        is tagged, since Python takes 1 == 1.0 where RDF has two terms.
        The tag depends on the value alone, so keys of different tables
        agree."""
        k = self._keys
        if k is None:
            terms = self.terms
            k = terms
            if float in set(map(type, terms)):
                floats = [v for v in terms if type(v) is float]
                if any(map(float.is_integer, floats)):
                    k = [("$double", v) if type(v) is float and v.is_integer() else v
                         for v in terms]
            self._keys = k
        return k

    @classmethod
    def of_nodes(cls, nodes: list[Node | None]) -> "TermNodes":
        """A table over rdflib terms already made (answers built in Python)."""
        t = cls([None if n is None else encode(n) for n in nodes])
        t._nodes = list(nodes)
        return t

    def _sized(self, lst: list[Any]) -> list[Any]:
        n = len(self.terms)
        if len(lst) < n:
            lst.extend([_UNSET] * (n - len(lst)))
        return lst

    def node(self, i: int) -> Node | None:
        """The rdflib term of id ``i`` (None: unbound)."""
        nodes = self._nodes
        if i >= len(nodes):
            self._sized(nodes)
        v = nodes[i]
        if v is _UNSET:
            t = self.terms[i]
            v = None if t is None or t == ERROR else decode(t)
            if not (isinstance(v, str) and len(v) > LONG_KEY):
                nodes[i] = v              # a long text's term is made when read, not kept
        return v

    def bound(self, i: int) -> bool:
        """Does id ``i`` stand for a term (not an unbound variable)?"""
        t = self.terms[i]
        return t is not None and t != ERROR

    def nodes(self, ids: Iterable[int]) -> list[Node | None]:
        """The rdflib terms of ``ids``."""
        node = self.node
        return [node(i) for i in ids]

    def mapped(self, key: Any, fn: Callable[[Node], Any], ids: Iterable[int],
               direct: Callable[[list[Any]], list[Any]] | None = None) -> list[Any]:
        """``fn(term)`` for each id (None for unbound), computed once per
        distinct id and kept under ``key`` (the same key, the same fn).
        ``direct``: the same view computed from a list of encoded terms,
        for those it can do without decoding them (bare numbers), None for
        the others; a table of plain values (each answer its own number)
        then builds no rdflib term at all."""
        vals = self._views.get(key)
        if vals is None:
            vals = self._views[key] = []
        self._sized(vals)
        ids = ids if isinstance(ids, (list, range)) else list(ids)
        terms = self.terms
        todo = [i for i in set(ids) if vals[i] is _UNSET]
        got = direct(list(map(terms.__getitem__, todo))) if direct is not None and todo else None
        if got and set(map(type, got)) == {str} and max(map(len, got)) <= LONG_KEY:
            # every view made directly, none long (a column of numbers): kept
            # as they are, without the loop below
            list(map(vals.__setitem__, todo, got))
            return list(map(vals.__getitem__, ids))
        long: dict[int, Any] = {}
        for k, i in enumerate(todo):
            v = None if got is None else got[k]
            if v is None:
                n = self.node(i)
                v = None if n is None else fn(n)
            if isinstance(v, str) and len(v) > LONG_KEY:
                long[i] = v               # a long text's view is not kept beyond this call
            else:
                vals[i] = v
        if long:
            return [long[i] if i in long else vals[i] for i in ids]
        return list(map(vals.__getitem__, ids))


class RepeatFilter:
    """Set semantics for the detections of one rule head: a detection with
    the same arguments and interval as one kept before at the same end
    instant is a repeat (a duplicated input, a second derivation).  The
    core's own check (``dedup``) costs about 1.5 µs per detection; this
    one, on the dictionary ids the columns already hold, a fraction.

    Repeats can only meet within one end instant (the engine takes input
    in end-time order and emits an answer waiting for an instant before
    the next instant's), so only the open instant is remembered, as the
    core does.  Keys are the ids of one term table while the instant's
    detections all use it, else (the dictionary started afresh inside an
    instant, or a column of plain values) the encoded terms themselves.

    A repeat has the interval of the row it repeats.  When a chunk's rows
    are in strictly ascending order of (end, start), checked a column at a
    time in C, no two of its rows share an interval: only the rows at the
    open instant's end can repeat (one kept before), and only those and the
    rows of the chunk's last instant get keys.  Answer-heavy streams of
    point events come that way (each instant's answers in the order of
    their starts); any other chunk is checked row by row."""

    __slots__ = ("end", "seen", "table")

    def __init__(self) -> None:
        self.end: Any = None
        self.seen: set[tuple] = set()
        self.table: TermNodes | None = None     # keys are ids of this table; None: terms

    def fresh(self, cols: list[Sequence[int]], tables: list[TermNodes], start: Sequence[Any],
              end: Sequence[Any]) -> list[int] | None:
        """The rows that are not repeats (None: all of them)."""
        n = len(start)
        if n == 0:
            return None
        if self.end is not None and end[0] < self.end or not _strictly_ordered(start, end):
            return self._fresh_rows(cols, tables, start, end)
        if self.end is None or end[0] > self.end:
            self.seen, self.end = set(), end[0]
        key = self._keyer(cols, tables, start, end)
        table = self.table
        dropped: list[int] = []
        if self.seen:                   # rows 0..k-1 end at the open instant
            seen = self.seen
            dropped = [r for r in range(bisect_right(end, self.end)) if key(r) in seen]
        last = end[-1]
        if last != self.end:
            self.seen, self.end, self.table = set(), last, table
        tail = range(bisect_left(end, last), n)
        self.seen.update(map(key, [r for r in tail if r not in dropped] if dropped else tail))
        if not dropped:
            return None
        gone = set(dropped)
        return [r for r in range(n) if r not in gone]

    def _keyer(self, cols: list[Sequence[int]], tables: list[TermNodes], start: Sequence[Any],
               end: Sequence[Any]) -> Callable[[int], tuple]:
        """The key of a row: term ids when the columns and the open
        instant's keys share one table, else terms (the open instant's
        keys are turned into terms first).  Sets :attr:`table`."""
        if self._by_id(cols, tables):
            self.table = tables[0] if tables else None

            def key(r: int) -> tuple:
                return tuple([c[r] for c in cols]) + (start[r], end[r])
            return key
        self.table = None
        term_cols = [(c, t.keys()) for c, t in zip(cols, tables)]

        def term_key(r: int) -> tuple:
            return tuple([t[c[r]] for c, t in term_cols]) + (start[r], end[r])
        return term_key

    def _fresh_rows(self, cols: list[Sequence[int]], tables: list[TermNodes], start: Sequence[Any],
                    end: Sequence[Any]) -> list[int] | None:
        """:meth:`fresh` row by row (all keys made)."""
        if self.end is None or end[0] > self.end:
            self.seen, self.end = set(), end[0]
        table = tables[0] if tables else None
        by_id = self._by_id(cols, tables)
        if by_id:
            keys: Iterable[tuple] = zip(*cols, start, end)
        else:
            keys = zip(*[map(t.keys().__getitem__, c) for c, t in zip(cols, tables)], start, end)
        seen, cur = self.seen, self.end
        out: list[int] = []
        repeat = False
        for r, k in enumerate(keys):
            e = end[r]
            if e != cur and e > cur:
                seen, cur = set(), e
            if k in seen:
                repeat = True
                continue
            seen.add(k)
            out.append(r)
        self.seen, self.end = seen, cur
        self.table = table if by_id else None
        return out if repeat else None

    def _by_id(self, cols: list[Sequence[int]], tables: list[TermNodes]) -> bool:
        """Can the rows be keyed by term ids?  Only when every column holds
        ids of one shared table (a column of plain values, a range over its
        chunk's own values, is keyed by the values) and the open instant's
        keys are ids of that table too.  If not, those keys are turned into
        terms here."""
        table = tables[0] if tables else None
        if all(t is table for t in tables) and not any(type(c) is range for c in cols) \
                and (not self.seen or self.table is table or self.table is None and not tables):
            return True
        if self.seen and self.table is not None:
            self.seen = {self._as_terms(k) for k in self.seen}
        return False

    def _as_terms(self, key: tuple) -> tuple:
        t = self.table.terms            # type: ignore[union-attr]
        return tuple(t[i] for i in key[:-2]) + key[-2:]

    def export(self, node_out: Callable[[Any], Any]) -> dict | None:
        """The open instant's keys as data (terms through ``node_out``)."""
        if not self.seen:
            return None
        keys = []
        for k in self.seen:
            if self.table is not None:
                args = [self.table.node(i) for i in k[:-2]]
            else:
                args = [None if t is None or t == ERROR else decode(t) for t in k[:-2]]
            keys.append([[None if a is None else node_out(a) for a in args], k[-2], k[-1]])
        return {"end": self.end, "keys": keys}

    @classmethod
    def restored(cls, data: Any, node_in: Callable[[Any], Node]) -> "RepeatFilter":
        """The inverse of :meth:`export` (keys as encoded terms); ValueError
        for malformed data."""
        f = cls()
        if data is None:
            return f
        if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
            raise ValueError(f"malformed snapshot: open instant {str(data)[:100]!r}")
        f.end = data.get("end")
        for k in data["keys"]:
            if not (isinstance(k, list) and len(k) == 3 and isinstance(k[0], list)):
                raise ValueError(f"malformed snapshot: open instant key {str(k)[:100]!r}")
            args = tuple(None if a is None else encode(node_in(a)) for a in k[0])
            f.seen.add(args + (k[1], k[2]))
        return f


def _strictly_ordered(start: Sequence[Any], end: Sequence[Any]) -> bool:
    """Are the intervals in strictly ascending order of (end, start)?
    Two passes in C: at every step the end or the start grows (this fails
    first where intervals repeat), and the ends ascend."""
    return (all(map(or_, map(lt, end, islice(end, 1, None)), map(lt, start, islice(start, 1, None))))
            and all(map(le, end, islice(end, 1, None))))


class AnswerShape:
    """What turns a query's head columns into answers (one per query).

    ``names``: the variables an answer may bind, in output order; ``args``:
    the head argument holding each; ``template``: per CONSTRUCT template
    triple, per position either ``(True, arg)`` (a head argument) or
    ``(False, term)`` (a constant); a position whose variable is not in
    the head is ``(True, None)`` (never bound)."""

    __slots__ = ("query", "form", "names", "args", "index", "template")

    def __init__(self, query: str, form: str, names: Sequence[str], args: Sequence[int],
                 template: Sequence[tuple] = ()) -> None:
        self.query, self.form = query, form
        self.names, self.args = tuple(names), tuple(args)
        self.index = {n: k for k, n in enumerate(self.names)}
        self.template = tuple(template)


class AnswerBatch:
    """A run of a query's answers as columns: ``cols[a]`` the term ids of
    head argument ``a`` (into ``tables[a]``), ``start``/``end`` the
    intervals, ``rows`` the rows that are answers (None: every row).
    Columns are shared with the core's chunk, never changed."""

    __slots__ = ("shape", "cols", "tables", "start", "end", "rows")

    def __init__(self, shape: AnswerShape, cols: list[Sequence[int]], tables: list[TermNodes],
                 start: Sequence[float], end: Sequence[float], rows: list[int] | None) -> None:
        self.shape, self.cols, self.tables = shape, cols, tables
        self.start, self.end, self.rows = start, end, rows

    def __len__(self) -> int:
        return len(self.start) if self.rows is None else len(self.rows)

    def row_ids(self) -> Sequence[int]:
        """The rows of the chunk that are answers, in order."""
        return range(len(self.start)) if self.rows is None else self.rows

    def split(self, k: int) -> tuple["AnswerBatch", "AnswerBatch"]:
        """The first ``k`` answers and the rest, as two batches."""
        rows = list(self.row_ids())
        return (AnswerBatch(self.shape, self.cols, self.tables, self.start, self.end, rows[:k]),
                AnswerBatch(self.shape, self.cols, self.tables, self.start, self.end, rows[k:]))

    # -- columns -------------------------------------------------------------
    def ids(self, var: str) -> tuple[list[int], TermNodes] | None:
        """The term ids of variable ``var`` over the answers, and their
        table (None if no answer of this query can bind it)."""
        k = self.shape.index.get(var)
        if k is None:
            return None
        a = self.shape.args[k]
        col = self.cols[a]
        ids = list(col) if self.rows is None else [col[r] for r in self.rows]
        return ids, self.tables[a]

    def starts(self) -> list[float]:
        return list(self.start) if self.rows is None else [self.start[r] for r in self.rows]

    def ends(self) -> list[float]:
        return list(self.end) if self.rows is None else [self.end[r] for r in self.rows]

    def bound_names(self, r: int) -> list[str]:
        """The variables row ``r`` binds, in order (no decoding)."""
        sh, cols, tables = self.shape, self.cols, self.tables
        return [n for n, a in zip(sh.names, sh.args) if tables[a].bound(cols[a][r])]

    def template_rows(self, view: Callable[[TermNodes, list[int]], list[Any]],
                      const: Callable[[Node], Any]) -> list[list[tuple]]:
        """Per answer, its CONSTRUCT triples: the template triples all of
        whose positions are bound and make an RDF triple (an IRI or blank
        node subject, an IRI predicate; SPARQL 1.1, 16.2: any other is
        left out), each position through ``view`` (a function of a table
        and ids, e.g. ``TermNodes.nodes``) or, for a constant, ``const``."""
        rows = list(self.row_ids())
        out: list[list[tuple]] = [[] for _ in rows]
        for triple, cols, ok in self._template_columns(rows, view):
            consts = [None if is_var else const(x) for is_var, x in triple]
            for j in range(len(rows)):
                if ok is not None and not ok[j]:
                    continue
                vals = tuple(consts[p] if cols[p] is None else cols[p][j] for p in range(3))
                if None not in vals:
                    out[j].append(vals)
        return out

    def makes_triples(self) -> list[bool]:
        """Per answer: does some template triple come out whole (see
        :meth:`template_rows`)?  No term is decoded."""
        rows = list(self.row_ids())
        made = [False] * len(rows)
        for _, cols, ok in self._template_columns(rows, _bound_view):
            for j in range(len(rows)):
                if not made[j] and (ok is None or ok[j]) \
                        and all(c is None or c[j] for c in cols):
                    made[j] = True
        return made

    def _template_columns(self, rows: list[int], view: Callable[[TermNodes, list[int]], list[Any]]
                          ) -> Iterator[tuple[tuple, list[Any], list[bool] | None]]:
        """Per template triple whose positions can all be bound and whose
        constants are in their place: the triple, the ``view`` of each
        variable position over ``rows`` (None for a constant), and per row
        whether its subject and predicate are of the right kind (None:
        they are constants)."""
        cache: dict[int, list[Any]] = {}
        for triple in self.shape.template:
            (vs, s), (vp, p), _ = triple
            if (not vs and not isinstance(s, (URIRef, BNode))) or (not vp and not isinstance(p, URIRef)):
                continue
            if any(is_var and x is None for is_var, x in triple):
                continue                            # a variable the pattern never binds
            cols = []
            for is_var, x in triple:
                if not is_var:
                    cols.append(None)
                    continue
                if x not in cache:
                    col = self.cols[x]
                    cache[x] = view(self.tables[x], [col[r] for r in rows])
                cols.append(cache[x])
            ok = None
            for pos, (is_var, x) in enumerate(triple[:2]):
                if is_var:
                    col, terms = self.cols[x], self.tables[x].terms
                    good = _SUBJECT if pos == 0 else _PREDICATE
                    kinds = [good(terms[col[r]]) for r in rows]
                    ok = kinds if ok is None else list(map(and_, ok, kinds))
            yield triple, cols, ok

    # -- answers ---------------------------------------------------------------
    def answer(self, r: int) -> Answer:
        """The Answer of row ``r`` of the chunk (terms decoded when read)."""
        sh = self.shape
        triples: Any = LazyTriples(self, r) if sh.form == "CONSTRUCT" else ()
        if sh.form == "ASK":
            bindings: Mapping[str, Node] = {}
        else:
            bindings = LazyBindings(self, r)
        return Answer(bindings, self.start[r], self.end[r], triples, sh.query)

    def answers(self) -> Iterator[Answer]:
        answer = self.answer
        for r in self.row_ids():
            yield answer(r)


class LazyBindings(Mapping):
    """The bindings of one answer, read from its batch: a variable's term
    is decoded when it is read.  Equal to a dict with the same items;
    pickles as a plain dict."""

    __slots__ = ("_batch", "_row")

    def __init__(self, batch: AnswerBatch, row: int) -> None:
        self._batch, self._row = batch, row

    def __getitem__(self, var: str) -> Node:
        b = self._batch
        k = b.shape.index.get(var)
        if k is None:
            raise KeyError(var)
        a = b.shape.args[k]
        node = b.tables[a].node(b.cols[a][self._row])
        if node is None:
            raise KeyError(var)
        return node

    def __contains__(self, var: object) -> bool:
        b = self._batch
        k = b.shape.index.get(var)  # type: ignore[arg-type]
        if k is None:
            return False
        a = b.shape.args[k]
        return b.tables[a].bound(b.cols[a][self._row])

    def __iter__(self) -> Iterator[str]:
        return iter(self._batch.bound_names(self._row))

    def __len__(self) -> int:
        return len(self._batch.bound_names(self._row))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> tuple:
        return (dict, (dict(self.items()),))


class LazyTriples(Sequence):
    """The triples of one CONSTRUCT answer, made when first read.  Equal to
    the tuple of them; pickles as that tuple."""

    __slots__ = ("_batch", "_row", "_t")

    def __init__(self, batch: AnswerBatch, row: int) -> None:
        self._batch, self._row = batch, row
        self._t: tuple | None = None

    def _triples(self) -> tuple:
        if self._t is None:
            one = AnswerBatch(self._batch.shape, self._batch.cols, self._batch.tables,
                              self._batch.start, self._batch.end, [self._row])
            self._t = tuple(one.template_rows(TermNodes.nodes, _same)[0])
        return self._t

    def __getitem__(self, i: Any) -> Any:
        return self._triples()[i]

    def __len__(self) -> int:
        return len(self._triples())

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._triples())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, LazyTriples)):
            return self._triples() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._triples())

    def __repr__(self) -> str:
        return repr(self._triples())

    def __reduce__(self) -> tuple:
        return (tuple, (self._triples(),))


def _same(x: Any) -> Any:
    return x


def _same_order(answers: list[Answer]) -> Iterator[list[Answer]]:
    """``answers`` cut where an answer's variables do not come in the order
    of those of the answers before it (a batch shows its variables in one
    order, and a writer keeps each answer's)."""
    part: list[Answer] = []
    names: dict[str, int] = {}
    for a in answers:
        last, fresh, ok = -1, False, True
        for k in a.bindings:
            i = names.get(k)
            if i is None:
                fresh = True
            elif fresh or i < last:
                ok = False
                break
            else:
                last = i
        if not ok:
            yield part
            part, names = [], {}
        part.append(a)
        for k in a.bindings:
            names.setdefault(k, len(names))
    if part:
        yield part


def _batch_of(answers: list[Answer], query: str, construct: bool) -> AnswerBatch:
    """One query's Answer objects as a batch (:meth:`Results.of`): a
    column per variable (in order of first appearance), then, for
    CONSTRUCT answers, three per triple place (an answer with fewer
    triples leaves its last places unbound)."""
    names: dict[str, None] = {}
    for a in answers:
        names.update(dict.fromkeys(a.bindings))
    index: dict[Node, int] = {}
    nodes: list[Node | None] = [None]

    def ident(node: Node | None) -> int:
        if node is None:
            return 0
        i = index.get(node)
        if i is None:
            i = index[node] = len(nodes)
            nodes.append(node)
        return i
    cols = [[ident(a.bindings.get(v)) for a in answers] for v in names]
    template = []
    if construct:
        width = max(len(a.triples) for a in answers)
        for k in range(width):
            pos = []
            for p in range(3):
                pos.append((True, len(cols)))
                cols.append([ident(a.triples[k][p]) if k < len(a.triples) else 0
                             for a in answers])
            template.append(tuple(pos))
    table = TermNodes.of_nodes(nodes)
    shape = AnswerShape(query, "CONSTRUCT" if construct else "SELECT", list(names),
                        list(range(len(names))), template)
    return AnswerBatch(shape, cols, [table] * len(cols), [a.start for a in answers],
                       [a.end for a in answers], None)


def _bound_view(table: TermNodes, ids: list[int]) -> list[bool]:
    return [table.bound(i) for i in ids]


def _iri(t: Any) -> bool:
    """Is the encoded term an IRI (an atom that is not the error marker)?"""
    return type(t) is str and t != ERROR


def _iri_or_bnode(t: Any) -> bool:
    return (type(t) is str and t != ERROR) or (type(t) is Compound and t.name == "b")


_SUBJECT, _PREDICATE = _iri_or_bnode, _iri


class Results(Sequence):
    """Answers of one query (what ``Query.results()`` returns): a sequence
    of :class:`~epsparql.answer.Answer`, made when indexed or iterated,
    over batches of columns.  ``len()``, :meth:`intervals`,
    :meth:`starts` and :meth:`ends` decode no term; :meth:`column` decodes
    one variable; :func:`epsparql.io.to_arrow` and
    :func:`epsparql.io.to_dataframe` convert each distinct term once.
    Compares equal to a list of the same answers."""

    __slots__ = ("query", "variables", "batches", "_ends")

    def __init__(self, batches: Sequence[AnswerBatch] = (), query: str = "",
                 variables: Sequence[str] = ()) -> None:
        self.query = query
        #: the variables an answer may bind (the query's, in order)
        self.variables = list(variables)
        #: the batches, in delivery order (for bulk consumers)
        self.batches = [b for b in batches if len(b)]
        self._ends = list(accumulate(len(b) for b in self.batches))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @classmethod
    def of(cls, answers: "Iterable[Answer] | Results") -> "Results":
        """Any answers as columns: a Results as it is; Answer objects (made
        by hand, read back from a file) one batch per run of one query,
        each distinct term once in the batch's table, a CONSTRUCT answer's
        triples as template positions.  What the writers, the Arrow table
        and the DataFrame read: one path, from columns."""
        if isinstance(answers, Results):
            return answers
        batches = []
        names_all: dict[str, None] = {}
        queries: set[str] = set()
        for (query, construct), run in groupby(answers, key=lambda a: (a.query, bool(a.triples))):
            for part in _same_order(list(run)):
                batch = _batch_of(part, query, construct)
                batches.append(batch)
                names_all.update(dict.fromkeys(batch.shape.names))
            queries.add(query)
        return cls(batches, queries.pop() if len(queries) == 1 else "", list(names_all))

    def _locate(self, i: int) -> tuple[AnswerBatch, int]:
        from bisect import bisect_right
        k = bisect_right(self._ends, i)
        b = self.batches[k]
        j = i - (self._ends[k - 1] if k else 0)
        return b, (j if b.rows is None else b.rows[j])

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("Results index out of range")
        b, r = self._locate(i)
        return b.answer(r)

    def __iter__(self) -> Iterator[Answer]:
        for b in self.batches:
            yield from b.answers()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Iterable[Answer]) -> list[Answer]:
        return list(self) + list(other)

    def __radd__(self, other: Iterable[Answer]) -> list[Answer]:
        return list(other) + list(self)

    def __repr__(self) -> str:
        head = ", ".join(repr(a) for a in self[:3])
        more = len(self) - 3
        return f"Results([{head}{f', … {more:,} more' if more > 0 else ''}])"

    # -- without decoding --------------------------------------------------
    def starts(self) -> list[float]:
        """The start of every answer, in order."""
        return [t for b in self.batches for t in b.starts()]

    def ends(self) -> list[float]:
        """The end of every answer, in order."""
        return [t for b in self.batches for t in b.ends()]

    def intervals(self) -> list[tuple[float, float]]:
        """(start, end) of every answer, in order."""
        return [iv for b in self.batches for iv in zip(b.starts(), b.ends())]

    # -- decoded -------------------------------------------------------------
    def column(self, var: str) -> list[Node | None]:
        """The rdflib term ``var`` is bound to in every answer (None: unbound)."""
        out: list[Node | None] = []
        for b in self.batches:
            got = b.ids(var.lstrip("?$"))
            if got is None:
                out.extend([None] * len(b))
            else:
                ids, table = got
                out.extend(table.nodes(ids))
        return out
