//! One step of every cable in a world, on flat arrays: XPBD substeps,
//! contacts, and the no-crossing guarantee (the algorithm is described in
//! the module documentation of [`super`]).

use super::both;
use super::pairs::Grid;
use crate::physics::math::Vec3;
use chains::{ChainGroup, Scratch};
use contacts::Contacts;
pub(crate) use coupled::CoupledBody;
use coupled::UNCOUPLED;
use glam::DVec3;
use kernels::{solve_body_contacts, solve_pairs};
use layout::Kept;
pub(crate) use tubes::Extension;
use tubes::{FilterSeg, FixedSegments, PairIndex};
pub(crate) use verify::HoldBack;

mod chains;
mod contacts;
mod coupled;
mod filter;
mod holds;
mod kernels;
mod layout;
mod strained;
mod tubes;
mod velocities;
mod verify;

/// Least slack of a particle's tube (m): how far it may stray from the
/// path its velocity predicts before its pairs are searched again.
const TUBE_MARGIN: f32 = 0.005;
/// Further slack, as a fraction of the predicted displacement.
const TUBE_FACTOR: f32 = 0.1;
/// Further slack, as a multiple of how far the particle strayed from its
/// prediction in the last step (contacts and segments bend paths, and go on
/// doing so).
const TUBE_MEMORY: f32 = 1.5;
/// Runs of whole cables of about equal length whose chains are solved side
/// by side, [`chains::GROUP`] at a time (see [`chains`]): at least this
/// many (a group per half), of at least [`LANE_SEGMENTS`] segments...
const LANES: usize = 2 * chains::GROUP;
/// ...or of about this many when there are more (a group's rows then
/// stay in cache while its chains are solved).
const LANE_SEGMENTS: usize = 32;
/// Particles of awake cables from which the two halves run on two threads
/// (below, one after the other: the result is the same either way).
pub(crate) const PARALLEL_FROM: usize = 4096;

/// Particles that leave their tube in one substep, as a fraction of all,
/// above which the pairs are rebuilt instead of extended one by one.
const REBUILD_FRACTION: usize = 16;
/// Approach speed (m/s) below which contacts do not bounce (as for bodies).
const RESTITUTION_THRESHOLD: f32 = 1.0;
/// Pairs farther than this (m) from touching after a substep's prediction
/// are not solved in it. With half their thickness more, twice the
/// contacts were solved, for the same pushing, at about 3 ms a step more
/// in the 50,000-segment heap.
const ACTIVE_SLACK: f32 = 0.005;
/// The least gap (m) a pair's plane must leave between the segments'
/// centre lines for its proof to count: far above the rounding of the
/// plane's f32 normal, far below any cable's 2 mm collision thickness.
const MIN_GAP: f64 = 1.0e-5;
/// Impulse responses per pair and substep before its particles are frozen.
const MAX_RESPONSES: u8 = 2;

