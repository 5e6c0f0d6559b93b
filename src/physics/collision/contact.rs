//! The narrow-phase entry point: a contact manifold for any pair of shapes.
//!
//! [`contact_manifold`] dispatches on the shape pair. Planes, spheres,
//! capsules and sphere–box have closed-form fast paths; every other pair goes
//! through GJK on the cores (EPA when the cores overlap), which gives the
//! normal, and then through the support features of both shapes along that
//! normal, clipped against each other into up to four points.
//!
//! Everything is computed in a frame centred on one of the shapes, so that a
//! pair 10 km from the origin loses no more precision than its input poses
//! already carry.

use super::epa::epa;
use super::feature::{box_corner, box_face, support_feature};
use super::gjk::{gjk, CoreSupport, GjkResult, SupportMap};
use super::manifold::{
    clip_features, ContactPoint, FeatureId, FeatureKind, Manifold, SupportFeature,
    MAX_MANIFOLD_POINTS,
};
use super::polytope::{box_box, polytope_contact, SatCache};
use crate::physics::math::{Pose, Vec3};
use crate::physics::shape::{Capsule, Cuboid, Plane, Shape, ShapeKind};

/// What a pair remembers from one frame to the next.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairCache {
    /// Last contact normal from A to B (world space, unit); zero when none.
    /// Warm-starts GJK and breaks ties in degenerate configurations
    /// (coincident centres).
    pub normal: Vec3,
    /// The polytope separating-axis cache (last axis and kept point ids).
    pub sat: SatCache,
}

impl PairCache {
    /// The cache for the pair taken the other way round: its normal
    /// reversed (the separating-axis cache, of the ordered pair, dropped).
    fn flipped(&self) -> PairCache {
        PairCache {
            normal: -self.normal,
            ..PairCache::default()
        }
    }

    fn fallback_normal(&self) -> Vec3 {
        if self.normal.is_finite() && self.normal.length_squared() > 0.5 {
            self.normal.normalize()
        } else {
            Vec3::Y
        }
    }
}

/// The contact manifold of shapes `a` and `b` at their poses, or `None` when
/// their surfaces are farther apart than `speculative`.
///
/// The normal points from A to B. Each point has
/// `separation = (point_b − point_a)·normal`: negative for overlap, positive
/// (up to `speculative`) for speculative points.
pub fn contact_manifold(
    a: &Shape,
    pose_a: &Pose,
    b: &Shape,
    pose_b: &Pose,
    speculative: f32,
    cache: &mut PairCache,
) -> Option<Manifold> {
    if a.is_plane() && b.is_plane() {
        return None;
    }
    // Work relative to a bounded shape's position.
    let origin = if a.is_plane() {
        pose_b.position
    } else {
        pose_a.position
    };
    let pa = Pose::new(pose_a.position - origin, pose_a.rotation);
    let pb = Pose::new(pose_b.position - origin, pose_b.rotation);
    let mut m = dispatch(a, &pa, b, &pb, speculative, cache)?;
    if m.count == 0 || !m.normal.is_finite() {
        return None;
    }
    for p in &mut m.points[..m.count] {
        p.point_a += origin;
        p.point_b += origin;
    }
    cache.normal = m.normal;
    Some(m)
}

