//! Stage 7 of the step: cables (see `physics/cable/`).

use super::continuous::angle_between;
use super::World;
use crate::physics::aabb::Aabb;
use crate::physics::cable::solver::{BodyContact, CableSystem, Extension, HoldBack, PARALLEL_FROM};
use crate::physics::collision;
use crate::physics::math::{Pose, Quat, Vec3};
use crate::physics::shape::Shape;
use crate::physics::solver::{ContactConstraint, PointImpulse};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// A nearest point this close to a segment's end (as a share of its
/// length) holds that end: it gets no sphere contact of its own.
const END_SHARE: f32 = 1.0e-3;

/// Stores the value in the flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool, bool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(self.1, Ordering::Release);
    }
}

/// How a body moved in the step, before the cable stage: the cable stage
/// moves it again, from `start` to its end pose, so that cables meet it
/// where it passes rather than where it ends (a body moving more than half
/// its thickness in a step would otherwise find a cable deep inside it and
/// push it out the far side). Its poses in between are interpolated
/// (position and rotation); a contact's plane keeps its normal and moves
/// with the contact point's displacement (it does not turn with the body).
#[derive(Clone, Copy, Debug)]
struct Move {
    start: Pose,
    /// How far any point of the body moves in the step (at most).
    reach: f32,
}

impl Move {
    /// The body's pose at fraction `f` of the step (`end`: its end pose).
    fn pose_at(&self, end: &Pose, f: f32) -> Pose {
        Pose::new(
            self.start.position.lerp(end.position, f),
            self.start.rotation.slerp(end.rotation, f),
        )
    }
}

/// How far a segment's surface is from a body contact's plane (negative
/// inside) where the segment is now.
fn gap(sys: &CableSystem, c: &BodyContact) -> f32 {
    let p = sys.segs[c.seg as usize].p as usize;
    c.n.dot(sys.x[p].lerp(sys.x[p + 1], c.s) - c.point) - c.radius
}

/// Whether a particle of segment `seg` is pinned.
fn pinned(sys: &CableSystem, seg: usize) -> bool {
    let p = sys.segs[seg].p as usize;
    sys.w[p] == 0.0 || sys.w[p + 1] == 0.0
}

/// What holds a segment from the side away from a body.
#[derive(Clone, Copy, Debug)]
enum Holder {
    /// A body (its slot): its surface point at the contact and the gap
    /// from there to the segment's surface.
    Body(u32, Vec3, f32),
    /// Another segment held up by a body, directly or through at most
    /// [`GROUND_HOPS`] other segments touching in turn (a heap's layers),
    /// or a pin: the body's slot, or `u32::MAX` for a body that does not
    /// move or a pin (the ground), and the gap from that body to its
    /// segment.
    Ground(u32, f32),
}

/// The root of [`Holder::Ground`] that does not move.
const FIXED: u32 = u32::MAX;

/// How many touching segments a segment may be from one a body that does
/// not move (or a pin) holds, and still count as held up (a heap's layers).
const GROUND_HOPS: u32 = 8;

/// Segments pinched from the far side: what touches each (within the
/// world's speculative distance), with the normal out of it.
struct Pinch(std::collections::HashMap<u32, Vec<(Holder, Vec3)>>);

