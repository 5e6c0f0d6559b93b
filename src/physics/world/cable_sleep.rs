//! Sleep for bodies the cables touch: what the cables did to each body
//! (`cable_loads`), and their impulses given, or dropped for a body left
//! asleep (`apply_cable_impulses`). And the cables' own sleep
//! (`update_cable_sleep`, `wake_cables`). See `world/cables.rs`.
//!
//! # Cables' sleep
//!
//! A cable rests while its particles' root mean square speed is under the
//! sleep speed, none of them faster than twice that, and no awake dynamic
//! body has a contact with it that did not rest in the last step or rests
//! on it through a support; after the sleep time of rest it falls asleep,
//! but if a resting body without supports (a coupled one) touches it, only
//! in the step that body falls asleep (`sleep_waiting_cables`; it began
//! resting a step after the body, whose rest it reads from the last step,
//! so it waits from a step short of the sleep time), and that body falls
//! asleep only with it (while a cable it touches that touches no body held up
//! through a support is not ready to sleep, the body's rest stops short of
//! the sleep time, and the bodies on such a cable are of one island).
//! Asleep, its
//! velocities are zero and the stage loads its particles as pinned: it is in no chain solve, no body contact and no
//! pair with another segment that cannot move, and it holds what rests on
//! it as a static body would (the rigid solver's supports of bodies
//! resting on it, and of sleeping bodies, are kept from when they were
//! last taken, while the body and the segment still reach each other);
//! with every cable asleep the stage is skipped. Each cable
//! sleeps on its own: a heap is one island that some cable always
//! disturbs somewhere.
//!
//! A sleeping body the cables wake takes the step's gravity, which it
//! missed asleep, with their impulses, which held it up against it, as
//! far as they held its island up (the island's upward impulses over its
//! weight, one share for all its bodies; `apply_cable_impulses`).
//!
//! Before each stage a sleeping cable wakes when an awake cable's segment
//! with a particle faster than four times the sleep speed may come within
//! 5 mm of it in the step, or a body that moved in the step may reach it
//! (their boxes over the step against the sleepers' segments, kept in a
//! grid): it wakes before it is hit, so what comes at it that fast meets
//! it awake. It also wakes when a cable or body near it is removed or a
//! body is moved away from it by an edit (and then so do the sleeping
//! cables touching it, and so on: what rests on them may lose its hold),
//! when a body is added or moved by an edit into it, when gravity is set
//! (`World::set_gravity`), or when sleep is switched off. "Near" and
//! "into" are within the cables' reach of the body's box, or for a plane
//! (whose box is unbounded) of its solid half-space (`Region`).
//!
//! Left as it is: slower cables rest on it or creep along it as on a
//! static body, and one sliding away from under it slower than that (or
//! accelerating away at less than about a quarter of g: it is out of reach
//! by the time it is fast) leaves it where it is; a segment sped up within the step (pulled along its
//! cable, say) may meet it asleep, held like a pin for that step; and a
//! body resting on awake cables that rest on it is held up as by a pin
//! (the cables between are pinched), however little a free rope under
//! them would hold.

use super::cables::Move;
use super::{sleep_speed, World};
use crate::physics::aabb::Aabb;
use crate::physics::body::Body;
use crate::physics::cable::pairs::{overlap, Grid};
use crate::physics::cable::solver::{CableSystem, CoupledBody};
use crate::physics::cable::{Cable, MIN_THICKNESS};
use crate::physics::math::Vec3;
use crate::physics::shape::{Plane, ShapeKind};
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

/// Where an edit of a body may reach sleeping cables
/// ([`World::cable_region`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum Region {
    Box(Aabb),
    /// The solid side of a plane (points at a distance ≤ 0 from it).
    Behind(Plane),
}

