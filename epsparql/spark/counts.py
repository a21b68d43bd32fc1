"""What a job reports, counted where the rows are made, without a second pass.

Each task adds one :class:`TaskCounts` to a Spark accumulator under its
own name (``read``/``run`` and the piece or partition index), so that
counting costs nothing beyond the task and a task that runs again (a
retry, a recomputed stage, the sampling pass of a sort) replaces its own
entry instead of adding to it: a task's rows are a function of its input,
so every run of it counts the same.  The driver sums the entries.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyspark.accumulators import AccumulatorParam

#: Messages kept per task (skipped lines, rule errors, late rows).
KEEP = 10


@dataclass
class TaskCounts:
    """One task's counts; lists keep the first :data:`KEEP` messages."""

    rows: int = 0                 # read: triples read; run: rows pushed into engines
    skipped: int = 0
    skipped_messages: list[str] = field(default_factory=list)
    answers: dict[str, int] = field(default_factory=dict)
    late: int = 0
    late_messages: list[str] = field(default_factory=list)
    errors: int = 0
    error_messages: list[str] = field(default_factory=list)

    def note(self, kind: str, message: str) -> None:
        """Count a ``skipped`` line, ``late`` row or rule ``error``, keeping
        its message."""
        count = "errors" if kind == "error" else kind
        setattr(self, count, getattr(self, count) + 1)
        kept = getattr(self, f"{kind}_messages")
        if len(kept) < KEEP:
            kept.append(message)

    def answered(self, query: str, n: int) -> None:
        self.answers[query] = self.answers.get(query, 0) + n


class _PerTask(AccumulatorParam):
    """A dict of task name -> TaskCounts; a task's later entry wins."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, a: dict, b: dict) -> dict:
        a.update(b)
        return a


def accumulator(spark: Any) -> Any:
    """A fresh accumulator for one job's counts."""
    return spark.sparkContext.accumulator({}, _PerTask())


class LocalCounts:
    """What the stage bodies count into when run outside Spark (tests,
    benchmarks): the same entries, in this process."""

    def __init__(self) -> None:
        self.value: dict = {}

    def add(self, entries: dict) -> None:
        self.value.update(entries)


@dataclass
class JobTotals(TaskCounts):
    """The sums over every task of a job: ``events`` the triples read,
    ``routed`` the rows pushed into engines (a triple in k groups: k);
    the first messages of each kind in task order."""

    events: int = 0
    routed: int = 0

    @classmethod
    def of(cls, entries: dict) -> "JobTotals":
        t = cls()
        for (stage, _), c in sorted(entries.items()):
            if stage == "read":
                t.events += c.rows
            else:
                t.routed += c.rows
            for q, n in c.answers.items():
                t.answered(q, n)
            for kind, count in (("skipped", "skipped"), ("late", "late"), ("error", "errors")):
                setattr(t, count, getattr(t, count) + getattr(c, count))
                mine = getattr(t, f"{kind}_messages")
                mine.extend(getattr(c, f"{kind}_messages")[:max(0, KEEP - len(mine))])
        return t

    @property
    def per_query(self) -> dict[str, int]:
        return self.answers
