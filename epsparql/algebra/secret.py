"""The SECRET parameters of a windowed query, explicit and selectable.

SECRET (Botan et al., VLDB 2010) describes a window engine by four
parameters; CSRBench (Dell'Aglio et al., ISWC 2013) uses them to say what
each RDF stream engine answers (docs/DIALECTS.md, "The SECRET
parameters"):

- **scope**: where the windows are, from an origin t0: [t0 + k·β,
  t0 + k·β + ω) (``t0``: seconds, ``first``, the time of the first
  event on the query's streams, or ``grid``, the CQL grid: no t0);
- **content**: which boundary is closed, ``[o,c)`` or ``(o,c]``;
- **report**: when a result is reported: at a window's **close**, on
  content **change** (each arrival), **periodic**\\ ally, each with or
  without **non-empty** (an evaluation whose windows are all empty is
  not reported);
- **tick**: what drives the engine, ``time`` (after every event of one
  time stamp) or ``tuple`` (after each event).

Each dialect has defaults (its reference engine's, the CQL reading's, or
CSRBench's oracle's: ``semantics=csrbench``);
a user sets any of them per query with an argument (``register(...,
window_report=...)``, ``--window-report``) or a pragma in the query text
(``#pragma window report=close,non-empty t0=first``).  An argument wins
over a pragma, a pragma over the dialect's default.  :func:`resolve`
decides each parameter and remembers where it came from, for ``explain``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Any

from ..language.dialects import ast as D
from ..language.errors import QueryError, QuerySyntaxError

__all__ = ["Report", "WindowSettings", "Param", "Secret", "T0_FIRST", "T0_GRID", "parse_report",
           "engine_reading", "ORACLE_DIALECTS",
           "parse_content", "parse_tick", "parse_t0", "read_pragmas", "pragma_at", "resolve"]

#: The readings of a dialect query's windows (docs/DIALECTS.md, "Window
#: semantics"): ``engine``, each dialect as its reference engine answers
#: (CQELS reports on content change: a SLIDE does not delay answers;
#: SPARQLstream's named stream windows are in the default graph, as
#: morph-streams reads them); ``cql``, the CQL reading the project gave
#: every dialect before (a CQELS window with SLIDE has the content of its
#: latest step; a named stream is read only with GRAPH); ``csrbench``, each
#: dialect as CSRBench's oracle reads it (dellaglio/csrbench-oracle): the
#: engine reading, except that CQELS's window at an arrival t is the earliest
#: still open from t0 = 0, cut at t, [t0 + a·β, t], and that C-SPARQL's,
#: CQELS's and SPARQLstream's relations are sets (ISTREAM a set difference).
WINDOW_SEMANTICS = ("engine", "cql", "csrbench")
#: the dialects CSRBench's oracle configures (its csparql, cqels and
#: sparqlstream.properties): under ``csrbench`` their relations are sets
ORACLE_DIALECTS = ("csparql", "cqels", "sparqlstream")


def engine_reading(semantics: str) -> bool:
    """Does ``semantics`` read the dialects as their engines (``engine``, and
    ``csrbench``, which departs from it only where the oracle does)?"""
    return semantics in ("engine", "csrbench")


def check_semantics(semantics: str) -> str:
    """``semantics`` if it is one of :data:`WINDOW_SEMANTICS`, else ValueError."""
    if semantics not in WINDOW_SEMANTICS:
        raise ValueError(f"window semantics must be one of {', '.join(WINDOW_SEMANTICS)}, "
                         f"got {semantics!r}")
    return semantics


#: ``t0=first``: the windows start at the first event on the query's streams.
T0_FIRST = "first"
#: ``t0=grid``: each window's origin closes its windows on multiples of its
#: step (the CQL grid: t0 = -width mod step), the reading of every dialect
#: before issue 23 and of ``semantics=cql``
T0_GRID = "grid"
#: content boundaries: closed-open [o, c) and open-closed (o, c]
_CONTENTS = {"[o,c)": "co", "closed-open": "co", "co": "co",
             "(o,c]": "oc", "open-closed": "oc", "oc": "oc"}
CONTENT_TEXT = {"co": "[o,c)", "oc": "(o,c]"}
TICKS = ("time", "tuple")
#: the report policies a user may choose (LUPOSDATE's "every n triples" and
#: "once, at the end" are its own defaults, not SECRET's)
REPORT_WORDS = ("close", "change", "periodic", "non-empty")
_UNITS = {"ms": Fraction(1, 1000), "s": Fraction(1), "m": Fraction(60), "min": Fraction(60),
          "h": Fraction(3600), "d": Fraction(86400)}


@dataclass(frozen=True)
class Report:
    """A report policy: ``kind`` close, change or periodic (``period``
    seconds), or a dialect's own triples (every ``count`` events) or
    final (once, at the end); ``non_empty``: skip evaluations whose
    windows are all empty."""

    kind: str
    period: Fraction | None = None
    non_empty: bool = False
    count: int | None = None

    def text(self) -> str:
        base = {"close": "close", "change": "change", "final": "end of input"}.get(self.kind)
        if self.kind == "periodic":
            base = f"periodic({_dur(self.period)})"
        elif self.kind == "triples":
            base = f"every {self.count} triples"
        return base + (",non-empty" if self.non_empty else "")

    def policy(self) -> D.Policy:
        """The algebra's report policy (:class:`~epsparql.language.dialects.ast.Policy`)."""
        kind = {"close": "close", "change": "eager", "periodic": "period"}.get(self.kind, self.kind)
        return D.Policy(kind, self.period, self.count, self.non_empty)

    @staticmethod
    def of_policy(p: D.Policy) -> "Report":
        kind = {"close": "close", "eager": "change", "period": "periodic"}.get(p.kind, p.kind)
        return Report(kind, p.period, p.non_empty, p.count)


