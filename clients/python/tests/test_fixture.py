"""One protocol, three readers: decode proto/fixtures/stream.json (recorded by
tests/protocol_fixture.rs) and compare with what the Rust decoder produced."""

import json
from pathlib import Path

from arbiter_client import BinaryDecoder, WorldMirror
from arbiter_client.binary import f32

FIXTURE = json.loads((Path(__file__).resolve().parents[3] / "proto/fixtures/stream.json").read_text())


def same(actual, expected, path="$", loose=False):
    """loose: numbers parsed from JSON text (f32 printed shortest) match when
    both round to the same f32."""
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual == expected, path
    elif isinstance(expected, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), path
        assert actual == expected or actual == f32(expected) or (loose and f32(actual) == f32(expected)), \
            f"{path}: {actual} != {expected}"
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected)):
            same(a, e, f"{path}[{i}]", loose)
    else:
        assert sorted(actual) == sorted(expected), f"{path} keys {sorted(actual)} != {sorted(expected)}"
        for k in expected:
            same(actual[k], expected[k], f"{path}.{k}", loose)


def test_binary_frames_decode_as_in_rust():
    d = BinaryDecoder()
    for i, f in enumerate(FIXTURE["frames"]):
        same(d.decode(bytes.fromhex(f["binary"])), f["decoded"], f"frame {i}")
    same({str(s["id"]): s for s in d.states()}, FIXTURE["final_binary_states"], "final")


def test_json_frames_end_in_the_exact_state():
    m = WorldMirror()
    for f in FIXTURE["frames"]:
        m.apply(json.loads(f["json"]))
    got = {str(i): {"id": i, "p": b["position"], "q": b["rotation"], "v": b["linear_velocity"],
                    "w": b["angular_velocity"]} for i, b in m.bodies.items()}
    same(got, FIXTURE["final_json_states"], "final", loose=True)
    same({str(i): c["points"] for i, c in m.cables.items()}, FIXTURE["final_json_cables"], "final cables",
         loose=True)


def test_binary_frames_applied_to_a_mirror_end_in_the_streams_cables():
    m, d = WorldMirror(), BinaryDecoder()
    for f in FIXTURE["frames"]:
        m.apply(d.decode(bytes.fromhex(f["binary"])))
    same({str(i): c["points"] for i, c in m.cables.items()}, FIXTURE["final_binary_cables"], "final cables")


def test_mirror_keeps_cables_a_tick_leaves_out_and_drops_removed_ones():
    m = WorldMirror()
    world = {"id": "w", "name": "w", "tick": 0, "time": 0.0}
    m.apply({"type": "hello", "world": world, "bodies": [],
             "cables": [{"id": 2, "points": [[0, 1, 0], [1, 1, 0]]}]})
    assert m.cables == {2: {"id": 2, "points": [[0, 1, 0], [1, 1, 0]]}}
    tick = {"type": "tick", "tick": 1, "time": 0.1, "bodies": [], "contacts": [], "spawned": [],
            "removed": []}
    # A tick listing another cable: the first (asleep, say) is kept as it was.
    m.apply({**tick, "cables": [{"id": 3, "points": [[0, 2, 0], [1, 2, 0]]}]})
    assert sorted(m.cables) == [2, 3] and m.cables[2]["points"][0] == [0, 1, 0]
    # A tick without cables changes none; one listing a cable replaces it.
    m.apply(tick)
    m.apply({**tick, "cables": [{"id": 2, "points": [[0, 0.5, 0], [1, 0.5, 0]]}]})
    assert m.cables[2]["points"][0] == [0, 0.5, 0] and m.cables[3]["points"][0] == [0, 2, 0]
    # A removed id takes the cable away.
    m.apply({**tick, "removed": [3]})
    assert sorted(m.cables) == [2]
    # A hello starts over from the cables it carries (a binary hello: none).
    m.apply({"type": "hello", "world": world, "bodies": []})
    assert m.cables == {}
