// Arbiter client for browsers and Node 20: the REST API of DESIGN.md and the
// WebSocket stream (JSON or binary), with reconnection and an interpolation
// buffer. No build step; types in index.d.ts.

import { BinaryDecoder, DecodeError } from "./binary.js";
import { InterpolationBuffer, WorldMirror, lerp3, nlerpQuat } from "./interpolation.js";

export { BinaryDecoder, DecodeError, InterpolationBuffer, WorldMirror, lerp3, nlerpQuat };

/** An error reply of the REST API: `status`, `code` and `message`. */
export class ArbiterError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.name = "ArbiterError";
    this.status = status;
    this.code = code;
  }
}

let wsImpl;
/** The WebSocket class: the platform's, else the `ws` package (Node 20). */
async function webSocketClass() {
  if (wsImpl) return wsImpl;
  if (typeof globalThis.WebSocket === "function") return (wsImpl = globalThis.WebSocket);
  const mod = await import("ws");
  return (wsImpl = mod.WebSocket || mod.default);
}

const enc = encodeURIComponent;

export class ArbiterClient {
  /**
   * @param {string} [baseUrl] e.g. "http://127.0.0.1:7700"; in a page served
   *   by the server, defaults to its origin.
   * @param {{fetch?: typeof fetch}} [opts]
   */
  constructor(baseUrl, opts = {}) {
    if (!baseUrl) baseUrl = globalThis.location ? globalThis.location.origin : "http://127.0.0.1:7700";
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  async request(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await this.fetch(this.baseUrl + path, init);
    const text = await res.text();
    let data;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = text;
    }
    if (!res.ok) {
      const e = data && data.error ? data.error : { code: "http_" + res.status, message: String(text) };
      throw new ArbiterError(res.status, e.code, e.message);
    }
    return data;
  }

  health() {
    return this.request("GET", "/healthz");
  }
  /** WorldSpec ({name, tick_hz, gravity}) or {scene: Scene} → World. */
  createWorld(spec = {}) {
    return this.request("POST", "/v1/worlds", spec);
  }
  listWorlds() {
    return this.request("GET", "/v1/worlds");
  }
  getWorld(worldId) {
    return this.request("GET", `/v1/worlds/${enc(worldId)}`);
  }
  /** {paused?, gravity?, tick_hz?} → World. */
  updateWorld(worldId, patch) {
    return this.request("PATCH", `/v1/worlds/${enc(worldId)}`, patch);
  }
  async deleteWorld(worldId) {
    await this.request("DELETE", `/v1/worlds/${enc(worldId)}`);
  }
  /** Steps a paused world N times → {tick}. */
  step(worldId, steps = 1) {
    return this.request("POST", `/v1/worlds/${enc(worldId)}/step`, { steps });
  }
  snapshot(worldId) {
    return this.request("GET", `/v1/worlds/${enc(worldId)}/snapshot`);
  }
  /** One BodySpec → Body; an array of BodySpecs → [Body]. */
  async spawn(worldId, spec) {
    const path = `/v1/worlds/${enc(worldId)}/bodies`;
    if (Array.isArray(spec)) return (await this.request("POST", path, { bodies: spec })).bodies;
    return this.request("POST", path, spec);
  }
  listBodies(worldId) {
    return this.request("GET", `/v1/worlds/${enc(worldId)}/bodies`);
  }
  getBody(worldId, id) {
    return this.request("GET", `/v1/worlds/${enc(worldId)}/bodies/${id}`);
  }
  /** {position?, rotation?, linear_velocity?, angular_velocity?} → Body. */
  updateBody(worldId, id, patch) {
    return this.request("PATCH", `/v1/worlds/${enc(worldId)}/bodies/${id}`, patch);
  }
  async removeBody(worldId, id) {
    await this.request("DELETE", `/v1/worlds/${enc(worldId)}/bodies/${id}`);
  }
  applyImpulse(worldId, id, impulse, point, angularImpulse) {
    const body = { impulse };
    if (point) body.point = point;
    if (angularImpulse) body.angular_impulse = angularImpulse;
    return this.request("POST", `/v1/worlds/${enc(worldId)}/bodies/${id}/impulse`, body);
  }
  /** Sets the linear and/or angular velocity of a body (PATCH). */
  setVelocity(worldId, id, linear, angular) {
    const patch = {};
    if (linear) patch.linear_velocity = linear;
    if (angular) patch.angular_velocity = angular;
    return this.updateBody(worldId, id, patch);
  }
  /** → the hit {body, distance, point, normal} or null. */
  async raycast(worldId, origin, direction, maxDistance = 1000) {
    const r = await this.request("POST", `/v1/worlds/${enc(worldId)}/raycast`, {
      origin,
      direction,
      max_distance: maxDistance,
    });
    return r ? r.hit : null;
  }
  addCable(worldId, spec) {
    return this.request("POST", `/v1/worlds/${enc(worldId)}/cables`, spec);
  }

  /** The WebSocket URL of a world's stream. */
  streamUrl(worldId, format = "json", every = 1) {
    const u = new URL(`${this.baseUrl}/v1/worlds/${enc(worldId)}/stream`);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    u.searchParams.set("format", format);
    u.searchParams.set("every", String(every));
    return u.toString();
  }

