// A small hand-written WebGL 1 renderer for the viewer: 4×4 matrix math,
// triangle meshes for every Arbiter shape, lit solid drawing, lines and points.

// ---------------------------------------------------------------- math
// Matrices are column-major Float32Array(16), as WebGL expects.

export function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  const m = new Float32Array(16);
  m[0] = f / aspect; m[5] = f; m[10] = (far + near) * nf; m[11] = -1; m[14] = 2 * far * near * nf;
  return m;
}

export const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
export const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
export const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; };

export function lookAt(eye, target, up) {
  const z = norm(sub(eye, target)), x = norm(cross(up, z)), y = cross(z, x);
  return new Float32Array([x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
    -dot(x, eye), -dot(y, eye), -dot(z, eye), 1]);
}

export function multiply(a, b) {
  const o = new Float32Array(16);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
    let s = 0;
    for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
    o[c * 4 + r] = s;
  }
  return o;
}

/** Model matrix from position p and unit quaternion q = [x, y, z, w]. */
export function fromPose(p, q, out = new Float32Array(16)) {
  const [x, y, z, w] = q;
  out[0] = 1 - 2 * (y * y + z * z); out[1] = 2 * (x * y + z * w); out[2] = 2 * (x * z - y * w); out[3] = 0;
  out[4] = 2 * (x * y - z * w); out[5] = 1 - 2 * (x * x + z * z); out[6] = 2 * (y * z + x * w); out[7] = 0;
  out[8] = 2 * (x * z + y * w); out[9] = 2 * (y * z - x * w); out[10] = 1 - 2 * (x * x + y * y); out[11] = 0;
  out[12] = p[0]; out[13] = p[1]; out[14] = p[2]; out[15] = 1;
  return out;
}

/** Applies a 4×4 matrix to a point; returns [x, y, z, w]. */
export function transform(m, p) {
  return [0, 1, 2, 3].map((r) => m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r]);
}

/** Inverse of a general 4×4 matrix (cofactors). */
export function invert(m) {
  const inv = new Float32Array(16);
  const a = m;
  inv[0] = a[5] * a[10] * a[15] - a[5] * a[11] * a[14] - a[9] * a[6] * a[15] + a[9] * a[7] * a[14] + a[13] * a[6] * a[11] - a[13] * a[7] * a[10];
  inv[4] = -a[4] * a[10] * a[15] + a[4] * a[11] * a[14] + a[8] * a[6] * a[15] - a[8] * a[7] * a[14] - a[12] * a[6] * a[11] + a[12] * a[7] * a[10];
  inv[8] = a[4] * a[9] * a[15] - a[4] * a[11] * a[13] - a[8] * a[5] * a[15] + a[8] * a[7] * a[13] + a[12] * a[5] * a[11] - a[12] * a[7] * a[9];
  inv[12] = -a[4] * a[9] * a[14] + a[4] * a[10] * a[13] + a[8] * a[5] * a[14] - a[8] * a[6] * a[13] - a[12] * a[5] * a[10] + a[12] * a[6] * a[9];
  inv[1] = -a[1] * a[10] * a[15] + a[1] * a[11] * a[14] + a[9] * a[2] * a[15] - a[9] * a[3] * a[14] - a[13] * a[2] * a[11] + a[13] * a[3] * a[10];
  inv[5] = a[0] * a[10] * a[15] - a[0] * a[11] * a[14] - a[8] * a[2] * a[15] + a[8] * a[3] * a[14] + a[12] * a[2] * a[11] - a[12] * a[3] * a[10];
  inv[9] = -a[0] * a[9] * a[15] + a[0] * a[11] * a[13] + a[8] * a[1] * a[15] - a[8] * a[3] * a[13] - a[12] * a[1] * a[11] + a[12] * a[3] * a[9];
  inv[13] = a[0] * a[9] * a[14] - a[0] * a[10] * a[13] - a[8] * a[1] * a[14] + a[8] * a[2] * a[13] + a[12] * a[1] * a[10] - a[12] * a[2] * a[9];
  inv[2] = a[1] * a[6] * a[15] - a[1] * a[7] * a[14] - a[5] * a[2] * a[15] + a[5] * a[3] * a[14] + a[13] * a[2] * a[7] - a[13] * a[3] * a[6];
  inv[6] = -a[0] * a[6] * a[15] + a[0] * a[7] * a[14] + a[4] * a[2] * a[15] - a[4] * a[3] * a[14] - a[12] * a[2] * a[7] + a[12] * a[3] * a[6];
  inv[10] = a[0] * a[5] * a[15] - a[0] * a[7] * a[13] - a[4] * a[1] * a[15] + a[4] * a[3] * a[13] + a[12] * a[1] * a[7] - a[12] * a[3] * a[5];
  inv[14] = -a[0] * a[5] * a[14] + a[0] * a[6] * a[13] + a[4] * a[1] * a[14] - a[4] * a[2] * a[13] - a[12] * a[1] * a[6] + a[12] * a[2] * a[5];
  inv[3] = -a[1] * a[6] * a[11] + a[1] * a[7] * a[10] + a[5] * a[2] * a[11] - a[5] * a[3] * a[10] - a[9] * a[2] * a[7] + a[9] * a[3] * a[6];
  inv[7] = a[0] * a[6] * a[11] - a[0] * a[7] * a[10] - a[4] * a[2] * a[11] + a[4] * a[3] * a[10] + a[8] * a[2] * a[7] - a[8] * a[3] * a[6];
  inv[11] = -a[0] * a[5] * a[11] + a[0] * a[7] * a[9] + a[4] * a[1] * a[11] - a[4] * a[3] * a[9] - a[8] * a[1] * a[7] + a[8] * a[3] * a[5];
  inv[15] = a[0] * a[5] * a[10] - a[0] * a[6] * a[9] - a[4] * a[1] * a[10] + a[4] * a[2] * a[9] + a[8] * a[1] * a[6] - a[8] * a[2] * a[5];
  const det = a[0] * inv[0] + a[1] * inv[4] + a[2] * inv[8] + a[3] * inv[12];
  for (let i = 0; i < 16; i++) inv[i] /= det || 1;
  return inv;
}

