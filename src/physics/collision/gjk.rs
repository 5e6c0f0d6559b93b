//! GJK (Gilbert–Johnson–Keerthi): distance, closest points and overlap of two
//! convex sets given only by their support mappings.
//!
//! The sets are usually shape *cores* (see [`crate::physics::shape`]): the
//! radius of spheres, capsules and rounded shapes is subtracted by the caller.
//! GJK walks a simplex (1–4 points) of the Minkowski difference A − B towards
//! the origin. The closest point of a simplex to the origin is found by testing
//! its Voronoi regions (vertex, edge, face), which also tells which vertices
//! the next simplex keeps.
//!
//! Termination follows van den Bergen: stop when the support point `w` in
//! direction −v no longer improves the lower bound, `|v|² − v·w ≤ ε²|v|²`,
//! plus an allowance for f32 rounding (v is only known to about
//! f32::EPSILON × |A − B|, which matters when the distance is small next to
//! the shapes: the normal then tilts by up to ~f32::EPSILON·|A − B|/distance).
//! Every loop is capped and every division guarded, so the answer is finite
//! for any finite input.

use crate::physics::math::{Pose, Vec3};
use crate::physics::shape::Shape;

/// A convex set described by its support mapping.
pub trait SupportMap {
    /// A point of the set furthest along `dir` (`dir` need not be unit).
    fn support(&self, dir: Vec3) -> Vec3;
}

/// The core of a shape (without its radius) placed at a pose; world space.
#[derive(Clone, Copy, Debug)]
pub struct CoreSupport<'a> {
    pub shape: &'a Shape,
    pub pose: &'a Pose,
}

impl SupportMap for CoreSupport<'_> {
    #[inline]
    fn support(&self, dir: Vec3) -> Vec3 {
        self.shape.support_core_world(self.pose, dir)
    }
}

/// The whole rounded shape (core plus radius) placed at a pose; world space.
#[derive(Clone, Copy, Debug)]
pub struct ShapeSupport<'a> {
    pub shape: &'a Shape,
    pub pose: &'a Pose,
}

impl SupportMap for ShapeSupport<'_> {
    #[inline]
    fn support(&self, dir: Vec3) -> Vec3 {
        self.shape.support_world(self.pose, dir)
    }
}

/// A plain point cloud; its support is the furthest point (tests, tools).
impl SupportMap for [Vec3] {
    fn support(&self, dir: Vec3) -> Vec3 {
        let mut best = self.first().copied().unwrap_or(Vec3::ZERO);
        let mut best_d = best.dot(dir);
        for &p in self.iter().skip(1) {
            let d = p.dot(dir);
            if d > best_d {
                best_d = d;
                best = p;
            }
        }
        best
    }
}

impl<T: SupportMap + ?Sized> SupportMap for &T {
    #[inline]
    fn support(&self, dir: Vec3) -> Vec3 {
        (**self).support(dir)
    }
}

/// A vertex of the Minkowski difference, `w = a − b`, with the points of A
/// and B that made it (for witness points).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SimplexVertex {
    pub w: Vec3,
    pub a: Vec3,
    pub b: Vec3,
}

/// Support vertex of A − B in direction `dir`: A's support along `dir`, B's
/// along −`dir`.
#[inline]
pub fn support_vertex<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    dir: Vec3,
) -> SimplexVertex {
    let pa = a.support(dir);
    let pb = b.support(-dir);
    SimplexVertex {
        w: pa - pb,
        a: pa,
        b: pb,
    }
}

/// Up to four vertices of A − B with the barycentric weights of the simplex
/// point closest to the origin.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Simplex {
    pub verts: [SimplexVertex; 4],
    pub lambda: [f32; 4],
    pub count: usize,
}

impl Simplex {
    pub fn vertices(&self) -> &[SimplexVertex] {
        &self.verts[..self.count]
    }

    fn push(&mut self, v: SimplexVertex) {
        if self.count < 4 {
            self.verts[self.count] = v;
            self.lambda[self.count] = 0.0;
            self.count += 1;
        }
    }

    /// Σ λᵢ aᵢ and Σ λᵢ bᵢ: the closest points on A and on B.
    pub fn witness_points(&self) -> (Vec3, Vec3) {
        let mut pa = Vec3::ZERO;
        let mut pb = Vec3::ZERO;
        for i in 0..self.count {
            pa += self.verts[i].a * self.lambda[i];
            pb += self.verts[i].b * self.lambda[i];
        }
        (pa, pb)
    }

