"""The EP-SPARQL algebra (section 4.2): nodes, translation, rewrites."""
from .nodes import *  # noqa: F401,F403
from .passes import optimise
from .translate import translate

__all__ = ["translate", "optimise"]
