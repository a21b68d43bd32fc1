"""StreamReader.batches on live pipes: the rows written so far come in a
batch while the writer is still waiting to write the rest (issue 25,
finding 7).  The writer is a real process that waits for the test's word
on its standard input, so nothing here depends on timing; a reader that
held the rows back would wait for ever, which the watchdog reports."""
from __future__ import annotations

import io
import subprocess
import sys
import threading
from typing import Any, Callable

import pytest

from epsparql.io import StreamReader

from conftest import ROOT

# Writes its first argument, waits for a line on standard input, writes its second.
WRITER = r"""
import sys
out = sys.stdout.buffer
out.write(sys.argv[1].encode()); out.flush()
sys.stdin.readline()
out.write(sys.argv[2].encode()); out.flush()
"""

HANG = 120          # seconds before a test that waits is declared hung (not a speed limit)


def line(i: int, stream: bool = True) -> str:
    g = " <http://ex/g>" if stream else ""
    return f"<http://ex/s{i}> <http://ex/p> \"v {i}\"@en{g} {1000 + i} .\n"


def within(fn: Callable[[], Any], on_hang: Callable[[], None]) -> Any:
    """``fn()``, or a failure if it has not returned after HANG seconds."""
    got: dict[str, Any] = {}

    def run() -> None:
        try:
            got["value"] = fn()
        except BaseException as e:                # noqa: BLE001 - re-raised below
            got["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(HANG)
    if t.is_alive():
        on_hang()
        t.join(HANG)
        pytest.fail("the reader waited for the writer to finish before giving the rows it had")
    if "error" in got:
        raise got["error"]
    return got["value"]


def writer(first: str, rest: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, first, rest],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


CASES = {
    "nqt": ("nqt", "".join(line(i) for i in (1, 2, 3)), line(4) + line(5), [1, 2, 3], [4, 5]),
    "nt, a line half written": ("nt", line(1, False) + line(2, False) + line(3, False)[:20],
                                line(3, False)[20:] + line(4, False), [1, 2], [3, 4]),
    "jsonl": ("jsonl", '{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"1\\"", "start": 1}\n' * 3,
              '{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"2\\"", "start": 2}\n', [1, 2, 3], [4]),
    "csv": ("csv", "s,p,o,start\n<http://ex/a>,<http://ex/p>,\"\"\"1\"\"\",1\n"
                   "<http://ex/a>,<http://ex/p>,<http://ex/o>,2\n",
            "<http://ex/a>,<http://ex/p>,<http://ex/o>,3\n", [2, 3], [4]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_live_pipe_gives_its_rows_before_the_writer_is_done(case):
    fmt, first, rest, first_lines, later_lines = CASES[case]
    w = writer(first, rest)
    try:
        reader = StreamReader(w.stdout, fmt)
        batches = reader.batches(5000)
        batch = within(lambda: next(batches), w.kill)
        assert batch.column("line").to_pylist() == first_lines
        assert w.poll() is None                   # still waiting for the word
        w.stdin.write(b"go\n")
        w.stdin.close()
        assert [n for b in batches for n in b.column("line").to_pylist()] == later_lines
        assert reader.rows == len(first_lines) + len(later_lines)
    finally:
        w.kill()
        w.wait()


def test_a_text_pipe_too():
    w = writer("".join(line(i) for i in (1, 2, 3)), line(4))
    try:
        reader = StreamReader(io.TextIOWrapper(w.stdout, encoding="utf-8"), "nqt")
        batches = reader.batches(5000)
        first = within(lambda: next(batches), w.kill).column("line").to_pylist()
        assert first[0] == 1 and w.poll() is None
        seen = first + [n for b in within(lambda: [next(batches) for _ in range(3 - len(first))], w.kill)
                        for n in b.column("line").to_pylist()]
        assert seen == [1, 2, 3] and w.poll() is None
        w.stdin.write(b"go\n")
        w.stdin.close()
        assert [n for b in batches for n in b.column("line").to_pylist()] == [4]
    finally:
        w.kill()
        w.wait()


# Reads nqt batches from standard input, printing each one's line numbers.
READER = r"""
from epsparql.io import StreamReader
for batch in StreamReader("-", "nqt").batches(5000):
    print(*batch.column("line").to_pylist(), flush=True)
"""


def test_standard_input_as_a_live_pipe():
    r = subprocess.Popen([sys.executable, "-c", READER], cwd=ROOT, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        r.stdin.write(line(1) + line(2))
        r.stdin.flush()
        assert within(r.stdout.readline, r.kill) == "1 2\n"
        r.stdin.write(line(3))
        r.stdin.flush()
        assert within(r.stdout.readline, r.kill) == "3\n"
        r.stdin.write(line(4) + line(5)[:10])
        r.stdin.flush()
        assert within(r.stdout.readline, r.kill) == "4\n"
        r.stdin.write(line(5)[10:])
        r.stdin.close()
        assert r.stdout.read() == "5\n" and r.wait() == 0
    finally:
        r.kill()
        r.wait()
