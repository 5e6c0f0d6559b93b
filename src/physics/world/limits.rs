//! What a world refuses besides bad values: cables and bodies spawned so
//! far into each other (or so fast, or moved so, or a step rate or
//! gravity that sweeps them so far) that the step would have to handle a
//! number of pairs quadratic in them. The count goes through the cables'
//! grid ([`count_overlaps_with`]) and stops past the limit; the pairs of
//! the cables already in the world are first bounded from the grid's
//! buckets' sizes ([`World::cable_overlap_bound`]) and counted only where
//! the bound would refuse.
//!
//! And what a step refuses: things spawned apart can still meet at speed,
//! many at one place. Past [`MAX_STEP_BODY_PAIRS`] pairs of bodies (or
//! [`MAX_BODY_CANDIDATES`] candidates in the broad phase) the step is not
//! taken, and past [`MAX_STEP_PAIRS`] pairs of cable segments the cable
//! stage keeps nothing; [`World::fault`] says why.

use super::World;
use crate::physics::aabb::Aabb;
use crate::physics::broad_phase::BroadPhase;
use crate::physics::cable::pairs::{count_overlaps_with, overlap, Grid};
use crate::physics::cable::{
    Cable, CableStats, MAX_OVERLAPS, MAX_STEP_BODY_CONTACTS, MAX_STEP_PAIRS,
};
use crate::physics::math::Vec3;

/// Slack (m) of a segment's box when a cable's overlaps are counted
/// ([`World::check_new_cables`]): a particle's tube's least.
const SPAWN_MARGIN: f32 = 0.005;

/// Most pairs of bodies whose boxes (with the broad phase's margin, and
/// their motion over a step) overlap, and of planes and other bodies, that
/// a world may have when a body joins or is moved: the pairs of the last
/// step's broad phase and those of the bodies added or moved since. 20,000 boxes (a world's most by default) in a tight lattice make
/// about 260,000; 1,000 spheres spawned at one point, 500,000, and their
/// first step took 1 s and 390 MB; 3,000 took 17.5 s and 3.4 GB, and
/// 20,000 would exhaust the memory and take the server down.
pub const MAX_BODY_OVERLAPS: u64 = 500_000;

/// Most pairs of overlapping body boxes a step's broad phase may list
/// (twice [`MAX_BODY_OVERLAPS`], which bounds them when bodies are spawned
/// or moved; bodies spawned apart that meet at speed can pass it). Past it
/// the step is not taken and the world reports a fault ([`World::fault`]):
/// a step's memory stays bounded. (At 2,000,000 a reviewer's 1,975
/// spheres met in 1.95 million pairs: 10 s and 2 GB for that step.)
pub const MAX_STEP_BODY_PAIRS: usize = 2 * MAX_BODY_OVERLAPS as usize;

/// Most candidate pairs (boxes overlapping along the axes it keeps
/// sorted) the broad phase keeps (about 40 bytes each): past it, with
/// every axis tracked, its update stops and the step is not taken either.
/// A column of 20,000 boxes lists 3 million along its one tracked axis.
pub const MAX_BODY_CANDIDATES: usize = 8 * MAX_STEP_BODY_PAIRS;

/// A world's broad phase, with its candidate limit.
pub(super) fn broad_phase() -> BroadPhase {
    let mut b = BroadPhase::new();
    b.set_candidate_limit(Some(MAX_BODY_CANDIDATES));
    b
}

/// The box around all of `boxes` (`None`: no box).
fn bounds(boxes: impl Iterator<Item = (Vec3, Vec3)>) -> Option<(Vec3, Vec3)> {
    boxes.reduce(|(lo, hi), b| (lo.min(b.0), hi.max(b.1)))
}

impl World {
    /// Why the last step stopped short, as one line starting `limit: `
    /// (`None`: it was whole). The bodies' broad phase listing more than
    /// [`MAX_STEP_BODY_PAIRS`] pairs (or [`MAX_BODY_CANDIDATES`]
    /// candidates): nothing moved, and the tick did not advance. The cable
    /// stage's grid listing more than [`MAX_STEP_PAIRS`]: the bodies took
    /// their step, the cables did not (they stand as they were, velocities
    /// kept), and the tick advanced. Either happens only when things
    /// spawned apart meet at speed, many at one place; the server pauses
    /// such a world (`world_thread.rs`), and each later step tries again.
    pub fn fault(&self) -> Option<&str> {
        self.fault.as_deref()
    }

    /// Stage 3: each active body's box, swept over the step, and the
    /// broad phase's pairs.
    pub(super) fn update_broad_phase(&mut self, dt: f32) {
        let margin = self.settings.aabb_margin;
        let spec = self.settings.speculative_distance;
        for (h, b) in self.bodies.iter() {
            if !Self::is_active(b) || b.shape.is_plane() {
                continue;
            }
            let tight = b.shape.aabb(&b.pose);
            let swept = self
                .step_sweep(b, tight, dt)
                .expanded(spec + b.angular_velocity.length() * dt * b.bounding_radius);
            self.broad.update_fat(h.index, swept, margin);
        }
        self.broad.update_pairs();
    }

