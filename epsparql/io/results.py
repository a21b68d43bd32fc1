"""Answer writers: JSON lines, CSV, SPARQL 1.1 Query Results JSON,
timestamped N-Triples (CONSTRUCT answers) and a table for a terminal.

    from epsparql.io import answer_writer
    with answer_writer("jsonl", "answers.jsonl", queries=engine.queries) as w:
        ...
        w.write_many(q.results())

Every writer takes answers one at a time (:meth:`AnswerWriter.write`), so
answers can be written while the stream runs, or many at once
(:meth:`AnswerWriter.write_many`): given what ``Query.results()`` returns
(:class:`~epsparql.answers.Results`, answers as columns), the writers work
on the columns and write each distinct term's text once, not once per
answer, and make no Answer object; :meth:`~AnswerWriter.flush`
pushes what is buffered to the file and :meth:`~AnswerWriter.close` ends
the output (the SPARQL JSON writer writes its documents then).  The
formats are described in docs/CLI.md.
"""
from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from decimal import Decimal
from itertools import chain
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import IO, Any, Iterable, Iterator, Sequence

from rdflib.term import Literal, Node

from ..answer import Answer
from ..answers import AnswerBatch, Results, TermNodes
from ..memo import LONG_KEY
from ..rdf.codec import XSD
from ..rdf.ntriples import format_encoded_numbers, format_term, number_texts, parse_term
from ..rdf.prefixes import Prefixes
from ..rdf.sparql_json import term_from_json, term_to_json
from ..times import NUMBER_RE, format_time, parse_time
from .long_parts import WRITE_PIECE, TextParts, csv_field, json_parts, nt_parts, write_pieces  # noqa: F401
from .streams import open_output

__all__ = ["OUTPUT_FORMATS", "AnswerWriter", "JsonLinesWriter", "CsvWriter",
           "SparqlJsonWriter", "NTriplesWriter", "TableWriter", "answer_writer",
           "write_answers", "answer_to_json", "answer_from_json", "read_answers",
           "read_answers_csv", "time_json", "query_prefixes", "batch_json_lines",
           "batch_nt_columns", "batch_triples_json", "nt_texts", "json_texts", "term_json_text"]

#: Answer output formats, by name.
OUTPUT_FORMATS = ("jsonl", "csv", "sparql-json", "nt", "table")


class _QueryInfo:
    """What a writer needs to know about a query (a Query has all of it)."""

    def __init__(self, name: str, form: str = "SELECT", variables: Sequence[str] = (),
                 text: str = "", prefixes: dict[str, str] | None = None) -> None:
        self.name, self.form, self.variables, self.text = name, form, list(variables), text
        self._prefixes = prefixes

    @property
    def prefixes(self) -> dict[str, str]:
        """The prefixes the query declares (read from its text if not given)."""
        if self._prefixes is None:
            self._prefixes = query_prefixes(self.text)
        return self._prefixes


def _info(q: Any) -> _QueryInfo:
    return _QueryInfo(q.name, getattr(q, "form", "SELECT"), list(getattr(q, "variables", ())),
                      getattr(q, "text", ""), getattr(q, "prefixes", None))


def time_json(t: float | int, style: str = "seconds") -> Any:
    """A time as a JSON value: seconds as a number (whole ones as integers),
    or with ``style="iso"`` an ``xsd:dateTime`` string in UTC."""
    if style == "iso":
        return format_time(t, "iso")
    if isinstance(t, float) and t.is_integer() and abs(t) < 1e16:
        return int(t)
    return t


def _meta_names(variables: Iterable[str], names: Sequence[str]) -> list[str]:
    """``names`` (query, start, end) made distinct from the variables by
    leading underscores."""
    taken = set(variables)
    out = []
    for n in names:
        while n in taken:
            n = "_" + n
        out.append(n)
    return out


