"""What a Spark job runs: the queries, their partitioning, the router.

A :class:`JobSpec` is built once on the driver (queries prepared in an
engine there, so errors surface before Spark starts, and planned from
their algebra) and shipped to the workers, where :mod:`epsparql.spark.worker`
has it build their engines (:meth:`JobSpec.engine`).
Terms travel through Spark as N-Triples text; a group key is the
canonical N-Triples text of a term (the text the engine's own decoding
gives back), so equal terms always meet in one group.
"""
from __future__ import annotations

import hashlib
import warnings
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..algebra.partition import NO_SCHEMA, KeyPlan, Plan, schema_of
from ..algebra.streams import check_t0

#: The group of the queries that cannot be partitioned: the whole stream.
WHOLE = ""
#: The key of streaming rows that are malformed lines, not triples.
BAD = "\x00bad"
#: How a batch replay's rows reach its engines (epsparql/spark/scan.py).
ROUTINGS = ("auto", "shuffle", "scan")


@dataclass
class JobSpec:
    """Queries (name, text) in registration order, engine options, the
    background as N-Triples text, and the partitioning plan."""

    queries: list[tuple[str, str]]
    base: str | None = None
    reasoning: str = "rdfs"
    background: str = ""
    allowed_lateness: float = 0.0
    gc_every: int = 100
    window_semantics: str | None = None
    #: the t0 of the windows (None: the dialect's; ``first``: the first event's time)
    window_t0: Fraction | str | None = None
    #: the other SECRET parameters as their texts (None: pragma or dialect's default)
    window_report: str | None = None
    window_content: str | None = None
    window_tick: str | None = None
    plan: Plan | None = field(default=None, compare=False)

    @classmethod
    def build(cls, queries: Sequence[tuple[str, str]], *, base: str | None = None,
              reasoning: str = "rdfs", background: Sequence[Any] = (),
              allowed_lateness: float = 0.0, gc_every: int = 100,
              partition: bool = True, window_semantics: str | None = None,
              window_t0: Fraction | str | None = None, window_report: str | None = None,
              window_content: str | None = None,
              window_tick: str | None = None) -> "JobSpec":
        """Check the queries (a QueryError names the query, line and column),
        load the background files or graphs, and plan the partitioning.
        ``partition=False`` runs everything as one group."""
        from rdflib import Graph
        g = Graph()
        for src in background:
            if isinstance(src, Graph):
                g += src
            else:
                g.parse(str(src))
        bg_text = g.serialize(format="nt") if len(g) else ""
        spec = cls([tuple(q) for q in queries], base, reasoning, bg_text,
                   float(allowed_lateness), gc_every, window_semantics,
                   check_t0(window_t0), window_report, window_content, window_tick)
        # the queries registered in a throwaway engine: compile errors now, not
        # in a worker; their prepared algebra gives the partitioning
        eng = spec.engine([n for n, _ in spec.queries], load_background=False)
        try:
            schema = schema_of(g, entailment=reasoning != "none") if len(g) else NO_SCHEMA
            p = eng.partitioning(schema)
        finally:
            eng.close()
        if not partition:
            p = Plan([KeyPlan(k.query, None, reason="partitioning switched off")
                      for k in p.queries], schema)
        spec.plan = p
        return spec

    def engine(self, names: Sequence[str], load_background: bool = True,
               on_late: Any = None) -> Any:
        """An :class:`~epsparql.Engine` with the options of this spec and the
        queries ``names`` (of :attr:`queries`) registered, in order."""
        from ..query_engine import Engine, UnboundedStateWarning
        eng = Engine(base=self.base, reasoning=self.reasoning, gc_every=self.gc_every,
                     allowed_lateness=self.allowed_lateness, on_late=on_late,
                     window_semantics=self.window_semantics, window_t0=self.window_t0,
                     window_report=self.window_report, window_content=self.window_content,
                     window_tick=self.window_tick)
        if load_background and self.background:
            eng.load_background(self.background, format="nt")
        wanted = set(names)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnboundedStateWarning)
            for name, text in self.queries:
                if name in wanted:
                    eng.register(text, name=name)
        return eng

    # -- partitioning -------------------------------------------------------
    @property
    def key_vars(self) -> dict[str, str | None]:
        return {k.query: k.variable for k in self.plan.queries}

    @property
    def keyed(self) -> list[str]:
        return [k.query for k in self.plan.keyed]

    @property
    def whole(self) -> list[str]:
        return [k.query for k in self.plan.whole]

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(sorted(self.plan.positions))

    @cached_property
    def windowed(self) -> bool:
        """Has the job queries of the stream dialects (windows)?  Their
        groups are advanced to the last time stamp of the whole input before
        they are flushed (algebra/window_partition.py)."""
        from ..language.dialects import detect_dialect
        return any(detect_dialect(text) is not None for _, text in self.queries)

    @property
    def per_key(self) -> bool:
        """Must each key group run on its own?  Yes when a triple can go to
        several keyed groups (keys read from more than one position): a
        partition then holds copies of a triple for different groups.
        Otherwise each triple is in one keyed group, every answer's
        triples are in its key's partition, and one engine can run a
        whole partition in time order (no per-key reset)."""
        return len(self.positions) > 1

    @property
    def fingerprint(self) -> str:
        """Identifies the engines this spec builds (cache key in workers)."""
        h = hashlib.sha1()
        for part in (repr(self.queries), repr(self.base), self.reasoning, self.background,
                     repr(self.allowed_lateness), repr(self.gc_every), repr(self.key_vars),
                     repr(self.window_semantics), repr(self.window_t0),
                     repr((self.window_report, self.window_content, self.window_tick))):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()[:16]


def group_part(key: str) -> int:
    """A stable hash of a group key (its rows' partition, modulo their number)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) & 0x7FFFFFFF


def canonical_key(text: str) -> str:
    """The N-Triples text of a term as the engine gives it back (literals
    through the engine's codec: language tags lower-cased, and so on)."""
    from ..rdf.codec import decode, encode
    from ..rdf.ntriples import format_term, parse_term
    term = parse_term(text)
    if text.startswith('"'):
        term = decode(encode(term))
    return format_term(term)


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files named by paths, directories (their files, sorted, hidden and
    ``_``-prefixed ones skipped) and glob patterns, in order, each once."""
    import glob
    out: list[str] = []
    for p in paths:
        matches = sorted(glob.glob(p)) if any(c in p for c in "*?[") else [p]
        if not matches:
            raise FileNotFoundError(f"no stream file matches {p}")
        for m in matches:
            mp = Path(m)
            if mp.is_dir():
                files = sorted(str(f) for f in mp.rglob("*") if f.is_file()
                               and not any(part.startswith((".", "_")) for part in f.relative_to(mp).parts))
            elif mp.is_file():
                files = [str(mp)]
            else:
                raise FileNotFoundError(f"stream file not found: {m}")
            for f in files:
                if f not in out:
                    out.append(f)
    return out