fn dispatch(
    a: &Shape,
    pa: &Pose,
    b: &Shape,
    pb: &Pose,
    spec: f32,
    cache: &mut PairCache,
) -> Option<Manifold> {
    use ShapeKind as K;
    // Sharp polytope pairs go to the separating-axis test (unless both hulls
    // are so large that its edge-pair loop would cost more than GJK/EPA).
    // Rounded ones go through GJK: the SAT value is only a lower bound of the
    // distance between separated cores (it underestimates it near vertices),
    // which is exact enough for sharp shapes but not once a radius is
    // subtracted from it.
    const MAX_SAT_EDGE_PAIRS: usize = 4096;
    cache.sat.prefer = cache.fallback_normal();
    if a.radius() == 0.0 && b.radius() == 0.0 {
        match (&a.kind, &b.kind) {
            (K::Box(ba), K::Box(bb)) => return box_box(ba, pa, bb, pb, spec, &mut cache.sat),
            (K::Box(ba), K::ConvexHull(hb)) => {
                return polytope_contact(ba, pa, hb.as_ref(), pb, 0.0, 0.0, spec, &mut cache.sat)
            }
            (K::ConvexHull(ha), K::Box(bb)) => {
                return polytope_contact(ha.as_ref(), pa, bb, pb, 0.0, 0.0, spec, &mut cache.sat)
            }
            (K::ConvexHull(ha), K::ConvexHull(hb))
                if ha.edges().len() * hb.edges().len() <= MAX_SAT_EDGE_PAIRS =>
            {
                return polytope_contact(
                    ha.as_ref(),
                    pa,
                    hb.as_ref(),
                    pb,
                    0.0,
                    0.0,
                    spec,
                    &mut cache.sat,
                )
            }
            _ => {}
        }
    }
    let cache = &*cache;
    match (&a.kind, &b.kind) {
        (K::Plane(p), _) => plane_contact(&rounded_plane(p, pa, a.margin), b, pb, spec),
        (_, K::Plane(p)) => {
            plane_contact(&rounded_plane(p, pb, b.margin), a, pa, spec).map(|m| m.swapped())
        }
        (K::Sphere(_), K::Sphere(_)) => {
            let n = (pb.position - pa.position).normalize_or(cache.fallback_normal());
            let mut m = Manifold::new(n);
            let c = core_pair(pa.position, pb.position, n, a.radius(), b.radius(), 0);
            (c.separation <= spec).then(|| {
                m.push(c);
                m
            })
        }
        (K::Sphere(_), K::Box(bx)) => sphere_box(pa.position, a.radius(), bx, pb, b.radius(), spec),
        (K::Box(bx), K::Sphere(_)) => {
            sphere_box(pb.position, b.radius(), bx, pa, a.radius(), spec).map(|m| m.swapped())
        }
        (K::Sphere(_), K::Capsule(c)) => {
            sphere_capsule(pa.position, a.radius(), c, pb, b.radius(), spec, cache)
        }
        (K::Capsule(c), K::Sphere(_)) => sphere_capsule(
            pb.position,
            b.radius(),
            c,
            pa,
            a.radius(),
            spec,
            &cache.flipped(),
        )
        .map(|m| m.swapped()),
        (K::Capsule(ca), K::Capsule(cb)) => {
            capsule_capsule(ca, pa, a.radius(), cb, pb, b.radius(), spec, cache)
        }
        (K::Capsule(c), K::Box(bx)) => capsule_box(a, c, pa, b, bx, pb, spec, cache),
        (K::Box(bx), K::Capsule(c)) => {
            capsule_box(b, c, pb, a, bx, pa, spec, &cache.flipped()).map(|m| m.swapped())
        }
        _ => convex_contact(a, pa, b, pb, spec, cache),
    }
}

/// Capsule (A) against a box (B): while their cores are apart, the
/// closest points of the core segment and the core box exactly
/// ([`segment_box_closest`]), then the same manifold as
/// [`convex_contact`] builds from GJK's; cores that touch or overlap go to
/// GJK and EPA. GJK took most of the cable stage's segment–body contacts
/// (segments lying on a floor), iterating through triangles for an answer
/// this finds in one pass over at most seven intervals.
#[allow(clippy::too_many_arguments)]
fn capsule_box(
    a: &Shape,
    cap: &Capsule,
    pa: &Pose,
    b: &Shape,
    bx: &Cuboid,
    pb: &Pose,
    spec: f32,
    cache: &PairCache,
) -> Option<Manifold> {
    let (s0, s1) = cap.segment(pa);
    match segment_box_closest(s0, s1, bx.half_extents, pb) {
        // (Beyond the speculative distance the manifold is none.)
        Some((ca, cb, n)) => manifold_from_witness(a, pa, b, pb, n, ca, cb, spec),
        None => convex_contact(a, pa, b, pb, spec, cache),
    }
}

