//! Stage 5 of the step: continuous collision (see `physics/ccd.rs`).

use super::World;
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
        let settings = self.settings.ccd;
        if !settings.enabled {
            return;
        }
        // Fast bodies, from their motion in this step.
        let mut fast = vec![false; self.bodies.capacity()];
        let mut any = false;
        for (h, b) in self.bodies.iter() {
            let si = self.solver_index[h.index as usize] as usize;
            if si == 0 || !b.is_dynamic() {
                continue;
            }
            let (com0, q0) = self.start_state[si];
            let turn = angle_between(q0, b.pose.rotation);
            let motion = (b.com - com0).length() + turn * b.bounding_radius;
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
        self.ccd_stats = ccd::solve_impacts(
            &mut items,
            &neighbours,
            dt,
            &settings,
            self.settings.solver.restitution_threshold,
        );
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

/// Rotation angle (rad) from `a` to `b`.
pub(super) fn angle_between(a: Quat, b: Quat) -> f32 {
    2.0 * a.dot(b).abs().min(1.0).acos()
}