/// What the cable stage did in the last step (sums over its substeps).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CableStats {
    /// Segment pairs that could meet during the step (after the grid and
    /// the distance filter).
    pub pairs: u64,
    /// The most segment pairs whose boxes overlap that a build of the
    /// step listed, before the distance filter (what
    /// [`super::MAX_STEP_PAIRS`] bounds).
    pub candidates: u64,
    /// Contact constraints between segments that pushed, over all substeps.
    pub contacts: u64,
    /// Segment–body contact points generated for the step.
    pub body_contacts: u64,
    /// Pairs whose separating plane failed and whose motion went through
    /// the exact edge–edge CCD.
    pub ccd_queries: u64,
    /// Crossings found by the CCD and stopped by an impulse at the
    /// thick-segment time of impact.
    pub impacts: u64,
    /// Interval subdivisions of those thick-segment queries.
    pub subdivisions: u64,
    /// Extra passes over the chains that touch coupled bodies
    /// (`solver/coupled.rs`), over all substeps.
    pub coupled_passes: u64,
    /// Extra passes over chains whose links the substep's passes left
    /// unconverged, with their contacts (`solver/strained.rs`), over all
    /// substeps.
    pub strained_passes: u64,
    /// Particles held at their substep start by the fail-safe.
    pub frozen: u64,
    /// Particles held where the substep began because their segment cut
    /// into a body.
    pub held_back: u64,
    /// Full pair rebuilds inside a step (many particles outran their reach).
    pub rebuilds: u64,
    /// Particles that outran their reach and had it extended (with a local
    /// search for new pairs).
    pub extensions: u64,
    /// With `WorldSettings::cable_audit`: segment pairs (any two, by brute
    /// force) whose centre lines the exact CCD finds touching during a
    /// substep (a crossing needs that). Zero is the guarantee.
    pub audit_crossings: u64,
    /// With `WorldSettings::cable_audit`: segment pairs left out of the
    /// list (the broad phase and the tubes' filter promise they cannot
    /// touch this step) found within touching distance at a substep's end.
    /// Zero is the promise.
    pub audit_missed: u64,
    /// Cables asleep after the step.
    pub asleep: u64,
    /// The substeps the step took (the world's, or more where a cable's
    /// particles moved apart fast: `cable::swing_substeps`).
    pub substeps: u64,
    /// Wall-clock time (ms) of the step's phases: pairs (tubes, grid,
    /// distance filter; full rebuilds included), tube extensions (with
    /// their local pair search), body contacts, the substeps' prediction,
    /// contact selection and solve passes, the no-crossing verification,
    /// and the substeps' ends (velocities, damping, friction between
    /// segments, restitution).
    pub ms_pairs: f64,
    pub ms_extend: f64,
    pub ms_bodies: f64,
    pub ms_solve: f64,
    pub ms_verify: f64,
    pub ms_finish: f64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg {
    /// First particle (the second is `p + 1`).
    pub p: u32,
    pub cable: u32,
    pub rest: f32,
    /// 1 / stiffness.
    pub compliance: f32,
}

/// Where a particle may be for the rest of the step: within `slack` of
/// `base + vel·(t − t0)` at every substep boundary `t ≥ t0` (and so, the
/// motion being linear in between, at every time).
#[derive(Clone, Copy, Debug, Default)]
struct Tube {
    base: Vec3,
    vel: Vec3,
    t0: f32,
    slack: f32,
}

impl Tube {
    #[inline]
    fn at(&self, t: f32) -> Vec3 {
        self.base + self.vel * (t - self.t0)
    }
}

#[derive(Clone, Copy, Debug)]
struct Props {
    /// Collision radius (at least [`MIN_THICKNESS`]).
    radius: f32,
    restitution: f32,
    friction: f32,
    damping: f32,
}

/// A pair of segments that may meet during the step.
#[derive(Clone, Copy, Debug)]
struct Pair {
    a: u32,
    b: u32,
    /// The segments' first particles (read at every substep).
    pa: u32,
    pb: u32,
    /// Separating direction from A to B: every endpoint of B is at least as
    /// far along it as every endpoint of A at the start of the substep (the
    /// contact takes the closest points' direction at each substep's start
    /// instead, [`CableSystem::select_active`]).
    n: Vec3,
    /// The plane's closest points' coordinates along A and B (where it was
    /// taken; the contact's are `cs` and `cu`).
    s: f32,
    u: f32,
    /// The contact's coordinates along A and B: the closest points of a
    /// substep's start, kept from substep to substep while the closest
    /// points of a later one are no more than [`CONTACT_HYSTERESIS`]
    /// nearer ([`contact_direction`]). Only within a step: the pairs are built
    /// again at each step's start, with the closest points of then
    /// (carrying them over between parallel segments had the 100-cable
    /// heap of `cable_rest.rs` sleep at 6.0 s instead of 5.2 s).
    cs: f32,
    cu: f32,
    /// Distance the contact keeps (r_a + r_b; 0 for segments a few links
    /// apart on one cable, which may legitimately touch where it bends).
    thickness: f32,
    mu: f32,
    e: f32,
}

