//! EPA (expanding polytope algorithm): penetration depth, normal and witness
//! points of two overlapping convex sets.
//!
//! EPA starts from the simplex GJK ended with, blows it up to a tetrahedron
//! around the origin when it is smaller, then grows a polytope inside A − B:
//! take the face nearest the origin, ask for the support point along its
//! normal, and if that point lies beyond the face, replace every face it sees
//! by a fan to it across the horizon. When the nearest face is (within the
//! tolerance) on the boundary of A − B, its distance is the penetration depth
//! and its normal the direction in which B must move to separate.
//!
//! Storage is fixed-size (no allocation); past the vertex or face budget the
//! best face so far is returned. A flat Minkowski difference (two segments in
//! one plane, say) has no volume to expand into: then the answer is `None`
//! and the caller falls back to another direction.

use super::gjk::{support_vertex, Simplex, SimplexVertex, SupportMap};
use crate::physics::math::{orthonormal_basis, Vec3};

/// The result of EPA: B moved by `normal · depth` just touches A.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Penetration {
    /// Penetration depth (≥ 0 up to rounding when the sets overlap): the
    /// distance of the polytope face EPA stopped at, a lower bound.
    pub depth: f32,
    /// The true depth lies in [depth, depth + depth_error]: the support
    /// point along `normal` is that much farther than the face. At most
    /// `EPA_TOLERANCE` × the size of A − B, unless the vertex budget ran out
    /// first (curved against curved shapes in deep overlap: up to ~1.4e-4
    /// of the size measured) or rounding stopped the expansion.
    pub depth_error: f32,
    /// Unit normal from A to B.
    pub normal: Vec3,
    /// Deepest point of A inside B.
    pub point_a: Vec3,
    /// Deepest point of B inside A; `point_a − point_b = normal · depth`
    /// (up to `depth_error`).
    pub point_b: Vec3,
}

const MAX_VERTS: usize = 64;
/// A closed triangulated polytope with V vertices has 2V − 4 faces.
const MAX_FACES: usize = 2 * MAX_VERTS;
/// Stop when the support point is within this fraction of the size of A − B
/// of the nearest face.
pub const EPA_TOLERANCE: f32 = 1e-5;
const NONE: u8 = u8::MAX;

/// A triangle of the polytope, counter-clockwise seen from outside.
/// `adj[e]` is the face across edge e (from `v[e]` to `v[(e + 1) % 3]`).
#[derive(Clone, Copy, Debug)]
struct Face {
    v: [u8; 3],
    adj: [u8; 3],
    normal: Vec3,
    dist: f32,
    alive: bool,
}

impl Default for Face {
    fn default() -> Self {
        Face {
            v: [0; 3],
            adj: [NONE; 3],
            normal: Vec3::ZERO,
            dist: 0.0,
            alive: false,
        }
    }
}

struct Polytope {
    verts: [SimplexVertex; MAX_VERTS],
    nv: usize,
    faces: [Face; MAX_FACES],
    /// Slots in use so far (dead faces below it are on the free list).
    nf: usize,
    free: [u8; MAX_FACES],
    nfree: usize,
}

impl Polytope {
    /// Adds the face (a, b, c); `None` when it is degenerate or there is no
    /// room.
    fn add_face(&mut self, a: usize, b: usize, c: usize) -> Option<usize> {
        let (pa, pb, pc) = (self.verts[a].w, self.verts[b].w, self.verts[c].w);
        let n = (pb - pa).cross(pc - pa);
        let len = n.length();
        if !(len.is_finite() && len > 0.0) {
            return None;
        }
        let normal = n / len;
        let slot = if self.nfree > 0 {
            self.nfree -= 1;
            self.free[self.nfree] as usize
        } else if self.nf < MAX_FACES {
            self.nf += 1;
            self.nf - 1
        } else {
            return None;
        };
        self.faces[slot] = Face {
            v: [a as u8, b as u8, c as u8],
            adj: [NONE; 3],
            normal,
            dist: normal.dot(pa),
            alive: true,
        };
        Some(slot)
    }