def answer_to_json(answer: Answer, *, time_format: str = "seconds") -> dict[str, Any]:
    """``{"query", "start", "end", "bindings": {var: term object}}`` (plus
    ``"triples": [{"s","p","o"}, …]`` for CONSTRUCT answers), terms in
    SPARQL 1.1 JSON form."""
    obj: dict[str, Any] = {
        "query": answer.query,
        "start": time_json(answer.start, time_format),
        "end": time_json(answer.end, time_format),
        "bindings": {k: term_to_json(v) for k, v in answer.bindings.items()},
    }
    if answer.triples:
        obj["triples"] = [{"s": term_to_json(s), "p": term_to_json(p), "o": term_to_json(o)}
                          for s, p, o in answer.triples]
    return obj


def term_json_text(node: Node) -> str:
    """``json.dumps(term_to_json(node), ensure_ascii=False)``; a large
    literal's text is escaped straight from the term, not from a copy of
    it in a dict first."""
    if isinstance(node, Literal) and len(node) > LONG_KEY:
        extra = ""
        if node.language:
            extra = ', "xml:lang": ' + json.dumps(node.language, ensure_ascii=False)
        elif node.datatype is not None:
            extra = ', "datatype": ' + json.dumps(str(node.datatype), ensure_ascii=False)
        return "".join(('{"type": "literal", "value": ', encode_basestring(node), extra, "}"))
    return json.dumps(term_to_json(node), ensure_ascii=False)


_JSON_LITERAL = '{"type": "literal", "value": "'
_JSON_DOUBLE = '", "datatype": "http://www.w3.org/2001/XMLSchema#double"}'
_JSON_INTEGER = '", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}'


def _numbers_json_texts(values: list) -> list[str | None]:
    """:func:`term_json_text` of the term of each encoded bare number (an
    xsd:double or xsd:integer) or typed literal ``n/3``, ``d/3``,
    ``dur/3``, without building the rdflib term; None for any other
    encoded term."""
    return number_texts(values, _JSON_LITERAL, _JSON_DOUBLE, _JSON_INTEGER, _json_typed,
                        _json_typed_tail)


def _json_typed(lex: str, dt: str) -> str:
    """:func:`term_json_text` of a typed literal that keeps its lexical form."""
    return ('{"type": "literal", "value": ' + json.dumps(lex, ensure_ascii=False)
            + ', "datatype": ' + json.dumps(dt, ensure_ascii=False) + "}")


def _json_typed_tail(dt: str) -> str:
    """What follows a plain lexical form in :func:`_json_typed`."""
    return '", "datatype": ' + json.dumps(dt, ensure_ascii=False) + "}"


def json_texts(table: TermNodes, ids: list[int]) -> list[str | None]:
    """The JSON text of each id's term (None: unbound), each distinct term
    written once."""
    return table.mapped("json", term_json_text, ids, _numbers_json_texts)


def _with_parts(direct: Any, parts: Any) -> Any:
    """``direct`` (the texts of the encoded values it writes without a term,
    None for the rest), with ``parts``'s :class:`~.long_parts.TextParts`
    for the long simple and language-tagged literals among the rest."""
    def texts(values: list) -> list[Any]:
        out: list[Any] = direct(values)
        for k in [k for k, t in enumerate(out) if t is None]:
            out[k] = parts(values[k])
        return out
    return texts


def json_texts_parts(table: TermNodes, ids: list[int]) -> list[Any]:
    """:func:`json_texts`, a long literal's as :class:`~.long_parts.TextParts`
    (for a writer that writes part by part: :func:`~.long_parts.write_pieces`)."""
    return table.mapped("json-parts", term_json_text, ids, _JSON_PARTS_DIRECT)


def nt_texts_parts(table: TermNodes, ids: list[int]) -> list[Any]:
    """:func:`nt_texts`, a long literal's as :class:`~.long_parts.TextParts`."""
    return table.mapped("nt-parts", format_term, ids, _NT_PARTS_DIRECT)


def nt_texts(table: TermNodes, ids: list[int]) -> list[str | None]:
    """The N-Triples text of each id's term (None: unbound), each distinct
    term written once."""
    return table.mapped("nt", format_term, ids, format_encoded_numbers)