impl Region {
    /// Whether the box `b` has a point in the region.
    fn meets(&self, b: &(Vec3, Vec3)) -> bool {
        match self {
            Region::Box(a) => overlap(&(a.min, a.max), b),
            Region::Behind(plane) => plane.box_distance(&Aabb::new(b.0, b.1)) <= 0.0,
        }
    }
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
        dt: f32,
    ) {
        // A sleeping body holds cables as a static one does: it wakes (with
        // its island) when they do more than rest on it, move as they touch
        // it, or (a little each step) pull it sideways by as much as the
        // sleep speed; else their impulses are dropped. Woken so, it (and
        // its island) takes the step's gravity it missed asleep (as far as
        // their impulses held the island up, below) as well as
        // the cables' impulses, which held it up against that gravity:
        // without it, a box resting on a rope bridge was thrown up at g·dt
        // (0.16 m/s) each time it woke, fell asleep again a second later,
        // and never came to rest.
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
        // (Every body that wakes: those woken and their islands; each with
        // the island it slept in.)
        let asleep: Vec<(u32, u32)> = if woken.is_empty() {
            Vec::new()
        } else {
            self.bodies
                .iter()
                .filter(|(_, b)| b.sleeping && b.is_dynamic())
                .map(|(h, b)| (h.index, b.island))
                .collect()
        };
        for &slot in &woken {
            self.wake_index(slot);
        }
        // As much of it as the cables' impulses held the island up by,
        // the same share for each of its bodies (the island's momentum
        // then gains what the cables gave it less the gravity they held it
        // against): a body woken on cables that were asleep in the step
        // too got no support to take back (with the whole step's gravity,
        // a box woken with its island on a sleeping rope bridge fell at
        // g·dt), and a cable falling on a body does not hold it up.
        let gravity = self.settings.gravity * dt;
        let up = -self.settings.gravity.normalize_or_zero();
        let mut held: HashMap<u32, f32> = HashMap::new();
        if !asleep.is_empty() {
            let impulses = sys.body_contacts.iter().map(|c| (c.body, c.impulse));
            for (body, j) in impulses.chain(sys.retired.iter().map(|r| (r.0, r.1))) {
                let s = scale.get(&body).copied().unwrap_or(1.0);
                *held.entry(body).or_default() += (j.dot(up) * s).max(0.0);
            }
        }
        // Each island's support and weight (over the step), of its bodies
        // that woke.
        let mut islands: HashMap<u32, (f32, f32)> = HashMap::new();
        for &(slot, island) in &asleep {
            if let Some(b) = self.bodies.by_index(slot).filter(|b| !b.sleeping) {
                let e = islands.entry(island).or_default();
                e.0 += held.get(&slot).copied().unwrap_or(0.0);
                if b.inv_mass > 0.0 {
                    e.1 += gravity.length() / b.inv_mass;
                }
            }
        }
        for (slot, island) in asleep {
            if let Some(b) = self.bodies.by_index_mut(slot).filter(|b| !b.sleeping) {
                let (support, weight) = islands[&island];
                let part = if weight > 0.0 { support / weight } else { 0.0 };
                b.linear_velocity += gravity * part.clamp(0.0, 1.0);
            }
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
        // A coupled body with riders takes its impulses with them, as one
        // rigid body (`world/cable_riders.rs`).
        let composites: HashMap<u32, CoupledBody> = sys
            .coupled_bodies()
            .iter()
            .filter(|cb| !self.riders_of(cb.body).is_empty())
            .map(|cb| (cb.body, *cb))
            .collect();
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
            let composite = composites.get(&body);
            if let Some(r) = rest.iter_mut().find(|r| r.0 == body) {
                let kept = j - down * j.dot(down).max(0.0);
                let (dv, dw) = match composite {
                    Some(cb) => cb.member_response(kept, point, b.com),
                    None => (
                        kept * b.inv_mass,
                        b.inv_inertia_world * (point - b.com).cross(kept),
                    ),
                };
                r.1 += dv;
                r.2 += dw;
            }
            match composite {
                Some(cb) => self.give_composite(cb, j, point),
                None => b.apply_impulse(j, Some(point)),
            }
        }
        for (slot, v, w) in rest {
            if let Some(b) = self.bodies.by_index(slot) {
                let speed = sleep_speed(v, w, b.bounding_radius);
                self.cable_rest_speed.push((slot, speed));
            }
        }
    }
}

