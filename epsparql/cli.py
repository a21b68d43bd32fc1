"""The ``epsparql`` command: run EP-SPARQL queries over a stream file,
check them, or explain how they are compiled.

    epsparql run QUERY.rq... --stream FILE|- [--format nt|jsonl|csv]
                 [--out FILE] [--output-format jsonl|csv|sparql-json|nt|table]
                 [--on-error skip|stop] [--base IRI] [--progress] [--quiet]
                 [--trace [--trace-limit N]]
    epsparql check QUERY.rq...
    epsparql explain QUERY.rq... [--png FILE] [--background FILE]
    epsparql spark run|stream ...     (Apache Spark; see epsparql/spark/cli.py)

Exit codes: 0 ok, 2 usage or query error, 1 runtime failure (a malformed
stream line with ``--on-error stop``, an engine error).  See docs/CLI.md.
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import re
import sys
import time
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
PROG = "epsparql"


class UsageError(Exception):
    """A problem with the command line or its files: exit 2."""


class QueryFileError(Exception):
    """A query that does not parse or compile, already formatted: exit 2."""


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _warning_hook(message, category, filename, lineno, file=None, line=None) -> None:
    _say(f"{PROG}: warning: {message}")


# ---------------------------------------------------------------------------
# queries

@dataclass
class QueryFile:
    path: str
    text: str
    name: str


def _read_queries(paths: Sequence[str]) -> list[QueryFile]:
    out: list[QueryFile] = []
    names: set[str] = set()
    for p in paths:
        if p == "-":
            text, label = sys.stdin.read(), "<stdin>"
        else:
            path = Path(p)
            if not path.is_file():
                raise UsageError(f"query file not found: {p}" if not path.exists()
                                 else f"not a query file: {p}")
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise UsageError(f"cannot read query file {p}: {e}") from None
            label = p
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(label).stem) or "query"
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.add(name)
        out.append(QueryFile(label, text, name))
    return out


def _format_query_error(qf: QueryFile, e: Exception) -> str:
    """``FILE:LINE:COLUMN: message``, the source line and a caret."""
    message = getattr(e, "message", None) or str(e)
    line, column = getattr(e, "line", None), getattr(e, "column", None)
    if line is None:
        return f"{qf.path}: {message}"
    column = column or 1
    lines = qf.text.split("\n")
    src = lines[line - 1].rstrip("\r") if 1 <= line <= len(lines) else None
    out = f"{qf.path}:{line}:{column}: {message}"
    if src is not None:
        pad = "".join(ch if ch == "\t" else " " for ch in src[:column - 1])
        out += f"\n  {src}\n  {pad}^"
    return out


def _register(engine: Any, qfs: Sequence[QueryFile]) -> list[Any]:
    """Register every query; all errors are collected, then raised."""
    from .core.runtime import PrologError
    from .language import QueryError
    queries, errors = [], []
    for qf in qfs:
        try:
            queries.append(engine.register(qf.text, name=qf.name))
        except QueryError as e:
            errors.append(_format_query_error(qf, e))
        except PrologError as e:
            errors.append(f"{qf.path}: the core rejected the compiled rules: {e}")
    if errors:
        raise QueryFileError("\n".join(errors))
    return queries


def _make_engine(base: str | None, **kw: Any) -> Any:
    from .engine import Engine
    return Engine(base=base, **kw)


# ---------------------------------------------------------------------------
# run

@dataclass
class _Progress:
    enabled: bool
    tty: bool
    t0: float = field(default_factory=time.perf_counter)
    last: float = field(default_factory=time.perf_counter)
    shown: bool = False

    def update(self, events: int, answers: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < 2.0:
            return
        self.last = now
        el = max(now - self.t0, 1e-9)
        msg = f"{PROG}: {events:,} events read, {events / el:,.0f} events/s, {answers:,} answers"
        if self.tty:
            sys.stderr.write("\r" + msg + "\033[K")
            sys.stderr.flush()
            self.shown = True
        else:
            _say(msg)

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


def cmd_run(args: argparse.Namespace) -> int:
    from .core.runtime import PrologError
    from .io.results import answer_writer
    from .io.streams import StreamFormatError, StreamReader, guess_format

    qfs = _read_queries(args.queries)
    if args.stream == "-" and "-" in args.queries:
        raise UsageError("the queries and the stream cannot both come from standard input")
    if args.stream != "-":
        sp = Path(args.stream)
        if not sp.exists():
            raise UsageError(f"stream file not found: {args.stream}")
        if sp.is_dir():
            raise UsageError(f"stream path is a directory: {args.stream}")
    if args.trace:                 # one triple at a time, with what it did (epsparql/trace.py)
        from .trace import run_trace
        return run_trace(args, qfs)
    if args.trace_limit is not None:
        raise UsageError("--trace-limit goes with --trace")
    fmt = args.format or guess_format(args.stream)
    if args.batch_size < 1:
        raise UsageError("--batch-size must be at least 1")

    engine = _make_engine(args.base)
    queries = _register(engine, qfs)

    out_format = args.output_format
    if out_format is None:
        out_format = "table" if args.out in (None, "-") and sys.stdout.isatty() else "jsonl"
    if out_format == "nt":
        skipped_forms = [q.name for q in queries if q.form != "CONSTRUCT"]
        if skipped_forms:
            _say(f"{PROG}: note: --output-format nt writes the triples of CONSTRUCT answers; "
                 f"the answers of {', '.join(skipped_forms)} are not written")
    options: dict[str, Any] = {"time_format": args.time_format}
    if out_format == "table" and args.base:
        options["prefixes"] = {"": args.base}
    try:
        writer = answer_writer(out_format, args.out, queries, **options)
    except OSError as e:
        raise UsageError(f"cannot write {args.out}: {e.strerror or e}") from None

    shown_skips = 0

    def on_skip(err: StreamFormatError) -> None:
        nonlocal shown_skips
        if args.quiet:
            return
        shown_skips += 1
        if shown_skips <= 10:
            _say(f"{PROG}: skipped {err}")
        elif shown_skips == 11:
            _say(f"{PROG}: (further skipped lines are counted, not shown)")

    reader = StreamReader(args.stream, fmt, on_error=args.on_error, on_skip=on_skip)
    progress = _Progress(enabled=not args.quiet and (args.progress or sys.stderr.isatty()),
                         tty=sys.stderr.isatty())
    counts = {q.name: 0 for q in queries}
    events = 0
    failure: BaseException | None = None
    code = EXIT_OK
    t0 = time.perf_counter()

    def drain() -> None:
        for q in queries:
            got = q.results()
            if got:
                counts[q.name] += len(got)
                writer.write_many(got)
        writer.flush()

    try:
        rows = iter(reader)
        batch = args.batch_size
        while True:
            chunk: list[tuple] = []
            try:
                for row in rows:
                    chunk.append(row)
                    if len(chunk) >= batch:
                        break
            except (StreamFormatError, EOFError, zlib.error) as e:
                failure = e                # push what was read before, then stop
            except OSError as e:
                if isinstance(e, BrokenPipeError):
                    raise
                failure = e
            if chunk:
                engine.push_many(chunk)
                events += len(chunk)
                drain()
            progress.update(events, sum(counts.values()))
            if failure is not None or len(chunk) < batch:
                break
        if failure is None:
            engine.flush()
            drain()
    except KeyboardInterrupt:
        failure = KeyboardInterrupt()
        code = 130
        try:
            drain()
        except Exception:
            pass
    except PrologError as e:
        failure = e
    except (OSError, EOFError, zlib.error) as e:   # reading the stream failed (I/O, bad gzip)
        if isinstance(e, BrokenPipeError):
            raise
        failure = e
    finally:
        progress.done()
        reader.close()
        writer.close()
    elapsed = time.perf_counter() - t0

    if not args.quiet:
        _summary(engine, queries, counts, events, reader, elapsed)
    if isinstance(failure, StreamFormatError):
        _say(f"{PROG}: error: {failure}")
        if args.on_error == "stop":
            _say(f"{PROG}: stopped at the malformed line; the answers found before it were "
                 f"written (--on-error skip skips such lines)")
        return EXIT_RUNTIME
    if isinstance(failure, KeyboardInterrupt):
        _say(f"{PROG}: interrupted; the answers found so far were written")
        return code
    if isinstance(failure, PrologError):
        _say(f"{PROG}: error in the engine: {failure}")
        return EXIT_RUNTIME
    if failure is not None:
        _say(f"{PROG}: error reading {reader.path}: {failure}")
        return EXIT_RUNTIME
    return EXIT_OK


def _summary(engine: Any, queries: Sequence[Any], counts: dict[str, int], events: int,
             reader: Any, elapsed: float) -> None:
    rate = events / elapsed if elapsed > 0 else 0.0
    parts = [f"{events:,} events in {elapsed:.2f} s ({rate:,.0f} events/s)",
             f"{reader.skipped:,} skipped lines"]
    try:
        late = engine.core.stats().get("late", 0)
    except Exception:
        late = 0
    if late:
        parts.append(f"{late:,} late events (end time before an earlier one)")
    _say(f"{PROG}: " + ", ".join(parts))
    width = max([len(q.name) for q in queries] + [5])
    for q in queries:
        _say(f"  {q.name:<{width}}  {q.form:<9}  {counts[q.name]:,} answers")
    errs = getattr(engine, "errors", [])
    if errs:
        _say(f"  {len(errs):,} errors inside rules (first: {errs[0].message})")


# ---------------------------------------------------------------------------
# check

def cmd_check(args: argparse.Namespace) -> int:
    qfs = _read_queries(args.queries)
    engine = _make_engine(args.base)
    from .core.runtime import PrologError
    from .language import QueryError
    bad = 0
    for qf in qfs:
        try:
            q = engine.register(qf.text, name=qf.name)
        except QueryError as e:
            _say(_format_query_error(qf, e))
            bad += 1
            continue
        except PrologError as e:
            _say(f"{qf.path}: the core rejected the compiled rules: {e}")
            bad += 1
            continue
        what = q.form if q.form == "ASK" else f"{q.form} " + " ".join("?" + v for v in q.variables)
        print(f"{qf.path}: ok ({what.strip()})")
    return EXIT_USAGE if bad else EXIT_OK


# ---------------------------------------------------------------------------
# explain: the algebra tree

def _short_iri(iri: str, prefixes: dict[str, str]) -> str:
    for p, ns in sorted(prefixes.items(), key=lambda x: -len(x[1])):
        if ns and iri.startswith(ns) and len(iri) > len(ns):
            local = iri[len(ns):]
            if all(c.isalnum() or c in "_-." for c in local):
                return f"{p}:{local}"
    return f"<{iri}>"


def _term_text(t: Any, prefixes: dict[str, str]) -> str:
    from rdflib.term import BNode, Literal, URIRef
    kind = type(t).__name__
    if kind == "Var":
        return "?" + t.name
    if isinstance(t, URIRef):
        return _short_iri(str(t), prefixes)
    if isinstance(t, Literal):
        from .io.streams import format_term
        dt = str(t.datatype) if t.datatype is not None else None
        xsd = "http://www.w3.org/2001/XMLSchema#"
        if dt in (xsd + "integer", xsd + "decimal", xsd + "double", xsd + "boolean"):
            return str(t)
        text = format_term(Literal(str(t), lang=t.language or None))
        if dt and dt != xsd + "string":
            text += "^^" + _short_iri(dt, prefixes)
        return text
    if isinstance(t, BNode):
        return "_:" + str(t)
    if kind == "PathSeq":
        return "/".join(_term_text(x, prefixes) for x in t.parts)
    if kind == "PathAlt":
        return "(" + "|".join(_term_text(x, prefixes) for x in t.parts) + ")"
    if kind == "PathInv":
        return "^" + _term_text(t.path, prefixes)
    if kind == "PathMod":
        return _term_text(t.path, prefixes) + t.mod
    return str(t)


def _expr_text(e: Any, prefixes: dict[str, str]) -> str:
    kind = type(e).__name__
    if kind == "BinaryOp":
        return f"({_expr_text(e.left, prefixes)} {e.op} {_expr_text(e.right, prefixes)})"
    if kind == "UnaryOp":
        return f"{e.op}{_expr_text(e.operand, prefixes)}"
    if kind == "FunctionCall":
        name = e.name if isinstance(e.name, str) and not hasattr(e.name, "n3") \
            else _short_iri(str(e.name), prefixes)
        if name in ("GETDURATION", "GETSTARTTIME", "GETENDTIME"):
            name = {"GETDURATION": "getDURATION", "GETSTARTTIME": "getSTARTTIME",
                    "GETENDTIME": "getENDTIME"}[name]
        return f"{name}({', '.join(_expr_text(a, prefixes) for a in e.args)})"
    if kind in ("In", "NotIn"):
        op = "IN" if kind == "In" else "NOT IN"
        return f"({_expr_text(e.expr, prefixes)} {op} ({', '.join(_expr_text(v, prefixes) for v in e.values)}))"
    if kind == "Exists":
        return ("NOT " if e.negated else "") + "EXISTS {…}"
    return _term_text(e, prefixes)


def _duration_text(seconds: Any) -> str:
    if seconds in (None, "inf") or (isinstance(seconds, float) and math.isinf(seconds)):
        return "∞"
    s = float(seconds)
    for unit, n in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= n and (s / n).is_integer():
            return f"{int(s / n)}{unit}"
    return f"{s:g}s"


_ALG_NAMES = {"Join": "Join", "Union_": "Union", "LeftJoin": "LeftJoin (OPTIONAL)",
              "SeqJoin": "SeqJoin (SEQ)", "EqJoin": "EqJoin (EQUALS)",
              "SeqRightJoin": "SeqRightJoin (OPTIONALSEQ)",
              "EqLeftJoin": "EqLeftJoin (EQUALSOPTIONAL)"}


@dataclass
class TreeNode:
    """A node of a tree to print or draw: a label, detail lines, children."""

    label: str
    details: list[str] = field(default_factory=list)
    children: list["TreeNode"] = field(default_factory=list)
    ref: bool = False            # a reference to a node shown elsewhere


def algebra_tree(alg: Any, prefixes: dict[str, str]) -> TreeNode:
    """The algebra of a translated query (after optimise) as a TreeNode."""
    from .algebra.passes import all_vars
    from .io.streams import format_time

    def pat(p: Any) -> TreeNode:
        kind = type(p).__name__
        if kind == "BGP":
            n = TreeNode(f"BGP ({len(p.triples)} triple{'s' if len(p.triples) != 1 else ''})")
            n.details = [" ".join(_term_text(x, prefixes) for x in (t.s, t.p, t.o))
                         for t in p.triples]
            return n
        if kind in _ALG_NAMES:
            keys = sorted(all_vars(p.left) & all_vars(p.right))
            n = TreeNode(_ALG_NAMES[kind])
            if kind != "Union_":
                n.details.append("join on " + (", ".join("?" + k for k in keys) if keys
                                               else "nothing (cross product)"))
            if getattr(p, "expr", None) is not None:
                n.details.append("condition " + _expr_text(p.expr, prefixes))
            n.children = [pat(p.left), pat(p.right)]
            return n
        if kind == "Filter":
            return TreeNode("Filter", [_expr_text(p.expr, prefixes)], [pat(p.pattern)])
        if kind == "Extend":
            return TreeNode("Extend (BIND)", [f"?{p.var.name} := {_expr_text(p.expr, prefixes)}"],
                            [pat(p.pattern)])
        if kind == "Window":
            op = "<" if p.strict else "≤"
            return TreeNode(f"Window (duration {op} {_duration_text(p.seconds)})",
                            [f"{format_time(p.seconds)} s, bounds every binary step below"], [pat(p.pattern)])
        if kind == "Background":
            return TreeNode(f"Background GRAPH {_term_text(p.graph, prefixes)}",
                            [" ".join(_term_text(x, prefixes) for x in (t.s, t.p, t.o))
                             for t in p.triples])
        if kind == "Empty":
            return TreeNode("Empty {}")
        return TreeNode(kind, [repr(p)[:80]])

    body = pat(alg.pattern)
    if alg.form == "SELECT":
        if alg.projection:
            items = []
            for it in alg.projection:
                if isinstance(it, tuple):
                    items.append(f"({_expr_text(it[0], prefixes)} AS ?{it[1].name})")
                else:
                    items.append("?" + it.name)
            proj = " ".join(items)
        else:
            proj = "*"
        return TreeNode(f"SELECT{' DISTINCT' if alg.distinct else ''}", [proj], [body])
    if alg.form == "CONSTRUCT":
        return TreeNode("CONSTRUCT", [" ".join(_term_text(x, prefixes) for x in (t.s, t.p, t.o))
                                      for t in alg.template], [body])
    return TreeNode(alg.form, [], [body])


def _tree_lines(node: TreeNode, prefix: str = "", last: bool = True, top: bool = True) -> list[str]:
    lines = []
    if top:
        head, cont = "", ""
    else:
        head = prefix + ("└─ " if last else "├─ ")
        cont = prefix + ("   " if last else "│  ")
    lines.append(head + node.label)
    bar = "│  " if node.children else "   "
    for d in node.details:
        lines.append(cont + bar + "  " + d if not top else bar + "  " + d)
    for i, c in enumerate(node.children):
        lines.extend(_tree_lines(c, cont if not top else "", i == len(node.children) - 1, False))
    return lines


# ---------------------------------------------------------------------------
# explain: the rule graph

_PL_TOKEN = re.compile(r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|0'(?:\\.|''|.)"""
                       r"""|(?<![A-Za-z0-9_])([A-Z_][A-Za-z0-9_]*)""")