impl Pinch {
    fn new(sys: &CableSystem, reach: f32) -> Self {
        use std::collections::{HashMap, VecDeque};
        let mut held: HashMap<u32, Vec<(Holder, Vec3)>> = HashMap::new();
        // Segments held up, with their distance in touching hops and what
        // holds them up at the root (what does not move before any body).
        let mut ground: HashMap<u32, (u32, u32, f32)> = HashMap::new();
        for c in &sys.body_contacts {
            let g = gap(sys, c);
            if g < reach {
                held.entry(c.seg)
                    .or_default()
                    .push((Holder::Body(c.body, c.point, g), c.n));
                if !c.dynamic && c.motion == Vec3::ZERO {
                    ground.insert(c.seg, (0, FIXED, 0.0));
                } else {
                    ground.entry(c.seg).or_insert((0, c.body, g.max(0.0)));
                }
            }
        }
        for k in 0..sys.segs.len() {
            if pinned(sys, k) {
                ground.insert(k as u32, (0, FIXED, 0.0));
            }
        }
        let touching = sys.touching_segments(reach);
        let mut next: HashMap<u32, Vec<u32>> = HashMap::new();
        for &(a, b, _) in &touching {
            next.entry(a).or_default().push(b);
        }
        // In order of the segments, so that the result does not depend on
        // the maps' order.
        let mut start: Vec<u32> = ground.keys().copied().collect();
        start.sort_unstable();
        let mut queue: VecDeque<u32> = start.into();
        while let Some(s) = queue.pop_front() {
            let (hops, root, g) = ground[&s];
            if hops == GROUND_HOPS {
                continue;
            }
            for &t in next.get(&s).into_iter().flatten() {
                if let std::collections::hash_map::Entry::Vacant(e) = ground.entry(t) {
                    e.insert((hops + 1, root, g));
                    queue.push_back(t);
                }
            }
        }
        for &(a, b, towards) in &touching {
            if let Some(&(_, root, g)) = ground.get(&b) {
                held.entry(a)
                    .or_default()
                    .push((Holder::Ground(root, g), -towards));
            }
        }
        Self(held)
    }

    /// What pinches body contact `c`'s segment, if anything: it cannot give
    /// way from the body because a particle of it is pinned, or another
    /// body or a segment held up by a body or pin holds it on its other
    /// side. (Cables that only touch each other, with nothing behind them,
    /// do not.)
    fn holder(&self, sys: &CableSystem, c: &BodyContact) -> Option<Holder> {
        if pinned(sys, c.seg as usize) {
            return Some(Holder::Ground(FIXED, 0.0));
        }
        let held = self.0.get(&c.seg)?;
        held.iter()
            .find(|&&(h, m)| {
                let by = match h {
                    Holder::Body(b, ..) | Holder::Ground(b, _) => b,
                };
                m.dot(c.n) < -0.5 && by != c.body
            })
            .map(|&(h, _)| h)
    }
}

/// How far off a cable the rigid solver holds a body resting on it (m).
const SUPPORT_SKIN: f32 = 1.0e-3;

/// A segment within this of the distance its body contact keeps is
/// touching the body (for waking a sleeping one): twice the support skin.
const TOUCHING: f32 = 2.0e-3;

/// What the cables did to a body in a stage ([`World::cable_loads`]).
struct Load {
    body: u32,
    /// No more than a load resting on it.
    load: bool,
    /// A particle touching it moves faster than twice the sleep speed.
    moving: bool,
    /// The net impulse's part across gravity.
    across: Vec3,
}

/// A segment touching a dynamic body at the end of the cable stage that
/// cannot give way from it ([`Pinch::holder`]): in the next step, the
/// rigid solver holds the body off it, a skin off, by a contact (warm
/// started from the same support's last impulses) with what holds the
/// segment: the body behind it (through the cable's thickness), or the
/// cable itself as a fixed point when a pin or the ground holds it. The
/// body thus rests on the cable as on any support rather than sinking into
/// it each step and being pushed out a step late (a 64 kg box on a cable
/// lying on the floor kept bouncing at 0.1 m/s and never slept). The cable
/// does not feel the body's weight (what holds it is taken to), so a cable
/// free to move (a rope hanging between pins, away from them) gets no
/// supports: a fixed point there would hold up a body the rope cannot.
#[derive(Clone, Copy, Debug)]
pub(super) struct CableSupport {
    /// The body's slot, and what holds it up: another body's slot (a
    /// two-body contact through the cable, the cable's thickness taken
    /// out of the gap) or [`FIXED`] (the cable itself, fixed).
    body: u32,
    holder: u32,
    /// The holder's point (on the far body, or on the cable's surface).
    far: Vec3,
    /// Out of the body, towards the cable.
    n: Vec3,
    /// The body's surface point, and the gap from it to the holder's
    /// point (less the cable's thickness between two bodies).
    point: Vec3,
    separation: f32,
    mu: f32,
    /// The segment and where along it (in sixteenths), to find the same
    /// support in the next step; and the impulses it took in the last
    /// rigid solve (its warm start in the next).
    seg: u32,
    at: i32,
    pub(super) impulse: PointImpulse,
}

