//! GJK against brute force on random convex point clouds.
//!
//! For two point clouds, the distance between their convex hulls (when they
//! are apart) is realised by a vertex–face or an edge–edge pair of the hulls.
//! Every hull face is covered by triangles of cloud points and every edge by
//! a pair of cloud points, and every such triangle or segment lies inside its
//! hull, so the minimum over all point–triangle and segment–segment distances
//! equals the hull distance exactly. It is computed in f64.

use crate::physics::collision::gjk::{gjk, GjkResult};
use crate::physics::math::Vec3;
use glam::DVec3;
use proptest::prelude::*;

/// GJK stops when its lower and upper bounds agree to 1e-6 relative, or to
/// its rounding allowance of 2ε·|A − B| (|A − B| ≤ 9 here, so 2.2e-6);
/// distances are at most ~6, so the bound is ≤ 8.2e-6. Any wrong Voronoi
/// region or early stop gives errors orders of magnitude larger.
const DIST_TOL: f64 = 1e-5;

fn closest_on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let ab = b - a;
    let l = ab.length_squared();
    if l == 0.0 {
        return a;
    }
    a + ab * ((p - a).dot(ab) / l).clamp(0.0, 1.0)
}

fn point_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let n = (b - a).cross(c - a);
    let nn = n.length_squared();
    if nn > 1e-24 {
        // Projection inside the triangle: the plane distance.
        let q = p - n * ((p - a).dot(n) / nn);
        let inside = [(a, b), (b, c), (c, a)]
            .iter()
            .all(|&(u, v)| (v - u).cross(q - u).dot(n) >= 0.0);
        if inside {
            return (p - q).length();
        }
    }
    [(a, b), (b, c), (c, a)]
        .iter()
        .map(|&(u, v)| (p - closest_on_segment(p, u, v)).length())
        .fold(f64::INFINITY, f64::min)
}

fn segment_segment(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> f64 {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    let (s, t);
    if a <= 1e-30 && e <= 1e-30 {
        return r.length();
    }
    if a <= 1e-30 {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(r);
        if e <= 1e-30 {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            let mut s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t0 = 0.0;
                s0 = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t0 = 1.0;
                s0 = ((b - c) / a).clamp(0.0, 1.0);
            }
            s = s0;
            t = t0;
        }
    }
    ((p1 + d1 * s) - (p2 + d2 * t)).length()
}

/// Minimum over point–triangle (both ways) and segment–segment distances.
/// Repeated indices make the triangles and segments of clouds with fewer
/// than three (or two) points: degenerate triangles are segments or points.
fn brute_force_distance(a: &[DVec3], b: &[DVec3]) -> f64 {
    let mut best = f64::INFINITY;
    for (x, y) in [(a, b), (b, a)] {
        for i in 0..x.len() {
            for j in i..x.len() {
                for k in j..x.len() {
                    for &p in y {
                        best = best.min(point_triangle(p, x[i], x[j], x[k]));
                    }
                }
            }
        }
    }
    for i in 0..a.len() {
        for j in i..a.len() {
            for k in 0..b.len() {
                for l in k..b.len() {
                    best = best.min(segment_segment(a[i], a[j], b[k], b[l]));
                }
            }
        }
    }
    best
}

/// Distance from the origin to the convex hull of 1–4 points, f64.
fn origin_to_simplex(w: &[DVec3]) -> f64 {
    match w.len() {
        1 => w[0].length(),
        2 => closest_on_segment(DVec3::ZERO, w[0], w[1]).length(),
        3 => point_triangle(DVec3::ZERO, w[0], w[1], w[2]),
        _ => {
            let vol = |a: DVec3, b: DVec3, c: DVec3, d: DVec3| (b - a).dot((c - a).cross(d - a));
            let v = vol(w[0], w[1], w[2], w[3]);
            let o = DVec3::ZERO;
            let parts = [
                vol(o, w[1], w[2], w[3]),
                vol(w[0], o, w[2], w[3]),
                vol(w[0], w[1], o, w[3]),
                vol(w[0], w[1], w[2], o),
            ];
            if v != 0.0 && parts.iter().all(|p| p * v >= 0.0) {
                return 0.0;
            }
            [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]
                .iter()
                .map(|f| point_triangle(o, w[f[0]], w[f[1]], w[f[2]]))
                .fold(f64::INFINITY, f64::min)
        }
    }
}

fn d(v: Vec3) -> DVec3 {
    v.as_dvec3()
}

