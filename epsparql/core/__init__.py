"""The Prolog event-processing core and its Python bridge."""
from .engine import CoreEngine, Detection, RuleError
from .runtime import PrologError
from .terms import Compound, PlString, term

__all__ = ["CoreEngine", "Detection", "RuleError", "PrologError",
           "Compound", "PlString", "term"]