/// A cable rests while its particles' root mean square speed is under the
/// sleep speed and none is faster than this many times that.
const SLEEP_PEAK: f32 = 2.0;

/// A sleeping cable wakes when an awake segment with a particle faster
/// than this many times the sleep speed may come within [`WAKE_GAP`] of it
/// (slower ones rest on it or creep along it, as on a static body).
const WAKE_SPEED: f32 = 4.0;

/// How close (beyond both radii) such a segment may come in the step.
const WAKE_GAP: f32 = 5.0e-3;

/// How far a segment's box reaches out from its centre line for waking:
/// its radius and half the wake gap.
fn wake_pad(radius: f32) -> f32 {
    radius.max(MIN_THICKNESS as f32) + 0.5 * WAKE_GAP
}

/// Cable `c`'s segment boxes padded by [`wake_pad`].
fn wake_boxes(c: &Cable) -> impl Iterator<Item = (Vec3, Vec3)> + '_ {
    let pad = Vec3::splat(wake_pad(c.spec.radius));
    c.x.windows(2)
        .map(move |p| (p[0].min(p[1]) - pad, p[0].max(p[1]) + pad))
}

/// The sleeping cables' segment boxes in a grid, with each box's cable
/// (index), kept until a cable falls asleep, wakes, comes or goes.
#[derive(Clone, Debug, Default)]
pub(super) struct Sleepers {
    grid: Grid,
    boxes: Vec<(Vec3, Vec3)>,
    cable: Vec<u32>,
    valid: bool,
}

impl Sleepers {
    /// To be built again before the next use.
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }
}

impl World {
    /// Wakes each sleeping cable that an awake cable's segment with a
    /// particle faster than four times the sleep speed, or a body that
    /// moved in the step (`moves`), may reach within the step. Whether any cable is awake
    /// (the stage has something to do).
    pub(super) fn wake_cables(&mut self, moves: &[Option<Move>], dt: f32) -> bool {
        if !self.cables.iter().any(|c| c.sleeping) {
            return true;
        }
        if !self.settings.sleep.enabled {
            self.cables.iter_mut().for_each(Cable::wake);
            self.sleepers.invalidate();
            return true;
        }
        let margin = self.settings.speculative_distance;
        self.build_sleepers();
        let mut wake = vec![false; self.cables.len()];
        let mut found = Vec::new();
        let sl = &self.sleepers;
        let mut reach = |b: (Vec3, Vec3)| {
            found.clear();
            sl.grid.query(&b, |_| false, &mut found);
            for &k in &found {
                if overlap(&b, &sl.boxes[k as usize]) {
                    wake[sl.cable[k as usize] as usize] = true;
                }
            }
        };
        // Awake fast segments over the step: from where they are to where
        // their velocity and gravity take them (at most), and back to about
        // where they were a step ago (one falling away from under a
        // sleeper as it got fast).
        let fast = WAKE_SPEED * self.settings.sleep.speed_threshold;
        let fall = self.settings.gravity * dt * dt;
        for c in self.cables.iter().filter(|c| !c.sleeping) {
            let pad = Vec3::splat(wake_pad(c.spec.radius));
            for i in 0..c.segments() {
                let ends = [i, i + 1];
                if ends.iter().all(|&k| c.v[k].length() <= fast) {
                    continue;
                }
                let mut b = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
                for k in ends {
                    let (to, from) = (c.x[k] + c.v[k] * dt + fall, c.x[k] - c.v[k] * dt);
                    b = (b.0.min(from).min(to), b.1.max(from).max(to));
                }
                reach((b.0 - pad, b.1 + pad));
            }
        }
        for (h, b) in self.bodies.iter() {
            let Some(m) = moves[h.index as usize] else {
                continue;
            };
            let swept = b
                .shape
                .aabb(&b.pose)
                .union(&b.shape.aabb(&m.start))
                .expanded(m.reach + margin);
            reach((swept.min, swept.max));
        }
        for (c, _) in self.cables.iter_mut().zip(&wake).filter(|(_, &w)| w) {
            c.wake();
            self.sleepers.invalidate();
        }
        self.cables.iter().any(|c| !c.sleeping)
    }

