"""The Prolog event-processing core and its Python bridge."""
from .columns import Columns
from .event_engine import CoreEngine, Detection, RuleError
from .runtime import PrologError
from .terms import Compound, PlString, term

__all__ = ["CoreEngine", "Columns", "Detection", "RuleError", "PrologError",
           "Compound", "PlString", "term"]
