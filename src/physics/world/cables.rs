//! Stage 7 of the step: cables (see `physics/cable/`).

use super::cable_supports::Pinch;
use super::continuous::angle_between;
use super::World;
use crate::physics::cable::pairs::{overlap, Grid};
use crate::physics::cable::solver::{
    BodyContact, CableSystem, CoupledBody, Extension, HoldBack, Seg, PARALLEL_FROM,
};
use crate::physics::cable::{self, MAX_STEP_BODY_CONTACTS};
use crate::physics::collision;
use crate::physics::math::{Pose, Quat, Vec3};
use crate::physics::shape::Shape;
use std::sync::atomic::{AtomicBool, Ordering};

/// A nearest point this close to a segment's end (as a share of its
/// length) holds that end: it gets no sphere contact of its own.
const END_SHARE: f32 = 1.0e-3;

/// Two contacts of one particle with one body whose normals are this close
/// (their cosine) are the same constraint.
const SAME_NORMAL: f32 = 0.9999;

/// The contacts of `found` but those that repeat one at a particle's
/// end: a particle between two segments of a cable is the end of both,
/// and each may give it a contact of its own with a body (a sphere, or a
/// nearest point within [`END_SHARE`] of the end). With the same normal (a
/// face, a sphere) they are the same constraint twice, and only the first
/// stays. Twice, it had twice the friction, and
/// (solved in turn) it stood on both sides of the other contacts, so that
/// no order of them was the mirror of another. Over a body's edge the two
/// normals differ (one per face): both stay.
fn without_repeated_ends(
    segs: &[Seg],
    found: impl Iterator<Item = BodyContact>,
) -> Vec<BodyContact> {
    let end_of = |c: &BodyContact| {
        let p = segs[c.seg as usize].p;
        if c.s <= END_SHARE {
            Some(p)
        } else if c.s >= 1.0 - END_SHARE {
            Some(p + 1)
        } else {
            None
        }
    };
    let mut ends: std::collections::HashMap<(u32, u32), Vec<Vec3>> = Default::default();
    found
        .filter(|c| {
            let Some(p) = end_of(c) else {
                return true;
            };
            let normals = ends.entry((p, c.body)).or_default();
            if normals.iter().any(|n| n.dot(c.n) >= SAME_NORMAL) {
                return false;
            }
            normals.push(c.n);
            true
        })
        .collect()
}

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
pub(super) struct Move {
    pub(super) start: Pose,
    /// How far any point of the body moves in the step (at most).
    pub(super) reach: f32,
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

/// Bodies with boxes up to which a segment tests each box (in the
/// 50,000-segment bench's box of five walls, the grid's query and sort
/// took 4.1 ms a step against 2.6 for the plain loop).
const DIRECT_BODIES: usize = 32;

/// The bodies' boxes over a step, for the cable segments' body contacts:
/// those of the bodies with a box, by slot, in a grid (a segment reads
/// the bodies near it, not every body: 10,000 segments beside 5,000
/// bodies tested 50 million boxes a step), and the planes apart.
#[derive(Default)]
struct BodyBoxes {
    /// Every body by slot, with its box (`None`: a plane).
    all: Vec<(u32, Option<(Vec3, Vec3)>)>,
    slots: Vec<u32>,
    boxes: Vec<(Vec3, Vec3)>,
    grid: Grid,
    planes: Vec<u32>,
}

impl World {
    /// Stage 7: every cable as one particle system (see `cable/mod.rs`):
    /// pairs and body contacts found once per step, then XPBD substeps that
    /// solve segments and contacts and prove that no two segments crossed.
    pub(super) fn step_cables(&mut self, dt: f32) {
        self.cable_rest_speed.clear();
        self.moved_cables.clear();
        self.cable_sleep_links.clear();
        if self.cables.is_empty() {
            self.cable_stats = Default::default();
            self.cable_swing = 0;
            return;
        }
        // Large systems (by their awake cables' particles: a sleeping
        // heap's cost little each, and with one cable awake over 50,000
        // asleep the second thread only waited, at the same wall time and
        // twice the CPU; cables the stage itself wakes count here from the
        // next step, and the stage's split counts them at once)
        // split work in two many times a step: run the whole
        // stage on a pool thread, so that each split is a local fork-join
        // rather than a job handed over from outside the pool.
        let large = self
            .cables
            .iter()
            .filter(|c| !c.sleeping)
            .map(|c| c.x.len())
            .sum::<usize>()
            >= PARALLEL_FROM;
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
        let moves = self.body_moves();
        let reachable = self.body_boxes(&moves);
        // Sleeping cables something may reach this step wake first; with
        // every cable still asleep, nothing of the stage is left to do.
        if !self.wake_cables(&moves, dt) {
            // (The supports of bodies resting on them stay.)
            self.cable_stats = Default::default();
            self.cable_stats.asleep = self.cables.len() as u64;
            self.cable_swing = 0;
            return;
        }
        self.moved_cables
            .extend(self.cables.iter().filter(|c| !c.sleeping).map(|c| c.id));
        let mut sys = std::mem::take(&mut self.cable_system);
        // More substeps where a cable's particles move apart fast: at this
        // step's start, or the last one's (a stretched cable swinging back
        // through its rest gathers its speed within the step).
        let swing = cable::swing_substeps(self.cables.iter(), dt);
        let base = self.settings.cable_substeps.max(1);
        let n = swing.max(self.cable_swing).clamp(
            base,
            base.saturating_mul(self.settings.cable_substep_factor.max(1)),
        );
        self.cable_swing = swing;
        let h = dt / n as f32;
        let g = self.settings.gravity;
        sys.load(&self.cables);
        sys.begin(dt, h, g);
        if sys.overflowed() {
            return self.cable_pairs_fault(sys.stats);
        }
        if !self.cable_body_contacts(&mut sys, None, &moves, &reachable) {
            return self.cable_contacts_fault(sys.stats);
        }
        sys.couple(self.coupled_bodies(&sys));
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
                let extension = sys.extend(h, g);
                if sys.overflowed() {
                    return self.cable_pairs_fault(sys.stats);
                }
                match extension {
                    Extension::None => break,
                    Extension::Grown(grown) => {
                        first = before;
                        if !self.cable_body_contacts(&mut sys, Some(&grown), &moves, &reachable) {
                            return self.cable_contacts_fault(sys.stats);
                        }
                    }
                    Extension::Rebuilt => {
                        first = 0;
                        sys.retire_body_contacts();
                        if !self.cable_body_contacts(&mut sys, None, &moves, &reachable) {
                            return self.cable_contacts_fault(sys.stats);
                        }
                    }
                }
            }
            sys.finish_substep(h, self.settings.cable_audit);
        }
        // Before the cables take their new velocities (the bound needs
        // those they had). Only for a dynamic body that is awake or asleep
        // without supports (it may get one), or got an impulse (it may be
        // bounded).
        let supported: std::collections::HashSet<u32> =
            self.cable_supports.iter().map(|s| s.body).collect();
        let concerned = |c: &BodyContact| {
            c.dynamic
                && (c.impulse != Vec3::ZERO
                    || !supported.contains(&c.body)
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
        self.apply_cable_impulses(&sys, &scale, &loads, dt);
        self.move_coupled_bodies(&sys);
        self.settle_riders();
        self.find_cable_supports(&sys, pinch.as_ref());
        self.update_cable_sleep(&sys, dt);
        self.cable_stats = sys.stats;
        self.cable_stats.substeps = n as u64;
        self.cable_stats.asleep = self.cables.iter().filter(|c| c.sleeping).count() as u64;
        self.cable_system = sys;
    }

    /// The dynamic bodies that move in the stage by what their cable
    /// contacts give them (`cable/solver/coupled.rs`): those awake with
    /// contacts at the stage's start, none of whose segments is held from
    /// its other side then (those keep their bounded impulses and
    /// supports). A segment pinned at one end gives way about its pin, so
    /// it does not keep a body from being coupled (one pinned at both ends
    /// has no body contacts).
    ///
    /// Each comes with its riders (`world/cable_riders.rs`), kept in
    /// `cable_riders` for the stage's end.
    fn coupled_bodies(&mut self, sys: &CableSystem) -> Vec<CoupledBody> {
        self.cable_riders.clear();
        self.cable_rider_holds.clear();
        let awake = |c: &BodyContact| {
            c.dynamic
                && self
                    .bodies
                    .by_index(c.body)
                    .is_some_and(|b| !b.sleeping && b.inv_mass > 0.0)
        };
        if !sys.body_contacts.iter().any(awake) {
            return Vec::new();
        }
        let pinch = Pinch::new(sys, self.settings.speculative_distance);
        let mut pinched = std::collections::BTreeSet::new();
        let mut touched = std::collections::BTreeSet::new();
        for c in sys.body_contacts.iter().filter(|c| awake(c)) {
            touched.insert(c.body);
            if pinch.held_behind(c) {
                pinched.insert(c.body);
            }
        }
        let roots: Vec<u32> = touched.difference(&pinched).copied().collect();
        (self.cable_riders, self.cable_rider_holds) = self.cable_riders(&roots, &touched);
        let mut out = Vec::with_capacity(roots.len());
        for slot in roots {
            let Some(b) = self.bodies.by_index(slot) else {
                continue;
            };
            let alone = CoupledBody::new(slot, b.com, b.inv_mass, b.inv_inertia_world);
            let riders: Vec<u32> = self.riders_of(slot).iter().map(|&(_, r)| r).collect();
            if riders.is_empty() {
                out.push(alone);
                continue;
            }
            match self.composite(slot, &riders) {
                Some(cb) => out.push(cb),
                None => {
                    // It moves alone, without them.
                    self.drop_riders(slot);
                    out.push(alone);
                }
            }
        }
        out
    }

    /// Each coupled body takes the displacement and rotation the stage
    /// gave it beyond its path (its velocity took the impulses).
    fn move_coupled_bodies(&mut self, sys: &CableSystem) {
        for cb in sys.coupled_bodies() {
            let Some(b) = self.bodies.by_index_mut(cb.body) else {
                continue;
            };
            let (com, rotation) = cb.displaced(b.com, b.pose.rotation, true);
            if com.is_finite() && rotation.is_finite() {
                b.set_com_pose(com, rotation);
                b.update_inertia();
            }
            self.move_riders(cb);
        }
    }

    /// Each body's box over the step (a moving body's at both poses), in a
    /// grid for the segments' queries; planes apart.
    fn body_boxes(&self, moves: &[Option<Move>]) -> BodyBoxes {
        let mut out = BodyBoxes::default();
        for (h, b) in self.bodies.iter() {
            if b.shape.is_plane() {
                out.planes.push(h.index);
                out.all.push((h.index, None));
                continue;
            }
            let end = b.shape.aabb(&b.pose);
            // Widened by its reach: it may turn in between.
            let aabb = match moves[h.index as usize] {
                Some(m) => end.union(&b.shape.aabb(&m.start)).expanded(m.reach),
                None => end,
            };
            out.slots.push(h.index);
            out.boxes.push((aabb.min, aabb.max));
            out.all.push((h.index, Some((aabb.min, aabb.max))));
        }
        if out.slots.len() > DIRECT_BODIES {
            out.grid.build(&out.boxes, false);
        }
        out
    }

    /// Contact points between segments (capsules of the cable's radius at
    /// the pairs' centre positions) and the bodies their boxes reach, with
    /// speculative points as far out as the segment can move this step.
    /// `segments`: only these (their new contacts are added to the kept
    /// ones); `None`: all those of awake cables (a sleeping cable's have
    /// none). False (and nothing added) when they would pass
    /// [`MAX_STEP_BODY_CONTACTS`].
    fn cable_body_contacts(
        &self,
        sys: &mut CableSystem,
        segments: Option<&[u32]>,
        moves: &[Option<Move>],
        bodies: &BodyBoxes,
    ) -> bool {
        let clock = std::time::Instant::now();
        if bodies.all.is_empty() {
            return true;
        }
        let all: Vec<u32>;
        let segments = match segments {
            Some(s) => s,
            None => {
                all = sys.awake_segments().map(|k| k as u32).collect();
                &all
            }
        };
        let par = segments.len() >= 1024 && sys.parallel();
        let this = &*sys;
        let room = MAX_STEP_BODY_CONTACTS.saturating_sub(sys.body_contacts.len());
        // Each contact with its segment's position in the list (`None`:
        // past the room left).
        let run = |parity: Option<usize>| {
            let mut out: Vec<(usize, BodyContact)> = Vec::new();
            let mut near = Vec::new();
            for (k, &seg) in segments.iter().enumerate() {
                if parity.is_some_and(|p| k % 2 != p) {
                    continue;
                }
                if out.len() > room {
                    return None;
                }
                self.segment_body_contacts(this, seg as usize, bodies, &mut near, moves, |c| {
                    out.push((k, c))
                });
            }
            Some(out)
        };
        let found = if par {
            let (even, odd) = rayon::join(|| run(Some(0)), || run(Some(1)));
            let (Some(mut even), Some(odd)) = (even, odd) else {
                return false;
            };
            // Back in list order (a stable sort: each segment's contacts
            // come from one side, in their order).
            even.extend(odd);
            even.sort_by_key(|&(k, _)| k);
            even
        } else {
            let Some(found) = run(None) else {
                return false;
            };
            found
        };
        if found.len() > room {
            return false;
        }
        // (Only among the new ones: with the contacts kept from before also
        // counted, when an extension renews some segments', the 0.5 kg box
        // dropped on a heap in `boxes_dropped_on_cables_rest_on_them_and_sleep`
        // slept at step 97 instead of within 90; not traced, not kept. A
        // repeat between a renewed segment and a kept one stays until the
        // next build.)
        let fresh = without_repeated_ends(&sys.segs, found.into_iter().map(|(_, c)| c));
        sys.body_contacts.extend(fresh);
        sys.sort_body_contacts();
        sys.stats.body_contacts = sys.body_contacts.len() as u64;
        sys.stats.ms_bodies += clock.elapsed().as_secs_f64() * 1e3;
        true
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
            let coupled = sys.coupled_body(c);
            if mv.is_none()
                && coupled.is_none()
                && c.n.dot(a) >= c.support
                && c.n.dot(b) >= c.support
            {
                continue;
            }
            let Some(body) = self.bodies.by_index(c.body) else {
                continue;
            };
            // The body where the substep ends and where it began (a
            // coupled one moved on by what its contacts gave it).
            let (mut pose_now, mut pose_before) = match mv {
                Some(m) => (m.pose_at(&body.pose, now), m.pose_at(&body.pose, before)),
                None => (body.pose, body.pose),
            };
            if let Some(cb) = coupled {
                let shift = |pose: Pose, now: bool| {
                    let com = pose.transform_point(body.local_center);
                    let (com, rotation) = cb.displaced(com, pose.rotation, now);
                    Pose::new(com - rotation * body.local_center, rotation)
                };
                (pose_now, pose_before) = (shift(pose_now, true), shift(pose_before, false));
            }
            let meets = |a: Vec3, b: Vec3, pose: &Pose| {
                let d = b - a;
                let len = d.length();
                let dir = if len > 0.0 { d / len } else { Vec3::X };
                collision::ray_cast(&body.shape, pose, a, dir, len).is_some()
            };
            if meets(a, b, &pose_now) && !meets(sys.prev[p], sys.prev[p + 1], &pose_before) {
                // Where the substep began, carried along with the body: as
                // clear of it as it was then.
                let carry = (mv.is_some() || coupled.is_some()) && !multi.contains(&c.seg);
                let carried = |q: Vec3| {
                    if carry {
                        pose_now.transform_point(pose_before.inverse_transform_point(q))
                    } else {
                        q
                    }
                };
                // A dynamic body gets the held particle's momentum, at the
                // point on it at its end pose (where impulses are applied).
                // (A coupled body where the contact touches it, at the
                // lever its contact's corrections had: its impulses'
                // point. The held particle's sideways momentum at a lever
                // of its own spun a ball a rope wrapped at thousands of
                // rad/s.)
                let taker = |q: Vec3| {
                    body.is_dynamic().then(|| match coupled {
                        Some(_) => (c.body, c.point),
                        None => (
                            c.body,
                            body.pose
                                .transform_point(pose_now.inverse_transform_point(q)),
                        ),
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
        bodies: &BodyBoxes,
        near: &mut Vec<u32>,
        moves: &[Option<Move>],
        mut push: impl FnMut(BodyContact),
    ) {
        let p = sys.segs[seg].p as usize;
        if sys.w[p] == 0.0 && sys.w[p + 1] == 0.0 {
            return;
        }
        let seg_box = sys.seg_box(seg);
        // The bodies whose boxes it overlaps, and the planes, by slot (the
        // order of the world's bodies).
        near.clear();
        if bodies.slots.len() <= DIRECT_BODIES {
            // Few: each box tested, in slot order.
            let reached =
                |(_, b): &&(u32, Option<(Vec3, Vec3)>)| b.is_none_or(|b| overlap(&b, &seg_box));
            near.extend(bodies.all.iter().filter(reached).map(|&(slot, _)| slot));
        } else {
            bodies.grid.query(&seg_box, |_| false, near);
            near.retain(|&k| overlap(&bodies.boxes[k as usize], &seg_box));
            for k in near.iter_mut() {
                *k = bodies.slots[*k as usize];
            }
            near.extend_from_slice(&bodies.planes);
            near.sort_unstable();
        }
        let mut capsule: Option<(Shape, Pose, Vec3, f32)> = None;
        for &bi in near.iter() {
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
                // Where it touches, from the centre of mass (if the body is
                // coupled, its lever for the rest of the step is from the
                // centre of mass of it and its riders: `BodyContact::lever`).
                c.arm = q - body_pose.transform_point(b.local_center);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cable::CableSpec;
    use crate::physics::{BodyKind, BodySpec, ShapeSpec};

    /// A cable of four segments lying on a box's top face: each segment's
    /// nearest points are its two ends, so each particle between two
    /// segments was given two contacts with the box, one by each (the
    /// same constraint twice, with twice the friction). Now every particle
    /// has one.
    #[test]
    fn a_particle_between_two_segments_has_one_contact_with_a_body() {
        let mut w = World::default();
        let floor = BodySpec::new(ShapeSpec::Box {
            half_extents: [1.0, 0.1, 1.0],
        })
        .kind(BodyKind::Static)
        .position([0.0, -0.1, 0.0]);
        w.add_body(&floor).unwrap();
        let mut spec = CableSpec::new([-0.4, 0.02, 0.0], [0.4, 0.02, 0.0], 4);
        spec.radius = 0.02;
        w.add_cable(&spec).unwrap();
        w.step();
        let sys = &w.cable_system;
        let mut per_particle = [0; 5];
        for c in &sys.body_contacts {
            let p = sys.segs[c.seg as usize].p as usize;
            assert!(
                c.s <= END_SHARE || c.s >= 1.0 - END_SHARE,
                "a contact inside segment {} at s = {}",
                c.seg,
                c.s
            );
            per_particle[p + (c.s > 0.5) as usize] += 1;
        }
        assert_eq!(per_particle, [1; 5], "contacts by particle");
    }

    /// Contacts at the particle between segments 0 and 1: the same normal
    /// from both segments is one constraint (the second goes); over a body's edge (normals +y from
    /// one face and +x from the other) both stay, and so do contacts
    /// inside a segment and another body's.
    #[test]
    fn only_a_repeated_end_contact_goes() {
        let seg = |p| Seg {
            p,
            cable: 0,
            rest: 0.1,
            compliance: 1e-6,
        };
        let segs = [seg(0), seg(1)];
        let contact = |seg: u32, s: f32, n: Vec3, body: u32| {
            BodyContact::new(seg, s, n, Vec3::ZERO, 0.02, 0.5, 0.0, body, false)
        };
        let found = [
            contact(0, 1.0, Vec3::Y, 7),
            contact(1, 0.0, Vec3::Y, 7),
            contact(1, 0.0005, Vec3::X, 7),
            contact(1, 0.5, Vec3::Y, 7),
            contact(1, 0.0, Vec3::Y, 8),
        ];
        let kept = without_repeated_ends(&segs, found.into_iter());
        let got: Vec<(u32, f32, Vec3, u32)> =
            kept.iter().map(|c| (c.seg, c.s, c.n, c.body)).collect();
        assert_eq!(
            got,
            vec![
                (0, 1.0, Vec3::Y, 7),
                (1, 0.0005, Vec3::X, 7),
                (1, 0.5, Vec3::Y, 7),
                (1, 0.0, Vec3::Y, 8),
            ]
        );
    }
}
