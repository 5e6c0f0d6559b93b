"""Decoder of Arbiter's binary stream format, version 2 (proto/binary.md).

:class:`BinaryDecoder` holds the per-body baseline of one stream and turns
each binary message into the dict the JSON stream would carry. It mirrors the
Rust reference decoder (src/protocol/binary.rs): the same checks, the same
predictions with the same f64 arithmetic, and f32-rounded outputs.
"""

import math
import struct

__all__ = ["BinaryDecoder", "DecodeError"]

VERSION = 2
HELLO, TICK, ACK, ERROR = 1, 2, 3, 4
S_SPAWNED, S_REMOVED, S_BODIES, S_CONTACTS, S_CABLES = 1, 2, 4, 8, 16
F_V, F_W, F_P, F_Q = 1, 2, 4, 8
SF_CCD, SF_SLEEPING_KNOWN, SF_SLEEPING, SF_DENSITY = 1, 2, 4, 8
SF_MASS, SF_LABEL, SF_MARGIN, SF_ID = 16, 32, 64, 128
C_END, C_IMPULSE = 1, 2
MIN_RECORD_BITS = 5
MIN_CONTACT_BYTES = 10
# Smallest cable record (1-bit id gap, key bit, 1-bit count) and point (three 1-bit residuals).
MIN_CABLE_BITS = 3
MIN_POINT_BITS = 3

POSITION_SCALE = 1024.0
VELOCITY_SCALE = 128.0
POSITION_PER_VELOCITY = POSITION_SCALE / VELOCITY_SCALE
INT_MAX = 2**31 - 1
ROTATION_BITS = 15
ROTATION_MAX = 16383
ROTATION_SCALE = ROTATION_MAX * math.sqrt(2.0)
MAX_PREDICTION_DT = 60.0
U64 = 2**64

_F32 = struct.Struct("<f")
_KINDS = ("dynamic", "static", "kinematic")


