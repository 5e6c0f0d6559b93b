"""Stream logic against a scripted WebSocket server (standard library): the
binary hello and tick of proto/binary.md, a dropped connection, reconnection
with backoff, and resynchronization from the next hello."""

import base64
import hashlib
import socket
import threading

from arbiter_client import ArbiterClient

from test_binary import HELLO, TICK

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(payload, op=2):
    n = len(payload)
    head = bytes([0x80 | op]) + (bytes([n]) if n < 126 else bytes([126]) + n.to_bytes(2, "big"))
    return head + payload


def serve(sock, paths):
    for i in range(2):
        conn, _ = sock.accept()
        f = conn.makefile("rb")
        request = f.readline().decode()
        paths.append(request.split()[1])
        key = None
        while True:
            line = f.readline().decode()
            if line in ("\r\n", ""):
                break
            if line.lower().startswith("sec-websocket-key:"):
                key = line.split(":", 1)[1].strip().encode()
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
        conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
        conn.sendall(frame(HELLO) + frame(TICK))
        if i == 1:
            threading.Event().wait(2)
        f.close()
        conn.shutdown(socket.SHUT_RDWR)  # the first time: a drop the client must survive
        conn.close()


def test_reconnects_and_resyncs():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    paths = []
    t = threading.Thread(target=serve, args=(sock, paths), daemon=True)
    t.start()
    c = ArbiterClient(f"http://127.0.0.1:{sock.getsockname()[1]}")
    got = []
    with c.stream("w1", format="binary", every=3, reconnect=True, timeout=5) as s:
        for msg in s:
            got.append(msg)
            if len(got) == 4:
                break
        assert s.connections == 2
    assert paths[0] == "/v1/worlds/w1/stream?format=binary&every=3"
    assert [m["type"] for m in got] == ["hello", "tick", "hello", "tick"]
    assert got[3] == got[1]  # the second hello reset the baseline
    assert got[3]["bodies"][0]["p"][0] == 0.033203125
    sock.close()
