"""What every SPARQL front end does around its parser: bound the nesting
before parsing, parse, and say what is wrong in words, with line and
column, the same way on every road (EP-SPARQL's, parser.py, and each
stream dialect's, dialects/frontend.py).
"""
from __future__ import annotations

from typing import Callable, Iterable

from lark import Lark, Token, Tree
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput,
                             UnexpectedToken, VisitError)
from lark.visitors import Transformer

from .errors import QueryError, QuerySyntaxError

__all__ = ["MAX_NESTING", "check_nesting", "parse_tree", "run_builder", "syntax_error",
           "describe_expected", "end_position"]

#: Deepest nesting of groups, parentheses, brackets and prefix operators
#: ('!', '-', '+') a query may have.  Far beyond what people write or
#: tools generate for a chain (a chain is not nested: 2,000 UNIONs are
#: one level); it bounds the depth of what reaches the Prolog core.
MAX_NESTING = 1000

_OPEN = {"LBRACE", "LPAR", "LSQB"}
_CLOSE = {"RBRACE", "RPAR", "RSQB"}
_PREFIX = {"BANG", "PLUS", "DASH"}


def check_nesting(tokens: Iterable[Token]) -> None:
    """QueryError at the first bracket or prefix operator of ``tokens`` (a
    Lark lexer's, of any road) nested more than :data:`MAX_NESTING` levels
    deep; a lexing error ends the check (the parser reports it)."""
    depth = run = 0
    try:
        for token in tokens:
            if token.type in _PREFIX:
                run += 1
            else:
                run = 0
            if token.type in _OPEN:
                depth += 1
            elif token.type in _CLOSE:
                depth = max(0, depth - 1)
            if depth + run > MAX_NESTING:
                raise QueryError(
                    f"the query nests groups, parentheses, brackets or prefix operators "
                    f"more than {MAX_NESTING:,} levels deep, the limit", token.line,
                    token.column)
    except UnexpectedInput:
        return


def parse_tree(parser: Lark, text: str, *, words: Callable[[set[str]], str] | None = None,
               context: str = "",
               special: Callable[[UnexpectedInput], QuerySyntaxError | None] | None = None) -> Tree:
    """``text``'s parse tree; QueryError when it nests too deep (so that no
    builder recurses out of stack), QuerySyntaxError (:func:`syntax_error`,
    or a road's ``special`` message for an error it knows better) when it
    is not of the grammar."""
    if not hasattr(parser, "lexer"):
        # Lark.lex() builds a new lexer (and its regular expressions) at each
        # call unless the parser has one: a third of a parse's time
        parser.lexer = parser._build_lexer()
    check_nesting(parser.lex(text))
    try:
        return parser.parse(text)
    except UnexpectedInput as err:
        raise ((special(err) if special is not None else None)
               or syntax_error(err, text, parser, words=words, context=context)) from None


def run_builder(builder: Transformer, tree: Tree):
    """``builder.transform(tree)``, with a QueryError a rule raised (or a
    RecursionError) passed on as itself rather than wrapped in Lark's
    VisitError."""
    try:
        return builder.transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, RecursionError):
            raise QueryError("the query is nested too deeply to be parsed") from None
        if isinstance(err.orig_exc, QueryError):
            raise err.orig_exc from None
        meta = getattr(getattr(err, "obj", None), "meta", None)
        line, column = ((1, 1) if meta is None or getattr(meta, "empty", True)
                        else (meta.line, meta.column))
        raise QuerySyntaxError(f"cannot parse the query: {err.orig_exc}", line, column) from None


