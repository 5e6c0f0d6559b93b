// One protocol, three readers: decode proto/fixtures/stream.json (recorded by
// tests/protocol_fixture.rs) and compare with what the Rust decoder produced.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { BinaryDecoder, WorldMirror } from "../index.js";

const fixture = JSON.parse(readFileSync(new URL("../../../proto/fixtures/stream.json", import.meta.url), "utf8"));
const unhex = (s) => Uint8Array.from(s.match(/../g) || [], (h) => parseInt(h, 16));

/** Deep equality where an expected number printed from an f32 matches its f32 value. */
function same(actual, expected, path = "$", loose = false) {
  if (typeof expected === "number") {
    assert.equal(typeof actual, "number", path);
    const ok = actual === expected || actual === Math.fround(expected) ||
      (loose && Math.fround(actual) === Math.fround(expected));
    if (!ok) assert.fail(`${path}: ${actual} != ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), path);
    assert.equal(actual.length, expected.length, `${path} length`);
    expected.forEach((e, i) => same(actual[i], e, `${path}[${i}]`, loose));
  } else if (expected && typeof expected === "object") {
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${path} keys`);
    for (const k of Object.keys(expected)) same(actual[k], expected[k], `${path}.${k}`, loose);
  } else {
    assert.equal(actual, expected, path);
  }
}

test("binary frames decode exactly as the Rust decoder decoded them", () => {
  const d = new BinaryDecoder();
  fixture.frames.forEach((f, i) => same(d.decode(unhex(f.binary)), f.decoded, `frame ${i}`));
  const states = Object.fromEntries(d.states().map((s) => [String(s.id), s]));
  same(states, fixture.final_binary_states, "final");
});

test("JSON frames, applied to a mirror, end in the world's exact state", () => {
  const m = new WorldMirror();
  for (const f of fixture.frames) m.apply(JSON.parse(f.json));
  const states = Object.fromEntries([...m.bodies.values()].map((b) =>
    [String(b.id), { id: b.id, p: b.position, q: b.rotation, v: b.linear_velocity, w: b.angular_velocity }]));
  // Parsed from JSON text (f32 printed shortest): compare as f32.
  same(states, fixture.final_json_states, "final", true);
  const cables = Object.fromEntries([...m.cables.values()].map((c) => [String(c.id), c.points]));
  same(cables, fixture.final_json_cables, "final cables", true);
});

test("binary frames, applied to a mirror, end in the stream's cables", () => {
  const m = new WorldMirror();
  const d = new BinaryDecoder();
  for (const f of fixture.frames) m.apply(d.decode(unhex(f.binary)));
  const cables = Object.fromEntries([...m.cables.values()].map((c) => [String(c.id), c.points]));
  same(cables, fixture.final_binary_cables, "final binary cables");
});

test("binary and JSON mirrors agree within quantization", () => {
  const jm = new WorldMirror(), bm = new WorldMirror();
  const d = new BinaryDecoder();
  for (const f of fixture.frames) {
    jm.apply(JSON.parse(f.json));
    bm.apply(d.decode(unhex(f.binary)));
  }
  assert.deepEqual([...jm.bodies.keys()].sort(), [...bm.bodies.keys()].sort());
  for (const [id, j] of jm.bodies) {
    const b = bm.bodies.get(id);
    for (let k = 0; k < 3; k++) assert.ok(Math.abs(j.position[k] - b.position[k]) <= 1 / 2048 + 1e-6);
  }
  assert.deepEqual([...jm.cables.keys()].sort(), [...bm.cables.keys()].sort());
  for (const [id, j] of jm.cables) {
    const b = bm.cables.get(id);
    assert.equal(b.points.length, j.points.length);
    j.points.forEach((p, i) => {
      for (let k = 0; k < 3; k++) assert.ok(Math.abs(p[k] - b.points[i][k]) <= 1 / 2048 + 1e-6, `cable ${id}`);
    });
  }
});

test("the mirror keeps cables a tick leaves out and drops removed ones", () => {
  const m = new WorldMirror();
  const world = { id: "w", name: "w", tick: 0, time: 0 };
  m.apply({ type: "hello", world, bodies: [], cables: [{ id: 2, points: [[0, 1, 0], [1, 1, 0]] }] });
  assert.deepEqual([...m.cables.keys()], [2]);
  const tick = { type: "tick", tick: 1, time: 0.1, bodies: [], contacts: [], spawned: [], removed: [] };
  // A tick listing another cable: the first (asleep, say) is kept as it was.
  m.apply({ ...tick, cables: [{ id: 3, points: [[0, 2, 0], [1, 2, 0]] }] });
  assert.deepEqual([...m.cables.keys()].sort(), [2, 3]);
  assert.deepEqual(m.cables.get(2).points[0], [0, 1, 0]);
  // A tick without cables changes none; one listing a cable replaces it.
  m.apply(tick);
  m.apply({ ...tick, cables: [{ id: 2, points: [[0, 0.5, 0], [1, 0.5, 0]] }] });
  assert.deepEqual(m.cables.get(2).points[0], [0, 0.5, 0]);
  assert.deepEqual(m.cables.get(3).points[0], [0, 2, 0]);
  // A removed id takes the cable away.
  m.apply({ ...tick, removed: [3] });
  assert.deepEqual([...m.cables.keys()], [2]);
  // A hello starts over from the cables it carries (a binary hello: none).
  m.apply({ type: "hello", world, bodies: [] });
  assert.equal(m.cables.size, 0);
});