  /**
   * Subscribes to a world's stream. Messages are decoded (binary frames into
   * the same objects as JSON) and applied to `handle.mirror` (a WorldMirror)
   * and `handle.interpolation` (an InterpolationBuffer) before the callbacks
   * run. On a lost connection it reconnects with exponential backoff and
   * resynchronizes from the next hello (onHello is called again).
   *
   * @param {string} worldId
   * @param {{format?: "json"|"binary", every?: number, onHello?: Function,
   *   onTick?: Function, onAck?: Function, onError?: Function,
   *   onOpen?: Function, onClose?: Function, reconnect?: boolean,
   *   minBackoffMs?: number, maxBackoffMs?: number}} [opts]
   */
  subscribe(worldId, opts = {}) {
    return new Subscription(this, worldId, opts);
  }
}

let seqCounter = 0;

export class Subscription {
  constructor(client, worldId, opts) {
    this.client = client;
    this.worldId = worldId;
    this.format = opts.format ?? "json";
    this.every = opts.every ?? 1;
    this.opts = opts;
    this.reconnect = opts.reconnect ?? true;
    this.minBackoff = opts.minBackoffMs ?? 200;
    this.maxBackoff = opts.maxBackoffMs ?? 5000;
    this.backoff = this.minBackoff;
    this.closed = false;
    this.ws = undefined;
    this.decoder = new BinaryDecoder();
    this.mirror = new WorldMirror();
    this.interpolation = new InterpolationBuffer();
    /** Bytes of stream messages received (all connections). */
    this.bytesReceived = 0;
    this.messagesReceived = 0;
    this.connections = 0;
    this.pending = new Map();
    this.ready = new Promise((resolve) => (this._resolveReady = resolve));
    this.#connect();
  }

  async #connect() {
    if (this.closed) return;
    let WS;
    try {
      WS = await webSocketClass();
    } catch (e) {
      this.#error(e);
      return;
    }
    if (this.closed) return;
    const ws = new WS(this.client.streamUrl(this.worldId, this.format, this.every));
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.connections += 1;
    let gotHello = false;
    ws.onopen = () => this.opts.onOpen?.();
    ws.onmessage = (ev) => {
      const data = ev.data;
      let msg;
      try {
        if (typeof data === "string") {
          this.bytesReceived += byteLength(data);
          msg = JSON.parse(data);
        } else {
          const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
          this.bytesReceived += bytes.byteLength;
          msg = this.decoder.decode(bytes);
        }
      } catch (e) {
        // A frame that does not decode: resynchronize through a fresh hello.
        this.#error(e);
        try {
          ws.close(4000, "decode error");
        } catch {}
        return;
      }
      this.messagesReceived += 1;
      if (msg.type === "hello") {
        gotHello = true;
        this.backoff = this.minBackoff;
      } else if (msg.type === "tick" && !gotHello) {
        return; // resync: ignore anything before the hello
      }
      this.#dispatch(msg);
    };
    ws.onerror = (ev) => {
      this.#error(ev && ev.error ? ev.error : new Error(`stream error (${this.worldId})`));
    };
    ws.onclose = (ev) => {
      if (this.ws === ws) this.ws = undefined;
      this.opts.onClose?.(ev);
      for (const [, p] of this.pending) p.reject(new Error("stream closed"));
      this.pending.clear();
      if (this.closed || !this.reconnect) return;
      const delay = this.backoff;
      this.backoff = Math.min(this.maxBackoff, this.backoff * 2);
      this.timer = setTimeout(() => this.#connect(), delay * (0.75 + Math.random() * 0.5));
    };
  }

  #error(e) {
    if (this.opts.onError) this.opts.onError(e);
  }

  #dispatch(msg) {
    if (msg.type === "hello" || msg.type === "tick") {
      this.mirror.apply(msg);
      this.interpolation.push(msg);
    }
    switch (msg.type) {
      case "hello":
        this._resolveReady(msg);
        this.opts.onHello?.(msg);
        break;
      case "tick":
        this.opts.onTick?.(msg);
        break;
      case "ack": {
        const p = this.pending.get(msg.seq);
        if (p) {
          this.pending.delete(msg.seq);
          p.resolve(msg);
        }
        this.opts.onAck?.(msg);
        break;
      }
      case "error": {
        const p = msg.seq !== undefined ? this.pending.get(msg.seq) : undefined;
        if (p) {
          this.pending.delete(msg.seq);
          p.reject(new ArbiterError(400, msg.code, msg.message));
        }
        this.#error(new ArbiterError(400, msg.code, msg.message));
        break;
      }
    }
  }

  /** Whether the socket is open. */
  get connected() {
    return !!this.ws && this.ws.readyState === 1;
  }

  /**
   * Sends a command over the stream ({type: "impulse"|"spawn"|"remove"|
   * "set_velocity", ...}); resolves on the server's ack, rejects on its error.
   */
  send(command) {
    if (!this.connected) return Promise.reject(new Error("stream not connected"));
    const seq = command.seq ?? ++seqCounter;
    const p = new Promise((resolve, reject) => this.pending.set(seq, { resolve, reject }));
    this.ws.send(JSON.stringify({ ...command, seq }));
    return p;
  }

  /** Closes the stream for good (no reconnection). */
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.ws) {
      try {
        this.ws.close(1000, "bye");
      } catch {}
    }
  }
}

function byteLength(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3;
  }
  return n;
}

export default ArbiterClient;