def _dur(x: Fraction | None) -> str:
    if x is None:
        return "?"
    f = Fraction(x)
    return f"{f.numerator}s" if f.denominator == 1 else f"{float(f):g}s"


def _seconds(text: str) -> Fraction:
    """``5s``, ``500ms``, ``2m``, ``1.5`` (seconds): exact, > 0."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*", text, re.IGNORECASE)
    if not m or m.group(2).lower() not in ("", *_UNITS):
        raise ValueError(f"expected a duration such as 5s, 500ms or 2m, got {text!r}")
    x = Fraction(m.group(1)) * _UNITS.get(m.group(2).lower() or "s", Fraction(1))
    if x <= 0:
        raise ValueError(f"a period must be positive, got {text!r}")
    return x


def parse_report(value: Any) -> Report:
    """``close``, ``change``, ``periodic(5s)`` (or ``periodic=5s``), each
    maybe with ``non-empty``: a comma-separated text or a sequence of
    words.  ValueError otherwise."""
    if isinstance(value, Report):
        return value
    words = [w.strip() for w in (value.split(",") if isinstance(value, str) else value)]
    kinds: list[str] = []
    period = None
    non_empty = False
    for w in words:
        lw = w.lower().replace("_", "-")
        m = re.fullmatch(r"periodic\s*(?:\((.*)\)|[=:](.*))", lw)
        if lw in ("non-empty", "nonempty"):
            non_empty = True
        elif lw in ("close", "window-close", "change", "content-change"):
            kinds.append(lw.split("-")[-1])
        elif m is not None:
            period = _seconds(m.group(1) if m.group(1) is not None else m.group(2))
            kinds.append("periodic")
        elif lw == "periodic":
            raise ValueError("periodic needs its period: periodic(5s)")
        else:
            raise ValueError(f"unknown report policy {w!r}: close, change, periodic(d), "
                             f"non-empty (comma-separated)")
    if len(kinds) != 1:
        raise ValueError("a report policy is one of close, change or periodic(d), with or "
                         f"without non-empty (got {', '.join(words) or 'nothing'})")
    return Report(kinds[0], period, non_empty)


def parse_content(value: Any) -> str:
    """``[o,c)`` / ``closed-open`` -> ``co``; ``(o,c]`` / ``open-closed`` -> ``oc``."""
    key = str(value).replace(" ", "").lower()
    if key not in _CONTENTS:
        raise ValueError(f"unknown window content {value!r}: [o,c) (closed-open) or (o,c] "
                         f"(open-closed)")
    return _CONTENTS[key]


def parse_tick(value: Any) -> str:
    """``time`` or ``tuple`` (``batch``: not implemented)."""
    key = str(value).strip().lower().replace("-driven", "")
    if key == "batch":
        raise ValueError("a batch-driven tick is not implemented: time or tuple")
    if key not in TICKS:
        raise ValueError(f"unknown tick {value!r}: time or tuple")
    return key


def parse_t0(value: Any) -> Fraction | str | None:
    """Seconds (a number or its text) as an exact Fraction, ``first``,
    ``grid``, or None."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in (T0_FIRST, T0_GRID):
        return value.strip().lower()
    if isinstance(value, bool):
        raise ValueError(f"window t0 must be a number of seconds, 'first' or 'grid', "
                         f"got {value!r}")
    try:
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError
            return Fraction(repr(value))
        return Fraction(str(value).strip()) if isinstance(value, str) else Fraction(value)
    except (ValueError, TypeError, ZeroDivisionError):
        raise ValueError(f"window t0 must be a number of seconds, 'first' or 'grid', "
                         f"got {value!r}") from None


