"""``epsparql serve --state DIR``: nothing acknowledged lost, no answer twice.

The service is killed with SIGKILL in the middle of a stream pushed over
HTTP (checkpoints every fraction of a second, so the kill lands between
and during them), restarted on the same state directory, and the sender
repeats every batch whose acknowledgement it did not get (with the same
idempotency key).  The answers read back then equal ``epsparql run``'s on
the whole stream, as multisets: none lost, none twice.  The files of the
state directory read back after being cut at any byte.
"""
from __future__ import annotations

import http.client
import json
import os
import random
import signal
import threading
from collections import Counter
from pathlib import Path

import pytest

from service_proc import ServiceProcess, wait_for
from test_serve_api import CSPARQL_QUERY, EX, SEQ_QUERY, run_answers, stock_lines

from epsparql.service.durable import AnswerFile, InputLog


class Sender:
    """Pushes numbered batches, each with its key, remembering which were
    acknowledged; a refused connection (the service is down) stops it."""

    def __init__(self, batches: list[str]) -> None:
        self.batches = batches
        self.acked: set[int] = set()

    def send(self, svc: ServiceProcess, start: int = 0, stop_at: threading.Event | None = None
             ) -> None:
        for i in range(start, len(self.batches)):
            if i in self.acked:
                continue
            if stop_at is not None and stop_at.is_set():
                return
            try:
                status, _, out = svc.request("POST", "/events?format=nqt", self.batches[i],
                                             headers={"Idempotency-Key": f"batch-{i}"},
                                             timeout=30)
            except (OSError, http.client.HTTPException):
                return                     # killed: this batch is not acknowledged
            assert status == 202, out
            self.acked.add(i)


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_mid_stream_loses_nothing_and_repeats_nothing(tmp_path, seed):
    rnd = random.Random(seed)
    lines = [f"{ln.rsplit(' ', 2)[0]} <{EX}s> {ln.rsplit(' ', 2)[1]} ."
             for ln in stock_lines(3000, seed=seed)]
    batches = ["\n".join(lines[i:i + 50]) + "\n" for i in range(0, len(lines), 50)]
    state = tmp_path / "state"
    args = ("--state", str(state), "--checkpoint-every", "0.2")
    sender = Sender(batches)
    with ServiceProcess(*args) as svc:
        svc.json("POST", "/queries", {"name": "pairs", "query": SEQ_QUERY}, expect=201)
        svc.json("POST", "/queries", {"name": "avg", "query": CSPARQL_QUERY}, expect=201)
        t = threading.Thread(target=sender.send, args=(svc,))
        t.start()
        kill_after = rnd.randrange(10, len(batches) - 10)
        wait_for(lambda: len(sender.acked) >= kill_after or not t.is_alive(), timeout=120)
        os.kill(svc.proc.pid, signal.SIGKILL)
        t.join(60)
        svc.kill()
    assert 0 < len(sender.acked) < len(batches)
    with ServiceProcess(*args) as svc:
        assert [d["name"] for d in svc.json("GET", "/queries")] == ["pairs", "avg"]
        sender.send(svc)                   # every batch not acknowledged, again
        assert len(sender.acked) == len(batches)
        svc.json("POST", "/advance", {"time": 100_000})
        pairs, avg = svc.answers("pairs"), svc.answers("avg")
        assert svc.json("GET", "/status")["events"] == len(lines)
    want_pairs = run_answers(tmp_path, "pairs", SEQ_QUERY, lines, "nqt")
    want_avg = run_answers(tmp_path, "avg", CSPARQL_QUERY, lines, "nqt")
    assert Counter(pairs) == Counter(want_pairs)
    assert Counter(avg) == Counter(want_avg)
    # the answer files hold each answer once, numbered as served
    assert (state / "answers" / "pairs.jsonl").read_text().splitlines() == pairs


