"""Algebra -> rules of the Prolog core."""
from .from_algebra import CompiledQuery, compile_query

__all__ = ["CompiledQuery", "compile_query"]
