//! Quickhull for [`ConvexHull`](super::ConvexHull): from a point cloud to
//! polygon faces.
//!
//! Robustness comes from two decisions:
//!
//! * **Exact topology.** The points are snapped to an integer grid of 2²⁴
//!   cells along the longest side of their bounding box (a displacement of at
//!   most ~1e-7 of the size, f32's own precision). On that grid the
//!   orientation predicate (is point p above triangle t?) is evaluated exactly
//!   in `i128`, so the triangulated hull stays exactly convex and every
//!   horizon is a simple loop, even for grids, duplicates and exactly
//!   coplanar points.
//! * **A relative tolerance for what matters geometrically.** A point is only
//!   added when it lies more than `tol` (1e-5 of the bounding box diagonal,
//!   plus f32 rounding at the points' magnitude) above the current hull, and
//!   adjacent triangles within `tol` of a seed plane are merged into one convex
//!   polygon face. The same `tol` decides the degenerate cases (coincident,
//!   collinear, coplanar inputs).
//!
//! The result is a closed polygon mesh (V − E + F = 2) whose faces are convex
//! polygons, counter-clockwise seen from outside.

use super::convex_hull::HullError;
use crate::physics::math::Vec3;
use glam::DVec3;

/// Relative tolerance: a fraction of the bounding box diagonal.
const REL_TOL: f64 = 1e-5;
/// The grid has this many cells along the longest side of the bounding box.
const GRID_BITS: i32 = 24;

const NONE: u32 = u32::MAX;

/// The builder's output, in terms of the input points.
pub(crate) struct RawHull {
    /// Face loops (input point indices, CCW seen from outside) and the unit
    /// normal of each face's seed plane.
    pub faces: Vec<(Vec<u32>, DVec3)>,
    /// Bound on how far any input point lies outside a face plane, and any
    /// face vertex inside it, in the input's units.
    pub tolerance: f64,
}

struct Tri {
    v: [u32; 3],
    /// `nb[i]`: the triangle across edge `v[i] → v[(i + 1) % 3]`.
    nb: [u32; 3],
    /// Exact (unnormalized) normal on the grid.
    n: [i64; 3],
    unit: DVec3,
    offset: f64,
    area2: f64,
    alive: bool,
    outside: Vec<u32>,
}

struct Builder {
    q: Vec<[i64; 3]>,
    g: Vec<DVec3>,
    tol: f64,
    tris: Vec<Tri>,
}

