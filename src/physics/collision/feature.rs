//! Support features: the vertex, edge or face of a shape's core that
//! supports it along a direction. Contact manifolds clip these against each
//! other (`manifold::clip_features`).
//!
//! A feature is chosen with an angular tolerance, [`FEATURE_SIN`]: a box
//! whose face normal is within about 3° of the direction offers the whole
//! face, so a box resting almost flat still gets four contact points (the
//! slightly higher ones become speculative points). Ids are fixed in the
//! body's frame where the geometry has fixed vertices (box corners, the
//! rim points of a cylinder cap), so the solver can match them frame to
//! frame.

use super::manifold::SupportFeature;
use crate::physics::math::{Pose, Vec3};
use crate::physics::shape::{Cone, Cylinder, Shape, ShapeKind};

/// Sine of the angle within which a direction counts as perpendicular to an
/// edge or a face (about 2.9°).
pub const FEATURE_SIN: f32 = 0.05;

/// Number of rim points a cylinder or cone cap offers as a face polygon.
pub const CAP_POINTS: usize = 8;

/// The support feature of `shape`'s core at `pose` along the world direction
/// `dir` (need not be unit), in world space.
pub fn support_feature(shape: &Shape, pose: &Pose, dir: Vec3) -> SupportFeature {
    let dl = pose.inverse_transform_vector(dir).normalize_or(Vec3::Y);
    let mut f = SupportFeature::default();
    match &shape.kind {
        ShapeKind::Sphere(_) => f.push(pose.position, 0),
        ShapeKind::Box(b) => return b.support_feature(pose, dl),
        ShapeKind::Capsule(c) => {
            if dl.y.abs() < FEATURE_SIN {
                f.push(Vec3::new(0.0, -c.half_height, 0.0), 0);
                f.push(Vec3::new(0.0, c.half_height, 0.0), 1);
            } else if dl.y > 0.0 {
                f.push(Vec3::new(0.0, c.half_height, 0.0), 1);
            } else {
                f.push(Vec3::new(0.0, -c.half_height, 0.0), 0);
            }
        }
        ShapeKind::Cylinder(c) => cylinder_feature(c, dl, &mut f),
        ShapeKind::Cone(c) => cone_feature(c, dl, &mut f),
        // The hull's own feature is already in world space.
        ShapeKind::ConvexHull(h) => return h.support_feature(pose, dl),
        ShapeKind::Plane(p) => f.push(p.normal * p.offset, 0),
    }
    for p in &mut f.points[..f.count] {
        *p = pose.transform_point(*p);
    }
    f
}

/// Corner `i` of a box: bit 0, 1, 2 set for +x, +y, +z.
#[inline]
pub fn box_corner(h: Vec3, i: u8) -> Vec3 {
    Vec3::new(
        if i & 1 != 0 { h.x } else { -h.x },
        if i & 2 != 0 { h.y } else { -h.y },
        if i & 4 != 0 { h.z } else { -h.z },
    )
}

/// The corners of the box face with outward normal `sign`·e_axis,
/// counter-clockwise seen from outside. Face id = 2·axis + (sign > 0).
pub fn box_face(axis: usize, positive: bool) -> [u8; 4] {
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let k = if positive { 1u8 << axis } else { 0 };
    let c = |su: bool, sv: bool| k | (su as u8) << u | (sv as u8) << v;
    if positive {
        [
            c(true, true),
            c(false, true),
            c(false, false),
            c(true, false),
        ]
    } else {
        [
            c(true, false),
            c(false, false),
            c(false, true),
            c(true, true),
        ]
    }
}

/// Rim point `k` of a cap (of CAP_POINTS), counter-clockwise about +Y.
fn rim_point(radius: f32, y: f32, k: usize) -> Vec3 {
    let ang = k as f32 * (std::f32::consts::TAU / CAP_POINTS as f32);
    Vec3::new(radius * ang.sin(), y, radius * ang.cos())
}

/// A cap polygon at height `y`, counter-clockwise seen from outside
/// (from +Y when `top`). Ids: bottom cap 0‥7, top cap 8‥15.
///
/// `horiz` is the horizontal part of the direction. Unless the direction is
/// square to the cap, the rim vertex nearest to it is moved onto the exact
/// support point, so that the deepest point of a slightly tilted cap is in
/// the polygon (the polygon stays convex: the vertex moves less than half
/// the spacing).
fn push_cap(radius: f32, y: f32, top: bool, horiz: Vec3, f: &mut SupportFeature) {
    let step = std::f32::consts::TAU / CAP_POINTS as f32;
    let exact = (horiz.length() > 1e-4).then(|| {
        let ang = horiz.x.atan2(horiz.z).rem_euclid(std::f32::consts::TAU);
        let slot = ((ang / step).round() as usize) % CAP_POINTS;
        let u = horiz.normalize();
        (slot, Vec3::new(u.x * radius, y, u.z * radius))
    });
    for i in 0..CAP_POINTS {
        let k = if top { i } else { CAP_POINTS - 1 - i };
        let id = if top { CAP_POINTS + k } else { k };
        let p = match exact {
            Some((slot, p)) if slot == k => p,
            _ => rim_point(radius, y, k),
        };
        f.push(p, id as u8);
    }
    f.face = top as u8;
}

/// Ids for points that are not fixed rim vertices.
const ID_SIDE_BOTTOM: u8 = 16;
const ID_SIDE_TOP: u8 = 17;
const ID_APEX: u8 = 18;

