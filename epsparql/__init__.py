"""epsparql: complex event processing and stream reasoning over RDF streams.

EP-SPARQL queries are compiled into event-driven backward-chaining rules
that run in SWI-Prolog (the ETALIS execution model).

    from epsparql import Engine
    engine = Engine()
    q = engine.register(query_text)
    engine.push(s, p, o, start, end)
    engine.flush()
    q.results()                    # a Results: Answer objects, terms decoded when read
    q.results(format="arrow")      # or a pyarrow Table
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: What the package exports, and the module each comes from.  Imported on
#: first use (PEP 562), so ``import epsparql.cli`` starts the command line
#: before the engine's modules load: a Ctrl-C during that start is the
#: command's to report, not a traceback of an import.
_EXPORTS = {
    **dict.fromkeys(["CoreEngine", "Compound", "Detection", "PlString", "PrologError", "term"],
                    ".core"),
    "Results": ".answers",
    **dict.fromkeys(["AnswerLimitError", "Answer", "Engine", "EPQuery", "LimitError", "Query",
                     "StateLimitError", "StreamEndedError", "UnboundedStateWarning",
                     "WindowQuery"], ".query_engine"),
    **dict.fromkeys(["QueryError", "QuerySyntaxError", "QueryWarning", "parse_query"],
                    ".language"),
}

__all__ = ["Engine", "Query", "EPQuery", "WindowQuery", "Answer", "Results", "UnboundedStateWarning", "LimitError",
           "StateLimitError", "AnswerLimitError", "StreamEndedError", "QueryError", "QuerySyntaxError",
           "QueryWarning", "parse_query",
           "CoreEngine", "Compound", "Detection", "PlString", "PrologError", "term"]

if TYPE_CHECKING:
    from .answers import Results
    from .core import CoreEngine, Compound, Detection, PlString, PrologError, term
    from .language import QueryError, QuerySyntaxError, QueryWarning, parse_query
    from .query_engine import (AnswerLimitError, Answer, Engine, EPQuery, LimitError, Query,
                               StateLimitError, StreamEndedError, UnboundedStateWarning,
                               WindowQuery)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'epsparql' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
