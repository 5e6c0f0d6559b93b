//! Bodies' sleep: islands of touching awake dynamic bodies (and a body
//! resting on cables with the body under them) fall asleep together once
//! every body of the island has rested the sleep time, and with them the
//! cables that waited for them (`world/cable_sleep.rs`).

use super::World;
use crate::physics::island::UnionFind;
use crate::physics::math::Vec3;
use crate::physics::scene::BodyKind;
use std::collections::HashMap;

/// Overlap (m) beyond which a body is still being pushed out, and does
/// not rest. The soft contacts' push-out moves bodies apart by position,
/// their velocities staying near zero: a thin plate and a sphere spawned
/// 46 cm into each other (no gravity) fell asleep after the sleep time
/// still 2.4 cm deep. Bodies at rest under load sit well under 1 mm deep.
const REST_DEPTH: f32 = 0.01;

impl World {
    pub(super) fn update_sleep(&mut self, dt: f32) {
        let settings = self.settings.sleep;
        let n = self.bodies.capacity();
        let mut uf = UnionFind::new(n);
        for c in &self.contacts.contacts {
            if !c.touching {
                continue;
            }
            let (ba, bb) = (
                self.bodies.by_index(c.a).unwrap(),
                self.bodies.by_index(c.b).unwrap(),
            );
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
        // Smallest rest time per island root.
        let mut min_rest = vec![f32::INFINITY; n];
        let mut cable_rest = vec![None; n];
        for &(slot, speed) in &self.cable_rest_speed {
            cable_rest[slot as usize] = Some(speed);
        }
        // Bodies still being pushed out of an overlap deeper than
        // `REST_DEPTH` (as the step began) do not rest, however slow: the
        // push-out moves them by position, not velocity.
        let mut deep = vec![false; n];
        for c in &self.contacts.contacts {
            let depth = c.manifold.points().iter().map(|p| -p.separation);
            if c.touching && depth.fold(0.0, f32::max) > REST_DEPTH {
                deep[c.a as usize] = true;
                deep[c.b as usize] = true;
            }
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
            if settings.enabled && speed < settings.speed_threshold && !deep[h.index as usize] {
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