impl World {
    /// The rigid solver's constraints for the cable supports of bodies it
    /// moves (after the contacts' ones).
    pub(super) fn cable_support_constraints(&mut self) {
        self.support_constraints.clear();
        for (k, sup) in self.cable_supports.iter().enumerate() {
            let si = self
                .solver_index
                .get(sup.body as usize)
                .copied()
                .unwrap_or(0);
            let Some(b) = self.bodies.by_index(sup.body) else {
                continue;
            };
            // Asleep (or no longer dynamic): nothing to hold.
            if si == 0 || !b.is_dynamic() {
                continue;
            }
            // The body is held a skin off the cable: the rigid solver's
            // soft contacts yield a little under load (0.3 mm under any
            // weight at its 30 Hz stiffness), and a cable stage that found
            // the body inside the cable would push it out a step late.
            let separation = sup.separation - SUPPORT_SKIN;
            // A static or sleeping holder is solver body 0.
            let (hi, far_com) = match self.bodies.by_index(sup.holder) {
                Some(h) => (
                    self.solver_index
                        .get(sup.holder as usize)
                        .copied()
                        .unwrap_or(0),
                    h.com,
                ),
                None => (0, sup.far),
            };
            if hi == si {
                continue;
            }
            self.support_constraints.push(k);
            self.constraints.push(ContactConstraint::new(
                si,
                hi,
                &self.solver_bodies[si as usize],
                &self.solver_bodies[hi as usize],
                b.com,
                far_com,
                sup.n,
                &[(sup.point, sup.far, separation, sup.impulse)],
                sup.mu,
                0.0,
            ));
        }
    }

    /// Stage 7: every cable as one particle system (see `cable/mod.rs`):
    /// pairs and body contacts found once per step, then XPBD substeps that
    /// solve segments and contacts and prove that no two segments crossed.
    pub(super) fn step_cables(&mut self, dt: f32) {
        self.cable_rest_speed.clear();
        if self.cables.is_empty() {
            self.cable_stats = Default::default();
            return;
        }
        // Large systems split work in two many times a step: run the whole
        // stage on a pool thread, so that each split is a local fork-join
        // rather than a job handed over from outside the pool.
        let large = self.cables.iter().map(|c| c.x.len()).sum::<usize>() >= PARALLEL_FROM;
        if large {
            // The stage forks and joins dozens of times a step; an idle
            // pool thread goes to sleep within microseconds and takes
            // ~200 µs to wake (measured in the 50k bench: 37 joins a step
            // waited that long and 17 more ran serially). For the stage's
            // length, a task on another pool thread keeps looking for the
            // joins' halves instead (it spins, yielding to the system's
            // other threads: one core is busy for the stage's length unless
            // another thread wants it). One stage at a time has such a helper, and
            // a stage never waits for the right to one (a world stepped on
            // a pool thread must not block there while other jobs wait):
            // one that finds it taken runs as before, without.
            static HELPED: AtomicBool = AtomicBool::new(false);
            let helped = HELPED
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
            if !helped {
                rayon::scope(|_| self.cable_stage(dt));
                return;
            }
            let _release = SetOnDrop(&HELPED, false);
            let done = &AtomicBool::new(false);
            rayon::scope(|s| {
                // The scope's body (the stage) runs on a pool thread.
                let stage_thread = std::thread::current().id();
                s.spawn(move |_| {
                    // On the stage's own thread (a pool that runs its
                    // oldest job first, or the stage already over) it
                    // would only hold the stage up.
                    if std::thread::current().id() == stage_thread {
                        return;
                    }
                    while !done.load(Ordering::Acquire) {
                        if rayon::yield_now() != Some(rayon::Yield::Executed) {
                            // Other threads (other worlds) get the core
                            // if they want it; else this returns at once.
                            std::thread::yield_now();
                        }
                    }
                });
                // Set even if the stage panics, so that the scope ends.
                let _done = SetOnDrop(done, true);
                self.cable_stage(dt);
            });
        } else {
            self.cable_stage(dt);
        }
    }