/// The closest points of segment `s0 s1` and the box of half extents `h`
/// at `pose` (on the segment, on the box) and the unit direction from the
/// first to the second, when they are more than
/// [`SEGMENT_BOX_TOUCH`] apart; `None` when they touch or overlap (or the
/// input is not finite: GJK judges those).
///
/// In the box's frame the squared distance from the segment's point at
/// `t` to the box is `Σᵢ (xᵢ(t) − clamp(xᵢ(t), −hᵢ, hᵢ))²`: convex, and a
/// quadratic in `t` between the parameters where the segment crosses one
/// of the six slab planes. The least of each piece's minimum is the
/// distance.
fn segment_box_closest(s0: Vec3, s1: Vec3, h: Vec3, pose: &Pose) -> Option<(Vec3, Vec3, Vec3)> {
    let p = pose.inverse_transform_point(s0);
    let d = pose.inverse_transform_point(s1) - p;
    // The pieces' ends: 0, 1 and the slab crossings between.
    let mut ts = [0.0f32; 8];
    let mut n = 0;
    let mut push = |t: f32| {
        if t > 0.0 && t < 1.0 {
            ts[n] = t;
            n += 1;
        }
    };
    for i in 0..3 {
        if d[i] != 0.0 {
            push((-h[i] - p[i]) / d[i]);
            push((h[i] - p[i]) / d[i]);
        }
    }
    ts[n] = 0.0;
    ts[n + 1] = 1.0;
    let ts = &mut ts[..n + 2];
    ts.sort_unstable_by(f32::total_cmp);
    let dist2 = |t: f32| {
        let x = p + d * t;
        (x - x.clamp(-h, h)).length_squared()
    };
    let (mut best_t, mut best) = (0.0, dist2(0.0));
    for w in ts.windows(2) {
        let (t0, t1) = (w[0], w[1]);
        // Which side of each slab the piece lies on (at its middle):
        // the quadratic Σ (pᵢ + t·dᵢ − cᵢ)² over the axes it is outside.
        let mid = p + d * (0.5 * (t0 + t1));
        let (mut qa, mut qb) = (0.0f32, 0.0f32);
        for i in 0..3 {
            let c = if mid[i] > h[i] {
                h[i]
            } else if mid[i] < -h[i] {
                -h[i]
            } else {
                continue;
            };
            qa += d[i] * d[i];
            qb += d[i] * (p[i] - c);
        }
        let t = if qa > 0.0 {
            (-qb / qa).clamp(t0, t1)
        } else {
            t0
        };
        for t in [t, t1] {
            let v = dist2(t);
            if v < best {
                (best, best_t) = (v, t);
            }
        }
    }
    if !best.is_finite() || best <= SEGMENT_BOX_TOUCH * SEGMENT_BOX_TOUCH {
        return None;
    }
    let x = p + d * best_t;
    let c = x.clamp(-h, h);
    let (on_a, on_b) = (s0.lerp(s1, best_t), pose.transform_point(c));
    // The direction between the world points, unless their rounding tilts
    // it: in the box's frame it is exactly along the face's normal for a
    // point over a face (the axes within the slab give exactly zero). From
    // the world points, a capsule 0.1 mm over a box 200 m wide, 55 m from
    // its centre, took the rounding of the farther coordinates (2 µm) as a
    // 0.02 rad tilt; its manifold's plane went through the box's far edge,
    // 3.1 m above the face there, and a cable lying on the box was thrown
    // off at 300 m/s. (Where the two agree to 10⁻⁴ rad, the world one is
    // kept: with the box's frame's everywhere, one of 1,000 random scenes
    // of cables about a 3 m floor, whose directions differ in their last
    // bits, had a thread's end cut the floor's edge 5 µm deeper than its
    // test allows.)
    let exact = pose.rotation * (c - x).normalize();
    let world = (on_b - on_a).normalize();
    let n = if world.dot(exact) > 0.0 && world.cross(exact).length() < 1.0e-4 {
        world
    } else {
        exact
    };
    Some((on_a, on_b, n))
}

/// Core segment and box nearer than this (m) go to GJK and EPA.
const SEGMENT_BOX_TOUCH: f32 = 1.0e-5;

/// A contact between two core points `ca` (on A) and `cb` (on B) swept by
/// radii `ra` and `rb`, measured along `n`.
fn core_pair(ca: Vec3, cb: Vec3, n: Vec3, ra: f32, rb: f32, id: u32) -> ContactPoint {
    ContactPoint {
        point_a: ca + n * ra,
        point_b: cb - n * rb,
        separation: (cb - ca).dot(n) - ra - rb,
        id: FeatureId(id),
    }
}

// ---------------------------------------------------------------- planes --

/// A plane in world space, raised by its margin.
fn rounded_plane(p: &Plane, pose: &Pose, margin: f32) -> Plane {
    let w = p.to_world(pose);
    Plane {
        normal: w.normal,
        offset: w.offset + margin,
    }
}

