"""The one SPARQL 1.1 grammar text (``sparql11.lark``) and the parsers
built from it: EP-SPARQL's and each stream dialect's are that text with
the road's own rules appended (``%extend`` / ``%override``), so a fix to
SPARQL 1.1 syntax is made once for every road."""
from __future__ import annotations

from pathlib import Path

from lark import Lark

from .lark_cache import cached_lark

__all__ = ["SPARQL11", "sparql_parser"]

#: SPARQL 1.1's query syntax, the part every road shares.
SPARQL11 = Path(__file__).with_name("sparql11.lark").read_text(encoding="utf-8")


def sparql_parser(name: str, extension: str, lexer: str) -> Lark:
    """The LALR parser of SPARQL 1.1 extended by ``extension`` (cached per
    machine under ``name`` and a digest of the whole text).  ``lexer`` is
    the road's: ``basic`` (keywords everywhere) or ``contextual``."""
    return cached_lark(name, SPARQL11 + "\n" + extension, parser="lalr", lexer=lexer,
                       propagate_positions=True, maybe_placeholders=False)
