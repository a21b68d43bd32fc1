"""What the service keeps on disk with ``--state DIR``, and how it is read back.

Three kinds of file, each written so that a ``kill -9`` at any byte leaves
something that reads back:

- **the input log** (``log-<first>.wal``): every input the service
  acknowledged and every change of what it runs (a batch of events, an
  advance of event time, a deployment registered, paused, resumed or
  deleted, a background graph replaced), in the order the engine room
  applied them, each record numbered.  A record is framed by its length
  and a CRC-32, so a record torn by a crash is found and cut off.  Input
  is acknowledged only after its record is written and fsync'ed.
- **checkpoints** (``checkpoint.json``, replaced atomically by rename):
  the number of the last record applied, every deployment with its
  engine's snapshot (:meth:`epsparql.Engine.snapshot`) and how many
  answers it had given, and the background graphs.  Log files wholly
  before a checkpoint are deleted.
- **answer files** (``answers/<deployment>.jsonl``): every answer a
  deployment gave, one JSON line each, in order: the answer's number is
  its line number.  An answer is written here before anyone is sent it.

On restart the last checkpoint is restored and the log after it replayed:
the engines are deterministic, so they give the same answers again, and
those already in an answer file are not given a second time.
"""
from __future__ import annotations

import base64
import json
import os
import struct
import threading
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

__all__ = ["InputLog", "LogSyncer", "AnswerFile", "Checkpoint", "write_atomic",
           "read_checkpoint"]

_HEAD = struct.Struct("<II")          # payload length, CRC-32 of the payload


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old file or the
    new one, whole: a temporary file, fsync'ed, renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _sync_dir(path.parent)


