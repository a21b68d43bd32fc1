"""A port of CSRBench's oracle (dellaglio/csrbench-oracle, commit ac823b2;
Dell'Aglio et al., "On Correctness in RDF Stream Processor Benchmarking",
ISWC 2013), independent of epsparql: it reads the oracle's own
configuration files and the stream from examples/csrbench/, and evaluates
each window's content with rdflib's SPARQL, as the oracle evaluates its
"boolean query" with Sesame over the window's graphs.

What is ported, class by class (Java names in brackets):

- the configuration [``Config``]: Apache Commons Configuration properties
  (lines ending in ``\\`` continue, each line trimmed; ``include``);
- the window scopes [``WindowOperator.getNextWindowScope``]: window close
  (C-SPARQL, SPARQLstream) and content change (CQELS), with their quirks:
  content change is evaluated at each data time *after* t0 (data at t0 is
  in the window but no evaluation happens at t0), over
  ``[max(t0, t0 + a·slide), now + 1 s)`` with ``a`` the first window
  still open;
- the evaluation [``Oracle.executeStreamQuery``]: the graphs with
  ``from <= τ < to``, the query over their union, the relation stamped
  ``to``; an empty content is skipped (non-empty-content policy);
- the relation-to-stream operators [``StreamProcessorOutputBuilder``]:
  RSTREAM, ISTREAM and DSTREAM of relations that are Java ``HashSet``s of
  [``TimestampedRelationElement``]: two elements are equal when their
  bindings are, or else when the *left one's* numeric columns (a literal
  whose label reads as a double) have equal doubles; elements with a
  numeric column all hash alike, so a relation keeps one element per
  numeric value (q3's ``?value``, q4's ``?avg``);
- the verdict [``StreamProcessorOutput.contains``]: a system's answer is
  correct when its sequence of relations (timestamps ignored) is a
  contiguous run of the oracle's, for some t0 between ``firstt0`` and
  ``firstt0 + size`` (step ``system.timeunit``) [``Oracle.main``];
- the recorded answers [``JsonConverter``]: an empty ``bindings`` list is
  a relation holding one empty element.

Times are milliseconds, as in the oracle.
"""
from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Iterable, Iterator

from rdflib import Graph, Literal, URIRef
from rdflib.plugins.sparql import prepareQuery
from rdflib.term import Node

XSD = "http://www.w3.org/2001/XMLSchema#"

CSRBENCH = Path(__file__).resolve().parents[2] / "examples" / "csrbench"
ORACLE_DIR = CSRBENCH / "oracle"
STREAM_FILE = CSRBENCH / "stream" / "srbench-test.nqt.gz"
ANSWERS_DIR = CSRBENCH / "answers"
SYSTEMS = ("csparql", "cqels", "sparqlstream")


# -- configuration [Config] ----------------------------------------------------
def read_properties(path: Path) -> dict[str, str]:
    """Commons Configuration's reading: comments (#, !), each line trimmed,
    an odd number of trailing backslashes joins the next line, ``include``
    reads another file of the same folder.  (No value here has a comma, so
    its list splitting does not matter.)"""
    props: dict[str, str] = {}
    buf = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not buf and raw.strip()[:1] in ("#", "!", ""):
            continue
        line = raw.strip()
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            buf += line[:-1]
            continue
        line, buf = buf + line, ""
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        key, value = (line[:sep].strip(), line[sep + 1:].strip()) if sep >= 0 else (line, "")
        if key == "include":
            props.update(read_properties(path.parent / value))
        else:
            props[key] = value
    return props


@dataclass(frozen=True)
class Policy:
    """[ReportPolicy] and ``system.output.emptyrelation``."""

    window_close: bool
    non_empty_content: bool
    content_change: bool
    empty_relation: bool


@dataclass(frozen=True)
class ContinuousQuery:
    """[ContinuousQuery]: the boolean query, its window (ms) and R2S."""

    key: str
    boolean_query: str
    size: int
    slide: int
    first_t0: int
    r2s: str                       # rstream | istream | dstream
    answer: str | None             # the recorded answer's file name


def _bool(v: str) -> bool:
    return v.strip().lower() == "true"


