"""Is a constant REGEX / REPLACE pattern one the engine can run?

The engine evaluates SPARQL's REGEX and REPLACE in Prolog on PCRE2
(``prolog/sparql_eval.pl``, library(pcre)): the flags ``i s m x q`` are
turned into PCRE2 options, ``x`` strips white space outside character
classes and ``q`` quotes the whole pattern, and the pattern is compiled
in UTF mode with Unicode properties and ``$`` matching only at the very
end.  A pattern PCRE2 rejects, an unknown flag, or (REPLACE) a pattern
that matches the empty string or a malformed replacement makes every
evaluation an error, so the FILTER silently drops every solution; a
replacement naming a group the pattern lacks (``$2`` with one group)
fails every evaluation where the pattern matches.

This module answers the same question before the query runs: it prepares
the pattern exactly as sparql_eval.pl does and compiles it with the same
library, libpcre2-8, which SWI-Prolog's pcre4pl links against (through
ctypes).  When the library cannot be loaded the check is skipped (None:
"cannot tell") and the error shows at run time as before.  The tests
compare the verdicts with the engine's own on generated patterns.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import re
from functools import lru_cache

__all__ = ["regex_problem", "replacement_problem", "FLAGS"]

#: The flags sparql_eval.pl knows (XPath's, with q from XPath 3.1).
FLAGS = "ismxq"

_CASELESS, _DOLLAR_ENDONLY, _DOTALL, _MULTILINE = 0x8, 0x10, 0x20, 0x400
_UCP, _UTF, _NO_UTF_CHECK = 0x20000, 0x80000, 0x40000000
_NOMATCH = -1
_INFO_CAPTURECOUNT = 4
_OPTION = {"i": _CASELESS, "s": _DOTALL, "m": _MULTILINE}
_META = set("\\^$.|?*+()[]{}")
_XML_SPACE = " \t\n\r"
#: pcre4pl reads a capture name ending in _X as a typed capture.
_CAPTURE_TYPE = re.compile(r"\(\?(?:P?<|')([A-Za-z_]\w*)_(\w)(?:>|')")


class _Pcre2:
    """The few libpcre2-8 functions needed, bound once per process."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        size, vp = ctypes.c_size_t, ctypes.c_void_p
        self.compile = lib.pcre2_compile_8
        self.compile.restype = vp
        self.compile.argtypes = [ctypes.c_char_p, size, ctypes.c_uint32,
                                 ctypes.POINTER(ctypes.c_int), ctypes.POINTER(size), vp]
        self.free = lib.pcre2_code_free_8
        self.free.restype, self.free.argtypes = None, [vp]
        self.message = lib.pcre2_get_error_message_8
        self.message.restype = ctypes.c_int
        self.message.argtypes = [ctypes.c_int, ctypes.c_char_p, size]
        self.match_data = lib.pcre2_match_data_create_from_pattern_8
        self.match_data.restype, self.match_data.argtypes = vp, [vp, vp]
        self.free_match_data = lib.pcre2_match_data_free_8
        self.free_match_data.restype, self.free_match_data.argtypes = None, [vp]
        self.match = lib.pcre2_match_8
        self.match.restype = ctypes.c_int
        self.match.argtypes = [vp, ctypes.c_char_p, size, size, ctypes.c_uint32, vp, vp]
        self.info = lib.pcre2_pattern_info_8
        self.info.restype, self.info.argtypes = ctypes.c_int, [vp, ctypes.c_uint32, vp]

    def groups(self, compiled: int) -> int:
        """How many capturing groups a compiled pattern has."""
        count = ctypes.c_uint32()
        self.info(compiled, _INFO_CAPTURECOUNT, ctypes.byref(count))
        return count.value


@lru_cache(maxsize=1)
def _pcre2() -> _Pcre2 | None:
    """libpcre2-8, or None when it is not on this machine."""
    for name in ("libpcre2-8.so.0", ctypes.util.find_library("pcre2-8")):
        if not name:
            continue
        try:
            return _Pcre2(ctypes.CDLL(name))
        except (OSError, AttributeError):
            continue
    return None


def _prepare(pattern: str, flags: str) -> tuple[str, int] | str:
    """The PCRE2 pattern and options sparql_eval.pl would use, or a message
    for flags it rejects."""
    bad = sorted({c for c in flags if c not in FLAGS})
    if bad:
        return (f"unknown flag{'s' if len(bad) > 1 else ''} "
                f"{', '.join(repr(c) for c in bad)} (the flags are i, s, m, x and q)")
    options = _UTF | _NO_UTF_CHECK | _UCP | _DOLLAR_ENDONLY
    for c in flags:
        options |= _OPTION.get(c, 0)
    if "q" in flags:
        pattern = "".join("\\" + c if c in _META else c for c in pattern)
    elif "x" in flags:
        pattern = _strip_spaces(pattern)
    return pattern, options


