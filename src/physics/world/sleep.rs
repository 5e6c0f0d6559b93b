//! Bodies' sleep: islands of touching awake dynamic bodies (and a body
//! resting on cables with the body under them, and the bodies on one awake
//! cable that touches no body held up through a support) fall asleep
//! together once every body of the island has rested the sleep time, and
//! with them the cables that waited for them (`world/cable_sleep.rs`). A
//! body rests while the larger of its speed and its displacement over the
//! step (over the step's length) is under the sleep speed.

use super::continuous::step_motion;
use super::World;
use crate::physics::island::UnionFind;
use crate::physics::math::Vec3;
use crate::physics::scene::BodyKind;
use std::collections::HashMap;

impl World {
    pub(super) fn update_sleep(&mut self, dt: f32) {
        let settings = self.settings.sleep;
        let n = self.bodies.capacity();
        let mut uf = UnionFind::new(n);
        for (c, ba, bb) in self.touching() {
            if ba.is_dynamic() && bb.is_dynamic() && !ba.sleeping && !bb.sleeping {
                uf.union(c.a, c.b);
            }
        }
        // A body resting on cables and the body under them.
        for (a, b) in self.cable_support_pairs() {
            let awake = |i: u32| {
                self.bodies
                    .by_index(i)
                    .is_some_and(|b| b.is_dynamic() && !b.sleeping)
            };
            if awake(a) && awake(b) {
                uf.union(a, b);
            }
        }
        // The bodies on one awake cable that touches none held up by a
        // support (`world/cable_sleep.rs`).
        for link in self.cable_sleep_links.chunk_by(|a, b| a.0 == b.0) {
            for w in link.windows(2) {
                uf.union(w[0].1, w[1].1);
            }
        }
        // Smallest rest time per island root.
        let mut min_rest = vec![f32::INFINITY; n];
        let mut cable_rest = vec![None; n];
        for &(slot, speed) in &self.cable_rest_speed {
            cable_rest[slot as usize] = Some(speed);
        }

        for (h, b) in self.bodies.iter_mut() {
            if !b.is_dynamic() || b.sleeping {
                continue;
            }
            // A body the cables only loaded: by its speed less their push
            // down (a body with cables lying on it gets their weight every
            // step, which the next contact solve takes back).
            let speed = cable_rest[h.index as usize].unwrap_or_else(|| {
                sleep_speed(b.linear_velocity, b.angular_velocity, b.bounding_radius)
            });
            // And by how far it moved in the step: the contacts push an
            // overlap out by position, the velocities staying near zero
            // (thin plates and spheres spawned into each other without
            // gravity fell asleep after the sleep time still being pushed
            // out: of 400 pairs, 233 slept more than 1 mm deep, one 2.4 cm;
            // one followed step by step still moved 4 mm a step).
            let moved = step_motion(&self.solver_index, &self.start_state, h.index, b)
                .map_or(0.0, |m| m / dt);
            if settings.enabled && speed.max(moved) < settings.speed_threshold {
                b.sleep_time += dt;
            } else {
                b.sleep_time = 0.0;
            }
            let r = uf.find(h.index) as usize;
            min_rest[r] = min_rest[r].min(b.sleep_time);
            self.moved.push(b.id);
        }
        for (_, b) in self.bodies.iter() {
            if b.is_static() {
                continue;
            }
            if b.kind == BodyKind::Kinematic && Self::is_active(b) {
                self.moved.push(b.id);
            }
        }
        if !settings.enabled {
            return;
        }
        let mut island_ids: HashMap<u32, u32> = HashMap::new();
        for (h, b) in self.bodies.iter_mut() {
            if !b.is_dynamic() || b.sleeping {
                continue;
            }
            let r = uf.find(h.index);
            if min_rest[r as usize] >= settings.time_to_sleep {
                let next = &mut self.next_island;
                let id = *island_ids.entry(r).or_insert_with(|| {
                    *next += 1;
                    *next
                });
                b.sleeping = true;
                b.island = id;
                b.linear_velocity = Vec3::ZERO;
                b.angular_velocity = Vec3::ZERO;
            }
        }
        self.sleep_waiting_cables();
    }
}

/// The speed a body's sleep is judged by: its centre's, or its surface's
/// (`radius` out) from turning, whichever is larger.
pub(super) fn sleep_speed(linear: Vec3, angular: Vec3, radius: f32) -> f32 {
    linear.length().max(angular.length() * radius)
}
