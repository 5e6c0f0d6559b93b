//! Tests of the collision queries against closed-form answers and brute force.

mod contact;
mod depth_bounds;
mod gjk_brute_force;
mod ray;

use super::{contact_manifold, Manifold, PairCache};
use crate::physics::math::{Pose, Quat, Vec3};
use crate::physics::shape::Shape;

/// Manifold with a fresh cache.
fn manifold(a: &Shape, pa: &Pose, b: &Shape, pb: &Pose, spec: f32) -> Option<Manifold> {
    contact_manifold(a, pa, b, pb, spec, &mut PairCache::default())
}

fn min_separation(m: &Manifold) -> f32 {
    m.points()
        .iter()
        .map(|p| p.separation)
        .fold(f32::INFINITY, f32::min)
}

/// Everything finite, the normal unit, and each point's separation equal to
/// (point_b − point_a)·normal.
fn assert_well_formed(m: &Manifold) {
    assert!(m.count >= 1 && m.count <= 4, "{m:?}");
    assert!(m.normal.is_finite(), "{m:?}");
    assert!((m.normal.length() - 1.0).abs() < 1e-4, "{m:?}");
    for p in m.points() {
        assert!(
            p.point_a.is_finite() && p.point_b.is_finite() && p.separation.is_finite(),
            "{m:?}"
        );
        let s = (p.point_b - p.point_a).dot(m.normal);
        assert!(
            (s - p.separation).abs() <= 1e-4 * (1.0 + p.point_a.abs().max_element()),
            "separation {} vs {s}: {m:?}",
            p.separation
        );
    }
}

fn rot(axis: Vec3, angle: f32) -> Quat {
    Quat::from_axis_angle(axis.normalize(), angle)
}

fn tetra_hull() -> Shape {
    Shape::convex_hull(&[
        Vec3::new(0.6, -0.4, 0.3),
        Vec3::new(-0.5, -0.4, 0.4),
        Vec3::new(0.0, -0.4, -0.6),
        Vec3::new(0.1, 0.7, 0.0),
        Vec3::new(0.2, 0.1, 0.1),
    ])
    .unwrap()
}

/// One of each convex shape kind, plus rounded variants.
fn zoo() -> Vec<(&'static str, Shape)> {
    vec![
        ("sphere", Shape::sphere(0.5)),
        ("box", Shape::cuboid(Vec3::new(0.5, 0.3, 0.4))),
        ("capsule", Shape::capsule(0.4, 0.25)),
        ("cylinder", Shape::cylinder(0.4, 0.35)),
        ("cone", Shape::cone(0.45, 0.4)),
        ("hull", tetra_hull()),
        (
            "rounded box",
            Shape::cuboid(Vec3::new(0.4, 0.2, 0.3)).with_margin(0.05),
        ),
        (
            "rounded cylinder",
            Shape::cylinder(0.35, 0.3).with_margin(0.05),
        ),
    ]
}
