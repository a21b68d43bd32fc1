"""Parse tree -> AST for SPARQL 1.1, the part of ``sparql11.lark`` every
front end shares.

:class:`SparqlBuilder` builds the nodes of :mod:`epsparql.language.ast`
from the shared rules (prologue, terms, triples, paths, group patterns,
expressions, built-in calls, SELECT clauses); EP-SPARQL's builder
(parser.py) and the stream dialects' (dialects/builder.py) subclass it
for their own rules and query forms, so a term or an expression means
the same on every road and is refused with the same message.  Terms are
rdflib terms, variables :class:`~.ast.Var`, positions :class:`~.ast.Pos`;
a sign in front of a number literal is folded into it (``-5`` and ``- 5``
are ``Literal('-5')``).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from urllib.parse import urljoin

from lark import Token, Tree, v_args
from lark.tree import Meta
from lark.visitors import Transformer_NonRecursive
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from ..rdf.ntriples import SCHEME_RE, absolute_iri_problem
from . import ast as A
from .errors import QueryError, QuerySyntaxError

__all__ = ["SparqlBuilder", "BUILTIN_ARITY", "AGGREGATES", "PREDECLARED", "SelectClause",
           "Args", "pos_of", "error_at", "check_template", "check_base"]

#: Prefixes a query may use without declaring them.
PREDECLARED = {"xsd": str(XSD), "rdf": str(RDF), "rdfs": str(RDFS), "owl": str(OWL)}

#: Built-in functions: upper-case name -> (min args, max args or None).
BUILTIN_ARITY: dict[str, tuple[int, int | None]] = {
    **{n: (1, 1) for n in (
        "STR", "LANG", "DATATYPE", "BOUND", "IRI", "ABS", "CEIL", "FLOOR",
        "ROUND", "STRLEN", "UCASE", "LCASE", "ENCODE_FOR_URI", "YEAR",
        "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE", "TZ",
        "MD5", "SHA1", "SHA256", "SHA384", "SHA512", "ISIRI", "ISBLANK",
        "ISLITERAL", "ISNUMERIC")},
    **{n: (2, 2) for n in (
        "LANGMATCHES", "CONTAINS", "STRSTARTS", "STRENDS", "STRBEFORE",
        "STRAFTER", "STRLANG", "STRDT", "SAMETERM")},
    **{n: (0, 0) for n in (
        "RAND", "NOW", "UUID", "STRUUID",
        "GETDURATION", "GETSTARTTIME", "GETENDTIME")},
    "BNODE": (0, 1), "SUBSTR": (2, 3), "REPLACE": (3, 4), "REGEX": (2, 3),
    "IF": (3, 3), "CONCAT": (0, None), "COALESCE": (0, None),
}
_BUILTIN_ALIASES = {"ISURI": "ISIRI", "URI": "IRI"}
#: SPARQL 1.1's aggregates.
AGGREGATES = frozenset({"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"})

_NUMBER_TYPES = {"INTEGER": XSD.integer, "DECIMAL": XSD.decimal, "DOUBLE": XSD.double}
_STRING_QUOTES = {"STRING_LITERAL1": 1, "STRING_LITERAL2": 1,
                  "STRING_LITERAL_LONG1": 3, "STRING_LITERAL_LONG2": 3}
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f",
          '"': '"', "'": "'", "\\": "\\"}


# ------------------------------------------------------------ positions

def pos_of(x: object) -> A.Pos | None:
    """The position of a token, a tree's meta, a Pos or a node (None if unknown)."""
    if isinstance(x, A.Pos):
        return x
    if isinstance(x, Token):
        return A.Pos(x.line or 1, x.column or 1)
    if isinstance(x, Meta):
        return None if x.empty else A.Pos(x.line, x.column)
    return getattr(x, "pos", None)


def error_at(message: str, where: object) -> QueryError:
    """QueryError positioned at a token, meta, Pos or node."""
    pos = pos_of(where)
    return QueryError(message, pos.line if pos else None, pos.column if pos else None)


def check_base(base: str | None) -> None:
    """ValueError unless ``base`` (a query's base given by its caller) is
    None or an absolute IRI."""
    if base is not None:
        problem = absolute_iri_problem(base)
        if problem is not None:
            raise ValueError(f"base must be an absolute IRI, got {base!r}: {problem}")


def check_template(triples: tuple[A.TriplePattern, ...]) -> None:
    """CONSTRUCT templates produce triples, so predicates must be plain."""
    for triple in triples:
        if not isinstance(triple.p, (URIRef, A.Var)):
            raise error_at("property paths are not allowed in a CONSTRUCT template", triple.pos)