    fn kill(&mut self, f: usize) {
        self.faces[f].alive = false;
        self.free[self.nfree] = f as u8;
        self.nfree += 1;
    }

    /// Sets the adjacency of every face edge by finding its twin.
    fn link_all(&mut self) {
        for f in 0..self.nf {
            for e in 0..3 {
                let (p, q) = (self.faces[f].v[e], self.faces[f].v[(e + 1) % 3]);
                for g in 0..self.nf {
                    let gv = self.faces[g].v;
                    if (0..3).any(|k| gv[k] == q && gv[(k + 1) % 3] == p) {
                        self.faces[f].adj[e] = g as u8;
                    }
                }
            }
        }
    }

    /// The live face nearest to the origin among those at least `min_dist`
    /// away.
    fn nearest_face(&self, min_dist: f32) -> Option<usize> {
        let mut best: Option<usize> = None;
        for i in 0..self.nf {
            let f = &self.faces[i];
            if f.alive && f.dist >= min_dist && best.is_none_or(|b| f.dist < self.faces[b].dist) {
                best = Some(i);
            }
        }
        best
    }

    /// Replaces the faces that vertex `iw` sees, starting from `seed`, by a
    /// fan to `iw`. The visible region is grown across face adjacency, so it
    /// is connected; its border must come out as one closed loop. `false`
    /// when that fails (the polytope is then left broken).
    fn expand(&mut self, seed: usize, iw: usize, eps: f32) -> bool {
        let w = self.verts[iw].w;
        // Horizon edges (p, q) as the removed side saw them, with the kept
        // face and its edge index.
        let mut horizon = [(0u8, 0u8, 0u8, 0u8); MAX_FACES];
        let mut nh = 0;
        let mut stack = [(0u8, 0u8); 3 * MAX_FACES];
        let mut ns = 0;
        let push_neighbours = |faces: &[Face; MAX_FACES],
                               f: usize,
                               skip: Option<usize>,
                               stack: &mut [(u8, u8)],
                               ns: &mut usize| {
            for e in 0..3 {
                if Some(e) == skip {
                    continue;
                }
                let g = faces[f].adj[e];
                if g == NONE || *ns == stack.len() {
                    continue;
                }
                // Which edge of g is the twin of f's edge e.
                let (p, q) = (faces[f].v[e], faces[f].v[(e + 1) % 3]);
                let gf = &faces[g as usize];
                if let Some(k) = (0..3).find(|&k| gf.v[k] == q && gf.v[(k + 1) % 3] == p) {
                    stack[*ns] = (g, k as u8);
                    *ns += 1;
                }
            }
        };
        self.kill(seed);
        push_neighbours(&self.faces, seed, None, &mut stack, &mut ns);
        while ns > 0 {
            ns -= 1;
            let (g, k) = stack[ns];
            let (g, k) = (g as usize, k as usize);
            let face = self.faces[g];
            if !face.alive {
                continue; // an edge between two removed faces
            }
            let sees = face.normal.dot(w - self.verts[face.v[0] as usize].w) > eps;
            if sees {
                self.kill(g);
                push_neighbours(&self.faces, g, Some(k), &mut stack, &mut ns);
            } else {
                if nh == horizon.len() {
                    return false;
                }
                horizon[nh] = (face.v[(k + 1) % 3], face.v[k], g as u8, k as u8);
                nh += 1;
            }
        }
        if nh < 3 {
            return false;
        }
        // One closed loop: each vertex starts exactly one edge, and walking
        // the edges from the first returns to it after visiting them all.
        let mut starts = [NONE; MAX_VERTS];
        for (i, h) in horizon[..nh].iter().enumerate() {
            if starts[h.0 as usize] != NONE {
                return false;
            }
            starts[h.0 as usize] = i as u8;
        }
        let mut at = 0usize;
        let mut steps = 0;
        loop {
            let next = starts[horizon[at].1 as usize];
            if next == NONE {
                return false;
            }
            at = next as usize;
            steps += 1;
            if at == 0 || steps > nh {
                break;
            }
        }
        if at != 0 || steps != nh {
            return false;
        }
        // The fan: new face i over horizon edge i; edge 0 faces the kept
        // face, edge 1 (q → w) the new face starting at q, edge 2 (w → p)
        // the new face ending at p.
        let mut made = [0u8; MAX_FACES];
        for (i, &(p, q, _, _)) in horizon[..nh].iter().enumerate() {
            match self.add_face(p as usize, q as usize, iw) {
                Some(f) => made[i] = f as u8,
                None => return false,
            }
        }
        for (i, &(p, q, g, k)) in horizon[..nh].iter().enumerate() {
            let f = made[i] as usize;
            self.faces[f].adj[0] = g;
            self.faces[g as usize].adj[k as usize] = f as u8;
            self.faces[f].adj[1] = made[starts[q as usize] as usize];
            let ends_at_p = horizon[..nh].iter().position(|h| h.1 == p).unwrap_or(i);
            self.faces[f].adj[2] = made[ends_at_p];
        }
        true
    }
}

