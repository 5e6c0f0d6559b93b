"""Creates a world, drops a few bodies and prints the stream for 3 seconds.

    python clients/python/examples/watch.py [http://127.0.0.1:7700] [json|binary]
"""

import sys
import time

from arbiter_client import ArbiterClient

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:7700"
fmt = sys.argv[2] if len(sys.argv) > 2 else "binary"
c = ArbiterClient(url)
w = c.create_world({"name": "python-example"})
c.spawn(w["id"], [
    {"kind": "static", "shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0}},
    {"shape": {"type": "sphere", "radius": 0.5}, "position": [0, 3, 0]},
    {"shape": {"type": "box", "half_extents": [0.5, 0.5, 0.5]}, "position": [0.3, 5, 0]},
    {"shape": {"type": "cone", "half_height": 0.5, "radius": 0.4}, "position": [-0.2, 7, 0]},
])
end = time.time() + 3
with c.stream(w["id"], format=fmt, every=6) as s:
    for msg in s:
        if msg["type"] == "hello":
            print(f"hello: world {msg['world']['id']}, {len(msg['bodies'])} bodies")
        elif msg["type"] == "tick":
            heights = {b["id"]: round(b["position"][1], 3) for b in s.mirror.bodies.values()
                       if b.get("kind") != "static"}
            print(f"tick {msg['tick']:5d}  moved {len(msg['bodies']):2d}  contacts {len(msg['contacts'])}  y {heights}")
        if time.time() > end:
            break
    print(f"{s.bytes_received} bytes received ({fmt})")
c.delete_world(w["id"])