def test_a_restart_after_a_clean_stop_continues_the_stream(tmp_path):
    lines = stock_lines(600, seed=5)
    state = tmp_path / "state"
    with ServiceProcess("--state", str(state)) as svc:
        svc.json("POST", "/queries", {"name": "pairs", "query": SEQ_QUERY}, expect=201)
        svc.request("POST", "/events?wait=1", "\n".join(lines[:300]) + "\n")
        assert svc.terminate() == 0
    with ServiceProcess("--state", str(state)) as svc:
        svc.request("POST", "/events?wait=1", "\n".join(lines[300:]) + "\n")
        got = svc.answers("pairs")
    assert Counter(got) == Counter(run_answers(tmp_path, "pairs", SEQ_QUERY, lines))


# -- the files, cut anywhere -----------------------------------------------------------------
def test_the_input_log_reads_back_whole_records_after_a_cut(tmp_path):
    log = InputLog(tmp_path / "log")
    bodies = [os.urandom(random.Random(i).randrange(0, 300)) for i in range(20)]
    for i, b in enumerate(bodies):
        assert log.append({"kind": "events", "i": i}, b) == i + 1
    log.sync()
    log.close()
    seg = next((tmp_path / "log").glob("log-*.wal"))
    whole = seg.read_bytes()
    rnd = random.Random(3)
    for cut in sorted(rnd.sample(range(len(whole)), 25)) + [len(whole)]:
        for other in (tmp_path / "log").glob("log-*.wal"):
            other.unlink()                 # (the segment a previous round started)
        seg.write_bytes(whole[:cut])
        again = InputLog(tmp_path / "log")
        got = list(again.records())
        assert [h["i"] for h, _ in got] == list(range(len(got)))
        assert [b for _, b in got] == bodies[:len(got)]
        assert again.last == len(got)
        n = again.append({"kind": "x"}, b"after")            # goes on after the cut
        assert n == len(got) + 1 and list(again.records(len(got)))[0][1] == b"after"
        again.close()
    # a flipped byte: the records before it stand, the rest is cut
    for other in (tmp_path / "log").glob("log-*.wal"):
        other.unlink()
    seg.write_bytes(whole[:100] + bytes([whole[100] ^ 1]) + whole[101:])
    got = list(InputLog(tmp_path / "log").records())
    assert [b for _, b in got] == bodies[:len(got)] and len(got) < len(bodies)


def test_rotation_keeps_the_records_after_the_checkpoint(tmp_path):
    log = InputLog(tmp_path / "log")
    for i in range(5):
        log.append({"i": i})
    log.rotate(3)                          # 1-5 in one segment: 4 and 5 still needed
    for i in range(5, 8):
        log.append({"i": i})
    assert [h["i"] for h, _ in log.records(3)] == [3, 4, 5, 6, 7]
    log.rotate(8)
    log.append({"i": 8})
    assert [h["i"] for h, _ in log.records(8)] == [8]
    assert len(list((tmp_path / "log").glob("*.wal"))) == 1
    log.close()
    assert InputLog(tmp_path / "log").last == 9


def test_an_answer_file_cut_mid_line_keeps_its_whole_lines(tmp_path):
    f = AnswerFile(tmp_path / "a.jsonl")
    f.append(['{"n": 1}\n', '{"n": 2}\n'])
    f.close()
    p = tmp_path / "a.jsonl"
    p.write_bytes(p.read_bytes() + b'{"n": 3')
    g = AnswerFile(p)
    assert g.count == 2 and g.read(0, 10) == ['{"n": 1}\n', '{"n": 2}\n']
    g.append(['{"n": 3}\n'])
    assert g.read(2, 10) == ['{"n": 3}\n']
    g.close()


def test_a_damaged_state_directory_is_refused_with_a_message(tmp_path):
    state = tmp_path / "state"
    with ServiceProcess("--state", str(state)) as svc:
        svc.json("POST", "/queries", {"name": "pairs", "query": SEQ_QUERY}, expect=201)
        svc.request("POST", "/events?wait=1", "\n".join(stock_lines(100)) + "\n")
        svc.terminate()
    (state / "answers" / "pairs.jsonl").write_text("")        # answers lost behind our back
    with pytest.raises(RuntimeError, match="damaged"):
        ServiceProcess("--state", str(state), timeout=60)
    assert Path(state / "checkpoint.json").exists()
