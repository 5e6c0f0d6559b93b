//! The no-crossing verification of every substep (see the module
//! documentation of [`super::super`]): each pair's separating plane, the
//! exact edge–edge CCD behind it, the thick-segment impulse and the
//! fail-safe; and the brute-force audit for tests.

use super::both;
use super::chains::{ChainGroup, GROUP};
use super::holds::HoldGroups;
use super::kernels::{moves_anything, pair_points};
use super::{d3, CableSystem, Pair, Vec3, MAX_RESPONSES, MIN_GAP};
use crate::physics::collision::ccd_cubic::EdgeEdgeQuery;
use crate::physics::collision::ccd_thick::{closest_points_segment_segment, thick_edge_edge_ccd};
use glam::DVec3;

/// Most rounds of [`CableSystem::drain_and_pull`]: cables pulled back
/// onto their held particles, and the pairs around what moved verified.
const MAX_PULLS: usize = 8;

/// Direct solves of a cable pulled back onto its held particles (each is
/// exact for the links' linearisation; a link stretched by half its length
/// needs a few).
const PULL_PASSES: u32 = 4;

/// A particle to hold back ([`CableSystem::hold_back`]): where, and the
/// dynamic body (with the point on it at its end pose) that gets the
/// momentum it loses, if any.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HoldBack {
    pub particle: usize,
    pub body: Option<(u32, Vec3)>,
    pub at: Vec3,
}

impl CableSystem {
    /// The four endpoints of a pair in a position array, in f64.
    #[inline]
    fn endpoints(&self, p: &Pair, x: &[Vec3]) -> [DVec3; 4] {
        let (pa, pb) = (p.pa as usize, p.pb as usize);
        [d3(x[pa]), d3(x[pa + 1]), d3(x[pb]), d3(x[pb + 1])]
    }

    /// Whether the pair's plane still separates the segments at the end of
    /// the substep (it did at the start).
    #[inline]
    fn separated_at_end(&self, p: &Pair) -> bool {
        separation(d3(p.n), &self.endpoints(p, &self.x)) >= MIN_GAP
    }

    /// Every pair from index `first` on is either proven not to have
    /// crossed during the substep, or stopped (and the pairs around what
    /// was stopped are checked again): see the module documentation.
    pub(crate) fn verify(&mut self, h: f32, first: usize) {
        let clock = std::time::Instant::now();
        self.queue.clear();
        {
            let par = self.parallel();
            let [mut f0, mut f1] = std::mem::take(&mut self.failing);
            let mid = first + (self.pairs.len() - first) / 2;
            let this = &*self;
            let check = |range: std::ops::Range<usize>, out: &mut Vec<u32>| {
                out.clear();
                out.extend(
                    range
                        .filter(|&k| !this.separated_at_end(&this.pairs[k]))
                        .map(|k| k as u32),
                );
            };
            both(
                par,
                || check(first..mid, &mut f0),
                || check(mid..this.pairs.len(), &mut f1),
            );
            for &k in f0.iter().chain(&f1) {
                self.queue.push(k);
                self.queued[k as usize] = true;
            }
            self.failing = [f0, f1];
        }
        if first == 0 {
            self.responses.iter_mut().for_each(|r| *r = 0);
            self.end_only.clear();
        }
        self.end_only.resize(self.pairs.len(), false);
        self.drain_and_pull(h);
        self.stats.ms_verify += clock.elapsed().as_secs_f64() * 1e3;
    }

    /// Verifies the queued pairs ([`Self::drain`]); where its fail-safe
    /// holds particles where the substep began, their cables' free
    /// particles are pulled back onto their links
    /// ([`Self::pull_onto_held`]) and the pairs around those that moved
    /// verified again, until nothing more is held (at most [`MAX_PULLS`]
    /// times). The particles the fail-safe froze move again in later
    /// substeps.
    fn drain_and_pull(&mut self, h: f32) {
        let mut frozen_list: Vec<usize> = Vec::new();
        let mut groups = HoldGroups::default();
        self.drain(h, &mut frozen_list, &mut groups);
        // (Each round pulls for what the last one froze.)
        let mut from = 0;
        for _ in 0..MAX_PULLS {
            let round = from..frozen_list.len();
            if round.is_empty() || !self.pull_onto_held(&frozen_list[round.clone()], h) {
                break;
            }
            from = round.end;
            self.drain(h, &mut frozen_list, &mut groups);
        }
        for i in frozen_list {
            self.frozen[i] = false;
        }
    }

