"""A long text handed to Prolog and back by reference, not copied.

Janus makes a Python ``str`` a Prolog atom, and atoms are reclaimed only
by atom garbage collection, which counts atoms, not bytes: a long text
(a batch's text, a rule file: ``py_text_call/3``) crosses instead as a
:class:`LongText`, which Prolog reads with ``janus:py_str/2`` into a
string.

A large literal (a document, a payload) crosses into Prolog as a Prolog
string either way; what it need not do is cross back.  An answer that
carries it would make janus write the Prolog string out as UTF-8 and
read that into a new Python text (twice the literal, on top of the one
the push already holds), and the core queue a copy of it for the answer's
term dictionary.  So the push wraps the Python text of a long lexical
form in a :class:`LongText`: janus passes the wrapper as a reference (a
``PyObject`` blob), Prolog makes its string with ``py_str/2`` and keeps
string and blob side by side for the rest of the call
(``prolog/bridge_long_text.pl``), and an answer whose
term holds that string (compared by content) sends the blob in its place
(``prolog/bridge_columns.pl``): Python gets the wrapper back and takes its
text, the very object the push made.  A string Prolog built itself (a
CONSTRUCT rule's, the background graph's) has no blob and crosses as
text, as every string did before.

After the call the pusher calls :meth:`LongText.release`: Prolog holds a
blob until atom garbage collection, which must not keep the text alive.
"""
from __future__ import annotations

from typing import Iterable

from .terms import PlString

__all__ = ["LongText", "long_text", "release_all"]


class LongText:
    """A long text by reference (see the module); a batch's long lexical
    forms are :class:`~epsparql.core.terms.PlString` (what an answer's
    term holds)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text: str | None = text

    def __str__(self) -> str:
        # janus's py_str/2 makes the Prolog string of this (no copy for
        # ASCII text: janus reads the text's own UTF-8 bytes)
        if self.text is None:
            raise ValueError("a released LongText crossed into Prolog")
        return self.text

    def __repr__(self) -> str:
        n = None if self.text is None else len(self.text)
        return f"<LongText of {n} characters>"

    def release(self) -> None:
        """Let go of the text (the call that used it is over)."""
        self.text = None


def release_all(longs: Iterable[LongText]) -> None:
    """Release each of ``longs``."""
    for w in longs:
        w.text = None


def long_text(value: object) -> PlString:
    """The text a term argument stands for: a :class:`LongText`'s own
    text (no copy), any other text as a :class:`PlString`."""
    if type(value) is LongText:
        t = value.text
        if t is None:
            raise ValueError("an answer referred to a released LongText")
        return t
    return PlString(value)