    /// Replaces the simplex by its sub-simplex closest to the origin and
    /// returns the closest point, or `None` when the origin lies inside the
    /// (non-degenerate) tetrahedron.
    fn reduce(&mut self) -> Option<Vec3> {
        let mut pts = [Vec3::ZERO; 4];
        for (p, v) in pts.iter_mut().zip(self.vertices()) {
            *p = v.w;
        }
        let c = closest_to_origin(&pts[..self.count]);
        if c.inside {
            return None;
        }
        let mut out = Simplex::default();
        for i in 0..self.count {
            if c.mask & (1 << i) != 0 {
                out.verts[out.count] = self.verts[i];
                out.lambda[out.count] = c.lambda[i];
                out.count += 1;
            }
        }
        *self = out;
        Some(c.v)
    }
}

/// The closest point of a simplex to the origin.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Closest {
    /// The closest point.
    pub v: Vec3,
    /// Barycentric weights of `v` (zero for dropped vertices).
    pub lambda: [f32; 4],
    /// Bit i set when vertex i belongs to the smallest sub-simplex holding `v`.
    pub mask: u8,
    /// The origin is strictly inside a non-degenerate tetrahedron.
    pub inside: bool,
}

/// Closest point to the origin of the simplex spanned by 1–4 points.
pub(crate) fn closest_to_origin(p: &[Vec3]) -> Closest {
    match p.len() {
        0 => Closest::default(),
        1 => vertex(p[0], 0),
        2 => segment(p, 0, 1),
        3 => triangle(p, 0, 1, 2),
        _ => tetrahedron(p),
    }
}

fn vertex(p: Vec3, i: usize) -> Closest {
    let mut c = Closest {
        v: p,
        mask: 1 << i,
        ..Default::default()
    };
    c.lambda[i] = 1.0;
    c
}

fn segment(p: &[Vec3], i: usize, j: usize) -> Closest {
    let (a, b) = (p[i], p[j]);
    let ab = b - a;
    let t_num = -a.dot(ab);
    let len2 = ab.length_squared();
    if t_num <= 0.0 || len2 <= f32::MIN_POSITIVE {
        return vertex(a, i);
    }
    if t_num >= len2 {
        return vertex(b, j);
    }
    let t = t_num / len2;
    // a + t·ab rounds at ε·|a| along the segment too, which dwarfs |v| when
    // the segment passes close to the origin; one more projection makes v
    // perpendicular to the segment again.
    let v = a + ab * t;
    let v = v - ab * (v.dot(ab) / len2);
    let mut c = Closest {
        v,
        mask: (1 << i) | (1 << j),
        ..Default::default()
    };
    c.lambda[i] = 1.0 - t;
    c.lambda[j] = t;
    c
}

/// Closest point of a triangle to the origin.
///
/// The origin is projected onto the triangle's plane along a normal taken
/// from the two shortest edges, and the projection's barycentric weights
/// come from signed areas against that normal; if all are non-negative the
/// projection is the answer, else the best of the three edges is. Unlike
/// the textbook region tests built from products of dot products, this
/// stays accurate for long thin triangles and for distances much smaller
/// than the triangle, which is where GJK spends its last iterations.
fn triangle(p: &[Vec3], i: usize, j: usize, k: usize) -> Closest {
    let (a, b, c) = (p[i], p[j], p[k]);
    let (ab, bc, ca) = (b - a, c - b, a - c);
    let (lab, lbc, lca) = (
        ab.length_squared(),
        bc.length_squared(),
        ca.length_squared(),
    );
    // ab × bc = bc × ca = ca × ab: all are the normal; the one made of the
    // two shorter edges loses the fewest digits.
    let n = if lab >= lbc && lab >= lca {
        bc.cross(ca)
    } else if lbc >= lca {
        ca.cross(ab)
    } else {
        ab.cross(bc)
    };
    let nn = n.length_squared();
    let longest = lab.max(lbc).max(lca);
    // Below a sine of 1e-6 between its edges the triangle is a segment.
    if nn > 1e-12 * longest * longest {
        let q = n * (n.dot(a) / nn);
        let la = n.dot((b - q).cross(c - q));
        let lb = n.dot((c - q).cross(a - q));
        let lc = n.dot((a - q).cross(b - q));
        if la >= 0.0 && lb >= 0.0 && lc >= 0.0 {
            let sum = la + lb + lc;
            let mut out = Closest {
                v: q,
                mask: (1 << i) | (1 << j) | (1 << k),
                ..Default::default()
            };
            out.lambda[i] = la / sum;
            out.lambda[j] = lb / sum;
            out.lambda[k] = lc / sum;
            return out;
        }
    }
    let newest = 1 << (p.len() - 1);
    let mut best = segment(p, i, j);
    for cand in [segment(p, j, k), segment(p, i, k)] {
        if closer(&cand, &best, newest) {
            best = cand;
        }
    }
    best
}