def _strip_spaces(pattern: str) -> str:
    """White space outside character classes removed, escapes kept whole
    (sparql_eval.pl's strip_ws/3)."""
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if depth == 0 and c in _XML_SPACE:
            pass
        elif c == "[":
            depth += 1
            out.append(c)
        elif c == "]" and depth > 0:
            depth -= 1
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _compile(lib: _Pcre2, pattern: str, options: int) -> tuple[int | None, str | None]:
    """(compiled code, None) or (None, PCRE2's message with the position)."""
    try:
        data = pattern.encode("utf-8")
    except UnicodeEncodeError:
        return None, "the pattern holds an unpaired surrogate character"
    code = ctypes.c_int()
    offset = ctypes.c_size_t()
    compiled = lib.compile(data, len(data), options, ctypes.byref(code),
                           ctypes.byref(offset), None)
    if compiled:
        return compiled, None
    buf = ctypes.create_string_buffer(256)
    lib.message(code.value, buf, len(buf))
    at = len(data[:offset.value].decode("utf-8", "replace"))
    return None, f"{buf.value.decode('utf-8', 'replace')} (PCRE2, at offset {at})"


def regex_problem(pattern: str, flags: str = "", *, for_replace: bool = False,
                  replacement: str | None = None) -> str | None:
    """Why REGEX (or REPLACE) with this constant pattern and flags (and
    REPLACE's constant replacement) is an error for every input, or None
    if it is fine or cannot be checked."""
    if replacement is not None:
        problem = replacement_problem(replacement, flags)
        if problem:
            return problem
    prepared = _prepare(pattern, flags)
    if isinstance(prepared, str):
        return prepared
    text, options = prepared
    lib = _pcre2()
    if lib is None:
        return None
    compiled, message = _compile(lib, text, options)
    if compiled is None:
        return f"invalid regular expression: {message}"
    try:
        for m in _CAPTURE_TYPE.finditer(text):
            if m.group(2) in "SAIFNTR":
                continue
            return (f"invalid regular expression: the group name {m.group(1)}_{m.group(2)} "
                    "ends in '_' and one letter, which the engine reads as a capture "
                    "type (S, A, I, F, N, T or R)")
        if for_replace and _matches_empty(lib, compiled):
            return "the pattern matches the empty string, which REPLACE does not allow"
        if replacement is not None and "q" not in flags:
            groups = lib.groups(compiled)
            for ref in _group_refs(replacement):
                if ref > groups:
                    return (f"invalid replacement: ${ref} refers to group {ref}, but the "
                            f"pattern has {groups} group{'s' if groups != 1 else ''}")
    finally:
        lib.free(compiled)
    return None


def _matches_empty(lib: _Pcre2, compiled: int) -> bool:
    data = lib.match_data(compiled, None)
    if not data:
        return False
    try:
        return lib.match(compiled, b"", 0, 0, 0, data, None) != _NOMATCH
    finally:
        lib.free_match_data(data)


def replacement_problem(replacement: str, flags: str = "") -> str | None:
    """Why this REPLACE replacement string is an error, or None: ``$`` must
    start ``$N`` (a group number) and ``\\`` must start ``\\$`` or ``\\\\``
    (XPath fn:replace); with the flag q the replacement is literal."""
    if "q" in flags:
        return None
    refs = _scan(replacement)
    return refs if isinstance(refs, str) else None


def _group_refs(replacement: str) -> list[int]:
    refs = _scan(replacement)
    return [] if isinstance(refs, str) else refs


def _scan(replacement: str) -> list[int] | str:
    """The group numbers ``$N`` of a replacement, or what is wrong with it."""
    refs: list[int] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "$":
            j = i + 1
            while j < len(replacement) and replacement[j] in "0123456789":
                j += 1
            if j == i + 1:
                return (f"invalid replacement: '$' at character {i + 1} must be followed "
                        "by a group number (write \\$ for a dollar sign)")
            refs.append(int(replacement[i + 1:j]))
            i = j
        elif c == "\\":
            if replacement[i + 1:i + 2] not in ("$", "\\"):
                return (f"invalid replacement: '\\' at character {i + 1} must be followed "
                        "by '$' or '\\'")
            i += 2
        else:
            i += 1
    return refs
