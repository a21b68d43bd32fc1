"""The service's MQTT side: events in from topics, answers out to topics.

**In.** Each ``--mqtt-in TOPIC[=STREAM]`` is subscribed with QoS 1; a
message's payload is a batch of events in the ``--mqtt-format`` (one
event a message is the common case; several lines are allowed), its rows
without a stream of their own going to STREAM.  One thread owns the
connection (:mod:`epsparql.service.mqtt_wire`: a burst of packets read
with one ``recv``, written with one ``send``) and hands each burst of
messages to a feeder thread; the feeder takes what is waiting and what
comes within :data:`LINGER` (5 ms; no wait when :data:`LINGER_ENOUGH`
messages wait already), up to :data:`BATCH_MAX`, joins the payloads of
consecutive messages bound for the same stream into one input (a payload
gets its final newline if it lacks one; CSV payloads, each with its
header, stay one input each), reads it and submits it to the engine room.
A malformed line is skipped and counted (the room's ``malformed``), never
stops the bridge.

**Acknowledged once durable.** The PUBACKs of a batch are sent when the engine room's
future for its last input resolves, that is once it is in the input log
(with ``--state``; without it, once the room took it).  A crash before
that loses nothing: the broker redelivers what was not acknowledged.
The broker sends at most :data:`RECEIVE_MAXIMUM` unacknowledged messages
(MQTT v5's Receive Maximum), which bounds the feeder's queue: the
connection's thread never waits (its keepalive goes on) while the engine
room's full queue holds the feeder back and the broker holds the rest.

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
``n``.  The engine room's listener only appends to a bounded buffer; the
connection's thread publishes from it, at most :data:`OUT_WINDOW` answers
unacknowledged.  Answers that find the buffer full (the broker gone or
slow) are dropped and
counted (:attr:`MqttBridge.dropped`): they stay in the answer file and on
``GET /queries/NAME/answers``.

The client reconnects by itself with a growing delay (1 s to 30 s) and
says so on standard error, one line per loss and per reconnection.
"""
from __future__ import annotations

import os
import select
import socket
import sys
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from . import mqtt_wire as wire
from .engine_room import Ingest, ParsedInput, ServiceError, parse_input

__all__ = ["MqttBridge", "broker_address", "BATCH_MAX", "RECEIVE_MAXIMUM"]

#: messages joined into one input at most
BATCH_MAX = 2000
#: seconds a batch waits for more messages after its first
LINGER = 0.005
#: messages waiting that make a batch at once, without the linger
LINGER_ENOUGH = 256
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