def syntax_error(err: UnexpectedInput, text: str, parser: Lark, *,
                 words: Callable[[set[str]], str] | None = None, context: str = "") -> QuerySyntaxError:
    """Translate a Lark error of ``parser`` into a QuerySyntaxError a user
    can act on: line, column, what was found and what was expected (in
    ``words``, :func:`describe_expected` unless a road names its own
    terminals), then ``context`` (a dialect's " (in a C-SPARQL query)")."""
    words = words or describe_expected
    if isinstance(err, UnexpectedCharacters):
        message = _bad_character_message(text, err.pos_in_stream)
        if message.startswith("unexpected character"):
            # a contextual lexer knows what it allowed there; a basic
            # lexer's "allowed" is every terminal, so ask the parser instead
            allowed = (set(getattr(err, "allowed", None) or ())
                       if parser.options.lexer == "contextual"
                       else _expected_at(parser, text, err.pos_in_stream))
            if allowed:
                message += f"; expected {words(allowed)}"
        return QuerySyntaxError(message + context, err.line, err.column)
    if isinstance(err, UnexpectedToken):
        token = err.token
        if token.type == "$END":
            line, column = _after(token) or end_position(text)
            found = "the end of the query"
        else:
            line, column = token.line, token.column
            found = _quote(token.value)
        expected = _expected_before(parser, text, token) or set(err.expected)
        message = f"expected {words(expected)}, found {found}"
        return QuerySyntaxError(message + _hint(token.type, expected) + context, line, column)
    if isinstance(err, UnexpectedEOF):
        line, column = end_position(text)
        return QuerySyntaxError("unexpected end of the query" + context, line, column)
    line, column = getattr(err, "line", 1), getattr(err, "column", 1)
    return QuerySyntaxError(str(err), _int(line), _int(column))


_HINTS = [  # (found token type, expected terminal or None, hint)
    ("LT", "IRIREF", "an IRI is written <...>, without spaces inside"),
    ("QMARK", "VAR", "a variable name is missing after '?'"),
    ("LANGTAG", None, "a language tag must directly follow a string"),
    ("DCARET", None, "a datatype '^^' must directly follow a string"),
]


def _hint(found: str, expected: set[str]) -> str:
    """A parenthesised hint for a few common mistakes, else ''."""
    for token_type, needed, hint in _HINTS:
        if found == token_type and (needed is None or needed in expected):
            return f" ({hint})"
    return ""


def _bad_character_message(text: str, pos: int) -> str:
    """Explain why no token can start at ``text[pos]``."""
    char = text[pos]
    if char in "\"'":
        return ("unterminated string: a string must be closed on the same "
                'line (use """...""" for multi-line strings)')
    if char == "_" and text.startswith("_:", pos):
        return "a blank node label is missing after '_:'"
    if char == "@":
        return "invalid language tag after '@'"
    if char in "?$":
        return f"a variable name is missing after {char!r}"
    return f"unexpected character {char!r}"


def _expected_before(parser: Lark, text: str, bad: Token) -> set[str]:
    """Terminals the parser accepts just before ``bad``.

    Lark reports the expected set *after* the reductions LALR performs on the
    bad lookahead, which can be much smaller than what the user could really
    have written there; re-feeding the tokens up to ``bad`` gives the set at
    the right point.
    """
    try:
        interactive = parser.parse_interactive(text)
        for token in interactive.lexer_thread.lex(interactive.parser_state):
            if token.start_pos == bad.start_pos and bad.type != "$END":
                break
            interactive.feed_token(token)
        return set(interactive.accepts())
    except Exception:  # noqa: BLE001 -- best effort only
        return set()


def _expected_at(parser: Lark, text: str, pos: int) -> set[str]:
    """Terminals the parser accepts after the tokens of ``text[:pos]`` (where
    no token can start), the end of input left out."""
    try:
        interactive = parser.parse_interactive(text[:pos])
        for token in interactive.lexer_thread.lex(interactive.parser_state):
            interactive.feed_token(token)
        return set(interactive.accepts()) - {"$END"}
    except Exception:  # noqa: BLE001 -- best effort only
        return set()


def _after(token: Token) -> tuple[int, int] | None:
    """Position just after ``token`` (Lark's $END borrows the last token's)."""
    if getattr(token, "end_line", None) is None:
        return None
    return token.end_line, token.end_column


