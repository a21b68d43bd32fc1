"""A live pipe: `tail -f log | epsparql run q.rq --stream -` answers each
row as it arrives, not once 5,000 rows have come (issue 25, finding 7);
on Ctrl-C the rows read were processed and their answers written."""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

from cli_child import NEVER, env

QUERY = "SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o }\n"


def row(i: int) -> str:
    return f'<http://example.org/s{i}> <http://example.org/p> "{i}" {i} .\n'


class Lines:
    """A child's output read as it comes (the file descriptor itself: a
    buffered reader would hold lines select() no longer sees)."""

    def __init__(self, f) -> None:
        self.fd = f.fileno()
        self.buf = b""
        self.eof = False

    def take(self, n: int, watchdog: float = 120.0) -> list[str]:
        """n lines, waiting for them (a watchdog, not a measure: it only
        turns a hang into a failure)."""
        deadline = time.monotonic() + watchdog
        while self.buf.count(b"\n") < n and not self.eof and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 1.0)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    self.eof = True
                self.buf += chunk
        lines = self.buf.split(b"\n")
        got, self.buf = lines[:n], b"\n".join(lines[n:])
        return [x.decode() for x in got if x or len(got) < n]


def run_on_a_pipe(tmp_path) -> subprocess.Popen:
    """``epsparql run q.rq --stream -`` reading the pipe this test writes."""
    (tmp_path / "q.rq").write_text(QUERY)
    return subprocess.Popen([sys.executable, "-m", "epsparql.cli", "run", "q.rq", "--stream", "-"],
                            cwd=tmp_path, env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)


def test_rows_from_a_live_pipe_are_answered_as_they_come(tmp_path):
    p = run_on_a_pipe(tmp_path)
    out = Lines(p.stdout)
    try:
        for i in range(3):                      # three rows, and the writer waits
            p.stdin.write(row(i))
        p.stdin.flush()
        got = out.take(3)
        assert len(got) == 3, got               # answered while the pipe is still open
        assert p.poll() is None
        p.stdin.write(row(3))
        p.stdin.flush()
        assert len(out.take(1)) == 1
        p.stdin.close()
        err = p.stderr.read()
        p.wait(timeout=120)
        rest = out.take(1)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0 and rest == []
    assert "4 events in" in err
    for word in NEVER:
        assert word not in err


def five_answered(p: subprocess.Popen) -> None:
    """Write five rows to the run's pipe, keep it open, and wait for their answers."""
    for i in range(5):
        p.stdin.write(row(i))
    p.stdin.flush()
    assert len(Lines(p.stdout).take(5)) == 5


def test_ctrl_c_on_a_live_pipe_keeps_what_was_read(tmp_path):
    p = run_on_a_pipe(tmp_path)
    try:
        five_answered(p)
        p.send_signal(signal.SIGINT)            # the writer is still there: reading waits
        err = p.stderr.read()
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    assert "5 answers" in err
    # Ctrl-C came after the batch (5 events) or while its last answers were
    # written (the batch is then named as cut short)
    assert "5 events in" in err or ("0 events in" in err and
                                    "then it stopped inside the batch of lines 1-5" in err), err
    assert "interrupted; the answers found so far were written" in err
    for word in NEVER:
        assert word not in err


def tgkill(pid: int, tid: int, sig: int) -> None:
    """Send ``sig`` to one thread of another process (Linux's tgkill)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(234, pid, tid, sig) != 0:               # SYS_tgkill on x86-64
        raise OSError(ctypes.get_errno(), "tgkill")


def sigint_blocked(pid: int, tid: int) -> bool:
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        mask = next(int(x.split()[1], 16) for x in f if x.startswith("SigBlk:"))
    return bool(mask >> (signal.SIGINT - 1) & 1)


def test_ctrl_c_taken_by_another_thread_still_stops_a_run_waiting_on_a_pipe(tmp_path):
    """The kernel hands a process's SIGINT to any of its threads; taken by
    one of SWI-Prolog's or a library's, it did not interrupt the read the
    main thread was blocked in, and the run waited for input for ever (a CI
    run hung on the test above)."""
    p = run_on_a_pipe(tmp_path)
    try:
        five_answered(p)
        # a thread other than the main one that does not block SIGINT
        # (SWI-Prolog's gc thread and jemalloc's do; another of the
        # libraries' does not: the kernel may hand Ctrl-C to it)
        others = [int(t) for t in os.listdir(f"/proc/{p.pid}/task")
                  if int(t) != p.pid and not sigint_blocked(p.pid, int(t))]
        assert others, "no thread but the main one can take SIGINT"
        tgkill(p.pid, others[0], signal.SIGINT)
        deadline = time.monotonic() + 60                     # a watchdog, not a measure
        while p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped = p.poll() is not None
    finally:
        if p.poll() is None:
            p.kill()
    err = p.stderr.read()
    assert stopped, "Ctrl-C taken by another thread was not acted on"
    assert p.returncode == 130, err
    assert "interrupted; the answers found so far were written" in err
