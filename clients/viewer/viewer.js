// Arbiter's browser viewer: picks a world, subscribes to its stream through
// the JavaScript client, draws it with the hand-written renderer in gl.js,
// orbits a camera, pushes the body under a click through the REST API, and
// shows live stats.

import { ArbiterClient } from "./client/index.js";
import {
  Renderer, perspective, lookAt, multiply, fromPose, invert, transform,
  add, sub, scale, norm, cross, shapeVolume,
} from "./gl.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const client = new ArbiterClient(params.get("server") || location.origin);
const canvas = $("view");
const statusEl = $("status");

let renderer;
try {
  renderer = new Renderer(canvas);
} catch (e) {
  statusEl.textContent = "WebGL unavailable: " + e.message;
  throw e;
}

// ---------------------------------------------------------------- camera

const cam = { target: [0, 1, 0], yaw: 0.6, pitch: 0.45, dist: 14 };
let viewProj = new Float32Array(16), invViewProj = new Float32Array(16), eye = [0, 0, 0];

function updateCamera() {
  const cp = Math.cos(cam.pitch);
  eye = add(cam.target, scale([cp * Math.sin(cam.yaw), Math.sin(cam.pitch), cp * Math.cos(cam.yaw)], cam.dist));
  const aspect = canvas.clientWidth / Math.max(1, canvas.clientHeight);
  viewProj = multiply(perspective(Math.PI / 4, aspect, 0.05, 2000), lookAt(eye, cam.target, [0, 1, 0]));
  invViewProj = invert(viewProj);
}

/** World-space ray through a canvas pixel (CSS px). */
function rayAt(x, y) {
  const nx = (x / canvas.clientWidth) * 2 - 1, ny = 1 - (y / canvas.clientHeight) * 2;
  const a = transform(invViewProj, [nx, ny, -1]), b = transform(invViewProj, [nx, ny, 1]);
  const p0 = [a[0] / a[3], a[1] / a[3], a[2] / a[3]], p1 = [b[0] / b[3], b[1] / b[3], b[2] / b[3]];
  return { origin: p0, direction: norm(sub(p1, p0)) };
}

/** Canvas pixel (CSS px) of a world point, or null behind the camera. */
function project(p) {
  const c = transform(viewProj, p);
  if (c[3] <= 0) return null;
  return { x: ((c[0] / c[3] + 1) / 2) * canvas.clientWidth, y: ((1 - c[1] / c[3]) / 2) * canvas.clientHeight };
}

let drag = null;
canvas.addEventListener("contextmenu", (e) => e.preventDefault());
canvas.addEventListener("pointerdown", (e) => {
  drag = { x: e.clientX, y: e.clientY, x0: e.clientX, y0: e.clientY, pan: e.button === 2 || e.shiftKey, moved: false };
  canvas.setPointerCapture(e.pointerId);
});
canvas.addEventListener("pointermove", (e) => {
  if (!drag) return;
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
  drag.x = e.clientX;
  drag.y = e.clientY;
  if (Math.abs(e.clientX - drag.x0) + Math.abs(e.clientY - drag.y0) > 4) drag.moved = true;
  if (drag.pan) {
    const fwd = norm(sub(cam.target, eye)), right = norm(cross(fwd, [0, 1, 0])), up = cross(right, fwd);
    const k = cam.dist * 0.0015;
    cam.target = add(cam.target, add(scale(right, -dx * k), scale(up, dy * k)));
  } else {
    cam.yaw -= dx * 0.008;
    cam.pitch = Math.max(-1.5, Math.min(1.5, cam.pitch + dy * 0.008));
  }
});
canvas.addEventListener("pointerup", (e) => {
  const d = drag;
  drag = null;
  if (d && !d.moved && e.button === 0) push(e.offsetX, e.offsetY);
});
canvas.addEventListener("wheel", (e) => {
  e.preventDefault();
  cam.dist = Math.max(0.5, Math.min(500, cam.dist * Math.exp(e.deltaY * 0.001)));
}, { passive: false });

// ---------------------------------------------------------------- stream