/// A point of a segment against a rigid body: keep `n·x(s) − offset ≥
/// radius`, where `x(s)` is the point at `s` along the segment's axis and
/// `offset = n·q` for the body's surface point `q`. A body that moved in
/// the step moves through the cable stage too, from its start pose to its
/// end pose: its point `q` by `motion` over the step, so each substep's
/// plane is `offset0 + n·motion·t/dt` at the substep's end `t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyContact {
    pub seg: u32,
    pub s: f32,
    /// Out of the body, towards the cable.
    pub n: Vec3,
    pub offset: f32,
    /// The plane's offset at the step's start, and how far the body's
    /// point moves over the step (zero for a body that stands still).
    pub offset0: f32,
    pub motion: Vec3,
    /// The body's point's move over the current substep (friction acts on
    /// the sliding relative to it).
    pub slide: Vec3,
    /// The body's support along `n` (`≥ offset`) at its end pose: both ends
    /// of the segment beyond it, the segment misses the body (unused for a
    /// moving body).
    pub support: f32,
    pub radius: f32,
    pub mu: f32,
    pub e: f32,
    /// Body index in the world's set, and whether it takes impulses.
    pub body: u32,
    pub dynamic: bool,
    /// Impulse given to the body over the step (N·s), applied at `point`.
    pub impulse: Vec3,
    pub point: Vec3,
    lambda: f32,
    /// The body's index in the stage's coupled bodies ([`UNCOUPLED`]:
    /// none).
    coupled: u32,
    /// Where the contact was taken, from the body's centre of mass then.
    pub arm: Vec3,
    /// A coupled body's lever: where the contact was taken, from the
    /// centre of mass of the body and its riders ([`CoupledBody::com`]).
    /// The plane moves with the body's point but does not turn with it,
    /// and neither does the lever.
    pub lever: Vec3,
}

impl BodyContact {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        seg: u32,
        s: f32,
        n: Vec3,
        point: Vec3,
        radius: f32,
        mu: f32,
        e: f32,
        body: u32,
        dynamic: bool,
    ) -> Self {
        Self {
            seg,
            s,
            n,
            offset: n.dot(point),
            offset0: n.dot(point),
            motion: Vec3::ZERO,
            slide: Vec3::ZERO,
            support: n.dot(point),
            radius,
            mu,
            e,
            body,
            dynamic,
            impulse: Vec3::ZERO,
            point,
            lambda: 0.0,
            coupled: UNCOUPLED,
            arm: Vec3::ZERO,
            lever: Vec3::ZERO,
        }
    }

    /// The contact of a body that moves by `motion` over the step (its
    /// point's displacement), taken at `at` (a fraction of the step) where
    /// its surface point was `n·q = offset`; the impulse goes to `end`,
    /// the point at the body's end pose.
    pub(crate) fn moving(mut self, motion: Vec3, at: f32, end: Vec3) -> Self {
        self.motion = motion;
        self.offset0 = self.offset - self.n.dot(motion) * at;
        self.point = end;
        self
    }

    /// The two particles with their weights (1 − s, s).
    #[inline]
    fn weights(&self, segs: &[Seg]) -> [(usize, f32); 2] {
        let p = segs[self.seg as usize].p as usize;
        [(p, 1.0 - self.s), (p + 1, self.s)]
    }
}