@dataclass(frozen=True)
class WindowSettings:
    """What a user asked for (an argument or a pragma): each None when not
    said.  :meth:`of` checks and normalises the values."""

    semantics: str | None = None
    t0: Fraction | str | None = None
    report: Report | None = None
    content: str | None = None
    tick: str | None = None

    @classmethod
    def of(cls, semantics: str | None = None, t0: Any = None, report: Any = None,
           content: Any = None, tick: Any = None) -> "WindowSettings":
        return cls(None if semantics is None else check_semantics(semantics),
                   parse_t0(t0), None if report is None else parse_report(report),
                   None if content is None else parse_content(content),
                   None if tick is None else parse_tick(tick))

    def arguments(self) -> dict[str, Any]:
        """As the ``window_*`` keyword arguments of ``prepare_windowed``."""
        return {f"window_{f.name}": getattr(self, f.name) for f in fields(self)}

    def over(self, other: "WindowSettings") -> "WindowSettings":
        """These settings, with ``other``'s where these say nothing."""
        return replace(self, **{f.name: getattr(other, f.name) for f in fields(self)
                                if getattr(self, f.name) is None})


#: ``#pragma window key=value ...`` in a comment (outside strings and IRIs)
_NOISE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
                    r'|#[^\n]*|<[^<>"{}|^`\\\s]*>')
_PRAGMA = re.compile(r"#\s*pragma\b", re.IGNORECASE)
_KEYS = ("semantics", "t0", "report", "content", "tick")


def pragma_at(text: str) -> tuple[int, int] | None:
    """The (line, column) of the first ``#pragma`` comment of ``text``, or None."""
    for m in _NOISE.finditer(text):
        if m.group(0).startswith("#") and _PRAGMA.match(m.group(0)):
            start = m.start()
            return text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1
    return None


def read_pragmas(text: str) -> tuple[WindowSettings, dict[str, tuple[int, int]]]:
    """The settings of the query's ``#pragma window`` comments, and the
    (line, column) each key was set at.  A pragma is a comment (so every
    dialect's parser leaves it alone) that starts with ``#pragma window``
    and holds ``key=value`` items separated by spaces: ``semantics``
    (engine, cql, csrbench), ``t0`` (seconds or first), ``report`` (close, change,
    periodic(d), non-empty, comma-separated), ``content`` ([o,c) or
    (o,c]), ``tick`` (time, tuple).  A bad pragma is a QuerySyntaxError
    naming its line and column."""
    values: dict[str, Any] = {}
    where: dict[str, tuple[int, int]] = {}
    for m in _NOISE.finditer(text):
        comment = m.group(0)
        if not comment.startswith("#") or not _PRAGMA.match(comment):
            continue
        start = m.start()
        line = text.count("\n", 0, start) + 1
        col0 = start - (text.rfind("\n", 0, start) + 1) + 1

        def at(offset: int) -> tuple[int, int]:
            return line, col0 + offset

        body_at = _PRAGMA.match(comment).end()
        target = re.match(r"\s*(\S+)", comment[body_at:])
        if target is None or target.group(1).lower() != "window":
            raise QuerySyntaxError("a pragma is '#pragma window key=value ...' (keys: "
                                   + ", ".join(_KEYS) + ")",
                                   *at(body_at + (target.start(1) if target else 0)))
        pos = body_at + target.end()
        for item in re.finditer(r"\S+", comment[pos:]):
            word, off = item.group(0), pos + item.start()
            key, eq, value = word.partition("=")
            key = key.lower()
            if key not in _KEYS or not eq:
                raise QuerySyntaxError(f"expected key=value in the window pragma, with key one of "
                                       f"{', '.join(_KEYS)}; found {word!r}", *at(off))
            if key in values:
                raise QuerySyntaxError(f"the window pragma sets {key} twice "
                                       f"(first at line {where[key][0]}, column {where[key][1]})",
                                       *at(off))
            try:
                values[key] = getattr(WindowSettings.of(**{key: value}), key)
            except ValueError as e:
                raise QuerySyntaxError(f"window pragma: {e}", *at(off + len(key) + 1)) from None
            where[key] = at(off)
    return WindowSettings(**values), where