fn tetrahedron(p: &[Vec3]) -> Closest {
    let (a, b, c, d) = (p[0], p[1], p[2], p[3]);
    let vol = (b - a).dot((c - a).cross(d - a));
    let edge = [b - a, c - a, d - a, c - b, d - b, d - c]
        .iter()
        .map(|e| e.length_squared())
        .fold(0.0f32, f32::max)
        .sqrt();
    // Flat (or nearly flat) tetrahedra have unreliable face orientations;
    // then every face is a candidate and the origin is never "inside".
    let degenerate = vol.abs() <= 1e-5 * edge * edge * edge;
    // Each face with the index of the opposite vertex.
    const FACES: [[usize; 4]; 4] = [[0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2], [1, 3, 2, 0]];
    let mut best: Option<Closest> = None;
    for [i, j, k, l] in FACES {
        let n = (p[j] - p[i]).cross(p[k] - p[i]);
        let side_origin = -p[i].dot(n);
        let side_opposite = (p[l] - p[i]).dot(n);
        if degenerate || side_origin * side_opposite <= 0.0 {
            let cand = triangle(p, i, j, k);
            if best.is_none_or(|b| closer(&cand, &b, 0b1000)) {
                best = Some(cand);
            }
        }
    }
    best.unwrap_or(Closest {
        v: Vec3::ZERO,
        lambda: tetra_barycentric(a, b, c, d, vol),
        mask: 0b1111,
        inside: true,
    })
}

/// Whether `a` is a better closest point than `b`. Within rounding of each
/// other, the one using the vertex in `newest_mask` (GJK's newest point,
/// always the last) wins: dropping the new point over a one-ulp difference
/// would stall GJK while its lower bound still says the new point helps.
fn closer(a: &Closest, b: &Closest, newest_mask: u8) -> bool {
    let (da, db) = (a.v.length_squared(), b.v.length_squared());
    let newest = |c: &Closest| c.mask & newest_mask != 0;
    if newest(a) != newest(b) && (da - db).abs() <= 64.0 * f32::EPSILON * da.max(db) {
        return newest(a);
    }
    da < db
}

/// Barycentric weights of the origin in a tetrahedron of signed volume `vol`.
fn tetra_barycentric(a: Vec3, b: Vec3, c: Vec3, d: Vec3, vol: f32) -> [f32; 4] {
    if vol == 0.0 {
        return [0.25; 4];
    }
    // Volume of the tetrahedron with vertex i replaced by the origin.
    let la = b.dot(c.cross(d)) / vol;
    let lb = -(a.dot(c.cross(d))) / vol;
    let lc = a.dot(b.cross(d)) / vol;
    let ld = 1.0 - la - lb - lc;
    [la, lb, lc, ld]
}

/// The outcome of a GJK query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GjkResult {
    /// The sets are apart. `normal` is unit and points from A to B:
    /// `point_b − point_a = normal · distance`.
    Separated {
        distance: f32,
        point_a: Vec3,
        point_b: Vec3,
        normal: Vec3,
    },
    /// The sets overlap or touch (distance below the touching tolerance).
    /// The simplex (1–4 vertices of A − B) is the start for EPA.
    Intersecting { simplex: Simplex },
    /// The sets are farther apart than the `max_distance` asked for; the
    /// search stopped early. `lower_bound` ≤ true distance.
    Beyond { lower_bound: f32, normal: Vec3 },
}

/// Most GJK iterations; polytopes converge in a handful, curved shapes
/// approach the optimum within this many to the relative tolerance.
pub const GJK_MAX_ITERATIONS: usize = 64;
/// Relative tolerance ε of the termination test |v|² − v·w ≤ ε²|v|².
pub const GJK_RELATIVE_TOLERANCE: f32 = 1e-3;
/// Distances below this fraction of the size of A − B count as touching.
pub const GJK_TOUCH_TOLERANCE: f32 = 1e-5;