    /// How far from a body a cable's particles may be while it touches the
    /// body (the thickest cable's radius and the contacts' speculative
    /// distance).
    pub(super) fn cable_reach(&self) -> f32 {
        let radius = self
            .cables
            .iter()
            .map(|c| c.spec.radius)
            .fold(0.0, f32::max);
        radius.max(MIN_THICKNESS as f32) + self.settings.speculative_distance
    }

    /// The sleepers' grid, built again if anything changed since.
    fn build_sleepers(&mut self) {
        if self.sleepers.valid {
            return;
        }
        let sl = &mut self.sleepers;
        sl.boxes.clear();
        sl.cable.clear();
        for (k, c) in self.cables.iter().enumerate().filter(|(_, c)| c.sleeping) {
            sl.boxes.extend(wake_boxes(c));
            sl.cable.resize(sl.boxes.len(), k as u32);
        }
        sl.grid.build(&sl.boxes, false);
        sl.valid = true;
    }

    /// Where body `b` (at its pose) may reach a cable: its box grown by
    /// [`Self::cable_reach`], or for a plane the half-space behind it and
    /// that far in front of its rounded surface (its margin out; its box
    /// is unbounded: adding a floor woke every sleeping cable).
    pub(super) fn cable_region(&self, b: &Body) -> Region {
        let reach = self.cable_reach();
        match &b.shape.kind {
            ShapeKind::Plane(p) => {
                let p = p.to_world(&b.pose);
                Region::Behind(Plane {
                    normal: p.normal,
                    offset: p.offset + b.shape.radius() + reach,
                })
            }
            _ => Region::Box(b.shape.aabb(&b.pose).expanded(reach)),
        }
    }

    /// Wakes the sleeping cables with a segment (its centre line) within
    /// `around`; with `chain`, also the sleeping cables touching those
    /// (within the wake gap), and so on: what rested on them may lose its
    /// hold (a cable or body under them removed or moved away).
    pub(super) fn wake_cables_in(&mut self, around: &Region, chain: bool) {
        if !self.cables.iter().any(|c| c.sleeping) {
            return;
        }
        self.build_sleepers();
        let mut found = Vec::new();
        let b = match around {
            Region::Box(a) => (a.min, a.max),
            Region::Behind { .. } => (Vec3::splat(f32::MIN), Vec3::splat(f32::MAX)),
        };
        self.sleepers.grid.query(&b, |_| false, &mut found);
        let mut queue: Vec<usize> = Vec::new();
        for &f in &found {
            let k = self.sleepers.cable[f as usize] as usize;
            // The segment's centre line (its box less the padding).
            let pad = Vec3::splat(wake_pad(self.cables[k].spec.radius));
            let (lo, hi) = self.sleepers.boxes[f as usize];
            if self.cables[k].sleeping && around.meets(&(lo + pad, hi - pad)) {
                self.cables[k].wake();
                queue.push(k);
            }
        }
        if queue.is_empty() {
            return;
        }
        self.sleepers.invalidate();
        if !chain {
            return;
        }
        // (The grid as it was: those woken here are skipped in it.)
        while let Some(k) = queue.pop() {
            let boxes: Vec<(Vec3, Vec3)> = wake_boxes(&self.cables[k]).collect();
            for b in boxes {
                found.clear();
                self.sleepers.grid.query(&b, |_| false, &mut found);
                for &f in &found {
                    let j = self.sleepers.cable[f as usize] as usize;
                    if self.cables[j].sleeping && overlap(&b, &self.sleepers.boxes[f as usize]) {
                        self.cables[j].wake();
                        queue.push(j);
                    }
                }
            }
        }
    }