/// Shape `s` (at `pose`) against the half-space `plane` (world space), plane
/// as A: the normal is the plane's.
fn plane_contact(plane: &Plane, s: &Shape, pose: &Pose, spec: f32) -> Option<Manifold> {
    let n = plane.normal;
    let r = s.radius();
    let down = -n;
    // Core points that may touch the plane, with their feature on the shape.
    const MAX_CANDS: usize = 17;
    let mut cands = [(Vec3::ZERO, FeatureKind::Vertex, 0u8); MAX_CANDS];
    let mut nc = 0;
    let mut add = |p: Vec3, kind: FeatureKind, id: u8| {
        if nc < MAX_CANDS {
            cands[nc] = (p, kind, id);
            nc += 1;
        }
    };
    match &s.kind {
        ShapeKind::Sphere(_) => add(pose.position, FeatureKind::Vertex, 0),
        ShapeKind::Capsule(c) => {
            let (p0, p1) = c.segment(pose);
            add(p0, FeatureKind::Vertex, 0);
            add(p1, FeatureKind::Vertex, 1);
        }
        ShapeKind::Box(bx) => {
            // The face most facing the plane holds the deepest corner.
            let dl = pose.inverse_transform_vector(down);
            let a = dl.abs();
            let axis = if a.x >= a.y && a.x >= a.z {
                0
            } else if a.y >= a.z {
                1
            } else {
                2
            };
            for i in box_face(axis, dl[axis] >= 0.0) {
                add(
                    pose.transform_point(box_corner(bx.half_extents, i)),
                    FeatureKind::Vertex,
                    i,
                );
            }
        }
        ShapeKind::Cylinder(c) => {
            let axis = pose.transform_vector(Vec3::Y);
            let (u, w) = rim_frame(pose, axis, down);
            let s = if axis.dot(down) >= 0.0 { 1.0 } else { -1.0 };
            let low = pose.position + axis * (s * c.half_height);
            let high = pose.position - axis * (s * c.half_height);
            // Ids: the cap (0 bottom, 1 top) times 4 plus the rim direction.
            let cap = (s > 0.0) as u8;
            for (k, dir) in [u, w, -u, -w].into_iter().enumerate() {
                add(low + dir * c.radius, FeatureKind::Vertex, cap * 4 + k as u8);
            }
            add(high + u * c.radius, FeatureKind::Vertex, (1 - cap) * 4);
        }
        ShapeKind::Cone(c) => {
            let axis = pose.transform_vector(Vec3::Y);
            let (u, w) = rim_frame(pose, axis, down);
            let base = pose.position - axis * c.half_height;
            for (k, dir) in [u, w, -u, -w].into_iter().enumerate() {
                add(base + dir * c.radius, FeatureKind::Vertex, k as u8);
            }
            add(pose.position + axis * c.half_height, FeatureKind::Vertex, 4);
        }
        ShapeKind::ConvexHull(h) => {
            let f = h.support_feature(pose, pose.inverse_transform_vector(down));
            for (i, &p) in f.points().iter().enumerate() {
                add(p, FeatureKind::Vertex, f.ids[i]);
            }
            // Always consider the deepest vertex, whatever the feature holds.
            if f.count == 0 {
                add(
                    pose.transform_point(h.support(pose.inverse_transform_vector(down))),
                    FeatureKind::Vertex,
                    0,
                );
            }
        }
        ShapeKind::Plane(_) => return None,
    }
    let mut pts = [ContactPoint::default(); MAX_CANDS];
    let mut np = 0;
    for &(c, kind, id) in &cands[..nc] {
        let sep = plane.distance(c) - r;
        if sep <= spec && sep.is_finite() {
            let point_b = c - n * r;
            pts[np] = ContactPoint {
                point_a: point_b - n * sep,
                point_b,
                separation: sep,
                id: FeatureId::new(FeatureKind::Face, 0, kind, id),
            };
            np += 1;
        }
    }
    if np == 0 {
        return None;
    }
    let mut m = Manifold::new(n);
    for p in reduce_points(&pts[..np], n) {
        m.push(p);
    }
    Some(m)
}

/// Two unit vectors spanning a cap's plane: `u` towards the deepest rim
/// point along `down`, `w = axis × u`. When the cap faces `down` squarely
/// (no deepest direction), the body's own X axis is used so that ids stay
/// put on a flat resting cylinder.
fn rim_frame(pose: &Pose, axis: Vec3, down: Vec3) -> (Vec3, Vec3) {
    let perp = down - axis * axis.dot(down);
    let u = if perp.length() > 1e-3 {
        perp.normalize()
    } else {
        pose.transform_vector(Vec3::X)
    };
    (u, axis.cross(u))
}

/// At most four of `pts`: the deepest, the one farthest from it, the one
/// spanning the largest triangle with those two, and the one adding the
/// most area to that triangle (seen along `n`).
fn reduce_points(pts: &[ContactPoint], n: Vec3) -> impl Iterator<Item = ContactPoint> + '_ {
    let mut pick = [usize::MAX; MAX_MANIFOLD_POINTS];
    let count = if pts.len() <= MAX_MANIFOLD_POINTS {
        for (i, p) in pick.iter_mut().enumerate().take(pts.len()) {
            *p = i;
        }
        pts.len()
    } else {
        let pos = |i: usize| pts[i].point_b;
        let argmax = |score: &dyn Fn(usize) -> f32, taken: &[usize]| {
            let mut best = (usize::MAX, f32::NEG_INFINITY);
            for i in 0..pts.len() {
                let s = score(i);
                if !taken.contains(&i) && s > best.1 {
                    best = (i, s);
                }
            }
            best.0
        };
        let i0 = argmax(&|i| -pts[i].separation, &[]);
        let i1 = argmax(&|i| (pos(i) - pos(i0)).length_squared(), &[i0]);
        let i2 = argmax(
            &|i| (pos(i1) - pos(i0)).cross(pos(i) - pos(i0)).dot(n).abs(),
            &[i0, i1],
        );
        // Orient the triangle counter-clockwise about n; a point adds area
        // when it lies outside one of its edges.
        let (a, b) = if (pos(i1) - pos(i0)).cross(pos(i2) - pos(i0)).dot(n) >= 0.0 {
            (i1, i2)
        } else {
            (i2, i1)
        };
        let tri = [i0, a, b];
        let i3 = argmax(
            &|i| {
                (0..3)
                    .map(|e| {
                        let (p, q) = (pos(tri[e]), pos(tri[(e + 1) % 3]));
                        -(q - p).cross(pos(i) - p).dot(n)
                    })
                    .fold(f32::NEG_INFINITY, f32::max)
            },
            &[i0, i1, i2],
        );
        pick = [i0, i1, i2, i3];
        MAX_MANIFOLD_POINTS
    };
    pick.into_iter()
        .take(count)
        .filter(|&i| i < pts.len())
        .map(move |i| pts[i])
}