    /// After the broad phase: whether its pairs are past the step's limits
    /// (then the fault is set and the step stops there). Clears the last
    /// step's fault otherwise.
    pub(super) fn body_pairs_fault(&mut self) -> bool {
        let pairs = self.broad.pair_count();
        self.fault = (self.broad.overflowed() || pairs > MAX_STEP_BODY_PAIRS).then(|| {
            format!(
                "limit: the bodies' boxes overlap in more than {MAX_STEP_BODY_PAIRS} pairs at tick {}, the most a step may handle; the step was not taken (bodies that met at speed: remove or separate some)",
                self.tick
            )
        });
        self.fault.is_some()
    }

    /// The cable stage stops (nothing of it is kept: the cables stand as
    /// they were) because its grid listed more than [`MAX_STEP_PAIRS`]
    /// segment pairs.
    pub(super) fn cable_pairs_fault(&mut self, stats: CableStats) {
        self.cable_fault(
            format!("the cables' segments would meet in more than {MAX_STEP_PAIRS} pairs"),
            stats,
        );
    }

    /// Likewise, past [`MAX_STEP_BODY_CONTACTS`] contacts of segments with
    /// bodies.
    pub(super) fn cable_contacts_fault(&mut self, stats: CableStats) {
        self.cable_fault(
            format!("the cables' segments would touch bodies in more than {MAX_STEP_BODY_CONTACTS} contacts"),
            stats,
        );
    }

    fn cable_fault(&mut self, what: String, stats: CableStats) {
        self.fault = Some(format!(
            "limit: {what} at tick {}; the cables were not moved in this step (things that met at speed: remove some)",
            self.tick
        ));
        self.moved_cables.clear();
        self.cable_stats = CableStats {
            ms_pairs: stats.ms_pairs,
            ms_extend: stats.ms_extend,
            ms_bodies: stats.ms_bodies,
            ..Default::default()
        };
    }

    /// Sets gravity (wakes everything); refused as [`Self::set_step`] says.
    pub fn set_gravity(&mut self, g: Vec3) -> Result<(), String> {
        self.set_step(None, Some(g))
    }

    /// Sets the tick rate; the step length follows it. Refused as
    /// [`Self::set_step`] says.
    pub fn set_tick_hz(&mut self, hz: f64) -> Result<(), String> {
        self.set_step(Some(hz), None)
    }

    /// Sets the tick rate and gravity, both or neither: a slower rate or a
    /// stronger gravity (longer steps or falls, longer swept boxes) is
    /// refused when the world's cables or bodies would then pass their
    /// limits of overlapping pairs (`world/limits.rs`).
    pub fn set_step(&mut self, hz: Option<f64>, g: Option<Vec3>) -> Result<(), String> {
        let dt = hz.map_or(self.settings.dt, |hz| (1.0 / hz) as f32);
        let gravity = g.unwrap_or(self.settings.gravity);
        if dt > self.settings.dt || gravity.length() > self.settings.gravity.length() {
            self.check_step(dt, gravity)?;
        }
        if let Some(hz) = hz {
            self.tick_hz = hz;
            self.settings.dt = dt;
        }
        if g.is_some() {
            self.settings.gravity = gravity;
            self.wake_all();
        }
        self.cable_overlap_count = None;
        Ok(())
    }

    /// Undoes [`Self::insert_body`] of a body nothing has seen yet.
    pub(super) fn withdraw_body(&mut self, id: u64) {
        let Some(h) = self.ids.remove(&id) else {
            return;
        };
        if self.bodies.get(h).is_some_and(|b| b.shape.is_plane()) {
            self.planes.retain(|&p| p != h.index);
        } else {
            self.broad.remove(h.index);
        }
        self.pending_moved.retain(|&m| m != id);
        self.bodies.remove(h);
    }

    /// The box segment `k` of `c` may sweep in a step of `dt` as the
    /// step's broad phase sees it: both ends where they are and where their
    /// velocity and gravity take them, with the collision radius,
    /// [`SPAWN_MARGIN`], a tenth of the displacement and a quarter of
    /// gravity's (about a tube's slack).
    fn segment_sweep(c: &Cable, k: usize, dt: f32, g: Vec3) -> (Vec3, Vec3) {
        let (a, b) = (c.x[k], c.x[k + 1]);
        let fall = g * (0.5 * dt * dt);
        let (da, db) = (c.v[k] * dt + fall, c.v[k + 1] * dt + fall);
        let slack = c.collision_radius()
            + SPAWN_MARGIN
            + 0.1 * da.length().max(db.length())
            + 0.25 * g.length() * dt * dt;
        let lo = a.min(b).min(a + da).min(b + db);
        let hi = a.max(b).max(a + da).max(b + db);
        (lo - Vec3::splat(slack), hi + Vec3::splat(slack))
    }