let sub_ = null;
let worldId = null;
const flashes = []; // {point, born, kind}
let lastPush = null;
const stats = { tick: 0, stepMs: 0, bodies: 0, bytesPerSec: 0, fps: 0, contacts: 0, frames: 0, flashes: 0 };

function connect(id, format) {
  if (sub_) sub_.close();
  worldId = id;
  flashes.length = 0;
  statusEl.textContent = "connecting…";
  sub_ = client.subscribe(id, {
    format,
    onHello: (h) => {
      statusEl.textContent = "";
      $("paused").checked = !!h.world.paused;
      frameScene(h.bodies);
    },
    onTick: (t) => {
      const now = performance.now();
      for (const c of t.contacts) {
        if (c.kind === "begin") {
          flashes.push({ point: c.point, born: now });
          stats.flashes++;
        }
      }
      if (flashes.length > 500) flashes.splice(0, flashes.length - 500);
      stats.contacts += t.contacts.length;
    },
    onError: (e) => { statusEl.textContent = String(e.message || e); },
    onClose: () => { if (sub_ && !sub_.closed) statusEl.textContent = "reconnecting…"; },
  });
  const u = new URL(location.href);
  u.searchParams.set("world", id);
  u.searchParams.set("format", format);
  history.replaceState(null, "", u);
}

function frameScene(bodies) {
  const moving = bodies.filter((b) => b.shape.type !== "plane");
  if (moving.length === 0) return;
  let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const b of moving) for (let k = 0; k < 3; k++) {
    lo[k] = Math.min(lo[k], b.position[k]);
    hi[k] = Math.max(hi[k], b.position[k]);
  }
  cam.target = scale(add(lo, hi), 0.5);
  cam.dist = Math.max(6, Math.min(300, Math.hypot(...sub(hi, lo)) * 1.4 + 4));
}

async function refreshWorlds() {
  let worlds;
  try {
    worlds = await client.listWorlds();
  } catch (e) {
    statusEl.textContent = "server unreachable: " + e.message;
    return;
  }
  const sel = $("world");
  const cur = worldId ?? params.get("world");
  const ids = worlds.map((w) => w.id).join("\n");
  if (sel.dataset.ids !== ids) {
    sel.dataset.ids = ids;
    sel.replaceChildren(...worlds.map((w) => new Option(`${w.name} (${w.id}) · ${w.body_count} bodies`, w.id)));
  }
  if (cur && worlds.some((w) => w.id === cur)) sel.value = cur;
  const w = worlds.find((x) => x.id === (worldId ?? cur)) ?? worlds[0];
  if (w) {
    stats.stepMs = w.step_ms ? w.step_ms.mean : 0;
    stats.stepMax = w.step_ms ? w.step_ms.max : 0;
    if (!worldId) {
      sel.value = w.id;
      connect(w.id, $("format").value);
    }
  } else if (!worldId) {
    statusEl.textContent = "no worlds on this server";
  }
}

$("format").value = params.get("format") === "json" ? "json" : "binary";
$("world").addEventListener("change", (e) => connect(e.target.value, $("format").value));
$("format").addEventListener("change", (e) => worldId && connect(worldId, e.target.value));
$("paused").addEventListener("change", (e) => worldId && client.updateWorld(worldId, { paused: e.target.checked }));
refreshWorlds();
setInterval(refreshWorlds, 1000);

// ---------------------------------------------------------------- push

/** Pushes the body under the pixel: server raycast, then an impulse giving it ~4 m/s along the ray. */
async function push(x, y) {
  if (!worldId) return;
  updateCamera();
  const ray = rayAt(x, y);
  let hit;
  try {
    hit = await client.raycast(worldId, ray.origin, ray.direction, 1000);
  } catch (e) {
    statusEl.textContent = "raycast: " + e.message;
    return;
  }
  const body = hit && sub_?.mirror.bodies.get(hit.body);
  if (!body || body.kind === "static" || body.kind === "kinematic") {
    lastPush = { x, y, hit: hit ?? null, pushed: null };
    return;
  }
  const mass = body.mass ?? (body.density ?? 1000) * shapeVolume(body.shape);
  const impulse = scale(norm(add(ray.direction, [0, 0.35, 0])), 4 * Math.max(mass, 0.01));
  try {
    await client.applyImpulse(worldId, hit.body, impulse, hit.point);
    lastPush = { x, y, hit, pushed: hit.body, impulse };
    flashes.push({ point: hit.point, born: performance.now(), push: true });
  } catch (e) {
    statusEl.textContent = "impulse: " + e.message;
  }
}

