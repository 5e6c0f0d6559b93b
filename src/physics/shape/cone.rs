use super::cylinder::disc_sweep_aabb;
use super::MassProperties;
use crate::physics::aabb::Aabb;
use crate::physics::math::{Pose, Vec3};
use std::f32::consts::PI;

/// A cone along +Y, apex up at (0, half_height, 0), base disc at
/// y = −half_height. The local origin is the middle of the axis, so the
/// centre of mass is at y = −half_height / 2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cone {
    pub half_height: f32,
    pub radius: f32,
}

impl Cone {
    #[inline]
    pub fn support(&self, d: Vec3) -> Vec3 {
        let (r, hh) = (self.radius, self.half_height);
        // The apex wins when d lies inside the cone of normals at the apex:
        // d.y / |d| > sin(α) with tan(α) = r / (2·hh).
        let sin_a = r / (r * r + 4.0 * hh * hh).sqrt();
        let len = d.length();
        if d.y > len * sin_a {
            return Vec3::new(0.0, hh, 0.0);
        }
        let l = (d.x * d.x + d.z * d.z).sqrt();
        if l > 1e-12 {
            let s = r / l;
            Vec3::new(d.x * s, -hh, d.z * s)
        } else {
            Vec3::new(0.0, -hh, 0.0)
        }
    }

    /// Conservative: the bounding cylinder's box.
    pub fn aabb(&self, pose: &Pose) -> Aabb {
        disc_sweep_aabb(pose, self.half_height, self.radius)
    }

    pub fn mass_properties(&self, density: f32) -> MassProperties {
        let (r, h) = (self.radius, 2.0 * self.half_height);
        let m = density * PI * r * r * h / 3.0;
        let ix = m * (3.0 * r * r / 20.0 + 3.0 * h * h / 80.0);
        MassProperties::diagonal(
            m,
            Vec3::new(0.0, -self.half_height / 2.0, 0.0),
            Vec3::new(ix, 0.3 * m * r * r, ix),
        )
    }
}