// ---------------------------------------------------------------- meshes
// A mesh is {positions: number[], normals: number[]} of flat triangle lists.

function meshBuilder() {
  const positions = [], normals = [];
  return {
    positions, normals,
    tri(a, b, c, na, nb, nc) {
      if (!na) na = nb = nc = norm(cross(sub(b, a), sub(c, a)));
      positions.push(...a, ...b, ...c);
      normals.push(...na, ...nb, ...nc);
    },
  };
}

/** A surface of revolution around +Y from a profile of [radius, y, nr, ny] points. */
function lathe(profile, segments = 24) {
  const m = meshBuilder();
  for (let i = 0; i < profile.length - 1; i++) {
    const [r0, y0, nr0, ny0] = profile[i], [r1, y1, nr1, ny1] = profile[i + 1];
    for (let s = 0; s < segments; s++) {
      const a0 = (s / segments) * 2 * Math.PI, a1 = ((s + 1) / segments) * 2 * Math.PI;
      const c0 = Math.cos(a0), s0 = Math.sin(a0), c1 = Math.cos(a1), s1 = Math.sin(a1);
      const p00 = [r0 * c0, y0, r0 * s0], p01 = [r0 * c1, y0, r0 * s1];
      const p10 = [r1 * c0, y1, r1 * s0], p11 = [r1 * c1, y1, r1 * s1];
      const n00 = [nr0 * c0, ny0, nr0 * s0], n01 = [nr0 * c1, ny0, nr0 * s1];
      const n10 = [nr1 * c0, ny1, nr1 * s0], n11 = [nr1 * c1, ny1, nr1 * s1];
      if (r0 > 0) m.tri(p00, p10, p01, n00, n10, n01);
      if (r1 > 0) m.tri(p01, p10, p11, n01, n10, n11);
    }
  }
  return m;
}

function arc(radius, yc, from, to, steps) {
  const out = [];
  for (let i = 0; i <= steps; i++) {
    const t = from + (to - from) * (i / steps);
    out.push([radius * Math.cos(t), yc + radius * Math.sin(t), Math.cos(t), Math.sin(t)]);
  }
  return out;
}