    /// The overlapping pairs of segment sweeps ([`Self::segment_sweep`])
    /// among the cables `old` with those of `new` (each pair with one from
    /// `new`, once), counted up to past `limit`. With `reach` (each old
    /// cable's sweeps' bounds, by cable), only the old cables whose bounds
    /// meet the new ones' have their segments' sweeps taken.
    fn count_cable_overlaps(
        &self,
        old: impl Iterator<Item = usize>,
        new: impl Iterator<Item = usize> + Clone,
        limit: u64,
        reach: Option<&[(Vec3, Vec3)]>,
    ) -> u64 {
        let (dt, g) = (self.settings.dt, self.settings.gravity);
        let boxes_of = |ci: usize| {
            let c = &self.cables[ci];
            (0..c.segments()).map(move |k| (Self::segment_sweep(c, k, dt, g), (ci, k)))
        };
        let Some(region) = bounds(new.clone().flat_map(boxes_of).map(|(b, _)| b)) else {
            return 0;
        };
        // The others' segments within the new ones' reach, then the new
        // ones'; with each box, its cable and segment.
        let (mut boxes, mut owner) = (Vec::new(), Vec::new());
        let near = |ci: &usize| reach.is_none_or(|r| overlap(&r[*ci], &region));
        for (b, o) in old
            .filter(near)
            .flat_map(boxes_of)
            .filter(|(b, _)| overlap(b, &region))
        {
            boxes.push(b);
            owner.push(o);
        }
        let fresh = boxes.len();
        for (b, o) in new.flat_map(boxes_of) {
            boxes.push(b);
            owner.push(o);
        }
        // Segments that share a particle are no pair.
        let skip =
            |j: usize, k: usize| owner[j].0 == owner[k].0 && owner[j].1.abs_diff(owner[k].1) <= 1;
        count_overlaps_with(&boxes, fresh, skip, limit)
    }

