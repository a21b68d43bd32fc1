"""The bridge's MQTT 5 packets (epsparql/service/mqtt_wire.py) against the
specification's examples and paho's own encoder; the bridge itself is
tested against a real Mosquitto in test_serve_mqtt.py."""
from __future__ import annotations

import random

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from epsparql.service import mqtt_wire as wire


def test_remaining_length_as_the_specification_gives_it() -> None:
    # MQTT 5.0, 1.5.5 (Variable Byte Integer): the table's bounds
    for n, want in ((0, b"\x00"), (127, b"\x7f"), (128, b"\x80\x01"), (16383, b"\xff\x7f"),
                    (16384, b"\x80\x80\x01"), (2097151, b"\xff\xff\x7f"),
                    (2097152, b"\x80\x80\x80\x01"), (268435455, b"\xff\xff\xff\x7f")):
        assert wire._varint(n) == want
        assert wire._read_varint(want + b"rest", 0) == (n, len(want))


def test_publish_carries_the_user_property_as_paho_packs_it() -> None:
    props = Properties(PacketTypes.PUBLISH)
    props.UserProperty = ("n", "70000")
    packet = wire.publish(b"answers/q", b'{"a": 1}', 513, (b"n", b"70000"), dup=True)
    assert packet[0] == 0x3A                      # PUBLISH, DUP, QoS 1
    assert props.pack() in packet
    (kind, flags, body), = wire.Reader().feed(packet)
    assert kind == wire.PUBLISH
    assert wire.decode_publish(flags, body) == ("answers/q", 513, 1, True, b'{"a": 1}')


def test_connect_properties_read_back_by_paho() -> None:
    packet = wire.connect("svc", keepalive=30, clean_start=False, session_expiry=604800,
                          receive_maximum=4096)
    (kind, _, body), = wire.Reader().feed(packet)
    assert kind == 1
    assert body[:7] == b"\x00\x04MQTT\x05" and body[7] == 0 and body[8:10] == b"\x00\x1e"
    props = Properties(PacketTypes.CONNECT)
    props.unpack(body[10:])
    assert props.ReceiveMaximum == 4096 and props.SessionExpiryInterval == 604800


def test_packets_cut_anywhere_read_back_whole() -> None:
    """A stream of packets fed in pieces of every size (seeded) gives the
    packets it gives fed at once, and those are what was written."""
    rnd = random.Random(7)
    packets = [wire.connect("c", keepalive=30, clean_start=True, session_expiry=0,
                            receive_maximum=10),
               wire.subscribe(1, ["a/#", "b"]), wire.PINGREQ_PACKET, wire.puback(65535)]
    packets += [wire.publish(f"t/{i}".encode(), bytes(rnd.randrange(256) for _ in
                                                      range(rnd.choice((0, 5, 200, 3000)))),
                             i + 1, (b"n", str(i).encode())) for i in range(40)]
    data = b"".join(packets)
    whole = wire.Reader().feed(data)
    assert [bytes((k << 4 | f,)) + wire._varint(len(b)) + b for k, f, b in whole] == packets
    for _ in range(30):
        r, got, pos = wire.Reader(), [], 0
        while pos < len(data):
            step = rnd.choice((1, 2, 5, 300, rnd.randrange(1, 40000)))
            got += r.feed(data[pos:pos + step])
            pos += step
        assert got == whole
