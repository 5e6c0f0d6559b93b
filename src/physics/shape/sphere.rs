use super::MassProperties;
use crate::physics::math::Vec3;

/// A sphere centred at the origin: a point core swept by `radius`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    pub radius: f32,
}

impl Sphere {
    pub fn mass_properties(&self, density: f32, margin: f32) -> MassProperties {
        let r = self.radius + margin;
        let m = density * 4.0 / 3.0 * std::f32::consts::PI * r * r * r;
        MassProperties::diagonal(m, Vec3::ZERO, Vec3::splat(0.4 * m * r * r))
    }
}