    /// How each body (by slot) moved in this step, `None` for one that
    /// stood still.
    fn body_moves(&self) -> Vec<Option<Move>> {
        let mut out = vec![None; self.bodies.capacity()];
        for (h, b) in self.bodies.iter() {
            let si = self
                .solver_index
                .get(h.index as usize)
                .copied()
                .unwrap_or(0) as usize;
            if si == 0 || b.shape.is_plane() {
                continue;
            }
            let (com0, q0) = self.start_state[si];
            let start = Pose::new(com0 - q0 * b.local_center, q0);
            let turn = angle_between(q0, b.pose.rotation);
            let reach = (b.pose.position - start.position).length() + turn * b.bounding_radius;
            // Below this it stands still (a rotation normalised again, say).
            if reach > 1.0e-6 {
                out[h.index as usize] = Some(Move { start, reach });
            }
        }
        out
    }

    fn cable_stage(&mut self, dt: f32) {
        let mut sys = std::mem::take(&mut self.cable_system);
        let n = self.settings.cable_substeps.max(1);
        let h = dt / n as f32;
        let g = self.settings.gravity;
        sys.load(&self.cables);
        sys.begin(dt, h, g);
        let moves = self.body_moves();
        self.cable_body_contacts(&mut sys, None, &moves);
        sys.balance();
        for _ in 0..n {
            sys.solve_substep(h, g, self.settings.cable_iterations);
            let mut first = 0;
            loop {
                sys.verify(h, first);
                // A segment whose centre line cut into a body: its
                // particles are held where the substep began (the body
                // contacts are planes of the step's start; a segment
                // crossing an edge may cut its corner), until none does.
                loop {
                    let clock = std::time::Instant::now();
                    let cutting = self.cable_body_cuts(&sys, h, &moves);
                    sys.stats.ms_verify += clock.elapsed().as_secs_f64() * 1e3;
                    if cutting.is_empty() {
                        break;
                    }
                    sys.hold_back(&cutting, h);
                }
                // A particle outside its tube (pushed by the solve, or held
                // back by the verification): a new tube, and the pairs and
                // body contacts it brings, verified for this substep too.
                let before = sys.pair_count();
                match sys.extend(h, g) {
                    Extension::None => break,
                    Extension::Grown(grown) => {
                        first = before;
                        self.cable_body_contacts(&mut sys, Some(&grown), &moves);
                    }
                    Extension::Rebuilt => {
                        first = 0;
                        sys.retire_body_contacts();
                        self.cable_body_contacts(&mut sys, None, &moves);
                    }
                }
            }
            sys.finish_substep(h, self.settings.cable_audit);
        }
        // Before the cables take their new velocities (the bound needs
        // those they had). Only for a dynamic body that is awake (it may get
        // a support) or got an impulse (it may be bounded).
        let concerned = |c: &BodyContact| {
            c.dynamic
                && (c.impulse != Vec3::ZERO
                    || self.bodies.by_index(c.body).is_some_and(|b| !b.sleeping))
        };
        let pinch = sys
            .body_contacts
            .iter()
            .any(concerned)
            .then(|| Pinch::new(&sys, self.settings.speculative_distance));
        let scale = self.impulse_bounds(&sys, pinch.as_ref());
        let loads = self.cable_loads(&sys, &scale, dt);
        sys.store(&mut self.cables);
        // A sleeping body holds cables as a static one does: it wakes (with
        // its island) when they do more than rest on it, move as they touch
        // it, or (a little each step) pull it sideways by as much as the
        // sleep speed; else their impulses are dropped.
        let threshold = self.settings.sleep.speed_threshold;
        let mut woken = Vec::new();
        for l in &loads {
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
                let speed = v.length().max(w.length() * b.bounding_radius);
                self.cable_rest_speed.push((slot, speed));
            }
        }
        self.find_cable_supports(&sys, pinch.as_ref());
        self.cable_stats = sys.stats;
        self.cable_system = sys;
    }

    /// The bodies (slots) of each support of the last stage between two
    /// bodies: one island for sleep, so that they fall asleep together
    /// (else the one still awake would wake the other, through the cables
    /// between them, every time it fell asleep).
    pub(super) fn cable_support_pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.cable_supports
            .iter()
            .filter(|s| s.holder != FIXED)
            .map(|s| (s.body, s.holder))
    }

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
    fn cable_loads(&self, sys: &CableSystem, scale: &HashMap<u32, f32>, dt: f32) -> Vec<Load> {
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
            let p = seg.p as usize;
            let gap = |a: Vec3, b: Vec3| c.n.dot(a.lerp(b, c.s)) - c.offset - c.radius;
            let cable = &self.cables[seg.cable as usize];
            let i = p - first[seg.cable as usize];
            let touching = gap(sys.x[p], sys.x[p + 1]).min(gap(cable.x[i], cable.x[i + 1]));
            *moving |= touching < TOUCHING
                && sys.v[p].length().max(sys.v[p + 1].length()) > 2.0 * threshold;
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

    /// The share of its cable impulses each dynamic body takes (1 unless
    /// less), so that they never throw it off the cables faster than the
    /// collision can: along the impulses' sum `d`, the body's point where
    /// they act leaves at most as fast as off a cable of no give moving at
    /// `c`, `max(c + e·max(c − a, 0), −e·a, 0)`, `a` its speed along `d`
    /// before (negative while it comes on), `e` the contacts' restitution
    /// and `c` the fastest any particle of the touching segments moved
    /// along `d` at the step's start or end (a thrown cable may push a body
    /// up to its own speed). Only for a body pinching a segment
    /// ([`Pinch::holder`]); elsewhere momentum is kept exactly. The stage
    /// moves a body along its path as if it had no give: a cable caught
    /// between it and the floor is pushed out of the body and back by the
    /// floor in every pass, and the body was credited with all those
    /// pushes (a 0.5 kg box dropped 5 cm onto cables on the floor left at
    /// 48 m/s). No real collision throws a body off faster than this.
    fn impulse_bounds(
        &self,
        sys: &CableSystem,
        pinch: Option<&Pinch>,
    ) -> std::collections::HashMap<u32, f32> {
        #[derive(Default)]
        struct Sum {
            j: Vec3,
            at: Vec3,
            weight: f32,
            e: f32,
            c: f32,
            pinched: bool,
            /// The contacts' segments' particles (cable, index in it).
            touched: Vec<(usize, usize)>,
        }
        let mut sums: std::collections::BTreeMap<u32, Sum> = Default::default();
        fn add(
            sums: &mut std::collections::BTreeMap<u32, Sum>,
            body: u32,
            j: Vec3,
            at: Vec3,
        ) -> &mut Sum {
            let s = sums.entry(body).or_default();
            let m = j.length();
            s.j += j;
            s.at += at * m;
            s.weight += m;
            s
        }
        let mut out = std::collections::HashMap::new();
        // None: no contact with a dynamic body.
        let Some(pinch) = pinch else {
            return out;
        };
        let mut base = Vec::with_capacity(self.cables.len());
        let mut first = 0u32;
        for c in &self.cables {
            base.push(first);
            first += c.x.len() as u32;
        }
        for c in &sys.body_contacts {
            if !c.dynamic || c.impulse == Vec3::ZERO {
                continue;
            }
            let s = add(&mut sums, c.body, c.impulse, c.point);
            s.e = s.e.max(c.e);
            s.pinched |= pinch.holder(sys, c).is_some();
            let seg = &sys.segs[c.seg as usize];
            let local = (seg.p - base[seg.cable as usize]) as usize;
            s.touched.push((seg.cable as usize, local));
        }
        for &(body, j, point) in &sys.retired {
            if j != Vec3::ZERO {
                add(&mut sums, body, j, point);
            }
        }
        for (body, mut s) in sums {
            let Some(b) = self.bodies.by_index(body) else {
                continue;
            };
            let len = s.j.length();
            if !s.pinched || !b.is_dynamic() || len == 0.0 || s.weight == 0.0 {
                continue;
            }
            let d = s.j / len;
            for &(k, i) in &s.touched {
                let first = base[k] as usize + i;
                let before = &self.cables[k].v[i..i + 2];
                for (v0, v1) in before.iter().zip(&sys.v[first..first + 2]) {
                    s.c = s.c.max(v0.dot(d)).max(v1.dot(d));
                }
            }
            let r = s.at / s.weight - b.com;
            let a = (b.linear_velocity + b.angular_velocity.cross(r)).dot(d);
            let rd = r.cross(d);
            let gain = len * (b.inv_mass + rd.dot(b.inv_inertia_world * rd));
            // As if off a cable of no give moving at `c`.
            let cap = (s.c + s.e * (s.c - a).max(0.0)).max(-s.e * a).max(0.0);
            if a + gain > cap && gain > 0.0 {
                out.insert(body, ((cap - a) / gain).clamp(0.0, 1.0));
            }
        }
        out
    }

    /// The body contacts the stage ends with that touch a dynamic body, or
    /// nearly (the world's speculative distance): the next step's supports.
    fn find_cable_supports(&mut self, sys: &CableSystem, pinch: Option<&Pinch>) {
        // The last ones' impulses, to start the same supports with.
        let last: std::collections::HashMap<(u32, u32, u32, i32), PointImpulse> = self
            .cable_supports
            .drain(..)
            .map(|s| ((s.body, s.seg, s.holder, s.at), s.impulse))
            .collect();
        let Some(pinch) = pinch else {
            return;
        };
        let reach = self.settings.speculative_distance;
        let mut wake = Vec::new();
        for c in &sys.body_contacts {
            let separation = gap(sys, c);
            // (A NaN gap is no support.)
            if !c.dynamic || separation.is_nan() || separation >= reach {
                continue;
            }
            let on_cable = c.point + c.n * separation;
            let (holder, far, separation) = match pinch.holder(sys, c) {
                None => continue,
                // Through the cable to the body behind it.
                Some(Holder::Body(h, q, g)) => (h, q, separation + g),
                // Through cables to the body under them (its gap to them
                // too), or the cable as a fixed point when the ground holds
                // it.
                Some(Holder::Ground(root, g)) => (root, on_cable, separation + g),
            };
            // A sleeping body holding an awake one wakes (with its island).
            if self.bodies.by_index(holder).is_some_and(|h| h.sleeping)
                && self.bodies.by_index(c.body).is_some_and(|b| !b.sleeping)
            {
                wake.push(holder);
            }
            let at = (c.s * 16.0).round() as i32;
            let impulse = last
                .get(&(c.body, c.seg, holder, at))
                .copied()
                .unwrap_or_default();
            self.cable_supports.push(CableSupport {
                body: c.body,
                holder,
                far,
                n: c.n,
                point: c.point,
                separation,
                mu: c.mu,
                seg: c.seg,
                at,
                impulse,
            });
        }
        for slot in wake {
            self.wake_index(slot);
        }
    }

    /// Contact points between segments (capsules of the cable's radius at
    /// the pairs' centre positions) and the bodies their boxes reach, with
    /// speculative points as far out as the segment can move this step.
    /// `segments`: only these (their new contacts are added to the kept
    /// ones); `None`: all.
    fn cable_body_contacts(
        &self,
        sys: &mut CableSystem,
        segments: Option<&[u32]>,
        moves: &[Option<Move>],
    ) {
        let clock = std::time::Instant::now();
        // Each body's box over the step (a moving body's at both poses).
        let bodies: Vec<(u32, Option<Aabb>)> = self
            .bodies
            .iter()
            .map(|(h, b)| {
                let aabb = (!b.shape.is_plane()).then(|| {
                    let end = b.shape.aabb(&b.pose);
                    // Widened by its reach: it may turn in between.
                    match moves[h.index as usize] {
                        Some(m) => end.union(&b.shape.aabb(&m.start)).expanded(m.reach),
                        None => end,
                    }
                });
                (h.index, aabb)
            })
            .collect();
        if bodies.is_empty() {
            return;
        }
        let all: Vec<u32>;
        let segments = match segments {
            Some(s) => s,
            None => {
                all = (0..sys.segs.len() as u32).collect();
                &all
            }
        };
        let par = segments.len() >= 1024 && sys.x.len() >= PARALLEL_FROM;
        let this = &*sys;
        // Each contact with its segment's position in the list.
        let run = |parity: Option<usize>| {
            let mut out: Vec<(usize, BodyContact)> = Vec::new();
            for (k, &seg) in segments.iter().enumerate() {
                if parity.is_some_and(|p| k % 2 != p) {
                    continue;
                }
                self.segment_body_contacts(this, seg as usize, &bodies, moves, |c| {
                    out.push((k, c))
                });
            }
            out
        };
        let found = if par {
            let (mut even, odd) = rayon::join(|| run(Some(0)), || run(Some(1)));
            // Back in list order (a stable sort: each segment's contacts
            // come from one side, in their order).
            even.extend(odd);
            even.sort_by_key(|&(k, _)| k);
            even
        } else {
            run(None)
        };
        sys.body_contacts.extend(found.into_iter().map(|(_, c)| c));
        sys.sort_body_contacts();
        sys.stats.body_contacts = sys.body_contacts.len() as u64;
        sys.stats.ms_bodies += clock.elapsed().as_secs_f64() * 1e3;
    }

    /// The particles of the segments whose centre line now meets a body it
    /// has a contact with, and did not at the substep's start (one that
    /// started inside cannot be helped by holding it back), ascending, each
    /// with the body when it is dynamic (it gets the momentum the particle
    /// loses), and where to hold it: where the substep began, carried along
    /// with a moving body (the body at its pose of the substep's end and of
    /// its start, see [`Move`]).
    fn cable_body_cuts(&self, sys: &CableSystem, h: f32, moves: &[Option<Move>]) -> Vec<HoldBack> {
        let (now, before) = sys.substep_span(h);
        // Segments against more than one body are not carried along with a
        // moving one (that could carry them into another): they are held
        // where the substep began.
        let mut multi = std::collections::HashSet::new();
        if moves.iter().any(Option::is_some) {
            let mut first = std::collections::HashMap::new();
            for c in &sys.body_contacts {
                if *first.entry(c.seg).or_insert(c.body) != c.body {
                    multi.insert(c.seg);
                }
            }
        }
        let mut out = Vec::new();
        let mut last = None;
        for c in &sys.body_contacts {
            if last == Some((c.seg, c.body)) {
                continue;
            }
            last = Some((c.seg, c.body));
            let p = sys.segs[c.seg as usize].p as usize;
            // Held already (a moving body may come onto where it was held):
            // nothing more to do, and the caller's loop ends.
            if sys.is_held(p) && sys.is_held(p + 1) {
                continue;
            }
            let (a, b) = (sys.x[p], sys.x[p + 1]);
            let mv = moves[c.body as usize];
            // Both ends beyond the body's support plane along the contact's
            // normal keep the segment out (the common case, resting on a
            // face; a moving body has no fixed plane).
            if mv.is_none() && c.n.dot(a) >= c.support && c.n.dot(b) >= c.support {
                continue;
            }
            let Some(body) = self.bodies.by_index(c.body) else {
                continue;
            };
            // The body where the substep ends and where it began.
            let (pose_now, pose_before) = match mv {
                Some(m) => (m.pose_at(&body.pose, now), m.pose_at(&body.pose, before)),
                None => (body.pose, body.pose),
            };
            let meets = |a: Vec3, b: Vec3, pose: &Pose| {
                let d = b - a;
                let len = d.length();
                let dir = if len > 0.0 { d / len } else { Vec3::X };
                collision::ray_cast(&body.shape, pose, a, dir, len).is_some()
            };
            if meets(a, b, &pose_now) && !meets(sys.prev[p], sys.prev[p + 1], &pose_before) {
                // Where the substep began, carried along with the body: as
                // clear of it as it was then.
                let carry = mv.is_some() && !multi.contains(&c.seg);
                let carried = |q: Vec3| {
                    if carry {
                        pose_now.transform_point(pose_before.inverse_transform_point(q))
                    } else {
                        q
                    }
                };
                // A dynamic body gets the held particle's momentum, at the
                // point on it at its end pose (where impulses are applied).
                let taker = |q: Vec3| {
                    body.is_dynamic().then(|| {
                        (
                            c.body,
                            body.pose
                                .transform_point(pose_now.inverse_transform_point(q)),
                        )
                    })
                };
                out.extend([p, p + 1].map(|i| {
                    let at = carried(sys.prev[i]);
                    HoldBack {
                        particle: i,
                        body: taker(at),
                        at,
                    }
                }));
            }
        }
        // One entry per particle (the first body it cuts into takes its
        // momentum).
        out.sort_by_key(|hb| hb.particle);
        out.dedup_by_key(|hb| hb.particle);
        out
    }

    /// The body contacts of segment `seg` (see [`Self::cable_body_contacts`]).
    fn segment_body_contacts(
        &self,
        sys: &CableSystem,
        seg: usize,
        bodies: &[(u32, Option<Aabb>)],
        moves: &[Option<Move>],
        mut push: impl FnMut(BodyContact),
    ) {
        let p = sys.segs[seg].p as usize;
        if sys.w[p] == 0.0 && sys.w[p + 1] == 0.0 {
            return;
        }
        let (lo, hi) = sys.seg_box(seg);
        let seg_box = Aabb::new(lo, hi);
        let mut capsule: Option<(Shape, Pose, Vec3, f32)> = None;
        for &(bi, aabb) in bodies {
            if aabb.is_some_and(|a| !a.overlaps(&seg_box)) {
                continue;
            }
            let Some(b) = self.bodies.by_index(bi) else {
                continue;
            };
            let r = sys.radius(seg);
            let (x0, x1) = (sys.center[p], sys.center[p + 1]);
            let (shape, pose, d, len) = capsule.get_or_insert_with(|| {
                let d = x1 - x0;
                let len = d.length();
                let pose = Pose::new(
                    (x0 + x1) * 0.5,
                    Quat::from_rotation_arc(Vec3::Y, d.normalize_or(Vec3::Y)),
                );
                (Shape::capsule((0.5 * len).max(1.0e-5), r), pose, d, len)
            });
            // A moving body where the segment's base positions were taken,
            // reaching as far as both can move from there.
            let at = sys.built_at();
            let mv = moves[bi as usize];
            let (body_pose, body_reach) = match mv {
                Some(m) => (m.pose_at(&b.pose, at), m.reach * (1.0 - at)),
                None => (b.pose, 0.0),
            };
            let mut cache = collision::PairCache::default();
            let reach = sys.seg_reach(seg) + body_reach;
            let Some(m) =
                collision::contact_manifold(shape, pose, &b.shape, &body_pose, reach, &mut cache)
            else {
                continue;
            };
            let (mu, e) = (
                (sys.friction(seg) * b.friction).sqrt(),
                sys.restitution(seg).max(b.restitution),
            );
            let contact = |s: f32, n: Vec3, q: Vec3| {
                let mut c = BodyContact::new(seg as u32, s, n, q, r, mu, e, bi, b.is_dynamic());
                // A clipped manifold's plane may tilt below the body's
                // support (a face taken for a nearly parallel edge).
                if !b.shape.is_plane() {
                    c.support = c.support.max(n.dot(b.shape.support_world(&b.pose, n)));
                }
                match mv {
                    // The body's point, carried from the start pose to the end.
                    Some(m) => {
                        let local = body_pose.inverse_transform_point(q);
                        let end = b.pose.transform_point(local);
                        c.moving(end - m.start.transform_point(local), at, end)
                    }
                    None => c,
                }
            };
            // The segment's points nearest the body.
            let out = -m.normal;
            let mut at_end = [false; 2];
            for cp in m.points() {
                let axis = cp.point_a + out * r;
                let s = if *len > 1.0e-9 {
                    ((axis - x0).dot(*d) / (*len * *len)).clamp(0.0, 1.0)
                } else {
                    0.5
                };
                at_end[0] |= s <= END_SHARE;
                at_end[1] |= s >= 1.0 - END_SHARE;
                push(contact(s, out, cp.point_b));
            }
            // Each end that can reach the body this step on its own (a
            // segment swinging about its other end, say), as a sphere,
            // unless a nearest point is already there.
            for (k, (s, i)) in [(0.0, p), (1.0, p + 1)].into_iter().enumerate() {
                if sys.w[i] == 0.0 || at_end[k] {
                    continue;
                }
                let ball = Shape::sphere(r);
                let ball_pose = Pose::new(sys.center[i], Quat::IDENTITY);
                let mut cache = collision::PairCache::default();
                if let Some(m) = collision::contact_manifold(
                    &ball,
                    &ball_pose,
                    &b.shape,
                    &body_pose,
                    sys.reach(i) + body_reach,
                    &mut cache,
                ) {
                    if let Some(cp) = m.points().first() {
                        push(contact(s, -m.normal, cp.point_b));
                    }
                }
            }
        }
    }
}
