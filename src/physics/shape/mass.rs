//! Mass properties.

use crate::physics::math::{Mat3, Vec3};

/// Mass, centre of mass (local frame) and inertia tensor about the centre of
/// mass, in the shape's local frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    pub mass: f32,
    pub local_center: Vec3,
    pub inertia: Mat3,
}

impl MassProperties {
    pub const INFINITE: MassProperties = MassProperties {
        mass: f32::INFINITY,
        local_center: Vec3::ZERO,
        inertia: Mat3::ZERO,
    };

    pub fn diagonal(mass: f32, local_center: Vec3, diag: Vec3) -> Self {
        Self {
            mass,
            local_center,
            inertia: Mat3::from_diagonal(diag),
        }
    }

    /// The same body scaled to a different total mass.
    pub fn with_mass(&self, mass: f32) -> Self {
        let s = if self.mass > 0.0 {
            mass / self.mass
        } else {
            0.0
        };
        Self {
            mass,
            local_center: self.local_center,
            inertia: self.inertia * s,
        }
    }
}
