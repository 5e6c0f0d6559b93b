//! GJK, EPA and the whole manifold checked against support functions.
//!
//! For convex A and B, the overlap along a unit direction d is
//! `o(d) = h_A(d) + h_B(−d)` with h the support function (the width of the
//! Minkowski difference A − B along d, past the origin). The penetration depth
//! is min_d o(d) and, when they are apart, the distance is max_d −o(d)
//! (separating axis theorem). EPA's polytope lies inside A − B, so its depth
//! is a lower bound of the true one; GJK's witness points lie in the shapes,
//! so its distance is an upper bound. Hence, up to rounding only:
//! - EPA: o(d) ≥ depth for every d, and o(normal) ≤ depth + depth_error,
//!   with depth_error within the EPA tolerance for polytopes;
//! - GJK: −o(d) ≤ distance for every d, and −o(normal) ≥ distance (1 − 1e-6).

use crate::physics::collision::epa::{epa, EPA_TOLERANCE};
use crate::physics::collision::gjk::{gjk, CoreSupport, GjkResult, ShapeSupport, SupportMap};
use crate::physics::collision::polytope::{SWITCH_ABS, SWITCH_REL};
use crate::physics::collision::tests::{manifold, min_separation, zoo};
use crate::physics::math::{Pose, Quat, Vec3};
use crate::physics::shape::{Shape, ShapeKind};
use proptest::prelude::*;

fn overlap(a: &impl SupportMap, b: &impl SupportMap, d: Vec3) -> f64 {
    let pa = a.support(d).as_dvec3();
    let pb = b.support(-d).as_dvec3();
    (pa - pb).dot(d.as_dvec3())
}

/// 200 directions spread over the sphere (Fibonacci lattice).
fn directions() -> Vec<Vec3> {
    let n = 200;
    let golden = std::f32::consts::PI * (3.0 - 5f32.sqrt());
    (0..n)
        .map(|i| {
            let y = 1.0 - 2.0 * (i as f32 + 0.5) / n as f32;
            let r = (1.0 - y * y).sqrt();
            let t = golden * i as f32;
            Vec3::new(r * t.cos(), y, r * t.sin())
        })
        .collect()
}

fn shapes() -> Vec<Shape> {
    let mut v: Vec<Shape> = zoo().into_iter().map(|(_, s)| s).collect();
    v.push(Shape::cuboid(Vec3::new(0.5, 0.5e-4, 0.5)));
    v
}

fn pose_strategy(spread: f32) -> impl Strategy<Value = Pose> {
    (
        (-spread..spread, -spread..spread, -spread..spread),
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0),
    )
        .prop_map(|(p, q)| {
            let q = Quat::from_xyzw(q.0, q.1, q.2, q.3);
            let q = if q.length() > 1e-3 {
                q.normalize()
            } else {
                Quat::IDENTITY
            };
            Pose::new(Vec3::new(p.0, p.1, p.2), q)
        })
}

/// Cylinders and cones (and anything rounded, whose core may be one).
fn curved(s: &Shape) -> bool {
    !matches!(s.kind, ShapeKind::Box(_) | ShapeKind::ConvexHull(_))
}

/// Size of A − B, the scale of every tolerance.
fn scale(a: &Shape, pa: &Pose, b: &Shape, pb: &Pose) -> f64 {
    (a.bounding_radius() + b.bounding_radius() + (pa.position - pb.position).length()) as f64
}

fn is_sharp_polytope(s: &Shape) -> bool {
    s.radius() == 0.0 && matches!(s.kind, ShapeKind::Box(_) | ShapeKind::ConvexHull(_))
}