@dataclass(frozen=True)
class Param:
    """One parameter in force: its value (as the engine uses it), its text
    and where it came from (``argument``, ``pragma (line L)``, or a
    default)."""

    value: Any
    text: str
    source: str


@dataclass(frozen=True)
class Secret:
    """The SECRET parameters in force for a query: ``semantics``, ``t0``
    (None: the dialect's grid, windows closing on multiples of their step),
    ``content``, ``report``, ``tick``, and ``scope`` (from_t0: windows
    k >= 0 only, C-SPARQL; grid: every k)."""

    semantics: Param
    t0: Param
    content: Param
    report: Param
    tick: Param
    scope: str
    #: ``bag`` (CQL: ISTREAM and DSTREAM on multiplicities) or ``set`` (each
    #: evaluation's rows without repeats, ISTREAM and DSTREAM set differences:
    #: CSRBench's oracle, ``semantics=csrbench``); not a key of its own
    relation: Param = Param("bag", "bags", "default")

    def chosen(self) -> list[str]:
        """``key=value`` for each parameter set by an argument or a pragma."""
        out = []
        for key in ("semantics", "t0", "content", "report", "tick"):
            p = getattr(self, key)
            if not p.source.startswith("default"):
                value = "first" if p.value == T0_FIRST else (
                    (T0_GRID if p.value is None else _dur(p.value)) if key == "t0"
                    else p.text.replace("-driven", ""))
                out.append(f"{key}={value}")
        return out

    def lines(self) -> list[str]:
        """One line per parameter, for explain."""
        scope = ("; windows from t0 on (k >= 0)" if self.scope == "from_t0"
                 else "; windows for every k (one may open before t0)")
        if self.t0.text.startswith("none"):
            scope = ""
        return [f"semantics {self.semantics.text}  [{self.semantics.source}]",
                f"scope     t0 = {self.t0.text}{scope}  [{self.t0.source}]",
                f"content   {self.content.text}  [{self.content.source}]",
                f"report    {self.report.text}  [{self.report.source}]",
                f"tick      {self.tick.text}  [{self.tick.source}]",
                f"relations {self.relation.text}  [{self.relation.source}]"]


#: the dialects whose windows with a step are, by default in the engine
#: reading, [t0 + kβ, t0 + kβ + ω) closed-open with t0 = 0
#: (docs/DIALECTS.md, "Window semantics"): C-SPARQL's and SPARQLstream's as
#: CSRBench's oracle configures them, RSP-QL's as YASPER
CLOSED_OPEN_DIALECTS = ("csparql", "rspql", "sparqlstream")
#: the dialects whose window-close report skips the evaluations whose
#: windows are all empty, in the engine reading (CSRBench's oracle:
#: ``system.policy.nonemptycontent = true`` in sparqlstream.properties;
#: C-SPARQL's parser says it in every reading)
NON_EMPTY_DIALECTS = ("sparqlstream",)
#: the dialects whose windows start at t0 (k >= 0)
FROM_T0_DIALECTS = ("csparql",)
_TITLES = {"csparql": "C-SPARQL", "cqels": "CQELS-QL", "sparqlstream": "SPARQLstream",
           "streaming-sparql": "Streaming SPARQL", "luposdate": "LUPOSDATE", "rspql": "RSP-QL"}