def _sync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class InputLog:
    """The numbered records of what the service applied, in segment files.

    ``append`` writes a record (a JSON header and a body of bytes) and
    returns its number; ``sync`` makes every record written so far durable
    (one fsync for a group of records); ``records(after)`` reads them back
    in order; ``rotate(upto)`` starts a new segment and deletes the
    segments wholly at or before record ``upto``."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.last = 0                     # the number of the last record written
        self._file: BinaryIO | None = None
        segs = self._segments()
        for first, path in segs:          # find the last record; cut a torn tail
            n, good = self._scan(path, first)
            if n:
                self.last = first + n - 1
            elif first - 1 > self.last:
                self.last = first - 1
            if good < path.stat().st_size:
                with open(path, "r+b") as f:
                    f.truncate(good)

    def _segments(self) -> list[tuple[int, Path]]:
        out = []
        for p in self.dir.glob("log-*.wal"):
            try:
                out.append((int(p.stem[4:]), p))
            except ValueError:
                continue
        return sorted(out)

    @staticmethod
    def _frames(f: BinaryIO) -> Iterator[tuple[bytes, int]]:
        """The whole records of a segment, each with the offset after it."""
        pos = 0
        while True:
            head = f.read(_HEAD.size)
            if len(head) < _HEAD.size:
                return
            n, crc = _HEAD.unpack(head)
            payload = f.read(n)
            if len(payload) < n or zlib.crc32(payload) != crc:
                return
            pos += _HEAD.size + n
            yield payload, pos

    def _scan(self, path: Path, first: int) -> tuple[int, int]:
        n = good = 0
        with open(path, "rb") as f:
            for _, good in self._frames(f):
                n += 1
        return n, good

    def append(self, header: dict[str, Any], body: bytes = b"") -> int:
        """Write one record; its number (not yet durable: :meth:`sync`)."""
        if self._file is None:
            self._file = open(self.dir / f"log-{self.last + 1:012d}.wal", "ab")
        self.last += 1
        h = json.dumps(dict(header, n=self.last), separators=(",", ":")).encode("utf-8")
        payload = h + b"\n" + body
        self._file.write(_HEAD.pack(len(payload), zlib.crc32(payload)) + payload)
        return self.last

    def sync(self) -> None:
        """Every record appended so far survives a crash of the machine."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def flush(self) -> int | None:
        """Hand the records appended so far to the operating system (they
        survive the process, not yet the machine); the file descriptor to
        fsync for the machine (None: nothing written to this segment)."""
        if self._file is None:
            return None
        self._file.flush()
        return self._file.fileno()

    def records(self, after: int = 0) -> Iterator[tuple[dict[str, Any], bytes]]:
        """Every record numbered above ``after``, in order: (header, body)."""
        if self._file is not None:
            self._file.flush()
        for first, path in self._segments():
            n = first
            with open(path, "rb") as f:
                for payload, _ in self._frames(f):
                    if n > after:
                        head, _, body = payload.partition(b"\n")
                        yield json.loads(head), body
                    n += 1

    def rotate(self, upto: int) -> None:
        """Start a new segment; delete the segments whose records are all
        numbered at or below ``upto`` (a checkpoint holds them)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        segs = self._segments()
        for i, (first, path) in enumerate(segs):
            nxt = segs[i + 1][0] if i + 1 < len(segs) else self.last + 1
            if nxt - 1 <= upto:
                path.unlink(missing_ok=True)
        _sync_dir(self.dir)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class LogSyncer:
    """fsync of the input log in a thread of its own (group commit).

    The engine room appends a record and hands it to the operating system
    (:meth:`InputLog.flush`), then asks for it to be made durable
    (:meth:`request`) and goes on pushing it to the engines while this
    thread fsyncs: the fsync (1–2 ms here) and the push overlap instead of
    following each other.  Records that come while an fsync runs are made
    durable by the next one, together.  What depends on a record being
    durable waits for it: its acknowledgement (``then``, called here once
    it is) and its answers (the engine room calls :meth:`wait` before
    writing any answer, so no answer ever comes from an input that a
    crash could still take back).  ``done``: the last record of the log as
    it was opened (read back from it).  An fsync that fails stops the syncer:
    every waiter and every later request gets the error."""

    def __init__(self, done: int = 0) -> None:
        self._cv = threading.Condition()
        self._want = done                 # the last record asked for
        self._done = done                 # the last record durable
        self._fd: int | None = None
        self._then: list[tuple[int, Callable[[BaseException | None], None]]] = []
        self._stop = False
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="epsparql-log-sync",
                                        daemon=True)
        self._thread.start()

    @property
    def done(self) -> int:
        return self._done

    def request(self, n: int, fd: int | None,
                then: Callable[[BaseException | None], None] | None = None) -> None:
        """Make records up to ``n`` (written to ``fd``, the current segment)
        durable; ``then(None)`` once they are (``then(error)`` if the
        fsync failed)."""
        with self._cv:
            err = self.error
            if err is None:
                if n > self._want:
                    self._want, self._fd = n, fd
                if then is not None:
                    if n <= self._done:
                        err = None
                    else:
                        self._then.append((n, then))
                        then = None
                self._cv.notify_all()
        if then is not None:
            then(err)

    def wait(self, n: int) -> None:
        """Return once records up to ``n`` are durable (raise the fsync's
        error if it failed)."""
        with self._cv:
            while self._done < n and self.error is None:
                self._cv.wait()
            if self.error is not None:
                raise self.error

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._want <= self._done and not self._stop:
                    self._cv.wait()
                if self._want <= self._done:
                    return
                n, fd = self._want, self._fd
            err: BaseException | None = None
            try:
                if fd is not None:
                    os.fsync(fd)
            except OSError as e:
                err = e
            with self._cv:
                if err is None:
                    self._done = n
                    ready = [f for m, f in self._then if m <= n]
                    self._then = [(m, f) for m, f in self._then if m > n]
                else:
                    self.error = err
                    ready, self._then = [f for _, f in self._then], []
                self._cv.notify_all()
            for f in ready:
                try:
                    f(err)
                except Exception:         # an acknowledgement's bug: not the log's
                    pass
            if err is not None:
                return


class AnswerFile:
    """One deployment's answers, a JSON line each, appended in order.

    :attr:`count` is how many it holds (a line torn by a crash is cut off
    when it is opened)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.count = 0
        good = 0
        if path.exists():
            with open(path, "rb") as f:
                for line in f:
                    if not line.endswith(b"\n"):
                        break
                    good += len(line)
                    self.count += 1
            if good < path.stat().st_size:
                with open(path, "r+b") as f:
                    f.truncate(good)
        self._file = open(path, "ab")

    def append(self, lines: list[str]) -> None:
        """Add answers (each a line ending in a newline); written through to
        the operating system at once (they survive the process)."""
        self._file.write("".join(lines).encode("utf-8"))
        self._file.flush()
        self.count += len(lines)

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def read(self, after: int, limit: int) -> list[str]:
        """Up to ``limit`` answers numbered above ``after`` (1-based)."""
        out: list[str] = []
        self._file.flush()
        with open(self.path, "r", encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if i > after:
                    out.append(line)
                    if len(out) >= limit:
                        break
        return out

    def close(self) -> None:
        self._file.close()


class Checkpoint:
    """A checkpoint's content: the last record applied, the deployments (in
    order, each with its engine's snapshot and answer count), the graphs,
    and the service's counters."""

    def __init__(self, applied: int, deployments: list[dict[str, Any]],
                 graphs: dict[str, str], counters: dict[str, int]) -> None:
        self.applied = applied
        self.deployments = deployments
        self.graphs = graphs
        self.counters = counters

    def to_bytes(self) -> bytes:
        deps = [dict(d, snapshot=base64.b64encode(d["snapshot"]).decode("ascii"))
                for d in self.deployments]
        return json.dumps({"v": 1, "applied": self.applied, "deployments": deps,
                           "graphs": self.graphs, "counters": self.counters},
                          separators=(",", ":")).encode("utf-8")

    def write(self, directory: Path) -> None:
        write_atomic(directory / "checkpoint.json", self.to_bytes())


def read_checkpoint(directory: Path) -> Checkpoint | None:
    """The checkpoint in ``directory`` (None if there is none yet)."""
    p = directory / "checkpoint.json"
    if not p.exists():
        return None
    d = json.loads(p.read_bytes())
    if d.get("v") != 1:
        raise ValueError(f"{p}: unknown checkpoint version {d.get('v')!r}")
    deps = [dict(x, snapshot=base64.b64decode(x["snapshot"])) for x in d["deployments"]]
    return Checkpoint(d["applied"], deps, d.get("graphs", {}), d.get("counters", {}))
