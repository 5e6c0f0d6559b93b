//! Sleep for bodies the cables touch: what the cables did to each body
//! (`cable_loads`), and their impulses given, or dropped for a body left
//! asleep (`apply_cable_impulses`). See `world/cables.rs`.

use super::{sleep_speed, World};
use crate::physics::cable::solver::CableSystem;
use crate::physics::math::Vec3;
use std::collections::HashMap;

/// A segment within this of the distance its body contact keeps is
/// touching the body (for waking a sleeping one): twice the support skin.
const TOUCHING: f32 = 2.0e-3;

/// What the cables did to a body in a stage ([`World::cable_loads`]).
pub(super) struct Load {
    body: u32,
    /// No more than a load resting on it.
    load: bool,
    /// A particle touching it moves faster than twice the sleep speed.
    moving: bool,
    /// The net impulse's part across gravity.
    across: Vec3,
}

impl World {
    /// What the cables did to each dynamic body they gave an impulse (or,
    /// asleep, touched) this step, by slot: whether it was no more than a
    /// load resting on the body, and (for a sleeping body) whether a
    /// touching particle moves faster than twice the sleep speed. A load: along gravity, at most one and a
    /// half times the weight over the step of every cable touching the
    /// body; against gravity, at most one and a half times the body's own
    /// weight (a rope holding it up); across gravity, too little to move
    /// the body at the sleep speed. Cables lying or draped on a body, or a
    /// rope it rests on, are such a load; a cable falling onto it, dragging
    /// it or pulled taut against it is not.
    pub(super) fn cable_loads(
        &self,
        sys: &CableSystem,
        scale: &HashMap<u32, f32>,
        dt: f32,
    ) -> Vec<Load> {
        // Per body: the net impulse, the cables touching it, and whether a
        // touching particle moves.
        let mut per: HashMap<u32, (Vec3, Vec<u32>, bool)> = HashMap::new();
        let threshold = self.settings.sleep.speed_threshold;
        // Each cable's first particle in the system (the cables still hold
        // the positions the stage began with).
        let mut first = Vec::with_capacity(self.cables.len());
        let mut n = 0;
        for c in &self.cables {
            first.push(n);
            n += c.x.len();
        }
        for c in &sys.body_contacts {
            if !c.dynamic {
                continue;
            }
            let asleep = self.bodies.by_index(c.body).is_some_and(|b| b.sleeping);
            if c.impulse == Vec3::ZERO && !asleep {
                continue;
            }
            let (j, cables, moving) = per.entry(c.body).or_default();
            *j += c.impulse;
            let seg = sys.segs[c.seg as usize];
            if !cables.contains(&seg.cable) {
                cables.push(seg.cable);
            }
            // Touching (within 2 mm of the distance the contact keeps, as
            // the stage began or at its end) and faster than twice the
            // sleep speed at the end: a cable sliding out from under a
            // sleeping body, or falling away from under it. (Not within
            // the contacts' whole speculative reach: the ends of a cable
            // draped over a box swing beside it for a while; and a settled
            // cable still creeps at 0.05–0.1 m/s where it touches.)
            // (Of a sleeping body only: an awake one does not ask.)
            if asleep && !*moving {
                let p = seg.p as usize;
                let gap = |a: Vec3, b: Vec3| c.n.dot(a.lerp(b, c.s)) - c.offset - c.radius;
                let cable = &self.cables[seg.cable as usize];
                let i = p - first[seg.cable as usize];
                let touching = gap(sys.x[p], sys.x[p + 1]).min(gap(cable.x[i], cable.x[i + 1]));
                *moving = touching < TOUCHING
                    && sys.v[p].length().max(sys.v[p + 1].length()) > 2.0 * threshold;
            }
        }
        for &(body, impulse, _) in &sys.retired {
            per.entry(body).or_default().0 += impulse;
        }
        let g = self.settings.gravity;
        let down = g.normalize_or_zero();
        let mut out: Vec<Load> = per
            .into_iter()
            .filter_map(|(body, (j, cables, moving))| {
                let b = self.bodies.by_index(body)?;
                let mass: f32 = cables
                    .iter()
                    .map(|&c| self.cables[c as usize].spec.mass)
                    .sum();
                let j = j * scale.get(&body).copied().unwrap_or(1.0);
                let along = j.dot(down);
                let across = j - down * along;
                // Down: the cables' weight; up: holding up the body's own
                // (a rope it rests on); across: not enough to move it.
                let weight = g.length() * dt;
                let load = along <= 1.5 * weight * mass
                    && -along * b.inv_mass <= 1.5 * weight
                    && across.length() * b.inv_mass <= threshold;
                Some(Load {
                    body,
                    load,
                    moving,
                    across,
                })
            })
            .collect();
        // In a fixed order (bodies wake the same either way).
        out.sort_unstable_by_key(|l| l.body);
        out
    }