    /// The cables of the particles `seeds` (just held where the substep
    /// began by the fail-safe) solved again, every held and
    /// pinned particle standing still: their free particles go back onto
    /// their links. The fail-safe holds a particle whatever its neighbours
    /// do, so the links to them stretched by the neighbours' motion in the
    /// substep (up to 92% for a step where 100 cables were dropped on a
    /// pinned line), and the next substep's chain solve turned that strain
    /// into speed. The pairs around each particle that moved are queued;
    /// true when any did.
    fn pull_onto_held(&mut self, seeds: &[usize], h: f32) -> bool {
        // Each seed's cable, as a range of segments.
        let mut cables: Vec<(usize, usize)> = Vec::new();
        for &i in seeds {
            let Some((a, b)) = self.cable_segments(i) else {
                continue;
            };
            // (Not a cable with a particle held back from a body: a
            // dynamic body would not get the momentum the pull takes from
            // its neighbours.)
            let (first, end) = (self.segs[a].p as usize, self.segs[b - 1].p as usize + 2);
            let held_back = self.held.iter().any(|&i| (first..end).contains(&i));
            if !held_back && !cables.contains(&(a, b)) {
                cables.push((a, b));
            }
        }
        let segs = &self.segs;
        let spans: Vec<std::ops::Range<usize>> = cables
            .iter()
            .map(|&(a, b)| segs[a].p as usize..segs[b - 1].p as usize + 2)
            .collect();
        let before: Vec<Vec3> = spans
            .iter()
            .flat_map(|r| &self.x[r.clone()])
            .copied()
            .collect();
        let mut sc = std::mem::take(&mut self.scratch[0]);
        let inv_h2 = 1.0 / (h * h);
        for lanes in cables.chunks(GROUP) {
            let mut g = ChainGroup::new(lanes, &self.segs, &self.props, &self.w, &self.part_segs)
                .holding(|i| self.is_held(i));
            g.pull_onto_links(&mut sc, &mut self.x, 0, inv_h2, PULL_PASSES);
        }
        self.scratch[0] = sc;
        let mut moved = false;
        let mut was = before.iter();
        for r in spans {
            for i in r {
                if Some(&self.x[i]) != was.next() {
                    moved = true;
                    self.enqueue_around(i);
                }
            }
        }
        // (Moved, not held: the next look for particles out of their tubes
        // reads them all.)
        self.held_since_look |= moved;
        moved
    }

    /// The segments of particle `i`'s cable (a range, as first and end);
    /// `None` for a particle of no segment.
    pub(super) fn cable_segments(&self, i: usize) -> Option<(usize, usize)> {
        let &seg = self.part_segs[i].iter().find(|&&s| s != u32::MAX)?;
        let cable = self.segs[seg as usize].cable;
        let same = |k: usize| self.segs[k].cable == cable;
        let (mut a, mut b) = (seg as usize, seg as usize + 1);
        while a > 0 && same(a - 1) {
            a -= 1;
        }
        while b < self.segs.len() && same(b) {
            b += 1;
        }
        Some((a, b))
    }

    /// Holds each of `particles` at its `at` (the caller found its segment
    /// cutting into a body: where the substep began, carried along with the
    /// body if it moves) for the rest of the substep, and verifies the pairs
    /// around them again, as the fail-safe of [`Self::verify`] does. A held
    /// particle stays frozen (nothing moves it again) until
    /// [`Self::finish_substep`], so each call holds new particles and the
    /// caller's loop ends.
    ///
    /// A particle cutting into a dynamic body (`body`) gives it the
    /// momentum it loses by being held, `m·(x − at)/h`, at the point where
    /// it is held (on the body at its end pose, where impulses are
    /// applied), so that holding back conserves momentum.
    pub(crate) fn hold_back(&mut self, particles: &[HoldBack], h: f32) {
        let clock = std::time::Instant::now();
        for &HoldBack {
            particle: i,
            body,
            at,
        } in particles
        {
            if self.is_held(i) {
                self.enqueue_around(i);
                continue;
            }
            if let Some((body, point)) = body {
                let lost = (self.x[i] - at) / (self.w[i] * h);
                self.retired.push((body, lost, point));
                if at != self.prev[i] {
                    self.carried.push((i, body, point));
                }
            }
            if self.hold_at(i, at) {
                self.held.push(i);
                self.stats.held_back += 1;
            }
            self.enqueue_around(i);
        }
        self.drain_and_pull(h);
        self.stats.ms_verify += clock.elapsed().as_secs_f64() * 1e3;
    }