_JSON_PARTS_DIRECT = _with_parts(_numbers_json_texts, json_parts)
_NT_PARTS_DIRECT = _with_parts(format_encoded_numbers, nt_parts)


def batch_triples_json(batch: AnswerBatch) -> list[str]:
    """Per answer of a CONSTRUCT batch, the ``, "triples": [...]`` part of
    its JSON line ("" for an answer without triples), each distinct term's
    JSON written once."""
    return [', "triples": [' + ", ".join(
        '{"s": ' + s + ', "p": ' + p + ', "o": ' + o + '}' for s, p, o in ts) + ']'
        if ts else "" for ts in batch.template_rows(json_texts, term_json_text)]


def _json_texts(batch: AnswerBatch, parts: bool = False) -> list[tuple[str, list[Any]]]:
    """Per variable of the batch: its JSON key and the JSON text of its
    term in each answer (None: unbound), each distinct term written once;
    with ``parts``, a long literal's as :class:`~.long_parts.TextParts`."""
    out = []
    texts = json_texts_parts if parts else json_texts
    for name in batch.shape.names:
        ids, table = batch.ids(name)          # type: ignore[misc]
        out.append((json.dumps(name, ensure_ascii=False), texts(table, ids)))
    return out


def batch_json_lines(batch: AnswerBatch, time_format: str = "seconds", end: str = "\n",
                     *, long_parts: bool = False) -> list[Any]:
    """The answers of a batch as the lines :class:`JsonLinesWriter` writes
    (each ending in ``end``): the text of ``json.dumps(answer_to_json(a),
    ensure_ascii=False)``, built from each distinct term's JSON text.
    ``long_parts``: a line with a value longer than
    :data:`~epsparql.memo.LONG_KEY` is left as the list of its parts, for
    a writer to write one after the other (a large literal is not copied
    into a line)."""
    sh = batch.shape
    head = '{"query": ' + json.dumps(sh.query, ensure_ascii=False) + ', "start": '
    # json.dumps(time_json(t)), once per distinct time (an instant's answers
    # share their end; equal numbers, 5 and 5.0, give the text of the first
    # seen, starts before ends), looked up per answer in C
    t1s, t2s = batch.starts(), batch.ends()
    memo = {t: json.dumps(time_json(t, time_format)) for t in dict.fromkeys(chain(t1s, t2s))}
    starts = list(map(memo.__getitem__, t1s))
    ends = list(map(memo.__getitem__, t2s))
    cols = _json_texts(batch, long_parts)
    triples: list[str] | None = None
    if sh.form == "CONSTRUCT":
        triples = batch_triples_json(batch)
    elif all(None not in col and (not col or max(map(len, col)) <= LONG_KEY) for _, col in cols):
        # every variable bound in every answer, no long value: the same text
        # as below, made per line by one str.format over the columns (in C)
        # instead of a list of parts per line (about 1 us less a line)
        def esc(x: str) -> str:
            return x.replace("{", "{{").replace("}", "}}")
        template = (esc(head) + '{}, "end": {}, "bindings": {{'
                    + ", ".join(esc(k) + ": {}" for k, _ in cols) + "}}}}" + esc(end))
        return list(map(template.format, starts, ends, *(col for _, col in cols)))
    lines: list[Any] = []
    for j in range(len(starts)):
        # one join: a large value is copied once into its line, not once
        # per concatenation (with long_parts, not at all)
        parts = [head, starts[j], ', "end": ', ends[j], ', "bindings": {']
        sep = ""
        big = False
        for k, col in cols:
            v = col[j]
            if v is not None:
                parts += (sep, k, ": ", v)
                sep = ", "
                big = big or (long_parts and len(v) > LONG_KEY)
        t = triples[j] if triples else ""
        parts += ("}", t, "}", end)
        lines.append(parts if big or (long_parts and len(t) > LONG_KEY) else "".join(parts))
    return lines


