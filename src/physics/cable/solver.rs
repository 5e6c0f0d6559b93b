//! One step of every cable in a world, on flat arrays: XPBD substeps,
//! contacts, and the no-crossing guarantee (the algorithm is described in
//! the module documentation of [`super`]).

use super::pairs::Grid;
use super::{Cable, MIN_THICKNESS};
use crate::physics::collision::ccd_cubic::EdgeEdgeQuery;
use crate::physics::collision::ccd_thick::{closest_points_segment_segment, thick_edge_edge_ccd};
use crate::physics::math::Vec3;
use glam::DVec3;

/// Slack added to every particle's reach (m): a particle may move this much
/// further than its velocity predicts before the pairs are rebuilt.
const REACH_MARGIN: f32 = 0.01;
/// Safety factor on the predicted motion.
const REACH_FACTOR: f32 = 1.25;
/// Approach speed (m/s) below which contacts do not bounce (as for bodies).
const RESTITUTION_THRESHOLD: f32 = 1.0;
/// Pairs farther than this (m, plus half their thickness) from touching
/// after a substep's prediction are not solved in it.
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
    /// Particles held at their substep start by the fail-safe.
    pub frozen: u64,
    /// Full pair rebuilds inside a step (many particles outran their reach).
    pub rebuilds: u64,
    /// Particles that outran their reach and had it extended (with a local
    /// search for new pairs).
    pub extensions: u64,
    /// With `WorldSettings::cable_audit`: segment pairs (any two, by brute
    /// force) whose centre lines the exact CCD finds touching during a
    /// substep (a crossing needs that). Zero is the guarantee.
    pub audit_crossings: u64,
    /// Wall-clock time (ms) of the step's phases: pairs (grid, distance
    /// filter, certificates; rebuilds included), body contacts, the
    /// substeps' solve passes, and the no-crossing verification.
    pub ms_pairs: f64,
    pub ms_bodies: f64,
    pub ms_solve: f64,
    pub ms_verify: f64,
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
    /// Separating direction from A to B: every endpoint of B is at least as
    /// far along it as every endpoint of A at the start of the substep. It
    /// is also the contact normal.
    n: Vec3,
    /// Contact coordinates along A and B.
    s: f32,
    u: f32,
    /// Distance the contact keeps (r_a + r_b; 0 for segments a few links
    /// apart on one cable, which may legitimately touch where it bends).
    thickness: f32,
    mu: f32,
    e: f32,
    /// Correction applied this substep (> 0: the contact was active).
    lambda: f32,
}

/// A point of a segment against a rigid body: keep `n·x(s) − offset ≥
/// radius`, where `x(s)` is the point at `s` along the segment's axis and
/// `offset = n·q` for the body's surface point `q`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyContact {
    pub seg: u32,
    pub s: f32,
    /// Out of the body, towards the cable.
    pub n: Vec3,
    pub offset: f32,
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
            radius,
            mu,
            e,
            body,
            dynamic,
            impulse: Vec3::ZERO,
            point,
            lambda: 0.0,
        }
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
    prev: Vec<Vec3>,
    v_start: Vec<Vec3>,
    /// Where the pairs were built, and how far each particle may go from
    /// there before they must be rebuilt.
    pub center: Vec<Vec3>,
    reach: Vec<f32>,
    pub segs: Vec<Seg>,
    props: Vec<Props>,
    /// For each particle, the segments that hold it (`u32::MAX`: none).
    part_segs: Vec<[u32; 2]>,
    seg_lambda: Vec<f32>,
    pairs: Vec<Pair>,
    /// Pairs of each segment (CSR over `pair_index`).
    seg_pair_start: Vec<u32>,
    pair_index: Vec<u32>,
    pub body_contacts: Vec<BodyContact>,
    frozen: Vec<bool>,
    responses: Vec<u8>,
    /// The pair's plane was taken at the substep's end (after the exact
    /// CCD cleared its motion), so it proves nothing about the motion from
    /// the start if the pair's particles move again.
    end_only: Vec<bool>,
    queue: Vec<u32>,
    queued: Vec<bool>,
    /// Pairs near enough after prediction to be solved this substep.
    active: Vec<u32>,
    candidates: Vec<(u32, u32)>,
    boxes: Vec<(Vec3, Vec3)>,
    grid: Grid,
    pub stats: CableStats,
}

#[inline]
fn d3(v: Vec3) -> DVec3 {
    v.as_dvec3()
}