// ---------------------------------------------------------------- drawing

function colorOf(b) {
  if (b.kind === "static") return [0.42, 0.45, 0.5, 1];
  if (b.kind === "kinematic") return [0.85, 0.6, 0.25, 1];
  const h = ((b.id * 2654435761) >>> 0) / 2 ** 32;
  const c = [0, 1, 2].map((k) => 0.45 + 0.4 * Math.cos(2 * Math.PI * (h + k / 3)));
  const f = b.sleeping ? 0.6 : 1;
  return [c[0] * f, c[1] * f, c[2] * f, 1];
}

let fpsFrames = 0, fpsT0 = performance.now(), bytes0 = 0;
const model = new Float32Array(16);

function frame(now) {
  requestAnimationFrame(frame);
  updateCamera();
  renderer.begin(viewProj);
  const gl = renderer.gl;
  if (sub_ && sub_.mirror.world) {
    const poses = sub_.interpolation.sampleNow(1.5 / (sub_.mirror.world.tick_hz || 60));
    for (const b of sub_.mirror.bodies.values()) {
      if (!b.shape) continue;
      const pose = poses.get(b.id) ?? { p: b.position, q: b.rotation };
      if (b.shape.type === "plane") fromPose([0, 0, 0], [0, 0, 0, 1], model);
      else fromPose(pose.p, pose.q, model);
      renderer.drawShape(b.shape, model, colorOf(b), b.shape.type === "plane");
    }
    for (const c of sub_.mirror.cables.values()) {
      renderer.drawPrimitive(gl.LINE_STRIP, c.points, [0.95, 0.85, 0.3, 1]);
      renderer.drawPrimitive(gl.POINTS, c.points, [0.95, 0.85, 0.3, 1], 4);
    }
    // Contact flashes fade out over 0.6 s.
    const live = flashes.filter((f) => now - f.born < 600);
    flashes.length = 0;
    flashes.push(...live);
    for (const f of live) {
      const a = 1 - (now - f.born) / 600;
      renderer.drawPrimitive(gl.POINTS, [f.point], f.push ? [0.3, 0.9, 1, 1] : [1, 0.35 + 0.5 * a, 0.2, 1], 3 + 9 * a, false);
    }
    stats.tick = sub_.mirror.world.tick;
    stats.bodies = sub_.mirror.bodies.size;
  }
  fpsFrames++;
  stats.frames++;
  if (now - fpsT0 >= 1000) {
    const bytes = sub_ ? sub_.bytesReceived : 0;
    stats.bytesPerSec = Math.max(0, (bytes - bytes0) * 1000 / (now - fpsT0));
    stats.fps = (fpsFrames * 1000) / (now - fpsT0);
    bytes0 = bytes;
    fpsFrames = 0;
    fpsT0 = now;
  }
  $("stats").textContent =
    `tick      ${stats.tick}\n` +
    `step ms   ${stats.stepMs.toFixed(3)} mean, ${(stats.stepMax ?? 0).toFixed(2)} max\n` +
    `bodies    ${stats.bodies}\n` +
    `stream    ${(stats.bytesPerSec / 1024).toFixed(1)} KiB/s (${sub_ ? sub_.format : "-"})\n` +
    `fps       ${stats.fps.toFixed(0)}`;
}
requestAnimationFrame(frame);

// Hooks for tests and for the console.
window.arbiterViewer = {
  client, stats, cam,
  get worldId() { return worldId; },
  get subscription() { return sub_; },
  get lastPush() { return lastPush; },
  connect,
  project,
  /** Screen position (CSS px) of a body's centre as drawn now. */
  screenOf(id) {
    const b = sub_?.mirror.bodies.get(id);
    return b ? project(b.position) : null;
  },
};