def batch_nt_columns(batch: AnswerBatch, parts: bool = False) -> list[tuple[str, list[Any]]]:
    """Per variable of the batch: its name and the N-Triples text of its
    term in each answer (None: unbound), each distinct term written once;
    with ``parts``, a long literal's as :class:`~.long_parts.TextParts`."""
    out = []
    texts = nt_texts_parts if parts else nt_texts
    for name in batch.shape.names:
        ids, table = batch.ids(name)          # type: ignore[misc]
        out.append((name, texts(table, ids)))
    return out


def _first_bound(cols: list[tuple[str, list[Any]]], names: Sequence[str]) -> list[str]:
    """The variables of ``names`` bound in some answer, in the order a
    writer taking the answers one by one would meet them."""
    first = []
    for k, (name, col) in enumerate(cols):
        if name in names:
            j = next((j for j, v in enumerate(col) if v is not None), None)
            if j is not None:
                first.append((j, k, name))
    return [name for _, _, name in sorted(first)]


def _time_from_json(v: Any) -> float | int:
    if isinstance(v, str):
        return parse_time(v)
    return v


def answer_from_json(obj: dict[str, Any]) -> Answer:
    """The inverse of :func:`answer_to_json`."""
    triples = tuple((term_from_json(t["s"]), term_from_json(t["p"]), term_from_json(t["o"]))
                    for t in obj.get("triples", ()))
    return Answer({k: term_from_json(v) for k, v in obj.get("bindings", {}).items()},
                  _time_from_json(obj["start"]), _time_from_json(obj["end"]), triples,
                  obj.get("query", ""))


def read_answers(source: str | os.PathLike | IO) -> Iterator[Answer]:
    """Answers from a JSON lines file written by :class:`JsonLinesWriter`."""
    f, owned = (open(source, encoding="utf-8"), True) if isinstance(source, (str, os.PathLike)) \
        else (source, False)
    try:
        for line in f:
            if line.strip():
                yield answer_from_json(json.loads(line))
    finally:
        if owned:
            f.close()


def read_answers_csv(source: str | os.PathLike | IO) -> Iterator[Answer]:
    """Answers from a CSV file written by :class:`CsvWriter` (the first three
    columns are the query name, start and end; empty cells are unbound)."""
    from .streams import parse_time
    f, owned = (open(source, encoding="utf-8", newline=""), True) \
        if isinstance(source, (str, os.PathLike)) else (source, False)
    try:
        reader = csv.reader(f)
        header = next(reader)
        variables = header[3:]
        for row in reader:
            if not row:
                continue
            b = {v: parse_term(x) for v, x in zip(variables, row[3:]) if x != ""}
            yield Answer(b, parse_time(row[1]), parse_time(row[2]), (), row[0])
    finally:
        if owned:
            f.close()


class AnswerWriter:
    """Base class: ``write(answer)``, ``write_many(answers)``, ``flush()``,
    ``close()``; a context manager.  ``out`` is a path, ``"-"``/None
    (standard output) or a text file object; ``queries`` are the
    :class:`~epsparql.Query` objects whose answers will come (their names,
    forms and variables shape the output); ``time_format`` is
    ``"seconds"`` or ``"iso"`` (``xsd:dateTime`` in UTC)."""

    format = ""

    def __init__(self, out: str | os.PathLike | IO | None = None, queries: Sequence[Any] = (),
                 *, time_format: str = "seconds") -> None:
        if time_format not in ("seconds", "iso"):
            raise ValueError(f"time_format must be 'seconds' or 'iso', got {time_format!r}")
        self.out, self._owned = open_output(out)
        self.queries = {q.name: _info(q) for q in queries}
        self.time_format = time_format
        self.count = 0
        self.closed = False

    def write(self, answer: Answer) -> None:
        """Write one answer."""
        self.write_many([answer])

    def write_many(self, answers: Iterable[Answer]) -> int:
        """Write the answers; returns how many.  Everything is written from
        columns (:meth:`Results.of <epsparql.answers.Results.of>`): each
        distinct term's text is made once, not once per answer."""
        return sum(self._write_batch(b) for b in Results.of(answers).batches)

    def _write_batch(self, batch: AnswerBatch) -> int:
        """Write a batch of one query's answers; returns how many."""
        raise NotImplementedError

    def _batch_info(self, batch: AnswerBatch) -> _QueryInfo:
        info = self.queries.get(batch.shape.query)
        if info is None:
            info = self.queries[batch.shape.query] = _QueryInfo(
                batch.shape.query, batch.shape.form, list(batch.shape.names))
        return info

    def flush(self) -> None:
        self.out.flush()

    def _finish(self) -> None:
        pass

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._finish()
        finally:
            if self._owned:
                self.out.close()
            else:
                try:
                    self.out.flush()
                except (BrokenPipeError, ValueError):
                    pass

    def __enter__(self) -> "AnswerWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class JsonLinesWriter(AnswerWriter):
    """One JSON object a line, see :func:`answer_to_json`."""

    format = "jsonl"

    def _write_batch(self, batch: AnswerBatch) -> int:
        lines = batch_json_lines(batch, self.time_format, long_parts=True)
        if all(type(line) is str for line in lines):
            self.out.write("".join(lines))
        else:                               # a large literal: written in pieces
            for line in lines:
                write_pieces(self.out, (line,) if type(line) is str else line)
        self.count += len(lines)
        return len(lines)