# ------------------------------------------------ intermediate values

@dataclass(frozen=True)
class Args:
    """A parsed argument list."""

    exprs: tuple
    distinct: bool = False
    star: bool = False
    separator: str | None = None


@dataclass(frozen=True)
class SelectClause:
    """A parsed SELECT clause (``r2s``: a dialect's relation-to-stream word)."""

    projection: A.Projection
    distinct: bool
    reduced: bool
    pos: A.Pos | None
    r2s: str | None = None


@dataclass(frozen=True)
class _BNodeList:
    """A ``[ p o ; ... ]`` term: its blank node and the triples inside it."""

    node: BNode
    triples: tuple[A.TriplePattern, ...]


@dataclass(frozen=True)
class _Signed:
    """A product that starts with a signed number, e.g. ``-5 * ?x``."""

    expr: object
    pos: A.Pos | None


# ----------------------------------------------------------- the builder

@v_args(meta=True)
class SparqlBuilder(Transformer_NonRecursive):
    """Builds AST nodes from the shared SPARQL 1.1 rules (one instance a
    parse).  Lark transforms children before parents and left to right, so
    the prologue (PREFIX/BASE) is read before any IRI that needs it.

    Hooks a road overrides: :meth:`undeclared_namespace` (EP-SPARQL's
    default ``:``), :meth:`check_literal`, :attr:`builtins`,
    :meth:`aggregate`, :meth:`function_alias`; and the rules of its own."""

    #: the built-in functions of this road (name -> (min, max or None) args)
    builtins: dict[str, tuple[int, int | None]] = BUILTIN_ARITY

    def __init__(self, base: str | None = None) -> None:
        super().__init__()
        self.base = base
        self.prefixes: list[tuple[str, str]] = []
        self._fresh = 0
        self._used_labels: set[str] = set()

    def transform(self, tree: Tree):
        """The AST of ``tree``; blank nodes made for ``[]`` never take a
        label the query writes (``_:anon0``)."""
        self._used_labels = {str(child)[2:] for sub in tree.iter_subtrees()   # iterative
                             for child in sub.children
                             if isinstance(child, Token) and child.type == "BLANK_NODE_LABEL"}
        return super().transform(tree)

    # -- prologue and IRIs

    def resolve(self, iri: str) -> str:
        """Resolve a relative IRI against BASE (if there is one)."""
        if self.base is None or SCHEME_RE.match(iri):
            return iri
        resolved = urljoin(self.base, iri)
        if iri.endswith("#") and not resolved.endswith("#"):
            resolved += "#"            # urljoin drops an empty fragment
        return resolved

    def base_decl(self, meta, c):
        self.base = self.resolve(str(c[1])[1:-1])

    def prefix_decl(self, meta, c):
        name = str(c[1])[:-1]
        iri = self.resolve(str(c[2])[1:-1])
        self.prefixes = [(p, i) for p, i in self.prefixes if p != name] + [(name, iri)]

    def prologue(self, meta, c):
        return None

    def undeclared_namespace(self, prefix: str) -> str | None:
        """The IRI of a prefix the query does not declare, before the
        predeclared ones (none here; EP-SPARQL's ``:`` is its base)."""
        return None

    def namespace(self, prefix: str, token: Token) -> str:
        """IRI of ``prefix``: declared, else undeclared_namespace, else predeclared."""
        for name, iri in reversed(self.prefixes):
            if name == prefix:
                return iri
        default = self.undeclared_namespace(prefix)
        if default is not None:
            return default
        if prefix in PREDECLARED:
            return PREDECLARED[prefix]
        raise error_at(f"unknown prefix '{prefix}:' (declare it with PREFIX {prefix}: <...>)",
                       token)

    def iri(self, meta, c):
        token = c[0]
        if token.type == "IRIREF":
            return URIRef(self.resolve(str(token)[1:-1]))
        prefix, _, local = str(token).partition(":")
        return URIRef(self.namespace(prefix, token) + re.sub(r"\\(.)", r"\1", local))

    def rdf_type(self, meta, c):
        return RDF.type

    # -- literals and nodes

    def var(self, meta, c):
        return A.Var(str(c[0])[1:], pos_of(c[0]))

    def string(self, meta, c):
        return _unescape_string(c[0])

    def rdf_literal(self, meta, c):
        value = c[0]
        if len(c) == 1:
            return Literal(value)
        extra = c[1]
        if isinstance(extra, Token):
            return Literal(value, lang=str(extra)[1:])
        try:
            with warnings.catch_warnings():     # rdflib warns about "weird booleans"
                warnings.simplefilter("ignore")
                literal = Literal(value, datatype=extra)
        except Exception:  # noqa: BLE001 -- rdflib's converters raise odd errors
            literal = None                 # ("-P1Y2M" stops isodate)
        if literal is None or literal.ill_typed:
            # keep what was written: rdflib would "normalise" "yes"^^xsd:boolean
            # to "false"; the check of constants reports it as invalid
            literal = Literal(value, datatype=extra, normalize=False)
        self.check_literal(literal, meta)
        return literal

    def check_literal(self, literal: Literal, meta: Meta) -> None:
        """A road's check of a typed literal as written (none here:
        EP-SPARQL's algebra/constants.py checks them after parsing)."""

    def unsigned_number(self, meta, c):
        token = c[0]
        return Literal(str(token), datatype=_NUMBER_TYPES[token.type])

    def signed_number(self, meta, c):
        token = c[0]
        return Literal(str(token), datatype=_NUMBER_TYPES[token.type.split("_")[0]])

    def boolean(self, meta, c):
        return Literal(str(c[0]).lower(), datatype=XSD.boolean)

    def labelled_bnode(self, meta, c):
        return BNode(str(c[0])[2:])

    def anon_bnode(self, meta, c):
        return self._new_bnode()

    def _new_bnode(self) -> BNode:
        """A fresh blank node, deterministic per parse, never a used label."""
        while True:
            label = f"anon{self._fresh}"
            self._fresh += 1
            if label not in self._used_labels:
                return BNode(label)

    # -- triples

    def blank_node_property_list(self, meta, c):
        node = self._new_bnode()
        return _BNodeList(node, self._expand(node, c[0], pos_of(meta)))

    def verb_objects(self, meta, c):
        return (c[0], c[1], pos_of(meta))

    def object_list(self, meta, c):
        return tuple(c)

    def property_list(self, meta, c):
        return tuple(c)

    def _expand(self, subject, property_list, pos) -> tuple[A.TriplePattern, ...]:
        """Triples for ``subject`` + a property list, nested lists flattened."""
        triples: list[A.TriplePattern] = []
        for i, (verb, objects, verb_pos) in enumerate(property_list):
            for obj in objects:
                nested = ()
                if isinstance(obj, _BNodeList):
                    obj, nested = obj.node, obj.triples
                triples.append(A.TriplePattern(subject, verb, obj,
                                               pos if i == 0 else verb_pos))
                triples.extend(nested)
        return tuple(triples)

    def triples_same_subject(self, meta, c):
        subject = c[0]
        triples: tuple[A.TriplePattern, ...] = ()
        if isinstance(subject, _BNodeList):
            subject, triples = subject.node, subject.triples
        if len(c) > 1:
            triples = self._expand(subject, c[1], pos_of(meta)) + triples
        return triples

    def triples_block(self, meta, c):
        return A.BGP(tuple(t for group in c for t in group), pos_of(meta))

    # -- paths

    def path_alternative(self, meta, c):
        return A.PathAlt(tuple(c), pos_of(meta))

    def path_sequence(self, meta, c):
        return A.PathSeq(tuple(c), pos_of(meta))

    def path_inverse(self, meta, c):
        return A.PathInv(c[0], pos_of(meta))

    def path_modified(self, meta, c):
        return A.PathMod(c[0], str(c[1]), pos_of(meta))

    # -- graph patterns

    def group_graph_pattern(self, meta, c):
        body = c[0] if c else ()
        elements = body if isinstance(body, tuple) else (body,)    # a sub-select
        return A.Group(tuple(elements), pos_of(meta))

    def group_body(self, meta, c):
        return tuple(x for x in c if not isinstance(x, Token))

    def join_op(self, meta, c):
        return c[0]

    def group_or_union(self, meta, c):
        result = c[0]
        for op_token, right in zip(c[1::2], c[2::2]):
            op = str(op_token).upper()
            if op == "UNION":
                result = A.Union(result, right, pos_of(op_token))
            else:
                result = A.TemporalJoin(op, result, right, pos_of(op_token))
        return result

    def where_clause(self, meta, c):
        parts = [x for x in c if not isinstance(x, Token)]
        chain, filters = parts[0], parts[1:]
        if isinstance(chain, A.Group) and not filters:
            return chain
        return A.Group((chain, *filters), _leftmost_pos(chain))

    def optional_pattern(self, meta, c):
        return A.Optional(c[1], pos_of(c[0]))

    def minus_pattern(self, meta, c):
        return A.Minus(c[1], pos_of(c[0]))

    def graph_pattern(self, meta, c):
        return A.Graph(c[1], c[2], pos_of(c[0]))

    def filter(self, meta, c):
        return A.Filter(c[1], pos_of(c[0]))

    def bind(self, meta, c):
        return A.Bind(c[1], c[3], pos_of(c[0]))

    # -- expressions

    def binop(self, meta, c):
        left, op, right = c
        return A.BinaryOp(str(op), left, right, pos_of(op))

    def signed_product(self, meta, c):
        if len(c) == 1:
            return _Signed(c[0], pos_of(meta))
        head, op, right = c
        return _Signed(A.BinaryOp(str(op), head.expr, right, pos_of(op)), head.pos)

    def binop_signed(self, meta, c):
        left, product = c
        sign, right = _strip_leading_sign(product.expr)
        return A.BinaryOp(sign, left, right, product.pos)

    def unop(self, meta, c):
        op, operand = str(c[0]), c[1]
        folded = _fold_sign(op, operand) if op != "!" else None
        return folded if folded is not None else A.UnaryOp(op, operand, pos_of(meta))

    def in_expr(self, meta, c):
        return A.In(c[0], c[2], pos_of(c[1]))

    def not_in_expr(self, meta, c):
        return A.NotIn(c[0], c[3], pos_of(c[1]))

    def expr_list(self, meta, c):
        return tuple(c)

    def arg_list(self, meta, c):
        distinct = any(isinstance(x, Token) and x.type == "DISTINCT" for x in c)
        exprs = [x for x in c if not isinstance(x, Token)]
        word = next((x for x in c if isinstance(x, Token) and x.type == "NAME"), None)
        separator = None
        if word is not None:          # "; SEPARATOR = ..." (a name in the grammar)
            if str(word).upper() != "SEPARATOR":
                raise QuerySyntaxError(f"expected SEPARATOR, found {str(word)!r}",
                                       word.line, word.column)
            separator = exprs.pop()
        return Args(tuple(exprs), distinct, False, separator)

    def star_args(self, meta, c):
        return Args((), distinct=any(isinstance(x, Token) and x.type == "DISTINCT" for x in c),
                    star=True)

    def builtin_call(self, meta, c):
        token, args = c
        name = str(token).upper()
        name = _BUILTIN_ALIASES.get(name, name)
        if name in AGGREGATES:
            return self.aggregate(name, args, token)
        if name not in self.builtins:
            raise error_at(f"unknown function {str(token)!r} (extension functions are "
                           "written as IRIs or prefixed names, e.g. ex:f(?x))", token)
        self._check_args(str(token), name, args, token)
        if name == "BOUND" and not isinstance(args.exprs[0], A.Var):
            raise error_at("BOUND needs a variable, e.g. BOUND(?x)", token)
        return A.FunctionCall(name, args.exprs, pos_of(token))

    def _check_args(self, shown: str, name: str, args: Args, where: object) -> None:
        """Arity and argument-form checks for a built-in call."""
        if args.star or args.distinct or args.separator is not None:
            raise error_at(f"{shown}() does not take '*', DISTINCT or "
                           "SEPARATOR (only aggregates do)", where)
        low, high = self.builtins[name]
        count = len(args.exprs)
        if count < low or (high is not None and count > high):
            wanted = (f"{low}" if low == high else
                      f"at least {low}" if high is None else f"{low} to {high}")
            raise error_at(f"{shown}() takes {wanted} argument"
                           f"{'' if wanted == '1' else 's'}, got {count}", where)

    def aggregate(self, name: str, args: Args, where: object):
        """An aggregate call (a road without aggregation refuses it)."""
        raise error_at(f"aggregate {name}(...) is not supported here", where)

    def function_alias(self, iri: URIRef) -> str | None:
        """A road's own name for a built-in or an aggregate written as an
        IRI (C-SPARQL's f:timestamp; none here)."""
        return None

    def function_call(self, meta, c):
        name, args = c
        mapped = self.function_alias(name)
        if mapped in AGGREGATES:
            return self.aggregate(mapped, args, meta)
        if mapped is not None:
            self._check_args(f"<{name}>", mapped, args, meta)
            return A.FunctionCall(mapped, args.exprs, pos_of(meta))
        if args.star or args.distinct or args.separator is not None:
            raise error_at(f"extension function <{name}> does not take '*', "
                           "DISTINCT or SEPARATOR", meta)
        return A.FunctionCall(name, args.exprs, pos_of(meta))

    def exists(self, meta, c):
        return A.Exists(c[1], False, pos_of(meta))

    def not_exists(self, meta, c):
        return A.Exists(c[2], True, pos_of(meta))

    # -- SELECT and CONSTRUCT clauses

    def select_modifier(self, meta, c):
        return str(c[0]).upper()

    def projection_all(self, meta, c):
        return "*"

    def projection_list(self, meta, c):
        seen: set[str] = set()
        for item in c:
            var = item[1] if isinstance(item, tuple) else item
            if var.name in seen:
                raise error_at(f"variable ?{var.name} is projected twice", var.pos)
            seen.add(var.name)
        return tuple(c)

    def projection_expr(self, meta, c):
        parts = [x for x in c if not isinstance(x, Token)]
        return (parts[0], parts[1])

    def select_clause(self, meta, c):
        modifier = next((x for x in c[1:-1] if isinstance(x, str) and not isinstance(x, Token)
                         and x in ("DISTINCT", "REDUCED")), None)
        return SelectClause(c[-1], modifier == "DISTINCT", modifier == "REDUCED", pos_of(c[0]))

    def construct_template(self, meta, c):
        return c[0].triples if c else ()