def end_position(text: str) -> tuple[int, int]:
    """Line and column just after the last non-blank, non-comment text."""
    stripped = _strip_trailing_comments(text)
    line = stripped.count("\n") + 1
    column = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return line, column


def _strip_trailing_comments(text: str) -> str:
    """``text`` without trailing whitespace and trailing ``#`` comment lines."""
    lines = text.rstrip().split("\n")
    while len(lines) > 1 and lines[-1].lstrip().startswith("#"):
        lines.pop()
        lines[-1] = lines[-1].rstrip()
    return "\n".join(lines).rstrip()


def _quote(value: str) -> str:
    """A token value for a message, shortened if long."""
    value = value if len(value) <= 40 else value[:37] + "..."
    return "'" + value.replace("\n", "\\n") + "'"


def _int(value: object) -> int:
    """Lark uses '?' for unknown positions; map anything odd to 1."""
    return value if isinstance(value, int) else 1


# ----------------------------------------------- readable expected tokens

_STRINGS = {"STRING_LITERAL1", "STRING_LITERAL2", "STRING_LITERAL_LONG1", "STRING_LITERAL_LONG2"}
_NUMBERS = {"INTEGER", "DECIMAL", "DOUBLE", "INTEGER_POSITIVE",
            "DECIMAL_POSITIVE", "DOUBLE_POSITIVE", "INTEGER_NEGATIVE",
            "DECIMAL_NEGATIVE", "DOUBLE_NEGATIVE"}
_SIGNED = {n for n in _NUMBERS if "_" in n}
_IRIS = {"IRIREF", "PNAME_LN", "PNAME_NS"}
_TERM_START = (_IRIS | _STRINGS | _NUMBERS
               | {"VAR", "NAME", "BLANK_NODE_LABEL", "LSQB", "TRUE", "FALSE"})
_EXPR_START = (_IRIS | _STRINGS | _NUMBERS
               | {"VAR", "NAME", "LPAR", "BANG", "PLUS", "DASH", "TRUE",
                  "FALSE", "NOT", "EXISTS"})
_OPERATORS = {"OROR", "ANDAND", "EQ", "NE", "LT", "GT", "LE", "GE", "PLUS",
              "DASH", "STAR", "SLASH", "IN", "NOT"} | _SIGNED
