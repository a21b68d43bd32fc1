"""epsparql: complex event processing and stream reasoning over RDF streams.

EP-SPARQL queries are compiled into event-driven backward-chaining rules
that run in SWI-Prolog (the ETALIS execution model).
"""
from .core import CoreEngine, Compound, Detection, PlString, PrologError, term

__version__ = "0.1.0"
__all__ = ["CoreEngine", "Compound", "Detection", "PlString", "PrologError", "term"]