class CsvWriter(AnswerWriter):
    """A header ``query,start,end,var…`` (the variables of all queries, in
    order), then one row per answer; terms in N-Triples syntax, unbound
    variables empty.  With ``variables=`` the columns are given."""

    format = "csv"

    def __init__(self, out: str | os.PathLike | IO | None = None, queries: Sequence[Any] = (),
                 *, time_format: str = "seconds", variables: Sequence[str] | None = None) -> None:
        super().__init__(out, queries, time_format=time_format)
        self._csv = csv.writer(self.out, lineterminator="\n")
        self.variables: list[str] | None = None
        if variables is not None:
            self._header(list(variables))
        elif queries:
            vs: list[str] = []
            for info in self.queries.values():
                vs.extend(v for v in info.variables if v not in vs)
            self._header(vs)

    def _header(self, variables: list[str]) -> None:
        self.variables = variables
        self._csv.writerow(_meta_names(variables, ("query", "start", "end")) + variables)

    def _write_batch(self, batch: AnswerBatch) -> int:
        if not len(batch):
            return 0
        if self.variables is None:              # the header comes from the first answer
            self._header(batch.bound_names(batch.row_ids()[0]))
        cols = dict(batch_nt_columns(batch, parts=True))
        n = len(batch)
        stop = n
        extra: list[str] = []
        for name, col in cols.items():
            if name not in self.variables:
                j = next((j for j, v in enumerate(col) if v is not None), n)
                if j < stop:
                    stop = j
        if stop < n:                            # the answers one by one would stop there
            extra = [name for name, col in cols.items()
                     if name not in self.variables and col[stop] is not None]
        q, fmt = batch.shape.query, self.time_format
        empty = [""] * n
        cells = [cols[v] if v in cols else empty for v in self.variables]
        starts, ends = batch.starts(), batch.ends()
        rows = ([q, format_time(starts[j], fmt), format_time(ends[j], fmt)]
                + [c[j] or "" for c in cells] for j in range(stop))
        if not any(TextParts in set(map(type, c)) for c in cells):
            self._csv.writerows(rows)
        else:                                   # a large literal: written in pieces
            for row in rows:
                self._write_row(row)
        self.count += stop
        if extra:
            raise ValueError(f"answer of {q} binds {', '.join('?' + v for v in extra)}, "
                             f"which is not a column of the CSV output")
        return stop


    def _write_row(self, row: list[Any]) -> None:
        """One row whose long literals (:class:`~.long_parts.TextParts`,
        never in the first column) are written a piece at a time, the
        fields between them by ``csv.writer``: ``a,b,`` ... ``,c,`` ...
        ``,d`` (a field written with an empty one on each side it has a
        neighbour on)."""
        longs = [k for k, v in enumerate(row) if type(v) is TextParts]
        if not longs:
            self._csv.writerow(row)
            return
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="")

        def fields(xs: list[Any]) -> str:
            buf.seek(0)
            buf.truncate()
            w.writerow(xs)
            return buf.getvalue()
        out: list[Any] = [fields(row[:longs[0]] + [""]), csv_field(row[longs[0]])]
        for a, b in zip(longs, longs[1:]):
            out += (fields([""] + row[a + 1:b] + [""]), csv_field(row[b]))
        if longs[-1] + 1 < len(row):
            out.append(fields([""] + row[longs[-1] + 1:]))
        out.append("\n")
        write_pieces(self.out, out)