    /// The overlapping pairs of segment sweeps among the cables before
    /// `upto`, counted up to past [`MAX_OVERLAPS`]. Those of two sleeping
    /// cables are kept (`sleeper_overlaps`) while the sleeping cables, their
    /// particles, the step and gravity stay as they were (a hash of all
    /// of them: a cable that wakes, moves and sleeps again changes it), so
    /// that in a world mostly asleep a cable spawned after a step counts
    /// only what is awake against everything.
    fn all_cable_overlaps(&mut self, upto: usize) -> u64 {
        let (asleep, awake): (Vec<usize>, Vec<usize>) =
            (0..upto).partition(|&c| self.cables[c].sleeping);
        if asleep.is_empty() {
            return self.count_cable_overlaps(0..0, 0..upto, MAX_OVERLAPS, None);
        }
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (
                self.settings.dt.to_bits(),
                self.settings.gravity.to_array().map(f32::to_bits),
            )
                .hash(&mut h);
            for &c in &asleep {
                let c = &self.cables[c];
                (c.id, c.x.len()).hash(&mut h);
                c.x.iter()
                    .for_each(|p| p.to_array().map(f32::to_bits).hash(&mut h));
            }
            h.finish()
        };
        let among_asleep = match self.sleeper_overlaps {
            Some((k, n)) if k == key => n,
            _ => {
                let n = self.count_cable_overlaps(0..0, asleep.iter().copied(), MAX_OVERLAPS, None);
                self.sleeper_overlaps = Some((key, n));
                n
            }
        };
        let limit = MAX_OVERLAPS.saturating_sub(among_asleep);
        among_asleep
            + self.count_cable_overlaps(asleep.iter().copied(), awake.iter().copied(), limit, None)
    }

    /// A bound on the overlapping pairs of segment sweeps among the cables
    /// before `upto`, from the grid's buckets' sizes alone
    /// ([`Grid::pair_bound`]: no box tested against another). For the
    /// 1,000 cables of the cables bench's heap, awake, it is 6–8 times
    /// their pairs (4.6 million for 588,000 as the heap packs, step 90),
    /// within [`MAX_OVERLAPS`] (8 million), and a cable spawned there is
    /// judged in 2–6 ms instead of 14–48.
    fn cable_overlap_bound(&self, upto: usize) -> u64 {
        self.bound_and_reach(upto).0
    }

    /// [`Self::cable_overlap_bound`], and the bounds of each cable's
    /// segment sweeps.
    fn bound_and_reach(&self, upto: usize) -> (u64, Vec<(Vec3, Vec3)>) {
        let (dt, g) = (self.settings.dt, self.settings.gravity);
        let (mut boxes, mut reach) = (Vec::new(), Vec::with_capacity(upto));
        for c in &self.cables[..upto] {
            let from = boxes.len();
            boxes.extend((0..c.segments()).map(|k| Self::segment_sweep(c, k, dt, g)));
            reach.push(bounds(boxes[from..].iter().copied()).unwrap_or_default());
        }
        let bound = Grid::default().pair_bound(&boxes, boxes.len() >= 4096);
        (bound, reach)
    }

    /// The cables from `first` on (the newest) join if the world's
    /// overlapping segment sweeps stay within [`MAX_OVERLAPS`].
    pub(super) fn check_new_cables(&mut self, first: usize) -> Result<(), String> {
        self.check_new_cables_within(first, MAX_OVERLAPS)
    }

    /// [`Self::check_new_cables`] with a limit of `max` overlaps. Those of
    /// the cables before `first` are bounded once a step (at the first
    /// cable added after it, after one was removed or after the step rate
    /// or gravity changed: [`Self::cable_overlap_bound`]), then kept up by
    /// each cable added, and counted exactly
    /// ([`Self::all_cable_overlaps`]) only when the bound would refuse a
    /// cable: a cable is refused on the exact count alone. (The exact count
    /// of the bench's heap awake took 14–48 ms, a stall of its world's tick
    /// at each first cable spawned after a step.)
    fn check_new_cables_within(&mut self, first: usize, max: u64) -> Result<(), String> {
        let (mut before, mut exact) = match self.cable_overlap_count {
            Some((tick, n, exact)) if tick == self.tick => (n, exact),
            _ => {
                let (bound, reach) = self.bound_and_reach(first);
                self.cable_reach = reach;
                if bound <= max {
                    // (No pair bound is no pair.)
                    (bound, bound == 0)
                } else {
                    (self.all_cable_overlaps(first), true)
                }
            }
        };
        let mut reach = std::mem::take(&mut self.cable_reach);
        reach.truncate(first);
        let new = first..self.cables.len();
        let mut limit = max.saturating_sub(before);
        let mut count = self.count_cable_overlaps(0..first, new.clone(), limit, Some(&reach));
        if count > limit && !exact {
            (before, exact) = (self.all_cable_overlaps(first), true);
            limit = max.saturating_sub(before);
            count = self.count_cable_overlaps(0..first, new.clone(), limit, Some(&reach));
        }
        if count > limit {
            // (The count of the cables before them stands for the next.)
            self.cable_overlap_count = Some((self.tick, before, exact));
            self.cable_reach = reach;
            return Err(format!(
                "limit: the new cable segments would overlap in more than {limit} pairs (with each other and the world's cables, which overlap in {before}); a world's cables may overlap in at most {max} pairs: cables spawned into each other, fast, or thick for their segments' length"
            ));
        }
        let (dt, g) = (self.settings.dt, self.settings.gravity);
        for c in &self.cables[new] {
            let sweeps = (0..c.segments()).map(|k| Self::segment_sweep(c, k, dt, g));
            reach.push(bounds(sweeps).unwrap_or_default());
        }
        self.cable_overlap_count = Some((self.tick, before + count, exact));
        self.cable_reach = reach;
        Ok(())
    }

    /// The box body `i` may sweep in the next step: `aabb` (its broad-phase
    /// box) and that box moved by its velocity over the step, and for a
    /// dynamic body by what gravity adds to it in the step (`g·dt²`, as
    /// the solver's substeps integrate it; the cables' boxes count their
    /// fall too). Without it a column of 1,100 spheres at 1 Hz took a
    /// gravity of 1,000 m/s², and its steps then listed 604,000 pairs (a
    /// reviewer's case).
    fn body_sweep(&self, i: u32, aabb: Aabb) -> (Vec3, Vec3) {
        let dt = self.settings.dt;
        let s = self
            .bodies
            .by_index(i)
            .map_or(aabb, |b| self.step_sweep(b, aabb, dt));
        (s.min, s.max)
    }

    /// How far body `b` may move in a step of `dt` before its contacts: its
    /// velocity's part, `v·dt`, and what gravity and its force add for a
    /// dynamic body, `a·dt²` (at most what the solver's substeps integrate;
    /// none if not finite).
    pub(super) fn step_displacement(&self, b: &super::Body, dt: f32) -> (Vec3, Vec3) {
        let pushed = if b.kind == super::BodyKind::Dynamic {
            (self.settings.gravity + b.force * b.inv_mass) * (dt * dt)
        } else {
            Vec3::ZERO
        };
        let pushed = if pushed.is_finite() {
            pushed
        } else {
            Vec3::ZERO
        };
        (b.linear_velocity * dt, pushed)
    }

    /// `aabb` swept over a step of `dt` of body `b`: moved by its velocity,
    /// and by that with what gravity and its force add
    /// ([`Self::step_displacement`]). Both, as a body moving against its
    /// pull goes part of the way its speed alone would take it: a ball
    /// thrown up at 1 Hz rises 3.7 m where `v·dt + a·dt²` is 0. (Swept by
    /// the speed alone, a ball dropped from rest at 1 Hz fell 6 m through
    /// a floor its box had not reached.)
    pub(super) fn step_sweep(&self, b: &super::Body, aabb: Aabb, dt: f32) -> Aabb {
        let (coast, pushed) = self.step_displacement(b, dt);
        aabb.swept(coast).union(&aabb.swept(coast + pushed))
    }

    /// The pairs the bodies of `new` (slots, just inserted) bring, with
    /// each other and the world's bodies, or an error when the world's
    /// would then pass [`MAX_BODY_OVERLAPS`]: each two whose boxes over
    /// the next step overlap ([`Self::body_overlaps`]), and each plane with
    /// each other body.
    pub(super) fn new_body_overlaps(&mut self, new: &[u32]) -> Result<u64, String> {
        let is_plane = |i: u32| self.bodies.by_index(i).is_some_and(|b| b.shape.is_plane());
        let new_planes = new.iter().filter(|&&i| is_plane(i)).count() as u64;
        let (planes, all) = (self.planes.len() as u64, self.bodies.len() as u64);
        // (Each pair once: a new plane with every other body, a new body
        // with every plane that was there before.)
        let plane_pairs =
            new_planes * (all - planes) + (new.len() as u64 - new_planes) * (planes - new_planes);
        let boxed: Vec<(u32, (Vec3, Vec3))> = new
            .iter()
            .filter_map(|&i| {
                let b = self.broad.aabb(i)?;
                Some((i, self.body_sweep(i, b)))
            })
            .collect();
        self.body_overlaps(&boxed, plane_pairs)
    }

    /// The pairs of bodies (slots) with the boxes given (a body about to be
    /// moved: where it will be) whose boxes overlap, with each other and
    /// the world's bodies, and `extra` more, or an error when the world's
    /// would then pass [`MAX_BODY_OVERLAPS`] (those of the last step's
    /// broad phase and of the bodies added or moved since counted as they
    /// were then).
    pub(super) fn body_overlaps(
        &mut self,
        new: &[(u32, (Vec3, Vec3))],
        extra: u64,
    ) -> Result<u64, String> {
        let before = self.broad.pair_count() as u64 + self.spawned_body_overlaps;
        let limit = MAX_BODY_OVERLAPS.saturating_sub(before);
        let mut count = extra;
        if let Some(region) = bounds(new.iter().map(|&(_, b)| b)) {
            let mut sorted: Vec<u32> = new.iter().map(|&(i, _)| i).collect();
            sorted.sort_unstable();
            let is_new = |i: u32| sorted.binary_search(&i).is_ok();
            // The others within the new ones' reach, then the new ones. The
            // others' boxes swept too: those added since the last step hold
            // their boxes as inserted (13,000 fast spheres added 1,000 at
            // a time, each batch counted against the unswept boxes of the
            // ones before, made three times the limit in their first step).
            let mut boxes = Vec::new();
            for (h, _) in self.bodies.iter() {
                if is_new(h.index) {
                    continue;
                }
                let b = self.broad.aabb(h.index);
                let b = b.map(|b| self.body_sweep(h.index, b));
                if let Some(b) = b.filter(|b| overlap(b, &region)) {
                    boxes.push(b);
                }
            }
            let fresh = boxes.len();
            boxes.extend(new.iter().map(|&(_, b)| b));
            let room = limit.saturating_sub(count);
            count += count_overlaps_with(&boxes, fresh, |_, _| false, room);
        }
        if count > limit {
            return Err(format!(
                "limit: the new bodies would overlap in more than {limit} pairs (with each other and the world's bodies, which overlap in about {before}); a world's bodies may overlap in at most {MAX_BODY_OVERLAPS} pairs: bodies spawned into each other or fast"
            ));
        }
        Ok(count)
    }
}