function boxMesh([x, y, z]) {
  const m = meshBuilder();
  const c = (sx, sy, sz) => [sx * x, sy * y, sz * z];
  const quad = (a, b, cc, d) => { m.tri(a, b, cc); m.tri(a, cc, d); };
  quad(c(1, -1, -1), c(1, 1, -1), c(1, 1, 1), c(1, -1, 1));
  quad(c(-1, -1, 1), c(-1, 1, 1), c(-1, 1, -1), c(-1, -1, -1));
  quad(c(-1, 1, -1), c(-1, 1, 1), c(1, 1, 1), c(1, 1, -1));
  quad(c(-1, -1, 1), c(-1, -1, -1), c(1, -1, -1), c(1, -1, 1));
  quad(c(-1, -1, 1), c(1, -1, 1), c(1, 1, 1), c(-1, 1, 1));
  quad(c(1, -1, -1), c(-1, -1, -1), c(-1, 1, -1), c(1, 1, -1));
  return m;
}

/** Convex hull faces by brute force (fine for the small hulls games use). */
export function hullMesh(points) {
  const m = meshBuilder();
  const P = points.length > 64 ? points.slice(0, 64) : points;
  const n = P.length;
  let scaleLen = 0;
  for (const p of P) scaleLen = Math.max(scaleLen, Math.abs(p[0]), Math.abs(p[1]), Math.abs(p[2]));
  const eps = 1e-6 * (scaleLen || 1);
  const centroid = P.reduce((s, p) => add(s, p), [0, 0, 0]).map((x) => x / (n || 1));
  const seen = new Set();
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) for (let k = j + 1; k < n; k++) {
    let nrm = cross(sub(P[j], P[i]), sub(P[k], P[i]));
    if (Math.hypot(...nrm) < eps) continue;
    nrm = norm(nrm);
    let pos = false, neg = false;
    const coplanar = [];
    for (let l = 0; l < n && !(pos && neg); l++) {
      const d = dot(nrm, sub(P[l], P[i]));
      if (d > eps) pos = true;
      else if (d < -eps) neg = true;
      else coplanar.push(l);
    }
    if (pos && neg) continue;
    if (pos) nrm = scale(nrm, -1);
    const key = nrm.map((x) => x.toFixed(4)).join(",") + ":" + dot(nrm, P[i]).toFixed(4);
    if (seen.has(key)) continue;
    seen.add(key);
    // Fan the face's coplanar points in angular order around their centre.
    const fc = coplanar.reduce((s, l) => add(s, P[l]), [0, 0, 0]).map((x) => x / coplanar.length);
    const u = norm(sub(P[coplanar[0]], fc)), v = cross(nrm, u);
    const ring = coplanar.map((l) => P[l]).sort((a, b) =>
      Math.atan2(dot(sub(a, fc), v), dot(sub(a, fc), u)) - Math.atan2(dot(sub(b, fc), v), dot(sub(b, fc), u)));
    for (let t = 1; t + 1 < ring.length; t++) m.tri(ring[0], ring[t], ring[t + 1], nrm, nrm, nrm);
  }
  if (m.positions.length === 0) return boxMesh([0.05, 0.05, 0.05]);
  void centroid;
  return m;
}

/** Triangle mesh of a shape spec (in body space). Planes are drawn as a large square. */
export function shapeMesh(shape) {
  const margin = 0;
  switch (shape.type) {
    case "sphere": {
      const r = shape.radius + margin;
      return lathe(arc(r, 0, -Math.PI / 2, Math.PI / 2, 12), 24);
    }
    case "box":
      return boxMesh(shape.half_extents);
    case "capsule": {
      const { half_height: h, radius: r } = shape;
      return lathe([...arc(r, -h, -Math.PI / 2, 0, 6), ...arc(r, h, 0, Math.PI / 2, 6)], 24);
    }
    case "cylinder": {
      const { half_height: h, radius: r } = shape;
      return lathe([[0, -h, 0, -1], [r, -h, 0, -1], [r, -h, 1, 0], [r, h, 1, 0], [r, h, 0, 1], [0, h, 0, 1]], 28);
    }
    case "cone": {
      const { half_height: h, radius: r } = shape;
      const s = Math.hypot(r, 2 * h), nr = (2 * h) / s, ny = r / s;
      return lathe([[0, -h, 0, -1], [r, -h, 0, -1], [r, -h, nr, ny], [0, h, nr, ny]], 28);
    }
    case "convex_hull":
      return hullMesh(shape.points);
    case "plane": {
      const n = norm(shape.normal), o = shape.offset || 0, size = 200;
      const t = Math.abs(n[1]) < 0.9 ? norm(cross(n, [0, 1, 0])) : norm(cross(n, [1, 0, 0]));
      const b = cross(n, t), c = scale(n, o);
      const corner = (a, bb) => add(c, add(scale(t, a * size), scale(b, bb * size)));
      const m = meshBuilder();
      const p0 = corner(-1, -1), p1 = corner(1, -1), p2 = corner(1, 1), p3 = corner(-1, 1);
      m.tri(p0, p2, p1, n, n, n);
      m.tri(p0, p3, p2, n, n, n);
      // Both windings so the plane is visible from either side of its normal.
      m.tri(p0, p1, p2, n, n, n);
      m.tri(p0, p2, p3, n, n, n);
      return m;
    }
    default:
      return boxMesh([0.1, 0.1, 0.1]);
  }
}

