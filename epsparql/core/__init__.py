"""The Prolog event-processing core and its Python bridge."""
from .engine import CoreEngine, Detection, RuleError
from .runtime import PrologError, runtime
from .terms import Compound, PlString, term

__all__ = ["CoreEngine", "Detection", "RuleError", "PrologError", "runtime",
           "Compound", "PlString", "term"]
