//! Bodies' sleep: islands of touching awake dynamic bodies (and a body
//! resting on cables with the body under them, and the bodies on one awake
//! cable that touches no body held up through a support) fall asleep
//! together once every body of the island has rested the sleep time, and
//! with them the cables that waited for them (`world/cable_sleep.rs`). A
//! body rests while the larger of its speed and its displacement over the
//! step (over the step's length) is under the sleep speed.
//!
//! And waking: a body and its island, what touches a moved body, a
//! sleeper an awake body touches or reaches within the step.

use super::continuous::step_motion;
use super::World;
use crate::physics::cable::Cable;
use crate::physics::contact::TOUCH_SLOP;
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

impl World {
    /// A sleeping body touched by an active one, or that an active one
    /// can reach within this step (a speculative contact it is approaching),
    /// wakes with its island before the solve. Woken only once touched, a
    /// sleeping box was solved as immovable in the step a ball rolled into
    /// it: the ball stopped dead and the box never moved (a black-box
    /// reviewer's case; a 10 kg ball at 10 m/s against a 1 kg box too).
    pub(super) fn wake_touched_islands(&mut self, dt: f32) {
        let rest = self.settings.sleep.speed_threshold;
        let mut wake = Vec::new();
        for c in &self.contacts.contacts {
            let points = c.manifold.points();
            if points.is_empty() {
                continue;
            }
            let (ba, bb) = (
                self.bodies.by_index(c.a).unwrap(),
                self.bodies.by_index(c.b).unwrap(),
            );
            // The sleeper, and the active body with the normal pointing
            // from it towards the sleeper.
            let (sleeper, mover, n) = if ba.sleeping && Self::is_active(bb) {
                (c.a, bb, -c.manifold.normal)
            } else if bb.sleeping && Self::is_active(ba) {
                (c.b, ba, c.manifold.normal)
            } else {
                continue;
            };
            // It wakes if they touch, or if the mover's contact points come
            // within the slop of it in the step at their approach speed,
            // when that is over the sleep speed (slower, the mover is
            // resting, not coming: an awake body jittering near a sleeping
            // pile would wake it). The velocities are the step's start's;
            // gravity's share within the step (under 3 mm at 60 Hz) is not
            // counted.
            let reach = || {
                points.iter().any(|p| {
                    let at = if c.a == sleeper { p.point_b } else { p.point_a };
                    let v = mover.velocity_at(at).dot(n);
                    v > rest && p.separation - v * dt < TOUCH_SLOP
                })
            };
            if c.touching || reach() {
                wake.push(sleeper);
            }
        }
        for i in wake {
            self.wake_index(i);
        }
    }

    /// Wakes a body and the island it slept with.
    pub(super) fn wake_index(&mut self, index: u32) {
        let Some(b) = self.bodies.by_index_mut(index) else {
            return;
        };
        b.sleep_time = 0.0;
        if !b.sleeping {
            return;
        }
        let island = b.island;
        for (_, b) in self.bodies.iter_mut() {
            if b.sleeping && b.island == island {
                b.sleeping = false;
                b.sleep_time = 0.0;
            }
        }
    }

    pub(super) fn wake_neighbours(&mut self, index: u32) {
        let others: Vec<u32> = self
            .contacts
            .contacts
            .iter()
            .filter(|c| c.a == index || c.b == index)
            .map(|c| if c.a == index { c.b } else { c.a })
            .collect();
        for o in others {
            self.wake_index(o);
        }
    }

    pub(super) fn wake_all(&mut self) {
        for (_, b) in self.bodies.iter_mut() {
            b.sleeping = false;
            b.sleep_time = 0.0;
        }
        self.cables.iter_mut().for_each(Cable::wake);
        self.sleepers.invalidate();
    }
}