/// Every cable of a world as one particle system; memory kept between steps.
#[derive(Clone, Debug, Default)]
pub(crate) struct CableSystem {
    pub x: Vec<Vec3>,
    pub v: Vec<Vec3>,
    pub w: Vec<f32>,
    /// Particles of awake cables (as loaded): the work that grows with
    /// the system's motion, which decides whether it is split over two
    /// threads ([`Self::parallel`]).
    awake: usize,
    /// The awake cables' particles, as ascending ranges (adjacent cables
    /// merged): a substep's per-particle loops (prediction, velocities,
    /// the look for particles out of their tubes) read only these. A
    /// sleeping cable's particles keep, for the whole stage, what
    /// [`Self::load`] gives them: their substep start where they are, no
    /// velocity, and nothing moves them (they weigh nothing in any
    /// correction).
    awake_runs: Vec<(usize, usize)>,
    /// Their segments, likewise.
    awake_segs: Vec<(usize, usize)>,
    /// Particles and segments whose tubes, boxes and filter records the
    /// next build computes (ascending ranges): all but those of cables
    /// asleep at the stage's last run and now, unchanged
    /// (`keep_sleepers`), which keep what the last build computed (a
    /// sleeping heap's particles were most of the stage's cost when one
    /// cable fell over it).
    fresh: Vec<(usize, usize)>,
    fresh_segs: Vec<(usize, usize)>,
    /// Each cable's place at the last load, if it slept (see [`Kept`]),
    /// and whether a build followed that load.
    kept_keys: Vec<Option<Kept>>,
    built_since_load: bool,
    /// Particles whose values the last load kept.
    pub(crate) kept: usize,
    /// Tests: keep nothing (every build computes everything).
    #[cfg(test)]
    pub(crate) keep_off: bool,
    /// The particles where the step began (as loaded).
    pub(crate) start: Vec<Vec3>,
    pub(crate) prev: Vec<Vec3>,
    v_start: Vec<Vec3>,
    /// Where the pairs were built, and how far each particle may go from
    /// there this step (the farthest point of its tube).
    pub center: Vec<Vec3>,
    reach: Vec<f32>,
    tubes: Vec<Tube>,
    /// Each particle's free-flight end of the step, and how far it ended
    /// from it in the last step (kept across steps while the particles
    /// stay the same).
    pred_end: Vec<Vec3>,
    last_dev: Vec<f32>,
    /// The step's length and the time (from its start) at the end of the
    /// current substep.
    step: f32,
    time: f32,
    /// When `center` was taken, as a fraction of the step.
    built_at: f32,
    /// Segments whose box changed since the grid was built.
    grown: Vec<bool>,
    grown_list: Vec<u32>,
    grown_boxes: Vec<(Vec3, Vec3)>,
    grown_grid: Grid,
    /// After an extension within a substep: the particles it gave new
    /// tubes. Only these can be outside their tubes at the next look, unless
    /// particles were held where the substep began since
    /// (`held_since_look`): the others were inside then, and the
    /// verification's impulses keep a particle inside.
    recheck: Option<Vec<usize>>,
    held_since_look: bool,
    /// Whether the fail-safe may move stopped pairs of free cables on
    /// together (`solver/holds.rs`): until the substep's first tube
    /// extension. Moved, a particle may leave its tube; held where the
    /// substep began, as after that, it cannot, so the substep's rounds of
    /// extensions and verifications end as they did.
    moving_holds: bool,
    /// Particles [`Self::hold_back`] holds (frozen) until the substep ends.
    held: Vec<usize>,
    /// Particles of `held` held where a moving dynamic body carried them:
    /// the body and the point on it (at its end pose).
    carried: Vec<(usize, u32, Vec3)>,
    pub segs: Vec<Seg>,
    /// Contiguous runs of whole cables, of about equal length, swept side
    /// by side in groups (those of the lower half below `group_split`).
    lanes: Vec<(usize, usize)>,
    groups: Vec<ChainGroup>,
    /// Each particle's group (`u32::MAX`: none), with the groups.
    particle_group: Vec<u32>,
    group_split: usize,
    /// The rows each half's groups are solved in.
    scratch: [Scratch; 2],
    /// Particles and segments at the end of the last step (the last
    /// substep's contacts still name those particles if unchanged).
    last_layout: (usize, usize),
    props: Vec<Props>,
    /// For each particle, the segments that hold it (`u32::MAX`: none).
    part_segs: Vec<[u32; 2]>,
    pairs: Vec<Pair>,
    /// Pairs of each segment.
    pair_index: PairIndex,
    pub body_contacts: Vec<BodyContact>,
    /// Impulses on bodies besides the body contacts': those of contacts
    /// replaced during the step (a full rebuild), and the momentum of
    /// particles held back from a dynamic body: `(body, impulse, point)`.
    pub retired: Vec<(u32, Vec3, Vec3)>,
    /// Body contacts that pushed in the current substep but were dropped
    /// by a rebuild of the pairs (their impulse already in `retired`): its
    /// end still takes their starting depth out of the speed
    /// ([`Self::apply_body_depth_clamp`]).
    pushed_retired: Vec<BodyContact>,
    frozen: Vec<bool>,
    responses: Vec<u8>,
    /// The pair's plane was taken at the substep's end (after the exact
    /// CCD cleared its motion), so it proves nothing about the motion from
    /// the start if the pair's particles move again.
    end_only: Vec<bool>,
    queue: Vec<u32>,
    queued: Vec<bool>,
    /// Pairs near enough after prediction to be solved this substep, as
    /// contacts, from each half of the pair list (`[half][side]`): those
    /// within the lower half of the particles (side 0), within the upper
    /// half (1), and across (2). Solved and restituted in the order side 0
    /// (both halves of the list), side 1, side 2.
    selected: [[Contacts; 3]; 2],
    failing: [Vec<u32>; 2],
    /// Pairs selected in each block of the pair list by the last selection
    /// (where its next one cuts the list in two).
    select_blocks: Vec<u32>,
    /// The halves: particles below `split` (and segments below
    /// `split_seg`, lanes below `lane_split`, body contacts below
    /// `body_split`) are whole cables, solved side by side with the rest.
    split: usize,
    split_seg: usize,
    lane_split: usize,
    body_split: usize,
    /// Body contacts from `coupled_split` on are those of coupled bodies
    /// (solved after the halves, on one thread).
    coupled_split: usize,
    /// Dynamic bodies that move in the stage by what their contacts give
    /// them (`coupled.rs`).
    coupled: Vec<CoupledBody>,
    /// Each coupled body's index in `coupled`, by its slot.
    coupled_of: std::collections::HashMap<u32, u32>,
    candidates: Vec<(u32, u32)>,
    upper_pairs: Vec<Pair>,
    /// Scratch of a build: each pair's segments (the upper half's apart
    /// while the filter runs), for the index.
    pair_ends: Vec<[u32; 2]>,
    upper_pair_ends: Vec<[u32; 2]>,
    boxes: Vec<(Vec3, Vec3)>,
    /// What the filter of the step's pairs reads of each segment.
    filter_segs: Vec<FilterSeg>,
    /// The movable segments' boxes (or every segment's, when none is
    /// fixed), as built at the step's start or the last full rebuild.
    grid: Grid,
    fixed: FixedSegments,
    /// A build or an extension in this step found more pairs than
    /// [`Self::pair_limit`] (and kept none of them).
    overflow: bool,
    /// Tests: a lower limit than [`super::MAX_STEP_PAIRS`].
    #[cfg(test)]
    pub(crate) test_pair_limit: Option<usize>,
    pub stats: CableStats,
}

