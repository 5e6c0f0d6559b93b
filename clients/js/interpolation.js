// Smooth rendering between ticks: an interpolation buffer of per-body
// states keyed by server time, and the mirror of a world kept from a stream.

/** Linear interpolation of two 3-vectors. */
export function lerp3(a, b, t) {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

/** Normalized linear interpolation of quaternions [x,y,z,w] along the shorter arc. */
export function nlerpQuat(a, b, t) {
  const dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  const s = dot < 0 ? -1 : 1;
  const q = [0, 1, 2, 3].map((k) => a[k] + (s * b[k] - a[k]) * t);
  const n = Math.hypot(q[0], q[1], q[2], q[3]) || 1;
  return q.map((x) => x / n);
}

/**
 * Per-body history of {time, p, q}. Feed it every hello and tick (`push`),
 * then `sample(time)` gives each body's pose at any server time between the
 * ticks received, which smooths rendering when frames arrive unevenly or
 * less often than the display refreshes (e.g. `every` > 1).
 * `sampleNow(delay)` maps the local clock onto the server's and samples
 * `delay` seconds in the past (a typical delay is two frame intervals).
 */
export class InterpolationBuffer {
  /** @param {{capacity?: number, now?: () => number}} [opts] */
  constructor(opts = {}) {
    this.capacity = opts.capacity ?? 32;
    this.now = opts.now ?? (() => performance.now() / 1000);
    /** @type {Map<number, {t:number,p:number[],q:number[]}[]>} */
    this.history = new Map();
    this.lastTime = -Infinity;
    this.offset = undefined; // server time − local time
  }

  clear() {
    this.history.clear();
    this.lastTime = -Infinity;
    this.offset = undefined;
  }

  #observe(time) {
    const off = time - this.now();
    // Track the latest arrival: follow decreases at once (the server clock
    // runs ahead of our estimate only through delays), increases slowly.
    if (this.offset === undefined || off < this.offset) this.offset = off;
    else this.offset += (off - this.offset) * 0.05;
  }

  #put(id, t, p, q) {
    let h = this.history.get(id);
    if (!h) this.history.set(id, (h = []));
    const last = h[h.length - 1];
    // A body that held still since its last entry holds until the previous frame.
    if (last && last.t < this.lastTime && this.lastTime < t) {
      h.push({ t: this.lastTime, p: last.p, q: last.q });
    }
    if (last && last.t >= t) h.length = h.findIndex((e) => e.t >= t);
    h.push({ t, p, q });
    if (h.length > this.capacity) h.splice(0, h.length - this.capacity);
  }

  /** Feeds a decoded stream message (hello or tick; others are ignored). */
  push(msg) {
    if (msg.type === "hello") {
      this.history.clear();
      const t = msg.world.time;
      for (const b of msg.bodies) if (b.id !== undefined) this.#put(b.id, t, b.position, b.rotation);
      this.lastTime = t;
      this.#observe(t);
    } else if (msg.type === "tick") {
      const t = msg.time;
      for (const b of msg.spawned) if (b.id !== undefined) this.#put(b.id, t, b.position, b.rotation);
      for (const id of msg.removed) this.history.delete(id);
      for (const s of msg.bodies) this.#put(s.id, t, s.p, s.q);
      this.lastTime = t;
      this.#observe(t);
    }
  }

  /** Pose {p, q} of one body at server time `time` (clamped to the history). */
  sampleBody(id, time) {
    const h = this.history.get(id);
    if (!h || h.length === 0) return undefined;
    if (time <= h[0].t) return { p: h[0].p, q: h[0].q };
    const last = h[h.length - 1];
    if (time >= last.t) return { p: last.p, q: last.q };
    let i = h.length - 1;
    while (h[i - 1].t > time) i--;
    const a = h[i - 1], b = h[i];
    const u = (time - a.t) / (b.t - a.t);
    return { p: lerp3(a.p, b.p, u), q: nlerpQuat(a.q, b.q, u) };
  }

  /** Map id → {p, q} of every body at server time `time`. */
  sample(time) {
    const out = new Map();
    for (const id of this.history.keys()) out.set(id, this.sampleBody(id, time));
    return out;
  }

  /** The server time `delay` seconds behind the latest frame, on the local clock. */
  renderTime(delay = 0.05) {
    if (this.offset === undefined) return this.lastTime;
    return Math.min(this.now() + this.offset - delay, this.lastTime);
  }

  sampleNow(delay = 0.05) {
    return this.sample(this.renderTime(delay));
  }
}

/**
 * The state of one world as a stream has told it: `world` (the hello's World,
 * with tick and time updated), `bodies` (id → Body, its position, rotation,
 * linear_velocity and angular_velocity kept current) and the contacts of the
 * last tick. Apply every message in order; a hello resets everything.
 */
export class WorldMirror {
  constructor() {
    this.world = undefined;
    /** @type {Map<number, any>} */
    this.bodies = new Map();
    this.contacts = [];
    /**
     * Cables by id, `{id, points}` (a tick lists only the cables that moved).
     * @type {Map<number, any>}
     */
    this.cables = new Map();
  }

  apply(msg) {
    if (msg.type === "hello") {
      this.world = { ...msg.world };
      this.bodies = new Map();
      for (const b of msg.bodies) if (b.id !== undefined) this.bodies.set(b.id, { ...b });
      this.contacts = [];
      this.cables = new Map();
      for (const c of msg.cables ?? []) this.cables.set(c.id, c);
    } else if (msg.type === "tick") {
      for (const b of msg.spawned) if (b.id !== undefined) this.bodies.set(b.id, { ...b });
      // Removed ids name bodies and cables (one count for both).
      for (const id of msg.removed) {
        this.bodies.delete(id);
        this.cables.delete(id);
      }
      for (const s of msg.bodies) {
        let b = this.bodies.get(s.id);
        if (!b) this.bodies.set(s.id, (b = { id: s.id }));
        b.position = s.p;
        b.rotation = s.q;
        b.linear_velocity = s.v;
        b.angular_velocity = s.w;
      }
      this.contacts = msg.contacts;
      for (const c of msg.cables ?? []) this.cables.set(c.id, c);
      if (this.world) {
        this.world.tick = msg.tick;
        this.world.time = msg.time;
        this.world.body_count = this.bodies.size;
      }
    }
  }
}