/// Penetration of A and B whose Minkowski difference A − B contains the
/// origin, starting from GJK's final simplex. `None` when A − B is flat or
/// the numbers degenerate.
pub fn epa<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    simplex: &Simplex,
) -> Option<Penetration> {
    let mut poly = Polytope {
        verts: [SimplexVertex::default(); MAX_VERTS],
        nv: 0,
        faces: [Face::default(); MAX_FACES],
        nf: 0,
        free: [0; MAX_FACES],
        nfree: 0,
    };
    let mut scale = 0.0f32;
    for v in simplex.vertices() {
        scale = scale.max(v.w.length());
    }
    // Drop duplicates so that the blow-up sees the true dimension.
    for v in simplex.vertices() {
        let fresh = poly.verts[..poly.nv]
            .iter()
            .all(|u| (u.w - v.w).length_squared() > (1e-6 * scale).powi(2));
        if fresh && v.w.is_finite() {
            poly.verts[poly.nv] = *v;
            poly.nv += 1;
        }
    }
    if poly.nv == 0 {
        return None;
    }
    blow_up(a, b, &mut poly, &mut scale)?;

    // Orient the four faces of the tetrahedron outwards.
    let (w0, w1, w2, w3) = (
        poly.verts[0].w,
        poly.verts[1].w,
        poly.verts[2].w,
        poly.verts[3].w,
    );
    if (w1 - w0).dot((w2 - w0).cross(w3 - w0)) > 0.0 {
        poly.verts.swap(1, 2);
    }
    for [i, j, k] in [[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]] {
        poly.add_face(i, j, k)?;
    }
    poly.link_all();

    let tol = EPA_TOLERANCE * scale.max(f32::MIN_POSITIVE);
    let mut best = poly.nearest_face(f32::NEG_INFINITY)?;
    // The nearest face's distance only grows (a lower bound of the depth);
    // the overlap along each face normal tried, `dist + gain`, is an upper
    // bound. When the search stops early, the normal with the lowest upper
    // bound is the best answer known.
    let mut tightest: Option<Penetration> = None;
    loop {
        let f = poly.faces[best];
        let sv = support_vertex(a, b, f.normal);
        let gain = f.normal.dot(sv.w) - f.dist;
        if gain.is_nan() || gain <= tol {
            return Some(penetration(&poly, &f, gain));
        }
        let here = penetration(&poly, &f, gain);
        let upper = |p: &Penetration| p.depth + p.depth_error;
        if tightest.is_none_or(|t| upper(&here) < upper(&t)) {
            tightest = Some(here);
        }
        // The answer when the search cannot go on: the tightest normal,
        // with the depth bracket narrowed by the latest lower bound.
        let fallback = tightest.map(|t| Penetration {
            depth_error: (upper(&t) - f.dist).max(0.0),
            depth: f.dist.max(t.depth),
            ..t
        })?;
        if poly.nv == MAX_VERTS {
            return Some(fallback);
        }
        let iw = poly.nv;
        poly.verts[iw] = sv;
        poly.nv += 1;
        // Faces w sees by less than half the tolerance stay: w then sits a
        // hair outside them, which keeps nearly coplanar faces from folding.
        if !poly.expand(best, iw, 0.5 * tol) {
            return Some(fallback);
        }
        // The polytope only grows, so the distance of its boundary from the
        // origin only grows: a face nearer than the last one expanded is a
        // sliver folded by rounding (w seen by less than `eps` from a kept
        // face), not the boundary. It stays in the mesh but is not a
        // candidate.
        match poly.nearest_face(f.dist - tol) {
            Some(next) => best = next,
            None => return Some(fallback),
        }
    }
}

