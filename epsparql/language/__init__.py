"""EP-SPARQL query language front end: text -> AST.

>>> q = parse_query("SELECT ?c WHERE { ?c hasStockPrice ?p1 } SEQ { ?c hasStockPrice ?p2 }")
>>> q.where.elements[0].op
'SEQ'

See :mod:`epsparql.language.parser` for the accepted syntax and leniencies
and :mod:`epsparql.language.ast` for the node classes.
"""
from .ast import (AskQuery, BGP, Bind, BinaryOp, ConstructQuery, Exists,
                  Expr, Filter, FunctionCall, Graph, Group, GroupElement, In,
                  Minus, NotIn, Optional, Path, PathAlt, PathInv, PathMod,
                  PathSeq, Pattern, Pos, Projection, Query, SelectQuery,
                  SubSelect, TEMPORAL_OPERATORS, TemporalJoin, Term,
                  TriplePattern, UnaryOp, Union, Var)
from .errors import QueryError, QuerySyntaxError, QueryWarning
from .parser import DEFAULT_BASE, parse_query

__all__ = [
    "parse_query", "QueryError", "QuerySyntaxError", "QueryWarning", "DEFAULT_BASE",
    "AskQuery", "BGP", "Bind", "BinaryOp", "ConstructQuery", "Exists", "Expr",
    "Filter", "FunctionCall", "Graph", "Group", "GroupElement", "In", "Minus",
    "NotIn", "Optional", "Path", "PathAlt", "PathInv", "PathMod", "PathSeq",
    "Pattern", "Pos", "Projection", "Query", "SelectQuery", "SubSelect",
    "TEMPORAL_OPERATORS", "TemporalJoin", "Term", "TriplePattern", "UnaryOp",
    "Union", "Var",
]
