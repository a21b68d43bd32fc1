"""MQTT 5 packets as the service's bridge writes and reads them.

Why not paho: its Python costs 30–60 µs a packet (an object per message,
a lock and a wake-up of its thread per packet queued, a system call per
packet written), and at one event a message the bridge handles four
packets an event (the message, its PUBACK, the answer, its PUBACK).  The
bridge needs a small part of MQTT 5 (OASIS, 2019): CONNECT with a session
expiry and a Receive Maximum, SUBSCRIBE at QoS 1, PUBLISH at QoS 0 and 1
both ways, PUBACK, PINGREQ, DISCONNECT; these functions build and read
exactly those, so that one thread can read a burst of packets with one
``recv`` and write a burst with one ``send``.
"""
from __future__ import annotations

import struct
from typing import Any

__all__ = ["ProtocolError", "Reader", "connect", "subscribe", "publish", "puback",
           "decode_publish", "decode_connack", "decode_suback", "reason_text",
           "CONNACK", "PUBLISH", "PUBACK", "SUBACK", "PINGRESP", "DISCONNECT",
           "PINGREQ_PACKET", "DISCONNECT_PACKET"]

CONNECT, CONNACK, PUBLISH, PUBACK, SUBSCRIBE, SUBACK = 1, 2, 3, 4, 8, 9
PINGREQ, PINGRESP, DISCONNECT = 12, 13, 14
PINGREQ_PACKET = b"\xc0\x00"
DISCONNECT_PACKET = b"\xe0\x00"
_U16 = struct.Struct("!H")
_U32 = struct.Struct("!I")

#: property identifier -> its value's type (MQTT 5, section 2.2.2.2)
_PROPS = {**{k: "byte" for k in (0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A)},
          **{k: "u16" for k in (0x13, 0x21, 0x22, 0x23)},
          **{k: "u32" for k in (0x02, 0x11, 0x18, 0x27)},
          0x0B: "varint",
          **{k: "str" for k in (0x03, 0x08, 0x12, 0x15, 0x1A, 0x1C, 0x1F)},
          **{k: "bin" for k in (0x09, 0x16)}, 0x26: "pair"}
_REASONS = {0x80: "unspecified error", 0x81: "malformed packet", 0x82: "protocol error",
            0x83: "implementation specific error", 0x84: "unsupported protocol version",
            0x85: "client identifier not valid", 0x86: "bad user name or password",
            0x87: "not authorized", 0x88: "server unavailable", 0x89: "server busy",
            0x8A: "banned", 0x8C: "bad authentication method", 0x8E: "session taken over",
            0x8F: "topic filter invalid", 0x93: "receive maximum exceeded",
            0x97: "quota exceeded", 0x9F: "connection rate exceeded"}


class ProtocolError(Exception):
    """What the broker sent is not MQTT 5 as expected."""


def reason_text(code: int) -> str:
    return f"{_REASONS.get(code, 'reason')} (0x{code:02X})"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 21:
            raise ProtocolError("a variable byte integer runs past its packet")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _str(b: bytes) -> bytes:
    return _U16.pack(len(b)) + b


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + _varint(len(body)) + body


def connect(client_id: str, *, keepalive: int, clean_start: bool, session_expiry: int,
            receive_maximum: int) -> bytes:
    """CONNECT (protocol level 5), without user name or will."""
    props = b"\x21" + _U16.pack(receive_maximum)
    if session_expiry:
        props += b"\x11" + _U32.pack(session_expiry)
    head = (_str(b"MQTT") + b"\x05" + bytes((0x02 if clean_start else 0,))
            + _U16.pack(keepalive) + _varint(len(props)) + props)
    return _packet(0x10, head + _str(client_id.encode("utf-8")))


def subscribe(pid: int, filters: list[str], qos: int = 1) -> bytes:
    """SUBSCRIBE to topic filters, each at ``qos``."""
    body = _U16.pack(pid) + b"\x00" + b"".join(_str(f.encode("utf-8")) + bytes((qos,))
                                              for f in filters)
    return _packet(0x82, body)


