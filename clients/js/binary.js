// Decoder of Arbiter's binary stream format, version 2 (proto/binary.md).
//
// A BinaryDecoder holds the per-body baseline of one stream and turns each
// binary WebSocket message into the same object the JSON stream would carry
// ({type: "hello" | "tick" | "ack" | "error", ...}). It mirrors the Rust
// reference decoder (src/protocol/binary.rs): the same checks, the same
// predictions with the same f64 arithmetic, and f32-rounded outputs.
//
// One difference: ids, ticks and counts are JavaScript numbers, so a varint
// above 2^53 − 1 is rejected (the Rust decoder accepts up to 2^64 − 1).

export const VERSION = 2;
const HELLO = 1, TICK = 2, ACK = 3, ERROR = 4;
const S_SPAWNED = 1, S_REMOVED = 2, S_BODIES = 4, S_CONTACTS = 8, S_CABLES = 16;
const F_V = 1, F_W = 2, F_P = 4, F_Q = 8;
const SF_CCD = 1, SF_SLEEPING_KNOWN = 2, SF_SLEEPING = 4, SF_DENSITY = 8, SF_MASS = 16,
  SF_LABEL = 32, SF_MARGIN = 64, SF_ID = 128;
const C_END = 1, C_IMPULSE = 2;
const MIN_RECORD_BITS = 5;
const MIN_CONTACT_BYTES = 10;
// Smallest cable record (1-bit id gap, key bit, 1-bit count) and point (three 1-bit residuals).
const MIN_CABLE_BITS = 3;
const MIN_POINT_BITS = 3;

export const POSITION_SCALE = 1024;
export const VELOCITY_SCALE = 128;
const POSITION_PER_VELOCITY = POSITION_SCALE / VELOCITY_SCALE;
const INT_MAX = 2147483647;
const ROTATION_BITS = 15;
const ROTATION_MAX = 16383;
export const ROTATION_SCALE = ROTATION_MAX * Math.SQRT2;
const MAX_PREDICTION_DT = 60;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const fround = Math.fround;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A malformed frame: `offset` is the byte where decoding stopped. */
export class DecodeError extends Error {
  constructor(offset, reason) {
    super(`malformed binary frame at byte ${offset}: ${reason}`);
    this.name = "DecodeError";
    this.offset = offset;
    this.reason = reason;
  }
}

// ---------------------------------------------------------------------------
// Quantization helpers (src/protocol/quantize.rs).
// ---------------------------------------------------------------------------

/** Quantized rotation: `index` of the dropped component, three integers `c`. */
export function qrot(index, c) {
  return { index, c };
}
const IDENTITY = qrot(3, [0, 0, 0]);

function roundClamp(x, max) {
  if (Number.isNaN(x)) return 0;
  const r = Math.floor(x + 0.5);
  return r < -max ? -max : r > max ? max : r;
}