impl Builder {
    fn sub(&self, a: u32, b: u32) -> [i64; 3] {
        let (a, b) = (self.q[a as usize], self.q[b as usize]);
        [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
    }

    fn cross(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    fn dot(a: [i64; 3], b: [i64; 3]) -> i128 {
        a[0] as i128 * b[0] as i128 + a[1] as i128 * b[1] as i128 + a[2] as i128 * b[2] as i128
    }

    /// Exact sign of the volume (b−a)×(c−a)·(d−a): positive when d is above
    /// the counter-clockwise triangle abc.
    fn orient(&self, a: u32, b: u32, c: u32, d: u32) -> i128 {
        Self::dot(Self::cross(self.sub(b, a), self.sub(c, a)), self.sub(d, a))
    }

    fn make_tri(&mut self, v: [u32; 3]) -> u32 {
        let n = Self::cross(self.sub(v[1], v[0]), self.sub(v[2], v[0]));
        // Exact in f64: each component is below 2^51.
        let nf = DVec3::new(n[0] as f64, n[1] as f64, n[2] as f64);
        let area2 = nf.length();
        let unit = nf / area2;
        let offset = unit.dot(self.g[v[0] as usize]);
        self.tris.push(Tri {
            v,
            nb: [NONE; 3],
            n,
            unit,
            offset,
            area2,
            alive: true,
            outside: Vec::new(),
        });
        (self.tris.len() - 1) as u32
    }

    /// Exact: is point `p` strictly above triangle `t`?
    fn sees(&self, t: u32, p: u32) -> bool {
        let t = &self.tris[t as usize];
        Self::dot(t.n, self.sub(p, t.v[0])) > 0
    }

    fn dist(&self, t: u32, p: u32) -> f64 {
        let t = &self.tris[t as usize];
        t.unit.dot(self.g[p as usize]) - t.offset
    }

    /// Slot `k` of triangle `t` whose edge runs `a → b`.
    fn slot(&self, t: u32, a: u32, b: u32) -> Option<usize> {
        let v = self.tris[t as usize].v;
        (0..3).find(|&k| v[k] == a && v[(k + 1) % 3] == b)
    }
}

/// Builds the hull of `points` (already checked: 4..=MAX points, finite).
pub(crate) fn build(points: &[Vec3]) -> Result<RawHull, HullError> {
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    let mut max_abs = 0.0f64;
    for p in points {
        let p = p.as_dvec3();
        lo = lo.min(p);
        hi = hi.max(p);
        max_abs = max_abs.max(p.abs().max_element());
    }
    let ext = hi - lo;
    let f32_eps = f32::EPSILON as f64;
    let tol = REL_TOL * ext.length() + 4.0 * f32_eps * max_abs;
    if ext.length() <= tol {
        return Err(HullError::Degenerate("all points coincide"));
    }
    // Power-of-two scale: the longest side spans at most 2^GRID_BITS cells.
    let scale = ((1u64 << GRID_BITS) as f64 / ext.max_element())
        .log2()
        .floor()
        .exp2();
    let q: Vec<[i64; 3]> = points
        .iter()
        .map(|p| {
            let s = (p.as_dvec3() - lo) * scale;
            [s.x.round() as i64, s.y.round() as i64, s.z.round() as i64]
        })
        .collect();
    let g: Vec<DVec3> = q
        .iter()
        .map(|c| DVec3::new(c[0] as f64, c[1] as f64, c[2] as f64))
        .collect();
    let mut b = Builder {
        q,
        g,
        tol: tol * scale,
        tris: Vec::new(),
    };
    // Snapping moves a point by at most half a cell diagonal; the planes are
    // exact on the grid, so a point may end up that much farther from a face
    // in the input's units, on both sides. f32 rounding of the stored
    // normals and offsets, and of a caller's plane test, adds a few ulps of
    // the largest coordinate.
    let tolerance = tol + 2.0 * 3f64.sqrt() / scale + 8.0 * f32_eps * max_abs;

    let simplex = initial_simplex(&b)?;
    let [a, bb, c, d] = simplex;
    for v in [[a, bb, c], [a, d, bb], [bb, d, c], [c, d, a]] {
        b.make_tri(v);
    }
    link(&mut b.tris);
    let n = points.len() as u32;
    let all: Vec<u32> = (0..n).filter(|i| !simplex.contains(i)).collect();
    let first: Vec<u32> = (0..4).collect();
    assign(&mut b, &all, &first);
    let mut stack: Vec<u32> = first;

    // Expand, then check every point against the final triangles (a point
    // discarded early can lie slightly outside a face created later); repeat
    // while any point is still outside. Each round adds at least one vertex.
    let mut state: Vec<(u32, bool)> = Vec::new();
    let mut round = 0u32;
    for _ in 0..=points.len() {
        while let Some(t) = stack.pop() {
            if !b.tris[t as usize].alive || b.tris[t as usize].outside.is_empty() {
                continue;
            }
            round += 1;
            add_farthest(&mut b, t, &mut stack, &mut state, round)?;
        }
        let alive: Vec<u32> = (0..b.tris.len() as u32)
            .filter(|&t| b.tris[t as usize].alive)
            .collect();
        let all: Vec<u32> = (0..n).collect();
        assign(&mut b, &all, &alive);
        stack = alive
            .into_iter()
            .filter(|&t| !b.tris[t as usize].outside.is_empty())
            .collect();
        if stack.is_empty() {
            let faces = merge(&b)?;
            return Ok(RawHull { faces, tolerance });
        }
    }
    Err(HullError::Degenerate(
        "numerical failure while building the hull",
    ))
}

/// Four points spanning a tetrahedron, or the reason there are none.
fn initial_simplex(b: &Builder) -> Result<[u32; 4], HullError> {
    let n = b.q.len() as u32;
    let mut ext = [0u32; 6];
    for axis in 0..3 {
        for i in 0..n {
            let c = b.q[i as usize][axis];
            if c < b.q[ext[2 * axis] as usize][axis] {
                ext[2 * axis] = i;
            }
            if c > b.q[ext[2 * axis + 1] as usize][axis] {
                ext[2 * axis + 1] = i;
            }
        }
    }
    let (mut i0, mut i1, mut best) = (0, 0, -1i128);
    for &i in &ext {
        for &j in &ext {
            let d = b.sub(j, i);
            let l = Builder::dot(d, d);
            if l > best {
                (i0, i1, best) = (i, j, l);
            }
        }
    }
    if best <= 0 {
        return Err(HullError::Degenerate("all points coincide"));
    }
    let dir = b.sub(i1, i0);
    let (mut i2, mut best2) = (0, -1i128);
    for i in 0..n {
        let c = Builder::cross(dir, b.sub(i, i0));
        let l = Builder::dot(c, c);
        if l > best2 {
            (i2, best2) = (i, l);
        }
    }
    // Distance from the line = |cross| / |dir|.
    if (best2 as f64).sqrt() / (best as f64).sqrt() <= b.tol {
        return Err(HullError::Degenerate("points are collinear"));
    }
    let nrm = Builder::cross(dir, b.sub(i2, i0));
    let len = (Builder::dot(nrm, nrm) as f64).sqrt();
    let (mut i3, mut best3) = (0, 0i128);
    for i in 0..n {
        let o = b.orient(i0, i1, i2, i);
        if o.abs() > best3.abs() {
            (i3, best3) = (i, o);
        }
    }
    if (best3.abs() as f64) / len <= b.tol {
        return Err(HullError::Degenerate("points are coplanar (flat hull)"));
    }
    // Orient so that the fourth point is below the first triangle.
    Ok(if best3 > 0 {
        [i0, i2, i1, i3]
    } else {
        [i0, i1, i2, i3]
    })
}

/// Fills the neighbour links of a closed triangle set by matching edges.
fn link(tris: &mut [Tri]) {
    for t in 0..tris.len() {
        for k in 0..3 {
            let (a, b) = (tris[t].v[k], tris[t].v[(k + 1) % 3]);
            for u in 0..tris.len() {
                if (0..3).any(|j| tris[u].v[j] == b && tris[u].v[(j + 1) % 3] == a) {
                    tris[t].nb[k] = u as u32;
                }
            }
        }
    }
}

/// Puts each point of `pts` that lies more than `tol` above one of `faces`
/// into the outside set of the face it is farthest above.
fn assign(b: &mut Builder, pts: &[u32], faces: &[u32]) {
    for &p in pts {
        let mut best = (NONE, b.tol);
        for &t in faces {
            let d = b.dist(t, p);
            if d > best.1 {
                best = (t, d);
            }
        }
        if best.0 != NONE {
            b.tris[best.0 as usize].outside.push(p);
        }
    }
}

/// One quickhull step: adds the farthest outside point of triangle `t`.
fn add_farthest(
    b: &mut Builder,
    t: u32,
    stack: &mut Vec<u32>,
    state: &mut Vec<(u32, bool)>,
    round: u32,
) -> Result<(), HullError> {
    let Some(&eye) = b.tris[t as usize]
        .outside
        .iter()
        .max_by(|&&p, &&q| b.dist(t, p).total_cmp(&b.dist(t, q)).then(q.cmp(&p)))
    else {
        return Ok(());
    };
    if !b.sees(t, eye) {
        // Cannot happen while tol is far above the rounding of `dist`.
        return Err(HullError::Degenerate(
            "numerical failure while building the hull",
        ));
    }
    state.resize(b.tris.len(), (0, false));
    // The faces the eye sees strictly form a disc (exact predicates on an
    // exactly convex mesh); its boundary is the horizon.
    let mut visible = vec![t];
    state[t as usize] = (round, true);
    let mut horizon: Vec<(u32, u32, u32)> = Vec::new();
    let mut i = 0;
    while i < visible.len() {
        let f = visible[i];
        for k in 0..3 {
            let nb = b.tris[f as usize].nb[k];
            if state[nb as usize].0 != round {
                let vis = b.sees(nb, eye);
                state[nb as usize] = (round, vis);
                if vis {
                    visible.push(nb);
                }
            }
            if !state[nb as usize].1 {
                let v = b.tris[f as usize].v;
                horizon.push((v[k], v[(k + 1) % 3], nb));
            }
        }
        i += 1;
    }
    // Chain the horizon edges into one loop.
    let h = horizon.len();
    for k in 0..h.saturating_sub(1) {
        let end = horizon[k].1;
        let next = (k + 1..h).find(|&j| horizon[j].0 == end);
        match next {
            Some(j) => horizon.swap(k + 1, j),
            None => {
                return Err(HullError::Degenerate(
                    "numerical failure while building the hull",
                ))
            }
        }
    }
    if h < 3 || horizon[h - 1].1 != horizon[0].0 {
        return Err(HullError::Degenerate(
            "numerical failure while building the hull",
        ));
    }
    let mut orphans = Vec::new();
    for &f in &visible {
        let tri = &mut b.tris[f as usize];
        tri.alive = false;
        orphans.extend(tri.outside.drain(..).filter(|&p| p != eye));
    }
    let first = b.tris.len() as u32;
    for &(a, c, nb) in &horizon {
        let nt = b.make_tri([a, c, eye]);
        let s = b.slot(nb, c, a).ok_or(HullError::Degenerate(
            "numerical failure while building the hull",
        ))?;
        b.tris[nb as usize].nb[s] = nt;
        b.tris[nt as usize].nb[0] = nb;
    }
    for k in 0..h as u32 {
        let nt = (first + k) as usize;
        b.tris[nt].nb[1] = first + (k + 1) % h as u32;
        b.tris[nt].nb[2] = first + (k + h as u32 - 1) % h as u32;
    }
    let new: Vec<u32> = (first..b.tris.len() as u32).collect();
    assign(b, &orphans, &new);
    stack.extend(
        new.iter()
            .filter(|&&f| !b.tris[f as usize].outside.is_empty()),
    );
    Ok(())
}

/// Merges adjacent triangles lying within `tol` of a seed plane into convex
/// polygons, then drops vertices left on a straight edge between two faces.
fn merge(b: &Builder) -> Result<Vec<(Vec<u32>, DVec3)>, HullError> {
    let mut seeds: Vec<u32> = (0..b.tris.len() as u32)
        .filter(|&t| b.tris[t as usize].alive)
        .collect();
    // Largest triangles first: their planes are the most accurate.
    seeds.sort_by(|&s, &t| {
        b.tris[t as usize]
            .area2
            .total_cmp(&b.tris[s as usize].area2)
            .then(s.cmp(&t))
    });
    let mut group = vec![NONE; b.tris.len()];
    let mut faces: Vec<(Vec<u32>, DVec3)> = Vec::new();
    for &seed in &seeds {
        if group[seed as usize] != NONE {
            continue;
        }
        let gid = faces.len() as u32;
        group[seed as usize] = gid;
        let st = &b.tris[seed as usize];
        let (n, d) = (st.unit, st.offset);
        // Loop entries: (vertex, triangle owning the edge that starts here,
        // slot of that edge in the triangle).
        let mut lp: Vec<(u32, u32, usize)> = (0..3).map(|k| (st.v[k], seed, k)).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for k in 0..lp.len() {
                let (_, owner, slot) = lp[k];
                let nt = b.tris[owner as usize].nb[slot];
                if group[nt as usize] != NONE {
                    continue;
                }
                if let Some(next) = grow(b, &lp, k, nt, n, d) {
                    lp = next;
                    group[nt as usize] = gid;
                    changed = true;
                    break;
                }
            }
        }
        faces.push((lp.iter().map(|e| e.0).collect(), n));
    }
    remove_straight_vertices(b, &mut faces);
    check_topology(&faces)?;
    Ok(faces)
}

/// Tries to add triangle `nt` (across loop edge `k`) to a face loop; returns
/// the new loop when the triangle is within tolerance of the seed plane and
/// the face stays a convex disc.
fn grow(
    b: &Builder,
    lp: &[(u32, u32, usize)],
    k: usize,
    nt: u32,
    n: DVec3,
    d: f64,
) -> Option<Vec<(u32, u32, usize)>> {
    let len = lp.len();
    let u = lp[k].0;
    let w = lp[(k + 1) % len].0;
    let s0 = b.slot(nt, w, u)?;
    let tv = b.tris[nt as usize].v;
    let x = tv[(s0 + 2) % 3];
    let (s_ux, s_xw) = ((s0 + 1) % 3, (s0 + 2) % 3);
    if d - n.dot(b.g[x as usize]) > b.tol {
        return None;
    }
    let prev = lp[(k + len - 1) % len].0;
    let next = lp[(k + 2) % len].0;
    let convex = |a: u32, v: u32, c: u32| {
        let (a, v, c) = (b.g[a as usize], b.g[v as usize], b.g[c as usize]);
        let cross = (v - a).cross(c - v).dot(n);
        cross >= 0.0 || -cross <= b.tol * (c - a).length()
    };
    let mut out: Vec<(u32, u32, usize)> = Vec::with_capacity(len + 1);
    if !lp.iter().any(|e| e.0 == x) {
        if !(convex(prev, u, x) && convex(u, x, w) && convex(x, w, next)) {
            return None;
        }
        for (i, &e) in lp.iter().enumerate() {
            if i == k {
                out.push((u, nt, s_ux));
                out.push((x, nt, s_xw));
            } else {
                out.push(e);
            }
        }
    } else if x == prev && len > 3 {
        // The triangle fills the notch at u: u becomes interior.
        let pprev = lp[(k + len - 2) % len].0;
        if !(convex(pprev, x, w) && convex(x, w, next)) {
            return None;
        }
        let pk = (k + len - 1) % len;
        for (i, &e) in lp.iter().enumerate() {
            if i == k {
                continue;
            }
            out.push(if i == pk { (x, nt, s_xw) } else { e });
        }
    } else if x == next && len > 3 {
        // The triangle fills the notch at w: w becomes interior.
        let nnext = lp[(k + 3) % len].0;
        if !(convex(prev, u, x) && convex(u, x, nnext)) {
            return None;
        }
        let wk = (k + 1) % len;
        for (i, &e) in lp.iter().enumerate() {
            if i == wk {
                continue;
            }
            out.push(if i == k { (u, nt, s_ux) } else { e });
        }
    } else {
        return None;
    }
    Some(out)
}

/// A vertex shared by only two faces and lying (within tolerance) on the
/// straight line through its neighbours is not a corner: remove it from both
/// loops. A face left with fewer than three vertices was a sliver between its
/// neighbours and goes too.
fn remove_straight_vertices(b: &Builder, faces: &mut Vec<(Vec<u32>, DVec3)>) {
    let mut count = vec![0u32; b.q.len()];
    for (lp, _) in faces.iter() {
        for &v in lp {
            count[v as usize] += 1;
        }
    }
    let mut work: Vec<u32> = (0..b.q.len() as u32)
        .rev()
        .filter(|&v| count[v as usize] == 2)
        .collect();
    let mut dead = vec![false; faces.len()];
    while let Some(v) = work.pop() {
        if count[v as usize] != 2 {
            continue;
        }
        let holders: Vec<usize> = (0..faces.len())
            .filter(|&f| !dead[f] && faces[f].0.contains(&v))
            .collect();
        if holders.len() != 2 {
            continue;
        }
        let lp = &faces[holders[0]].0;
        let i = lp.iter().position(|&x| x == v).unwrap_or(0);
        let a = b.g[lp[(i + lp.len() - 1) % lp.len()] as usize];
        let c = b.g[lp[(i + 1) % lp.len()] as usize];
        let p = b.g[v as usize];
        let ac = c - a;
        let off_line = (p - a).cross(ac).length() / ac.length().max(f64::MIN_POSITIVE);
        if off_line > b.tol {
            continue;
        }
        count[v as usize] = 0;
        for &f in &holders {
            faces[f].0.retain(|&x| x != v);
            if faces[f].0.len() < 3 {
                dead[f] = true;
                for &r in &faces[f].0 {
                    count[r as usize] -= 1;
                    if count[r as usize] == 2 {
                        work.push(r);
                    }
                }
            }
        }
    }
    let mut i = 0;
    faces.retain(|_| {
        i += 1;
        !dead[i - 1]
    });
}

/// Every directed edge appears once and its reverse once; V − E + F = 2.
fn check_topology(faces: &[(Vec<u32>, DVec3)]) -> Result<(), HullError> {
    let fail = Err(HullError::Degenerate(
        "numerical failure while building the hull",
    ));
    let mut directed: Vec<(u32, u32)> = Vec::new();
    let mut verts: Vec<u32> = Vec::new();
    for (lp, _) in faces {
        if lp.len() < 3 {
            return fail;
        }
        for i in 0..lp.len() {
            directed.push((lp[i], lp[(i + 1) % lp.len()]));
            verts.push(lp[i]);
        }
    }
    directed.sort_unstable();
    if directed.windows(2).any(|w| w[0] == w[1]) {
        return fail;
    }
    for &(a, c) in &directed {
        if directed.binary_search(&(c, a)).is_err() {
            return fail;
        }
    }
    verts.sort_unstable();
    verts.dedup();
    let (v, e, f) = (verts.len(), directed.len() / 2, faces.len());
    if v + f != e + 2 {
        return fail;
    }
    Ok(())
}
