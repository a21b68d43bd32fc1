"""Answers as a pandas DataFrame.

    from epsparql.io import to_dataframe
    df = to_dataframe(q.results())
"""
from __future__ import annotations

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
    ``triples`` if any answer has CONSTRUCT triples.  Unbound is ``None``.

    ``values``: ``"python"`` (literals as Python values -- int, float,
    Decimal, bool, datetime, str --, IRIs as str, blank nodes as ``"_:x"``),
    ``"rdflib"`` (the rdflib terms) or ``"nt"`` (N-Triples text).
    ``times``: ``"seconds"`` (floats) or ``"datetime"`` (UTC timestamps).
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
    data: dict[str, list[Any]] = {"query": [a.query for a in answers],
                                  "start": [float(a.start) for a in answers],
                                  "end": [float(a.end) for a in answers]}
    for v in cols:
        name = v
        while name in data:           # a variable called ?query, ?start or ?end
            name = "?" + name
        data[name] = [(_value(a.bindings[v], values) if v in a.bindings else None)
                      for a in answers]
    if any(a.triples for a in answers):
        data["triples"] = [tuple(tuple(_value(x, values) for x in t) for t in a.triples)
                           for a in answers]
    df = pd.DataFrame(data)
    if times == "datetime":
        for c in ("start", "end"):
            df[c] = pd.to_datetime(df[c], unit="s", utc=True)
    for c in df.columns[3:]:
        if c != "triples" and values == "python":
            col = df[c]
            if col.map(lambda x: x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))).all() \
                    and col.notna().any():
                try:
                    df[c] = pd.to_numeric(col)
                except (ValueError, TypeError, OverflowError):
                    pass
    return df
