// The viewer in headless Chromium against a real `arbiter serve`: bodies are
// drawn (the canvas is not blank and changes over time) and a click pushes a
// body. Needs /usr/bin/chromium (or $CHROMIUM) and the arbiter binary.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { ArbiterClient } from "../index.js";
import { startServer, arbiterBinary } from "../testing/server.js";

const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch {}
const skip = !arbiterBinary() ? "no arbiter binary built"
  : !existsSync(chromiumPath) ? `no chromium at ${chromiumPath}`
  : !chromium ? "playwright-core not installed" : false;

let server, browser;
before(async () => {
  if (skip) return;
  server = await startServer();
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run",
      "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
  });
});
after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A digest of the canvas pixels: [distinct colours in a sample, checksum]. */
async function canvasDigest(page) {
  return page.evaluate(() => {
    const c = document.getElementById("view");
    const copy = document.createElement("canvas");
    copy.width = 160; copy.height = 120;
    const ctx = copy.getContext("2d");
    ctx.drawImage(c, 0, 0, 160, 120);
    const d = ctx.getImageData(0, 0, 160, 120).data;
    const colours = new Set();
    let sum = 0;
    for (let i = 0; i < d.length; i += 4) {
      colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      sum = (sum * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) >>> 0;
    }
    return [colours.size, sum];
  });
}

test("viewer draws a world, animates it, and a click pushes a body", { skip, timeout: 90000 }, async () => {
  const client = new ArbiterClient(server.url);
  const world = await client.createWorld({ name: "browser-test" });
  const shapes = [
    { type: "sphere", radius: 0.5 },
    { type: "box", half_extents: [0.5, 0.5, 0.5] },
    { type: "capsule", half_height: 0.4, radius: 0.3 },
    { type: "cylinder", half_height: 0.4, radius: 0.4 },
    { type: "cone", half_height: 0.4, radius: 0.4 },
    { type: "convex_hull", points: [[-0.5, 0, -0.5], [0.5, 0, -0.5], [0.5, 0, 0.5], [-0.5, 0, 0.5], [0, 0.8, 0]] },
  ];
  await client.spawn(world.id, [
    { kind: "static", shape: { type: "plane", normal: [0, 1, 0], offset: 0 } },
    ...shapes.map((shape, i) => ({ shape, position: [(i - 2.5) * 1.6, 4 + i * 0.5, 0] })),
  ]);
  // The body to click: a big box resting at the centre of the view.
  const target = await client.spawn(world.id, {
    shape: { type: "box", half_extents: [1, 1, 1] }, position: [0, 1, -4],
  });

  // A cable hanging from a pin above the scene: streamed and drawn.
  const cable = await client.addCable(world.id, { from: [-3, 6, 2], to: [3, 6, 2], segments: 12, pinned: [0] });

  const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${server.url}/?world=${encodeURIComponent(world.id)}&format=binary`);
  await page.waitForFunction(() => window.arbiterViewer?.subscription?.mirror?.world, null, { timeout: 15000 });
  await sleep(500);
  const a = await canvasDigest(page);
  await sleep(700);
  const b = await canvasDigest(page);
  assert.ok(a[0] > 20, `canvas has content (${a[0]} colours)`);
  assert.notEqual(a[1], b[1], "the picture changes while bodies fall");
  const cables = await page.evaluate(() => [...window.arbiterViewer.subscription.mirror.cables.values()]);
  assert.equal(cables.length, 1, "the viewer has the cable");
  assert.equal(cables[0].id, cable.id);
  assert.equal(cables[0].points.length, 13);
  const stats = await page.evaluate(() => ({ ...window.arbiterViewer.stats }));
  assert.ok(stats.tick > 0 && stats.bodies === 8, JSON.stringify(stats));
  // Landing bodies flash their contacts; the stats show step time and bandwidth.
  // One more body is dropped now, while the viewer watches: on a loaded
  // machine the first ones can land before the page has subscribed.
  await client.spawn(world.id, { shape: { type: "sphere", radius: 0.3 }, position: [5, 2, 0] });
  await page.waitForFunction(() => window.arbiterViewer.stats.flashes > 0, null, { timeout: 10000 });
  const later = await page.evaluate(() => ({ ...window.arbiterViewer.stats }));
  assert.ok(later.stepMs > 0 && later.bytesPerSec > 0, JSON.stringify(later));

  // Let the target settle, then click its centre.
  await sleep(1000);
  const before = await client.getBody(world.id, target.id);
  const at = await page.evaluate((id) => window.arbiterViewer.screenOf(id), target.id);
  assert.ok(at && at.x > 0 && at.x < 800 && at.y > 0 && at.y < 600, `box on screen: ${JSON.stringify(at)}`);
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction(() => window.arbiterViewer.lastPush, null, { timeout: 5000 });
  const push = await page.evaluate(() => window.arbiterViewer.lastPush);
  assert.equal(push.pushed, target.id, `clicked the box: ${JSON.stringify(push)}`);
  await sleep(400);
  const after = await client.getBody(world.id, target.id);
  const moved = Math.hypot(...after.position.map((x, k) => x - before.position[k]));
  assert.ok(moved > 0.2, `the box moved ${moved} m`);
  assert.deepEqual(errors, []);
  await page.close();
});