def resolve(q: D.DialectQuery, args: WindowSettings | None = None,
            pragma: WindowSettings | None = None,
            where: dict[str, tuple[int, int]] | None = None) -> Secret:
    """The parameters in force for ``q``: ``args`` over ``pragma`` over the
    dialect's defaults (docs/DIALECTS.md).  A combination that makes no
    sense is a QueryError (at the pragma's line and column when a pragma
    set it) or, from arguments only, a ValueError."""
    args = args or WindowSettings()
    pragma = pragma or WindowSettings()
    where = where or {}
    title = _TITLES.get(q.dialect, q.dialect)

    def pick(key: str, default: Any, default_source: str) -> tuple[Any, str]:
        a, p = getattr(args, key), getattr(pragma, key)
        if a is not None:
            return a, "argument"
        if p is not None:
            return p, f"pragma, line {where[key][0]}" if key in where else "pragma"
        return default, default_source

    semantics, sem_src = pick("semantics", "engine", "default")
    engine = engine_reading(semantics)
    # CQELS as CSRBench's oracle reads it (cqels.properties: contentchange,
    # nonemptycontent; srbench-queries.properties: window.firstt0 = 0;
    # WindowOperator.getNextWindowScope: [max(t0, t0 + a·β), t + unit))
    oracle_cqels = semantics == "csrbench" and q.dialect == "cqels"
    reading = (f"default of {title}" if semantics == "engine" else "default of the cql reading"
               if semantics == "cql" else f"default of {title} in CSRBench's oracle"
               if q.dialect in ORACLE_DIALECTS else f"default of {title}")
    engine_co = engine and q.dialect in CLOSED_OPEN_DIALECTS
    t0, t0_src = pick("t0", Fraction(0) if engine_co or oracle_cqels else None, reading)
    content, content_src = pick("content", "co" if engine_co or oracle_cqels else "oc", reading)
    default_report = Report.of_policy(q.policy)
    if engine and q.dialect in NON_EMPTY_DIALECTS and default_report.kind == "close":
        default_report = replace(default_report, non_empty=True)
    if oracle_cqels and default_report.kind == "change":
        default_report = replace(default_report, non_empty=True)
    report, report_src = pick("report", default_report,
                              reading if oracle_cqels else f"default of {title}")
    tick, tick_src = pick("tick", "tuple" if report.kind == "triples" else "time",
                          reading if oracle_cqels else f"default of {title}")

    def fail(msg: str, *keys: str) -> Exception:
        for k in keys:
            if getattr(args, k) is None and getattr(pragma, k) is not None and k in where:
                return QueryError(msg, *where[k])
        if any(getattr(args, k) is not None for k in keys):
            return ValueError(msg)
        return QueryError(msg)

    # content [o,c) read on change: at an arrival t the earliest window
    # still open, [o, c) with o <= t < c, holds what arrived in [o, t]
    # (CSRBench's oracle); asked for, or the csrbench default of CQELS
    earliest_open = (report.kind == "change" and content == "co"
                     and (content_src != reading or oracle_cqels))
    if earliest_open and not engine:
        raise fail("content [o,c) with report change (the earliest open window, cut at each "
                   "arrival) is read in the engine and csrbench readings, not in the cql one",
                   "content", "report", "semantics")
    if tick == "tuple" and report.kind not in ("change", "triples"):
        raise fail("a tuple-driven tick is implemented with report change (after each event): "
                   f"with report {report.text()} the answers are those of a time-driven tick",
                   "tick", "report")
    if report.kind == "change" and content == "co" and not earliest_open:
        content = "oc"                      # the dialect's default, read at arrivals
    if t0 == T0_GRID:
        t0 = None                           # each window's origin: the CQL grid
    content_text = CONTENT_TEXT[content]
    if earliest_open:
        content_text = "[o,c): at an arrival t, the earliest window still open, [o, t]"
    if report.kind == "change" and engine and not earliest_open:
        # content change: a window with a step ends at each arrival (no grid)
        t0_text = "none (a window with a step is (t - width, t] at each arrival t)"
    elif t0 is None:
        t0_text = "closes on multiples of the step"
    elif t0 == T0_FIRST:
        t0_text = "the first event's time"
    else:
        t0_text = _dur(t0)
    sets = semantics == "csrbench" and q.dialect in ORACLE_DIALECTS
    relation = (Param("set", "sets: an evaluation's rows without repeats, ISTREAM and DSTREAM "
                      "set differences", reading) if sets else
                Param("bag", "bags: ISTREAM and DSTREAM on multiplicities (CQL)",
                      f"default of {title}"))
    return Secret(Param(semantics, semantics, sem_src),
                  Param(t0, t0_text, t0_src),
                  Param(content, content_text, content_src),
                  Param(report, report.text(), report_src),
                  Param(tick, f"{tick}-driven", tick_src),
                  "from_t0" if engine and t0 is not None and (
                      q.dialect in FROM_T0_DIALECTS or oracle_cqels) else "grid",
                  relation)
