use crate::physics::aabb::Aabb;
use crate::physics::math::{Pose, Vec3};

/// A static half-space: points x with normal·x ≤ offset are inside (solid
/// below the plane). The normal is stored unit length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    pub normal: Vec3,
    pub offset: f32,
}

/// Extent used for the plane's box; planes never enter the broad phase.
const PLANE_EXTENT: f32 = 1.0e9;

impl Plane {
    pub fn new(normal: Vec3, offset: f32) -> Self {
        let len = normal.length();
        if len > 0.0 && len.is_finite() {
            Self {
                normal: normal / len,
                offset: offset / len,
            }
        } else {
            Self { normal, offset }
        }
    }

    /// A half-space has no bounded support; this returns the point of the
    /// plane's surface nearest the origin, which callers never rely on.
    pub fn support(&self, _d: Vec3) -> Vec3 {
        self.normal * self.offset
    }

    pub fn aabb(&self, _pose: &Pose) -> Aabb {
        Aabb::new(Vec3::splat(-PLANE_EXTENT), Vec3::splat(PLANE_EXTENT))
    }

    /// The plane in world space for a pose (normal·x = offset).
    pub fn to_world(&self, pose: &Pose) -> Plane {
        let n = pose.transform_vector(self.normal);
        let p = pose.transform_point(self.normal * self.offset);
        Plane {
            normal: n,
            offset: n.dot(p),
        }
    }

    /// Signed distance of a world point (positive above).
    #[inline]
    pub fn distance(&self, p: Vec3) -> f32 {
        self.normal.dot(p) - self.offset
    }

    /// Signed distance of a box's point deepest along `-normal` (its
    /// nearest to the solid side; negative: the box reaches into it).
    #[inline]
    pub fn box_distance(&self, b: &Aabb) -> f32 {
        self.distance(b.center()) - b.half_extents().dot(self.normal.abs())
    }
}
