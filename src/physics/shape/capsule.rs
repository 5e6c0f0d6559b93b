use super::MassProperties;
use crate::physics::aabb::Aabb;
use crate::physics::math::{Pose, Vec3};
use std::f32::consts::PI;

/// A capsule along +Y: the segment (0, ±half_height, 0) swept by `radius`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    pub half_height: f32,
    pub radius: f32,
}

impl Capsule {
    #[inline]
    pub fn support_core(&self, d: Vec3) -> Vec3 {
        Vec3::new(
            0.0,
            if d.y >= 0.0 {
                self.half_height
            } else {
                -self.half_height
            },
            0.0,
        )
    }

    /// The two segment end points in world space.
    pub fn segment(&self, pose: &Pose) -> (Vec3, Vec3) {
        let a = pose.transform_vector(Vec3::new(0.0, self.half_height, 0.0));
        (pose.position - a, pose.position + a)
    }

    pub fn core_aabb(&self, pose: &Pose) -> Aabb {
        let (a, b) = self.segment(pose);
        Aabb::new(a.min(b), a.max(b))
    }

    pub fn mass_properties(&self, density: f32, margin: f32) -> MassProperties {
        let r = self.radius + margin;
        let h = 2.0 * self.half_height;
        let mc = density * PI * r * r * h;
        let ms = density * 4.0 / 3.0 * PI * r * r * r;
        let iy = mc * r * r / 2.0 + ms * 2.0 * r * r / 5.0;
        // Hemispheres: own inertia about their centroid (3r/8 from the flat
        // face) moved to the capsule centre by the parallel-axis theorem.
        let ix = mc * (h * h / 12.0 + r * r / 4.0)
            + ms * (2.0 * r * r / 5.0 + h * h / 4.0 + 3.0 * h * r / 8.0);
        MassProperties::diagonal(mc + ms, Vec3::ZERO, Vec3::new(ix, iy, ix))
    }
}
