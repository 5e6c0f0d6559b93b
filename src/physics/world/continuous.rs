//! Stage 5 of the step: continuous collision (see `physics/ccd.rs`).

use super::World;
use crate::physics::body::Body;
use crate::physics::ccd::{self, CcdBody, CcdStats};
use crate::physics::collision::toi::Sweep;
use crate::physics::math::{Pose, Quat, Vec3};
use std::collections::HashMap;

impl World {
    /// Counters of the last step's continuous-collision pass.
    pub fn ccd_stats(&self) -> CcdStats {
        self.ccd_stats
    }

    /// Stage 5: sweeps the bodies that could have tunnelled (see `ccd.rs`).
    pub(super) fn continuous(&mut self, dt: f32) {
        self.ccd_stats = CcdStats::default();
        self.ccd_impacts.clear();
        let settings = self.settings.ccd;
        if !settings.enabled {
            return;
        }
        // Fast bodies, from their motion in this step.
        let mut fast = vec![false; self.bodies.capacity()];
        let mut any = false;
        for (h, b) in self.bodies.iter() {
            if !b.is_dynamic() {
                continue;
            }
            let Some(motion) = step_motion(&self.solver_index, &self.start_state, h.index, b)
            else {
                continue;
            };
            if b.ccd || motion > settings.motion_fraction * b.shape.thickness() {
                fast[h.index as usize] = true;
                any = true;
            }
        }
        if !any {
            return;
        }
        // Dense list: fast bodies and everything they may touch.
        let mut dense: HashMap<u32, u32> = HashMap::new();
        let mut order: Vec<u32> = Vec::new();
        let mut links: Vec<(u32, u32)> = Vec::new();
        for c in &self.contacts.contacts {
            if fast[c.a as usize] || fast[c.b as usize] {
                for i in [c.a, c.b] {
                    dense.entry(i).or_insert_with(|| {
                        order.push(i);
                        order.len() as u32 - 1
                    });
                }
                links.push((dense[&c.a], dense[&c.b]));
            }
        }
        let mut neighbours = vec![Vec::new(); order.len()];
        for &(a, b) in &links {
            // Planes are only ever the second of a pair.
            let (pa, pb) = (order[a as usize], order[b as usize]);
            let plane_a = self.bodies.by_index(pa).is_some_and(|x| x.shape.is_plane());
            let plane_b = self.bodies.by_index(pb).is_some_and(|x| x.shape.is_plane());
            if fast[pa as usize] && !plane_a {
                neighbours[a as usize].push(b);
            }
            if fast[pb as usize] && !plane_b {
                neighbours[b as usize].push(a);
            }
        }
        let mut items: Vec<CcdBody> = order
            .iter()
            .map(|&slot| {
                let b = self.bodies.by_index(slot).expect("contact bodies exist");
                let si = self.solver_index[slot as usize] as usize;
                let moving = si != 0;
                let sweep = if moving {
                    let (com0, q0) = self.start_state[si];
                    let mut dq = b.pose.rotation * q0.inverse();
                    if dq.w < 0.0 {
                        dq = -dq;
                    }
                    Sweep {
                        com: com0,
                        rotation: q0,
                        local_center: b.local_center,
                        dx: b.com - com0,
                        dtheta: dq.to_scaled_axis(),
                    }
                } else {
                    Sweep {
                        com: b.com,
                        rotation: b.pose.rotation,
                        local_center: b.local_center,
                        dx: Vec3::ZERO,
                        dtheta: Vec3::ZERO,
                    }
                };
                CcdBody {
                    shape: &b.shape,
                    sweep,
                    rho: b.bounding_radius,
                    inv_mass: b.inv_mass,
                    inv_inertia_local: b.inv_inertia_local,
                    v: b.linear_velocity,
                    w: b.angular_velocity,
                    friction: b.friction,
                    restitution: b.restitution,
                    movable: moving && b.is_dynamic(),
                    candidate: fast[slot as usize] && !b.shape.is_plane(),
                    t: 0.0,
                    version: 0,
                    impacts: 0,
                    changed: false,
                }
            })
            .collect();
        let mut impacts = Vec::new();
        self.ccd_stats = ccd::solve_impacts(
            &mut items,
            &neighbours,
            dt,
            &settings,
            self.settings.solver.restitution_threshold,
            &mut impacts,
        );
        // By the pair's slots, lower first, the normal from it.
        self.ccd_impacts.extend(impacts.iter().map(|i| {
            let (a, b) = (order[i.a as usize], order[i.b as usize]);
            let normal = if a < b { i.normal } else { -i.normal };
            (a.min(b), a.max(b), i.impulse, i.point, normal)
        }));
        let updates: Vec<(u32, Pose, Vec3, Vec3)> = items
            .iter()
            .zip(&order)
            .filter(|(it, _)| it.changed)
            .map(|(it, &slot)| (slot, it.sweep.pose_at(1.0), it.v, it.w))
            .collect();
        drop(items);
        for (slot, pose, v, w) in updates {
            if let Some(b) = self.bodies.by_index_mut(slot) {
                if pose.position.is_finite()
                    && pose.rotation.is_finite()
                    && v.is_finite()
                    && w.is_finite()
                {
                    b.set_pose(pose);
                    b.linear_velocity = v;
                    b.angular_velocity = w;
                }
            }
        }
    }
}

/// Rotation angle (rad) from `a` to `b`, exact for small turns (through
/// `acos` of the quaternions' dot product, any turn under about 7·10⁻⁴
/// rad read as 0 or that in f32: for a resting body 10 m across, 0.2 m/s
/// of movement to sleep, and a reach to the continuous pass).
pub(super) fn angle_between(a: Quat, b: Quat) -> f32 {
    let r = a.conjugate() * b;
    2.0 * Vec3::new(r.x, r.y, r.z).length().atan2(r.w.abs())
}

/// How far the body in `slot` moved in the step at most (its centre of
/// mass, and its turn at its bounding radius) from its state at the solve
/// (`start_state`, by `solver_index`); `None` for a body not in the solve.
pub(super) fn step_motion(
    solver_index: &[u32],
    start_state: &[(Vec3, Quat)],
    slot: u32,
    b: &Body,
) -> Option<f32> {
    let si = *solver_index.get(slot as usize)? as usize;
    let &(com0, q0) = start_state.get(si).filter(|_| si != 0)?;
    let turn = angle_between(q0, b.pose.rotation);
    Some((b.com - com0).length() + turn * b.bounding_radius)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_turns_are_measured_as_they_are() {
        let a = Quat::from_axis_angle(Vec3::new(0.3, 0.9, -0.2).normalize(), 0.7);
        for angle in [0.0, 1.0e-6, 1.0e-5, 3.0e-4, 0.01, 1.0, 3.0] {
            let b = a * Quat::from_axis_angle(Vec3::X, angle);
            let turn = angle_between(a, b);
            assert!(
                (turn - angle).abs() <= 1.0e-7 + 1.0e-5 * angle,
                "{angle} measured {turn}"
            );
        }
    }
}