def _say(msg: str) -> None:
    try:
        print(f"epsparql serve: mqtt: {msg}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


class _Refused(Exception):
    """The broker refused the connection (CONNACK with a failure)."""


class MqttBridge:
    """Events from MQTT topics into the engine room, answers out to topics."""

    KEEPALIVE = 30                        # seconds

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
        # in: bursts of (packet id, qos, topic, payload, dup, connection) from the
        # connection's thread to the feeder
        self._in: deque[tuple[int, int, str, bytes, bool, int]] = deque()
        self._in_cv = threading.Condition()
        #: (connection, packet id) to acknowledge; the connection's thread sends them
        self._acks: deque[tuple[int, int]] = deque()
        self._out: deque[tuple[str, int, list[str]]] = deque()
        self._out_lines = 0
        self._out_lock = threading.Lock()
        self._inflight: dict[int, bytes] = {}     # answers published, their PUBACK not come
        self._next_pid = 0
        self._window = OUT_WINDOW
        self._pending = 0                 # inputs submitted whose future has not resolved
        self._pending_cv = threading.Condition()
        self._seen: set[tuple[int, int]] = set()
        self._seen_order: deque[tuple[int, int]] = deque()
        self._stream_of: dict[str, tuple[str, str | None]] = {}
        self._stopping = False            # no more messages taken
        self._closing = False             # the connection's thread: disconnect and end
        self._threads: list[threading.Thread] = []
        self._failing = False             # said "cannot reach" since the last connection
        self._fatal_said = False
        self._generation = 0              # the current connection's number
        self._sock: socket.socket | None = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._woken = False
        #: tests: False keeps every PUBACK of ours from leaving (a crash before them)
        self._send_acks = True
        self._aborted = False             # tests: ended as by a crash (_abort)

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
        for name, target in (("feeder", self._feed), ("io", self._io_main)):
            t = threading.Thread(target=target, name=f"epsparql-mqtt-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        if self.out_prefix is not None:
            self.room.add_listener(self._listener)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop taking messages, wait until what was submitted is
        acknowledged (and the answers waiting are published, as far as the
        window allows), then disconnect.  What was received but not
        submitted is not acknowledged: the broker delivers it again."""
        self._stopping = True
        deadline = time.monotonic() + timeout
        with self._in_cv:
            self._in_cv.notify_all()
        self._threads[0].join(max(0.0, deadline - time.monotonic()))
        with self._pending_cv:
            while self._pending and time.monotonic() < deadline:
                self._pending_cv.wait(0.1)
        self._closing = True
        self._wake()
        for t in self._threads[1:]:
            t.join(max(0.0, deadline - time.monotonic()))

    def _abort(self) -> None:
        """Tests: end like a crash, the connection dropped without a
        DISCONNECT (the broker keeps the session and what is unacknowledged)."""
        self._stopping = True
        self._closing = True
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._aborted = True
        self._wake()
        for t in self._threads:
            t.join(10)

    def stats(self) -> dict[str, Any]:
        return {"connected": self.connected, "disconnects": self.disconnects,
                "received": self.received, "taken": self.taken,
                "duplicates": self.duplicates, "published": self.published,
                "dropped": self.dropped, "waiting": len(self._in),
                "out_waiting": self._out_lines}

    # -- the connection's thread ---------------------------------------------------------
    def _wake(self) -> None:
        """Make the connection's thread look at its queues (acks, answers)."""
        if not self._woken:
            self._woken = True
            try:
                os.write(self._wake_w, b"x")
            except (BlockingIOError, OSError):
                pass

    def _io_main(self) -> None:
        delay = 1.0
        while not self._closing:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=10)
            except OSError:
                if not self._failing:
                    _say(f"cannot reach the broker at {self.host}:{self.port}; retrying")
                self._failing = True
                self._pause(delay)
                delay = min(30.0, delay * 2)
                continue
            self._sock = sock
            try:
                self._session(sock)
            except _Refused:
                self._failing = True
            except (OSError, wire.ProtocolError, ValueError) as e:
                if self.connected and not self._closing:
                    self.disconnects += 1
                    _say(f"lost the broker at {self.host}:{self.port} ({e or type(e).__name__})"
                         f"; reconnecting")
                elif not self.connected and not self._failing and not self._closing:
                    _say(f"cannot reach the broker at {self.host}:{self.port} ({e}); retrying")
                    self._failing = True
            finally:
                if self.connected:
                    delay = 1.0
                self.connected = False
                self._sock = None
                try:
                    sock.close()
                except OSError:
                    pass
            if not self._closing:
                self._pause(delay)
                delay = min(30.0, delay * 2)

    def _pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self._closing and time.monotonic() < end:
            select.select([self._wake_r], [], [], max(0.0, end - time.monotonic()))
            self._drain_wake()

    def _drain_wake(self) -> None:
        """Empty the wake-up pipe, then clear the flag (in this order: a wake
        that comes in between writes again, and the queues are read after)."""
        try:
            while os.read(self._wake_r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass
        self._woken = False

    def _session(self, sock: socket.socket) -> None:
        """One connection: CONNECT, SUBSCRIBE, then read and write until it ends."""
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(wire.connect(self.client_id, keepalive=self.KEEPALIVE,
                                  clean_start=not self.persistent,
                                  session_expiry=SESSION_EXPIRY if self.persistent else 0,
                                  receive_maximum=RECEIVE_MAXIMUM))
        reader = wire.Reader()
        packets: list[tuple[int, int, bytes]] = []
        while not packets:
            data = sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the broker closed the connection before CONNACK")
            packets = reader.feed(data)
        kind, _, body = packets.pop(0)
        if kind != wire.CONNACK:
            raise wire.ProtocolError(f"expected CONNACK, got packet type {kind}")
        present, reason, props = wire.decode_connack(body)
        if reason >= 0x80:
            if not self._failing:
                _say(f"the broker at {self.host}:{self.port} refused the connection: "
                     f"{wire.reason_text(reason)}")
            raise _Refused()
        self._generation += 1
        gen = self._generation
        self._failing = False
        self.connected = True
        assigned = props.get(0x12)
        who = self.client_id or (assigned.decode("utf-8", "replace") if assigned else "(any id)")
        _say(f"connected to {self.host}:{self.port} as {who}, "
             f"{'its session kept' if present else 'a new session'}")
        rm = props.get(0x21)
        self._window = min(OUT_WINDOW, rm) if isinstance(rm, int) and rm > 0 else OUT_WINDOW
        out = bytearray()
        if self.subs:
            out += wire.subscribe(1, [t for t, _ in self.subs])
        # answers published on the last connection and not acknowledged: again (DUP)
        for packet in self._inflight.values():
            out += bytes((packet[0] | 0x08,)) + packet[1:]
        sock.setblocking(False)
        last_in = last_out = time.monotonic()
        if out:
            out = self._send(sock, out)
            last_out = time.monotonic()
        pending = packets                 # what came with the CONNACK
        while True:
            if pending:
                last_in = time.monotonic()
                self._handle(pending, gen)
                pending = []
            if self._closing:
                if self._aborted:
                    return
                out += self._gather(gen)
                out += wire.DISCONNECT_PACKET
                sock.setblocking(True)
                sock.settimeout(5)
                sock.sendall(out)
                return
            out += self._gather(gen)
            if out:
                out = self._send(sock, out)
                last_out = time.monotonic()
            now = time.monotonic()
            if now - last_in > self.KEEPALIVE * 1.5:
                raise TimeoutError("no word from the broker for "
                                   f"{self.KEEPALIVE * 1.5:.0f} s")
            if now - last_out >= self.KEEPALIVE / 2:
                out += wire.PINGREQ_PACKET
                continue
            full = len(self._in) >= RECEIVE_MAXIMUM + 1024     # QoS 0 floods: TCP holds them
            rd = [self._wake_r] if full else [sock, self._wake_r]
            r, _, _ = select.select(rd, [sock] if out else [], [],
                                    max(0.0, self.KEEPALIVE / 2 - (now - last_out)))
            if self._wake_r in r:
                self._drain_wake()
            if sock in r:
                data = sock.recv(1 << 18)
                if not data:
                    raise ConnectionError("the broker closed the connection")
                pending = reader.feed(data)

    def _send(self, sock: socket.socket, out: bytearray) -> bytearray:
        """Write what the socket takes now; the rest waits for it."""
        try:
            n = sock.send(out)
        except BlockingIOError:
            return out
        del out[:n]
        return out

    def _handle(self, packets: list[tuple[int, int, bytes]], gen: int) -> None:
        msgs = []
        for kind, flags, body in packets:
            if kind == wire.PUBLISH:
                topic, pid, qos, dup, payload = wire.decode_publish(flags, body)
                if self._stopping:
                    continue              # not acknowledged: delivered again later
                msgs.append((pid, qos, topic, payload, dup, gen))
            elif kind == wire.PUBACK:
                pid = int.from_bytes(body[:2], "big")
                if self._inflight.pop(pid, None) is not None and len(body) > 2 \
                        and body[2] >= 0x80:
                    self.dropped += 1     # the broker refused it
            elif kind == wire.SUBACK:
                bad = [c for c in wire.decode_suback(body) if c >= 0x80]
                if bad:
                    _say(f"the broker refused a subscription: {wire.reason_text(bad[0])}")
            elif kind == wire.DISCONNECT:
                code = body[0] if body else 0
                raise ConnectionError(f"the broker disconnected: {wire.reason_text(code)}"
                                      if code else "the broker disconnected")
            elif kind in (wire.PINGRESP, wire.CONNACK):
                pass
            else:
                raise wire.ProtocolError(f"unexpected packet type {kind}")
        if msgs:
            self.received += len(msgs)
            with self._in_cv:
                self._in.extend(msgs)
                self._in_cv.notify()

    def _gather(self, gen: int) -> bytearray:
        """The PUBACKs due and the answers the window allows, as bytes to send."""
        out = bytearray()
        acks = self._acks
        while acks:
            g, pid = acks.popleft()
            if g == gen and self._send_acks:      # an older connection's: redelivered
                out += wire.puback(pid)
        if self.out_prefix is None:
            return out
        room = self._window - len(self._inflight)
        while room > 0 and self._out:
            with self._out_lock:
                if not self._out:
                    break
                name, first, lines = self._out[0]
                take = lines[:room]
                if len(take) == len(lines):
                    self._out.popleft()
                else:
                    self._out[0] = (name, first + len(take), lines[len(take):])
                self._out_lines -= len(take)
            topic = f"{self.out_prefix}/{name}".encode()
            for i, line in enumerate(take):
                pid = self._pid()
                packet = wire.publish(topic, line.rstrip("\n").encode("utf-8"), pid,
                                      (b"n", str(first + i).encode("ascii")))
                self._inflight[pid] = packet
                out += packet
            self.published += len(take)
            room -= len(take)
        return out

    def _pid(self) -> int:
        """A packet id not in flight."""
        while True:
            self._next_pid = self._next_pid % 65535 + 1
            if self._next_pid not in self._inflight:
                return self._next_pid

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
            with self._in_cv:
                while not q and not self._stopping:
                    self._in_cv.wait(0.2)
                if self._stopping:
                    return
            if len(q) < LINGER_ENOUGH:
                # what comes within LINGER seconds joins these: each input, and
                # each group the engine room logs and pushes, has a fixed cost
                # (about 1.5 ms: at 10,000 messages/s in inputs of 5, a core)
                time.sleep(LINGER)
            msgs = []
            while q and len(msgs) < BATCH_MAX:
                msgs.append(q.popleft())
            try:
                self._take(msgs)
            except Exception as e:        # a bug: say it, keep the bridge going
                _say(f"a batch of {len(msgs)} messages failed: {type(e).__name__}: {e}")

    def _take(self, msgs: list[tuple[int, int, str, bytes, bool, int]]) -> None:
        """Submit a batch of messages as few inputs; acknowledge them all
        when the last is durable."""
        acks: list[tuple[int, int]] = []
        runs: list[tuple[str, str | None, list[tuple[str, bytes, list[int] | None]]]] = []
        for mid, qos, topic, payload, dup, gen in msgs:
            if qos:
                acks.append((gen, mid))
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
            self._ack(acks)
        else:
            fut.add_done_callback(lambda f: self._ack(acks if f.exception() is None else []))

    def _ack(self, acks: list[tuple[int, int]]) -> None:
        if acks:
            self._acks.extend(acks)
            self._wake()

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

    # -- out -------------------------------------------------------------------------------
    def _listener(self, name: str, first: int, lines: list[str]) -> None:
        """The engine room's: queue a run of answers, or drop it (never wait)."""
        with self._out_lock:
            if self._out_lines + len(lines) > OUT_BUFFER:
                self.dropped += len(lines)
                return
            self._out.append((name, first, lines))
            self._out_lines += len(lines)
        self._wake()