_FUNCTOR_RE = re.compile(r"([a-z][A-Za-z0-9_]*)\(")
_IRI_ATOM = re.compile(r"'((?:https?|urn|file|mailto|tag):[^']*)'")
_BINARY_OPS = ("seq", "and", "par", "equals", "meets", "during", "starts", "finishes")
_JOIN_OPS = _BINARY_OPS + ("optseq", "eqopt", "leftjoin", "cnot")


def _var_tokens(text: str, start: int = 0, end: int | None = None) -> list[str]:
    """The variable tokens of Prolog text, in order (quoted text skipped)."""
    end = len(text) if end is None else end
    return [m.group(1) for m in _PL_TOKEN.finditer(text, start, end) if m.group(1)]


def _close_paren(text: str, i: int) -> int:
    """Index of the bracket closing the one at ``i`` (quotes respected)."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            m = _PL_TOKEN.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c == "0" and text.startswith("0'", i):
            m = _PL_TOKEN.match(text, i)
            i = m.end() if m else i + 2
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_args(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, depth, i, s = [], 0, start, start
    while i < end:
        c = text[i]
        if c in "'\"" or (c == "0" and text.startswith("0'", i)):
            m = _PL_TOKEN.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((s, i))
            s = i + 1
        i += 1
    spans.append((s, end))
    return spans


@dataclass
class _Term:
    functor: str
    start: int
    end: int
    args: list[Any]               # _Term or (start, end) spans of other text


def _parse_term(text: str, start: int = 0, end: int | None = None) -> _Term | None:
    end = len(text) if end is None else end
    m = _FUNCTOR_RE.match(text, start, end)
    if m is None:
        return None
    op = m.end() - 1
    close = _close_paren(text, op)
    if close != end - 1:
        return None
    args: list[Any] = []
    for s, e in _split_args(text, op + 1, close):
        t = _parse_term(text, s, e)
        args.append(t if t is not None else (s, e))
    return _Term(m.group(1), start, end, args)


def _shape(text: str, start: int = 0, end: int | None = None) -> str:
    """Text with variables renamed canonically (singletons as ``_``)."""
    end = len(text) if end is None else end
    counts: dict[str, int] = {}
    for v in _var_tokens(text, start, end):
        counts[v] = counts.get(v, 0) + 1
    names: dict[str, str] = {}

    def rename(m: re.Match) -> str:
        v = m.group(1)
        if not v:
            return m.group(0)
        if v == "_" or counts.get(v, 0) < 2:
            return "_"
        if v not in names:
            names[v] = f"V{len(names)}"
        return names[v]

    return _PL_TOKEN.sub(rename, text[start:end])


def _span(a: Any) -> tuple[int, int]:
    return (a.start, a.end) if isinstance(a, _Term) else a


@dataclass
class GraphNode:
    id: int
    pattern: str
    kind: str                      # the pattern's functor
    op: str                        # the functor under where/within/span wrappers
    window: Any
    children: list[int]
    keys: list[str] | None         # variables shared by the two operands (joins only)
    iris: list[str]
    names: dict[str, set[str]] = field(default_factory=dict)
    stores: list[dict] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)


def analyse_rule_graph(graph: dict, queries: Sequence[Any] = ()) -> dict[int, GraphNode]:
    """Nodes of ``engine.core.rule_graph()`` with their kind, join keys and,
    where they can be traced back to a query, variable names."""
    nodes: dict[int, GraphNode] = {}
    trees: dict[int, _Term | None] = {}
    for n in graph.get("nodes", []):
        text = n["pattern"]
        tree = _parse_term(text)
        trees[n["id"]] = tree
        kind = tree.functor if tree else text.split("(", 1)[0]
        t = tree
        if t is not None and t.functor == "where" and t.args and isinstance(t.args[0], _Term) \
                and t.args[0].functor in _BINARY_OPS:
            t = t.args[0]          # where(binary(L, R), Cond): one join node
        op = t.functor if t is not None else kind
        keys: list[str] | None = None
        if t is not None and op in _JOIN_OPS and len(t.args) >= 2:
            left = _var_tokens(text, *_span(t.args[0]))
            right = set(_var_tokens(text, *_span(t.args[1])))
            keys = [v for v in dict.fromkeys(left) if v in right and v != "_"]
        iris = list(dict.fromkeys(_IRI_ATOM.findall(text)))
        nodes[n["id"]] = GraphNode(n["id"], text, kind, op, n.get("window"),
                                   list(n.get("children", [])), keys, iris)
    for s in graph.get("stores", []):
        if s.get("node") in nodes:
            nodes[s["node"]].stores.append(s)

    # names: from each query's rule text to its root node, then down the edges
    clauses = []                   # (query, head functor, body, {head var: name})
    for q in queries:
        comp = getattr(q, "compiled", None)
        if comp is None:
            continue
        var_names: dict[str, str] = {}
        for clause in re.split(r"\.[ \t]*(?:\n|$)", comp.rules):
            if "<-" not in clause:
                continue
            head_text, body = clause.split("<-", 1)
            functor = head_text.strip().split("(", 1)[0]
            if functor == comp.head:
                args = _var_tokens(head_text)
                if len(args) == len(comp.variables):
                    var_names = dict(zip(args, comp.variables))
            clauses.append((q, functor, body, var_names))
    for r in graph.get("rules", []):
        head = r["head"].split("(", 1)[0]
        root = nodes.get(r["node"])
        if root is None:
            continue
        node_vars = _var_tokens(root.pattern)
        node_iris = set(_IRI_ATOM.findall(root.pattern))
        for q, functor, body, var_names in clauses:
            rule_vars = _var_tokens(body)
            if functor != head or len(rule_vars) != len(node_vars) \
                    or set(_IRI_ATOM.findall(body)) != node_iris:
                continue
            root.rules.append(q.name if functor == q.compiled.head
                              else f"{q.name}, its triples into the stream")
            for rv, nv in zip(rule_vars, node_vars):
                name = var_names.get(rv)
                if name is not None and nv != "_" and not name.startswith("_:"):
                    root.names.setdefault(nv, set()).add(name)
            break

    # propagate down in topological order (parents before children)
    order = _topological(nodes)
    for nid in order:
        parent = nodes[nid]
        tree = trees.get(nid)
        if tree is None or not parent.children:
            continue
        shapes = {c: _shape(nodes[c].pattern) for c in parent.children if c in nodes}
        for c, s, e in _child_occurrences(parent.pattern, tree, shapes):
            child = nodes[c]
            for cv, pv in zip(_var_tokens(child.pattern), _var_tokens(parent.pattern, s, e)):
                if cv != "_" and pv in parent.names:
                    child.names.setdefault(cv, set()).update(parent.names[pv])
    return nodes


def _child_occurrences(text: str, tree: _Term, shapes: dict[int, str]):
    """(child id, start, end) for the maximal subterms of ``tree`` whose
    shape is a child's."""
    stack = [a for a in reversed(tree.args) if isinstance(a, _Term)]
    while stack:
        t = stack.pop()
        sh = _shape(text, t.start, t.end)
        hit = [c for c, s in shapes.items() if s == sh]
        if hit:
            for c in hit:
                yield c, t.start, t.end
            continue
        stack.extend(a for a in reversed(t.args) if isinstance(a, _Term))


