"""Python client for the Arbiter physics server.

:class:`ArbiterClient` wraps the REST API (standard-library ``urllib``) and
the WebSocket stream (:meth:`ArbiterClient.stream`, JSON or binary; binary
frames decode to the same dicts as JSON messages).
"""

import json
import random
import time
import urllib.error
import urllib.request
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from .binary import BinaryDecoder, DecodeError
from .ws import WebSocket, WebSocketClosed, WebSocketError

__all__ = [
    "ArbiterClient", "ArbiterError", "BinaryDecoder", "DecodeError", "Stream",
    "WorldMirror", "WebSocketClosed", "WebSocketError",
]


class ArbiterError(Exception):
    """An error reply: HTTP ``status`` (or 400 for a stream error), ``code``, ``message``."""

    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class ArbiterClient:
    def __init__(self, base_url="http://127.0.0.1:7700", timeout=10.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    # ---------------------------------------------------------------- REST

    def request(self, method, path, body=None):
        data = None
        headers = {}
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                text = res.read()
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                err = json.loads(text)["error"]
                code, message = err["code"], err["message"]
            except (ValueError, KeyError, TypeError):
                code, message = f"http_{e.code}", text.decode("utf-8", "replace")
            raise ArbiterError(e.code, code, message) from None
        return json.loads(text) if text else None

    def health(self):
        return self.request("GET", "/healthz")

    def create_world(self, spec=None):
        """A WorldSpec dict ({name, tick_hz, gravity}) or {"scene": Scene} -> World."""
        return self.request("POST", "/v1/worlds", spec or {})

    def list_worlds(self):
        return self.request("GET", "/v1/worlds")

    def get_world(self, world_id):
        return self.request("GET", f"/v1/worlds/{quote(world_id, safe='')}")

    def update_world(self, world_id, **patch):
        """paused=, gravity=, tick_hz= -> World."""
        return self.request("PATCH", f"/v1/worlds/{quote(world_id, safe='')}", patch)

    def delete_world(self, world_id):
        self.request("DELETE", f"/v1/worlds/{quote(world_id, safe='')}")

    def step(self, world_id, steps=1):
        return self.request("POST", f"/v1/worlds/{quote(world_id, safe='')}/step", {"steps": steps})

    def snapshot(self, world_id):
        return self.request("GET", f"/v1/worlds/{quote(world_id, safe='')}/snapshot")

    def spawn(self, world_id, spec):
        """One BodySpec dict -> Body; a list of them -> list of Bodies."""
        path = f"/v1/worlds/{quote(world_id, safe='')}/bodies"
        if isinstance(spec, (list, tuple)):
            return self.request("POST", path, {"bodies": list(spec)})["bodies"]
        return self.request("POST", path, spec)

    def list_bodies(self, world_id):
        return self.request("GET", f"/v1/worlds/{quote(world_id, safe='')}/bodies")

    def get_body(self, world_id, body_id):
        return self.request("GET", f"/v1/worlds/{quote(world_id, safe='')}/bodies/{int(body_id)}")

    def update_body(self, world_id, body_id, **patch):
        """position=, rotation=, linear_velocity=, angular_velocity= -> Body."""
        return self.request("PATCH", f"/v1/worlds/{quote(world_id, safe='')}/bodies/{int(body_id)}", patch)

    def remove_body(self, world_id, body_id):
        self.request("DELETE", f"/v1/worlds/{quote(world_id, safe='')}/bodies/{int(body_id)}")

    def apply_impulse(self, world_id, body_id, impulse, point=None, angular_impulse=None):
        body = {"impulse": list(impulse)}
        if point is not None:
            body["point"] = list(point)
        if angular_impulse is not None:
            body["angular_impulse"] = list(angular_impulse)
        return self.request("POST", f"/v1/worlds/{quote(world_id, safe='')}/bodies/{int(body_id)}/impulse", body)

    def set_velocity(self, world_id, body_id, linear=None, angular=None):
        patch = {}
        if linear is not None:
            patch["linear_velocity"] = list(linear)
        if angular is not None:
            patch["angular_velocity"] = list(angular)
        return self.update_body(world_id, body_id, **patch)

    def raycast(self, world_id, origin, direction, max_distance=1000.0):
        """The hit dict {body, distance, point, normal} or None."""
        r = self.request("POST", f"/v1/worlds/{quote(world_id, safe='')}/raycast", {
            "origin": list(origin), "direction": list(direction), "max_distance": max_distance,
        })
        return r.get("hit") if r else None

    def add_cable(self, world_id, spec):
        return self.request("POST", f"/v1/worlds/{quote(world_id, safe='')}/cables", spec)

    # -------------------------------------------------------------- stream

    def stream_url(self, world_id, format="json", every=1):
        u = urlsplit(self.base_url)
        scheme = "wss" if u.scheme == "https" else "ws"
        path = u.path + f"/v1/worlds/{quote(world_id, safe='')}/stream"
        return urlunsplit((scheme, u.netloc, path, urlencode({"format": format, "every": every}), ""))

    def stream(self, world_id, format="json", every=1, reconnect=False, max_backoff=5.0, timeout=None):
        """A :class:`Stream` of the world: iterate it for decoded message dicts
        (hello, tick, ack, error). With ``reconnect=True`` a lost connection is
        reopened with exponential backoff and the stream resumes at the new
        hello. ``timeout`` (s) bounds each wait for a message."""
        return Stream(self, world_id, format, every, reconnect, max_backoff, timeout)


class WorldMirror:
    """A world's state as a stream told it: ``world``, ``bodies`` (id -> Body
    dict, position/rotation/velocities current) and ``cables`` (id -> ``{"id",
    "points"}``; a tick lists only the cables that moved since the last
    frame). Apply every message in order."""

    def __init__(self):
        self.world = None
        self.bodies = {}
        self.contacts = []
        self.cables = {}

    def apply(self, msg):
        t = msg.get("type")
        if t == "hello":
            self.world = dict(msg["world"])
            self.bodies = {b["id"]: dict(b) for b in msg["bodies"] if "id" in b}
            self.contacts = []
            self.cables = {c["id"]: c for c in msg.get("cables", [])}
        elif t == "tick":
            for b in msg["spawned"]:
                if "id" in b:
                    self.bodies[b["id"]] = dict(b)
            for i in msg["removed"]:  # body and cable ids (one count for both)
                self.bodies.pop(i, None)
                self.cables.pop(i, None)
            for s in msg["bodies"]:
                b = self.bodies.setdefault(s["id"], {"id": s["id"]})
                b["position"], b["rotation"] = s["p"], s["q"]
                b["linear_velocity"], b["angular_velocity"] = s["v"], s["w"]
            self.contacts = msg["contacts"]
            for c in msg.get("cables", []):
                self.cables[c["id"]] = c
            if self.world is not None:
                self.world["tick"] = msg["tick"]
                self.world["time"] = msg["time"]
                self.world["body_count"] = len(self.bodies)


class Stream:
    """Iterator over a world's stream messages; also ``send(command)``,
    ``close()``, and a context manager. ``mirror`` follows the world."""

    def __init__(self, client, world_id, format, every, reconnect, max_backoff, timeout):
        if format not in ("json", "binary"):
            raise ValueError("format must be 'json' or 'binary'")
        self.client = client
        self.world_id = world_id
        self.format = format
        self.every = every
        self.reconnect = reconnect
        self.max_backoff = max_backoff
        self.timeout = timeout
        self.mirror = WorldMirror()
        self.bytes_received = 0
        self.connections = 0
        self._seq = 0
        self._closed = False
        self._ws = None
        self._connect()

    def _connect(self):
        self.decoder = BinaryDecoder()
        self._ws = WebSocket(self.client.stream_url(self.world_id, self.format, self.every))
        self._ws.settimeout(self.timeout)
        self.connections += 1
        self._need_hello = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        backoff = 0.1
        while True:
            if self._closed:
                raise StopIteration
            try:
                if self._ws is None:
                    self._connect()
                raw = self._ws.recv()
                self.bytes_received += len(raw.encode() if isinstance(raw, str) else raw)
                msg = json.loads(raw) if isinstance(raw, str) else self.decoder.decode(raw)
            except (OSError, WebSocketError, DecodeError) as e:
                if self._closed:
                    raise StopIteration from None
                if isinstance(e, TimeoutError) or not self.reconnect:
                    raise
                if self._ws is not None:
                    self._ws.close()
                self._ws = None
                time.sleep(backoff * (0.75 + random.random() * 0.5))
                backoff = min(self.max_backoff, backoff * 2)
                continue
            if msg.get("type") == "hello":
                self._need_hello = False
            elif msg.get("type") == "tick" and self._need_hello:
                continue
            self.mirror.apply(msg)
            return msg

    def send(self, command):
        """Sends a command dict ({"type": "impulse" | "spawn" | "remove" |
        "set_velocity", ...}); returns its seq (the ack or error arrives in the stream)."""
        if "seq" not in command:
            self._seq += 1
            command = dict(command, seq=self._seq)
        self._ws.send(json.dumps(command))
        return command["seq"]

    def close(self):
        self._closed = True
        if self._ws is not None:
            self._ws.close()
