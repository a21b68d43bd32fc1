"""Answers as a pandas DataFrame.

    from epsparql.io import to_dataframe
    df = to_dataframe(q.results())
"""
from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from rdflib.term import BNode, Literal, Node

from ..rdf.ntriples import format_term

if TYPE_CHECKING:                       # pandas is imported when used
    import pandas as pd

    from ..answer import Answer

__all__ = ["to_dataframe"]


def _value(node: Node, values: str) -> Any:
    if values == "rdflib":
        return node
    if values == "nt":
        return format_term(node)
    if isinstance(node, Literal):
        v = node.toPython()
        return str(node) if v is None else v        # ill-typed: the lexical form
    if isinstance(node, BNode):
        return "_:" + str(node)
    return str(node)


def to_dataframe(answers: Iterable["Answer"], *, variables: Sequence[str] | None = None,
                 values: str = "python", times: str = "seconds") -> "pd.DataFrame":
    """One row per answer: columns ``query``, ``start``, ``end``, then one
    per variable (``variables``, else in order of first appearance), plus
    ``triples`` if any answer has CONSTRUCT triples.  Unbound is ``None``
    (``NaN``/``NaT`` in numeric and time columns).

    ``values``: ``"python"`` (literals as Python values -- int, float,
    Decimal, bool, datetime, str --, IRIs as str, blank nodes as ``"_:x"``),
    ``"rdflib"`` (the rdflib terms) or ``"nt"`` (N-Triples text).
    ``times``: ``"seconds"`` or ``"datetime"`` (UTC timestamps).

    Column types (``values="python"``): ``start``/``end`` are int64 when
    every time is a whole number of seconds, else float64 (datetime64 UTC
    with ``times="datetime"``).  A variable column gets the type its values
    share: integers int64 (float64 when some are unbound: NaN), numbers
    with a decimal or double among them float64 (xsd:decimal becomes a
    float: exact Decimal values stay in ``values="rdflib"``), booleans bool
    (nullable ``boolean`` with unbound ones), xsd:dateTime datetime64 in
    UTC (a time without a timezone is taken as UTC, as in streams), day-time
    durations timedelta64; anything else, or a mix, stays object.
    """
    import pandas as pd

    if values not in ("python", "rdflib", "nt"):
        raise ValueError(f"values must be 'python', 'rdflib' or 'nt', got {values!r}")
    if times not in ("seconds", "datetime"):
        raise ValueError(f"times must be 'seconds' or 'datetime', got {times!r}")
    answers = list(answers)
    cols: list[str] = list(variables) if variables is not None else []
    if variables is None:
        seen = set()
        for a in answers:
            for k in a.bindings:
                if k not in seen:
                    seen.add(k)
                    cols.append(k)
    data: dict[str, Any] = {"query": pd.Series([a.query for a in answers], dtype=object)}
    starts, ends = [a.start for a in answers], [a.end for a in answers]
    whole = all(_whole(t) for t in starts) and all(_whole(t) for t in ends)
    data["start"] = _times(starts, whole, times)     # one type for both
    data["end"] = _times(ends, whole, times)
    for v in cols:
        name = v
        while name in data:           # a variable called ?query, ?start or ?end
            name = "?" + name
        column = [(_value(a.bindings[v], values) if v in a.bindings else None) for a in answers]
        data[name] = _typed(column) if values == "python" else pd.Series(column, dtype=object)
    if any(a.triples for a in answers):
        data["triples"] = pd.Series([tuple(tuple(_value(x, values) for x in t)
                                           for t in a.triples) for a in answers], dtype=object)
    return pd.DataFrame(data)


def _whole(t: Any) -> bool:
    return (type(t) is int and -2**63 <= t < 2**63) or \
        (isinstance(t, float) and t.is_integer() and abs(t) < 2**63)


def _times(ts: list[Any], whole: bool, style: str) -> "pd.Series":
    """Answer times: int64 seconds when ``whole``, else float64; or UTC
    timestamps."""
    import pandas as pd
    secs = pd.Series([int(t) for t in ts] if whole else [float(t) for t in ts],
                     dtype="int64" if whole else "float64")
    if style == "datetime":
        return pd.to_datetime(secs, unit="s", utc=True)
    return secs


_INT64 = (-2**63, 2**63 - 1)


def _typed(column: list[Any]) -> "pd.Series":
    """A variable's values as a Series of the type they share (see
    :func:`to_dataframe`), object otherwise."""
    import pandas as pd
    present = [x for x in column if x is not None]
    missing = len(present) < len(column)
    if not present:
        return pd.Series(column, dtype=object)
    kinds = {_kind(x) for x in present}
    if kinds == {"bool"}:
        return pd.Series(column, dtype="boolean" if missing else bool)
    if kinds == {"int"} and not missing and all(_INT64[0] <= x <= _INT64[1] for x in present):
        return pd.Series(column, dtype="int64")
    if kinds <= {"int", "float", "decimal"}:
        return pd.Series([float("nan") if x is None else float(x) for x in column],
                         dtype="float64")
    if kinds == {"datetime"}:
        return pd.Series([pd.NaT if x is None else _utc(x) for x in column],
                         dtype="datetime64[ns, UTC]")
    if kinds == {"timedelta"}:
        return pd.Series([pd.NaT if x is None else x for x in column], dtype="timedelta64[ns]")
    return pd.Series(column, dtype=object)


def _kind(x: Any) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    if isinstance(x, Decimal):
        return "decimal" if x.is_finite() else "other"
    if isinstance(x, datetime):
        return "datetime"
    if isinstance(x, timedelta):
        return "timedelta"
    return "other"


def _utc(x: datetime) -> Any:
    import pandas as pd
    ts = pd.Timestamp(x)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