def _topological(nodes: dict[int, GraphNode]) -> list[int]:
    indeg = {n: 0 for n in nodes}
    for n in nodes.values():
        for c in n.children:
            if c in indeg:
                indeg[c] += 1
    ready = sorted(n for n, d in indeg.items() if d == 0)
    out = []
    while ready:
        n = ready.pop(0)
        out.append(n)
        for c in nodes[n].children:
            if c in indeg:
                indeg[c] -= 1
                if indeg[c] == 0:
                    ready.append(c)
    out.extend(n for n in nodes if n not in out)       # a cycle: should not happen
    return out


def _var_label(node: GraphNode, v: str) -> str:
    names = sorted(node.names.get(v, ()))
    return "|".join("?" + n for n in names) if names else v


def _node_label(n: GraphNode) -> str:
    kind = n.kind if n.op == n.kind else f"{n.kind}({n.op})"
    return f"n{n.id} {kind}"


def _node_details(n: GraphNode, prefixes: dict[str, str]) -> list[str]:
    d = []
    if n.keys:
        d.append("join on " + ", ".join(_var_label(n, k) for k in n.keys))
    elif n.keys is not None:
        d.append("join on nothing (time condition only)" if n.op != "cnot" else "no shared variables")
    if n.op in _JOIN_OPS and len(n.children) == 1:
        d.append(f"both operands are n{n.children[0]}")
    leaf = _parse_term(n.pattern)
    if leaf is not None and leaf.functor == "where" and leaf.args and isinstance(leaf.args[0], _Term):
        leaf = leaf.args[0]
    if leaf is not None and leaf.functor == "triple" and len(leaf.args) == 3:
        parts = []
        for a in leaf.args:
            s, e = _span(a)
            txt = n.pattern[s:e].strip()
            if re.fullmatch(r"[A-Z_][A-Za-z0-9_]*", txt):
                parts.append(_var_label(n, txt))
            elif txt.startswith("'") and txt.endswith("'"):
                parts.append(_short_iri(txt[1:-1], prefixes))
            else:
                parts.append(_clip(txt, 30))
        d.append("triple " + " ".join(parts))
        iris = [i for i in n.iris if "XMLSchema#" not in i and i not in n.pattern[leaf.start:leaf.end]]
        if n.kind == "where" and iris:
            d.append("predicate " + ", ".join(_short_iri(i, prefixes) for i in iris)
                     + " (or a subproperty)")
    tree = _parse_term(n.pattern)
    if tree is not None and leaf is not None and leaf.functor != "triple":
        if n.kind == "where" and len(tree.args) == 2:
            s, e = _span(tree.args[1])
            cond = n.pattern[s:e]
            inner = set(_var_tokens(n.pattern, *_span(tree.args[0])))
            named = [v for v in dict.fromkeys(_var_tokens(cond)) if v in inner and n.names.get(v)]
            if named:
                d.append("condition on " + ", ".join(_var_label(n, v) for v in named))
            elif "GETDURATION" in cond or "GETSTARTTIME" in cond or "GETENDTIME" in cond:
                d.append("condition on the interval")
            elif "construct_valid_triple" in cond:
                d.append("condition: a valid RDF triple")
            else:
                d.append("condition")
        elif n.kind == "within" and len(tree.args) == 2:
            s, e = _span(tree.args[1])
            try:
                d.append(f"duration <= {_duration_text(float(n.pattern[s:e]))}")
            except ValueError:
                pass
        elif n.kind == "span":
            d.append("binds the interval")
        elif n.kind in ("optseq", "eqopt", "leftjoin"):
            d.append({"optseq": "left optional, ending before right starts",
                      "eqopt": "right optional, over the same interval",
                      "leftjoin": "right optional, ending no later"}[n.kind])
        elif n.kind == "or":
            d.append("either side")
    if n.window not in (None, "inf"):
        d.append(f"window {_duration_text(n.window)}")
    for s in n.stores:
        d.append(f"store {s['name']}: {s['goals']} goals")
    return d