impl World {
    /// Whether the world's cables and bodies stay within their limits
    /// with steps of `dt` and gravity `g` (a longer step or fall sweeps
    /// longer boxes), counted in full (the cables' pairs bounded first,
    /// [`Self::cable_overlap_bound`]): the limits' error if not.
    pub(super) fn check_step(&mut self, dt: f32, g: Vec3) -> Result<(), String> {
        let old = std::mem::replace(&mut self.settings.dt, dt);
        let old_g = std::mem::replace(&mut self.settings.gravity, g);
        // (Counted exactly only where the bound would refuse.)
        let n = self.cables.len();
        let cables = match self.cable_overlap_bound(n) {
            bound if bound <= MAX_OVERLAPS => bound,
            _ => self.count_cable_overlaps(0..0, 0..n, MAX_OVERLAPS, None),
        };
        let planes = self.planes.len() as u64;
        let mut bodies = planes * (self.bodies.len() as u64 - planes);
        let boxes: Vec<(Vec3, Vec3)> = self
            .bodies
            .iter()
            .filter_map(|(h, _)| {
                let b = self.broad.aabb(h.index)?;
                Some(self.body_sweep(h.index, b))
            })
            .collect();
        let room = MAX_BODY_OVERLAPS.saturating_sub(bodies);
        bodies += count_overlaps_with(&boxes, 0, |_, _| false, room);
        self.settings.dt = old;
        self.settings.gravity = old_g;
        if cables > MAX_OVERLAPS {
            return Err(format!(
                "limit: with steps of {dt} s and gravity {g} the world's cable segments would overlap in more than {MAX_OVERLAPS} pairs"
            ));
        }
        if bodies > MAX_BODY_OVERLAPS {
            return Err(format!(
                "limit: with steps of {dt} s and gravity {g} the world's bodies would overlap in more than {MAX_BODY_OVERLAPS} pairs"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cable::CableSpec;

    /// Twenty cables side by side, 40 cm apart, drawn together onto one
    /// line (all there at 0.5 s), and a sphere moving on its own: with a
    /// step's pair limit of 3,000 (the real one, 16 million, takes more
    /// than a test should build), the step whose grid passes it leaves
    /// every cable as it was (positions and velocities), the sphere moves
    /// as without the limit, and the world reports the fault. Until then
    /// the world steps exactly as without the limit, whose grid lists more
    /// than 3,000 pairs first in that step. Without the limit it steps on.
    #[test]
    fn a_step_whose_cable_pairs_pass_the_limit_leaves_the_cables_as_they_were() {
        let world = || {
            let mut w = World::new(crate::physics::WorldSettings {
                gravity: Vec3::ZERO,
                ..Default::default()
            });
            for k in 1..=20 {
                let z = k as f32 * 0.4;
                let mut c = CableSpec::new([0.0, 1.0, z], [5.0, 1.0, z], 50);
                c.linear_velocity = [0.0, 0.0, -z / 0.5];
                w.add_cable(&c).unwrap();
            }
            let ball =
                crate::physics::BodySpec::new(crate::physics::ShapeSpec::Sphere { radius: 0.5 })
                    .position([20.0, 1.0, 0.0])
                    .linear_velocity([1.0, 0.0, 0.0]);
            w.add_body(&ball).unwrap();
            w
        };
        let state = |w: &World| -> Vec<(Vec3, Vec3)> {
            w.cables
                .iter()
                .flat_map(|c| c.x.iter().copied().zip(c.v.iter().copied()))
                .collect()
        };
        let ball = |w: &World| w.bodies().next().unwrap().pose.position;
        let (mut free, mut limited) = (world(), world());
        let fault_at = loop {
            let before = state(&limited);
            limited.cable_system.test_pair_limit = Some(3000);
            free.step();
            limited.step();
            let candidates = free.cable_stats.candidates;
            assert_eq!(limited.fault().is_some(), candidates > 3000, "{candidates}");
            assert_eq!(ball(&limited), ball(&free));
            if let Some(fault) = limited.fault() {
                assert!(
                    fault.starts_with("limit: ") && !fault.contains('\n'),
                    "{fault}"
                );
                assert_eq!(state(&limited), before, "the cables stand as they were");
                assert!(limited.moved_cables().is_empty());
                break limited.tick();
            }
            assert_eq!(state(&limited), state(&free), "tick {}", limited.tick());
            assert!(limited.tick() < 60, "no fault");
        };
        assert!(fault_at > 10, "the cables came close: {fault_at}");
        // Without the limit, the step is taken.
        let before = state(&limited);
        limited.step();
        assert_eq!(limited.fault(), None);
        assert_ne!(state(&limited), before);
        assert!(state(&limited)
            .iter()
            .all(|(x, v)| x.is_finite() && v.is_finite()));
    }

    /// Fast bodies added in two batches are counted as if added at once:
    /// the second's swept boxes against the first's swept boxes too (not
    /// the boxes they were inserted with), as the step's broad phase will
    /// see them: 1,000 spheres in a row, 1 m apart, at 600 m/s along it,
    /// the even ones first.
    #[test]
    fn bodies_added_in_batches_are_counted_with_every_box_swept() {
        let mut w = World::new(crate::physics::WorldSettings {
            gravity: Vec3::ZERO,
            ..Default::default()
        });
        let row = |odd: usize| -> Vec<crate::physics::BodySpec> {
            (0..500)
                .map(|k| {
                    let shape = crate::physics::ShapeSpec::Sphere { radius: 0.25 };
                    crate::physics::BodySpec::new(shape)
                        .position([(2 * k + odd) as f32, 1.0, 0.0])
                        .linear_velocity([600.0, 0.0, 0.0])
                })
                .collect()
        };
        w.add_bodies(&row(0)).unwrap();
        w.add_bodies(&row(1)).unwrap();
        let boxes: Vec<(Vec3, Vec3)> = w
            .bodies
            .iter()
            .map(|(h, _)| {
                let b = w.broad.aabb(h.index).unwrap();
                w.body_sweep(h.index, b)
            })
            .collect();
        let mut brute = 0;
        for (i, a) in boxes.iter().enumerate() {
            brute += boxes[i + 1..].iter().filter(|b| overlap(a, b)).count() as u64;
        }
        // Each sweeps 10 m: about 10 neighbours ahead.
        assert!(brute > 9_000, "{brute}");
        assert_eq!(w.spawned_body_overlaps, brute);
    }

    /// Every pair of segment sweeps that overlap, by brute force.
    fn all_overlaps(w: &World) -> u64 {
        let dt = w.settings.dt;
        let mut segs = Vec::new();
        for (ci, c) in w.cables.iter().enumerate() {
            for k in 0..c.segments() {
                segs.push((ci, k, World::segment_sweep(c, k, dt, w.settings.gravity)));
            }
        }
        let mut n = 0;
        for (i, a) in segs.iter().enumerate() {
            for b in &segs[i + 1..] {
                let neighbours = a.0 == b.0 && a.1.abs_diff(b.1) <= 1;
                n += (!neighbours && overlap(&a.2, &b.2)) as u64;
            }
        }
        n
    }

    /// The world's count of its cables' overlaps as kept: exact where it
    /// says so, else a bound on them.
    fn assert_counted(w: &World) {
        let (_, n, exact) = w.cable_overlap_count.expect("counted");
        let brute = all_overlaps(w);
        // Each cable's sweeps' bounds, kept alongside, as taken afresh.
        assert_eq!(w.cable_reach, w.bound_and_reach(w.cables.len()).1);
        if exact {
            assert_eq!(n, brute);
        } else {
            assert!(n >= brute, "bound {n} < {brute} overlaps");
        }
    }

    /// The world's count of its cables' overlaps is, after a step (and
    /// after a removal), all of them bounded again: not the step's pairs,
    /// which its filter thins out (so cables added step after step were
    /// each let in as if the others had fewer); then each cable added
    /// adds its own.
    #[test]
    fn the_worlds_cable_overlaps_are_counted_again_after_a_step_and_a_removal() {
        let mut w = World::new(crate::physics::WorldSettings {
            gravity: Vec3::ZERO,
            ..Default::default()
        });
        let thread = |k: usize| {
            let z = k as f32 * 0.03;
            let mut c = CableSpec::new([0.0, 1.0, z], [4.0, 5.0, z], 40);
            c.linear_velocity = [0.0, 0.0, 0.5];
            c
        };
        for k in 0..10 {
            w.add_cable(&thread(k)).unwrap();
        }
        assert_counted(&w);
        for _ in 0..5 {
            w.step();
        }
        let pairs = w.cable_stats.pairs;
        // Bounded again after the step, and the new cable's pairs added.
        let (bound, before) = (w.cable_overlap_bound(w.cables.len()), all_overlaps(&w));
        let id = w.add_cable(&thread(10)).unwrap();
        let n = all_overlaps(&w);
        assert_eq!(
            w.cable_overlap_count,
            Some((w.tick, bound + n - before, false))
        );
        assert_counted(&w);
        assert!(n > pairs, "{n} overlaps, {pairs} pairs after the filter");
        assert_eq!(w.all_cable_overlaps(w.cables.len()), n);
        w.remove_cable(id);
        assert!(w.cable_overlap_count.is_none());
        w.add_cable(&thread(11)).unwrap();
        assert_counted(&w);
        // Asleep, the cables' overlaps still count (their pairs are not in
        // a step's list: a count taken from it let asleep batches pile up
        // without bound, a reviewer's case).
        let mut heap = World::default();
        heap.add_body(
            &crate::physics::BodySpec::new(crate::physics::ShapeSpec::Plane {
                normal: [0.0, 1.0, 0.0],
                offset: 0.0,
            })
            .kind(crate::physics::BodyKind::Static),
        )
        .unwrap();
        for k in 0..30 {
            let y = 0.02 + 0.005 * k as f32;
            let z = 0.01 * k as f32;
            heap.add_cable(&CableSpec::new([0.0, y, z], [2.0, y, 0.3 - z], 20))
                .unwrap();
        }
        let mut asleep = false;
        for _ in 0..900 {
            heap.step();
            asleep = heap.cables.iter().all(|c| c.sleeping);
            if asleep {
                break;
            }
        }
        assert!(asleep, "the heap sleeps");
        heap.add_cable(&CableSpec::new([50.0, 1.0, 0.0], [52.0, 1.0, 0.0], 20))
            .unwrap();
        heap.step();
        assert!(heap.cables[..30].iter().all(|c| c.sleeping));
        heap.add_cable(&CableSpec::new([60.0, 1.0, 0.0], [62.0, 1.0, 0.0], 20))
            .unwrap();
        let n = all_overlaps(&heap);
        // (Many: 386 as the heap now settles, over 500 before the
        // fail-safe moved stopped free cables on together.)
        assert!(n > 300, "{n}");
        assert_counted(&heap);
        // The exact count: the sleepers' own pairs are counted once and
        // kept. A step later (the new cables falling, the heap asleep) the
        // count is the same as by brute force, from the kept part and the
        // awake ones.
        let len = heap.cables.len();
        assert_eq!(heap.all_cable_overlaps(len), n);
        let kept = heap.sleeper_overlaps.expect("counted");
        heap.step();
        heap.add_cable(&CableSpec::new([70.0, 1.0, 0.0], [72.0, 1.0, 0.0], 20))
            .unwrap();
        assert_counted(&heap);
        let len = heap.cables.len();
        assert_eq!(heap.all_cable_overlaps(len), all_overlaps(&heap));
        assert_eq!(heap.sleeper_overlaps, Some(kept));
        // A sleeper that wakes and moves is counted again where it is.
        heap.cables[3].wake();
        heap.cables[3].x.iter_mut().for_each(|p| p.y += 0.01);
        heap.cables[3].sleeping = true;
        heap.step();
        heap.add_cable(&CableSpec::new([80.0, 1.0, 0.0], [82.0, 1.0, 0.0], 20))
            .unwrap();
        assert_counted(&heap);
        let len = heap.cables.len();
        assert_eq!(heap.all_cable_overlaps(len), all_overlaps(&heap));
        assert_ne!(heap.sleeper_overlaps, Some(kept));
    }

    /// A cable is refused on the exact count alone: where the bound on the
    /// world's overlaps would refuse it, they are counted exactly, and it
    /// joins if they leave room; refused, the exact count is kept for the
    /// next cable.
    #[test]
    fn the_bound_on_the_overlaps_refuses_no_cable_the_exact_count_takes() {
        let settings = crate::physics::WorldSettings {
            gravity: Vec3::ZERO,
            ..Default::default()
        };
        // Threads side by side, 3 cm apart: their segments' sweeps overlap
        // their neighbours' and share cells with more.
        let thread = |k: usize| {
            let z = k as f32 * 0.03;
            CableSpec::new([0.0, 1.0, z], [4.0, 1.0, z], 40)
        };
        let world = || {
            let mut w = World::new(settings);
            for k in 0..12 {
                w.add_cable(&thread(k)).unwrap();
            }
            w.step();
            w
        };
        let try_add = |w: &mut World, k: usize, max: u64| {
            let id = w.next_id;
            w.cables.push(Cable::from_spec(&thread(k), id).unwrap());
            let first = w.cables.len() - 1;
            let r = w.check_new_cables_within(first, max);
            if r.is_err() {
                w.cables.pop();
            } else {
                w.next_id += 1;
            }
            r
        };
        let mut w = world();
        let exact = all_overlaps(&w);
        let bound = w.cable_overlap_bound(w.cables.len());
        assert!(bound > exact, "bound {bound}, {exact} overlaps");
        // The new thread's own overlaps with the others.
        let mut probe = world();
        try_add(&mut probe, 12, u64::MAX).unwrap();
        let new = all_overlaps(&probe) - exact;
        assert!(new > 0);
        // Room under the bound: the bound is kept.
        try_add(&mut w, 12, bound + new).unwrap();
        assert_eq!(w.cable_overlap_count, Some((w.tick, bound + new, false)));
        // Room under the exact count only: counted exactly, and joins,
        // whether the bound is past the limit already or only with the new
        // cable's pairs.
        for max in [exact + new, bound + new - 1] {
            let mut w = world();
            try_add(&mut w, 12, max).unwrap();
            assert_eq!(w.cable_overlap_count, Some((w.tick, exact + new, true)));
        }
        // No room: refused, and the exact count of the others kept.
        let mut w = world();
        let err = try_add(&mut w, 12, exact + new - 1).unwrap_err();
        assert!(err.starts_with("limit: "), "{err}");
        assert_eq!(w.cables.len(), 12);
        assert_eq!(w.cable_overlap_count, Some((w.tick, exact, true)));
        assert_eq!(w.cable_reach, w.bound_and_reach(12).1);
        // The next cable is judged on it, and one far off (only its own
        // pairs) after it.
        try_add(&mut w, 12, exact + new).unwrap();
        assert_eq!(w.cable_overlap_count, Some((w.tick, exact + new, true)));
        try_add(&mut w, 40, exact + new + 100).unwrap();
        assert_eq!(
            w.cable_overlap_count,
            Some((w.tick, all_overlaps(&w), true))
        );
        assert_counted(&w);
    }
}
