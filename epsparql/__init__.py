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
from .core import CoreEngine, Compound, Detection, PlString, PrologError, term
from .answers import Results
from .query_engine import (AnswerLimitError, Answer, Engine, EPQuery, LimitError, Query,
                           StateLimitError, StreamEndedError, UnboundedStateWarning, WindowQuery)
from .language import QueryError, QuerySyntaxError, QueryWarning, parse_query

__version__ = "0.1.0"
__all__ = ["Engine", "Query", "EPQuery", "WindowQuery", "Answer", "Results", "UnboundedStateWarning", "LimitError",
           "StateLimitError", "AnswerLimitError", "StreamEndedError", "QueryError", "QuerySyntaxError",
           "QueryWarning", "parse_query",
           "CoreEngine", "Compound", "Detection", "PlString", "PrologError", "term"]