/// The ranges of `runs` (ascending, disjoint) within `from..to`.
fn runs_in(
    runs: &[(usize, usize)],
    from: usize,
    to: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let first = runs.partition_point(|r| r.1 <= from);
    runs[first..]
        .iter()
        .take_while(move |r| r.0 < to)
        .map(move |r| r.0.max(from)..r.1.min(to))
}

#[inline]
fn d3(v: Vec3) -> DVec3 {
    v.as_dvec3()
}

impl CableSystem {
    /// Segments touching another segment now (within `reach` of the
    /// distance their contact keeps), each with the other and the direction
    /// towards it (both ways round for each such pair).
    pub(crate) fn touching_segments(&self, reach: f32) -> Vec<(u32, u32, Vec3)> {
        let mut out = Vec::new();
        for p in &self.pairs {
            if p.thickness <= 0.0 {
                continue;
            }
            let (a, b) = (p.pa as usize, p.pb as usize);
            let on_a = self.x[a].lerp(self.x[a + 1], p.s);
            let on_b = self.x[b].lerp(self.x[b + 1], p.u);
            if p.n.dot(on_b - on_a) - p.thickness < reach {
                out.push((p.a, p.b, p.n));
                out.push((p.b, p.a, -p.n));
            }
        }
        out
    }

    /// Collision radius of a segment.
    pub(crate) fn radius(&self, seg: usize) -> f32 {
        self.props[self.segs[seg].cable as usize].radius
    }

    pub(crate) fn friction(&self, seg: usize) -> f32 {
        self.props[self.segs[seg].cable as usize].friction
    }

    pub(crate) fn restitution(&self, seg: usize) -> f32 {
        self.props[self.segs[seg].cable as usize].restitution
    }

    /// How far a particle may be from `center` this step.
    pub(crate) fn reach(&self, i: usize) -> f32 {
        self.reach[i]
    }

    /// How far any point of a segment may move from `center` this step.
    pub(crate) fn seg_reach(&self, seg: usize) -> f32 {
        let p = self.segs[seg].p as usize;
        self.reach[p].max(self.reach[p + 1])
    }

    /// The box a segment stays in (with its radius) for the rest of the
    /// step while its particles stay in their tubes.
    pub(crate) fn seg_box(&self, seg: usize) -> (Vec3, Vec3) {
        self.boxes[seg]
    }

    /// Start of a step of `dt` in substeps of `h`: tubes from the current
    /// velocities, pairs.
    pub(crate) fn begin(&mut self, dt: f32, h: f32, g: Vec3) {
        self.step = dt;
        self.time = 0.0;
        self.overflow = false;
        self.build(false, |s, i| s.v[i], h, g);
    }