/// f32 rounding of support points and plane distances, relative to scale.
const ROUNDING: f64 = 2e-6;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn gjk_and_epa_bracket_the_support_function_answer(
        ia in 0usize..9, ib in 0usize..9,
        pa in pose_strategy(0.1), pb in pose_strategy(0.8),
    ) {
        let all = shapes();
        let (a, b) = (&all[ia], &all[ib]);
        let sa = CoreSupport { shape: a, pose: &pa };
        let sb = CoreSupport { shape: b, pose: &pb };
        let s = scale(a, &pa, b, &pb);
        match gjk(&sa, &sb, Vec3::X, f32::INFINITY) {
            GjkResult::Separated { distance, normal, .. } => {
                let dist = distance as f64;
                let gap = -overlap(&sa, &sb, normal);
                // The normal is v/|v| with v rounded by ~ε·s, so it tilts by
                // up to ~ε·s/distance and the gap along it may fall short by
                // that times the shapes' extent: a few ε·s²/distance.
                let tilt = 4.0 * f32::EPSILON as f64 * s * s / dist;
                prop_assert!(
                    gap >= dist * (1.0 - 1e-6) - ROUNDING * s - tilt,
                    "gap {gap} distance {dist}"
                );
                for d in directions() {
                    prop_assert!(-overlap(&sa, &sb, d) <= dist + ROUNDING * s, "{d}");
                }
            }
            GjkResult::Intersecting { simplex } => {
                // Only the cores of spheres and capsules are flat enough for
                // EPA to have no volume; they never get here in contact
                // generation (fast paths).
                let Some(p) = epa(&sa, &sb, &simplex) else {
                    prop_assert!(a.radius() > 0.0 || b.radius() > 0.0);
                    return Ok(());
                };
                let depth = p.depth as f64;
                prop_assert!(p.normal.is_finite() && p.point_a.is_finite() && p.point_b.is_finite());
                let on_normal = overlap(&sa, &sb, p.normal);
                let error = p.depth_error as f64;
                prop_assert!(
                    on_normal <= depth + error + ROUNDING * s,
                    "overlap along the normal {on_normal} vs depth {depth} + {error}"
                );
                // Polytopes converge to the tolerance. Curved pairs in deep
                // overlap may stop at the vertex budget first: no bound in
                // theory; measured ≤ 1.4e-4 × scale over 75 000 random
                // overlaps, so 5e-4 guards against regressions.
                let limit = if curved(a) || curved(b) {
                    5e-4
                } else {
                    EPA_TOLERANCE as f64 + ROUNDING
                };
                prop_assert!(error <= limit * s, "depth error {error} (scale {s})");
                for d in directions() {
                    let o = overlap(&sa, &sb, d);
                    prop_assert!(o >= depth - ROUNDING * s, "{d}: {o} < {depth}");
                }
            }
            GjkResult::Beyond { .. } => prop_assert!(false),
        }
    }

    /// The deepest point of a manifold never claims more penetration (or
    /// less separation) than some axis allows, for every pair including
    /// planes and the thin box; and every manifold is well formed.
    #[test]
    fn manifold_depth_never_exceeds_the_true_depth(
        ia in 0usize..10, ib in 0usize..10,
        pa in pose_strategy(0.1), pb in pose_strategy(0.8),
    ) {
        let mut all = shapes();
        all.push(Shape::plane(Vec3::new(0.2, 1.0, -0.1), -0.3));
        let (a, b) = (&all[ia], &all[ib]);
        if a.is_plane() && b.is_plane() {
            prop_assert!(manifold(a, &pa, b, &pb, 1.0).is_none());
            return Ok(());
        }
        let spec = 0.05;
        let Some(m) = manifold(a, &pa, b, &pb, spec) else { return Ok(()) };
        super::assert_well_formed(&m);
        let sep = min_separation(&m) as f64;
        prop_assert!(sep <= spec as f64 + 1e-6);
        if a.is_plane() || b.is_plane() {
            return Ok(());
        }
        let sa = ShapeSupport { shape: a, pose: &pa };
        let sb = ShapeSupport { shape: b, pose: &pb };
        // Rounded shapes' supports add radius · d̂, exact.
        let tol = (EPA_TOLERANCE as f64 + ROUNDING) * scale(a, &pa, b, &pb);
        let sharp_polytopes = is_sharp_polytope(a) && is_sharp_polytope(b);
        if sharp_polytopes && sep > 0.0 {
            // Separated sharp polytopes go through the separating-axis test,
            // whose separation is a lower bound of the distance (below it near
            // vertices): a speculative point may claim less separation than
            // the truth, never more.
            let mut max_gap = f64::NEG_INFINITY;
            for d in directions() {
                max_gap = max_gap.max(-overlap(&sa, &sb, d));
            }
            let distance = match gjk(&sa, &sb, pb.position - pa.position, f32::INFINITY) {
                GjkResult::Separated { distance, .. } => distance as f64,
                _ => max_gap.max(0.0),
            };
            // When the incident feature nearest the reference face is
            // clipped away, the points left would claim more room than
            // there is (seen: 3.7 cm for a true 3.4 cm); they are moved in
            // to the axis's separation, a lower bound of the distance.
            prop_assert!(
                sep <= distance + tol,
                "separation {sep} > distance {distance}"
            );
            return Ok(());
        }
        // Sharp polytopes keep their reference face while another axis is
        // better by less than the switching slack (stability of the contact
        // points from frame to frame): their depth may exceed the minimum
        // overlap by that documented slack, and by nothing more.
        let slack = if sharp_polytopes {
            (SWITCH_ABS + SWITCH_REL * (-sep).max(0.0) as f32) as f64
        } else {
            0.0
        };
        for d in directions() {
            let o = overlap(&sa, &sb, d);
            prop_assert!(-sep <= o + tol + slack, "{d}: depth {} > overlap {o}", -sep);
        }
    }
}