def publish(topic: bytes, payload: bytes, pid: int,
            user: tuple[bytes, bytes] | None = None, dup: bool = False) -> bytes:
    """PUBLISH at QoS 1, with one user property (name, value) if given."""
    props = b"" if user is None else b"\x26" + _str(user[0]) + _str(user[1])
    body = _str(topic) + _U16.pack(pid) + _varint(len(props)) + props + payload
    return _packet(0x3A if dup else 0x32, body)


def puback(pid: int) -> bytes:
    """PUBACK, success (a remaining length of 2: reason 0, no properties)."""
    return b"\x40\x02" + _U16.pack(pid)


def _properties(buf: bytes, pos: int) -> tuple[dict[int, Any], int]:
    n, pos = _read_varint(buf, pos)
    end = pos + n
    if end > len(buf):
        raise ProtocolError("properties run past their packet")
    out: dict[int, Any] = {}
    while pos < end:
        pid = buf[pos]
        pos += 1
        kind = _PROPS.get(pid)
        if kind == "byte":
            v, pos = buf[pos], pos + 1
        elif kind == "u16":
            v, pos = _U16.unpack_from(buf, pos)[0], pos + 2
        elif kind == "u32":
            v, pos = _U32.unpack_from(buf, pos)[0], pos + 4
        elif kind == "varint":
            v, pos = _read_varint(buf, pos)
        elif kind in ("str", "bin"):
            k = _U16.unpack_from(buf, pos)[0]
            v, pos = buf[pos + 2:pos + 2 + k], pos + 2 + k
        elif kind == "pair":
            k = _U16.unpack_from(buf, pos)[0]
            name, pos = buf[pos + 2:pos + 2 + k], pos + 2 + k
            k = _U16.unpack_from(buf, pos)[0]
            v, pos = (name, buf[pos + 2:pos + 2 + k]), pos + 2 + k
        else:
            raise ProtocolError(f"unknown property 0x{pid:02X}")
        out[pid] = v
    return out, end


def decode_connack(body: bytes) -> tuple[bool, int, dict[int, Any]]:
    """CONNACK: session present, reason code, properties."""
    if len(body) < 2:
        raise ProtocolError("a CONNACK shorter than 2 bytes")
    props, _ = _properties(body, 2) if len(body) > 2 else ({}, 2)
    return bool(body[0] & 1), body[1], props


def decode_suback(body: bytes) -> list[int]:
    """SUBACK: the reason code of each filter (0x80 and above: refused)."""
    _, pos = _properties(body, 2)
    return list(body[pos:])


def decode_publish(flags: int, body: bytes) -> tuple[str, int, int, bool, bytes]:
    """PUBLISH: topic, packet id (0 at QoS 0), QoS, DUP, payload."""
    k = _U16.unpack_from(body, 0)[0]
    try:
        topic = body[2:2 + k].decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("a topic name that is not UTF-8") from None
    pos = 2 + k
    qos = (flags >> 1) & 3
    pid = 0
    if qos:
        pid = _U16.unpack_from(body, pos)[0]
        pos += 2
    n, pos = _read_varint(body, pos)
    return topic, pid, qos, bool(flags & 8), body[pos + n:]


class Reader:
    """Whole packets out of the bytes a socket gives, as they come:
    ``feed(data)`` returns ``(type, flags, body)`` for each packet
    completed (a packet cut at the end of ``data`` waits for the rest)."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, data: bytes) -> list[tuple[int, int, bytes]]:
        buf = self._buf + data if self._buf else data
        out = []
        pos, n = 0, len(buf)
        while n - pos >= 2:
            first = buf[pos]
            length = shift = 0
            i = pos + 1
            while True:
                if i >= n:
                    length = -1           # the length itself is cut
                    break
                b = buf[i]
                i += 1
                length |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
                shift += 7
                if shift > 21:
                    raise ProtocolError("a packet length longer than 4 bytes")
            if length < 0 or n - i < length:
                break
            out.append((first >> 4, first & 0x0F, buf[i:i + length]))
            pos = i + length
        self._buf = buf[pos:]
        return out