// --------------------------------------------------------- sphere fast paths --

/// Feature of a box (half extents `h`) nearest to the local point `q` on its
/// surface: face, edge or corner by how many coordinates sit on a bound.
fn box_feature_at(q: Vec3, h: Vec3) -> (FeatureKind, u8) {
    let on = [
        (q.x.abs() >= h.x) as u8,
        (q.y.abs() >= h.y) as u8,
        (q.z.abs() >= h.z) as u8,
    ];
    let bits = (q.x > 0.0) as u8 | ((q.y > 0.0) as u8) << 1 | ((q.z > 0.0) as u8) << 2;
    match on[0] + on[1] + on[2] {
        0 | 1 => {
            let axis = on.iter().position(|&o| o == 1).unwrap_or(0);
            (FeatureKind::Face, 2 * axis as u8 + (bits >> axis & 1))
        }
        2 => {
            let axis = on.iter().position(|&o| o == 0).unwrap_or(0);
            let others = (bits >> ((axis + 1) % 3) & 1) | (bits >> ((axis + 2) % 3) & 1) << 1;
            (FeatureKind::Edge, 6 + axis as u8 * 4 + others)
        }
        _ => (FeatureKind::Vertex, bits),
    }
}

/// Sphere (A, centre `c`, radius `rs`) against a box (B, core `bx` with
/// radius `rb`).
fn sphere_box(c: Vec3, rs: f32, bx: &Cuboid, pose: &Pose, rb: f32, spec: f32) -> Option<Manifold> {
    let h = bx.half_extents;
    let cl = pose.inverse_transform_point(c);
    let q = cl.clamp(-h, h);
    let delta = cl - q;
    let dist2 = delta.length_squared();
    let (q, out_local, sep) = if dist2 > 0.0 {
        let dist = dist2.sqrt();
        (q, delta / dist, dist - rs - rb)
    } else {
        // Centre inside the core box: leave through the nearest face.
        let pen = h - cl.abs();
        let axis = if pen.x <= pen.y && pen.x <= pen.z {
            0
        } else if pen.y <= pen.z {
            1
        } else {
            2
        };
        let s = if cl[axis] >= 0.0 { 1.0 } else { -1.0 };
        let mut q = cl;
        q[axis] = s * h[axis];
        let mut out = Vec3::ZERO;
        out[axis] = s;
        (q, out, -pen[axis] - rs - rb)
    };
    if sep > spec || !sep.is_finite() {
        return None;
    }
    let (kind, index) = box_feature_at(q, h);
    let n = -pose.transform_vector(out_local);
    let qw = pose.transform_point(q);
    let mut m = Manifold::new(n);
    m.push(ContactPoint {
        point_a: c + n * rs,
        point_b: qw - n * rb,
        separation: sep,
        id: FeatureId::new(FeatureKind::Vertex, 0, kind, index),
    });
    Some(m)
}

/// Parameter of the point of segment `p + t·d` (t ∈ [0, 1]) closest to `x`.
fn closest_on_segment(p: Vec3, d: Vec3, x: Vec3) -> f32 {
    let dd = d.length_squared();
    if dd <= f32::MIN_POSITIVE {
        0.0
    } else {
        ((x - p).dot(d) / dd).clamp(0.0, 1.0)
    }
}

fn segment_feature(t: f32) -> (FeatureKind, u8) {
    if t <= 0.0 {
        (FeatureKind::Vertex, 0)
    } else if t >= 1.0 {
        (FeatureKind::Vertex, 1)
    } else {
        (FeatureKind::Edge, 0)
    }
}

/// A normal perpendicular to the segment direction `d`, leaning towards
/// `hint` when it can.
fn perpendicular_normal(d: Vec3, hint: Vec3) -> Vec3 {
    let dn = d.normalize_or(Vec3::Y);
    let p = hint - dn * dn.dot(hint);
    p.try_normalize()
        .unwrap_or_else(|| crate::physics::math::orthonormal_basis(dn).0)
}

fn sphere_capsule(
    c: Vec3,
    rs: f32,
    cap: &Capsule,
    pose: &Pose,
    rc: f32,
    spec: f32,
    cache: &PairCache,
) -> Option<Manifold> {
    let (p0, p1) = cap.segment(pose);
    let t = closest_on_segment(p0, p1 - p0, c);
    let q = p0 + (p1 - p0) * t;
    let tiny = 1e-5 * (p1 - p0).length().max(rs + rc);
    let n = match (q - c).try_normalize() {
        Some(n) if (q - c).length() > tiny => n,
        _ => perpendicular_normal(p1 - p0, cache.fallback_normal()),
    };
    let mut cp = core_pair(c, q, n, rs, rc, 0);
    if cp.separation > spec {
        return None;
    }
    let (kind, index) = segment_feature(t);
    cp.id = FeatureId::new(FeatureKind::Vertex, 0, kind, index);
    let mut m = Manifold::new(n);
    m.push(cp);
    Some(m)
}