/** Smallest-three of an f64 quaternion (normalizes first). */
export function qrotFromF64(q) {
  const n = Math.sqrt(((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3]);
  if (!Number.isFinite(n) || n <= 0) return IDENTITY;
  const u = [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
  let index = 0;
  for (let k = 1; k < 4; k++) if (Math.abs(u[k]) > Math.abs(u[index])) index = k;
  const sign = u[index] < 0 ? -1 : 1;
  const c = [];
  for (let k = 0; k < 4; k++) {
    if (k !== index) c.push(roundClamp(sign * u[k] * ROTATION_SCALE, ROTATION_MAX));
  }
  return qrot(index, c);
}

/** The decoder's reconstruction (not normalized), f64. */
export function qrotToF64Raw(r) {
  const a0 = r.c[0] / ROTATION_SCALE, a1 = r.c[1] / ROTATION_SCALE, a2 = r.c[2] / ROTATION_SCALE;
  const s = (a0 * a0 + a1 * a1) + a2 * a2;
  const d = s < 1 ? Math.sqrt(1 - s) : 0;
  const out = [0, 0, 0, 0];
  const a = [a0, a1, a2];
  let j = 0;
  for (let k = 0; k < 4; k++) out[k] = k === r.index ? d : a[j++];
  return out;
}

/** Normalized, f32-rounded quaternion [x, y, z, w]. */
export function qrotToF32(r) {
  const q = qrotToF64Raw(r);
  const n = Math.sqrt(((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3]);
  if (n > 0) return q.map((x) => fround(x / n));
  return [0, 0, 0, 1];
}

function qrotValid(r) {
  return r.index >= 0 && r.index < 4 && r.c.every((c) => c >= -ROTATION_MAX && c <= ROTATION_MAX);
}

export function predictionDt(time, previousTime) {
  const dt = time - previousTime;
  if (dt > 0) return dt < MAX_PREDICTION_DT ? dt : MAX_PREDICTION_DT;
  return 0; // also NaN
}

export function predictPosition(p, v, dt) {
  const f = dt * POSITION_PER_VELOCITY;
  const out = [0, 0, 0];
  for (let k = 0; k < 3; k++) {
    const d = Math.floor(v[k] * f + 0.5);
    const x = p[k] + d;
    out[k] = x < -INT_MAX ? -INT_MAX : x > INT_MAX ? INT_MAX : x;
  }
  return out;
}

export function predictRotation(q, w, dt) {
  if ((w[0] === 0 && w[1] === 0 && w[2] === 0) || dt === 0) return q;
  const [qx, qy, qz, qw] = qrotToF64Raw(q);
  const wx = w[0] / VELOCITY_SCALE, wy = w[1] / VELOCITY_SCALE, wz = w[2] / VELOCITY_SCALE;
  const h = 0.5 * dt;
  const dx = (wx * qw + wy * qz) - wz * qy;
  const dy = (wy * qw + wz * qx) - wx * qz;
  const dz = (wz * qw + wx * qy) - wy * qx;
  const dw = -((wx * qx + wy * qy) + wz * qz);
  return qrotFromF64([qx + h * dx, qy + h * dy, qz + h * dz, qw + h * dw]);
}

export function unzigzag32(z) {
  return (z >>> 1) ^ -(z & 1);
}

function sgn(x) {
  return x < 0 ? -1 : 1;
}

export function decodeNormal(e0, e1) {
  let x = Math.min(1, Math.max(-1, e0 / 32767));
  let y = Math.min(1, Math.max(-1, e1 / 32767));
  const z = 1 - Math.abs(x) - Math.abs(y);
  if (z < 0) {
    const ox = x, oy = y;
    x = (1 - Math.abs(oy)) * sgn(ox);
    y = (1 - Math.abs(ox)) * sgn(oy);
  }
  const n = Math.sqrt(x * x + y * y + z * z);
  return [fround(x / n), fround(y / n), fround(z / n)];
}

const deq = (v, scale) => [fround(v[0] / scale), fround(v[1] / scale), fround(v[2] / scale)];

function toState(id, s) {
  return {
    id,
    p: deq(s.p, POSITION_SCALE),
    q: qrotToF32(s.q),
    v: deq(s.v, VELOCITY_SCALE),
    w: deq(s.w, VELOCITY_SCALE),
  };
}

const ZERO_STATE = Object.freeze({ p: [0, 0, 0], q: qrot(0, [0, 0, 0]), v: [0, 0, 0], w: [0, 0, 0] });

// ---------------------------------------------------------------------------
// Byte and bit readers (src/protocol/wire.rs).
// ---------------------------------------------------------------------------

class ByteReader {
  constructor(bytes, start = 0, end = bytes.length) {
    this.b = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
    this.end = end;
  }
  error(reason) {
    return new DecodeError(this.pos, reason);
  }
  remaining() {
    return this.end - this.pos;
  }
  need(n) {
    if (n > this.remaining()) throw this.error("frame ends early");
    const at = this.pos;
    this.pos += n;
    return at;
  }
  sub(n) {
    const at = this.need(n);
    return new ByteReader(this.b, at, at + n);
  }
  u8() {
    return this.b[this.need(1)];
  }
  i16() {
    return this.view.getInt16(this.need(2), true);
  }
  f32() {
    return this.view.getFloat32(this.need(4), true);
  }
  f64() {
    return this.view.getFloat64(this.need(8), true);
  }
  u48() {
    const at = this.need(6);
    let x = 0;
    for (let i = 5; i >= 0; i--) x = x * 256 + this.b[at + i];
    return x; // < 2^48, exact
  }
  varint() {
    let x = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const byte = this.u8();
      const bits = byte & 0x7f;
      if (i === 9 && bits > 1) throw this.error("varint overflows 64 bits");
      x += bits * mul;
      mul *= 128;
      if ((byte & 0x80) === 0) {
        if (x > MAX_SAFE) throw this.error("varint above 2^53 (not supported by this decoder)");
        return x;
      }
    }
    throw this.error("varint longer than 10 bytes");
  }
  varint32() {
    const x = this.varint();
    if (x > 0xffffffff) throw this.error("varint overflows 32 bits");
    return x;
  }
  count(minBytes) {
    const n = this.varint();
    if (n > Math.floor(this.remaining() / Math.max(1, minBytes))) {
      throw this.error("count larger than the frame can hold");
    }
    return n;
  }
  str() {
    const n = this.varint();
    if (n > this.remaining()) throw this.error("string longer than the frame");
    const at = this.need(n);
    try {
      return utf8.decode(this.b.subarray(at, at + n));
    } catch {
      throw this.error("string is not UTF-8");
    }
  }
  finish() {
    if (this.remaining() !== 0) throw this.error("trailing bytes after the message");
  }
}

class BitReader {
  constructor(bytes, start, len) {
    this.b = bytes;
    this.start = start;
    this.len = len;
    this.bit = 0;
  }
  error(reason) {
    return new DecodeError(this.start + (this.bit >> 3), reason);
  }
  bitsLeft() {
    return this.len * 8 - this.bit;
  }
  /** Reads n ≤ 32 bits, least significant first. */
  read(n) {
    if (n > this.bitsLeft()) throw this.error("bit section ends early");
    let x = 0;
    let got = 0;
    while (got < n) {
      const byte = this.b[this.start + (this.bit >> 3)];
      const shift = this.bit & 7;
      const take = Math.min(8 - shift, n - got);
      const chunk = (byte >> shift) & ((1 << take) - 1);
      x += chunk * 2 ** got;
      got += take;
      this.bit += take;
    }
    return x;
  }
  readBit() {
    return this.read(1) === 1;
  }
  expGolomb() {
    let n = 0;
    while (!this.readBit()) {
      n += 1;
      if (n > 64) throw this.error("Exp-Golomb code longer than 64 bits");
    }
    if (n > 53) throw this.error("Exp-Golomb value above 2^53 (not supported by this decoder)");
    let low = this.read(Math.min(n, 32));
    if (n > 32) low += this.read(n - 32) * 2 ** 32;
    const g = 2 ** n + low - 1;
    if (g > MAX_SAFE) throw this.error("Exp-Golomb value above 2^53 (not supported by this decoder)");
    return g;
  }
  finish() {
    const left = this.bitsLeft();
    if (left >= 8) throw this.error("trailing bytes in the bit section");
    if (left > 0) {
      const last = this.len > 0 ? this.b[this.start + this.len - 1] : 0;
      if (last >> (8 - left) !== 0) throw this.error("non-zero padding bits");
    }
  }
}

/**
 * A section of n records in a bit section (varint n, varint len, len bytes):
 * [n, its BitReader]; n more than the bits hold at minBits a record throws tooMany.
 */
function bitSection(r, minBits, tooMany) {
  const n = r.varint();
  const len = r.varint();
  if (len > r.remaining()) throw r.error("bit section longer than the frame");
  const start = r.need(len);
  const bits = new BitReader(r.b, start, len);
  if (n > Math.floor(bits.bitsLeft() / minBits)) throw r.error(tooMany);
  return [n, bits];
}

function readResidual(bits, predicted) {
  const out = predicted.slice();
  for (let k = 0; k < 3; k++) {
    const z = bits.expGolomb();
    if (z > 0xffffffff) throw bits.error("residual overflows 32 bits");
    out[k] = (out[k] + unzigzag32(z)) | 0;
  }
  return out;
}

function readBodyDelta(bits, old, dt) {
  const mask = bits.read(4);
  const v = mask & F_V ? readResidual(bits, old.v) : old.v;
  const w = mask & F_W ? readResidual(bits, old.w) : old.w;
  const pPred = predictPosition(old.p, v, dt);
  const p = mask & F_P ? readResidual(bits, pPred) : pPred;
  const qPred = predictRotation(old.q, w, dt);
  let q = qPred;
  if (mask & F_Q) {
    if (bits.readBit()) {
      const index = bits.read(2);
      const c = [0, 0, 0];
      for (let k = 0; k < 3; k++) c[k] = bits.read(ROTATION_BITS) - ROTATION_MAX;
      q = qrot(index, c);
    } else {
      q = qrot(qPred.index, readResidual(bits, qPred.c));
    }
  }
  if (!qrotValid(q)) throw bits.error("rotation component out of range");
  return { p, q, v, w };
}

function readWorld(r) {
  const id = r.str();
  const name = r.str();
  const tick_hz = r.f64();
  const gravity = [r.f32(), r.f32(), r.f32()];
  const pb = r.u8();
  if (pb > 1) throw r.error("paused must be 0 or 1");
  const tick = r.varint();
  const time = r.f64();
  const body_count = r.varint();
  const step_ms = { last: r.f64(), mean: r.f64(), max: r.f64() };
  return { id, name, tick_hz, gravity, paused: pb === 1, tick, time, body_count, step_ms };
}

function readShape(r) {
  switch (r.u8()) {
    case 0:
      return { type: "sphere", radius: r.f32() };
    case 1:
      return { type: "box", half_extents: [r.f32(), r.f32(), r.f32()] };
    case 2:
      return { type: "capsule", half_height: r.f32(), radius: r.f32() };
    case 3:
      return { type: "cylinder", half_height: r.f32(), radius: r.f32() };
    case 4:
      return { type: "cone", half_height: r.f32(), radius: r.f32() };
    case 5: {
      const n = r.count(12);
      const points = [];
      for (let i = 0; i < n; i++) points.push([r.f32(), r.f32(), r.f32()]);
      return { type: "convex_hull", points };
    }
    case 6:
      return { type: "plane", normal: [r.f32(), r.f32(), r.f32()], offset: r.f32() };
    default:
      r.pos -= 1;
      throw r.error("unknown shape type");
  }
}

const KINDS = ["dynamic", "static", "kinematic"];

/** A length-prefixed body record: [Body as JSON would carry it, quantized state]. */
function readBody(outer) {
  const len = outer.varint();
  if (len > outer.remaining()) throw outer.error("body record longer than the frame");
  const r = outer.sub(len);
  const flags = r.u8();
  const id = flags & SF_ID ? r.varint() : undefined;
  const k = r.u8();
  if (k > 2) throw r.error("unknown body kind");
  const shape = readShape(r);
  const p = [0, 0, 0];
  for (let i = 0; i < 3; i++) p[i] = unzigzag32(r.varint32());
  const packed = r.u48();
  if (packed >= 2 ** 47) throw r.error("rotation component out of range");
  const index = packed % 4;
  const c = [0, 0, 0];
  for (let i = 0; i < 3; i++) {
    c[i] = Math.floor(packed / 2 ** (2 + ROTATION_BITS * i)) % 2 ** ROTATION_BITS - ROTATION_MAX;
  }
  const q = qrot(index, c);
  if (!qrotValid(q)) throw r.error("rotation component out of range");
  const v = [0, 0, 0], w = [0, 0, 0];
  for (let i = 0; i < 3; i++) v[i] = unzigzag32(r.varint32());
  for (let i = 0; i < 3; i++) w[i] = unzigzag32(r.varint32());
  const state = { p, q, v, w };
  const friction = r.f32();
  const restitution = r.f32();
  const linear_damping = r.f32();
  const angular_damping = r.f32();
  const density = flags & SF_DENSITY ? r.f32() : undefined;
  const mass = flags & SF_MASS ? r.f32() : undefined;
  const margin = flags & SF_MARGIN ? r.f32() : 0;
  const label = flags & SF_LABEL ? r.str() : undefined;
  const s = toState(0, state);
  // Keys in the order serde writes them; optional ones only when present.
  const body = {};
  if (id !== undefined) body.id = id;
  body.kind = KINDS[k];
  body.shape = shape;
  body.position = s.p;
  body.rotation = s.q;
  body.linear_velocity = s.v;
  body.angular_velocity = s.w;
  if (density !== undefined) body.density = density;
  if (mass !== undefined) body.mass = mass;
  body.friction = friction;
  body.restitution = restitution;
  body.linear_damping = linear_damping;
  body.angular_damping = angular_damping;
  if (margin !== 0) body.margin = margin;
  body.ccd = (flags & SF_CCD) !== 0;
  if (label !== undefined) body.label = label;
  if (flags & SF_SLEEPING_KNOWN) body.sleeping = (flags & SF_SLEEPING) !== 0;
  return [body, state];
}

function readContact(r, positionOf) {
  const head = r.u8();
  if (head & ~0x03) throw r.error("unknown contact flags");
  const a = r.varint();
  const z = r.varint();
  // unzigzag64 of z, then b = a + that (exact while within 2^53).
  const diff = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  const b = a + diff;
  if (!Number.isSafeInteger(b) || b < 0) throw r.error("contact body id out of range");
  const ref = positionOf(b) || [0, 0, 0];
  const p = [0, 0, 0];
  for (let k = 0; k < 3; k++) p[k] = (ref[k] + unzigzag32(r.varint32())) | 0;
  const normal = decodeNormal(r.i16(), r.i16());
  const impulse = head & C_IMPULSE ? r.f32() : 0;
  return {
    kind: head & C_END ? "end" : "begin",
    a,
    b,
    point: deq(p, POSITION_SCALE),
    normal,
    impulse,
  };
}

// ---------------------------------------------------------------------------
// The decoder.
// ---------------------------------------------------------------------------

export class BinaryDecoder {
  constructor() {
    /** @type {Map<number, {p:number[], q:{index:number,c:number[]}, v:number[], w:number[]}>} */
    this.base = new Map();
    /**
     * Per cable id, the quantized points of the last two frames that carried it.
     * @type {Map<number, {before: number[][], now: number[][]}>}
     */
    this.cables = new Map();
    this.time = 0;
  }

  /** Number of bodies tracked. */
  get size() {
    return this.base.size;
  }

  /** Current state {id,p,q,v,w} of a body as the stream has told it, or undefined. */
  state(id) {
    const s = this.base.get(id);
    return s ? toState(id, s) : undefined;
  }

  /** Every tracked body's state, by ascending id. */
  states() {
    return [...this.base.keys()].sort((a, b) => a - b).map((id) => toState(id, this.base.get(id)));
  }

  /** The quantized state of a body (for tests). */
  quantized(id) {
    return this.base.get(id);
  }

  /**
   * Decodes one binary frame (ArrayBuffer, Uint8Array or Node Buffer) into
   * the message object the JSON stream would carry. Throws DecodeError; a
   * rejected frame leaves the decoder unchanged.
   */
  decode(frame) {
    const bytes = frame instanceof Uint8Array ? frame : new Uint8Array(frame);
    const r = new ByteReader(bytes);
    if (r.u8() !== VERSION) throw new DecodeError(0, "unknown protocol version");
    let msg;
    switch (r.u8()) {
      case HELLO:
        msg = this.#hello(r);
        break;
      case TICK:
        msg = this.#tick(r);
        break;
      case ACK:
        msg = { type: "ack", seq: r.varint() };
        break;
      case ERROR: {
        const flags = r.u8();
        if (flags > 1) throw r.error("unknown error flags");
        msg = { type: "error" };
        if (flags === 1) msg.seq = r.varint();
        msg.code = r.str();
        msg.message = r.str();
        break;
      }
      default:
        throw new DecodeError(1, "unknown message type");
    }
    r.finish();
    return msg;
  }

  #hello(r) {
    const time = r.f64();
    const world = readWorld(r);
    const n = r.count(1);
    const bodies = [];
    const base = new Map();
    for (let i = 0; i < n; i++) {
      const [body, state] = readBody(r);
      if (body.id !== undefined) base.set(body.id, state);
      bodies.push(body);
    }
    r.finish();
    this.base = base;
    this.cables = new Map();
    this.time = time;
    return { type: "hello", world, bodies };
  }

  #tick(r) {
    const tick = r.varint();
    const time = r.f64();
    const flags = r.u8();
    if (flags & ~0x1f) throw r.error("unknown section flags");
    const staged = new Map(); // id -> state | null (removed)
    const get = (id) => (staged.has(id) ? staged.get(id) : this.base.get(id));

    const spawned = [];
    if (flags & S_SPAWNED) {
      const n = r.count(1);
      for (let i = 0; i < n; i++) {
        const [body, state] = readBody(r);
        if (body.id !== undefined) staged.set(body.id, state);
        spawned.push(body);
      }
    }

    const removed = [];
    if (flags & S_REMOVED) {
      const n = r.count(1);
      let next = 0;
      for (let i = 0; i < n; i++) {
        const id = next + r.varint();
        if (id > MAX_SAFE) throw r.error("removed id above 2^53");
        next = id + 1;
        staged.set(id, null);
        removed.push(id);
      }
    }

    const bodies = [];
    if (flags & S_BODIES) {
      const [n, bits] = bitSection(r, MIN_RECORD_BITS, "body count larger than the bit section can hold");
      const dt = predictionDt(time, this.time);
      let next = 0;
      for (let i = 0; i < n; i++) {
        const id = next + bits.expGolomb();
        if (id > MAX_SAFE) throw bits.error("body id above 2^53");
        next = id + 1;
        const old = get(id) || ZERO_STATE;
        const s = readBodyDelta(bits, old, dt);
        staged.set(id, s);
        bodies.push(toState(id, s));
      }
      bits.finish();
    }

    const contacts = [];
    if (flags & S_CONTACTS) {
      const n = r.count(MIN_CONTACT_BYTES);
      for (let i = 0; i < n; i++) {
        contacts.push(readContact(r, (b) => get(b)?.p));
      }
    }

    // Cables: key frames (first point, then each less the one before) or
    // residuals against 2·now − before, in a bit section.
    const cables = [];
    const cableBases = [];
    if (flags & S_CABLES) {
      const [n, bits] = bitSection(r, MIN_CABLE_BITS, "cable count larger than the bit section can hold");
      let next = 0;
      for (let i = 0; i < n; i++) {
        const id = next + bits.expGolomb();
        if (id > MAX_SAFE) throw bits.error("cable id above 2^53");
        next = id + 1;
        const points = [];
        let base;
        if (bits.readBit()) {
          const m = bits.expGolomb();
          if (m < 2) throw bits.error("a cable of fewer than two points");
          if (m > Math.floor(bits.bitsLeft() / MIN_POINT_BITS)) {
            throw bits.error("point count larger than the bit section can hold");
          }
          let last = [0, 0, 0];
          for (let k = 0; k < m; k++) points.push((last = readResidual(bits, last)));
          base = { before: points, now: points };
        } else {
          const old = staged.get(id) === null ? undefined : this.cables.get(id);
          if (!old) throw bits.error("cable residuals for a cable not in the baseline");
          for (let k = 0; k < old.now.length; k++) {
            const a = old.now[k], b = old.before[k];
            const pred = [0, 1, 2].map((j) => (a[j] + ((a[j] - b[j]) | 0)) | 0);
            points.push(readResidual(bits, pred));
          }
          base = { before: old.now, now: points };
        }
        cableBases.push([id, base]);
        cables.push({ id, points: points.map((p) => deq(p, POSITION_SCALE)) });
      }
      bits.finish();
    }
    r.finish();

    for (const [id, s] of staged) {
      if (s) this.base.set(id, s);
      else {
        this.base.delete(id);
        this.cables.delete(id);
      }
    }
    for (const [id, base] of cableBases) this.cables.set(id, base);
    this.time = time;
    const msg = { type: "tick", tick, time, bodies, contacts, spawned, removed };
    if (cables.length) msg.cables = cables;
    return msg;
  }
}
