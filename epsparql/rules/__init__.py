"""Algebra -> rules of the Prolog core."""
from .compile import CompiledQuery, compile_query

__all__ = ["CompiledQuery", "compile_query"]