def system_config(system: str) -> tuple[Policy, dict[str, ContinuousQuery], dict[str, str]]:
    """The oracle as setup.properties would configure it for ``system``
    (``csparql``, ``cqels`` or ``sparqlstream``): its policy, the seven
    SRBench queries (``srb.query1`` … ``srb.query7``) and the setup's
    own properties."""
    setup = read_properties(ORACLE_DIR / "setup.properties")
    props = {**read_properties(ORACLE_DIR / f"{system}.properties"),
             **read_properties(ORACLE_DIR / "srbench-queries.properties")}
    policy = Policy(_bool(props["system.policy.windowclose"]),
                    _bool(props["system.policy.nonemptycontent"]),
                    _bool(props["system.policy.contentchange"]),
                    _bool(props["system.output.emptyrelation"]))
    queries = {}
    for n in range(1, 8):
        k = f"srb.query{n}"
        answer = props.get(f"{k}.answer")
        queries[k] = ContinuousQuery(k, props[f"{k}.booleanquery"], int(props[f"{k}.window.size"]),
                                     int(props[f"{k}.window.slide"]),
                                     int(props[f"{k}.window.firstt0"]),
                                     props.get(f"{k}.output", "rstream"),
                                     answer.rsplit("/", 1)[-1] if answer else None)
    return policy, queries, setup


# -- the stream [SRBenchImporter] ----------------------------------------------
class Stream(dict):
    """The timestamped graphs by time (ms), and the results of the
    evaluations done over them (a window's result depends only on the
    query and the seconds it holds)."""

    def __init__(self, graphs: dict[int, Graph]) -> None:
        super().__init__(graphs)
        self.results: dict[tuple[str, tuple[int, ...]], list[dict[str, Node]]] = {}

    def evaluate(self, query: str, times: tuple[int, ...]) -> list[dict[str, Node]]:
        key = (_algebra(query), times)          # two texts of one query share results
        if key not in self.results:
            self.results[key] = evaluate(query, [self[t] for t in times])
        return self.results[key]


