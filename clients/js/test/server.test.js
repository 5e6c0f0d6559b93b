// The client against a real `arbiter serve` (started here).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ArbiterClient, ArbiterError } from "../index.js";
import { startServer, arbiterBinary } from "../testing/server.js";

const skip = arbiterBinary() ? false : "no arbiter binary built";
let server, client;

before(async () => {
  if (skip) return;
  server = await startServer();
  client = new ArbiterClient(server.url);
});
after(async () => server && (await server.stop()));

const f32 = Math.fround;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(cond, ms = 5000) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error("timed out");
    await sleep(10);
  }
}

test("REST: worlds, bodies, impulses, velocity, raycast, snapshot, errors", { skip }, async () => {
  const world = await client.createWorld({ name: "js-rest", tick_hz: 60, gravity: [0, -9.81, 0] });
  assert.equal(world.name, "js-rest");
  assert.ok((await client.listWorlds()).some((w) => w.id === world.id));
  const ground = await client.spawn(world.id, { kind: "static", shape: { type: "plane", normal: [0, 1, 0], offset: 0 } });
  assert.equal(typeof ground.id, "number");
  const balls = await client.spawn(world.id, [
    { shape: { type: "sphere", radius: 0.5 }, position: [0, 3, 0] },
    { shape: { type: "box", half_extents: [0.5, 0.5, 0.5] }, position: [3, 1, 0] },
  ]);
  assert.equal(balls.length, 2);
  assert.notEqual(balls[0].id, balls[1].id);
  await client.applyImpulse(world.id, balls[1].id, [0, 0, 500], [3, 1.2, 0]);
  await client.setVelocity(world.id, balls[0].id, [1, 0, 0]);
  const hit = await client.raycast(world.id, [0, 10, 0], [0, -1, 0], 100);
  assert.ok(hit, "the ray hits the ball or the ground");
  assert.ok(hit.body === balls[0].id || hit.body === ground.id);
  const snap = await client.snapshot(world.id);
  assert.equal(snap.bodies.length, 3);
  await client.removeBody(world.id, balls[1].id);
  await assert.rejects(client.getBody(world.id, balls[1].id), (e) => e instanceof ArbiterError && e.status === 404);
  await client.deleteWorld(world.id);
  await assert.rejects(client.getWorld(world.id), (e) => e instanceof ArbiterError && e.status === 404 && !!e.code);
});

async function streamWorld(format) {
  const world = await client.createWorld({ name: "js-" + format });
  await client.spawn(world.id, [
    { kind: "static", shape: { type: "plane", normal: [0, 1, 0], offset: 0 } },
    { shape: { type: "sphere", radius: 0.5 }, position: [0, 2, 0] },
  ]);
  const ticks = [];
  const sub = client.subscribe(world.id, { format, onTick: (t) => ticks.push(t) });
  const hello = await sub.ready;
  assert.equal(hello.world.id, world.id);
  assert.equal(hello.bodies.length, 2);
  const spawned = await client.spawn(world.id, { shape: { type: "box", half_extents: [0.3, 0.3, 0.3] }, position: [2, 1, 0] });
  await until(() => ticks.some((t) => t.spawned.some((b) => b.id === spawned.id)));
  await client.removeBody(world.id, spawned.id);
  await until(() => ticks.some((t) => t.removed.includes(spawned.id)));
  await until(() => ticks.some((t) => t.contacts.some((c) => c.kind === "begin")));
  assert.ok(!sub.mirror.bodies.has(spawned.id));
  // The mirror agrees with the REST view (within quantization for binary).
  await client.updateWorld(world.id, { paused: true });
  await sleep(150);
  const rest = await client.listBodies(world.id);
  const ball = rest.find((b) => b.shape.type === "sphere");
  const mine = sub.mirror.bodies.get(ball.id);
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(mine.position[k] - ball.position[k]) <= 1 / 2048 + 1e-6, `${format} p[${k}]`);
  sub.close();
  await client.deleteWorld(world.id);
  return ticks;
}

test("JSON stream: hello, ticks, spawned, removed, contacts, mirror", { skip }, async () => {
  const ticks = await streamWorld("json");
  assert.ok(ticks.length > 3);
});

test("binary stream decodes to the same messages as JSON", { skip }, async () => {
  const ticks = await streamWorld("binary");
  assert.ok(ticks.length > 3);
  assert.ok(ticks.every((t) => Array.isArray(t.bodies) && Array.isArray(t.contacts)));
});

test("JSON and binary subscribers of one world agree", { skip }, async () => {
  const world = await client.createWorld({ name: "js-both", tick_hz: 60 });
  await client.spawn(world.id, [
    { kind: "static", shape: { type: "plane", normal: [0, 1, 0], offset: 0 } },
    ...Array.from({ length: 5 }, (_, i) => ({ shape: { type: "box", half_extents: [0.4, 0.4, 0.4] }, position: [i * 1.2, 1 + i, 0], angular_velocity: [0, 1, 0] })),
  ]);
  await client.updateWorld(world.id, { paused: true });
  const j = client.subscribe(world.id, { format: "json" });
  const b = client.subscribe(world.id, { format: "binary" });
  await Promise.all([j.ready, b.ready]);
  await client.updateWorld(world.id, { paused: false });
  await sleep(500);
  await client.updateWorld(world.id, { paused: true });
  await sleep(200);
  assert.equal(j.mirror.world.tick, b.mirror.world.tick);
  for (const [id, jb] of j.mirror.bodies) {
    const bb = b.mirror.bodies.get(id);
    assert.ok(bb, `binary knows body ${id}`);
    for (let k = 0; k < 3; k++) assert.ok(Math.abs(jb.position[k] - bb.position[k]) <= 1 / 2048 + 1e-6);
    const dot = jb.rotation.reduce((s, x, k) => s + x * bb.rotation[k], 0);
    assert.ok(Math.abs(dot) > 1 - 1e-6, `rotation of ${id}`);
  }
  assert.ok(b.bytesReceived < j.bytesReceived, "binary is smaller");
  j.close();
  b.close();
  await client.deleteWorld(world.id);
});

test("stream commands get acks and errors", { skip }, async () => {
  const world = await client.createWorld({ name: "js-cmd" });
  const [ball] = await client.spawn(world.id, [{ shape: { type: "sphere", radius: 0.5 }, position: [0, 5, 0] }]);
  const sub = client.subscribe(world.id, { format: "binary" });
  await sub.ready;
  const ack = await sub.send({ type: "impulse", id: ball.id, impulse: [0, 10, 0] });
  assert.equal(ack.type, "ack");
  await assert.rejects(sub.send({ type: "remove", id: 999999 }), (e) => e instanceof ArbiterError);
  sub.close();
  await client.deleteWorld(world.id);
});