/// Distance between two convex sets.
///
/// `warm_dir` is a guess of the direction from A to B (last frame's normal,
/// or the centre difference); any non-zero vector works. Past `max_distance`
/// the search stops with [`GjkResult::Beyond`] (pass `f32::INFINITY` for an
/// exact distance).
pub fn gjk<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    warm_dir: Vec3,
    max_distance: f32,
) -> GjkResult {
    let dir = if warm_dir.is_finite() && warm_dir.length_squared() > 1e-20 {
        warm_dir
    } else {
        Vec3::X
    };
    let mut simplex = Simplex::default();
    let first = support_vertex(a, b, dir);
    simplex.push(first);
    simplex.lambda[0] = 1.0;
    let mut v = first.w;
    let mut scale2 = v.length_squared();
    let touch2 = GJK_TOUCH_TOLERANCE * GJK_TOUCH_TOLERANCE;
    let rel2 = GJK_RELATIVE_TOLERANCE * GJK_RELATIVE_TOLERANCE;

    for _ in 0..GJK_MAX_ITERATIONS {
        let vv = v.length_squared();
        if vv <= touch2 * scale2 || !vv.is_finite() {
            return GjkResult::Intersecting { simplex };
        }
        let sv = support_vertex(a, b, -v);
        let w = sv.w;
        scale2 = scale2.max(w.length_squared());
        let vw = v.dot(w);
        if vw > 0.0 && vw * vw > max_distance * max_distance * vv {
            let len = vv.sqrt();
            return GjkResult::Beyond {
                lower_bound: vw / len,
                normal: -v / len,
            };
        }
        // v carries rounding of about ε·|A − B| (absolute), so |v|² and v·w
        // are uncertain by a few ε·|A − B|·|v|: below that, neither progress
        // nor its absence can be seen. (It matters when the distance is
        // small next to the shapes.)
        let noise = 4.0 * f32::EPSILON * scale2.sqrt() * vv.sqrt();
        // No support point gets meaningfully closer: v is the answer.
        if vv - vw <= rel2 * vv + noise {
            break;
        }
        // A support point already in the simplex: nothing left to gain.
        let dup = simplex
            .vertices()
            .iter()
            .any(|s| (s.w - w).length_squared() <= 16.0 * f32::EPSILON * f32::EPSILON * scale2);
        if dup {
            break;
        }
        let prev = simplex;
        simplex.push(sv);
        match simplex.reduce() {
            None => return GjkResult::Intersecting { simplex },
            Some(_) if !simplex.vertices().iter().any(|x| x.w == w) => {
                // The new point was dropped: the next round would repeat
                // this one exactly.
                simplex = prev;
                break;
            }
            Some(nv) => {
                // |v| can only shrink, but near the optimum by less than
                // f32 resolves while v still turns towards the true
                // direction: accept ties within rounding, stop on a real
                // increase (the iteration cap bounds any cycling).
                let nvv = nv.length_squared();
                if nvv.is_nan() || nvv > vv + noise {
                    // Rounding stalled the descent; keep the better simplex.
                    simplex = prev;
                    break;
                }
                v = nv;
            }
        }
    }

    let distance = v.length();
    if distance <= GJK_TOUCH_TOLERANCE * scale2.sqrt() {
        return GjkResult::Intersecting { simplex };
    }
    let (point_a, point_b) = simplex.witness_points();
    GjkResult::Separated {
        distance,
        point_a,
        point_b,
        normal: -v / distance,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_face_region_projects_onto_plane() {
        let p = [
            Vec3::new(-1.0, -1.0, 2.0),
            Vec3::new(1.0, -1.0, 2.0),
            Vec3::new(0.0, 1.0, 2.0),
        ];
        let c = closest_to_origin(&p);
        assert!((c.v - Vec3::new(0.0, 0.0, 2.0)).length() < 1e-6);
        assert_eq!(c.mask, 0b111);
        let s: f32 = c.lambda.iter().sum();
        assert!((s - 1.0).abs() < 1e-6);
    }

    #[test]
    fn collinear_triangle_is_finite() {
        let p = [
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(3.0, 0.0, 0.0),
        ];
        let c = closest_to_origin(&p);
        assert!(c.v.is_finite());
        assert!((c.v - Vec3::X).length() < 1e-6);
    }

    #[test]
    fn flat_tetrahedron_never_contains_origin_off_its_plane() {
        let p = [
            Vec3::new(-1.0, -1.0, 1.0),
            Vec3::new(1.0, -1.0, 1.0),
            Vec3::new(0.0, 1.0, 1.0),
            Vec3::new(0.0, 0.0, 1.0),
        ];
        let c = closest_to_origin(&p);
        assert!(!c.inside);
        assert!((c.v - Vec3::Z).length() < 1e-6);
    }

    #[test]
    fn tetrahedron_containing_origin() {
        let p = [
            Vec3::new(1.0, 0.0, -1.0),
            Vec3::new(-1.0, 1.0, -1.0),
            Vec3::new(-1.0, -1.0, -1.0),
            Vec3::new(0.0, 0.0, 1.0),
        ];
        let c = closest_to_origin(&p);
        assert!(c.inside);
    }

    #[test]
    fn points_apart_and_coincident() {
        let a = [Vec3::ZERO];
        let b = [Vec3::new(3.0, 4.0, 0.0)];
        match gjk(&a[..], &b[..], Vec3::X, f32::INFINITY) {
            GjkResult::Separated {
                distance, normal, ..
            } => {
                assert!((distance - 5.0).abs() < 1e-6);
                assert!((normal - Vec3::new(0.6, 0.8, 0.0)).length() < 1e-6);
            }
            r => panic!("{r:?}"),
        }
        let r = gjk(&a[..], &a[..], Vec3::ZERO, f32::INFINITY);
        assert!(matches!(r, GjkResult::Intersecting { .. }));
    }
}
