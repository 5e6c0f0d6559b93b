"""The Python client against a real `arbiter serve` (see conftest.py)."""

import time

import pytest

from arbiter_client import ArbiterClient, ArbiterError

PLANE = {"kind": "static", "shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0}}


def test_rest(server_url):
    c = ArbiterClient(server_url)
    assert c.health()["status"] == "ok"
    w = c.create_world({"name": "py-rest"})
    assert any(x["id"] == w["id"] for x in c.list_worlds())
    ground = c.spawn(w["id"], PLANE)
    bodies = c.spawn(w["id"], [{"shape": {"type": "sphere", "radius": 0.5}, "position": [0, 3, 0]},
                               {"shape": {"type": "capsule", "half_height": 0.5, "radius": 0.2}, "position": [2, 1, 0]}])
    assert len(bodies) == 2
    c.apply_impulse(w["id"], bodies[1]["id"], [0, 0, 5], point=[2, 1.2, 0])
    c.set_velocity(w["id"], bodies[0]["id"], linear=[1, 0, 0])
    hit = c.raycast(w["id"], [0, 10, 0], [0, -1, 0], 100)
    assert hit and hit["body"] in (bodies[0]["id"], ground["id"])
    assert len(c.snapshot(w["id"])["bodies"]) == 3
    c.remove_body(w["id"], bodies[1]["id"])
    with pytest.raises(ArbiterError) as e:
        c.get_body(w["id"], bodies[1]["id"])
    assert e.value.status == 404
    c.delete_world(w["id"])
    with pytest.raises(ArbiterError) as e:
        c.get_world(w["id"])
    assert e.value.status == 404 and e.value.code


@pytest.mark.parametrize("fmt", ["json", "binary"])
def test_stream(server_url, fmt):
    c = ArbiterClient(server_url)
    w = c.create_world({"name": "py-" + fmt})
    c.spawn(w["id"], [PLANE, {"shape": {"type": "sphere", "radius": 0.5}, "position": [0, 2, 0]}])
    seen = {"spawned": False, "removed": False, "begin": False}
    with c.stream(w["id"], format=fmt, every=2, timeout=10) as s:
        hello = next(s)
        assert hello["type"] == "hello" and len(hello["bodies"]) == 2
        extra = c.spawn(w["id"], {"shape": {"type": "box", "half_extents": [0.3, 0.3, 0.3]}, "position": [3, 1, 0]})
        removed_sent = False
        deadline = time.time() + 10
        for msg in s:
            assert msg["type"] == "tick"
            seen["spawned"] |= any(b.get("id") == extra["id"] for b in msg["spawned"])
            seen["removed"] |= extra["id"] in msg["removed"]
            seen["begin"] |= any(x["kind"] == "begin" for x in msg["contacts"])
            if seen["spawned"] and not removed_sent:
                c.remove_body(w["id"], extra["id"])
                removed_sent = True
            if all(seen.values()) or time.time() > deadline:
                break
        assert all(seen.values()), seen
        assert extra["id"] not in s.mirror.bodies
        seq = s.send({"type": "impulse", "id": hello["bodies"][1]["id"], "impulse": [0, 1, 0]})
        for msg in s:
            if msg["type"] in ("ack", "error"):
                assert msg == {"type": "ack", "seq": seq}
                break
    c.delete_world(w["id"])


@pytest.mark.parametrize("fmt", ["json", "binary"])
def test_cables_stream(server_url, fmt):
    c = ArbiterClient(server_url)
    w = c.create_world({"name": "py-cable-" + fmt})
    cable = c.add_cable(w["id"], {"from": [-1, 3, 0], "to": [1, 3, 0], "segments": 8, "pinned": [0]})
    assert len(cable["points"]) == 9
    with c.stream(w["id"], format=fmt, timeout=10) as s:
        next(s)  # hello
        ys = []
        for msg in s:
            if msg["type"] != "tick":
                continue
            (state,) = msg["cables"]
            assert state["id"] == cable["id"] and len(state["points"]) == 9
            assert state["points"][0] == pytest.approx([-1, 3, 0])
            ys.append(state["points"][8][1])
            if len(ys) == 20:
                break
    assert ys[-1] < ys[0], "the free end falls"
    c.delete_world(w["id"])