_PATH_OPS = {"SLASH", "VBAR", "STAR", "PLUS", "QMARK"}
_PREDICATE_START = _IRIS | {"VAR", "NAME", "A", "CARET", "LPAR"}
_JOIN_OPS = ["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "UNION"]
_PATTERN_KEYWORDS = ["FILTER", "OPTIONAL", "BIND", "MINUS", "GRAPH"]

#: What EP-SPARQL parses only to refuse by name: never suggested to it.
EP_UNSUPPORTED = frozenset({"SERVICE", "VALUES", "GROUP", "HAVING", "ORDER", "LIMIT",
                            "OFFSET", "FROM", "DESCRIBE", "NAMED", "UNDEF", "SILENT"})
_WORDS = {
    "VAR": "a variable", "IRIREF": "an IRI", "PNAME_LN": "a prefixed name",
    "PNAME_NS": "a prefixed name", "NAME": "a name",
    "BLANK_NODE_LABEL": "a blank node", "LANGTAG": "a language tag",
    "TRUE": "true", "FALSE": "false", "A": "'a'", "$END": "the end of the query",
    "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'",
    "LSQB": "'['", "RSQB": "']'", "DOT": "'.'", "SEMICOLON": "';'",
    "COMMA": "','", "STAR": "'*'", "SLASH": "'/'", "PLUS": "'+'",
    "DASH": "'-'", "BANG": "'!'", "QMARK": "'?'", "VBAR": "'|'",
    "CARET": "'^'", "DCARET": "'^^'", "OROR": "'||'", "ANDAND": "'&&'",
    "EQ": "'='", "NE": "'!='", "LT": "'<'", "GT": "'>'", "LE": "'<='",
    "GE": "'>='",
    **{s: "a string" for s in _STRINGS}, **{n: "a number" for n in _NUMBERS},
}


def describe_expected(names: set[str] | frozenset[str],
                      hidden: frozenset[str] = EP_UNSUPPORTED) -> str:
    """Readable words for a set of Lark terminal names.

    Sets that characterise a position are collapsed into one phrase ("a
    triple pattern", "an expression", "an operator"), the keywords of
    ``hidden`` (what the road refuses: EP-SPARQL's by default) are not
    suggested, and the rest is listed as "x, y or z": punctuation first,
    then phrases and keywords, then the end of the query.
    """
    rest = set(names)
    phrases = _collapse(rest)
    if rest - hidden or not phrases:
        rest -= hidden
    punctuation = [_WORDS[n] for n in _PUNCTUATION_ORDER if n in rest]
    rest -= set(_PUNCTUATION_ORDER)
    words: list[str] = []
    for name in sorted(rest - {"$END"}):
        word = _WORDS.get(name, name)
        if word not in words:
            words.append(word)
    items = list(dict.fromkeys(punctuation + phrases + words))   # two names, one word: once
    if "$END" in rest:
        items.append(_WORDS["$END"])
    if not items:
        return "something else"
    if len(items) > 8:
        items = items[:7] + ["..."]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


_PUNCTUATION_ORDER = ["DOT", "SEMICOLON", "COMMA", "RPAR", "RSQB", "RBRACE",
                      "LBRACE", "LPAR", "LSQB", "OROR", "ANDAND", "EQ", "NE",
                      "LT", "GT", "LE", "GE", "PLUS", "DASH", "STAR", "SLASH",
                      "BANG", "QMARK", "VBAR", "CARET", "DCARET"]


def _collapse(rest: set[str]) -> list[str]:
    """Replace recognisable groups of terminals in ``rest`` by phrases."""
    phrases: list[str] = []

    def take(group, phrase):
        rest.difference_update(group)
        phrases.append(phrase)

    if {"SELECT", "CONSTRUCT"} <= rest:
        if {"PREFIX", "BASE"} <= rest:
            take({"PREFIX", "BASE"}, "PREFIX/BASE")
        take({"SELECT", "CONSTRUCT", "ASK", "DESCRIBE"}, "SELECT/CONSTRUCT/ASK")
    if {"VAR", "LSQB", "NAME"} <= rest and rest & {"RBRACE", "LBRACE", "WHERE"}:
        take(_TERM_START, "a triple pattern")
    elif {"VAR", "LSQB"} <= rest:
        take(_TERM_START | _PATH_OPS, "an RDF term or a variable")
    elif {"VAR", "BANG"} <= rest:
        take(_EXPR_START, "an expression")
    elif {"VAR", "A"} <= rest:
        take(_PREDICATE_START, "a predicate (an IRI, a variable or 'a')")
    elif {"A", "CARET"} <= rest:
        take(_PREDICATE_START, "a property path step (an IRI, 'a', '^' or '(')")
    elif {"LPAR", "NAME", "EXISTS"} <= rest:
        take(_EXPR_START, "'(', a function call or [NOT] EXISTS")
    if len(rest & _OPERATORS) >= 3:
        take(_OPERATORS | _PATH_OPS, "an operator")
    if set(_JOIN_OPS) <= rest:
        take(set(_JOIN_OPS), "/".join(_JOIN_OPS))
    if len(rest & set(_PATTERN_KEYWORDS)) >= 3:
        group = set(_PATTERN_KEYWORDS) | {"LBRACE"}
        take(group, "a graph pattern ({...}, "
             + ", ".join(k for k in _PATTERN_KEYWORDS if k in rest) + ")")
    if rest & _IRIS and "VAR" in rest:
        take(_IRIS | {"VAR"}, "an IRI or a variable")
    return phrases