# ----------------------------------------------------------- helpers

def _leftmost_pos(node: object) -> A.Pos | None:
    """Position of the leftmost group of a join chain."""
    while isinstance(node, (A.Union, A.TemporalJoin)):
        node = node.left
    return getattr(node, "pos", None)


def _offset_position(token: Token, offset: int) -> tuple[int, int]:
    """Line/column of the character ``offset`` characters into ``token``."""
    before = token.value[:offset]
    newlines = before.count("\n")
    if newlines:
        return token.line + newlines, offset - before.rfind("\n")
    return token.line, token.column + offset


def _unescape_string(token: Token) -> str:
    """The value of a string token, with escapes decoded and validated."""
    quote = _STRING_QUOTES[token.type]
    body = token.value[quote:-quote]
    out: list[str] = []
    i = 0
    while True:
        j = body.find("\\", i)
        if j < 0:
            out.append(body[i:])
            return "".join(out)
        out.append(body[i:j])
        char, i = _decode_escape(token, body, j, quote)
        out.append(char)


def _decode_escape(token: Token, body: str, j: int, quote: int) -> tuple[str, int]:
    """Decode the escape at ``body[j]``; return (character, next index)."""
    code = body[j + 1:j + 2]
    if code in _ECHAR:
        return _ECHAR[code], j + 2
    if code in ("u", "U"):
        width = 4 if code == "u" else 8
        digits = body[j + 2:j + 2 + width]
        if len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
            value = int(digits, 16)
            if value <= 0x10FFFF:
                return chr(value), j + 2 + width
    line, column = _offset_position(token, quote + j)
    shown = body[j:j + 2] if code not in ("u", "U") else body[j:j + 6]
    raise QuerySyntaxError(
        f"invalid escape sequence '{shown}' in a string (allowed: \\t \\b \\n "
        "\\r \\f \\\" \\' \\\\ \\uXXXX \\UXXXXXXXX)", line, column)


def _fold_sign(sign: str, operand: object) -> object | None:
    """``-5`` -> Literal('-5'); None if ``operand`` is not an unsigned number."""
    if (isinstance(operand, Literal) and operand.datatype in _NUMBER_TYPES.values()
            and not str(operand).startswith(("+", "-"))):
        return Literal(sign + str(operand), datatype=operand.datatype)
    return None


def _strip_leading_sign(expr: object) -> tuple[str, object]:
    """Split the sign off the leftmost literal of ``-5 * ?x`` -> ('-', 5 * ?x)."""
    spine: list[A.BinaryOp] = []
    while isinstance(expr, A.BinaryOp):      # iterative: chains can be long
        spine.append(expr)
        expr = expr.left
    text = str(expr)
    if not text.startswith(("+", "-")):
        # rdflib normalised "+1" to "1": the sign was a plus
        text = "+" + text
    result: object = Literal(text[1:], datatype=expr.datatype)
    for node in reversed(spine):
        result = A.BinaryOp(node.op, result, node.right, node.pos)
    return text[0], result