fn cloud(n: std::ops::Range<usize>) -> impl Strategy<Value = Vec<Vec3>> {
    prop::collection::vec(
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0).prop_map(|(x, y, z)| Vec3::new(x, y, z)),
        n,
    )
}

/// A cloud, sometimes squashed flat or onto a line (degenerate hulls).
fn shaped_cloud() -> impl Strategy<Value = Vec<Vec3>> {
    (cloud(1..10), 0u8..6).prop_map(|(pts, mode)| match mode {
        0 => pts.iter().map(|p| Vec3::new(p.x, p.y, 0.0)).collect(),
        1 => pts.iter().map(|p| Vec3::new(p.x, 0.3, 0.0)).collect(),
        _ => pts,
    })
}

/// Checks a GJK answer for clouds `a`, `b` against brute force.
fn check_pair(a: &[Vec3], b: &[Vec3]) -> Result<(), TestCaseError> {
    let r = gjk(a, b, Vec3::X, f32::INFINITY);
    let (da, db): (Vec<DVec3>, Vec<DVec3>) = (
        a.iter().map(|&p| d(p)).collect(),
        b.iter().map(|&p| d(p)).collect(),
    );
    match r {
        GjkResult::Separated {
            distance,
            point_a,
            point_b,
            normal,
        } => {
            prop_assert!(distance.is_finite() && normal.is_finite());
            let brute = brute_force_distance(&da, &db);
            prop_assert!(
                (distance as f64 - brute).abs() <= DIST_TOL,
                "gjk {distance} vs brute force {brute}"
            );
            prop_assert!(((point_b - point_a).length() - distance).abs() <= 1e-5);
            // The separating plane certifies the lower bound.
            let max_a = da.iter().map(|p| p.dot(d(normal))).fold(f64::MIN, f64::max);
            let min_b = db.iter().map(|p| p.dot(d(normal))).fold(f64::MAX, f64::min);
            prop_assert!(
                min_b - max_a >= distance as f64 - DIST_TOL,
                "separating plane gap {} below distance {distance}",
                min_b - max_a
            );
        }
        GjkResult::Intersecting { simplex } => {
            // Each simplex vertex pairs a point of A with a point of B, and
            // the origin lies on their hull: Σλa = Σλb is a shared point.
            let mut w = Vec::new();
            for v in simplex.vertices() {
                prop_assert!(a.contains(&v.a) && b.contains(&v.b));
                prop_assert_eq!(v.w, v.a - v.b);
                w.push(d(v.a) - d(v.b));
            }
            // GJK calls distances below GJK_TOUCH_TOLERANCE (1e-5) times
            // the largest |w| it met "touching"; bound that by the largest
            // |a − b| of the clouds, plus f32 rounding of the simplex.
            let size = da
                .iter()
                .flat_map(|p| db.iter().map(move |q| (*p - *q).length()))
                .fold(0.0, f64::max);
            let gap = origin_to_simplex(&w);
            prop_assert!(gap <= 1e-5 * size + 1e-6, "origin {gap} from the simplex");
        }
        GjkResult::Beyond { .. } => prop_assert!(false, "no limit was given"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn gjk_distance_matches_brute_force(
        a in shaped_cloud(),
        b in shaped_cloud(),
        offset in (-3.0f32..3.0, -3.0f32..3.0, -3.0f32..3.0),
    ) {
        let off = Vec3::new(offset.0, offset.1, offset.2);
        let b: Vec<Vec3> = b.iter().map(|&p| p + off).collect();
        check_pair(&a, &b)?;
    }

    #[test]
    fn gjk_reports_overlap_of_clouds_sharing_a_point(
        a in cloud(1..10),
        b in cloud(1..10),
        shared in (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0),
        offset in (-1.5f32..1.5, -1.5f32..1.5, -1.5f32..1.5),
    ) {
        let s = Vec3::new(shared.0, shared.1, shared.2);
        let off = Vec3::new(offset.0, offset.1, offset.2);
        let mut a = a;
        let mut b: Vec<Vec3> = b.iter().map(|&p| p + off).collect();
        a.push(s);
        b.push(s);
        let r = gjk(&a[..], &b[..], Vec3::X, f32::INFINITY);
        prop_assert!(matches!(r, GjkResult::Intersecting { .. }), "{r:?}");
        check_pair(&a, &b)?;
    }
}

#[test]
fn brute_force_sanity() {
    let a = [DVec3::ZERO, DVec3::X, DVec3::Y];
    let b = [DVec3::new(0.2, 0.2, 2.0)];
    assert!((brute_force_distance(&a, &b) - 2.0).abs() < 1e-12);
}