class SparqlJsonWriter(AnswerWriter):
    """SPARQL 1.1 Query Results JSON: one document per query, written at
    :meth:`close`, one document a line (so one query gives one JSON
    document).  Each document also has ``"query"`` (the query's name).
    SELECT and CONSTRUCT answers are rows of ``results.bindings`` with two
    more variables, ``start`` and ``end`` (underscores are prepended if a
    query uses these names), typed literals (``xsd:integer``/``xsd:decimal``
    seconds, or ``xsd:dateTime`` with ``time_format="iso"``); an ASK query
    gives ``{"head": {}, "boolean": …}``.  Rows wait in temporary files, not
    in memory."""

    format = "sparql-json"

    def __init__(self, out: str | os.PathLike | IO | None = None, queries: Sequence[Any] = (),
                 *, time_format: str = "seconds") -> None:
        super().__init__(out, queries, time_format=time_format)
        self._spool: dict[str, IO] = {}
        self._counts: dict[str, int] = {}
        self._vars: dict[str, list[str]] = {}

    def _time_term(self, t: float | int) -> dict[str, str]:
        if self.time_format == "iso":
            return {"type": "literal", "value": format_time(t, "iso"), "datatype": XSD + "dateTime"}
        text = format_time(t)
        if NUMBER_RE.fullmatch(text) and not any(c in text for c in ".eE"):
            return {"type": "literal", "value": text, "datatype": XSD + "integer"}
        return {"type": "literal", "value": format(Decimal(text), "f"), "datatype": XSD + "decimal"}

    def _write_batch(self, batch: AnswerBatch) -> int:
        info = self._batch_info(batch)
        vs = self._vars.get(info.name)
        if vs is None:
            vs = self._vars[info.name] = list(info.variables)
        cols = _json_texts(batch, parts=True)
        named = [(json.loads(k), t) for k, t in cols]
        vs.extend(_first_bound(named, [n for n, _ in named if n not in vs]))
        f = self._spool.get(info.name)
        if f is None:
            f = self._spool[info.name] = tempfile.TemporaryFile("w+", encoding="utf-8")
        # a spooled row: the JSON terms of its start and end, a tab after
        # each (JSON text has none), then its bindings (`"k": term, ...`)
        dumps = json.dumps
        lines: list[Any] = []
        big = False
        for j, (t1, t2) in enumerate(zip(batch.starts(), batch.ends())):
            parts = [dumps(self._time_term(t1)), "\t", dumps(self._time_term(t2)), "\t"]
            sep = ""
            for k, col in cols:
                v = col[j]
                if v is not None:
                    parts += (sep, k, ": ", v)
                    sep = ", "
                    big = big or type(v) is TextParts
            parts.append("\n")
            lines.append(parts)
        if big:                                 # a large literal: written in pieces
            for line in lines:
                write_pieces(f, line)
        else:
            f.write("".join(chain.from_iterable(lines)))
        self._counts[info.name] = self._counts.get(info.name, 0) + len(lines)
        self.count += len(lines)
        return len(lines)

    def flush(self) -> None:      # documents are written at close()
        pass

    def _finish(self) -> None:
        names = list(self.queries) + [n for n in self._spool if n not in self.queries]
        for name in names:
            info = self.queries.get(name) or _QueryInfo(name)
            n = self._counts.get(name, 0)
            if info.form == "ASK":
                self.out.write(json.dumps({"query": name, "head": {}, "boolean": n > 0}) + "\n")
                continue
            vs = self._vars.get(name, list(info.variables))
            start, end = _meta_names(vs, ("start", "end"))
            head = json.dumps({"query": name, "head": {"vars": vs + [start, end]}}, ensure_ascii=False)
            self.out.write(head[:-1] + ', "results": {"bindings": [')
            f = self._spool.get(name)
            if f is not None:
                f.seek(0)
                key_start = ", " + json.dumps(start, ensure_ascii=False) + ": "
                key_end = ", " + json.dumps(end, ensure_ascii=False) + ": "
                for i, line in enumerate(f):
                    a = line.index("\t")
                    b = line.index("\t", a + 1)
                    n = len(line) - 1
                    if b + 1 < n:               # the bindings, a piece at a time
                        self.out.write("{" if i == 0 else ", {")
                        for p in range(b + 1, n, WRITE_PIECE):
                            self.out.write(line[p:min(p + WRITE_PIECE, n)])
                        self.out.write(key_start)
                    else:
                        self.out.write(("{" if i == 0 else ", {") + key_start[2:])
                    self.out.write(line[:a] + key_end + line[a + 1:b] + "}")
                f.close()
            self.out.write("]}}\n")
        self._spool.clear()


