"""The service's MQTT side: events in from topics, answers out to topics.

**In.** Each ``--mqtt-in TOPIC[=STREAM]`` is subscribed with QoS 1; a
message's payload is a batch of events in the ``--mqtt-format`` (one
event a message is the common case; several lines are allowed), its rows
without a stream of their own going to STREAM.  paho's network thread
only hands each message to a feeder thread; the feeder takes every
message that comes within :data:`LINGER` (5 ms) of the first, up to
:data:`BATCH_MAX`, joins the payloads of
consecutive messages bound for the same stream into one input (a payload
gets its final newline if it lacks one; CSV payloads, each with its
header, stay one input each), reads it and submits it to the engine room.
A malformed line is skipped and counted (the room's ``malformed``), never
stops the bridge.

**Acknowledged once durable.** Messages are acknowledged by hand
(``manual_ack``): the PUBACKs of a batch are sent when the engine room's
future for its last input resolves, that is once it is in the input log
(with ``--state``; without it, once the room took it).  A crash before
that loses nothing: the broker redelivers what was not acknowledged.
The broker sends at most :data:`RECEIVE_MAXIMUM` unacknowledged messages
(MQTT v5's Receive Maximum), which bounds the feeder's queue: paho's
thread never waits (its keepalive goes on) while the engine room's full
queue holds the feeder back and the broker holds the rest.

**Persistent session, nothing twice.** With ``--state`` the client id
is fixed (default ``epsparql-serve``) and the session persistent (clean
start off, a session expiry of :data:`SESSION_EXPIRY` seconds), so the
broker keeps QoS 1 messages while the service is down.  A message logged
but whose PUBACK was lost in a crash comes again with the DUP flag: every
logged message's key ``[packet id, CRC-32 of topic and payload]`` is in
its log record's header, the engine room keeps the last 8,192 (in its
checkpoints too), and a DUP message whose key was logged is acknowledged
and not taken again.  (The packet id is kept on redelivery and does not
recur within 8,192 messages; the Receive Maximum is below that, so every
logged but unacknowledged message is among those keys.)

**Out.** With ``--mqtt-out PREFIX`` each answer is published to
``PREFIX/DEPLOYMENT`` with QoS 1: the payload is the JSON line ``epsparql
run`` writes (without its newline), the answer's number the user property
``n``.  The engine room's listener only appends to a bounded buffer; a
publisher thread hands answers to paho, whose own queue is bounded too.
Answers that find either full (the broker gone or slow) are dropped and
counted (:attr:`MqttBridge.dropped`): they stay in the answer file and on
``GET /queries/NAME/answers``.

The client reconnects by itself with a growing delay (1 s to 30 s) and
says so on standard error, one line per loss and per reconnection.
"""
from __future__ import annotations

import queue
import sys
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .engine_room import Ingest, ParsedInput, ServiceError, parse_input

__all__ = ["MqttBridge", "broker_address", "BATCH_MAX", "RECEIVE_MAXIMUM"]

#: messages joined into one input at most
BATCH_MAX = 2000
#: seconds a batch waits for more messages after its first
LINGER = 0.005
#: unacknowledged messages the broker may send us (MQTT v5 Receive Maximum)
RECEIVE_MAXIMUM = 4096
#: seconds the broker keeps a persistent session while the service is away
SESSION_EXPIRY = 7 * 24 * 3600
#: answers waiting to be published before further ones are dropped
OUT_BUFFER = 20000
#: answers published and not yet acknowledged by the broker, at most
OUT_WINDOW = 256
DEFAULT_CLIENT_ID = "epsparql-serve"
_BOM = b"\xef\xbb\xbf"