/** Bounding radius of a shape around its centre (for picking fallbacks and framing). */
export function shapeRadius(shape) {
  switch (shape.type) {
    case "sphere": return shape.radius;
    case "box": return Math.hypot(...shape.half_extents);
    case "capsule": return shape.half_height + shape.radius;
    case "cylinder": case "cone": return Math.hypot(shape.half_height, shape.radius);
    case "convex_hull": return Math.max(0, ...shape.points.map((p) => Math.hypot(...p)));
    default: return 0;
  }
}

/** Volume (m³) of a shape, for an impulse that gives a set speed change. */
export function shapeVolume(shape) {
  switch (shape.type) {
    case "sphere": return (4 / 3) * Math.PI * shape.radius ** 3;
    case "box": return 8 * shape.half_extents[0] * shape.half_extents[1] * shape.half_extents[2];
    case "capsule": return Math.PI * shape.radius ** 2 * (2 * shape.half_height + (4 / 3) * shape.radius);
    case "cylinder": return Math.PI * shape.radius ** 2 * 2 * shape.half_height;
    case "cone": return (Math.PI * shape.radius ** 2 * 2 * shape.half_height) / 3;
    case "convex_hull": { const r = shapeRadius(shape); return r ** 3; }
    default: return 0;
  }
}

// ---------------------------------------------------------------- renderer

const VS = `
attribute vec3 aPos; attribute vec3 aNormal;
uniform mat4 uViewProj; uniform mat4 uModel; uniform float uPointSize;
varying vec3 vNormal; varying vec3 vWorld;
void main() {
  vec4 w = uModel * vec4(aPos, 1.0);
  vWorld = w.xyz;
  vNormal = mat3(uModel) * aNormal;
  gl_Position = uViewProj * w;
  gl_PointSize = uPointSize;
}`;
const FS = `
precision mediump float;
uniform vec4 uColor; uniform float uLit; uniform float uChecker;
varying vec3 vNormal; varying vec3 vWorld;
void main() {
  vec3 c = uColor.rgb;
  if (uChecker > 0.5) {
    float k = mod(floor(vWorld.x) + floor(vWorld.z), 2.0);
    c *= 0.85 + 0.15 * k;
  }
  if (uLit > 0.5) {
    vec3 n = normalize(vNormal);
    vec3 l = normalize(vec3(0.4, 1.0, 0.3));
    float d = max(dot(n, l), 0.0);
    float back = max(dot(n, -l), 0.0) * 0.15;
    c = c * (0.35 + 0.65 * d + back);
  }
  gl_FragColor = vec4(c, uColor.a);
}`;

