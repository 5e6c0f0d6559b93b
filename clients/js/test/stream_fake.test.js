// Subscription logic against a scripted WebSocket server (the `ws` package):
// decoding, the mirror, resync after a dropped connection, backoff.
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebSocketServer } from "ws";
import { ArbiterClient, InterpolationBuffer } from "../index.js";

const hex = (s) => Buffer.from(s.replace(/\s+/g, ""), "hex");
const HELLO = hex(`02 01 00 00 00 00 00 00 00 00 02 77 31 04 64 65 6d 6f 00 00 00 00 00 00 4e 40
00 00 00 00 c3 f5 1c c1 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 33 82 01 01
06 00 00 00 00 00 00 80 3f 00 00 00 00 00 00 00 00 00 00 00 ff ff fe 7f ff 3f
00 00 00 00 00 00 00 00 00 3f 00 00 00 00 00 00 00 00 cd cc 4c 3d 28 82 02 00
00 00 00 00 3f 00 80 10 00 ff ff fe 7f ff 3f 00 00 00 00 00 00 00 00 00 3f 00
00 00 00 00 00 00 00 cd cc 4c 3d`);
const TICK = hex(`02 02 01 11 11 11 11 11 11 91 3f 0c 01 08 1e 00 03 80 ea 00 04 00 01 02 01 02
00 f9 0f 00 00 00 ff 7f 00 00 a0 3f`);

test("binary subscription decodes, drops, reconnects and resyncs from the next hello", async () => {
  const wss = new WebSocketServer({ port: 0 });
  await new Promise((r) => wss.on("listening", r));
  const urls = [];
  let conns = 0;
  wss.on("connection", (ws, req) => {
    urls.push(req.url);
    conns += 1;
    ws.send(HELLO);
    ws.send(TICK);
    if (conns === 1) setTimeout(() => ws.terminate(), 20); // drop the first connection
  });
  const client = new ArbiterClient(`http://127.0.0.1:${wss.address().port}`);
  const hellos = [], ticks = [], closes = [];
  const sub = client.subscribe("w1", {
    format: "binary", every: 2, minBackoffMs: 10,
    onHello: (m) => hellos.push(m), onTick: (m) => ticks.push(m), onClose: () => closes.push(1),
  });
  const first = await sub.ready;
  assert.equal(first.world.id, "w1");
  const t0 = Date.now();
  while (ticks.length < 2 && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 10));
  sub.close();
  wss.close();
  assert.equal(urls[0], "/v1/worlds/w1/stream?format=binary&every=2");
  assert.equal(hellos.length, 2, "a second hello after the reconnect");
  assert.equal(ticks.length, 2);
  // The tick after the second hello decodes the same as the first: the baseline was reset.
  assert.deepEqual(ticks[1], ticks[0]);
  assert.equal(ticks[1].bodies[0].p[0], 0.033203125);
  assert.ok(closes.length >= 1);
  assert.equal(sub.mirror.bodies.get(2).position[0], 0.033203125);
  assert.equal(sub.bytesReceived, 2 * (HELLO.length + TICK.length));
});

test("interpolation buffer interpolates between ticks and holds still bodies", () => {
  const buf = new InterpolationBuffer({ now: () => 0 });
  const body = (id, x) => ({ id, position: [x, 0, 0], rotation: [0, 0, 0, 1] });
  buf.push({ type: "hello", world: { time: 0 }, bodies: [body(1, 0), body(2, 5)] });
  const st = (id, x) => ({ id, p: [x, 0, 0], q: [0, 0, 0, 1], v: [0, 0, 0], w: [0, 0, 0] });
  buf.push({ type: "tick", time: 1, bodies: [st(1, 1)], spawned: [], removed: [], contacts: [] });
  buf.push({ type: "tick", time: 2, bodies: [st(1, 3), st(2, 7)], spawned: [], removed: [], contacts: [] });
  assert.deepEqual(buf.sampleBody(1, 0.5).p, [0.5, 0, 0]);
  assert.deepEqual(buf.sampleBody(1, 1.5).p, [2, 0, 0]);
  // Body 2 was still until t = 1, then moved to 7 at t = 2.
  assert.deepEqual(buf.sampleBody(2, 0.5).p, [5, 0, 0]);
  assert.deepEqual(buf.sampleBody(2, 1.5).p, [6, 0, 0]);
  assert.deepEqual(buf.sampleBody(2, 9).p, [7, 0, 0]);
  buf.push({ type: "tick", time: 3, bodies: [], spawned: [], removed: [2], contacts: [] });
  assert.equal(buf.sampleBody(2, 3), undefined);
});
