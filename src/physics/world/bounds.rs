//! The world's bounds (stage 7 of the step): where a scene's coordinates
//! and speeds end, so does the world.

use super::World;
use crate::physics::body::Body;
use crate::physics::math::{Pose, Vec3};
use crate::physics::scene::{MAX_ANGULAR_SPEED, MAX_COORD, MAX_SPEED};

/// Slows a body to the speed caps of a scene.
pub(super) fn cap_speeds(b: &mut Body) {
    b.linear_velocity = b.linear_velocity.clamp_length_max(MAX_SPEED);
    b.angular_velocity = b.angular_velocity.clamp_length_max(MAX_ANGULAR_SPEED);
}

impl World {
    /// The world ends where a scene's coordinates do (±[`MAX_COORD`] on
    /// each axis), and speeds where a scene's do ([`MAX_SPEED`],
    /// [`MAX_ANGULAR_SPEED`]), so that every snapshot loads back as a
    /// scene: a body falling with nothing under it passed ±10⁵ m after
    /// 143 s, and an impulse of 10⁹ N·s at 10⁵ m turned a body at 2.6·10¹²
    /// rad/s. A body whose position (its shape's origin) leaves the bounds
    /// stops there (moved back onto them, its velocities zeroed); a cable with a particle beyond
    /// them stops whole (each particle beyond moved back onto them, every
    /// particle's velocity zeroed). Faster bodies and particles are slowed
    /// to those speeds.
    pub(super) fn keep_in_bounds(&mut self) {
        let inside = |p: Vec3| p.clamp(Vec3::splat(-MAX_COORD), Vec3::splat(MAX_COORD));
        for (_, b) in self.bodies.iter_mut() {
            if b.is_static() || b.sleeping {
                continue;
            }
            cap_speeds(b);
            let p = b.pose.position;
            let q = inside(p);
            if q != p {
                b.set_pose(Pose::new(q, b.pose.rotation));
                b.linear_velocity = Vec3::ZERO;
                b.angular_velocity = Vec3::ZERO;
            }
        }
        for c in &mut self.cables {
            // (A cable falls asleep inside the cable stage, before this:
            // one that slept beyond the bounds is brought back too.)
            for v in &mut c.v {
                *v = v.clamp_length_max(MAX_SPEED);
            }
            if c.x.iter().any(|&p| inside(p) != p) {
                for p in &mut c.x {
                    *p = inside(*p);
                }
                c.v.iter_mut().for_each(|v| *v = Vec3::ZERO);
            }
        }
    }
}
