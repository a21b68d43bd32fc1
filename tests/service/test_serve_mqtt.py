"""``epsparql serve --mqtt``: a real Mosquitto, the service as a subprocess.

- the answers published to MQTT and those read over HTTP equal ``epsparql
  run``'s on the same stream (an EP-SPARQL SEQ query and a C-SPARQL
  windowed one, its last windows closed by ``POST /advance``), with
  malformed payloads among the messages counted and skipped;
- ``kill -9`` in the middle of the stream and a restart with the same state
  and client id, the publisher going on meanwhile: every message is taken
  exactly once (the answers equal ``run``'s, none missing, none twice);
- a message logged but never acknowledged (its PUBACK lost) comes again
  with DUP set after a crash and is not taken a second time (in process,
  deterministic).
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mqtt_broker import Mosquitto, available  # noqa: E402
from service_proc import ServiceProcess  # noqa: E402

pytestmark = pytest.mark.skipif(not available(), reason="mosquitto is not installed")
mqtt = pytest.importorskip("paho.mqtt.client")
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EX = "http://ex.org/"
STREAM = EX + "s"
INT = "http://www.w3.org/2001/XMLSchema#integer"
SEQ = ("PREFIX : <http://ex.org/>\n"
       "SELECT ?c ?p1 ?p2 WHERE { {?c :price ?p1} SEQ {?c :price ?p2} "
       'FILTER(?p2 > ?p1 && getDURATION() < "PT5S"^^xsd:duration) }\n')
WINDOWED = ("REGISTER QUERY w AS\nPREFIX : <http://ex.org/>\n"
            "SELECT ?c (MAX(?p) AS ?m) (COUNT(*) AS ?n)\n"
            f"FROM STREAM <{STREAM}> [RANGE 10s STEP 5s]\n"
            "WHERE { ?c :price ?p } GROUP BY ?c\n")


def events(n: int) -> list[str]:
    """n events (nt lines): 7 companies, prices, 0.5 s apart."""
    return [f'<{EX}c{i % 7}> <{EX}price> "{(i * 37) % 101}"^^<{INT}> {i * 0.5} .\n'
            for i in range(n)]


def run_answers(tmp: Path, query: str, lines: list[str]) -> list[str]:
    """``epsparql run QUERY --stream FILE --output-format jsonl``, the rows on STREAM."""
    q = tmp / "q.rq"
    q.write_text(query)
    s = tmp / "s.nqt"
    quads = []
    for line in lines:                    # "S P O T .": "S P O <STREAM> T ."
        head, t, _ = line.rsplit(" ", 2)
        quads.append(f"{head} <{STREAM}> {t} .\n")
    s.write_text("".join(quads))
    out = subprocess.run([sys.executable, "-m", "epsparql.cli", "run", str(q), "--stream",
                          str(s), "--output-format", "jsonl", "--quiet"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def norm(lines: list[str]) -> Counter:
    """A multiset of answers (the query's name aside: run names it after the file)."""
    out: Counter = Counter()
    for line in lines:
        d = json.loads(line)
        d.pop("query", None)
        out[json.dumps(d, sort_keys=True)] += 1
    return out


class Service(ServiceProcess):
    """``epsparql serve --port 0 ARGS`` (service_proc.py) with what these
    tests ask of it."""

    def http(self, method: str, path: str, body: Any = None) -> tuple[Any, dict[str, str]]:
        status, headers, out = self.request(
            method, path, None if body is None else json.dumps(body),
            headers={"Content-Type": "application/json"})
        assert status < 400, f"{method} {path}: {status} {out[:300]!r}"
        return out, headers

    def status(self) -> dict[str, Any]:
        try:
            return json.loads(self.http("GET", "/status")[0])
        except OSError as e:
            time.sleep(0.5)
            raise AssertionError(f"{e}: the service said:\n" + self.stderr) from None

    def wait_events(self, n: int, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            st = self.status()
            if st["events"] >= n and not st["queued"] or time.monotonic() > deadline:
                return st
            time.sleep(0.1)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.terminate()
            except subprocess.TimeoutExpired:
                self.kill()


def client(broker: Mosquitto, **kw: Any) -> Any:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, **kw)
    c.max_inflight_messages_set(0)
    c.connect(broker.host, broker.port)
    c.loop_start()
    return c


@pytest.fixture(scope="module")
def broker(tmp_path_factory: Any) -> Any:
    with Mosquitto(tmp_path_factory.mktemp("mosquitto")) as b:
        yield b


def publish_all(pub: Any, topic: str, payloads: list[Any]) -> None:
    infos = [pub.publish(topic, p, qos=1) for p in payloads]
    for i in infos:
        i.wait_for_publish(30)


def test_answers_over_mqtt_and_http_equal_run(broker: Mosquitto, tmp_path: Path) -> None:
    lines = events(2000)
    (tmp_path / "q1.rq").write_text(SEQ)
    (tmp_path / "w.rq").write_text(WINDOWED)
    want_seq = norm(run_answers(tmp_path, SEQ, lines))
    want_win = norm(run_answers(tmp_path, WINDOWED, lines))
    assert sum(want_seq.values()) > 500 and sum(want_win.values()) > 100

    got: dict[str, list[str]] = {"q1": [], "w": []}
    numbers: list[int] = []
    sub = client(broker)

    def on_message(c: Any, u: Any, m: Any) -> None:
        got[m.topic.split("/")[-1]].append(m.payload.decode())
        numbers.extend(int(v) for k, v in (m.properties.UserProperty or []) if k == "n")
    sub.on_message = on_message
    sub.subscribe("answers/#", 1)
    svc = Service("--state", str(tmp_path / "state"), "--mqtt", broker.address,
                  "--mqtt-in", f"sensors/#={STREAM}", "--mqtt-out", "answers",
                  "--mqtt-client-id", "t-equal",
                  "--query", f"q1={tmp_path / 'q1.rq'}", "--query", f"w={tmp_path / 'w.rq'}")
    try:
        pub = client(broker)
        time.sleep(0.5)                   # the service subscribed
        payloads: list[Any] = list(lines)
        payloads.insert(700, "this is not a triple\n")     # malformed: counted, skipped
        payloads.insert(1400, b"\xff\xfe not UTF-8")
        # most one event a message, some messages several events
        payloads[100:110] = ["".join(payloads[100:110])]
        publish_all(pub, "sensors/a", payloads)
        st = svc.wait_events(len(lines))
        assert st["events"] == len(lines)
        assert st["malformed"] == 2
        # run's end of stream evaluates every window opened by its last event
        # (docs/DIALECTS.md); an advance past them closes the same windows here
        svc.http("POST", "/advance", {"time": 1e6})
        assert norm(svc.answers("q1")) == want_seq
        assert norm(svc.answers("w")) == want_win
        deadline = time.monotonic() + 30
        while (len(got["q1"]) < sum(want_seq.values())
               or len(got["w"]) < sum(want_win.values())) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert norm(got["q1"]) == want_seq
        assert norm(got["w"]) == want_win
        assert sorted(numbers) == sorted(list(range(1, sum(want_seq.values()) + 1)) +
                                         list(range(1, sum(want_win.values()) + 1)))
        metrics = svc.http("GET", "/metrics")[0].decode()
        assert "epsparql_mqtt_answers_dropped_total 0" in metrics
        pub.loop_stop()
        pub.disconnect()
    finally:
        svc.stop()
        sub.loop_stop()
        sub.disconnect()
    assert "stopped" in "".join(svc.lines)


def test_kill9_mid_stream_then_restart_takes_every_message_once(broker: Mosquitto,
                                                                 tmp_path: Path) -> None:
    lines = events(3000)
    (tmp_path / "q1.rq").write_text(SEQ)
    want = norm(run_answers(tmp_path, SEQ, lines))
    args = ("--state", str(tmp_path / "state"), "--mqtt", broker.address,
            "--mqtt-in", f"sensors/#={STREAM}", "--mqtt-client-id", "t-kill",
            "--query", f"q1={tmp_path / 'q1.rq'}")
    svc = Service(*args)
    pub = client(broker)
    time.sleep(0.5)
    sent = [0]

    def publisher() -> None:              # on and on, the service up or down
        infos = []
        for i in range(0, len(lines), 10):
            infos += [pub.publish("sensors/b", line, qos=1) for line in lines[i:i + 10]]
            sent[0] = i + 10
            time.sleep(0.004)
        for info in infos:
            info.wait_for_publish(60)
    t = threading.Thread(target=publisher)
    t.start()
    try:
        while sent[0] < 1000:
            time.sleep(0.01)
        svc.kill9()
        at_kill = sent[0]
        svc = Service(*args)
        t.join(120)
        assert sent[0] > at_kill, "the publisher was to go on while the service was down"
        st = svc.wait_events(len(lines))
        assert st["events"] == len(lines), st
        assert norm(svc.answers("q1")) == want
        text = "".join(svc.lines)
        assert "its session kept" in text, text
        m = re.search(r"epsparql_mqtt_duplicates_total (\d+)",
                      svc.http("GET", "/metrics")[0].decode())
        print(f"kill at {at_kill} sent; redelivered and logged before: {m and m.group(1)}")
    finally:
        svc.stop()
        pub.loop_stop()
        pub.disconnect()


def test_redelivered_logged_message_is_not_taken_twice(broker: Mosquitto,
                                                       tmp_path: Path) -> None:
    """The PUBACKs of logged messages are lost (the bridge's acks switched
    off), the service crashes: the broker delivers them again, with DUP; a
    restarted service does not take them again, whether their keys come
    from the log's replay or from a checkpoint."""
    from epsparql.service.engine_room import EngineRoom, RoomConfig
    from epsparql.service.mqtt_bridge import MqttBridge
    state = tmp_path / "state"
    lines = events(50)

    def up() -> tuple[Any, Any]:
        room = EngineRoom(RoomConfig(state_dir=state))
        room.start()
        bridge = MqttBridge(room, broker.host, broker.port, inputs=[f"sensors/#={STREAM}"],
                            out_prefix=None, fmt="nt", client_id="t-dup", persistent=True)
        return room, bridge

    def crash(room: Any, bridge: Any, checkpoint: bool) -> None:
        bridge._abort()                   # no DISCONNECT: the broker keeps the session
        room.stop(checkpoint=checkpoint)

    def wait(room: Any, n: int) -> None:
        deadline = time.monotonic() + 20
        while room.events < n and time.monotonic() < deadline:
            time.sleep(0.05)

    pub = client(broker)
    try:
        for checkpoint in (False, True):
            room, bridge = up()
            bridge._send_acks = False                     # the PUBACKs never leave
            bridge.start()
            time.sleep(0.5)
            before = room.events
            publish_all(pub, "sensors/c", lines)
            wait(room, before + len(lines))
            assert room.events == before + len(lines)
            crash(room, bridge, checkpoint)
            room, bridge = up()
            assert room.events == before + len(lines)
            bridge.start()
            deadline = time.monotonic() + 20
            while bridge.duplicates < len(lines) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert bridge.duplicates == len(lines)
            assert bridge.received == len(lines)
            time.sleep(0.3)
            assert room.events == before + len(lines)
            bridge.stop()
            room.stop()
    finally:
        pub.loop_stop()
        pub.disconnect()


def test_broker_restart_mid_stream_loses_nothing(tmp_path: Path) -> None:
    """The broker goes down and comes back (its persistence on): the
    service says so, reconnects to its kept session, and takes every
    event exactly once, those published before the restart and those
    published after it while the service was still away (the answers
    equal run's)."""
    lines = events(1000)
    (tmp_path / "q1.rq").write_text(SEQ)
    want = norm(run_answers(tmp_path, SEQ, lines))
    with Mosquitto(tmp_path / "mosquitto") as own:
        svc = Service("--state", str(tmp_path / "state"), "--mqtt", own.address,
                      "--mqtt-in", f"sensors/#={STREAM}", "--mqtt-client-id", "t-restart",
                      "--query", f"q1={tmp_path / 'q1.rq'}")
        try:
            pub = client(own)
            time.sleep(0.5)
            publish_all(pub, "sensors/r", lines[:500])
            assert svc.wait_events(500)["events"] == 500
            pub.loop_stop()
            pub.disconnect()
            time.sleep(1.2)               # the broker saved the session (autosave: 1 s)
            own.restart()
            pub = client(own)             # at once: the service reconnects a second later
            publish_all(pub, "sensors/r", lines[500:])
            early = svc.stderr.count("mqtt: connected")
            pub.loop_stop()
            pub.disconnect()
            st = svc.wait_events(len(lines))
            assert st["events"] == len(lines), (st, svc.stderr)
            assert norm(svc.answers("q1")) == want
            text = svc.stderr
            assert "lost the broker" in text and text.count("mqtt: connected") == 2, text
            last = [ln for ln in text.splitlines() if "mqtt: connected" in ln][-1]
            assert last.endswith("its session kept"), text
            print(f"published while the service was away: {early == 1}")
        finally:
            svc.stop()