def load_stream(path: Path = STREAM_FILE) -> Stream:
    """The timestamped graphs: one per second of the stream file, keyed by
    its time in ms (``data_XX.ttl`` at XX·1000).  A line is an N-Quads
    line with a time before its dot; the stream IRI is dropped."""
    by_time: dict[int, list[str]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            head, t, dot = line.rstrip("\n").rsplit(" ", 2)
            assert dot == "."
            triple = head.rsplit(" ", 1)[0]            # drop <stream>
            by_time.setdefault(int(t) * 1000, []).append(triple + " .\n")
    graphs = {}
    for t, lines in sorted(by_time.items()):
        g = Graph()
        g.parse(data="".join(lines), format="nt")
        graphs[t] = g
    return Stream(graphs)


# -- relations [TimestampedRelationElement, TimestampedRelation] ----------------
def _double(term: object) -> float | None:
    """Sesame's ``Literal.doubleValue()``: the label read as an xsd:double,
    or None when it is not one (or the term is not a literal)."""
    if not isinstance(term, Literal):
        return None
    label = str(term).strip()
    special = {"INF": math.inf, "-INF": -math.inf, "NaN": math.nan}
    if label in special:
        return special[label]
    try:
        if label.lower().lstrip("+-") in ("inf", "infinity", "nan"):
            return None
        return float(label)
    except ValueError:
        return None


_NUMERIC = {XSD + t for t in ("integer", "decimal", "double", "float", "int", "long", "short",
                                "byte", "nonNegativeInteger", "positiveInteger",
                                "nonPositiveInteger", "negativeInteger", "unsignedInt",
                                "unsignedLong", "unsignedShort", "unsignedByte")}


def _exact(term: Node) -> object:
    """A term as the exact comparison sees it: a number by its value."""
    if isinstance(term, Literal) and term.datatype is not None and str(term.datatype) in _NUMERIC:
        return ("number", float(str(term)))
    return term


class Element:
    """[TimestampedRelationElement]: a binding (variable -> term).  With
    ``exact``, two elements are equal when their bindings are, numbers
    compared by value (not a port: the stricter test of an engine)."""

    __slots__ = ("binding", "numeric", "key")

    def __init__(self, binding: dict[str, Node], exact: bool = False) -> None:
        self.binding = binding
        self.numeric = {k for k, v in binding.items() if _double(v) is not None}
        self.key = frozenset((k, _exact(v)) for k, v in binding.items()) if exact else None

    def java_equals(self, other: "Element") -> bool:
        if self.key is not None:
            return self.key == other.key
        if self.binding == other.binding:
            return True
        if self.numeric:
            for k in self.numeric:
                d = _double(other.binding.get(k))
                if d is None or _double(self.binding[k]) != d:   # Java: an exception, or unequal
                    return False
            return True
        return False

    def java_hash(self) -> int:
        if self.key is not None:
            return hash(self.key)
        return 31 if self.numeric else hash(frozenset(self.binding.items()))

    def __repr__(self) -> str:
        return "<" + " ".join(f"{k}={v}" for k, v in sorted(self.binding.items())) + ">"


@dataclass
class Relation:
    """[TimestampedRelation]: a Java HashSet of elements and its time."""

    timestamp: int
    elements: list[Element] = field(default_factory=list)

    def contains(self, e: Element) -> bool:
        h = e.java_hash()
        return any(x.java_hash() == h and e.java_equals(x) for x in self.elements)

    def add(self, e: Element) -> None:
        if not self.contains(e):
            self.elements.append(e)

    def minus(self, other: "Relation") -> list[Element]:
        return [e for e in self.elements if not other.contains(e)]

    def java_equals(self, other: "Relation") -> bool:
        """AbstractSet.equals: same size and this contains all of other."""
        return (len(self.elements) == len(other.elements)
                and all(self.contains(e) for e in other.elements))

    def bindings(self) -> list[dict[str, Node]]:
        return [e.binding for e in self.elements if e.binding]


def relation_of(timestamp: int, bindings: Iterable[dict[str, Node]],
                exact: bool = False) -> Relation:
    rel = Relation(timestamp)
    for b in bindings:
        rel.add(Element(b, exact))
    return rel


def empty_element_relation(timestamp: int) -> Relation:
    """A relation holding one empty element: how the oracle (and its JSON
    reader) writes an empty result."""
    return Relation(timestamp, [Element({})])


# -- windows [WindowOperator] --------------------------------------------------
def window_scopes(size: int, slide: int, policy: Policy, t0: int, times: list[int],
                  time_unit: int, sliding: bool = False) -> Iterator[tuple[int, int]]:
    """The scopes [from, to) in the order the oracle evaluates them.
    ``sliding`` (not the oracle's: CQELS 1.x's RangeWindow, which ignores
    SLIDE) makes the content-change scope at an arrival t the last width
    before it, [t + unit - size, t + unit), i.e. (t - size, t] here."""
    actual = t0
    if sliding:
        for t in times:
            if t > t0:
                yield max(t0, t + time_unit - size), t + time_unit
        return
    if policy.window_close and not policy.content_change:
        while True:
            actual += size if actual < size else slide
            yield max(0, actual - size), actual
    elif not policy.window_close and policy.content_change:
        while True:
            later = [t for t in times if t > actual]
            if not later:
                return
            actual = min(later)
            a = 0
            while a * slide + t0 + size <= actual:
                a += 1
            yield max(t0, t0 + a * slide), actual + time_unit
    else:
        raise ValueError("The report policy is not supported yet!")


# -- evaluation [Oracle.executeStreamQuery, StreamProcessorOutputBuilder] -------
def evaluate(query: str, graphs: list[Graph]) -> list[dict[str, Node]]:
    """The boolean query over the union of the window's graphs (its default
    graph), every variable of the result bound or absent."""
    union = Graph(store="SimpleMemory")     # no named graphs: rdflib's fastest store
    for g in graphs:
        for triple in g:
            union.add(triple)
    result = union.query(_prepared(query))
    names = [str(v) for v in result.vars]
    return [{n: row[n] for n in names if row[n] is not None} for row in result]


@cache
def _prepared(query: str):
    return prepareQuery(query)


@cache
def _algebra(query: str) -> str:
    """The query's SPARQL algebra, as text: equal for two texts that differ
    only in prefixes or layout (blank nodes make each parse differ)."""
    return repr(_prepared(query).algebra)


def run(query: ContinuousQuery, policy: Policy, stream: dict[int, Graph], t0: int,
        *, last_timestamp: int, time_unit: int = 1000,
        window: tuple[int, int] | None = None, exact: bool = False,
        sliding: bool = False, bags: bool = False) -> list[Relation]:
    """The oracle's output stream for one t0: a list of relations.
    ``window`` = (size, slide) overrides the configured one; ``exact``
    compares bindings exactly (:class:`Element`); ``sliding`` see
    :func:`window_scopes`; ``bags`` (not the oracle's, which keeps sets)
    makes ISTREAM CQL's on bags: a binding again each time its
    multiplicity grows (its relations then list a binding once per new
    copy)."""
    size, slide = window or (query.size, query.slide)
    times = sorted(stream)
    out: list[Relation] = []
    previous: Relation | None = None
    prev_counts: Counter = Counter()
    for frm, to in window_scopes(size, slide, policy, t0, times, time_unit, sliding):
        if frm > last_timestamp:
            break
        inside = tuple(t for t in times if frm <= t < to)
        if inside:
            result = (stream.evaluate(query.boolean_query, inside) if isinstance(stream, Stream)
                      else evaluate(query.boolean_query, [stream[t] for t in inside]))
            if bags:
                counts = Counter(Element(b, True).key for b in result)
                if query.r2s == "istream":
                    grown = [(k, c - prev_counts.get(k, 0)) for k, c in counts.items()]
                    out.extend([Relation(to, [Element(dict(k), True)
                                              for k, d in grown for _ in range(max(d, 0))])]
                               if any(d > 0 for _, d in grown) else [])
                prev_counts = counts
                continue
            rel = relation_of(to, result, exact)
        elif not policy.non_empty_content:
            if policy.empty_relation:       # added as is: the builder sees it empty
                rel = Relation(to)
            else:
                continue
        else:
            continue
        previous = _add(out, rel, previous, query.r2s, policy.empty_relation)
    return out


def _add(out: list[Relation], rel: Relation, previous: Relation | None, r2s: str,
         empty_relation: bool) -> Relation:
    """StreamProcessorOutputBuilder.addRelation; returns the new previous."""
    if r2s == "rstream":
        emitted = rel
    elif r2s == "istream":
        emitted = rel if previous is None else Relation(rel.timestamp, rel.minus(previous))
    else:
        if previous is None:
            return rel
        emitted = Relation(rel.timestamp, previous.minus(rel))
    if emitted.elements:
        out.append(emitted)
    elif empty_relation:
        emitted.elements.append(Element({}))    # also changes rel when emitted is rel
        out.append(emitted)
    return rel


def last_timestamp(setup: dict[str, str], query: ContinuousQuery, size: int | None = None) -> int:
    """``importer.data.maxtime · importer.data.interval + size`` [Oracle.main]."""
    return (int(setup["importer.data.maxtime"]) * int(setup["importer.data.interval"])
            + (query.size if size is None else size))


# -- verdict [StreamProcessorOutput.contains] ----------------------------------
def contains(oracle: list[Relation], answer: list[Relation]) -> bool:
    """The answer's relations are a contiguous run of the oracle's."""
    if len(oracle) < len(answer):
        return False
    if not answer:
        return True
    for i in range(len(oracle) - len(answer) + 1):
        if all(oracle[i + k].java_equals(answer[k]) for k in range(len(answer))):
            return True
    return False


def matching_t0(system: str, key: str, answer: list[Relation],
                stream: dict[int, Graph]) -> int | None:
    """The first t0 (firstt0 … firstt0 + size, one time unit a step) whose
    oracle output contains ``answer``, as Oracle.main searches; None if none."""
    policy, queries, setup = system_config(system)
    q = queries[key]
    unit = int(setup["system.timeunit"])
    last = last_timestamp(setup, q)
    for t0 in range(q.first_t0, q.first_t0 + q.size + 1, unit):
        if contains(run(q, policy, stream, t0, last_timestamp=last, time_unit=unit), answer):
            return t0
    return None


# -- recorded answers [JsonConverter] ------------------------------------------
def _term(v: dict) -> Node:
    if v["type"] == "uri":
        return URIRef(v["value"])
    if v["type"] == "literal":
        if v.get("datatype"):
            return Literal(v["value"], datatype=URIRef(v["datatype"]))
        if v.get("xml:lang"):
            return Literal(v["value"], lang=v["xml:lang"])
        return Literal(v["value"])
    raise ValueError("not a uri or literal")


def read_answer(data: dict) -> list[Relation]:
    """A system's answer in the oracle's JSON (``{"relations": [...]}``)."""
    out = []
    for r in data["relations"]:
        rel = Relation(int(r["timestamp"]))
        bindings = r["results"]["bindings"]
        if not bindings:
            rel.add(Element({}))
        for b in bindings:
            rel.add(Element({v: _term(b["binding"][v]) for v in r["head"]["vars"]}))
        out.append(rel)
    return out


def recorded_answer(system: str, n: int) -> list[Relation]:
    """examples/csrbench/answers/SYSTEM-answer-N.json.gz, as the oracle reads it."""
    with gzip.open(ANSWERS_DIR / f"{system}-answer-{n}.json.gz", "rt", encoding="utf-8") as f:
        return read_answer(json.load(f))