fn cylinder_feature(c: &Cylinder, dl: Vec3, f: &mut SupportFeature) {
    let horiz = Vec3::new(dl.x, 0.0, dl.z);
    let hl = horiz.length();
    let y = if dl.y >= 0.0 {
        c.half_height
    } else {
        -c.half_height
    };
    if hl < FEATURE_SIN {
        push_cap(c.radius, y, dl.y >= 0.0, horiz, f);
        return;
    }
    let u = horiz / hl * c.radius;
    if dl.y.abs() < FEATURE_SIN {
        f.push(u - Vec3::Y * c.half_height, ID_SIDE_BOTTOM);
        f.push(u + Vec3::Y * c.half_height, ID_SIDE_TOP);
        f.face = 2;
    } else {
        let id = if dl.y >= 0.0 {
            ID_SIDE_TOP
        } else {
            ID_SIDE_BOTTOM
        };
        f.push(u + Vec3::Y * y, id);
    }
}

fn cone_feature(c: &Cone, dl: Vec3, f: &mut SupportFeature) {
    let apex = Vec3::Y * c.half_height;
    let horiz = Vec3::new(dl.x, 0.0, dl.z);
    let hl = horiz.length();
    if hl < FEATURE_SIN {
        if dl.y < 0.0 {
            push_cap(c.radius, -c.half_height, false, horiz, f);
        } else {
            f.push(apex, ID_APEX);
        }
        return;
    }
    let u = horiz / hl;
    let rim = u * c.radius - Vec3::Y * c.half_height;
    // Outward normal of the side line through `rim` and the apex.
    let side = Vec3::new(
        u.x * 2.0 * c.half_height,
        c.radius,
        u.z * 2.0 * c.half_height,
    )
    .normalize_or(Vec3::Y);
    if dl.cross(side).length() < FEATURE_SIN && dl.dot(side) > 0.0 {
        f.push(rim, ID_SIDE_BOTTOM);
        f.push(apex, ID_APEX);
        f.face = 1;
    } else if c.support(dl).y > 0.0 {
        f.push(apex, ID_APEX);
    } else {
        f.push(rim, ID_SIDE_BOTTOM);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::math::Quat;

    #[test]
    fn box_faces_are_ccw_from_outside() {
        let h = Vec3::new(1.0, 2.0, 3.0);
        for axis in 0..3 {
            for positive in [false, true] {
                let c = box_face(axis, positive).map(|i| box_corner(h, i));
                let n = (c[1] - c[0]).cross(c[2] - c[0]);
                let mut expect = Vec3::ZERO;
                expect[axis] = if positive { 1.0 } else { -1.0 };
                assert!(n.normalize().dot(expect) > 0.999, "{axis} {positive}");
                for p in c {
                    assert_eq!(p[axis], expect[axis] * h[axis]);
                }
            }
        }
    }

    #[test]
    fn box_feature_kinds() {
        let s = Shape::cuboid(Vec3::ONE);
        let pose = Pose::IDENTITY;
        assert_eq!(support_feature(&s, &pose, Vec3::Y).count, 4);
        assert_eq!(
            support_feature(&s, &pose, Vec3::new(0.02, 1.0, 0.0)).count,
            4
        );
        assert_eq!(
            support_feature(&s, &pose, Vec3::new(1.0, 1.0, 0.0)).count,
            2
        );
        assert_eq!(
            support_feature(&s, &pose, Vec3::new(1.0, 1.0, 1.0)).count,
            1
        );
    }

    #[test]
    fn cap_polygons_are_ccw_from_outside() {
        let s = Shape::cylinder(1.0, 0.5);
        let pose = Pose::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_x(0.3));
        for d in [Vec3::Y, -Vec3::Y] {
            let wd = pose.transform_vector(d);
            let f = support_feature(&s, &pose, wd);
            assert_eq!(f.count, CAP_POINTS);
            let p = f.points();
            let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize();
            assert!(n.dot(wd) > 0.999);
        }
        let cone = Shape::cone(1.0, 0.5);
        let f = support_feature(&cone, &Pose::IDENTITY, -Vec3::Y);
        let p = f.points();
        assert!((p[1] - p[0]).cross(p[2] - p[0]).y < 0.0);
    }

    #[test]
    fn tilted_cap_holds_the_exact_support_point() {
        let s = Shape::cylinder(1.0, 0.5);
        let pose = Pose::new(Vec3::new(0.5, 0.0, 0.0), Quat::from_rotation_z(0.3));
        // 2° off the axis, between two rim vertices.
        let d = pose.transform_vector(Vec3::new(0.035 * 0.3f32.sin(), 1.0, 0.035 * 0.3f32.cos()));
        let f = support_feature(&s, &pose, d);
        assert_eq!(f.count, CAP_POINTS);
        let best = s.support_core_world(&pose, d);
        assert!(f.points().iter().any(|p| (*p - best).length() < 1e-6));
        let p = f.points();
        for i in 0..CAP_POINTS {
            let (a, b, c) = (p[i], p[(i + 1) % CAP_POINTS], p[(i + 2) % CAP_POINTS]);
            assert!((b - a).cross(c - b).dot(d) > 0.0, "convex, ccw");
        }
    }

    #[test]
    fn cone_side_segment() {
        let cone = Shape::cone(1.0, 1.0);
        // Side normal for radial +X: (2hh, r) normalised.
        let d = Vec3::new(2.0, 1.0, 0.0);
        let f = support_feature(&cone, &Pose::IDENTITY, d);
        assert_eq!(f.count, 2);
        assert!(f.points().contains(&Vec3::new(0.0, 1.0, 0.0)));
        assert!(f.points().contains(&Vec3::new(1.0, -1.0, 0.0)));
    }
}
