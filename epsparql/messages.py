"""Error messages on one line, as the command line and the service say them."""
from __future__ import annotations

import re

__all__ = ["flat", "one_line"]


def flat(e: BaseException, limit: int = 300) -> str:
    """An error's whole message on one line (a parser's message spread
    over lines), cut at ``limit`` characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= limit else text[:limit - 1] + "…"


def one_line(e: BaseException) -> str:
    """The first line of an error's message (Prolog's messages go on with
    stack sizes, goals and advice a command-line user cannot act on)."""
    text = (getattr(e, "message", None) or str(e)).strip()
    text = re.sub(r"^bridge_python:\w+/\d+ raised: ", "", text)
    line = text.splitlines()[0].strip() if text else type(e).__name__
    return line if len(line) <= 500 else line[:499] + "…"