impl CableSystem {
    /// Copies the cables in (positions, velocities, masses, segments).
    pub(crate) fn load(&mut self, cables: &[Cable]) {
        self.x.clear();
        self.v.clear();
        self.w.clear();
        self.segs.clear();
        self.props.clear();
        for (ci, c) in cables.iter().enumerate() {
            let base = self.x.len() as u32;
            self.x.extend_from_slice(&c.x);
            self.v.extend_from_slice(&c.v);
            self.w.extend_from_slice(&c.w);
            let compliance = 1.0 / c.spec.stiffness;
            for s in 0..c.segments() as u32 {
                self.segs.push(Seg {
                    p: base + s,
                    cable: ci as u32,
                    rest: c.rest,
                    compliance,
                });
            }
            self.props.push(Props {
                radius: c.spec.radius.max(MIN_THICKNESS as f32),
                restitution: c.spec.restitution,
                friction: c.spec.friction,
                damping: c.spec.damping,
            });
        }
        let n = self.x.len();
        self.part_segs.clear();
        self.part_segs.resize(n, [u32::MAX; 2]);
        for (k, s) in self.segs.iter().enumerate() {
            self.part_segs[s.p as usize][1] = k as u32;
            self.part_segs[s.p as usize + 1][0] = k as u32;
        }
        self.prev.resize(n, Vec3::ZERO);
        self.v_start.resize(n, Vec3::ZERO);
        self.frozen.clear();
        self.frozen.resize(n, false);
        self.seg_lambda.clear();
        self.seg_lambda.resize(self.segs.len(), 0.0);
        self.stats = CableStats::default();
        self.body_contacts.clear();
    }

