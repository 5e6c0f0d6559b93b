"""A minimal blocking WebSocket client (RFC 6455) on the standard library:
enough for Arbiter's stream (text and binary messages, fragmentation, ping,
close). ws:// only (plus wss:// through ssl)."""

import base64
import hashlib
import os
import socket
import ssl
import struct
from urllib.parse import urlsplit

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
MAX_MESSAGE = 256 * 1024 * 1024


class WebSocketError(ConnectionError):
    pass


class WebSocketClosed(WebSocketError):
    def __init__(self, code=None, reason=""):
        super().__init__(f"websocket closed ({code}) {reason}".strip())
        self.code = code
        self.reason = reason


class WebSocket:
    def __init__(self, url, timeout=10.0):
        u = urlsplit(url)
        if u.scheme not in ("ws", "wss"):
            raise ValueError(f"not a ws:// URL: {url}")
        port = u.port or (443 if u.scheme == "wss" else 80)
        sock = socket.create_connection((u.hostname, port), timeout=timeout)
        if u.scheme == "wss":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=u.hostname)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.rfile = sock.makefile("rb")
        self.closed = False
        key = base64.b64encode(os.urandom(16))
        path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        host = u.hostname if u.port is None else f"{u.hostname}:{u.port}"
        req = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key.decode()}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        )
        sock.sendall(req.encode())
        status = self.rfile.readline().decode("latin-1").strip()
        headers = {}
        while True:
            line = self.rfile.readline().decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        parts = status.split(" ", 2)
        if len(parts) < 2 or parts[1] != "101":
            self.sock.close()
            raise WebSocketError(f"handshake failed: {status}")
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
        if headers.get("sec-websocket-accept") != accept:
            self.sock.close()
            raise WebSocketError("handshake failed: bad Sec-WebSocket-Accept")
        sock.settimeout(None)

    def settimeout(self, t):
        self.sock.settimeout(t)

    def _read(self, n):
        data = self.rfile.read(n)
        if data is None or len(data) < n:
            self.closed = True
            raise WebSocketClosed(1006, "connection lost")
        return data

    def _frame(self):
        b0, b1 = self._read(2)
        fin, op = b0 & 0x80, b0 & 0x0F
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        if n > MAX_MESSAGE:
            raise WebSocketError("frame too large")
        mask = self._read(4) if b1 & 0x80 else None
        data = self._read(n) if n else b""
        if mask:
            data = bytes(x ^ mask[i % 4] for i, x in enumerate(data))
        return bool(fin), op, data

    def send_frame(self, op, data):
        header = bytearray([0x80 | op])
        n = len(data)
        if n < 126:
            header.append(0x80 | n)
        elif n < 65536:
            header.append(0x80 | 126)
            header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", n)
        mask = os.urandom(4)
        header += mask
        masked = bytes(x ^ mask[i % 4] for i, x in enumerate(data))
        self.sock.sendall(bytes(header) + masked)

    def send(self, message):
        """Sends a text (str) or binary (bytes) message."""
        if isinstance(message, str):
            self.send_frame(OP_TEXT, message.encode())
        else:
            self.send_frame(OP_BINARY, bytes(message))

    def recv(self):
        """The next message: str for text, bytes for binary. Raises
        WebSocketClosed when the connection ends."""
        buf = bytearray()
        kind = None
        while True:
            fin, op, data = self._frame()
            if op == OP_PING:
                self.send_frame(OP_PONG, data)
                continue
            if op == OP_PONG:
                continue
            if op == OP_CLOSE:
                code = struct.unpack(">H", data[:2])[0] if len(data) >= 2 else None
                try:
                    self.send_frame(OP_CLOSE, data[:2])
                except OSError:
                    pass
                self.closed = True
                self.sock.close()
                raise WebSocketClosed(code, data[2:].decode("utf-8", "replace"))
            if op in (OP_TEXT, OP_BINARY):
                kind = op
                buf = bytearray(data)
            elif op == OP_CONT:
                buf += data
            if len(buf) > MAX_MESSAGE:
                raise WebSocketError("message too large")
            if fin:
                return buf.decode("utf-8") if kind == OP_TEXT else bytes(buf)

    def close(self, code=1000):
        if self.closed:
            return
        self.closed = True
        try:
            self.send_frame(OP_CLOSE, struct.pack(">H", code))
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
