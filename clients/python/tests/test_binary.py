"""The examples of proto/binary.md, decoded by the Python decoder."""

import random

import pytest

from arbiter_client.binary import BinaryDecoder, DecodeError, f32

HELLO = bytes.fromhex("""
02 01 00 00 00 00 00 00 00 00 02 77 31 04 64 65 6d 6f 00 00 00 00 00 00 4e 40
00 00 00 00 c3 f5 1c c1 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 33 82 01 01
06 00 00 00 00 00 00 80 3f 00 00 00 00 00 00 00 00 00 00 00 ff ff fe 7f ff 3f
00 00 00 00 00 00 00 00 00 3f 00 00 00 00 00 00 00 00 cd cc 4c 3d 28 82 02 00
00 00 00 00 3f 00 80 10 00 ff ff fe 7f ff 3f 00 00 00 00 00 00 00 00 00 3f 00
00 00 00 00 00 00 00 cd cc 4c 3d""")
TICK = bytes.fromhex("""
02 02 01 11 11 11 11 11 11 91 3f 0c 01 08 1e 00 03 80 ea 00 04 00 01 02 01 02
00 f9 0f 00 00 00 ff 7f 00 00 a0 3f""")


def test_doc_example():
    d = BinaryDecoder()
    hello = d.decode(HELLO)
    assert hello["world"]["id"] == "w1" and hello["world"]["name"] == "demo"
    assert hello["world"]["gravity"] == [0.0, f32(-9.81), 0.0]
    assert hello["bodies"][1]["shape"] == {"type": "sphere", "radius": 0.5}
    assert hello["bodies"][1]["position"] == [0.0, 1.0, 0.0]
    assert hello["bodies"][0]["kind"] == "static" and hello["bodies"][0]["sleeping"] is False
    tick = d.decode(TICK)
    assert tick == {
        "type": "tick", "tick": 1, "time": 1 / 60,
        "bodies": [{"id": 2, "p": [0.033203125, f32(0.9970703), 0.0],
                    "q": [0.0, 0.0, f32(-0.033320297), f32(0.9994447)],
                    "v": [2.0, -0.1640625, 0.0], "w": [0.0, 0.0, -4.0]}],
        "contacts": [{"kind": "begin", "a": 1, "b": 2, "point": [0.033203125, 0.0, 0.0],
                      "normal": [0.0, 1.0, 0.0], "impulse": 1.25}],
        "spawned": [], "removed": [],
    }
    assert d.quantized(2)[0] == (34, 1021, 0)
    assert d.quantized(2)[1] == (3, (0, 0, -772))


def test_ack_and_error():
    d = BinaryDecoder()
    assert d.decode(bytes.fromhex("02 03 ac 02")) == {"type": "ack", "seq": 300}
    assert d.decode(bytes.fromhex("02 04 01 05 09 6e 6f 74 5f 66 6f 75 6e 64 09 6e 6f 20 62 6f 64 79 20 39")) == {
        "type": "error", "seq": 5, "code": "not_found", "message": "no body 9"}


def test_rejects_bad_frames_and_keeps_state():
    d = BinaryDecoder()
    d.decode(HELLO)
    before = d.states()
    for cut in range(len(TICK)):
        with pytest.raises(DecodeError):
            d.decode(TICK[:cut])
    for bad in (TICK + b"\0", b"\x02\x02", b"\x02\x09", bytes.fromhex("01 03 ac 02"),
                bytes.fromhex("02 03 ff ff ff ff ff ff ff ff ff 7f")):
        with pytest.raises(DecodeError):
            d.decode(bad)
    assert d.states() == before
    rnd = random.Random(7)
    for _ in range(2000):
        f = bytearray(rnd.randrange(256) for _ in range(2 + rnd.randrange(40)))
        f[0] = 1
        f[1] = 1 + rnd.randrange(4)
        try:
            d.decode(bytes(f))
        except DecodeError:
            pass