/// Closest points of segments `p1 + s·d1` and `p2 + t·d2`, s, t ∈ [0, 1]
/// (Ericson, Real-Time Collision Detection §5.1.9). Degenerate segments are
/// points.
pub fn closest_segment_segment(p1: Vec3, d1: Vec3, p2: Vec3, d2: Vec3) -> (f32, f32) {
    let r = p1 - p2;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    let tiny = f32::MIN_POSITIVE;
    if a <= tiny && e <= tiny {
        return (0.0, 0.0);
    }
    if a <= tiny {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= tiny {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    // Parallel segments: any s works; take 0 and let the clamps decide.
    let mut s = if denom > 1e-12 * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

#[allow(clippy::too_many_arguments)]
fn capsule_capsule(
    ca: &Capsule,
    pa: &Pose,
    ra: f32,
    cb: &Capsule,
    pb: &Pose,
    rb: f32,
    spec: f32,
    cache: &PairCache,
) -> Option<Manifold> {
    let (a0, a1) = ca.segment(pa);
    let (b0, b1) = cb.segment(pb);
    let (da, db) = (a1 - a0, b1 - b0);
    let (s, t) = closest_segment_segment(a0, da, b0, db);
    let (qa, qb) = (a0 + da * s, b0 + db * t);
    let centre = pb.position - pa.position;
    // Below this the direction between the closest points is rounding noise.
    let tiny = 1e-5 * (da.length() + db.length()).max(ra + rb);
    let n = match (qb - qa).try_normalize() {
        Some(n) if (qb - qa).length() > tiny => n,
        _ => {
            // The axes cross: the normal is perpendicular to both.
            let c = da.cross(db);
            let hint = if centre.length_squared() > 0.0 {
                centre
            } else {
                cache.fallback_normal()
            };
            match c.try_normalize() {
                Some(c) if c.dot(hint) >= 0.0 => c,
                Some(c) => -c,
                None => perpendicular_normal(da, hint),
            }
        }
    };
    let closest = core_pair(qa, qb, n, ra, rb, 0);
    if closest.separation > spec || !closest.separation.is_finite() {
        return None;
    }
    let mut m = Manifold::new(n);
    let id = |s: f32, t: f32| {
        let (ka, ia) = segment_feature(s);
        let (kb, ib) = segment_feature(t);
        FeatureId::new(ka, ia, kb, ib)
    };

    // Nearly parallel axes: the overlap of B projected on A gives two points.
    let (la, lb) = (da.length(), db.length());
    if la > 0.0 && lb > 0.0 {
        let ua = da / la;
        if ua.cross(db / lb).length() < super::feature::FEATURE_SIN {
            let t0 = (b0 - a0).dot(ua);
            let t1 = (b1 - a0).dot(ua);
            let lo = t0.min(t1).max(0.0);
            let hi = t0.max(t1).min(la);
            if hi - lo > 1e-3 * la.max(lb) {
                for sa in [lo / la, hi / la] {
                    let pa = a0 + da * sa;
                    let tb = closest_on_segment(b0, db, pa);
                    let mut cp = core_pair(pa, b0 + db * tb, n, ra, rb, 0);
                    if cp.separation <= spec {
                        cp.id = id(sa, tb);
                        m.push(cp);
                    }
                }
                if m.count > 0 {
                    return Some(m);
                }
            }
        }
    }
    let mut cp = closest;
    cp.id = id(s, t);
    m.push(cp);
    Some(m)
}

// ----------------------------------------------------------- generic path --

/// Any convex pair: GJK/EPA on the cores for the normal, then the support
/// features along it, clipped.
fn convex_contact(
    a: &Shape,
    pa: &Pose,
    b: &Shape,
    pb: &Pose,
    spec: f32,
    cache: &PairCache,
) -> Option<Manifold> {
    let (ra, rb) = (a.radius(), b.radius());
    let sa = CoreSupport { shape: a, pose: pa };
    let sb = CoreSupport { shape: b, pose: pb };
    let warm = if cache.normal.length_squared() > 0.5 {
        cache.normal
    } else {
        pb.position - pa.position
    };
    let (n, ca, cb) = match gjk(&sa, &sb, warm, ra + rb + spec) {
        GjkResult::Beyond { .. } => return None,
        GjkResult::Separated {
            distance,
            point_a,
            point_b,
            normal,
        } => {
            if distance - ra - rb > spec {
                return None;
            }
            (normal, point_a, point_b)
        }
        GjkResult::Intersecting { simplex } => match epa(&sa, &sb, &simplex) {
            Some(p) if p.normal.is_finite() && p.point_a.is_finite() && p.point_b.is_finite() => {
                (p.normal, p.point_a, p.point_b)
            }
            _ => least_penetration_axis(&sa, &sb, pb.position - pa.position, cache),
        },
    };
    manifold_from_witness(a, pa, b, pb, n, ca, cb, spec)
}

/// The manifold of cores whose closest points (or deepest, for
/// overlapping cores) are `ca` on A and `cb` on B, along `n` (A to B):
/// the two support features clipped against each other when both have
/// two points or more, else the witness pair.
#[allow(clippy::too_many_arguments)]
fn manifold_from_witness(
    a: &Shape,
    pa: &Pose,
    b: &Shape,
    pb: &Pose,
    n: Vec3,
    ca: Vec3,
    cb: Vec3,
    spec: f32,
) -> Option<Manifold> {
    let (ra, rb) = (a.radius(), b.radius());
    let witness = core_pair(ca, cb, n, ra, rb, 0);
    if witness.separation > spec {
        return None;
    }
    let fa = support_feature(a, pa, n);
    let fb = support_feature(b, pb, -n);
    if fa.count >= 2 && fb.count >= 2 {
        let mut m = clip_features(&fa, &fb, n, ra, rb, spec);
        if m.count > 0 {
            m.normal = n;
            return Some(m);
        }
    }
    let mut m = Manifold::new(n);
    let mut cp = witness;
    cp.id = FeatureId::new(
        feature_kind(&fa),
        feature_index(&fa),
        feature_kind(&fb),
        feature_index(&fb),
    );
    m.push(cp);
    Some(m)
}

fn feature_kind(f: &SupportFeature) -> FeatureKind {
    match f.count {
        0 | 1 => FeatureKind::Vertex,
        2 => FeatureKind::Edge,
        _ => FeatureKind::Face,
    }
}

fn feature_index(f: &SupportFeature) -> u8 {
    if f.count == 1 {
        f.ids[0]
    } else {
        f.face
    }
}

/// Fallback when EPA has no volume to work with: of a few candidate
/// directions, the one along which the cores overlap least.
fn least_penetration_axis(
    sa: &CoreSupport,
    sb: &CoreSupport,
    centre: Vec3,
    cache: &PairCache,
) -> (Vec3, Vec3, Vec3) {
    let mut best = (f32::INFINITY, Vec3::Y, Vec3::ZERO, Vec3::ZERO);
    let cands = [
        cache.normal,
        centre,
        Vec3::X,
        -Vec3::X,
        Vec3::Y,
        -Vec3::Y,
        Vec3::Z,
        -Vec3::Z,
    ];
    for d in cands {
        let Some(d) = d.try_normalize() else { continue };
        let pa = sa.support(d);
        let pb = sb.support(-d);
        let depth = (pa - pb).dot(d);
        if depth < best.0 {
            best = (depth, d, pa, pb);
        }
    }
    (best.1, best.2, best.3)
}

#[cfg(test)]
mod capsule_box_tests {
    use super::*;
    use crate::physics::math::{lcg, Quat};

    /// A thread's segment (a capsule of 1 mm) lying 0.1 mm over a box 200 m
    /// wide, 55 m from its centre: the manifold's normal is the face's, its
    /// point on the box under the segment, 0.9 mm deep. Its direction was
    /// taken from the closest points in world coordinates, whose rounding
    /// there (2 µm) read as a 0.02 rad tilt; the manifold's plane then went
    /// through the box's far edge, 3.1 m deep, and a cable lying on such a
    /// floor was thrown off at 300 m/s.
    #[test]
    fn a_capsule_just_over_a_wide_box_far_from_its_centre_gets_the_face_normal() {
        let b = Shape::cuboid(Vec3::new(100.0, 0.5, 100.0));
        let pose_b = Pose::new(Vec3::new(0.0, -0.5, 0.0), Quat::IDENTITY);
        let (s0, s1) = (
            Vec3::new(55.268356, 0.03688635, -37.685497),
            Vec3::new(54.79379, 9.502644e-5, -37.37122),
        );
        let d = s1 - s0;
        let pose_a = Pose::new(
            (s0 + s1) * 0.5,
            Quat::from_rotation_arc(Vec3::Y, d.normalize()),
        );
        let a = Shape::capsule(0.5 * d.length(), 0.001);
        let m = contact_manifold(&a, &pose_a, &b, &pose_b, 0.5, &mut PairCache::default()).unwrap();
        assert!(
            (m.normal - Vec3::NEG_Y).length() < 1.0e-6,
            "normal {}",
            m.normal
        );
        for cp in m.points() {
            assert!(
                cp.point_b.x > 54.0 && cp.point_b.y.abs() < 1.0e-5,
                "{:?}",
                cp.point_b
            );
            assert!(
                (cp.separation + 0.0009).abs() < 1.0e-4,
                "separation {}",
                cp.separation
            );
        }
    }

    /// Random capsules near random boxes (rounded or not), in both
    /// orders: where the cores are apart, the exact closest points are no
    /// farther apart than the box's distance from 20,001 points sampled
    /// along the segment, and the manifold agrees with the one built from
    /// GJK's closest points (the distance's direction between convex shapes
    /// is unique: normals within 1e-3, separations within 1e-4, the same
    /// number of points); where they touch or overlap, it is GJK and EPA's.
    #[test]
    fn capsule_box_matches_brute_force_and_gjk() {
        let mut seed = 11;
        let (mut apart, mut near, mut overlapping) = (0, 0, 0);
        for round in 0..3000 {
            let mut r = || lcg(&mut seed);
            let h = Vec3::new(0.05 + 2.0 * r(), 0.05 + 2.0 * r(), 0.05 + 2.0 * r());
            let axis = Vec3::new(r() - 0.5, r() - 0.5, r() - 0.5) + Vec3::splat(1e-3);
            let pose_b = Pose::new(
                Vec3::new(r(), r(), r()) * 4.0 - 2.0,
                Quat::from_axis_angle(axis.normalize(), 6.0 * r()),
            );
            let margin = if round % 3 == 0 { 0.05 * r() } else { 0.0 };
            let b = Shape::cuboid(h).with_margin(margin);
            let (s0, s1) = (
                pose_b.position + (Vec3::new(r(), r(), r()) - 0.5) * 8.0,
                pose_b.position + (Vec3::new(r(), r(), r()) - 0.5) * 8.0,
            );
            let half = 0.5 * (s1 - s0).length();
            let pose_a = Pose::new(
                (s0 + s1) * 0.5,
                Quat::from_rotation_arc(Vec3::Y, (s1 - s0).normalize()),
            );
            let a = Shape::capsule(half, 0.01 + 0.3 * r());
            let spec = 0.5 * r();
            let Shape {
                kind: ShapeKind::Capsule(cap),
                ..
            } = &a
            else {
                unreachable!()
            };
            let (c0, c1) = cap.segment(&pose_a);
            let cache = PairCache::default();
            let exact = capsule_box(
                &a,
                cap,
                &pose_a,
                &b,
                &Cuboid { half_extents: h },
                &pose_b,
                spec,
                &cache,
            );
            let Some((ca, cb, _)) = segment_box_closest(c0, c1, h, &pose_b) else {
                overlapping += 1;
                let gjk = convex_contact(&a, &pose_a, &b, &pose_b, spec, &cache);
                assert_eq!(
                    exact.map(|m| m.normal),
                    gjk.map(|m| m.normal),
                    "round {round}"
                );
                continue;
            };
            let dist = (cb - ca).length();
            let brute = (0..=20_000)
                .map(|k| {
                    let x = pose_b.inverse_transform_point(c0.lerp(c1, k as f32 / 20_000.0));
                    (x - x.clamp(-h, h)).length()
                })
                .fold(f32::INFINITY, f32::min);
            assert!(dist <= brute + 1e-5, "round {round}: {dist} > {brute}");
            assert!(
                dist >= brute - 1e-3 * (c1 - c0).length() - 1e-5,
                "round {round}: {dist} << {brute}"
            );
            let gjk = convex_contact(&a, &pose_a, &b, &pose_b, spec, &cache);
            match (exact, gjk) {
                (None, None) => apart += 1,
                (Some(e), Some(g)) => {
                    near += 1;
                    assert!(
                        (e.normal - g.normal).length() < 1e-3,
                        "round {round}: {e:?} {g:?}"
                    );
                    assert_eq!(e.count, g.count, "round {round}: {e:?} {g:?}");
                    let least = |m: &Manifold| {
                        m.points[..m.count]
                            .iter()
                            .map(|p| p.separation)
                            .fold(f32::INFINITY, f32::min)
                    };
                    assert!(
                        (least(&e) - least(&g)).abs() < 1e-4,
                        "round {round}: {e:?} {g:?}"
                    );
                    // The other order: the same manifold, flipped (taken
                    // relative to the box's position: the direction between
                    // points a few metres out rounds by ~1e-6 m over the
                    // distance).
                    let flipped =
                        contact_manifold(&b, &pose_b, &a, &pose_a, spec, &mut PairCache::default())
                            .expect("the other order");
                    assert!(
                        (flipped.normal + e.normal).length() < 1e-4 + 1e-6 / dist,
                        "round {round}: {flipped:?} {e:?} {dist}"
                    );
                }
                // Only at the speculative distance's edge may they differ.
                (e, g) => {
                    let sep = dist - a.radius() - b.radius();
                    assert!((sep - spec).abs() < 1e-4, "round {round}: {e:?} {g:?}");
                }
            }
        }
        assert!(
            apart > 300 && near > 300 && overlapping > 100,
            "{apart} apart, {near} near, {overlapping} overlapping"
        );
    }
}