    /// After the stage: each awake cable that rested this step (its
    /// particles' root mean square speed under the sleep speed, none faster
    /// than twice that, no contact with an awake dynamic body that did not
    /// rest in the last step or rests on it through a support) adds the
    /// step to its rest, any other starts again; one that has rested the
    /// sleep time falls asleep, its velocities zero, unless awake bodies
    /// touch it: then it waits for them (`sleep_waiting_cables`).
    pub(super) fn update_cable_sleep(&mut self, sys: &CableSystem, dt: f32) {
        let settings = self.settings.sleep;
        // Cables with a contact with an awake dynamic body do not rest
        // while it is awake if it rests on them through a support (which
        // takes their impulse: asleep before the body, they would give it
        // no contact, and it would sink in and wake them), nor while any
        // other moves (did not rest in the last step). One that rests
        // without supports (a coupled body, `solver/coupled.rs`) lets them
        // rest, and they fall asleep with it, in the same step
        // (`sleep_waiting_cables`): a box on a rope bridge fell asleep
        // alone, the ropes under it, still awake, woke it about once a
        // second, and they could not sleep while it was awake on them.
        let supported: std::collections::HashSet<u32> =
            self.cable_supports.iter().map(|s| s.body).collect();
        let mut near_moving = vec![false; self.cables.len()];
        // Cables that hold a body up through a support.
        let mut holding = vec![false; self.cables.len()];
        let mut touching: Vec<(u32, u32)> = Vec::new();
        for c in &sys.body_contacts {
            let Some(b) = self.bodies.by_index(c.body) else {
                continue;
            };
            if c.dynamic && !b.sleeping {
                let cable = sys.segs[c.seg as usize].cable;
                let holds = supported.contains(&c.body);
                near_moving[cable as usize] |= b.sleep_time <= 0.0 || holds;
                holding[cable as usize] |= holds;
                touching.push((cable, c.body));
            }
        }
        // By cable (each pair once).
        touching.sort_unstable();
        touching.dedup();
        self.cable_sleep_wait.clear();
        let slow = settings.speed_threshold * settings.speed_threshold;
        let mut first = 0;
        for (k, (c, near_moving)) in self.cables.iter_mut().zip(near_moving).enumerate() {
            let start = &sys.start[first..first + c.x.len()];
            first += c.x.len();
            if c.sleeping {
                continue;
            }
            // Its particles' root mean square speed under the sleep speed,
            // none faster than twice that; each particle's speed the larger
            // of its velocity and its displacement over the step (friction
            // between segments takes sliding velocity away at each
            // substep's end, but not what the substep slid: a cable
            // creeping so has no velocity).
            let (mut sum, mut most) = (0.0, 0.0f32);
            for ((v, x), x0) in c.v.iter().zip(&c.x).zip(start) {
                let speed2 = v
                    .length_squared()
                    .max((*x - *x0).length_squared() / (dt * dt));
                sum += speed2;
                most = most.max(speed2);
            }
            let resting = settings.enabled
                && !near_moving
                && sum < slow * c.v.len() as f32
                && most < SLEEP_PEAK * SLEEP_PEAK * slow;
            c.sleep_time = if resting { c.sleep_time + dt } else { 0.0 };
            // The bodies it touches (awake, resting without supports).
            let from = touching.partition_point(|t| t.0 < k as u32);
            let to = touching.partition_point(|t| t.0 <= k as u32);
            let held = &touching[from..to];
            // Touched, it began resting a step after them (their rest is
            // read from the last step): it waits from a step short of the
            // sleep time, and so falls asleep with them.
            let needed = if held.is_empty() {
                settings.time_to_sleep
            } else {
                settings.time_to_sleep - dt
            };
            if resting && c.sleep_time >= needed {
                if held.is_empty() {
                    c.sleeping = true;
                    c.v.fill(Vec3::ZERO);
                    self.sleepers.invalidate();
                } else {
                    self.cable_sleep_wait.extend_from_slice(held);
                }
            }
        }
        // A body on awake cables that touch no body held up through a
        // support (it and the others on them are coupled) falls asleep
        // only with them: while such a cable it touches is not ready to
        // sleep (`cable_sleep_wait`), its rest stops short of the sleep
        // time (it goes on counting, so the cable may rest: see
        // `near_moving` above), and the bodies on one such cable are of one
        // island (`cable_sleep_links`, `world/sleep.rs`), so none sleeps
        // while another on the cable is held awake. Asleep alone, it was a
        // static body to the ropes under it while they still swung: they
        // struck it and woke it, and each wake set it bouncing again (a 50
        // kg box on the rope bridge rang at the sleep speed for good; kept
        // awake, it comes to rest). A cable touching a body held up by a
        // support waits for the bodies instead (see `near_moving`): they
        // go first, as before.
        let short = settings.time_to_sleep - 1.5 * dt;
        self.cable_sleep_links.clear();
        for &(cable, body) in &touching {
            if holding[cable as usize] {
                continue;
            }
            self.cable_sleep_links.push((cable, body));
            let ready = self.cable_sleep_wait.binary_search(&(cable, body)).is_ok();
            if ready || short <= 0.0 {
                continue;
            }
            if let Some(b) = self.bodies.by_index_mut(body) {
                b.sleep_time = b.sleep_time.min(short);
            }
        }
    }