export class Renderer {
  constructor(canvas) {
    const opts = { antialias: true, preserveDrawingBuffer: true };
    const gl = canvas.getContext("webgl", opts) || canvas.getContext("experimental-webgl", opts);
    if (!gl) throw new Error("WebGL is not available");
    this.gl = gl;
    this.canvas = canvas;
    const sh = (type, src) => {
      const s = gl.createShader(type);
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    };
    const prog = gl.createProgram();
    gl.attachShader(prog, sh(gl.VERTEX_SHADER, VS));
    gl.attachShader(prog, sh(gl.FRAGMENT_SHADER, FS));
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(prog));
    this.prog = prog;
    this.loc = {
      aPos: gl.getAttribLocation(prog, "aPos"),
      aNormal: gl.getAttribLocation(prog, "aNormal"),
      uViewProj: gl.getUniformLocation(prog, "uViewProj"),
      uModel: gl.getUniformLocation(prog, "uModel"),
      uColor: gl.getUniformLocation(prog, "uColor"),
      uLit: gl.getUniformLocation(prog, "uLit"),
      uChecker: gl.getUniformLocation(prog, "uChecker"),
      uPointSize: gl.getUniformLocation(prog, "uPointSize"),
    };
    this.meshes = new Map();
    this.dyn = { pos: gl.createBuffer(), nrm: gl.createBuffer() };
    this.identity = fromPose([0, 0, 0], [0, 0, 0, 1]);
  }

  /** GPU buffers of a shape's mesh, cached by the shape's JSON. */
  mesh(shape) {
    const key = JSON.stringify(shape);
    let m = this.meshes.get(key);
    if (!m) {
      const gl = this.gl, src = shapeMesh(shape);
      const pos = gl.createBuffer(), nrm = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, pos);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(src.positions), gl.STATIC_DRAW);
      gl.bindBuffer(gl.ARRAY_BUFFER, nrm);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(src.normals), gl.STATIC_DRAW);
      m = { pos, nrm, count: src.positions.length / 3 };
      this.meshes.set(key, m);
    }
    return m;
  }

  begin(viewProj, clear = [0.105, 0.118, 0.141, 1]) {
    const gl = this.gl, c = this.canvas;
    const dpr = globalThis.devicePixelRatio || 1;
    const w = Math.max(1, Math.floor(c.clientWidth * dpr)), h = Math.max(1, Math.floor(c.clientHeight * dpr));
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    gl.viewport(0, 0, w, h);
    gl.clearColor(...clear);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.useProgram(this.prog);
    gl.uniformMatrix4fv(this.loc.uViewProj, false, viewProj);
    gl.uniform1f(this.loc.uPointSize, 1);
  }

  #bind(pos, nrm) {
    const gl = this.gl, L = this.loc;
    gl.bindBuffer(gl.ARRAY_BUFFER, pos);
    gl.enableVertexAttribArray(L.aPos);
    gl.vertexAttribPointer(L.aPos, 3, gl.FLOAT, false, 0, 0);
    if (L.aNormal >= 0) {
      if (nrm) {
        gl.bindBuffer(gl.ARRAY_BUFFER, nrm);
        gl.enableVertexAttribArray(L.aNormal);
        gl.vertexAttribPointer(L.aNormal, 3, gl.FLOAT, false, 0, 0);
      } else {
        gl.disableVertexAttribArray(L.aNormal);
        gl.vertexAttrib3f(L.aNormal, 0, 1, 0);
      }
    }
  }

  drawShape(shape, model, color, checker = false) {
    const gl = this.gl, L = this.loc, m = this.mesh(shape);
    this.#bind(m.pos, m.nrm);
    gl.uniformMatrix4fv(L.uModel, false, model);
    gl.uniform4fv(L.uColor, color);
    gl.uniform1f(L.uLit, 1);
    gl.uniform1f(L.uChecker, checker ? 1 : 0);
    gl.drawArrays(gl.TRIANGLES, 0, m.count);
  }

  /** Unlit lines (mode LINE_STRIP or LINES) or points through world-space vertices. */
  drawPrimitive(mode, points, color, pointSize = 1, depth = true) {
    if (points.length === 0) return;
    const gl = this.gl, L = this.loc;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.dyn.pos);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(points.flat()), gl.DYNAMIC_DRAW);
    this.#bind(this.dyn.pos, null);
    gl.uniformMatrix4fv(L.uModel, false, this.identity);
    gl.uniform4fv(L.uColor, color);
    gl.uniform1f(L.uLit, 0);
    gl.uniform1f(L.uChecker, 0);
    gl.uniform1f(L.uPointSize, pointSize);
    if (!depth) gl.disable(gl.DEPTH_TEST);
    gl.drawArrays(mode, 0, points.length);
    if (!depth) gl.enable(gl.DEPTH_TEST);
    gl.uniform1f(L.uPointSize, 1);
  }
}