def rule_graph_tree(nodes: dict[int, GraphNode], graph: dict,
                    prefixes: dict[str, str]) -> list[TreeNode]:
    """One TreeNode per rule; a node reached again is a reference."""
    shown: set[int] = set()

    def build(nid: int) -> TreeNode:
        n = nodes[nid]
        if nid in shown:
            return TreeNode(f"n{nid} (shared, shown above)", ref=True)
        shown.add(nid)
        return TreeNode(_node_label(n), _node_details(n, prefixes),
                        [build(c) for c in n.children if c in nodes])

    roots = []
    for r in graph.get("rules", []):
        if r["node"] not in nodes:
            continue
        head = r["head"].split("(", 1)[0]
        names = nodes[r["node"]].rules
        label = f"rule {head}" + (f" -> query {names[0]}" if names else "")
        roots.append(TreeNode(label, [], [build(r["node"])]))
    return roots


def draw_png(path: str, panels: Sequence[tuple[str, list[TreeNode]]], title: str) -> None:
    """Draw trees (algebra, rule graph) side by side with matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def layout(roots: list[TreeNode]):
        pos: list[tuple[TreeNode, float, int]] = []
        edges: list[tuple[int, int]] = []
        next_x = [0.0]

        def place(n: TreeNode, depth: int) -> int:
            idx = len(pos)
            pos.append((n, 0.0, depth))
            kids = [place(c, depth + 1) for c in n.children]
            if kids:
                x = (pos[kids[0]][1] + pos[kids[-1]][1]) / 2
            else:
                x = next_x[0]
                next_x[0] += 1.0
            pos[idx] = (n, x, depth)
            edges.extend((idx, k) for k in kids)
            return idx

        for r in roots:
            place(r, 0)
            next_x[0] += 0.3
        return pos, edges

    layouts = [layout(roots) for _, roots in panels]
    widths = [max([x for _, x, _ in p] + [0]) + 1 for p, _ in layouts]
    depths = [max([d for _, _, d in p] + [0]) + 1 for p, _ in layouts]
    col_w, row_h = 3.0, 1.35
    stacked = sum(widths) > 10 and len(panels) > 1     # wide: one panel above the other
    if stacked:
        fig_w = max(8.0, max(widths) * col_w + 1)
        fig_h = max(4.0, sum(depths) * row_h + 1.5 * len(panels))
        fig, axes = plt.subplots(len(panels), 1, figsize=(min(fig_w, 80), min(fig_h, 80)),
                                 gridspec_kw={"height_ratios": [max(d, 1) for d in depths]},
                                 squeeze=False)
        axes_list = [a[0] for a in axes]
    else:
        fig_w = max(8.0, sum(widths) * col_w + 1)
        fig_h = max(4.0, max(depths) * row_h + 1.5)
        fig, axes = plt.subplots(1, len(panels), figsize=(min(fig_w, 80), min(fig_h, 80)),
                                 gridspec_kw={"width_ratios": [max(w, 1) for w in widths]},
                                 squeeze=False)
        axes_list = list(axes[0])
    fig.suptitle(title, fontsize=12)
    for ax, (name, _), (pos, edges), w, dep in zip(axes_list, panels, layouts, widths, depths):
        ax.set_title(name, fontsize=11, loc="left")
        ax.set_xlim(-0.6, w - 0.4)
        ax.set_ylim(-dep + 0.4, 0.6)
        ax.axis("off")
        texts = []
        for n, x, d in pos:
            lines = [_clip(n.label, 44)] + [_clip(t, 44) for t in n.details[:6]]
            if len(n.details) > 6:
                lines.append(f"… {len(n.details) - 6} more")
            face = "#eeeeee" if n.ref else ("#dbe9f6" if n.label.startswith("n") else "#fdebd0")
            texts.append(ax.text(x, -d, "\n".join(lines), ha="center", va="center", fontsize=8,
                                 family="DejaVu Sans Mono", zorder=2,
                                 bbox=dict(boxstyle="round,pad=0.35", fc=face, ec="#444444",
                                           lw=0.7)))
        for a, b in edges:
            _, xa, da = pos[a]
            _, xb, db = pos[b]
            # centre to centre, clipped at both boxes (texts are drawn first)
            ax.annotate("", xy=(xb, -db), xytext=(xa, -da), zorder=3,
                        arrowprops=dict(arrowstyle="-|>", color="#555555", lw=0.8,
                                        patchA=texts[a].get_bbox_patch(),
                                        patchB=texts[b].get_bbox_patch(),
                                        shrinkA=1, shrinkB=1))
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[:n - 1] + "…"


def cmd_explain(args: argparse.Namespace) -> int:
    from .algebra import optimise, translate
    from .io.results import _DEFAULT_PREFIXES, _query_prefixes
    from .language import QueryError, parse_query

    qfs = _read_queries(args.queries)
    engine = _make_engine(args.base)
    queries = _register(engine, qfs)
    prefixes = dict(_DEFAULT_PREFIXES)
    panels: list[tuple[str, list[TreeNode]]] = []
    alg_roots: list[TreeNode] = []
    out: list[str] = []
    for qf, q in zip(qfs, queries):
        prefixes_q = dict(prefixes)
        prefixes_q.update(_query_prefixes(qf.text))
        if args.base:
            prefixes_q[""] = args.base
        try:
            ast = parse_query(qf.text, base=args.base)
            alg = translate(ast)
            alg = type(alg)(**{**alg.__dict__, "pattern": optimise(alg.pattern)})
        except QueryError as e:        # register() accepted it: should not happen
            raise QueryFileError(_format_query_error(qf, e)) from None
        tree = algebra_tree(alg, prefixes_q)
        tree.label = f"{q.name}: {tree.label}"
        alg_roots.append(tree)
        out.append(f"== {qf.path} (query {q.name}, {q.form})")
        out.append("")
        out.append("algebra (after filter placement and window extraction):")
        out.extend("  " + line for line in _tree_lines(tree))
        out.append("")
        prefixes.update(prefixes_q)
    out.extend(_partitioning(qfs, args))
    graph = engine.core.rule_graph()
    nodes = analyse_rule_graph(graph, queries)
    roots = rule_graph_tree(nodes, graph, prefixes)
    stores = graph.get("stores", [])
    out.append(f"rule graph: {len(nodes)} nodes, {len(graph.get('rules', []))} rules, "
               f"{len(stores)} stores of partial matches")
    out.append("  (a node's variables are named after the query variables they carry; "
               "capital letters are internal)")
    for r in roots:
        out.extend("  " + line for line in _tree_lines(r))
    if stores:
        out.append("")
        out.append("stores (partial matches waiting for the other operand):")
        for s in stores:
            out.append(f"  {s['name']:10}  node n{s['node']}  window {_duration_text(s['window'])}"
                       f"  {s['goals']} goals")
    print("\n".join(out))
    if args.png:
        panels = [("algebra", alg_roots), ("binarised rule graph", roots)]
        title = "epsparql explain: " + ", ".join(Path(qf.path).name for qf in qfs)
        try:
            draw_png(args.png, panels, title)
        except OSError as e:
            raise UsageError(f"cannot write {args.png}: {e.strerror or e}") from None
        _say(f"{PROG}: wrote {args.png}")
    return EXIT_OK


def _partitioning(qfs: Sequence[QueryFile], args: argparse.Namespace) -> list[str]:
    """The Spark partitioning of the queries (epsparql spark), explained."""
    from .algebra import optimise, translate
    from .algebra.partition import NO_SCHEMA, plan, schema_of
    from .language import parse_query
    schema = NO_SCHEMA
    if getattr(args, "background", None):
        from rdflib import Graph
        g = Graph()
        for b in args.background:
            if not Path(b).is_file():
                raise UsageError(f"background file not found: {b}")
            g.parse(b)
        schema = schema_of(g)
    algs = []
    for qf in qfs:
        a = translate(parse_query(qf.text, base=args.base))
        algs.append((qf.name, type(a)(**{**a.__dict__, "pattern": optimise(a.pattern)})))
    lines = ["partitioning (epsparql spark): a key every stream pattern binds"]
    lines.extend("  " + line for line in plan(algs, schema).describe())
    return lines + [""]


# ---------------------------------------------------------------------------
# main

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:          # exit 2 with the usage, no traceback
        self.print_usage(sys.stderr)
        _say(f"{self.prog}: error: {message}")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    from .io.results import OUTPUT_FORMATS
    from .io.streams import FORMATS
    ap = _Parser(prog=PROG, description="Run EP-SPARQL continuous queries over "
                 "timestamped RDF streams.  See docs/CLI.md.")
    ap.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    r = sub.add_parser("run", help="run queries over a stream",
                       description="Run EP-SPARQL queries (CONSTRUCT rules and SELECT/ASK "
                       "queries together, in one engine) over a timestamped stream.")
    r.add_argument("queries", nargs="+", metavar="QUERY.rq", help="query files")
    r.add_argument("--stream", required=True, metavar="FILE",
                   help="the stream: a file (.gz read too) or - for standard input")
    r.add_argument("--format", choices=FORMATS,
                   help="stream format (default: from the file name, else nt)")
    r.add_argument("--out", metavar="FILE", help="write answers here (default: standard output)")
    r.add_argument("--output-format", choices=OUTPUT_FORMATS,
                   help="answer format (default: table on a terminal, else jsonl)")
    r.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                   help="at a malformed stream line: stop with exit code 1 (default), "
                   "or skip and count it")
    r.add_argument("--base", metavar="IRI", help="base IRI of the queries (bare names)")
    r.add_argument("--time-format", choices=("seconds", "iso"), default="seconds",
                   help="write times as seconds (default) or xsd:dateTime in UTC")
    r.add_argument("--progress", action="store_true",
                   help="report progress every ~2 s even if standard error is not a terminal")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    r.add_argument("--batch-size", type=int, default=5000, metavar="N",
                   help="stream rows pushed per engine call (default 5000)")
    r.add_argument("--trace", action="store_true",
                   help="push the stream one triple at a time and show, after each, the "
                   "partial matches it stored, checked or expired and the answers it "
                   "completed (text, or JSON lines with --output-format jsonl)")
    r.add_argument("--trace-limit", type=int, metavar="N",
                   help="with --trace: refuse streams of more than N triples (default 10000)")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("check", help="parse and compile queries",
                       description="Parse and compile queries; report errors as "
                       "FILE:LINE:COLUMN: message.")
    c.add_argument("queries", nargs="+", metavar="QUERY.rq")
    c.add_argument("--base", metavar="IRI", help="base IRI of the queries (bare names)")
    c.set_defaults(func=cmd_check)

    e = sub.add_parser("explain", help="show the algebra and the rule graph",
                       description="Print the algebra tree and the binarised rule graph "
                       "of queries (compiled together), optionally drawn as a PNG.")
    e.add_argument("queries", nargs="+", metavar="QUERY.rq")
    e.add_argument("--png", metavar="FILE", help="also draw both as a PNG image")
    e.add_argument("--base", metavar="IRI", help="base IRI of the queries (bare names)")
    e.add_argument("--background", action="append", metavar="FILE",
                   help="background knowledge the partitioning must respect (RDFS schema)")
    e.set_defaults(func=cmd_explain)

    from .spark.cli import add_parser as add_spark
    add_spark(sub)
    return ap


def _version() -> str:
    try:
        from . import __version__
        return __version__
    except Exception:
        return "?"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``epsparql`` console script."""
    args = build_parser().parse_args(argv)
    warnings.showwarning = _warning_hook
    logging.getLogger("rdflib").setLevel(logging.ERROR)   # ill-typed literals are data, not news
    try:
        return args.func(args)
    except UsageError as e:
        _say(f"{PROG}: error: {e}")
        return EXIT_USAGE
    except QueryFileError as e:
        _say(str(e))
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        _say(f"{PROG}: interrupted")
        return 130
    except Exception as e:                         # a bug, or the environment (no SWI-Prolog…)
        if os.environ.get("EPSPARQL_DEBUG"):
            raise
        _say(f"{PROG}: internal error: {type(e).__name__}: {e} "
             f"(set EPSPARQL_DEBUG=1 for the traceback)")
        return EXIT_RUNTIME


if __name__ == "__main__":
    # run as `python -m epsparql.cli`: use the package's module, so that the
    # exception classes other modules import from it are the same objects
    from epsparql.cli import main as _main
    sys.exit(_main())
