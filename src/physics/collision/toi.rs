//! Time of impact for bodies that translate and rotate: conservative
//! advancement.
//!
//! Each body moves over the interval with constant linear and angular
//! velocity (the sweep). No point of a body moves farther than
//! |Δx| + |Δθ|·ρ over the interval, with ρ the largest distance from the
//! centre of mass to the surface. So if the shapes are `d` apart and the
//! relative approach along the separating normal is bounded by `μ` per unit
//! of time, they cannot touch before `d / μ`: advancing by that much is safe.
//! Repeating with the new distance converges to the first contact from below,
//! so the answer is never later than the true time of impact.

use super::gjk::{gjk, CoreSupport, GjkResult};
use crate::physics::math::{Pose, Quat, Vec3};
use crate::physics::shape::Shape;

/// The motion of a body over an interval t ∈ [0, 1]: its centre of mass moves
/// by `dx` and it turns by the rotation vector `dtheta`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sweep {
    /// Centre of mass at t = 0.
    pub com: Vec3,
    /// Rotation at t = 0.
    pub rotation: Quat,
    /// Centre of mass in the shape's frame.
    pub local_center: Vec3,
    pub dx: Vec3,
    pub dtheta: Vec3,
}

impl Sweep {
    /// A body at rest at `pose`.
    pub fn fixed(pose: Pose) -> Self {
        Self {
            com: pose.position,
            rotation: pose.rotation,
            local_center: Vec3::ZERO,
            dx: Vec3::ZERO,
            dtheta: Vec3::ZERO,
        }
    }

    /// The shape's pose at time t.
    pub fn pose_at(&self, t: f32) -> Pose {
        let com = self.com + self.dx * t;
        let rot = (Quat::from_scaled_axis(self.dtheta * t) * self.rotation).normalize();
        Pose::new(com - rot * self.local_center, rot)
    }

    /// Bound on how far any point within `rho` of the centre of mass moves
    /// per unit of t, split into translation and rotation.
    fn angular_bound(&self, rho: f32) -> f32 {
        self.dtheta.length() * rho
    }
}

/// Result of a time-of-impact query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Toi {
    /// The shapes come within `target` of each other at `t` (a lower bound of
    /// the true time). `normal` points from A to B; points are on the surfaces.
    Hit {
        t: f32,
        normal: Vec3,
        point_a: Vec3,
        point_b: Vec3,
        iterations: u32,
    },
    /// They already overlap at the start time.
    Overlapping,
    /// No contact within the interval.
    Miss,
}

/// Settings of conservative advancement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToiSettings {
    /// Surface distance at which to stop (a little above zero, so the bodies
    /// end close but apart).
    pub target: f32,
    /// Accept a hit once the distance is within this of the target.
    pub tolerance: f32,
    pub max_iterations: u32,
}

impl Default for ToiSettings {
    fn default() -> Self {
        Self {
            target: 0.005,
            tolerance: 0.001,
            max_iterations: 48,
        }
    }
}

/// First time in [t_start, 1] at which the surfaces of `a` and `b` come
/// within `settings.target`. `rho_a`/`rho_b` bound the distance from each
/// centre of mass to its surface.
#[allow(clippy::too_many_arguments)]
pub fn time_of_impact(
    a: &Shape,
    sweep_a: &Sweep,
    rho_a: f32,
    b: &Shape,
    sweep_b: &Sweep,
    rho_b: f32,
    t_start: f32,
    settings: &ToiSettings,
) -> Toi {
    let radii = a.radius() + b.radius();
    let dx = sweep_b.dx - sweep_a.dx;
    let spin = sweep_a.angular_bound(rho_a) + sweep_b.angular_bound(rho_b);
    let mut t = t_start;
    let mut dir = sweep_b.com - sweep_a.com;
    for iteration in 0..settings.max_iterations {
        let (pa, pb) = (sweep_a.pose_at(t), sweep_b.pose_at(t));
        let ca = CoreSupport {
            shape: a,
            pose: &pa,
        };
        let cb = CoreSupport {
            shape: b,
            pose: &pb,
        };
        let (distance, normal, point_a, point_b) = match gjk(&ca, &cb, dir, f32::INFINITY) {
            GjkResult::Separated {
                distance,
                point_a,
                point_b,
                normal,
            } => (
                distance - radii,
                normal,
                point_a + normal * a.radius(),
                point_b - normal * b.radius(),
            ),
            GjkResult::Beyond {
                lower_bound,
                normal,
            } => (lower_bound - radii, normal, pa.position, pb.position),
            GjkResult::Intersecting { .. } => {
                return if t == t_start {
                    Toi::Overlapping
                } else {
                    Toi::Hit {
                        t,
                        normal: dir.normalize_or_zero(),
                        point_a: pa.position,
                        point_b: pb.position,
                        iterations: iteration,
                    }
                };
            }
        };
        if distance <= 0.0 && t == t_start {
            return Toi::Overlapping;
        }
        if distance <= settings.target + settings.tolerance {
            return Toi::Hit {
                t,
                normal,
                point_a,
                point_b,
                iterations: iteration,
            };
        }
        dir = normal;
        // Approach speed bound along the normal (per unit t).
        let mu = -dx.dot(normal) + spin;
        if mu <= 0.0 {
            return Toi::Miss;
        }
        t += (distance - settings.target) / mu;
        if t > 1.0 {
            return Toi::Miss;
        }
    }
    // Out of iterations: t is still a safe lower bound; report it as the hit.
    let (pa, pb) = (sweep_a.pose_at(t), sweep_b.pose_at(t));
    Toi::Hit {
        t,
        normal: dir.normalize_or_zero(),
        point_a: pa.position,
        point_b: pb.position,
        iterations: settings.max_iterations,
    }
}