class NTriplesWriter(AnswerWriter):
    """The triples of CONSTRUCT answers in the timestamped line format
    (``s p o start end .``), readable again as a stream.  Answers without
    triples (SELECT, ASK) are counted in :attr:`ignored`, not written."""

    format = "nt"

    def __init__(self, out: str | os.PathLike | IO | None = None, queries: Sequence[Any] = (),
                 *, time_format: str = "seconds") -> None:
        super().__init__(out, queries, time_format=time_format)
        self.ignored = 0

    def _write_batch(self, batch: AnswerBatch) -> int:
        n = len(batch)
        if batch.shape.form != "CONSTRUCT":
            self.ignored += n
            return n
        fmt = self.time_format
        lines = []
        written = 0
        for ts, t1, t2 in zip(batch.template_rows(nt_texts, format_term), batch.starts(),
                              batch.ends()):
            if not ts:
                self.ignored += 1
                continue
            st, en = format_time(t1, fmt), format_time(t2, fmt)
            lines.extend(f"{s} {p} {o} {st} {en} .\n" for s, p, o in ts)
            written += 1
        self.out.write("".join(lines))
        self.count += written
        return n


class TableWriter(AnswerWriter):
    """Aligned columns for a terminal: ``query  start  end  ?var…``.

    Rows are buffered and printed at :meth:`flush` (the command-line tool
    flushes after every batch of the stream); a header is printed when the
    query changes or a column has to widen.  IRIs are abbreviated with the
    prefixes of the queries (and rdf, rdfs, xsd, owl); a cell is cut at
    ``max_width`` characters."""

    format = "table"

    def __init__(self, out: str | os.PathLike | IO | None = None, queries: Sequence[Any] = (),
                 *, time_format: str = "seconds", max_width: int = 40,
                 prefixes: dict[str, str] | None = None) -> None:
        super().__init__(out, queries, time_format=time_format)
        self.max_width = max(8, max_width)
        known: dict[str, str] = {}
        for info in self.queries.values():
            known.update(info.prefixes)
        known.update(prefixes or {})
        self.abbreviate = Prefixes(known)
        self.prefixes = self.abbreviate.prefixes
        self._buffer: list[tuple[str, list[str]]] = []
        self._widths: dict[str, list[int]] = {}
        self._last: str | None = None
        self._cells = object()          # the key of this writer's cell texts per term

    def cell(self, node: Node) -> str:
        """A term as a cell: abbreviated (:class:`~epsparql.rdf.prefixes.Prefixes`)
        and cut at ``max_width`` characters."""
        return self._cut(self.abbreviate.term(node))

    def _cut(self, text: str) -> str:
        if len(text) > self.max_width:
            text = text[:self.max_width - 1] + "…"
        return text

    def _long_cells(self, values: list) -> list[str | None]:
        """The cell of each encoded long simple or tagged literal (its
        N-Triples text, as :meth:`cell` writes it) from the start of its
        lexical form, with no rdflib term or text of the whole; None for
        any other term."""
        out: list[str | None] = []
        for v in values:
            p = nt_parts(v)
            out.append(None if p is None else
                       self._cut(str(TextParts(p.head, p.lex[:self.max_width], p.tail, p.escape))))
        return out

    def _write_batch(self, batch: AnswerBatch) -> int:
        info = self._batch_info(batch)
        fmt = self.time_format
        times = [(format_time(t1, fmt), format_time(t2, fmt))
                 for t1, t2 in zip(batch.starts(), batch.ends())]
        if info.form == "ASK":
            rows = [[info.name, a, b, "true"] for a, b in times]
        else:
            vs = info.variables
            cols = []
            for name in batch.shape.names:
                ids, table = batch.ids(name)    # type: ignore[misc]
                cols.append((name, table.mapped(self._cells, self.cell, ids, self._long_cells)))
            vs.extend(_first_bound(cols, [n for n, _ in cols if n not in vs]))
            by_name = dict(cols)
            empty = [None] * len(times)
            cells = [by_name.get(v, empty) for v in vs]
            rows = [[info.name, a, b] + [c[j] or "" for c in cells]
                    for j, (a, b) in enumerate(times)]
        self._buffer.extend((info.name, r) for r in rows)
        self.count += len(rows)
        return len(rows)

    def _header(self, info: _QueryInfo) -> list[str]:
        if info.form == "ASK":
            return ["query", "start", "end", "ask"]
        return ["query", "start", "end"] + ["?" + v for v in info.variables]

    def flush(self) -> None:
        lines: list[str] = []
        i = 0
        buf = self._buffer
        while i < len(buf):
            name = buf[i][0]
            j = i
            while j < len(buf) and buf[j][0] == name:
                j += 1
            info = self.queries[name]
            header = self._header(info)
            rows = [cells + [""] * (len(header) - len(cells)) for _, cells in buf[i:j]]
            old = self._widths.get(name, [])
            widths = [max([len(header[k])] + [len(r[k]) for r in rows]
                          + ([old[k]] if k < len(old) else [])) for k in range(len(header))]
            if self._last != name or widths != old:
                if self._last is not None:
                    lines.append("")
                lines.append(_row(header, widths))
                lines.append(_row(["-" * w for w in widths], widths))
            self._widths[name] = widths
            self._last = name
            lines.extend(_row(r, widths) for r in rows)
            i = j
        self._buffer = []
        if lines:
            self.out.write("\n".join(lines) + "\n")
        self.out.flush()

    def _finish(self) -> None:
        self.flush()


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def query_prefixes(text: str) -> dict[str, str]:
    """The prefixes a query's text declares (and ``:`` for its base), or {}."""
    if not text:
        return {}
    try:
        from ..language import DEFAULT_BASE, parse_query
        q = parse_query(text)
    except Exception:
        return {}
    out = {"": q.base or DEFAULT_BASE}
    out.update(dict(q.prefixes))
    return out


_WRITERS = {"jsonl": JsonLinesWriter, "csv": CsvWriter, "sparql-json": SparqlJsonWriter,
            "nt": NTriplesWriter, "table": TableWriter}


def answer_writer(format: str, out: str | os.PathLike | IO | None = None,
                  queries: Sequence[Any] = (), **options: Any) -> AnswerWriter:
    """A writer of answers in ``format`` (one of :data:`OUTPUT_FORMATS`)."""
    cls = _WRITERS.get(format)
    if cls is None:
        raise ValueError(f"unknown output format {format!r} (one of {', '.join(OUTPUT_FORMATS)})")
    return cls(out, queries, **options)


def write_answers(answers: Iterable[Answer], out: str | os.PathLike | IO | None = None,
                  format: str = "jsonl", queries: Sequence[Any] = (), **options: Any) -> int:
    """Write answers (e.g. ``q.results()``) to ``out`` in ``format``;
    returns the number written."""
    with answer_writer(format, out, queries, **options) as w:
        w.write_many(answers)
        return w.count
