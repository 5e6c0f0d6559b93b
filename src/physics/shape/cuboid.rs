use super::{rotated_extents, MassProperties};
use crate::physics::aabb::Aabb;
use crate::physics::math::{Pose, Vec3};

/// A box centred at the origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    pub half_extents: Vec3,
}

impl Cuboid {
    #[inline]
    pub fn support(&self, d: Vec3) -> Vec3 {
        let h = self.half_extents;
        Vec3::new(
            if d.x >= 0.0 { h.x } else { -h.x },
            if d.y >= 0.0 { h.y } else { -h.y },
            if d.z >= 0.0 { h.z } else { -h.z },
        )
    }

    pub fn aabb(&self, pose: &Pose) -> Aabb {
        Aabb::from_center_half_extents(pose.position, rotated_extents(pose, self.half_extents))
    }

    pub fn mass_properties(&self, density: f32) -> MassProperties {
        let s = self.half_extents * 2.0;
        let m = density * s.x * s.y * s.z;
        let k = m / 12.0;
        MassProperties::diagonal(
            m,
            Vec3::ZERO,
            Vec3::new(
                k * (s.y * s.y + s.z * s.z),
                k * (s.x * s.x + s.z * s.z),
                k * (s.x * s.x + s.y * s.y),
            ),
        )
    }
}