/// Grows a 1–3 point start into a tetrahedron by support queries in
/// directions that add a dimension.
fn blow_up<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    poly: &mut Polytope,
    scale: &mut f32,
) -> Option<()> {
    // A start simplex with less volume than its vertex count says is cut
    // back to the points that do span something.
    if poly.nv == 4 {
        let w = &poly.verts;
        let e = (w[1].w - w[0].w)
            .length()
            .max((w[2].w - w[0].w).length())
            .max((w[3].w - w[0].w).length());
        let vol = (w[1].w - w[0].w).dot((w[2].w - w[0].w).cross(w[3].w - w[0].w));
        if vol.is_nan() || vol.abs() <= 1e-5 * e * e * e {
            poly.nv = 3;
        }
    }
    if poly.nv == 3 {
        let w = &poly.verts;
        let n = (w[1].w - w[0].w).cross(w[2].w - w[0].w).length();
        let e = (w[1].w - w[0].w)
            .length_squared()
            .max((w[2].w - w[0].w).length_squared());
        if n.is_nan() || n <= 1e-5 * e {
            // Keep the farther of the two from vertex 0.
            if (w[2].w - w[0].w).length_squared() > (w[1].w - w[0].w).length_squared() {
                poly.verts[1] = poly.verts[2];
            }
            poly.nv = 2;
        }
    }
    let add = |poly: &mut Polytope, sv: SimplexVertex, scale: &mut f32| {
        poly.verts[poly.nv] = sv;
        poly.nv += 1;
        *scale = scale.max(sv.w.length());
    };
    if poly.nv == 1 {
        let w0 = poly.verts[0].w;
        let dirs = [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        let mut found = false;
        for d in dirs {
            let sv = support_vertex(a, b, d);
            if (sv.w - w0).length_squared() > (1e-6 * scale.max(sv.w.length())).powi(2) {
                add(poly, sv, scale);
                found = true;
                break;
            }
        }
        if !found {
            return None;
        }
    }
    if poly.nv == 2 {
        let (w0, w1) = (poly.verts[0].w, poly.verts[1].w);
        let e = (w1 - w0).normalize_or_zero();
        if e == Vec3::ZERO {
            return None;
        }
        let (t1, t2) = orthonormal_basis(e);
        let mut found = false;
        for k in 0..6 {
            let ang = k as f32 * std::f32::consts::FRAC_PI_3;
            let d = t1 * ang.cos() + t2 * ang.sin();
            let sv = support_vertex(a, b, d);
            if (sv.w - w0).cross(e).length() > 1e-5 * scale.max(sv.w.length()) {
                add(poly, sv, scale);
                found = true;
                break;
            }
        }
        if !found {
            return None;
        }
    }
    if poly.nv == 3 {
        let (w0, w1, w2) = (poly.verts[0].w, poly.verts[1].w, poly.verts[2].w);
        let n = (w1 - w0).cross(w2 - w0).normalize_or_zero();
        if n == Vec3::ZERO {
            return None;
        }
        // Prefer the side the origin is not on: the tetrahedron then
        // contains it.
        let first = if n.dot(w0) > 0.0 { -n } else { n };
        let mut found = false;
        for d in [first, -first] {
            let sv = support_vertex(a, b, d);
            if (sv.w - w0).dot(n).abs() > 1e-5 * scale.max(sv.w.length()) {
                add(poly, sv, scale);
                found = true;
                break;
            }
        }
        if !found {
            return None;
        }
    }
    Some(())
}

/// Depth, normal and witness points from the face nearest the origin.
fn penetration(poly: &Polytope, f: &Face, gain: f32) -> Penetration {
    let [i, j, k] = f.v.map(|x| poly.verts[x as usize]);
    let p = f.normal * f.dist;
    let l = barycentric(p, i.w, j.w, k.w);
    Penetration {
        depth: f.dist,
        depth_error: gain.max(0.0),
        normal: f.normal,
        point_a: i.a * l[0] + j.a * l[1] + k.a * l[2],
        point_b: i.b * l[0] + j.b * l[1] + k.b * l[2],
    }
}

/// Barycentric coordinates of `p` (in the plane of the triangle), clamped to
/// the triangle so the witness points stay on the shapes.
fn barycentric(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> [f32; 3] {
    let v0 = b - a;
    let v1 = c - a;
    let v2 = p - a;
    let d00 = v0.dot(v0);
    let d01 = v0.dot(v1);
    let d11 = v1.dot(v1);
    let d20 = v2.dot(v0);
    let d21 = v2.dot(v1);
    let den = d00 * d11 - d01 * d01;
    if den.is_nan() || den <= 1e-12 * d00.max(d11).powi(2) {
        return [1.0, 0.0, 0.0];
    }
    let v = (d11 * d20 - d01 * d21) / den;
    let w = (d00 * d21 - d01 * d20) / den;
    let mut l = [1.0 - v - w, v, w].map(|x| x.max(0.0));
    let s = l[0] + l[1] + l[2];
    if s > 0.0 {
        l = l.map(|x| x / s);
    } else {
        l = [1.0, 0.0, 0.0];
    }
    l
}

#[cfg(test)]
mod tests {
    use super::super::gjk::{gjk, GjkResult};
    use super::*;

    fn cube(c: Vec3, h: f32) -> Vec<Vec3> {
        let mut v = Vec::new();
        for i in 0..8 {
            v.push(
                c + Vec3::new(
                    if i & 1 != 0 { h } else { -h },
                    if i & 2 != 0 { h } else { -h },
                    if i & 4 != 0 { h } else { -h },
                ),
            );
        }
        v
    }

    #[test]
    fn overlapping_cubes_depth_and_normal() {
        let a = cube(Vec3::ZERO, 1.0);
        let b = cube(Vec3::new(1.7, 0.2, -0.1), 1.0);
        let GjkResult::Intersecting { simplex } = gjk(&a[..], &b[..], Vec3::X, f32::INFINITY)
        else {
            panic!("should overlap")
        };
        let p = epa(&a[..], &b[..], &simplex).unwrap();
        assert!((p.depth - 0.3).abs() < 1e-5, "{p:?}");
        assert!((p.normal - Vec3::X).length() < 1e-5, "{p:?}");
        assert!(((p.point_a - p.point_b) - p.normal * p.depth).length() < 1e-5);
    }

    #[test]
    fn coincident_cubes_are_finite() {
        let a = cube(Vec3::ZERO, 1.0);
        let GjkResult::Intersecting { simplex } = gjk(&a[..], &a[..], Vec3::X, f32::INFINITY)
        else {
            panic!("should overlap")
        };
        let p = epa(&a[..], &a[..], &simplex).unwrap();
        assert!((p.depth - 2.0).abs() < 1e-5, "{p:?}");
        assert!(p.normal.is_finite() && p.point_a.is_finite());
    }

    #[test]
    fn flat_difference_gives_none() {
        // Two segments on one line: A − B is a segment.
        let a = [Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)];
        let b = [Vec3::new(-0.5, 0.0, 0.0), Vec3::new(0.5, 0.0, 0.0)];
        let GjkResult::Intersecting { simplex } = gjk(&a[..], &b[..], Vec3::X, f32::INFINITY)
        else {
            panic!("should overlap")
        };
        assert!(epa(&a[..], &b[..], &simplex).is_none());
    }
}