def f32(x):
    """Rounds a Python float to the nearest f32 (as Rust's `as f32`)."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


class DecodeError(ValueError):
    """A malformed frame; `offset` is the byte where decoding stopped."""

    def __init__(self, offset, reason):
        super().__init__(f"malformed binary frame at byte {offset}: {reason}")
        self.offset = offset
        self.reason = reason


# --------------------------------------------------------------------------
# Quantization (src/protocol/quantize.rs).
# --------------------------------------------------------------------------

IDENTITY = (3, (0, 0, 0))
ZERO_STATE = ((0, 0, 0), (0, (0, 0, 0)), (0, 0, 0), (0, 0, 0))  # p, q, v, w


def round_clamp(x, mx):
    if x != x:
        return 0
    y = x + 0.5
    if y >= mx:
        return mx
    if y <= -mx:
        return -mx
    return math.floor(y)


def qrot_from_f64(q):
    n = math.sqrt(((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3])
    if not math.isfinite(n) or n <= 0.0:
        return IDENTITY
    u = [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
    index = 0
    for k in range(1, 4):
        if abs(u[k]) > abs(u[index]):
            index = k
    sign = -1.0 if u[index] < 0.0 else 1.0
    c = tuple(round_clamp(sign * u[k] * ROTATION_SCALE, ROTATION_MAX) for k in range(4) if k != index)
    return (index, c)


def qrot_to_f64_raw(r):
    index, c = r
    a = [x / ROTATION_SCALE for x in c]
    s = (a[0] * a[0] + a[1] * a[1]) + a[2] * a[2]
    d = math.sqrt(1.0 - s) if s < 1.0 else 0.0
    out = []
    j = 0
    for k in range(4):
        if k == index:
            out.append(d)
        else:
            out.append(a[j])
            j += 1
    return out


def qrot_to_f32(r):
    q = qrot_to_f64_raw(r)
    n = math.sqrt(((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3])
    if n > 0.0:
        return [f32(x / n) for x in q]
    return [0.0, 0.0, 0.0, 1.0]


def qrot_valid(r):
    return 0 <= r[0] < 4 and all(-ROTATION_MAX <= c <= ROTATION_MAX for c in r[1])


def prediction_dt(time, previous):
    dt = time - previous
    if dt > 0.0:
        return min(dt, MAX_PREDICTION_DT)
    return 0.0


def predict_position(p, v, dt):
    f = dt * POSITION_PER_VELOCITY
    out = []
    for k in range(3):
        d = math.floor(v[k] * f + 0.5)
        x = p[k] + d
        out.append(max(-INT_MAX, min(INT_MAX, x)))
    return tuple(out)


def predict_rotation(q, w, dt):
    if (w[0] == 0 and w[1] == 0 and w[2] == 0) or dt == 0.0:
        return q
    qx, qy, qz, qw = qrot_to_f64_raw(q)
    wx, wy, wz = (x / VELOCITY_SCALE for x in w)
    h = 0.5 * dt
    dx = (wx * qw + wy * qz) - wz * qy
    dy = (wy * qw + wz * qx) - wx * qz
    dz = (wz * qw + wx * qy) - wy * qx
    dw = -((wx * qx + wy * qy) + wz * qz)
    return qrot_from_f64([qx + h * dx, qy + h * dy, qz + h * dz, qw + h * dw])


def unzigzag(z):
    return (z >> 1) ^ -(z & 1)


def wrap32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _sgn(x):
    return -1.0 if x < 0.0 else 1.0


def decode_normal(e0, e1):
    x = min(1.0, max(-1.0, e0 / 32767.0))
    y = min(1.0, max(-1.0, e1 / 32767.0))
    z = 1.0 - abs(x) - abs(y)
    if z < 0.0:
        ox, oy = x, y
        x = (1.0 - abs(oy)) * _sgn(ox)
        y = (1.0 - abs(ox)) * _sgn(oy)
    n = math.sqrt(x * x + y * y + z * z)
    return [f32(x / n), f32(y / n), f32(z / n)]


def _deq(v, scale):
    return [f32(x / scale) for x in v]


def to_state(id_, s):
    p, q, v, w = s
    return {
        "id": id_,
        "p": _deq(p, POSITION_SCALE),
        "q": qrot_to_f32(q),
        "v": _deq(v, VELOCITY_SCALE),
        "w": _deq(w, VELOCITY_SCALE),
    }


# --------------------------------------------------------------------------
# Readers (src/protocol/wire.rs).
# --------------------------------------------------------------------------


class _Bytes:
    __slots__ = ("b", "pos", "end")

    def __init__(self, b, start=0, end=None):
        self.b = b
        self.pos = start
        self.end = len(b) if end is None else end

    def error(self, reason):
        return DecodeError(self.pos, reason)

    def remaining(self):
        return self.end - self.pos

    def need(self, n):
        if n > self.remaining():
            raise self.error("frame ends early")
        at = self.pos
        self.pos += n
        return at

    def sub(self, n):
        at = self.need(n)
        return _Bytes(self.b, at, at + n)

    def u8(self):
        return self.b[self.need(1)]

    def i16(self):
        at = self.need(2)
        return int.from_bytes(self.b[at:at + 2], "little", signed=True)

    def f32(self):
        return struct.unpack_from("<f", self.b, self.need(4))[0]

    def f64(self):
        return struct.unpack_from("<d", self.b, self.need(8))[0]

    def u48(self):
        at = self.need(6)
        return int.from_bytes(self.b[at:at + 6], "little")

    def varint(self):
        x = 0
        for i in range(10):
            byte = self.u8()
            bits = byte & 0x7F
            if i == 9 and bits > 1:
                raise self.error("varint overflows 64 bits")
            x |= bits << (7 * i)
            if not byte & 0x80:
                return x
        raise self.error("varint longer than 10 bytes")

    def varint32(self):
        x = self.varint()
        if x > 0xFFFFFFFF:
            raise self.error("varint overflows 32 bits")
        return x

    def count(self, min_bytes):
        n = self.varint()
        if n > self.remaining() // max(1, min_bytes):
            raise self.error("count larger than the frame can hold")
        return n

    def str(self):
        n = self.varint()
        if n > self.remaining():
            raise self.error("string longer than the frame")
        at = self.need(n)
        try:
            return bytes(self.b[at:at + n]).decode("utf-8")
        except UnicodeDecodeError:
            raise self.error("string is not UTF-8") from None

    def finish(self):
        if self.remaining() != 0:
            raise self.error("trailing bytes after the message")


class _Bits:
    __slots__ = ("b", "start", "len", "bit")

    def __init__(self, b, start, length):
        self.b = b
        self.start = start
        self.len = length
        self.bit = 0

    def error(self, reason):
        return DecodeError(self.start + self.bit // 8, reason)

    def bits_left(self):
        return self.len * 8 - self.bit

    def read(self, n):
        if n > self.bits_left():
            raise self.error("bit section ends early")
        x = 0
        got = 0
        while got < n:
            byte = self.b[self.start + (self.bit >> 3)]
            shift = self.bit & 7
            take = min(8 - shift, n - got)
            x |= ((byte >> shift) & ((1 << take) - 1)) << got
            got += take
            self.bit += take
        return x

    def exp_golomb(self):
        n = 0
        while not self.read(1):
            n += 1
            if n > 64:
                raise self.error("Exp-Golomb code longer than 64 bits")
        low = self.read(n)
        g = (1 << n) + low - 1
        if g >= U64:
            raise self.error("Exp-Golomb value overflows 64 bits")
        return g

    def finish(self):
        left = self.bits_left()
        if left >= 8:
            raise self.error("trailing bytes in the bit section")
        if left > 0:
            last = self.b[self.start + self.len - 1] if self.len else 0
            if last >> (8 - left):
                raise self.error("non-zero padding bits")


def _bit_section(r, min_bits, too_many):
    """A section of n records in a bit section (varint n, varint len, len
    bytes): (n, its reader); n more than the bits hold at min_bits a record
    raises too_many."""
    n = r.varint()
    length = r.varint()
    if length > r.remaining():
        raise r.error("bit section longer than the frame")
    start = r.need(length)
    bits = _Bits(r.b, start, length)
    if n > bits.bits_left() // min_bits:
        raise r.error(too_many)
    return n, bits


def _ids(bits, n, overflow):
    """The ids of n records, each an Exp-Golomb gap from the one before
    (ascending); an id of 2^64 or more raises overflow."""
    nxt = 0
    for _ in range(n):
        id_ = nxt + bits.exp_golomb()
        if id_ >= U64:
            raise bits.error(overflow)
        nxt = id_ + 1
        yield id_


def _residual(bits, predicted):
    out = list(predicted)
    for k in range(3):
        z = bits.exp_golomb()
        if z > 0xFFFFFFFF:
            raise bits.error("residual overflows 32 bits")
        out[k] = wrap32(out[k] + unzigzag(z))
    return tuple(out)


def _body_delta(bits, old, dt):
    op, oq, ov, ow = old
    mask = bits.read(4)
    v = _residual(bits, ov) if mask & F_V else ov
    w = _residual(bits, ow) if mask & F_W else ow
    p_pred = predict_position(op, v, dt)
    p = _residual(bits, p_pred) if mask & F_P else p_pred
    q = predict_rotation(oq, w, dt)
    if mask & F_Q:
        if bits.read(1):
            index = bits.read(2)
            c = tuple(bits.read(ROTATION_BITS) - ROTATION_MAX for _ in range(3))
            q = (index, c)
        else:
            q = (q[0], _residual(bits, q[1]))
    if not qrot_valid(q):
        raise bits.error("rotation component out of range")
    return (p, q, v, w)


def _world(r):
    id_ = r.str()
    name = r.str()
    tick_hz = r.f64()
    gravity = [r.f32(), r.f32(), r.f32()]
    paused = r.u8()
    if paused > 1:
        raise r.error("paused must be 0 or 1")
    tick = r.varint()
    time = r.f64()
    body_count = r.varint()
    step_ms = {"last": r.f64(), "mean": r.f64(), "max": r.f64()}
    return {
        "id": id_, "name": name, "tick_hz": tick_hz, "gravity": gravity,
        "paused": paused == 1, "tick": tick, "time": time,
        "body_count": body_count, "step_ms": step_ms,
    }


def _shape(r):
    t = r.u8()
    if t == 0:
        return {"type": "sphere", "radius": r.f32()}
    if t == 1:
        return {"type": "box", "half_extents": [r.f32(), r.f32(), r.f32()]}
    if t in (2, 3, 4):
        name = ("capsule", "cylinder", "cone")[t - 2]
        return {"type": name, "half_height": r.f32(), "radius": r.f32()}
    if t == 5:
        n = r.count(12)
        return {"type": "convex_hull", "points": [[r.f32(), r.f32(), r.f32()] for _ in range(n)]}
    if t == 6:
        return {"type": "plane", "normal": [r.f32(), r.f32(), r.f32()], "offset": r.f32()}
    raise r.error("unknown shape type")


def _body(outer):
    n = outer.varint()
    if n > outer.remaining():
        raise outer.error("body record longer than the frame")
    r = outer.sub(n)
    flags = r.u8()
    id_ = r.varint() if flags & SF_ID else None
    kind = r.u8()
    if kind > 2:
        raise r.error("unknown body kind")
    shape = _shape(r)
    p = tuple(unzigzag(r.varint32()) for _ in range(3))
    packed = r.u48()
    if packed >> 47:
        raise r.error("rotation component out of range")
    mask = (1 << ROTATION_BITS) - 1
    q = (packed & 3, tuple(((packed >> (2 + ROTATION_BITS * k)) & mask) - ROTATION_MAX for k in range(3)))
    if not qrot_valid(q):
        raise r.error("rotation component out of range")
    v = tuple(unzigzag(r.varint32()) for _ in range(3))
    w = tuple(unzigzag(r.varint32()) for _ in range(3))
    state = (p, q, v, w)
    friction, restitution, lin_d, ang_d = r.f32(), r.f32(), r.f32(), r.f32()
    density = r.f32() if flags & SF_DENSITY else None
    mass = r.f32() if flags & SF_MASS else None
    margin = r.f32() if flags & SF_MARGIN else 0.0
    label = r.str() if flags & SF_LABEL else None
    s = to_state(0, state)
    body = {}
    if id_ is not None:
        body["id"] = id_
    body["kind"] = _KINDS[kind]
    body["shape"] = shape
    body["position"] = s["p"]
    body["rotation"] = s["q"]
    body["linear_velocity"] = s["v"]
    body["angular_velocity"] = s["w"]
    if density is not None:
        body["density"] = density
    if mass is not None:
        body["mass"] = mass
    body["friction"] = friction
    body["restitution"] = restitution
    body["linear_damping"] = lin_d
    body["angular_damping"] = ang_d
    if margin != 0.0:
        body["margin"] = margin
    body["ccd"] = bool(flags & SF_CCD)
    if label is not None:
        body["label"] = label
    if flags & SF_SLEEPING_KNOWN:
        body["sleeping"] = bool(flags & SF_SLEEPING)
    return body, state


def _contact(r, position_of):
    head = r.u8()
    if head & ~0x03:
        raise r.error("unknown contact flags")
    a = r.varint()
    b = (a + unzigzag(r.varint())) % U64
    ref = position_of(b) or (0, 0, 0)
    p = [wrap32(ref[k] + unzigzag(r.varint32())) for k in range(3)]
    normal = decode_normal(r.i16(), r.i16())
    impulse = r.f32() if head & C_IMPULSE else 0.0
    return {
        "kind": "end" if head & C_END else "begin",
        "a": a, "b": b,
        "point": _deq(p, POSITION_SCALE),
        "normal": normal,
        "impulse": impulse,
    }


class BinaryDecoder:
    """Decodes the frames of one binary stream; see the module docs."""

    def __init__(self):
        self.base = {}  # id -> (p, q, v, w) quantized
        self.cables = {}  # id -> (before, now): quantized points of the last two frames with it
        self.time = 0.0

    def __len__(self):
        return len(self.base)

    def state(self, id_):
        s = self.base.get(id_)
        return to_state(id_, s) if s else None

    def states(self):
        return [to_state(i, self.base[i]) for i in sorted(self.base)]

    def quantized(self, id_):
        return self.base.get(id_)

    def decode(self, frame):
        """Decodes one frame (bytes) into a message dict; raises DecodeError
        and then leaves the decoder unchanged."""
        b = bytes(frame)
        r = _Bytes(b)
        if r.u8() != VERSION:
            raise DecodeError(0, "unknown protocol version")
        t = r.u8()
        if t == HELLO:
            msg = self._hello(r)
        elif t == TICK:
            msg = self._tick(r)
        elif t == ACK:
            msg = {"type": "ack", "seq": r.varint()}
        elif t == ERROR:
            flags = r.u8()
            if flags > 1:
                raise r.error("unknown error flags")
            msg = {"type": "error"}
            if flags == 1:
                msg["seq"] = r.varint()
            msg["code"] = r.str()
            msg["message"] = r.str()
        else:
            raise DecodeError(1, "unknown message type")
        r.finish()
        return msg

    def _hello(self, r):
        time = r.f64()
        world = _world(r)
        n = r.count(1)
        bodies = []
        base = {}
        for _ in range(n):
            body, state = _body(r)
            if "id" in body:
                base[body["id"]] = state
            bodies.append(body)
        r.finish()
        self.base = base
        self.cables = {}
        self.time = time
        return {"type": "hello", "world": world, "bodies": bodies}

    def _tick(self, r):
        tick = r.varint()
        time = r.f64()
        flags = r.u8()
        if flags & ~0x1F:
            raise r.error("unknown section flags")
        staged = {}
        missing = object()

        def get(id_):
            s = staged.get(id_, missing)
            return self.base.get(id_) if s is missing else s

        spawned = []
        if flags & S_SPAWNED:
            for _ in range(r.count(1)):
                body, state = _body(r)
                if "id" in body:
                    staged[body["id"]] = state
                spawned.append(body)

        removed = []
        if flags & S_REMOVED:
            nxt = 0
            for _ in range(r.count(1)):
                id_ = nxt + r.varint()
                if id_ >= U64:
                    raise r.error("removed id overflows 64 bits")
                nxt = id_ + 1
                staged[id_] = None
                removed.append(id_)

        bodies = []
        if flags & S_BODIES:
            n, bits = _bit_section(r, MIN_RECORD_BITS, "body count larger than the bit section can hold")
            dt = prediction_dt(time, self.time)
            for id_ in _ids(bits, n, "body id overflows 64 bits"):
                old = get(id_) or ZERO_STATE
                s = _body_delta(bits, old, dt)
                staged[id_] = s
                bodies.append(to_state(id_, s))
            bits.finish()

        contacts = []
        if flags & S_CONTACTS:
            for _ in range(r.count(MIN_CONTACT_BYTES)):
                contacts.append(_contact(r, lambda b: (get(b) or (None,))[0]))

        # Cables: key frames (first point, then each less the one before) or
        # residuals against 2*now - before, in a bit section.
        cables = []
        cable_bases = []
        if flags & S_CABLES:
            n, bits = _bit_section(r, MIN_CABLE_BITS, "cable count larger than the bit section can hold")
            for cid in _ids(bits, n, "cable id overflows 64 bits"):
                points = []
                if bits.read(1):
                    m = bits.exp_golomb()
                    if m < 2:
                        raise bits.error("a cable of fewer than two points")
                    if m > bits.bits_left() // MIN_POINT_BITS:
                        raise bits.error("point count larger than the bit section can hold")
                    last = (0, 0, 0)
                    for _ in range(m):
                        last = _residual(bits, last)
                        points.append(last)
                    base = (points, points)
                else:
                    old = None if staged.get(cid, missing) is None else self.cables.get(cid)
                    if old is None:
                        raise bits.error("cable residuals for a cable not in the baseline")
                    before, now = old
                    for a, b in zip(now, before):
                        points.append(_residual(bits, tuple(wrap32(a[j] + wrap32(a[j] - b[j])) for j in range(3))))
                    base = (now, points)
                cable_bases.append((cid, base))
                cables.append({"id": cid, "points": [_deq(p, POSITION_SCALE) for p in points]})
            bits.finish()
        r.finish()

        for id_, s in staged.items():
            if s is None:
                self.base.pop(id_, None)
                self.cables.pop(id_, None)
            else:
                self.base[id_] = s
        self.cables.update(cable_bases)
        self.time = time
        msg = {
            "type": "tick", "tick": tick, "time": time, "bodies": bodies,
            "contacts": contacts, "spawned": spawned, "removed": removed,
        }
        if cables:
            msg["cables"] = cables
        return msg