    /// Whether this step's pairs passed [`Self::pair_limit`]: the stage
    /// must stop (the pair list is incomplete).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflow
    }

    /// Most pairs a step may list: [`super::MAX_STEP_PAIRS`].
    fn pair_limit(&self) -> usize {
        #[cfg(test)]
        if let Some(l) = self.test_pair_limit {
            return l;
        }
        super::MAX_STEP_PAIRS
    }

    /// Drops every body contact (before all are generated again), keeping
    /// the impulses they gave bodies so far (and those that pushed in this
    /// substep, for its end).
    pub(crate) fn retire_body_contacts(&mut self) {
        for mut c in self.body_contacts.drain(..) {
            if c.impulse != Vec3::ZERO {
                self.retired.push((c.body, c.impulse, c.point));
            }
            if c.lambda > 0.0 {
                c.impulse = Vec3::ZERO;
                self.pushed_retired.push(c);
            }
        }
        self.body_split = 0;
        self.coupled_split = 0;
    }

    /// Where the current substep ends and begins, as fractions of the step.
    pub(crate) fn substep_span(&self, h: f32) -> (f32, f32) {
        (self.time / self.step, (self.time - h).max(0.0) / self.step)
    }

    /// When the tubes' base positions (`center`) were taken, as a fraction
    /// of the step.
    pub(crate) fn built_at(&self) -> f32 {
        self.built_at
    }

    /// Pairs in the list (pairs added later have higher indices).
    pub(crate) fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Whether the stage's work is split over two threads: with at
    /// least [`PARALLEL_FROM`] particles of awake cables. A sleeping heap's
    /// particles cost little each (copies, fixed tubes and boxes), and with
    /// one cable awake over a heap of 50,000 asleep the second thread only
    /// waited at the joins: the same wall time, twice the CPU.
    pub(crate) fn parallel(&self) -> bool {
        self.awake >= PARALLEL_FROM
    }

    /// The segments of awake cables, ascending.
    pub(crate) fn awake_segments(&self) -> impl Iterator<Item = usize> + '_ {
        self.awake_segs.iter().flat_map(|&(a, b)| a..b)
    }

    /// [`Self::awake_runs`] within particles `from..to`, as ranges there.
    fn awake_in(
        &self,
        from: usize,
        to: usize,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        runs_in(&self.awake_runs, from, to)
    }

    /// First part of a substep: prediction, then `iterations` passes over
    /// segments, body contacts and segment contacts. The caller then
    /// verifies ([`Self::verify`]) and, while a particle is outside its
    /// tube ([`Self::outran`]), extends ([`Self::extend`]), regenerates
    /// those body contacts and verifies the new pairs, before
    /// [`Self::finish_substep`].
    ///
    /// Each pass solves the two halves of the cables side by side (their
    /// segments, body contacts and the contacts within each half), then the
    /// contacts across the halves: a fixed order, whatever the threads.
    pub(crate) fn solve_substep(&mut self, h: f32, g: Vec3, iterations: u32) {
        let clock = std::time::Instant::now();
        self.moving_holds = true;
        let par = self.parallel();
        self.time += h;
        // Moving bodies: their planes where the substep ends.
        let (f, df) = (self.time / self.step, h / self.step);
        for c in &mut self.body_contacts {
            if c.motion != Vec3::ZERO {
                c.offset = c.offset0 + c.n.dot(c.motion) * f;
                c.slide = c.motion * df;
            }
        }
        {
            let n = self.x.len();
            let half = n / 2;
            let runs: [Vec<_>; 2] = [
                self.awake_in(0, half).collect(),
                self.awake_in(half, n).collect(),
            ];
            let w = &self.w;
            let (x0, x1) = self.x.split_at_mut(half);
            let (v0, v1) = self.v.split_at_mut(half);
            let (p0, p1) = self.prev.split_at_mut(half);
            let (s0, s1) = self.v_start.split_at_mut(half);
            let predict = |x: &mut [Vec3],
                           v: &mut [Vec3],
                           p: &mut [Vec3],
                           s: &mut [Vec3],
                           runs: &[std::ops::Range<usize>],
                           base: usize| {
                for r in runs {
                    let r = r.start - base..r.end - base;
                    p[r.clone()].copy_from_slice(&x[r.clone()]);
                    s[r.clone()].copy_from_slice(&v[r.clone()]);
                    for i in r {
                        if w[base + i] > 0.0 {
                            v[i] += g * h;
                            x[i] += v[i] * h;
                        }
                    }
                }
            };
            both(
                par,
                || predict(x0, v0, p0, s0, &runs[0], 0),
                || predict(x1, v1, p1, s1, &runs[1], half),
            );
        }
        self.predict_coupled(h);
        self.groups.iter_mut().for_each(ChainGroup::reset);
        self.select_active(par);
        self.body_contacts.iter_mut().for_each(|c| c.lambda = 0.0);
        let inv_h2 = 1.0 / (h * h);
        for _ in 0..iterations {
            self.solve_pass(inv_h2, h, par);
        }
        if !self.coupled.is_empty() {
            self.solve_coupled_chains(inv_h2, h, iterations);
        }
        self.solve_strained_chains(inv_h2, h, iterations);
        self.stats.ms_solve += clock.elapsed().as_secs_f64() * 1e3;
    }

    /// One pass: segments, body contacts and contacts in each half (side
    /// by side), then the contacts across the halves.
    fn solve_pass(&mut self, inv_h2: f32, h: f32, par: bool) {
        let split = self.split;
        let (segs, w, prev) = (&self.segs, &self.w, &self.prev);
        let [[lo0, hi0, across0], [lo1, hi1, across1]] = &mut self.selected;
        {
            let (x_lo, x_hi) = self.x.split_at_mut(split);
            let (g_lo, g_hi) = self.groups.split_at_mut(self.group_split);
            let (b_lo, b_hi) =
                self.body_contacts[..self.coupled_split].split_at_mut(self.body_split);
            let [s_lo, s_hi] = &mut self.scratch;
            let half = |groups: &mut [ChainGroup],
                        scratch: &mut Scratch,
                        x: &mut [Vec3],
                        x0: usize,
                        bodies: &mut [BodyContact],
                        contacts: [&mut Contacts; 2]| {
                for g in groups {
                    g.solve_direct(scratch, x, x0, inv_h2);
                }
                solve_body_contacts(bodies, segs, w, x, x0, prev, h);
                for c in contacts {
                    solve_pairs(&c.list, &mut c.lambda, x, x0);
                }
            };
            both(
                par,
                || half(g_lo, s_lo, x_lo, 0, b_lo, [lo0, lo1]),
                || half(g_hi, s_hi, x_hi, split, b_hi, [hi0, hi1]),
            );
        }
        for c in [across0, across1] {
            solve_pairs(&c.list, &mut c.lambda, &mut self.x, 0);
        }
        if !self.coupled.is_empty() {
            let _ = self.solve_coupled_pass(h);
        }
    }

    /// Body contacts in order of the half they belong to (after new ones
    /// were added).
    pub(crate) fn sort_body_contacts(&mut self) {
        self.tag_coupled();
        let split = self.split as u32;
        let segs = &self.segs;
        let lower = |c: &BodyContact| segs[c.seg as usize].p < split;
        let (mut upper, mut coupled): (Vec<BodyContact>, Vec<BodyContact>) = Default::default();
        let mut k = 0;
        for m in 0..self.body_contacts.len() {
            let c = self.body_contacts[m];
            if c.coupled != UNCOUPLED {
                coupled.push(c);
            } else if lower(&c) {
                self.body_contacts[k] = c;
                k += 1;
            } else {
                upper.push(c);
            }
        }
        self.body_contacts.truncate(k);
        self.body_split = k;
        self.body_contacts.extend(upper);
        self.coupled_split = self.body_contacts.len();
        self.body_contacts.extend(coupled);
    }

    /// Last part of a substep (every pair verified): velocities, damping
    /// and restitution.
    pub(crate) fn finish_substep(&mut self, h: f32, audit: bool) {
        if audit {
            self.audit();
        }
        let clock = std::time::Instant::now();
        let par = self.parallel();
        let split = self.split;
        let n = self.x.len();
        let runs: [Vec<_>; 2] = [
            self.awake_in(0, split).collect(),
            self.awake_in(split, n).collect(),
        ];
        let (w, prev) = (&self.w, &self.prev);
        let (x_lo, x_hi) = self.x.split_at_mut(split);
        let (v_lo, v_hi) = self.v.split_at_mut(split);
        let (g_lo, g_hi) = self.groups.split_at_mut(self.group_split);
        let [s_lo, s_hi] = &mut self.scratch;
        let finish = |x: &mut [Vec3],
                      v: &mut [Vec3],
                      x0: usize,
                      runs: &[std::ops::Range<usize>],
                      groups: &mut [ChainGroup],
                      scratch: &mut Scratch| {
            for i in runs.iter().flat_map(|r| r.clone()) {
                let (x, v) = (&mut x[i - x0], &mut v[i - x0]);
                if w[i] > 0.0 {
                    *v = (*x - prev[i]) / h;
                } else {
                    *x = prev[i];
                    *v = Vec3::ZERO;
                }
            }
            for g in groups {
                g.damp(scratch, x, v, x0, h);
            }
        };
        both(
            par,
            || finish(x_lo, v_lo, 0, &runs[0], g_lo, s_lo),
            || finish(x_hi, v_hi, split, &runs[1], g_hi, s_hi),
        );
        self.finish_coupled(h);
        self.apply_friction_and_depth_clamp(h);
        self.apply_body_depth_clamp(h);
        self.apply_restitution();
        for i in self.held.drain(..) {
            self.frozen[i] = false;
        }
        self.carried.clear();
        let pushed = self.selected.iter().flatten().flat_map(|c| &c.lambda);
        self.stats.contacts += pushed.filter(|&&l| l > 0.0).count() as u64;
        self.stats.ms_finish += clock.elapsed().as_secs_f64() * 1e3;
    }

    /// Σ wᵢ²/mᵢ over the four particles (frozen ones count as pinned).
    #[inline]
    fn pair_denominator(&self, pts: &[(usize, f32, f32); 4]) -> f32 {
        pts.iter()
            .map(|&(i, wg, _)| {
                if self.frozen[i] {
                    0.0
                } else {
                    wg * wg * self.w[i]
                }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cable::{Cable, CableSpec};

    /// A mat of 20 crossing cables on a floor (their segments with body
    /// contacts) and 80 more far apart in the air: the halves' boundary
    /// moves towards the mat, which has most of the work, and the groups
    /// still hold every particle once, each on its side of the boundary.
    #[test]
    fn halves_share_the_work_and_the_groups_cover_every_particle_once() {
        let mut cables = Vec::new();
        for k in 0..100u64 {
            let c = -2.0 + (k % 10) as f32 * 0.4;
            let (from, to) = match k {
                0..10 => ([-2.0, 0.02, c], [2.0, 0.02, c]),
                10..20 => ([c, 0.05, -2.0], [c, 0.05, 2.0]),
                _ => {
                    let y = 10.0 + k as f32;
                    ([-2.0, y, 0.0], [2.0, y, 0.0])
                }
            };
            let mut spec = CableSpec::new(from, to, 50);
            spec.radius = 0.02;
            cables.push(Cable::from_spec(&spec, k).unwrap());
        }
        let mut sys = CableSystem::default();
        sys.load(&cables);
        sys.begin(1.0 / 60.0, 1.0 / 240.0, Vec3::new(0.0, -9.81, 0.0));
        assert!(
            sys.pairs.len() > 100,
            "the mat crosses: {}",
            sys.pairs.len()
        );
        for seg in 0..20 * 50 {
            for s in [0.0, 1.0] {
                sys.body_contacts.push(BodyContact::new(
                    seg,
                    s,
                    Vec3::Y,
                    Vec3::ZERO,
                    0.02,
                    0.5,
                    0.0,
                    0,
                    false,
                ));
            }
        }
        sys.sort_body_contacts();
        let equal = sys.lane_split;
        sys.balance();
        assert!(
            (10..equal).contains(&sys.lane_split),
            "the boundary moves towards the mat: {equal} -> {}",
            sys.lane_split
        );
        let mut seen = vec![0; sys.x.len()];
        for (k, g) in sys.groups.iter().enumerate() {
            for &(first, count) in g.lanes() {
                for (i, n) in seen.iter_mut().enumerate().skip(first).take(count) {
                    *n += 1;
                    assert_eq!(i < sys.split, k < sys.group_split, "particle {i}");
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "every particle in one lane");
        assert!(sys.body_contacts[..sys.body_split]
            .iter()
            .all(|c| (sys.segs[c.seg as usize].p as usize) < sys.split));
    }
}