    /// After the bodies' sleep (`update_sleep`): each cable that rested
    /// long enough but touched awake bodies (`cable_sleep_wait`) falls
    /// asleep if they all just did.
    pub(super) fn sleep_waiting_cables(&mut self) {
        let waiting = std::mem::take(&mut self.cable_sleep_wait);
        // (By cable, ascending: each cable's pairs side by side.)
        for group in waiting.chunk_by(|a, b| a.0 == b.0) {
            let cable = group[0].0;
            let all_asleep = group
                .iter()
                .all(|w| self.bodies.by_index(w.1).is_some_and(|b| b.sleeping));
            if let Some(c) = self.cables.get_mut(cable as usize).filter(|_| all_asleep) {
                c.sleeping = true;
                c.v.fill(Vec3::ZERO);
                self.sleepers.invalidate();
                self.cable_stats.asleep += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cable::CableSpec;
    use crate::physics::world::WorldSettings;
    use crate::physics::{BodyKind, BodySpec, ShapeSpec};

    /// Sleeping cables keep their tubes, boxes and filter records from one
    /// build to the next (`CableSystem::keep_sleepers`). A mat of six
    /// cables falls asleep on the floor with a seventh still sliding on
    /// it, two more apart; then a cable is dropped on the mat (waking some
    /// of it), the first cable is removed (the second, alike and asleep,
    /// takes its place in the arrays; every later cable's particles move
    /// down them) and another cable is added; the pairs are rebuilt
    /// within a step while sleepers are kept (the dropped cable lands
    /// fast); and once every cable sleeps (the stage skipped), a cable
    /// added finds the sleepers' values of the stage's last run. A world that keeps the
    /// sleepers' values steps bitwise as one that computes them at every
    /// build (positions, velocities, sleep), and it does keep them.
    #[test]
    fn sleeping_cables_kept_from_build_to_build_step_as_if_computed_again() {
        let make = |keep_off: bool| {
            let mut w = World::new(WorldSettings {
                gravity: Vec3::new(0.0, -9.81, 0.0),
                ..Default::default()
            });
            w.cable_system.keep_off = keep_off;
            let floor = BodySpec::new(ShapeSpec::Box {
                half_extents: [3.0, 0.5, 3.0],
            })
            .kind(BodyKind::Static)
            .position([0.0, -0.5, 0.0]);
            w.add_body(&floor).unwrap();
            // Two alike, far from the rest: with the first removed, the
            // second takes its place in the arrays, asleep both times.
            for z in [2.0, 2.5] {
                w.add_cable(&CableSpec::new([1.0, 0.03, z], [2.5, 0.03, z], 30))
                    .unwrap();
            }
            for k in 0..6 {
                let z = -0.5 + 0.2 * k as f32;
                let (from, to) = if k % 2 == 0 {
                    ([-1.0, 0.03, z], [1.0, 0.03, z])
                } else {
                    ([z, 0.08, -1.0], [z, 0.08, 1.0])
                };
                let mut spec = CableSpec::new(from, to, 30);
                spec.damping = 0.5;
                w.add_cable(&spec).unwrap();
            }
            // Thrown along the mat's top: it slides for a while.
            let mut spec = CableSpec::new([-2.5, 0.2, 0.7], [-0.5, 0.2, 0.7], 30);
            spec.linear_velocity = [3.0, 0.0, 0.0];
            w.add_cable(&spec).unwrap();
            w
        };
        let (mut a, mut b) = (make(false), make(true));
        let (mut kept, mut woke, mut rebuilt_kept) = (0, false, false);
        let bits = |v: &[Vec3]| -> Vec<[u32; 3]> {
            v.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
        };
        for step in 0..1200 {
            // (All asleep at step 609.)
            if step > 400 && a.cables().iter().all(|c| c.sleeping) {
                break;
            }
            for w in [&mut a, &mut b] {
                match step {
                    240 => {
                        // Fast and long enough where it lands for many of
                        // its particles to outrun their tubes at once.
                        let mut spec = CableSpec::new([-0.9, 0.5, -0.2], [0.9, 0.5, 0.1], 90);
                        spec.linear_velocity = [0.0, -10.0, 0.0];
                        w.add_cable(&spec).unwrap();
                    }
                    270 => {
                        let first = w.cables()[0].id;
                        assert!(w.remove_cable(first));
                    }
                    280 => {
                        // Laid across the moved one, slow enough to rest
                        // on it asleep.
                        let spec = CableSpec::new([1.8, 0.061, 2.0], [1.8, 0.061, 3.0], 20);
                        w.add_cable(&spec).unwrap();
                    }
                    400 => {
                        let spec = CableSpec::new([0.5, 0.6, -0.8], [0.5, 0.6, 0.8], 20);
                        w.add_cable(&spec).unwrap();
                    }
                    _ => {}
                }
            }
            let asleep: Vec<bool> = a.cables().iter().map(|c| c.sleeping).collect();
            a.step();
            b.step();
            kept += a.cable_system.kept;
            assert_eq!(b.cable_system.kept, 0);
            if a.cable_stats.rebuilds > 0 && a.cable_system.kept > 0 {
                rebuilt_kept = true;
            }
            if step == 270 {
                // The stage ran, the moved cable asleep before and after.
                assert!(asleep.contains(&false) && asleep[0] && a.cables()[0].sleeping);
            }
            woke |= step >= 240
                && asleep
                    .iter()
                    .zip(a.cables())
                    .any(|(&was, c)| was && !c.sleeping);
            assert_eq!(a.cables().len(), b.cables().len());
            for (k, (ca, cb)) in a.cables().iter().zip(b.cables()).enumerate() {
                assert_eq!(
                    bits(&ca.x),
                    bits(&cb.x),
                    "step {step}, cable {k}: positions"
                );
                assert_eq!(
                    bits(&ca.v),
                    bits(&cb.v),
                    "step {step}, cable {k}: velocities"
                );
                assert_eq!(ca.sleeping, cb.sleeping, "step {step}, cable {k}: sleep");
            }
        }
        assert!(woke, "the dropped cable woke none of the mat");
        assert!(kept > 20_000, "{kept} particle-steps kept");
        assert!(rebuilt_kept, "no step rebuilt its pairs while keeping");
        // Every cable asleep, the stage skipped for a while; then a cable
        // added: the sleepers keep what the stage's last run built.
        assert!(a.cables().iter().all(|c| c.sleeping), "not all asleep");
        for w in [&mut a, &mut b] {
            for _ in 0..30 {
                w.step();
            }
            w.add_cable(&CableSpec::new([-0.5, 0.3, 0.3], [0.5, 0.3, 0.3], 20))
                .unwrap();
        }
        for step in 0..60 {
            a.step();
            b.step();
            if step == 0 {
                assert!(a.cable_system.kept > 200, "{}", a.cable_system.kept);
            }
            for (k, (ca, cb)) in a.cables().iter().zip(b.cables()).enumerate() {
                assert_eq!(bits(&ca.x), bits(&cb.x), "after, step {step}, cable {k}");
                assert_eq!(bits(&ca.v), bits(&cb.v), "after, step {step}, cable {k}");
            }
        }
    }
}
