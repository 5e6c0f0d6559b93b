// The examples of proto/binary.md, decoded by the JavaScript decoder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BinaryDecoder, DecodeError } from "../binary.js";

const hex = (s) => Uint8Array.from(s.trim().split(/\s+/).map((h) => parseInt(h, 16)));
const f32 = (x) => Math.fround(x);

const HELLO = hex(`
02 01 00 00 00 00 00 00 00 00 02 77 31 04 64 65 6d 6f 00 00 00 00 00 00 4e 40
00 00 00 00 c3 f5 1c c1 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 33 82 01 01
06 00 00 00 00 00 00 80 3f 00 00 00 00 00 00 00 00 00 00 00 ff ff fe 7f ff 3f
00 00 00 00 00 00 00 00 00 3f 00 00 00 00 00 00 00 00 cd cc 4c 3d 28 82 02 00
00 00 00 00 3f 00 80 10 00 ff ff fe 7f ff 3f 00 00 00 00 00 00 00 00 00 3f 00
00 00 00 00 00 00 00 cd cc 4c 3d`);
const TICK = hex(`
02 02 01 11 11 11 11 11 11 91 3f 0c 01 08 1e 00 03 80 ea 00 04 00 01 02 01 02
00 f9 0f 00 00 00 ff 7f 00 00 a0 3f`);

test("decodes the hello and tick of proto/binary.md", () => {
  const d = new BinaryDecoder();
  const hello = d.decode(HELLO);
  assert.equal(hello.type, "hello");
  assert.equal(hello.world.id, "w1");
  assert.equal(hello.world.name, "demo");
  assert.deepEqual(hello.world.gravity, [0, f32(-9.81), 0]);
  assert.equal(hello.bodies.length, 2);
  assert.deepEqual(hello.bodies[1].shape, { type: "sphere", radius: 0.5 });
  assert.deepEqual(hello.bodies[1].position, [0, 1, 0]);
  assert.deepEqual(hello.bodies[1].rotation, [0, 0, 0, 1]);
  assert.equal(hello.bodies[0].shape.type, "plane");
  assert.equal(hello.bodies[0].kind, "static");
  assert.equal(hello.bodies[0].sleeping, false);
  const tick = d.decode(TICK);
  assert.deepEqual(tick, {
    type: "tick", tick: 1, time: 1 / 60,
    bodies: [{ id: 2, p: [0.033203125, f32(0.9970703), 0], q: [0, 0, f32(-0.033320297), f32(0.9994447)],
      v: [2, -0.1640625, 0], w: [0, 0, -4] }],
    contacts: [{ kind: "begin", a: 1, b: 2, point: [0.033203125, 0, 0], normal: [0, 1, 0], impulse: 1.25 }],
    spawned: [], removed: [],
  });
  assert.deepEqual(d.quantized(2).p, [34, 1021, 0]);
  assert.deepEqual(d.quantized(2).q, { index: 3, c: [0, 0, -772] });
});

test("decodes ack and error", () => {
  const d = new BinaryDecoder();
  assert.deepEqual(d.decode(hex("02 03 ac 02")), { type: "ack", seq: 300 });
  assert.deepEqual(
    d.decode(hex("02 04 01 05 09 6e 6f 74 5f 66 6f 75 6e 64 09 6e 6f 20 62 6f 64 79 20 39")),
    { type: "error", seq: 5, code: "not_found", message: "no body 9" });
});

test("rejects malformed frames and keeps its state", () => {
  const d = new BinaryDecoder();
  d.decode(HELLO);
  const before = d.states();
  for (let cut = 0; cut < TICK.length; cut++) {
    assert.throws(() => d.decode(TICK.subarray(0, cut)), DecodeError);
  }
  const trailing = new Uint8Array([...TICK, 0]);
  assert.throws(() => d.decode(trailing), DecodeError);
  assert.throws(() => d.decode(hex("02 02")), DecodeError);
  assert.throws(() => d.decode(hex("02 09")), DecodeError);
  assert.throws(() => d.decode(hex("01 03 ac 02")), DecodeError, "version 1 is not read");
  assert.throws(() => d.decode(hex("02 03 ff ff ff ff ff ff ff ff ff 7f")), DecodeError);
  assert.deepEqual(d.states(), before);
  // Random garbage never throws anything but DecodeError.
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  for (let i = 0; i < 2000; i++) {
    const f = Uint8Array.from({ length: 2 + (rnd() % 40) }, rnd);
    f[0] = 1; f[1] = 1 + (rnd() % 4);
    try { d.decode(f); } catch (e) { assert.ok(e instanceof DecodeError, String(e)); }
  }
});
