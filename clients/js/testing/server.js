// Starts a real `arbiter serve` for the tests: the binary from $ARBITER_BIN,
// else $CARGO_TARGET_DIR/release/arbiter, else <repo>/target/release/arbiter.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import path from "node:path";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export function arbiterBinary() {
  const candidates = [
    process.env.ARBITER_BIN,
    process.env.CARGO_TARGET_DIR && path.join(process.env.CARGO_TARGET_DIR, "release/arbiter"),
    path.join(repo, "target/release/arbiter"),
  ].filter(Boolean);
  return candidates.find((p) => existsSync(p));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** Starts the server; resolves to {url, stop()} once /healthz answers. */
export async function startServer(args = []) {
  const bin = arbiterBinary();
  if (!bin) throw new Error("no arbiter binary: build with cargo build --release or set ARBITER_BIN");
  const port = await freePort();
  const child = spawn(bin, ["serve", "--addr", `127.0.0.1:${port}`, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`arbiter exited (${child.exitCode}): ${log}`);
    try {
      const r = await fetch(url + "/healthz");
      if (r.ok) break;
    } catch {}
    if (Date.now() - t0 > 15000) {
      child.kill();
      throw new Error("arbiter did not answer /healthz within 15 s: " + log);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