    /// Particle `i` stays where it is until the substep ends (held, or
    /// pinned).
    pub(crate) fn is_held(&self, i: usize) -> bool {
        self.frozen[i] || self.w[i] == 0.0
    }

    /// Puts particle `i` back where the substep began and freezes it (it
    /// counts as pinned from then on); true when that froze it. A particle
    /// held before, carried along with a dynamic body, goes back too: the
    /// body gets the momentum that takes, `m·(at − prev)/h`.
    pub(super) fn hold(&mut self, i: usize, h: f32) -> bool {
        if self.x[i] != self.prev[i] && self.frozen[i] && self.w[i] > 0.0 {
            if let Some(&(_, body, point)) = self.carried.iter().find(|c| c.0 == i) {
                let lost = (self.x[i] - self.prev[i]) / (self.w[i] * h);
                self.retired.push((body, lost, point));
            }
        }
        self.hold_at(i, self.prev[i])
    }

    /// [`Self::hold`], at `at`.
    fn hold_at(&mut self, i: usize, at: Vec3) -> bool {
        // (Moved, even if held before: the next look for particles out of
        // their tubes reads them all.)
        if self.x[i] != at {
            self.held_since_look = true;
        }
        self.x[i] = at;
        if self.is_held(i) {
            return false;
        }
        self.frozen[i] = true;
        self.held_since_look = true;
        true
    }

