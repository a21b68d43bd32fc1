"""Answers as a pandas DataFrame, on top of the Arrow table (``arrow.py``).

    from epsparql.io import to_dataframe
    df = to_dataframe(q.results())      # or q.to_dataframe()

Each distinct term is converted once; typed columns come from the Arrow
table (``int64``, ``float64``, ``bool``, ``datetime64[UTC]``, strings).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from rdflib.term import Literal, Node

from ..answers import Results, TermNodes
from ..rdf.codec import encode
from ..rdf.ntriples import format_term, parse_term
from .arrow import EPOCH, answer_variables, column_names, python_kind, segments, to_arrow

if TYPE_CHECKING:                       # pandas is imported when used
    import pandas as pd

    from ..answer import Answer

__all__ = ["to_dataframe"]


def _value(node: Node, values: str) -> Any:
    """A term as a cell: the term, its N-Triples text, or its Python value
    as a typed column holds it (``arrow.python_kind``: numbers, booleans,
    UTC datetimes, strings), other literals (dates, durations, times) as
    rdflib converts them."""
    if values == "rdflib":
        return node
    if values == "nt":
        return format_term(node)
    kind, v = python_kind(encode(node))
    if kind == "datetime":
        return EPOCH + timedelta(microseconds=v)
    if kind == "other":
        v = node.toPython()
        return str(node) if v is None or isinstance(v, Literal) else v
    return v


def _series(col: Any) -> "pd.Series":
    """An Arrow column as a Series: dictionary-encoded text as Python
    strings (object dtype, None for null), the others as Arrow converts them."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    if not pa.types.is_dictionary(col.type):
        return col.to_pandas()
    parts = []
    for chunk in col.chunks:
        texts = np.array(chunk.dictionary.to_pylist(), dtype=object)
        nulls = chunk.is_null().to_numpy(zero_copy_only=False)
        idx = chunk.indices.fill_null(0).to_numpy(zero_copy_only=False)
        out = texts[idx] if len(texts) else np.full(len(chunk), None, dtype=object)
        if nulls.any():
            out[nulls] = None
        parts.append(out)
    return pd.Series(np.concatenate(parts) if parts else np.array([], dtype=object), dtype=object)


def _retype(s: "pd.Series") -> "pd.Series":
    """A variable's column as the type its values share (docs/CLI.md's
    table): what Arrow leaves as objects (booleans with unbound cells,
    durations, integers beyond 64 bits, mixes) is typed from its values;
    timestamps in nanoseconds, UTC."""
    import pandas as pd
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        return s.astype("datetime64[ns, UTC]")
    if s.dtype != object:
        return s
    column = [None if x is None or x is pd.NA or x is pd.NaT else x for x in s.tolist()]
    present = [x for x in column if x is not None]
    if not present:
        return s
    kinds = {_kind(x) for x in present}
    missing = len(present) < len(column)
    if kinds == {"bool"}:
        return pd.Series(column, dtype="boolean" if missing else bool)
    if kinds == {"int"} and not missing and all(-2**63 <= x < 2**63 for x in present):
        return pd.Series(column, dtype="int64")
    if kinds <= {"int", "float"}:
        return pd.Series([float("nan") if x is None else float(x) for x in column],
                         dtype="float64")
    if kinds == {"datetime"}:
        return pd.Series([pd.NaT if x is None else _utc(x) for x in column],
                         dtype="datetime64[ns, UTC]")
    if kinds == {"timedelta"}:
        return pd.Series([pd.NaT if x is None else x for x in column], dtype="timedelta64[ns]")
    return s


def _kind(x: Any) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, (float, Decimal)):
        return "float" if not isinstance(x, Decimal) or x.is_finite() else "other"
    if isinstance(x, datetime):
        return "datetime"
    if isinstance(x, timedelta):
        return "timedelta"
    return "other"


def _utc(x: datetime) -> Any:
    import pandas as pd
    ts = pd.Timestamp(x)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _from_text(s: "pd.Series", values: str) -> "pd.Series":
    """N-Triples text -> Python values (or rdflib terms), once per distinct text."""
    memo: dict[str, Any] = {}

    def conv(x: Any) -> Any:
        if x is None:
            return None
        v = memo.get(x)
        if v is None:
            v = memo[x] = _value(parse_term(x), values)
        return v
    return s.map(conv).astype(object)


def _triples(answers: Results, values: str) -> list[tuple]:
    out: list[tuple] = []
    conv = lambda table, ids: table.mapped(("df", values), lambda n: _value(n, values), ids)  # noqa: E731
    for b in answers.batches:
        out.extend(tuple(ts) for ts in b.template_rows(conv, lambda n: _value(n, values)))
    return out


def to_dataframe(answers: "Iterable[Answer] | Results", *, variables: Sequence[str] | None = None,
                 values: str = "python", times: str = "seconds") -> "pd.DataFrame":
    """One row per answer: columns ``query``, ``start``, ``end``, then one
    per variable (``variables``, else the query's for ``q.results()``, else
    in order of first appearance; ``?`` prepended to a variable called
    ``query``, ``start`` or ``end``), plus ``triples`` if any answer has
    CONSTRUCT triples.  Unbound is ``None`` (``NaN`` in a numeric column).

    ``values``: ``"python"`` (typed columns as in :func:`epsparql.io.to_arrow`:
    ``int64``, ``float64`` (decimals too), ``bool``, ``datetime64[UTC]``,
    strings for IRIs, ``"_:x"`` for blank nodes and lexical forms; a
    column mixing kinds holds the same Python values -- int, float, bool,
    datetime (UTC), str -- and rdflib's for other literals: date,
    Duration, time), ``"rdflib"`` (the rdflib terms) or ``"nt"``
    (N-Triples text).  ``times``: ``"seconds"`` (``int64`` when every time
    is whole, else ``float64``) or ``"datetime"`` (UTC timestamps).
    """
    import pandas as pd

    if values not in ("python", "rdflib", "nt"):
        raise ValueError(f"values must be 'python', 'rdflib' or 'nt', got {values!r}")
    if times not in ("seconds", "datetime"):
        raise ValueError(f"times must be 'seconds' or 'datetime', got {times!r}")
    answers = Results.of(answers)
    names = answer_variables(answers, variables)
    table = to_arrow(answers, variables=names, values="python" if values == "python" else "nt",
                     times=times)
    data: dict[str, Any] = {}
    data["query"] = pd.Series([b.shape.query for b in answers.batches for _ in range(len(b))],
                              dtype=object)
    data["start"] = _retype(table.column("start").to_pandas())
    data["end"] = _retype(table.column("end").to_pandas())
    cols = column_names(names)
    if values == "rdflib":
        _, segs, _, _ = segments(answers, names)
        for v, col in zip(names, cols):
            out: list[Any] = []
            for ids, tab in segs[v]:
                out.extend([None] * tab if ids is None else TermNodes.nodes(tab, ids))
            data[col] = pd.Series(out, dtype=object)
    else:
        for field, col in zip(table.schema, table.columns):
            if field.name not in cols:
                continue
            s = _series(col)
            if values == "python" and (field.metadata or {}).get(b"epsparql.values") == b"nt":
                s = _from_text(s, values)
            data[field.name] = _retype(s) if values == "python" else s
    if values == "python" and data["start"].dtype != data["end"].dtype \
            and times == "seconds":                 # one type for both
        data["start"], data["end"] = (data["start"].astype("float64"),
                                      data["end"].astype("float64"))
    if "triples" in table.column_names:
        data["triples"] = pd.Series(_triples(answers, values), dtype=object)
    return pd.DataFrame(data)