    /// Gives the bodies the cables' impulses (`scale`d by
    /// [`Self::impulse_bounds`]), waking or leaving asleep those that
    /// sleep, and records the speed an awake body the cables only loaded is
    /// judged at rest by (see [`Self::cable_loads`]).
    pub(super) fn apply_cable_impulses(
        &mut self,
        sys: &CableSystem,
        scale: &HashMap<u32, f32>,
        loads: &[Load],
    ) {
        // A sleeping body holds cables as a static one does: it wakes (with
        // its island) when they do more than rest on it, move as they touch
        // it, or (a little each step) pull it sideways by as much as the
        // sleep speed; else their impulses are dropped.
        let threshold = self.settings.sleep.speed_threshold;
        let mut woken = Vec::new();
        for l in loads {
            let Some(b) = self.bodies.by_index(l.body) else {
                continue;
            };
            if !b.sleeping {
                continue;
            }
            let drift = self.cable_drift.entry(l.body).or_default();
            *drift += l.across;
            if !l.load || l.moving || drift.length() * b.inv_mass > threshold {
                woken.push(l.body);
            }
        }
        for &slot in &woken {
            self.wake_index(slot);
        }
        let bodies = &self.bodies;
        self.cable_drift
            .retain(|&slot, _| bodies.by_index(slot).is_some_and(|b| b.sleeping));
        // An awake body the cables only load rests by its speed after their
        // impulses less the parts of them that push it down (which the next
        // contact solve takes back, as it does gravity's), turning
        // included; any other by its speed after.
        let down = self.settings.gravity.normalize_or_zero();
        let mut rest: Vec<(u32, Vec3, Vec3)> = loads
            .iter()
            .filter(|l| l.load)
            .filter_map(|l| {
                let b = self.bodies.by_index(l.body)?;
                (!b.sleeping).then_some((l.body, b.linear_velocity, b.angular_velocity))
            })
            .collect();
        let impulses = sys
            .body_contacts
            .iter()
            .map(|c| (c.body, c.impulse, c.point));
        for (body, impulse, point) in impulses.chain(sys.retired.iter().copied()) {
            if impulse == Vec3::ZERO {
                continue;
            }
            let j = impulse * scale.get(&body).copied().unwrap_or(1.0);
            let Some(b) = self.bodies.by_index_mut(body) else {
                continue;
            };
            // Left asleep: dropped.
            if b.sleeping {
                continue;
            }
            if let Some(r) = rest.iter_mut().find(|r| r.0 == body) {
                let kept = j - down * j.dot(down).max(0.0);
                r.1 += kept * b.inv_mass;
                r.2 += b.inv_inertia_world * (point - b.com).cross(kept);
            }
            b.apply_impulse(j, Some(point));
        }
        for (slot, v, w) in rest {
            if let Some(b) = self.bodies.by_index(slot) {
                let speed = sleep_speed(v, w, b.bounding_radius);
                self.cable_rest_speed.push((slot, speed));
            }
        }
    }
}