def broker_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``HOST``, port 1883; ``[::1]:PORT`` for IPv6)."""
    t = text.strip()
    host, port = t, "1883"
    if t.startswith("["):
        end = t.find("]")
        if end < 0:
            raise ValueError(f"--mqtt {text!r}: expected HOST:PORT ([IPv6]:PORT)")
        host, rest = t[1:end], t[end + 1:]
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"--mqtt {text!r}: expected HOST:PORT ([IPv6]:PORT)")
            port = rest[1:]
    elif t.count(":") == 1:
        host, port = t.split(":")
    elif ":" in t:
        raise ValueError(f"--mqtt {text!r}: an IPv6 address goes in brackets: [ADDR]:PORT")
    if not host:
        raise ValueError(f"--mqtt {text!r}: expected HOST:PORT (no host)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--mqtt {text!r}: the port must be a number from 1 to 65535")
    return host, int(port)


@dataclass
class MqttIngest(Ingest):
    """An input made of MQTT messages: its log header carries their keys."""

    keys: list[list[int]] = field(default_factory=list)

    def header(self) -> dict[str, Any]:
        h = super().header()
        if self.keys:
            h["mqtt"] = self.keys
        return h


_BUFFERED: Any = None


def _buffered_client() -> Any:
    """paho's client, reading the socket 64 KiB at a time.

    paho reads a packet with a ``recv`` for its first byte, one for each
    byte of its length and one for the rest, and one packet per wake-up of
    its loop when nothing of ours is in flight: with one event a message,
    that is four system calls and a ``select`` per event.  This reads what
    the socket holds into a buffer, hands paho its pieces from there, and
    goes on reading packets while the buffer holds some (what is left of a
    packet cut at the buffer's end is read when the socket has it)."""
    global _BUFFERED
    if _BUFFERED is not None:
        return _BUFFERED
    import paho.mqtt.client as mqtt

    class BufferedClient(mqtt.Client):     # type: ignore[misc]
        _rbuf = b""
        _rpos = 0

        def _sock_recv(self, bufsize: int) -> bytes:
            buf, pos = self._rbuf, self._rpos
            if pos >= len(buf):
                buf = super()._sock_recv(1 << 16)    # BlockingIOError: nothing yet
                if not buf:
                    return buf                        # the connection closed
                self._rbuf, pos = buf, 0
            out = buf[pos:pos + bufsize]
            self._rpos = pos + len(out)
            return out

        def _sock_close(self) -> None:
            self._rbuf, self._rpos = b"", 0         # nothing of the old connection
            super()._sock_close()

        def loop_read(self, max_packets: int = 1) -> Any:
            rc = super().loop_read(max_packets)
            while not rc and self._rpos < len(self._rbuf) and self._sock is not None:
                rc = super().loop_read(max_packets)
            return rc

    _BUFFERED = BufferedClient
    return BufferedClient


def _say(msg: str) -> None:
    try:
        print(f"epsparql serve: mqtt: {msg}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


class MqttBridge:
    """Events from MQTT topics into the engine room, answers out to topics."""

    def __init__(self, room: Any, host: str, port: int, *, inputs: list[str],
                 out_prefix: str | None, fmt: str, client_id: str | None,
                 persistent: bool) -> None:
        self.room = room
        self.host, self.port = host, port
        self.fmt = fmt
        self.persistent = persistent
        self.out_prefix = out_prefix.rstrip("/") if out_prefix else None
        self.subs: list[tuple[str, str | None]] = []
        for spec in inputs:
            topic, sep, stream = spec.partition("=")
            if not topic:
                raise ValueError(f"--mqtt-in {spec!r}: expected TOPIC[=STREAM]")
            if sep:
                from ..rdf.ntriples import absolute_iri_problem
                stream = stream.strip("<>")
                problem = absolute_iri_problem(stream)
                if problem is not None:
                    raise ValueError(f"--mqtt-in {spec!r}: the stream must be an absolute "
                                     f"IRI: {problem}")
            self.subs.append((topic, stream if sep else None))
        self.client_id = client_id or (DEFAULT_CLIENT_ID if persistent else "")
        # counters (read anywhere)
        self.received = 0                 # messages received
        self.taken = 0                    # messages submitted to the engine room
        self.duplicates = 0               # redelivered messages already logged: not taken again
        self.published = 0                # answers handed to the broker
        self.dropped = 0                  # answers dropped: the broker gone or too slow
        self.connected = False
        self.disconnects = 0
        self._in: queue.Queue[tuple[int, int, str, bytes, bool]] = \
            queue.Queue(RECEIVE_MAXIMUM + 1024)
        self._acks: queue.SimpleQueue[list[tuple[int, int]] | None] = queue.SimpleQueue()
        self._out: deque[tuple[str, int, list[str]]] = deque()
        self._out_lines = 0
        self._outstanding = 0             # answers published, their PUBACK not come
        self._window = OUT_WINDOW
        self._out_cv = threading.Condition()
        self._pending = 0                 # inputs submitted whose future has not resolved
        self._pending_cv = threading.Condition()
        self._seen: set[tuple[int, int]] = set()
        self._seen_order: deque[tuple[int, int]] = deque()
        self._stream_of: dict[str, tuple[str, str | None]] = {}
        self._stopping = False
        self._threads: list[threading.Thread] = []
        self._failing = False             # said "cannot reach" since the last connection
        self._fatal_said = False
        self._client = self._make_client()

    # -- the client ----------------------------------------------------------------------
    def _make_client(self) -> Any:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        c = _buffered_client()(CallbackAPIVersion.VERSION2, client_id=self.client_id,
                               protocol=mqtt.MQTTv5, manual_ack=True)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_connect_fail = self._on_connect_fail
        c.on_message = self._on_message
        c.reconnect_delay_set(1, 30)
        c.on_publish = self._on_publish
        # paho's own window rescans every message it holds at each PUBACK: it is
        # switched off (0) and the publisher thread keeps at most OUT_WINDOW
        # answers unacknowledged instead (the broker's Receive Maximum if lower)
        c.max_inflight_messages_set(0)
        c.max_queued_messages_set(OUT_BUFFER)
        return c

    def _connect_properties(self) -> Any:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        p = Properties(PacketTypes.CONNECT)
        p.ReceiveMaximum = RECEIVE_MAXIMUM
        if self.persistent:
            p.SessionExpiryInterval = SESSION_EXPIRY
        return p

    def start(self) -> None:
        """Connect (in the background: a broker not up yet is retried) and
        start the bridge's threads."""
        self.room.mqtt = self             # the metrics read the bridge's counters
        if self.persistent:
            try:
                keys = self.room.call(lambda: list(self.room.mqtt_logged)).result(60)
            except Exception:
                keys = []
            for k in keys:
                self._remember((int(k[0]), int(k[1])))
        for name, target in (("feeder", self._feed), ("acks", self._ack_loop)):
            t = threading.Thread(target=target, name=f"epsparql-mqtt-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        if self.out_prefix is not None:
            t = threading.Thread(target=self._publish_loop, name="epsparql-mqtt-out",
                                 daemon=True)
            t.start()
            self._threads.append(t)
            self.room.add_listener(self._listener)
        self._client.connect_async(self.host, self.port, keepalive=30,
                                   clean_start=not self.persistent,
                                   properties=self._connect_properties())
        self._client.loop_start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop taking messages, wait until what was submitted is
        acknowledged (and the answers waiting are handed to paho), then
        disconnect.  What was received but not submitted is not
        acknowledged: the broker delivers it again."""
        self._stopping = True
        deadline = time.monotonic() + timeout
        for t in self._threads:
            if t.name.endswith("feeder"):
                t.join(max(0.0, deadline - time.monotonic()))
        with self._pending_cv:
            while self._pending and time.monotonic() < deadline:
                self._pending_cv.wait(0.1)
        self._acks.put(None)
        with self._out_cv:
            self._out_cv.notify_all()
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        try:
            self._client.disconnect()
        except Exception:
            pass
        self._client.loop_stop()

    def stats(self) -> dict[str, Any]:
        return {"connected": self.connected, "disconnects": self.disconnects,
                "received": self.received, "taken": self.taken,
                "duplicates": self.duplicates, "published": self.published,
                "dropped": self.dropped, "waiting": self._in.qsize(),
                "out_waiting": self._out_lines}

    # -- paho's callbacks (its network thread: never wait here) ----------------------------
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:
        if reason.is_failure:
            if not self._failing:
                _say(f"the broker at {self.host}:{self.port} refused the connection: {reason}")
            self._failing = True
            return
        self._failing = False
        self.connected = True
        session = "its session kept" if getattr(flags, "session_present", False) else \
            "a new session"
        _say(f"connected to {self.host}:{self.port} as {self.client_id or '(any id)'}, "
             f"{session}")
        with self._out_cv:                # what paho holds is sent again on this connection
            held = getattr(client, "_out_messages", None)
            self._outstanding = len(held) if held is not None else 0
            rm = getattr(properties, "ReceiveMaximum", None)
            self._window = min(OUT_WINDOW, rm) if isinstance(rm, int) and rm > 0 else \
                OUT_WINDOW
            self._out_cv.notify_all()
        subs = [(topic, 1) for topic, _ in self.subs]
        if subs:
            client.subscribe(subs)

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any,
                    properties: Any) -> None:
        with self._out_cv:
            self._outstanding = max(0, self._outstanding - 1)
            self._out_cv.notify_all()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:
        was = self.connected
        self.connected = False
        if self._stopping:
            return
        if was:
            self.disconnects += 1
            _say(f"lost the broker at {self.host}:{self.port} ({reason}); reconnecting")

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        if not self._failing and not self._stopping:
            _say(f"cannot reach the broker at {self.host}:{self.port}; retrying")
        self._failing = True

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        if self._stopping:
            return                        # not acknowledged: delivered again later
        self.received += 1
        self._in.put((msg.mid, msg.qos, msg.topic, msg.payload, bool(msg.dup)))

    # -- in: the feeder ------------------------------------------------------------------------
    def _route(self, topic: str) -> tuple[str, str | None]:
        got = self._stream_of.get(topic)
        if got is None:
            from paho.mqtt.client import topic_matches_sub
            got = next(((f, s) for f, s in self.subs if topic_matches_sub(f, topic)),
                       (topic, None))
            if len(self._stream_of) > 10000:
                self._stream_of.clear()
            self._stream_of[topic] = got
        return got

    def _remember(self, key: tuple[int, int]) -> None:
        if key in self._seen:
            return
        self._seen.add(key)
        self._seen_order.append(key)
        while len(self._seen_order) > 2 * RECEIVE_MAXIMUM:
            self._seen.discard(self._seen_order.popleft())

    def _feed(self) -> None:
        q = self._in
        while not self._stopping:
            try:
                msgs = [q.get(timeout=0.2)]
            except queue.Empty:
                continue
            # what else comes within LINGER seconds of the first joins it: reading an
            # input costs about a millisecond however small, and so does each group
            # the engine room logs and pushes
            until = time.monotonic() + LINGER
            while len(msgs) < BATCH_MAX:
                try:
                    msgs.append(q.get_nowait())
                    continue
                except queue.Empty:
                    pass
                left = until - time.monotonic()
                if left <= 0:
                    break
                try:
                    msgs.append(q.get(timeout=left))
                except queue.Empty:
                    break
            try:
                self._take(msgs)
            except Exception as e:        # a bug: say it, keep the bridge going
                _say(f"a batch of {len(msgs)} messages failed: {type(e).__name__}: {e}")

    def _take(self, msgs: list[tuple[int, int, str, bytes, bool]]) -> None:
        """Submit a batch of messages as few inputs; acknowledge them all
        when the last is durable."""
        acks: list[tuple[int, int]] = []
        runs: list[tuple[str, str | None, list[tuple[str, bytes, list[int] | None]]]] = []
        for mid, qos, topic, payload, dup in msgs:
            if qos:
                acks.append((mid, qos))
            key = None
            if self.persistent and qos:
                key = (mid, zlib.crc32(payload, zlib.crc32(topic.encode("utf-8") + b"\0")))
                if dup and key in self._seen:
                    self.duplicates += 1
                    continue
                self._remember(key)
            filt, stream = self._route(topic)
            if runs and runs[-1][1] == stream and runs[-1][0] == filt and self.fmt != "csv":
                runs[-1][2].append((topic, payload, None if key is None else list(key)))
            else:
                runs.append((filt, stream, [(topic, payload,
                                             None if key is None else list(key))]))
        fut = None
        for filt, stream, items in runs:
            parsed = self._parse(filt, stream, items)
            try:
                fut = self.room.submit("events", parsed)
            except ServiceError as e:     # the engine room stopped: nothing more is taken
                if not self._fatal_said:
                    _say(f"cannot take messages: {e}")
                    self._fatal_said = True
                return                    # not acknowledged
            self.taken += len(items)
            with self._pending_cv:
                self._pending += 1
            fut.add_done_callback(self._done)
        if fut is None:                   # only duplicates: acknowledged at once
            self._acks.put(acks)
        else:
            fut.add_done_callback(lambda f: self._acks.put(acks if f.exception() is None
                                                           else []))

    def _parse(self, filt: str, stream: str | None,
               items: list[tuple[str, bytes, list[int] | None]]) -> ParsedInput:
        topics = {t for t, _, _ in items}
        origin = f"mqtt:{items[0][0] if len(topics) == 1 else filt}"
        if len(items) == 1:
            body = items[0][1]
        else:
            parts = []
            for _, p, _ in items:
                if p.startswith(_BOM):
                    p = p[3:]
                parts.append(p if p.endswith(b"\n") else p + b"\n")
            body = b"".join(parts)
        keys = [k for _, _, k in items if k is not None]
        ing = MqttIngest(body, self.fmt, stream, "skip", origin, keys=keys)
        try:
            return parse_input(ing)
        except Exception as e:            # a CSV payload without its header, ...
            return ParsedInput(ing, [], 0, max(1, len(items)), [str(e)])

    def _done(self, fut: Any) -> None:
        e = fut.exception()
        if e is not None and not self._fatal_said:
            _say(f"the engine room did not take a batch ({type(e).__name__}: {e}); its "
                 f"messages are not acknowledged")
            self._fatal_said = True
        with self._pending_cv:
            self._pending -= 1
            if not self._pending:
                self._pending_cv.notify_all()

    def _ack_loop(self) -> None:
        while True:
            acks = self._acks.get()
            if acks is None:
                return
            for mid, qos in acks:
                try:
                    self._client.ack(mid, qos)
                except Exception:
                    pass

    # -- out -------------------------------------------------------------------------------
    def _listener(self, name: str, first: int, lines: list[str]) -> None:
        """The engine room's: queue a run of answers, or drop it (never wait)."""
        with self._out_cv:
            if self._out_lines + len(lines) > OUT_BUFFER:
                self.dropped += len(lines)
                return
            self._out.append((name, first, lines))
            self._out_lines += len(lines)
            self._out_cv.notify()

    def _publish_loop(self) -> None:
        from paho.mqtt.client import MQTT_ERR_QUEUE_SIZE
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        while True:
            with self._out_cv:
                while not self._out and not self._stopping:
                    self._out_cv.wait()
                if not self._out:
                    return
                name, first, lines = self._out.popleft()
                self._out_lines -= len(lines)
            topic = f"{self.out_prefix}/{name}"
            for i, line in enumerate(lines):
                if self._outstanding >= self._window:
                    with self._out_cv:
                        while self._outstanding >= self._window and not self._stopping:
                            self._out_cv.wait(1.0)
                        if self._stopping:
                            self.dropped += len(lines) - i
                            return
                props = Properties(PacketTypes.PUBLISH)
                props.UserProperty = ("n", str(first + i))
                with self._out_cv:        # counted before: its PUBACK may come at once
                    self._outstanding += 1
                try:
                    info = self._client.publish(topic, line.rstrip("\n"), qos=1,
                                                properties=props)
                    ok = info.rc != MQTT_ERR_QUEUE_SIZE
                except (ValueError, RuntimeError):
                    ok = False
                if ok:
                    self.published += 1
                else:
                    self.dropped += 1
                    with self._out_cv:
                        self._outstanding = max(0, self._outstanding - 1)