    /// Verifies the queued pairs (see [`Self::verify`]); the particles it
    /// freezes go to `frozen_list`.
    fn drain(&mut self, h: f32, frozen_list: &mut Vec<usize>, groups: &mut HoldGroups) {
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
            let pts = pair_points(&self.pairs[k]);
            if pts
                .iter()
                .all(|&(i, _, _)| self.is_held(i) && self.x[i] == self.prev[i])
            {
                // Nothing of it moves: it stays as the substep found it. (A
                // particle held where a moving body carried it did move.)
                continue;
            }
            if groups.rigid(&pts) {
                // Moved on as one: as the substep found it relative to
                // itself, but for each position's own rounding (an f32
                // step is 10⁻⁵ m at 128 m, the least gap), so the exact
                // CCD judges it; touching, the group stands still.
                self.stats.ccd_queries += 1;
                if EdgeEdgeQuery::new(start, end).toi().is_some() {
                    self.stand_still(pts[0].0, h, groups, frozen_list);
                }
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
                self.hold_together(&pts, h, groups, frozen_list);
            }
            for &(i, _, _) in &pts {
                self.enqueue_around(i);
            }
            if !self.queued[k] {
                self.queued[k] = true;
                self.queue.push(k as u32);
            }
        }
    }

    /// Brute force, for tests: every pair of non-neighbouring segments,
    /// whether or not the broad phase kept it, through the exact edge–edge
    /// CCD over the substep's motion.
    pub(super) fn audit(&mut self) {
        let listed: std::collections::HashSet<(u32, u32)> =
            self.pairs.iter().map(|p| (p.a, p.b)).collect();
        for i in 0..self.segs.len() {
            for j in i + 1..self.segs.len() {
                let (pa, pb) = (self.segs[i].p as usize, self.segs[j].p as usize);
                let fixed = |p: usize| self.w[p] == 0.0 && self.w[p + 1] == 0.0;
                if pa.abs_diff(pb) <= 1 || (fixed(pa) && fixed(pb)) {
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
                if !listed.contains(&(i as u32, j as u32)) {
                    let touch = (self.radius(i) + self.radius(j)) as f64;
                    let sc = closest_points_segment_segment(end[0], end[1], end[2], end[3]);
                    if sc.distance_squared <= touch * touch {
                        self.stats.audit_missed += 1;
                    }
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
    pub(super) fn enqueue_around(&mut self, i: usize) {
        for seg in self.part_segs[i] {
            if seg == u32::MAX {
                continue;
            }
            let (queued, queue) = (&mut self.queued, &mut self.queue);
            for q in self.pair_index.of(seg) {
                if !queued[q as usize] {
                    queued[q as usize] = true;
                    queue.push(q);
                }
            }
        }
    }

    /// Thick-segment CCD over the substep and, at its time of impact, an
    /// impulse that stops the approach along the pair's normal (with
    /// restitution); the particles go on from there with their new
    /// velocities. False when there is nothing to respond with.
    ///
    /// Segments that begin the substep within their thickness of each
    /// other (their contact did not push them out: 0.02–1.4 mm apart for
    /// threads 2 mm thick, in the drops below) have their time of impact
    /// at the start, where their closest points may be parting while
    /// their centre lines meet later elsewhere, the segments turning about
    /// each other: then the impact is taken where they first come within
    /// half the distance they began at (both radii scaled alike), where
    /// they approach. Without it, such a pair went straight to the
    /// fail-safe: of 600 cables dropped on a pinned line (the drops of
    /// `cables_dropped_on_a_pinned_line_keep_their_length_and_add_no_energy`
    /// from seeds 7, 1001 and 2002, 200 each), 61 drops froze 12,035
    /// particles, now 50 drops 9,153.
    fn respond(&mut self, k: usize, start: &[DVec3; 4], h: f32) -> bool {
        let p = self.pairs[k];
        let end = self.endpoints(&p, &self.x);
        let (ra, rb) = (
            self.radius(p.a as usize) as f64,
            self.radius(p.b as usize) as f64,
        );
        let impact = match self.impact(&p, start, &end, ra, rb, h) {
            Some(i) if i.t == 0.0 && (i.vn >= 0.0 || i.vn.is_nan()) => {
                let sc = closest_points_segment_segment(start[0], start[1], start[2], start[3]);
                let scale = (0.5 * sc.distance_squared.sqrt() / (ra + rb)).min(1.0);
                self.impact(&p, start, &end, ra * scale, rb * scale, h)
            }
            found => found,
        };
        let Some(Impact {
            t,
            n,
            pts,
            vn,
            denom,
        }) = impact.filter(|i| i.vn < 0.0)
        else {
            return false;
        };
        let j = -(1.0 + p.e) * vn / denom;
        let vel = |sys: &Self, i: usize| (sys.x[i] - sys.prev[i]) / h;
        let mut moved = [None; 4];
        for (m, &(i, wg, sgn)) in pts.iter().enumerate() {
            if self.is_held(i) {
                continue;
            }
            let v_old = vel(self, i);
            let v_new = v_old + n * (sgn * j * wg * self.w[i]);
            let x_t = self.prev[i] + v_old * (t * h);
            let x = x_t + v_new * ((1.0 - t) * h);
            // The pairs only cover motion within each particle's tube.
            if self.outside_tube(i, x) {
                return false;
            }
            moved[m] = Some((i, x));
        }
        for (i, x) in moved.into_iter().flatten() {
            self.x[i] = x;
        }
        true
    }

    /// [`Self::respond`]'s impact at radii `ra`, `rb`, approaching or
    /// not; `None` where the segments do not come that close or nothing of
    /// them moves.
    fn impact(
        &mut self,
        p: &Pair,
        start: &[DVec3; 4],
        end: &[DVec3; 4],
        ra: f64,
        rb: f64,
        h: f32,
    ) -> Option<Impact> {
        let res = thick_edge_edge_ccd(*start, *end, ra, rb, 1.0e-4);
        self.stats.subdivisions += res.subdivisions as u64;
        let toi = res.toi?;
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
        let pts = pair_points(&Pair { s, u, ..*p });
        let denom = self.pair_denominator(&pts);
        if !moves_anything(denom) {
            return None;
        }
        let vel = |sys: &Self, i: usize| (sys.x[i] - sys.prev[i]) / h;
        let vn: f32 = pts
            .iter()
            .map(|&(i, wg, sgn)| n.dot(vel(self, i)) * wg * sgn)
            .sum();
        Some(Impact {
            t,
            n,
            pts,
            vn,
            denom,
        })
    }
}

/// Where [`CableSystem::respond`] would stop an approach: the time of
/// impact (a fraction of the substep), the normal, the pair's points, the
/// normal velocity there (approaching below 0) and `Σ wᵢ²/mᵢ`.
struct Impact {
    t: f32,
    n: Vec3,
    pts: [(usize, f32, f32); 4],
    vn: f32,
    denom: f32,
}

/// `min over B's endpoints of n·b − max over A's endpoints of n·a`: ≥ 0
/// when the plane normal to `n` separates the segments.
#[inline]
pub(super) fn separation(n: DVec3, e: &[DVec3; 4]) -> f64 {
    n.dot(e[2]).min(n.dot(e[3])) - n.dot(e[0]).max(n.dot(e[1]))
}

/// The unit direction from A's closest point to B's: a separating direction
/// for two disjoint segments. For touching ones, the edges' cross product
/// (up to sign, towards B's side if either side is told).
pub(super) fn separating_normal(
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