    /// Copies positions and velocities back.
    pub(crate) fn store(&self, cables: &mut [Cable]) {
        let mut k = 0;
        for c in cables {
            let n = c.x.len();
            c.x.copy_from_slice(&self.x[k..k + n]);
            c.v.copy_from_slice(&self.v[k..k + n]);
            k += n;
        }
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

    /// How far a particle may move from `center` this step.
    pub(crate) fn reach(&self, i: usize) -> f32 {
        self.reach[i]
    }

    /// How far any point of a segment may move from `center` this step.
    pub(crate) fn seg_reach(&self, seg: usize) -> f32 {
        let p = self.segs[seg].p as usize;
        self.reach[p].max(self.reach[p + 1])
    }

    /// The box a segment stays in (with its radius) while no particle
    /// outruns its reach.
    pub(crate) fn seg_box(&self, seg: usize) -> (Vec3, Vec3) {
        let p = self.segs[seg].p as usize;
        let pad = Vec3::splat(self.seg_reach(seg) + self.radius(seg));
        let (a, b) = (self.center[p], self.center[p + 1]);
        (a.min(b) - pad, a.max(b) + pad)
    }

    /// Sets every particle's reach for `time` seconds of motion at
    /// `velocity(i)` under gravity `g`, centred on `pos`, and builds the
    /// pairs there.
    fn build(
        &mut self,
        pos_is_prev: bool,
        velocity: impl Fn(&Self, usize) -> Vec3,
        time: f32,
        g: Vec3,
    ) {
        let clock = std::time::Instant::now();
        let n = self.x.len();
        self.center.clear();
        self.center
            .extend_from_slice(if pos_is_prev { &self.prev } else { &self.x });
        // Pair indices change: nothing from the old list stays active.
        self.active.clear();
        let drop = g.length() * time * time;
        self.reach = (0..n)
            .map(|i| {
                if self.w[i] == 0.0 {
                    0.0
                } else {
                    (velocity(self, i).length() * time + drop) * REACH_FACTOR + REACH_MARGIN
                }
            })
            .collect();
        self.boxes.clear();
        for k in 0..self.segs.len() {
            let b = self.seg_box(k);
            self.boxes.push(b);
        }
        self.candidates.clear();
        let segs = &self.segs;
        self.grid.pairs(
            &self.boxes,
            // Neighbours share a particle: never a pair.
            |i, j| segs[i as usize].p.abs_diff(segs[j as usize].p) <= 1,
            &mut self.candidates,
        );
        self.pairs.clear();
        for k in 0..self.candidates.len() {
            let (a, b) = self.candidates[k];
            self.add_pair(a, b, false);
        }
        self.index_pairs();
        self.stats.ms_pairs += clock.elapsed().as_secs_f64() * 1e3;
    }

    /// Adds segments `a < b` as a pair, with the separating plane and
    /// contact coordinates of their closest points in `center` (or in
    /// `prev`, for pairs added during a substep), unless they are too far
    /// apart to meet while every particle stays within its reach.
    fn add_pair(&mut self, a: u32, b: u32, at_prev: bool) {
        let (pa, pb) = (
            self.segs[a as usize].p as usize,
            self.segs[b as usize].p as usize,
        );
        let c = if at_prev { &self.prev } else { &self.center };
        let e = [c[pa], c[pa + 1], c[pb], c[pb + 1]];
        let sc = closest_points_segment_segment(d3(e[0]), d3(e[1]), d3(e[2]), d3(e[3]));
        let (ra, rb) = (self.radius(a as usize), self.radius(b as usize));
        let reach = self.seg_reach(a as usize) + self.seg_reach(b as usize);
        let d = sc.distance_squared.sqrt() as f32;
        if !at_prev && d > ra + rb + reach {
            return; // cannot come within touching distance this step
        }
        let (sa, sb) = (self.segs[a as usize], self.segs[b as usize]);
        // Segments a few links apart on one cable may come closer than the
        // thickness where the cable bends: only crossing is prevented
        // between them.
        let links = sa.p.abs_diff(sb.p) as f32 - 1.0;
        let thickness = if sa.cable == sb.cable && links * sa.rest < ra + rb {
            0.0
        } else {
            ra + rb
        };
        let (pra, prb) = (
            &self.props[sa.cable as usize],
            &self.props[sb.cable as usize],
        );
        self.pairs.push(Pair {
            a,
            b,
            n: separating_normal(&sc, e),
            s: sc.s as f32,
            u: sc.t as f32,
            thickness,
            mu: (pra.friction * prb.friction).sqrt(),
            e: pra.restitution.max(prb.restitution),
            lambda: 0.0,
        });
    }

    /// The pairs of each segment, and per-pair scratch sized.
    fn index_pairs(&mut self) {
        self.seg_pair_start.clear();
        self.seg_pair_start.resize(self.segs.len() + 1, 0);
        for p in &self.pairs {
            self.seg_pair_start[p.a as usize + 1] += 1;
            self.seg_pair_start[p.b as usize + 1] += 1;
        }
        for k in 1..self.seg_pair_start.len() {
            self.seg_pair_start[k] += self.seg_pair_start[k - 1];
        }
        self.pair_index.clear();
        self.pair_index.resize(self.pairs.len() * 2, 0);
        let mut next = self.seg_pair_start.clone();
        for (k, p) in self.pairs.iter().enumerate() {
            for s in [p.a, p.b] {
                self.pair_index[next[s as usize] as usize] = k as u32;
                next[s as usize] += 1;
            }
        }
        self.responses.clear();
        self.responses.resize(self.pairs.len(), 0);
        self.queued.clear();
        self.queued.resize(self.pairs.len(), false);
        self.stats.pairs = self.stats.pairs.max(self.pairs.len() as u64);
    }

    /// Particles that left their reach in this substep get a reach that
    /// covers the rest of the step from where the substep began (centre
    /// unchanged), and their segments are tested against every segment's
    /// box for new pairs; with many such particles, everything is rebuilt
    /// from the substep's start instead. Returns the segments that changed
    /// (their body contacts are to be regenerated), or `None` after a full
    /// rebuild.
    pub(crate) fn extend(&mut self, h: f32, time_left: f32, g: Vec3) -> Option<Vec<u32>> {
        let clock = std::time::Instant::now();
        let outran: Vec<usize> = (0..self.x.len())
            .filter(|&i| {
                (self.x[i] - self.center[i]).length_squared() > self.reach[i] * self.reach[i]
            })
            .collect();
        if outran.len() > 64.max(self.x.len() / 64) {
            self.stats.rebuilds += 1;
            self.build(true, |s, i| (s.x[i] - s.prev[i]) / h, time_left, g);
            return None;
        }
        self.stats.extensions += outran.len() as u64;
        let drop = g.length() * time_left * time_left;
        for &i in &outran {
            let v = (self.x[i] - self.prev[i]) / h;
            self.reach[i] = (self.prev[i] - self.center[i]).length()
                + (v.length() * time_left + drop) * REACH_FACTOR
                + REACH_MARGIN;
        }
        let mut grown: Vec<u32> = outran
            .iter()
            .flat_map(|&i| self.part_segs[i])
            .filter(|&s| s != u32::MAX)
            .collect();
        grown.sort_unstable();
        grown.dedup();
        for &s in &grown {
            self.boxes[s as usize] = self.seg_box(s as usize);
        }
        let before = self.pairs.len();
        for &s in &grown {
            let bs = self.boxes[s as usize];
            for t in 0..self.segs.len() as u32 {
                let bt = &self.boxes[t as usize];
                if t == s
                    || self.segs[s as usize].p.abs_diff(self.segs[t as usize].p) <= 1
                    || !(bs.0.cmple(bt.1).all() && bt.0.cmple(bs.1).all())
                    // A pair of two grown segments is found from the lower.
                    || (t < s && grown.binary_search(&t).is_ok())
                {
                    continue;
                }
                let (a, b) = (s.min(t), s.max(t));
                let known = (self.seg_pair_start[s as usize]..self.seg_pair_start[s as usize + 1])
                    .any(|m| {
                        let q = &self.pairs[self.pair_index[m as usize] as usize];
                        q.a == a && q.b == b
                    });
                if !known {
                    self.add_pair(a, b, true);
                }
            }
        }
        if self.pairs.len() != before {
            self.index_pairs();
        }
        self.stats.ms_pairs += clock.elapsed().as_secs_f64() * 1e3;
        Some(grown)
    }

    /// Start of a step of `dt`: reaches from the current velocities, pairs.
    pub(crate) fn begin(&mut self, dt: f32, g: Vec3) {
        self.build(false, |s, i| s.v[i], dt, g);
    }

    /// First half of a substep: prediction, then `iterations` passes over
    /// segments, body contacts and segment contacts. Returns true when a
    /// particle left its reach (the caller then calls [`Self::extend`] and
    /// regenerates the body contacts before [`Self::finish_substep`]).
    pub(crate) fn solve_substep(&mut self, h: f32, g: Vec3, iterations: u32, flip: bool) -> bool {
        let clock = std::time::Instant::now();
        self.prev.copy_from_slice(&self.x);
        self.v_start.copy_from_slice(&self.v);
        for i in 0..self.x.len() {
            if self.w[i] > 0.0 {
                self.v[i] += g * h;
                self.x[i] += self.v[i] * h;
            }
        }
        self.seg_lambda.iter_mut().for_each(|l| *l = 0.0);
        // Only the last substep's active pairs can hold a correction.
        for &k in &self.active {
            self.pairs[k as usize].lambda = 0.0;
        }
        // Contacts to solve: pairs within a slack of touching once
        // predicted (the passes move particles by corrections only; one
        // that closes in later is solved next substep, and crossing is ruled
        // out by the verification whatever the solve does).
        self.active.clear();
        for k in 0..self.pairs.len() {
            let p = &self.pairs[k];
            if p.thickness <= 0.0 {
                continue;
            }
            let pts = self.pair_points(p);
            let c = p.n.dot(Self::pair_gap(&pts, &self.x)) - p.thickness;
            if c < ACTIVE_SLACK + 0.5 * p.thickness {
                self.active.push(k as u32);
            }
        }
        self.body_contacts.iter_mut().for_each(|c| c.lambda = 0.0);
        for it in 0..iterations {
            self.solve_segments(h, flip ^ (it % 2 == 1));
            self.solve_body_contacts(h);
            self.solve_pairs();
        }
        self.stats.ms_solve += clock.elapsed().as_secs_f64() * 1e3;
        self.x
            .iter()
            .zip(&self.center)
            .zip(&self.reach)
            .any(|((x, c), r)| (*x - *c).length_squared() > r * r)
    }

    /// Second half of a substep: every pair proven not to cross (or
    /// stopped), then velocities, damping and restitution.
    pub(crate) fn finish_substep(&mut self, h: f32, audit: bool) {
        let clock = std::time::Instant::now();
        self.verify(h);
        self.stats.ms_verify += clock.elapsed().as_secs_f64() * 1e3;
        if audit {
            self.audit();
        }
        for i in 0..self.x.len() {
            if self.w[i] > 0.0 {
                self.v[i] = (self.x[i] - self.prev[i]) / h;
            } else {
                self.x[i] = self.prev[i];
                self.v[i] = Vec3::ZERO;
            }
        }
        self.damp(h);
        self.apply_restitution();
        self.stats.contacts += self
            .active
            .iter()
            .filter(|&&k| self.pairs[k as usize].lambda > 0.0)
            .count() as u64;
    }

    /// XPBD distance constraints, one pass, in chain order (forwards or
    /// backwards): a sweep along the chain carries a correction from one
    /// end to the other, which an even/odd ordering does not (it left a
    /// hanging cable 1.05% long).
    fn solve_segments(&mut self, h: f32, reverse: bool) {
        let n = self.segs.len();
        let inv_h2 = 1.0 / (h * h);
        for k in 0..n {
            let i = if reverse { n - 1 - k } else { k };
            let seg = self.segs[i];
            let p = seg.p as usize;
            let (wi, wj) = (self.w[p], self.w[p + 1]);
            let ws = wi + wj;
            if ws == 0.0 {
                continue;
            }
            let d = self.x[p + 1] - self.x[p];
            let len = d.length();
            if len < 1.0e-9 {
                continue;
            }
            let nrm = d / len;
            let alpha = seg.compliance * inv_h2;
            let c = len - seg.rest;
            let dl = (-c - alpha * self.seg_lambda[i]) / (ws + alpha);
            self.seg_lambda[i] += dl;
            self.x[p] -= nrm * (dl * wi);
            self.x[p + 1] += nrm * (dl * wj);
        }
    }

    /// The four particles of a pair with their barycentric weights and the
    /// side they are on (−1 for A, +1 for B).
    #[inline]
    fn pair_points(&self, p: &Pair) -> [(usize, f32, f32); 4] {
        let (pa, pb) = (
            self.segs[p.a as usize].p as usize,
            self.segs[p.b as usize].p as usize,
        );
        [
            (pa, 1.0 - p.s, -1.0),
            (pa + 1, p.s, -1.0),
            (pb, 1.0 - p.u, 1.0),
            (pb + 1, p.u, 1.0),
        ]
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

    /// `B(u) − A(s)` over a position array.
    #[inline]
    fn pair_gap(pts: &[(usize, f32, f32); 4], x: &[Vec3]) -> Vec3 {
        pts.iter()
            .fold(Vec3::ZERO, |g, &(i, wg, sgn)| g + x[i] * (wg * sgn))
    }

    /// Moves the contact points of a pair apart by `delta` (relative
    /// displacement of B's point from A's), weighted by w·(1/m)/Σw²/m.
    #[inline]
    fn pair_push(&mut self, pts: &[(usize, f32, f32); 4], delta: Vec3, denom: f32) {
        for &(i, wg, sgn) in pts {
            if !self.frozen[i] {
                self.x[i] += delta * (sgn * wg * self.w[i] / denom);
            }
        }
    }

    /// Segment–segment contacts: keep `n·(B(u) − A(s)) ≥ thickness`, with
    /// Coulomb friction on the substep's sliding of the contact points.
    fn solve_pairs(&mut self) {
        for m in 0..self.active.len() {
            let k = self.active[m] as usize;
            let p = self.pairs[k];
            let pts = self.pair_points(&p);
            let gap = Self::pair_gap(&pts, &self.x);
            let c = p.n.dot(gap) - p.thickness;
            if c >= 0.0 {
                continue;
            }
            let denom = self.pair_denominator(&pts);
            if denom <= 0.0 {
                continue;
            }
            let slide = gap - Self::pair_gap(&pts, &self.prev);
            let correction = contact_correction(p.n, -c, slide, p.mu);
            self.pair_push(&pts, correction, denom);
            self.pairs[k].lambda += -c;
        }
    }

    /// Segment–body contacts: keep `n·x(s) − offset ≥ r`, the correction
    /// split between the two particles by where the point lies (weights
    /// (1 − s)·w₀ and s·w₁ over (1 − s)²w₀ + s²w₁, which moves the point by
    /// exactly the penetration), with Coulomb friction on the substep's
    /// sliding; the body gets the opposite of the particles' momentum change.
    fn solve_body_contacts(&mut self, h: f32) {
        for k in 0..self.body_contacts.len() {
            let bc = self.body_contacts[k];
            let [(i0, f0), (i1, f1)] = bc.weights(&self.segs);
            let (a0, a1) = (f0 * self.w[i0], f1 * self.w[i1]);
            let denom = f0 * a0 + f1 * a1;
            if denom <= 0.0 {
                continue;
            }
            let xs = self.x[i0] * f0 + self.x[i1] * f1;
            let c = bc.n.dot(xs) - bc.offset - bc.radius;
            if c >= 0.0 {
                continue;
            }
            let slide = xs - (self.prev[i0] * f0 + self.prev[i1] * f1);
            let corr = contact_correction(bc.n, -c, slide, bc.mu);
            self.x[i0] += corr * (a0 / denom);
            self.x[i1] += corr * (a1 / denom);
            let c_ref = &mut self.body_contacts[k];
            c_ref.lambda += -c;
            if c_ref.dynamic {
                c_ref.impulse -= corr / (denom * h);
            }
        }
    }

    /// Implicit damping of the relative velocity along each segment.
    fn damp(&mut self, h: f32) {
        for seg in &self.segs {
            let c = self.props[seg.cable as usize].damping;
            if c <= 0.0 {
                continue;
            }
            let p = seg.p as usize;
            let (wi, wj) = (self.w[p], self.w[p + 1]);
            let ws = wi + wj;
            if ws == 0.0 {
                continue;
            }
            let d = (self.x[p + 1] - self.x[p]).normalize_or_zero();
            let rel = (self.v[p + 1] - self.v[p]).dot(d);
            let dv = rel * (1.0 - 1.0 / (1.0 + c * h * ws));
            self.v[p] += d * (dv * wi / ws);
            self.v[p + 1] -= d * (dv * wj / ws);
        }
    }

    /// Contacts that pushed this substep and were approached faster than
    /// the threshold leave at `e` times the approach speed: an impulse
    /// divided by Σ wᵢ²/mᵢ, split by the barycentric weights.
    fn apply_restitution(&mut self) {
        // Only pairs solved this substep can have pushed.
        for m in 0..self.active.len() {
            let p = self.pairs[self.active[m] as usize];
            if p.lambda <= 0.0 || p.e <= 0.0 {
                continue;
            }
            let pts = self.pair_points(&p);
            let vn0 = p.n.dot(Self::pair_gap(&pts, &self.v_start));
            if vn0 > -RESTITUTION_THRESHOLD {
                continue;
            }
            let vn = p.n.dot(Self::pair_gap(&pts, &self.v));
            let dv = -p.e * vn0 - vn;
            let denom = self.pair_denominator(&pts);
            if dv <= 0.0 || denom <= 0.0 {
                continue;
            }
            for &(i, wg, sgn) in &pts {
                if !self.frozen[i] {
                    self.v[i] += p.n * (sgn * wg * self.w[i] * dv / denom);
                }
            }
        }
        for k in 0..self.body_contacts.len() {
            let bc = self.body_contacts[k];
            if bc.lambda <= 0.0 || bc.e <= 0.0 {
                continue;
            }
            let [(i0, f0), (i1, f1)] = bc.weights(&self.segs);
            let vn0 = bc.n.dot(self.v_start[i0] * f0 + self.v_start[i1] * f1);
            if vn0 > -RESTITUTION_THRESHOLD {
                continue;
            }
            let vn = bc.n.dot(self.v[i0] * f0 + self.v[i1] * f1);
            let (a0, a1) = (f0 * self.w[i0], f1 * self.w[i1]);
            let denom = f0 * a0 + f1 * a1;
            let dv = -bc.e * vn0 - vn;
            if dv <= 0.0 || denom <= 0.0 {
                continue;
            }
            self.v[i0] += bc.n * (dv * a0 / denom);
            self.v[i1] += bc.n * (dv * a1 / denom);
            if bc.dynamic {
                self.body_contacts[k].impulse -= bc.n * (dv / denom);
            }
        }
    }

    /// The four endpoints of a pair in a position array, in f64.
    #[inline]
    fn endpoints(&self, p: &Pair, x: &[Vec3]) -> [DVec3; 4] {
        let (pa, pb) = (
            self.segs[p.a as usize].p as usize,
            self.segs[p.b as usize].p as usize,
        );
        [d3(x[pa]), d3(x[pa + 1]), d3(x[pb]), d3(x[pb + 1])]
    }

    /// Whether the pair's plane still separates the segments at the end of
    /// the substep (it did at the start).
    #[inline]
    fn separated_at_end(&self, p: &Pair) -> bool {
        separation(d3(p.n), &self.endpoints(p, &self.x)) >= MIN_GAP
    }

    /// Every pair is either proven not to have crossed during the substep,
    /// or stopped: see the module documentation.
    fn verify(&mut self, h: f32) {
        self.queue.clear();
        for k in 0..self.pairs.len() {
            if !self.separated_at_end(&self.pairs[k]) {
                self.queue.push(k as u32);
                self.queued[k] = true;
            }
        }
        self.responses.iter_mut().for_each(|r| *r = 0);
        self.end_only.clear();
        self.end_only.resize(self.pairs.len(), false);
        let mut frozen_list: Vec<usize> = Vec::new();
        while let Some(k) = self.queue.pop() {
            let k = k as usize;
            self.queued[k] = false;
            let p = self.pairs[k];
            if !self.end_only[k] && self.separated_at_end(&p) {
                continue;
            }
            self.end_only[k] = false;
            let start = self.endpoints(&p, &self.prev);
            let end = self.endpoints(&p, &self.x);
            // 1. A separating plane of the substep's start that also holds at
            //    its end proves the same (the gap along a fixed direction is
            //    concave in time for linear motion).
            //    From here on the pair keeps that plane of the start, valid
            //    there whatever its particles do next.
            let sc = closest_points_segment_segment(start[0], start[1], start[2], start[3]);
            let n0 = separating_normal(&sc, start.map(|q| q.as_vec3()));
            self.refresh(k, n0, &sc);
            if sc.distance_squared > 0.0 && separation(d3(n0), &end) >= MIN_GAP {
                continue;
            }
            let pts = self.pair_points(&self.pairs[k]);
            if pts
                .iter()
                .all(|&(i, _, _)| self.frozen[i] || self.w[i] == 0.0)
            {
                // Nothing of it moves: it stays as the substep found it.
                continue;
            }
            // 2. The exact edge–edge CCD (no false negatives).
            self.stats.ccd_queries += 1;
            if EdgeEdgeQuery::new(start, end).toi().is_none() {
                let sc1 = closest_points_segment_segment(end[0], end[1], end[2], end[3]);
                if sc1.distance_squared >= MIN_GAP * MIN_GAP {
                    let n1 = separating_normal(&sc1, end.map(|q| q.as_vec3()));
                    // Valid at the end, which is where the next substep starts.
                    self.refresh(k, n1, &sc1);
                    self.end_only[k] = true;
                    continue;
                }
            }
            // 3. They would cross (or end touching): an impulse at the
            //    thick-segment time of impact, a few times; then the
            //    fail-safe holds the four particles where the substep began.
            let responded = self.responses[k] < MAX_RESPONSES && self.respond(k, &start, h);
            if responded {
                self.responses[k] += 1;
                self.stats.impacts += 1;
            } else {
                for &(i, _, _) in &pts {
                    if !self.frozen[i] && self.w[i] > 0.0 {
                        self.frozen[i] = true;
                        frozen_list.push(i);
                        self.stats.frozen += 1;
                    }
                    self.x[i] = self.prev[i];
                }
            }
            for &(i, _, _) in &pts {
                self.enqueue_around(i);
            }
            if !self.queued[k] {
                self.queued[k] = true;
                self.queue.push(k as u32);
            }
        }
        for i in frozen_list {
            self.frozen[i] = false;
        }
    }

    /// Brute force, for tests: every pair of non-neighbouring segments,
    /// whether or not the broad phase kept it, through the exact edge–edge
    /// CCD over the substep's motion.
    fn audit(&mut self) {
        for i in 0..self.segs.len() {
            for j in i + 1..self.segs.len() {
                let (pa, pb) = (self.segs[i].p as usize, self.segs[j].p as usize);
                if pa.abs_diff(pb) <= 1 {
                    continue;
                }
                let at = |x: &[Vec3]| [d3(x[pa]), d3(x[pa + 1]), d3(x[pb]), d3(x[pb + 1])];
                let (start, end) = (at(&self.prev), at(&self.x));
                // Touching at the start is not a crossing in this substep.
                let sc = closest_points_segment_segment(start[0], start[1], start[2], start[3]);
                // Strict: the centre lines may not even touch.
                if sc.distance_squared > 0.0 && EdgeEdgeQuery::new(start, end).toi().is_some() {
                    self.stats.audit_crossings += 1;
                }
            }
        }
    }

    /// A fresh separating direction and contact coordinates for pair `k`.
    fn refresh(
        &mut self,
        k: usize,
        n: Vec3,
        sc: &crate::physics::collision::ccd_thick::SegmentClosest,
    ) {
        let p = &mut self.pairs[k];
        p.n = n;
        p.s = sc.s as f32;
        p.u = sc.t as f32;
    }

    /// Queues every pair of the segments that hold particle `i`.
    fn enqueue_around(&mut self, i: usize) {
        for seg in self.part_segs[i] {
            if seg == u32::MAX {
                continue;
            }
            let (a, b) = (
                self.seg_pair_start[seg as usize] as usize,
                self.seg_pair_start[seg as usize + 1] as usize,
            );
            for m in a..b {
                let q = self.pair_index[m] as usize;
                if !self.queued[q] {
                    self.queued[q] = true;
                    self.queue.push(q as u32);
                }
            }
        }
    }

    /// Thick-segment CCD over the substep and, at its time of impact, an
    /// impulse that stops the approach along the pair's normal (with
    /// restitution); the particles go on from there with their new
    /// velocities. False when there is nothing to respond with.
    fn respond(&mut self, k: usize, start: &[DVec3; 4], h: f32) -> bool {
        let p = self.pairs[k];
        let end = self.endpoints(&p, &self.x);
        let (ra, rb) = (
            self.radius(p.a as usize) as f64,
            self.radius(p.b as usize) as f64,
        );
        let res = thick_edge_edge_ccd(*start, end, ra, rb, 1.0e-4);
        self.stats.subdivisions += res.subdivisions as u64;
        let Some(toi) = res.toi else { return false };
        let t = toi as f32;
        let at: [DVec3; 4] = std::array::from_fn(|i| start[i].lerp(end[i], toi));
        let sc = closest_points_segment_segment(at[0], at[1], at[2], at[3]);
        let (s, u) = (sc.s as f32, sc.t as f32);
        let gap = (sc.point_b - sc.point_a).as_vec3();
        // Along the gap when there is one; else the side B started on.
        let n = if gap.length() > 1.0e-6 && gap.dot(p.n) > 0.0 {
            gap.normalize()
        } else {
            p.n
        };
        let pts = self.pair_points(&Pair { s, u, ..p });
        let denom = self.pair_denominator(&pts);
        if denom <= 0.0 {
            return false;
        }
        let vel = |sys: &Self, i: usize| (sys.x[i] - sys.prev[i]) / h;
        let vn: f32 = pts
            .iter()
            .map(|&(i, wg, sgn)| n.dot(vel(self, i)) * wg * sgn)
            .sum();
        if vn >= 0.0 {
            return false;
        }
        let j = -(1.0 + p.e) * vn / denom;
        let mut moved = [None; 4];
        for (m, &(i, wg, sgn)) in pts.iter().enumerate() {
            if self.frozen[i] || self.w[i] == 0.0 {
                continue;
            }
            let v_old = vel(self, i);
            let v_new = v_old + n * (sgn * j * wg * self.w[i]);
            let x_t = self.prev[i] + v_old * (t * h);
            let x = x_t + v_new * ((1.0 - t) * h);
            // The pairs only cover motion within each particle's reach.
            if (x - self.center[i]).length_squared() > self.reach[i] * self.reach[i] {
                return false;
            }
            moved[m] = Some((i, x));
        }
        for (i, x) in moved.into_iter().flatten() {
            self.x[i] = x;
        }
        true
    }
}

/// The correction of a contact point that is `depth` deep along `n`: out
/// by the depth, and back against this substep's sliding `slide` as far as
/// Coulomb's cone allows (μ times the depth).
#[inline]
fn contact_correction(n: Vec3, depth: f32, slide: Vec3, mu: f32) -> Vec3 {
    let tangential = slide - n * slide.dot(n);
    let limit = mu * depth;
    let t_len = tangential.length();
    let friction = if t_len <= limit {
        tangential
    } else {
        tangential * (limit / t_len)
    };
    n * depth - friction
}

/// `min over B's endpoints of n·b − max over A's endpoints of n·a`: ≥ 0
/// when the plane normal to `n` separates the segments.
#[inline]
fn separation(n: DVec3, e: &[DVec3; 4]) -> f64 {
    n.dot(e[2]).min(n.dot(e[3])) - n.dot(e[0]).max(n.dot(e[1]))
}

/// The unit direction from A's closest point to B's: a separating direction
/// for two disjoint segments. For touching ones, the edges' cross product
/// (up to sign, towards B's side if either side is told).
fn separating_normal(
    sc: &crate::physics::collision::ccd_thick::SegmentClosest,
    e: [Vec3; 4],
) -> Vec3 {
    let gap = (sc.point_b - sc.point_a).as_vec3();
    let len = gap.length();
    if len > 1.0e-7 {
        return gap / len;
    }
    let c = (e[1] - e[0]).cross(e[3] - e[2]).normalize_or(Vec3::Y);
    let mid_b = (e[2] + e[3]) * 0.5 - (e[0] + e[1]) * 0.5;
    if mid_b.dot(c) < 0.0 {
        -c
    } else {
        c
    }
}
