"""A file object as blocks of complete lines, read as what it has ready.

Why: a columnar reader wants many lines at once, while a live pipe
(``tail -f events.nqt | …``) must not wait for many: reads take what the
source has (``read1``), a block ends where the source has nothing more
ready, and a read waits for a writer only while no line is complete.
Lines are split as :class:`epsparql.io.streams.StreamReader` splits them
when it iterates (at ``\\n``; a UTF-8 byte order mark at the start
dropped; a last line without ``\\n`` counted), so that a line number here
is a line number there.
"""
from __future__ import annotations

import codecs
import io
import os
import select
import stat
from typing import IO

import numpy as np

__all__ = ["LineBlocks", "decoded_lines", "MAX_BLOCK", "byte_positions"]

_READ = 1 << 18            # bytes asked of the source at a time (more than a
                           # buffered reader's buffer: read1 then reads past it)
_POLL = 0.25               # seconds a wait for a live source lasts between signal checks
#: Bytes of a block, however few lines they hold (a longer line is read whole).
MAX_BLOCK = 1 << 22
_NL = 10


def _live_fd(f: IO) -> int | None:
    """The descriptor of a pipe, socket or terminal behind ``f`` (where a
    read can wait for a writer), else None."""
    try:
        fd = f.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    return fd if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) else None


def byte_positions(a: np.ndarray, byte: int) -> np.ndarray:
    """The positions of ``byte`` in the bytes ``a`` (uint8), looked for a
    window at a time: a comparison of the whole of a long line would make
    a mask as large as the line."""
    if len(a) <= _WINDOW:
        return np.flatnonzero(a == byte)
    return np.concatenate([np.flatnonzero(a[i:i + _WINDOW] == byte) + i
                           for i in range(0, len(a), _WINDOW)])


_WINDOW = 1 << 20


class LineBlocks:
    """A binary or text file object (``read1`` is used where it has one) as
    blocks of complete lines: at most the lines asked for, and no more than
    the source had ready."""

    def __init__(self, f: IO) -> None:
        self.f = f
        self.text = isinstance(f, io.TextIOBase)
        self.fd = _live_fd(f)
        self._read = None if self.text else (getattr(f, "read1", None) or f.read)
        self._tail = b""                 # bytes read and not yet given out
        self._tail_lines = 0             # the complete lines in them
        self._first = True
        self._failed: BaseException | None = None    # raised once the lines before it are out
        self.eof = False
        self._read_once = False          # read1 has run: the source's buffer is empty

    def _wait(self) -> None:
        """Wait until a live source has bytes, a quarter of a second at a
        time.  Ctrl-C may be taken by any thread of the process (SWI-Prolog's,
        a library's), and then it does not interrupt a read blocked in this
        one; between two waits the interpreter acts on it.  Only once our
        own read1 has run (it leaves a buffered reader's buffer empty, so
        that the descriptor tells all: bytes buffered before would not
        show on it)."""
        if self.fd is None or not self._read_once:
            return
        while not select.select([self.fd], [], [], _POLL)[0]:
            pass

    def ready(self) -> bool:
        """Whether a read would not wait for a writer."""
        if self.eof or self.fd is None:
            return True
        return bool(select.select([self.fd], [], [], 0)[0])

    def block(self, lines: int, encode: bool = True
              ) -> tuple[bytes | None, list[str] | None, np.ndarray | None] | None:
        """At most ``lines`` complete lines: bytes each ending in ``\\n``
        (None for text that is not UTF-8), for a text source the lines as
        text, and for bytes read the positions of their ``\\n``; None at
        the end."""
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed
        if self.text:
            return self._text_block(lines, encode)
        chunks, have, count = [self._tail], len(self._tail), self._tail_lines
        while self._more(lines, have, count):
            try:
                self._wait()
                chunk = self._read(_READ)
                self._read_once = True
            except (Exception, KeyboardInterrupt) as e:
                if count == 0:
                    raise
                self._failed = e         # a line cut short by it is lost, as in rows
                break
            if chunk is None:            # a non-blocking descriptor with nothing yet
                select.select([self.fd if self.fd is not None else self.f], [], [])
                continue
            if not chunk:
                self.eof = True
                break
            chunks.append(chunk)
            have += len(chunk)
            count += int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == _NL))
        buf = b"".join(chunks)
        del chunks                       # (a long line is held once, not twice)
        some = bool(buf)
        if self._first and buf:
            self._first = False
            if buf.startswith(codecs.BOM_UTF8):
                buf = buf[len(codecs.BOM_UTF8):]
        nl = byte_positions(np.frombuffer(buf, np.uint8), _NL)
        if len(nl) > lines:
            self._tail_lines = len(nl) - lines
            nl = nl[:lines]
        else:
            self._tail_lines = 0
        cut = int(nl[-1]) + 1 if len(nl) else 0
        if cut == 0 and self.eof and some:  # a last line without its line break
            self._tail = b""
            return buf + b"\n", None, np.array([len(buf)])
        self._tail = buf[cut:]
        return (buf[:cut], None, nl) if cut else None

    def _more(self, lines: int, have: int, count: int) -> bool:
        """Whether to read on: while no line is complete (however long it
        is) or the start may still be a byte order mark; then while the
        block has room and the source has more ready."""
        if self.eof or self._failed is not None:
            return False
        if count == 0 or (self._first and have < len(codecs.BOM_UTF8)):
            return True
        return count < lines and have < MAX_BLOCK and self.ready()

    def _text_block(self, lines: int, encode: bool) -> tuple[bytes | None, list[str], None] | None:
        got: list[str] = []
        while len(got) < lines and not self.eof and (not got or self.ready()):
            try:
                line = self.f.readline()
            except (Exception, KeyboardInterrupt) as e:
                if not got:
                    raise
                self._failed = e
                break
            if not line:
                self.eof = True
                break
            if self._first:
                line, self._first = line.lstrip("\ufeff"), False
            got.append(line.rstrip("\r\n"))
        if not got:
            return None
        data = None
        if encode:
            try:
                data = ("\n".join(got) + "\n").encode("utf-8")
            except UnicodeEncodeError:   # a lone surrogate: the row parser says what it is
                pass
        return data, got, None


def decoded_lines(data: bytes) -> list[str | None]:
    """The lines of a block as the row reader decodes them (None: not UTF-8)."""
    out: list[str | None] = []
    for raw in data.split(b"\n")[:-1]:
        try:
            out.append(raw.decode("utf-8").rstrip("\r\n"))
        except UnicodeDecodeError:
            out.append(None)
    return out
