use super::MassProperties;
use crate::physics::aabb::Aabb;
use crate::physics::math::{Pose, Vec3};
use std::f32::consts::PI;

/// A cylinder along +Y, centred at the origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    pub half_height: f32,
    pub radius: f32,
}

impl Cylinder {
    #[inline]
    pub fn support(&self, d: Vec3) -> Vec3 {
        let l = (d.x * d.x + d.z * d.z).sqrt();
        let y = if d.y >= 0.0 {
            self.half_height
        } else {
            -self.half_height
        };
        if l > 1e-12 {
            let s = self.radius / l;
            Vec3::new(d.x * s, y, d.z * s)
        } else {
            Vec3::new(0.0, y, 0.0)
        }
    }

    pub fn aabb(&self, pose: &Pose) -> Aabb {
        disc_sweep_aabb(pose, self.half_height, self.radius)
    }

    pub fn mass_properties(&self, density: f32) -> MassProperties {
        let (r, h) = (self.radius, 2.0 * self.half_height);
        let m = density * PI * r * r * h;
        let ix = m * (3.0 * r * r + h * h) / 12.0;
        MassProperties::diagonal(m, Vec3::ZERO, Vec3::new(ix, 0.5 * m * r * r, ix))
    }
}

/// Exact AABB of a cylinder of the given size: the segment of its axis plus,
/// per world axis i, the extent r·sqrt(1 − a_i²) of a disc with axis a.
pub(crate) fn disc_sweep_aabb(pose: &Pose, half_height: f32, radius: f32) -> Aabb {
    let a = pose.transform_vector(Vec3::Y);
    let disc = Vec3::new(
        (1.0 - a.x * a.x).max(0.0).sqrt(),
        (1.0 - a.y * a.y).max(0.0).sqrt(),
        (1.0 - a.z * a.z).max(0.0).sqrt(),
    ) * radius;
    let h = a.abs() * half_height + disc;
    Aabb::from_center_half_extents(pose.position, h)
}
