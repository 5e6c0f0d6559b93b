//! Shape casts: the first time a convex shape moving along a translation
//! touches another convex shape.
//!
//! A moved by λ·d touches B when some a + λ·d = b, i.e. when λ·d lies in the
//! Minkowski difference B − A. So the cast is a ray cast from the origin along
//! d against B − A, done by the GJK ray cast: the ray is clipped by support
//! planes of B − A until the ray point lies in it; the last clipping plane's
//! normal is the contact normal. Only support mappings are used, so every pair
//! of convex shapes (rounded or not) works the same way.

use super::gjk::{gjk, CoreSupport, GjkResult, ShapeSupport, SupportMap};
use super::ray::gjk_ray_cast_with_tolerance;
use crate::physics::math::{Pose, Vec3};
use crate::physics::shape::Shape;

/// Where and when a cast shape first touches the target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeCastHit {
    /// Fraction of the translation travelled at first contact, in [0, 1].
    pub toi: f32,
    /// World contact point (on the target's surface).
    pub point: Vec3,
    /// Contact normal, pointing from the target towards the cast shape.
    pub normal: Vec3,
}

/// The set B − A as a support mapping.
struct MinkowskiDifference<'a> {
    a: ShapeSupport<'a>,
    b: ShapeSupport<'a>,
}

impl SupportMap for MinkowskiDifference<'_> {
    #[inline]
    fn support(&self, dir: Vec3) -> Vec3 {
        self.b.support(dir) - self.a.support(-dir)
    }
}

/// Casts `a` from `pose_a` along `translation` against `b` at `pose_b`.
/// `tolerance` (m) is how close the ray point must get to B − A to count as a
/// hit: the reported time is within about tolerance/|translation| of the true
/// one. Shapes already overlapping report `toi = 0`.
pub fn shape_cast(
    a: &Shape,
    pose_a: &Pose,
    translation: Vec3,
    b: &Shape,
    pose_b: &Pose,
    tolerance: f32,
) -> Option<ShapeCastHit> {
    let len = translation.length();
    if a.is_plane() || b.is_plane() || !(len.is_finite() && tolerance > 0.0) {
        return None;
    }
    // Work relative to A's start so far-off poses keep their precision.
    let origin = pose_a.position;
    let pa = Pose::new(Vec3::ZERO, pose_a.rotation);
    let pb = Pose::new(pose_b.position - origin, pose_b.rotation);
    let md = MinkowskiDifference {
        a: ShapeSupport {
            shape: a,
            pose: &pa,
        },
        b: ShapeSupport {
            shape: b,
            pose: &pb,
        },
    };
    if len == 0.0 {
        let touching = match gjk(&md.a, &md.b, pb.position, tolerance) {
            GjkResult::Intersecting { .. } => true,
            GjkResult::Separated { distance, .. } => distance <= tolerance,
            GjkResult::Beyond { .. } => false,
        };
        return touching.then_some(ShapeCastHit {
            toi: 0.0,
            point: pose_a.position,
            normal: Vec3::ZERO,
        });
    }
    let dir = translation / len;
    let hit = gjk_ray_cast_with_tolerance(&md, tolerance, Vec3::ZERO, dir, len)?;
    let toi = (hit.t / len).clamp(0.0, 1.0);
    // The contact point: closest points of the two shapes at the hit pose.
    let moved = Pose::new(translation * toi, pose_a.rotation);
    let (ca, cb) = (
        CoreSupport {
            shape: a,
            pose: &moved,
        },
        CoreSupport {
            shape: b,
            pose: &pb,
        },
    );
    let point = match gjk(&ca, &cb, -hit.normal, f32::INFINITY) {
        GjkResult::Separated {
            point_b, normal, ..
        } => point_b - normal * b.radius(),
        _ => moved.position,
    };
    Some(ShapeCastHit {
        toi,
        point: point + origin,
        normal: hit.normal,
    })
}
