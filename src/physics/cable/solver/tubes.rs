//! Tubes and the step's pairs: each particle's tube, the segments' boxes
//! around them, the pairs the grid and the tubes' filter keep (with their
//! index by segment), and the extensions that give a particle that left its
//! tube a new one and its segments new pairs (see the module documentation
//! of [`super::super`]).

use super::super::pairs::{group_by_key, overlap, Grid};
use super::filter::Candidate;
use super::verify::{separating_normal, separation};
use super::{
    both, d3, runs_in, CableSystem, Pair, Seg, Tube, REBUILD_FRACTION, TUBE_FACTOR, TUBE_MARGIN,
    TUBE_MEMORY,
};
use crate::physics::collision::ccd_thick::closest_points_segment_segment;
use crate::physics::math::Vec3;

/// A segment as the filter of a build's pairs reads it (one record of a
/// cache line instead of a segment, two tubes and a cable's properties
/// scattered in memory): its first particle, cable and rest length, the
/// larger of its particles' slacks, and its particles where their tubes
/// start and at the step's end.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(super) struct FilterSeg {
    pub(super) link: Link,
    pub(super) slack: f32,
    pub(super) at: [Vec3; 2],
    pub(super) end: [Vec3; 2],
}

/// What [`CableSystem::judge`] needs of a segment besides its particles.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Link {
    pub p: u32,
    pub cable: u32,
    pub rest: f32,
}

impl From<Seg> for Link {
    fn from(s: Seg) -> Self {
        Self {
            p: s.p,
            cable: s.cable,
            rest: s.rest,
        }
    }
}

/// The pairs of each segment: an array by segment built with the list,
/// and a linked list per segment for the pairs tube extensions add since (a
/// few hundred at a time to a list of ~100k, which is not indexed again).
#[derive(Clone, Debug, Default)]
pub(super) struct PairIndex {
    start: Vec<u32>,
    index: Vec<u32>,
    /// Each segment's newest added entry, and each entry's pair and next.
    head: Vec<u32>,
    pair: Vec<u32>,
    next: Vec<u32>,
}

impl PairIndex {
    fn rebuild(&mut self, ends: &[[u32; 2]], segs: usize, par: bool) {
        // From the pairs' segments alone (8 bytes a pair): from the pair
        // records (56 bytes), two threads each read all of them for a few
        // bytes of output, and took as long as one.
        group_by_key(
            ends,
            segs,
            |e| *e,
            |k, _| k as u32,
            par,
            &mut self.start,
            &mut self.index,
        );
        self.head.clear();
        self.head.resize(segs, u32::MAX);
        self.pair.clear();
        self.next.clear();
    }

    /// Pair `k` was added to the list.
    fn add(&mut self, k: u32, p: &Pair) {
        for s in [p.a, p.b] {
            self.pair.push(k);
            self.next.push(self.head[s as usize]);
            self.head[s as usize] = (self.pair.len() - 1) as u32;
        }
    }

    /// The pairs of segment `seg`.
    pub(super) fn of(&self, seg: u32) -> impl Iterator<Item = u32> + '_ {
        let s = seg as usize;
        let built = self.index[self.start[s] as usize..self.start[s + 1] as usize].iter();
        let mut e = self.head[s];
        let added = std::iter::from_fn(move || {
            (e != u32::MAX).then(|| {
                let k = self.pair[e as usize];
                e = self.next[e as usize];
                k
            })
        });
        built.copied().chain(added)
    }
}

/// Segments that cannot move this step (both particles pinned or asleep):
/// two of them never pair, so they stay out of the step's grid, and their
/// boxes go into a grid of their own, kept from step to step while they
/// stay the same (a settled heap's), which the others' boxes are queried
/// against. A sleeping heap of 50,000 segments under one falling cable cost
/// 19.6 ms a step with every segment in the step's grid, most of it the
/// heap's own overlapping boxes, found and then skipped.
#[derive(Clone, Debug, Default)]
pub(super) struct FixedSegments {
    /// The fixed segments, ascending, and their boxes, as `grid` holds them.
    pub(super) ids: Vec<u32>,
    boxes: Vec<(Vec3, Vec3)>,
    pub(super) grid: Grid,
    /// The others, ascending (the step grid's boxes, in order), when any
    /// segment is fixed (else the step's grid holds every segment).
    pub(super) movable: Vec<u32>,
    movable_boxes: Vec<(Vec3, Vec3)>,
    scratch: Vec<u32>,
    /// Fixed-segment grid builds (for tests: it is kept while nothing changes).
    pub(super) builds: u64,
}

/// What [`CableSystem::extend`] did.
pub(crate) enum Extension {
    /// Every particle is inside its tube.
    None,
    /// New tubes for some particles: the segments that changed (their body
    /// contacts are to be regenerated), with their new pairs.
    Grown(Vec<u32>),
    /// So many particles outran their tubes that every tube and pair was
    /// rebuilt from the substep's start (all body contacts go too).
    Rebuilt,
}

impl CableSystem {
    /// Whether particle `i` is outside its tube at the current time.
    #[inline]
    pub(super) fn outside_tube(&self, i: usize, x: Vec3) -> bool {
        let t = &self.tubes[i];
        self.w[i] > 0.0 && (x - t.at(self.time)).length_squared() > t.slack * t.slack
    }

    /// The particles that ended the substep outside their tube, in order
    /// (the halves on two threads for large systems).
    fn outran(&mut self) -> Vec<usize> {
        let (n, half) = (self.x.len(), self.x.len() / 2);
        let this = &*self;
        // (Only awake cables' particles can be out: the others stand still.)
        let find = |from: usize, to: usize| -> Vec<usize> {
            this.awake_in(from, to)
                .flatten()
                .filter(|&i| this.outside_tube(i, this.x[i]))
                .collect()
        };
        let par = self.parallel();
        let (mut lo, mut hi) = both(par, || find(0, half), || find(half, n));
        lo.append(&mut hi);
        lo
    }

    fn tube_box(&self, seg: usize) -> (Vec3, Vec3) {
        let p = self.segs[seg].p as usize;
        let r = self.radius(seg);
        let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
        for t in &self.tubes[p..p + 2] {
            let (a, b) = (t.base, t.at(self.step));
            let pad = Vec3::splat(t.slack + r);
            lo = lo.min(a.min(b) - pad);
            hi = hi.max(a.max(b) + pad);
        }
        (lo, hi)
    }

    /// The tube of a particle that starts at `base` at time `t0` with
    /// velocity `v`: its free flight to the step's end (substeps of `h`
    /// under `g`), and a slack for what contacts and segments may change.
    fn set_tube(&mut self, i: usize, base: Vec3, v: Vec3, t0: f32, h: f32, g: Vec3) {
        (self.tubes[i], self.reach[i]) = self.tube_of(i, base, v, t0, h, g);
    }

    /// [`Self::set_tube`]'s tube, and how far the particle may go from
    /// `center` with it.
    fn tube_of(&self, i: usize, base: Vec3, v: Vec3, t0: f32, h: f32, g: Vec3) -> (Tube, f32) {
        let span = (self.step - t0).max(0.0);
        if self.w[i] == 0.0 || span <= 0.0 {
            // (Standing still, from time 0 whenever built: a sleeping
            // cable's tube is kept from build to build, `keep_sleepers`.)
            let tube = Tube {
                base,
                vel: Vec3::ZERO,
                t0: 0.0,
                slack: 0.0,
            };
            return (tube, (base - self.center[i]).length());
        }
        let disp = v * span + g * (0.5 * span * (span + h));
        // The chord of the parabola strays from it by |g|·span²/8; the
        // substeps' start (gravity before or after the first one) by less
        // than |g|·h·span.
        let slack = TUBE_MARGIN
            + TUBE_MEMORY * self.last_dev[i]
            + TUBE_FACTOR * disp.length()
            + g.length() * span * (0.125 * span + h);
        let tube = Tube {
            base,
            vel: disp / span,
            t0,
            slack,
        };
        let reach = (base - self.center[i])
            .length()
            .max((base + disp - self.center[i]).length())
            + slack;
        (tube, reach)
    }

    /// Gives every particle a tube from `t0` (the step's start, or the
    /// current substep's start when `from_prev`) to the step's end, at
    /// `velocity(i)`, and builds the pairs there.
    pub(super) fn build(
        &mut self,
        from_prev: bool,
        velocity: impl Fn(&Self, usize) -> Vec3 + Sync,
        h: f32,
        g: Vec3,
    ) {
        let clock = std::time::Instant::now();
        let n = self.x.len();
        let t0 = if from_prev { self.time - h } else { 0.0 };
        self.built_at = t0 / self.step;
        self.center.clear();
        self.center
            .extend_from_slice(if from_prev { &self.prev } else { &self.x });
        // The substep's contacts (if any) stay: they hold what restitution
        // needs, whatever happens to the pair list.
        self.tubes.resize(n, Tube::default());
        self.reach.resize(n, 0.0);
        if !from_prev {
            self.pred_end.resize(n, Vec3::ZERO);
        }
        // Tubes, then the segments' boxes and filter records, by halves on
        // two threads for large systems (each writes only its own).
        let par = self.parallel();
        let (mut tubes, mut reach) = (
            std::mem::take(&mut self.tubes),
            std::mem::take(&mut self.reach),
        );
        {
            let this = &*self;
            // (Only the fresh ones: the rest keep the last build's.)
            let fill = |first: usize, tubes: &mut [Tube], reach: &mut [f32]| {
                for run in runs_in(&this.fresh, first, first + tubes.len()) {
                    let k = run.start - first..run.end - first;
                    let (tubes, reach) = (&mut tubes[k.clone()], &mut reach[k]);
                    for ((t, r), i) in tubes.iter_mut().zip(reach).zip(run) {
                        (*t, *r) = this.tube_of(i, this.center[i], velocity(this, i), t0, h, g);
                    }
                }
            };
            let half = n / 2;
            let (t_lo, t_hi) = tubes.split_at_mut(half);
            let (r_lo, r_hi) = reach.split_at_mut(half);
            both(par, || fill(0, t_lo, r_lo), || fill(half, t_hi, r_hi));
        }
        (self.tubes, self.reach) = (tubes, reach);
        if !from_prev {
            for (e, t) in self.pred_end.iter_mut().zip(&self.tubes) {
                *e = t.at(self.step);
            }
        }
        let segs_n = self.segs.len();
        let (mut boxes, mut records) = (
            std::mem::take(&mut self.boxes),
            std::mem::take(&mut self.filter_segs),
        );
        boxes.resize(segs_n, (Vec3::ZERO, Vec3::ZERO));
        records.resize(segs_n, FilterSeg::default());
        {
            let this = &*self;
            let fill = |first: usize, boxes: &mut [(Vec3, Vec3)], records: &mut [FilterSeg]| {
                for run in runs_in(&this.fresh_segs, first, first + boxes.len()) {
                    let k = run.start - first..run.end - first;
                    let (boxes, records) = (&mut boxes[k.clone()], &mut records[k]);
                    for ((b, f), s) in boxes.iter_mut().zip(records).zip(run) {
                        let seg = this.segs[s];
                        *b = this.tube_box(s);
                        let (t0, t1) = (this.tubes[seg.p as usize], this.tubes[seg.p as usize + 1]);
                        *f = FilterSeg {
                            link: seg.into(),
                            at: [t0.base, t1.base],
                            end: [t0.at(this.step), t1.at(this.step)],
                            slack: t0.slack.max(t1.slack),
                        };
                    }
                }
            };
            let half = segs_n / 2;
            let (b_lo, b_hi) = boxes.split_at_mut(half);
            let (f_lo, f_hi) = records.split_at_mut(half);
            both(par, || fill(0, b_lo, f_lo), || fill(half, b_hi, f_hi));
        }
        (self.boxes, self.filter_segs) = (boxes, records);
        self.grown.clear();
        self.grown.resize(self.segs.len(), false);
        self.grown_list.clear();
        self.candidates.clear();
        self.grid.limit = Some(self.pair_limit());
        self.step_candidates(self.parallel());
        self.stats.candidates = self.stats.candidates.max(self.candidates.len() as u64);
        if self.grid.overflowed() || self.candidates.len() > self.pair_limit() {
            // Nothing is judged: the stage stops.
            self.overflow = true;
            self.candidates.clear();
        }
        // The filter on two threads for large systems, the halves' pairs
        // joined in order.
        let par = self.parallel();
        let mut upper = std::mem::take(&mut self.upper_pairs);
        let mut lower = std::mem::take(&mut self.pairs);
        let mut ends = std::mem::take(&mut self.pair_ends);
        let mut upper_ends = std::mem::take(&mut self.upper_pair_ends);
        let mid = self.candidates.len() / 2;
        let this = &*self;
        let filter = |cands: &[(u32, u32)], out: &mut Vec<Pair>, ends: &mut Vec<[u32; 2]>| {
            out.clear();
            ends.clear();
            this.judge_built(cands, out, ends);
        };
        both(
            par,
            || filter(&this.candidates[..mid], &mut lower, &mut ends),
            || filter(&this.candidates[mid..], &mut upper, &mut upper_ends),
        );
        lower.append(&mut upper);
        ends.append(&mut upper_ends);
        self.pairs = lower;
        self.upper_pairs = upper;
        self.upper_pair_ends = upper_ends;
        // The index by segment, from the pairs' segments alone.
        self.pair_index.rebuild(&ends, self.segs.len(), par);
        self.pair_ends = ends;
        self.size_pair_scratch();
        self.built_since_load = true;
        self.stats.ms_pairs += clock.elapsed().as_secs_f64() * 1e3;
    }

    /// The step's candidate pairs (`candidates`): overlapping boxes of
    /// segments that do not share a particle and are not both fixed (see
    /// [`FixedSegments`]), those of two movable segments grouped by the
    /// first ascending, then each movable segment's fixed partners.
    fn step_candidates(&mut self, par: bool) {
        let limit = self.pair_limit();
        let (segs, w) = (&self.segs, &self.w);
        let neighbours = |i: u32, j: u32| segs[i as usize].p.abs_diff(segs[j as usize].p) <= 1;
        let f = &mut self.fixed;
        let mut ids = std::mem::take(&mut f.scratch);
        ids.clear();
        f.movable.clear();
        for (k, seg) in segs.iter().enumerate() {
            let p = seg.p as usize;
            if w[p] == 0.0 && w[p + 1] == 0.0 {
                ids.push(k as u32);
            } else {
                f.movable.push(k as u32);
            }
        }
        // (The boxes the last build kept are those it compared or put in
        // the fixed grid: only the fresh ones can differ.)
        let (boxes, fresh) = (&self.boxes, &self.fresh_segs);
        let same = ids == f.ids
            && fresh.iter().all(|&(a, b)| {
                let from = ids.partition_point(|&k| (k as usize) < a);
                ids[from..]
                    .iter()
                    .zip(&f.boxes[from..])
                    .take_while(|(&k, _)| (k as usize) < b)
                    .all(|(&k, fb)| boxes[k as usize] == *fb)
            });
        if same {
            f.scratch = ids;
        } else {
            f.scratch = std::mem::replace(&mut f.ids, ids);
            f.boxes.clear();
            f.boxes.extend(f.ids.iter().map(|&k| boxes[k as usize]));
            f.grid.build(&f.boxes, false);
            f.builds += 1;
        }
        if f.ids.is_empty() {
            f.movable.clear();
            self.grid
                .pairs(boxes, neighbours, par, &mut self.candidates);
            return;
        }
        f.movable_boxes.clear();
        f.movable_boxes
            .extend(f.movable.iter().map(|&k| boxes[k as usize]));
        let movable = &f.movable;
        self.grid.pairs(
            &f.movable_boxes,
            |i, j| neighbours(movable[i as usize], movable[j as usize]),
            par,
            &mut self.candidates,
        );
        for c in &mut self.candidates {
            *c = (movable[c.0 as usize], movable[c.1 as usize]);
        }
        let mut found = Vec::new();
        for (&s, b) in movable.iter().zip(&f.movable_boxes) {
            if self.grid.overflowed() || self.candidates.len() > limit {
                return;
            }
            found.clear();
            // (A box too large for the grid's cells is given every box.)
            f.grid.query(b, |_| false, &mut found);
            for &k in &found {
                let t = f.ids[k as usize];
                if !neighbours(s, t) && overlap(b, &f.boxes[k as usize]) {
                    self.candidates.push((s.min(t), s.max(t)));
                }
            }
        }
    }

    /// Segments `a < b` as a candidate pair added during a substep (a
    /// tube extension): the closest points are taken at the substep's start
    /// (`prev`), and the tubes are checked from time `from` to the step's
    /// end (see [`Self::judge`]).
    fn candidate(&self, a: u32, b: u32, from: f32) -> Candidate {
        let (sa, sb) = (self.segs[a as usize], self.segs[b as usize]);
        let (pa, pb) = (sa.p as usize, sb.p as usize);
        let ids = [pa, pa + 1, pb, pb + 1];
        let t = ids.map(|i| self.tubes[i]);
        Candidate {
            ab: [a, b],
            links: [sa.into(), sb.into()],
            at: ids.map(|i| self.prev[i]),
            from: t.map(|q| q.at(from.max(q.t0))),
            end: t.map(|q| q.at(self.step)),
            slack: t[0].slack.max(t[1].slack) + t[2].slack.max(t[3].slack),
        }
    }

    /// Segments `a < b` as a candidate of the step's (or a rebuild's)
    /// pairs, from the segments' records (`filter_segs`): there the tubes
    /// start where the closest points are taken.
    pub(super) fn built_candidate(&self, a: u32, b: u32) -> Candidate {
        let (fa, fb) = (&self.filter_segs[a as usize], &self.filter_segs[b as usize]);
        let at = [fa.at[0], fa.at[1], fb.at[0], fb.at[1]];
        Candidate {
            ab: [a, b],
            links: [fa.link, fb.link],
            at,
            from: at,
            end: [fa.end[0], fa.end[1], fb.end[0], fb.end[1]],
            slack: fa.slack + fb.slack,
        }
    }

    /// The candidate's pair (see [`Candidate`]), in f64; `None` when the
    /// plane of the closest points at `at` proves the segments stay apart:
    /// the gap along a fixed direction is concave in time for the tubes'
    /// linear paths, so a plane that leaves more than the touching distance
    /// plus both slacks at `from` and at the end does so throughout. One
    /// pair at a time: the filter ([`Self::judge_all`]) asks it only of
    /// segments that (nearly) touch at `at`.
    pub(super) fn judge(&self, c: &Candidate) -> Option<Pair> {
        let (at, [la, lb]) = (c.at, c.links);
        let sc = closest_points_segment_segment(d3(at[0]), d3(at[1]), d3(at[2]), d3(at[3]));
        let (ra, rb) = (
            self.props[la.cable as usize].radius,
            self.props[lb.cable as usize].radius,
        );
        let n = separating_normal(&sc, at);
        let nd = d3(n);
        let gap_from = separation(nd, &c.from.map(d3));
        let gap_end = separation(nd, &c.end.map(d3));
        if gap_from.min(gap_end) - c.slack as f64 > (ra + rb) as f64 {
            return None;
        }
        Some(self.pair_record(c.ab, c.links, n, sc.s as f32, sc.t as f32))
    }

    /// The pair of segments `ab` (`links`: theirs) with plane normal `n`
    /// and contact coordinates `s` along A and `u` along B.
    pub(super) fn pair_record(
        &self,
        ab: [u32; 2],
        links: [Link; 2],
        n: Vec3,
        s: f32,
        u: f32,
    ) -> Pair {
        let [sa, sb] = links;
        let (pra, prb) = (
            &self.props[sa.cable as usize],
            &self.props[sb.cable as usize],
        );
        let (ra, rb) = (pra.radius, prb.radius);
        // Segments a few links apart on one cable may come closer than the
        // thickness where the cable bends: only crossing is prevented
        // between them.
        let links = sa.p.abs_diff(sb.p) as f32 - 1.0;
        let thickness = if sa.cable == sb.cable && links * sa.rest < ra + rb {
            0.0
        } else {
            ra + rb
        };
        Pair {
            a: ab[0],
            b: ab[1],
            pa: sa.p,
            pb: sb.p,
            n,
            s,
            u,
            cs: s,
            cu: u,
            thickness,
            mu: (pra.friction * prb.friction).sqrt(),
            e: pra.restitution.max(prb.restitution),
        }
    }

    /// Per-pair scratch sized to the new list.
    fn size_pair_scratch(&mut self) {
        self.responses.clear();
        self.responses.resize(self.pairs.len(), 0);
        self.queued.clear();
        self.queued.resize(self.pairs.len(), false);
        self.stats.pairs = self.stats.pairs.max(self.pairs.len() as u64);
    }

    /// Particles outside their tube at the end of this substep get a new
    /// one, from where the substep began at the velocity it had, and their
    /// segments are queried against the grid (and the other changed
    /// segments) for new pairs, which come with a plane of the substep's
    /// start; with many such particles, everything is rebuilt from the
    /// substep's start instead. Right after an extension, only the particles
    /// it moved to new tubes are looked at again (no other can have left its
    /// tube), unless the verification held particles back since (rare):
    /// then all are.
    pub(crate) fn extend(&mut self, h: f32, g: Vec3) -> Extension {
        let clock = std::time::Instant::now();
        let outran = match self.recheck.take() {
            Some(mut look) if !self.held_since_look => {
                look.retain(|&i| self.outside_tube(i, self.x[i]));
                // Tests check the claim: a full look finds the same.
                debug_assert_eq!(look, self.outran(), "a particle left its tube unseen");
                look
            }
            _ => self.outran(),
        };
        self.held_since_look = false;
        if outran.is_empty() {
            self.stats.ms_extend += clock.elapsed().as_secs_f64() * 1e3;
            return Extension::None;
        }
        self.moving_holds = false;
        if outran.len() > 64.max(self.x.len() / REBUILD_FRACTION) {
            self.stats.rebuilds += 1;
            self.build(true, |s, i| (s.x[i] - s.prev[i]) / h, h, g);
            return Extension::Rebuilt;
        }
        self.stats.extensions += outran.len() as u64;
        let from = self.time - h;
        for &i in &outran {
            let v = (self.x[i] - self.prev[i]) / h;
            self.set_tube(i, self.prev[i], v, from, h, g);
        }
        let mut grown: Vec<u32> = outran
            .iter()
            .flat_map(|&i| self.part_segs[i])
            .filter(|&s| s != u32::MAX)
            .collect();
        grown.sort_unstable();
        grown.dedup();
        for &s in &grown {
            self.boxes[s as usize] = self.tube_box(s as usize);
            if !self.grown[s as usize] {
                self.grown[s as usize] = true;
                self.grown_list.push(s);
            }
        }
        // The grid holds the boxes of its build; the changed ones, as they
        // are now, go into a small grid of their own.
        self.grown_boxes.clear();
        for &g in &self.grown_list {
            self.grown_boxes.push(self.boxes[g as usize]);
        }
        self.grown_grid.build(&self.grown_boxes, false);
        let before = self.pairs.len();
        // Each grown segment's new pairs, the halves on two threads (a pair
        // comes from one segment only, so the lists join without repeats).
        let par = grown.len() >= 256 && self.parallel();
        let mid = grown.len() / 2;
        let this = &*self;
        // (Each half stops past the room: about twice it at most in all.)
        let room = self.pair_limit().saturating_sub(before);
        let search = |part: &[u32]| {
            let (mut found, mut partners) = (Vec::new(), Vec::new());
            let (mut cands, mut out) = (Vec::new(), Vec::new());
            for &s in part {
                if cands.len() > room {
                    return None;
                }
                this.new_pairs(s, &grown, &mut found, &mut partners, &mut cands);
            }
            this.judge_all(
                cands.len(),
                |k| this.candidate(cands[k].0, cands[k].1, from),
                &mut out,
            );
            Some(out)
        };
        let (lo, hi) = both(par, || search(&grown[..mid]), || search(&grown[mid..]));
        let (Some(lo), Some(hi)) = (lo, hi) else {
            // The stage stops.
            self.overflow = true;
            self.stats.ms_extend += clock.elapsed().as_secs_f64() * 1e3;
            return Extension::None;
        };
        self.pairs.extend(lo);
        self.pairs.extend(hi);
        for k in before..self.pairs.len() {
            self.pair_index.add(k as u32, &self.pairs[k]);
        }
        self.responses.resize(self.pairs.len(), 0);
        self.queued.resize(self.pairs.len(), false);
        self.stats.pairs = self.stats.pairs.max(self.pairs.len() as u64);
        self.stats.ms_extend += clock.elapsed().as_secs_f64() * 1e3;
        self.recheck = Some(outran);
        Extension::Grown(grown)
    }

    /// The candidate pairs segment `s` (its box just grew) gains with the
    /// boxes it now overlaps (in the grid as built, or grown since:
    /// `grown_grid`, or fixed: `fixed.grid`), those of two segments grown
    /// at once coming from the lower, appended to `out`.
    fn new_pairs(
        &self,
        s: u32,
        grown: &[u32],
        found: &mut Vec<u32>,
        partners: &mut Vec<u32>,
        out: &mut Vec<(u32, u32)>,
    ) {
        let bs = self.boxes[s as usize];
        found.clear();
        // A grown box is found in the small grid, as it is now (the large
        // one holds it as it was built): each box once.
        let movable = &self.fixed.movable;
        let step_ids = (!movable.is_empty()).then_some(&movable[..]);
        query_segments(&self.grid, &bs, step_ids, |t| self.grown[t as usize], found);
        query_segments(
            &self.grown_grid,
            &bs,
            Some(&self.grown_list),
            |_| false,
            found,
        );
        query_segments(
            &self.fixed.grid,
            &bs,
            Some(&self.fixed.ids),
            |_| false,
            found,
        );
        // The segments `s` is already paired with, read once.
        partners.clear();
        partners.extend(self.pair_index.of(s).map(|m| {
            let q = &self.pairs[m as usize];
            if q.a == s {
                q.b
            } else {
                q.a
            }
        }));
        partners.sort_unstable();
        let first = out.len();
        for &t in found.iter() {
            if t == s
                || self.segs[s as usize].p.abs_diff(self.segs[t as usize].p) <= 1
                || !overlap(&bs, &self.boxes[t as usize])
                || (t < s && grown.binary_search(&t).is_ok())
                || partners.binary_search(&t).is_ok()
            {
                continue;
            }
            out.push((s.min(t), s.max(t)));
        }
        // In the order of the other segments (candidates in a fixed order).
        out[first..].sort_unstable();
    }
}

/// Appends to `found` the segments whose boxes in `grid` overlap `b` (see
/// [`Grid::query`]), unless `skip` says otherwise: box `k` is segment
/// `ids[k]` (segment `k` without `ids`).
fn query_segments(
    grid: &Grid,
    b: &(Vec3, Vec3),
    ids: Option<&[u32]>,
    skip: impl Fn(u32) -> bool,
    found: &mut Vec<u32>,
) {
    let seg = |k: u32| ids.map_or(k, |ids| ids[k as usize]);
    let first = found.len();
    grid.query(b, |k| skip(seg(k)), found);
    for f in &mut found[first..] {
        *f = seg(*f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cable::Cable;
    use crate::physics::cable::CableSpec;

    /// With some segments fixed (a mat pinned at every particle, and a
    /// cable asleep on it) and others free to move across them (one of
    /// them very fast): the step's
    /// candidates are exactly the overlapping boxes of segments that share
    /// no particle and are not both fixed (brute force), and the fixed
    /// segments' grid is built once while they stay as they are, again
    /// when one of them moves.
    #[test]
    fn fixed_segments_pair_only_with_movable_ones_and_their_grid_is_kept() {
        let mut cables = Vec::new();
        for k in 0..6u64 {
            let z = -0.5 + 0.2 * k as f32;
            let mut spec = CableSpec::new([-1.0, 0.0, z], [1.0, 0.0, z], 10);
            spec.pinned = (0..=10).collect();
            spec.radius = 0.02;
            cables.push(Cable::from_spec(&spec, k).unwrap());
        }
        let mut spec = CableSpec::new([0.3, 0.04, -1.0], [0.3, 0.04, 1.0], 12);
        spec.radius = 0.02;
        let mut sleeper = Cable::from_spec(&spec, 6).unwrap();
        sleeper.sleeping = true;
        cables.push(sleeper);
        for (k, x) in [-0.4f32, 0.0, 0.5].into_iter().enumerate() {
            let mut spec = CableSpec::new([x, 0.1, -1.0], [x + 0.2, 0.05, 1.0], 16);
            spec.radius = 0.02;
            spec.linear_velocity = [0.0, -6.0, 0.0];
            cables.push(Cable::from_spec(&spec, 7 + k as u64).unwrap());
        }
        // One so fast (3 m a step, along the mat) that its boxes span more
        // of the fixed grid's cells than a query reads: it is given every
        // fixed box to test.
        let mut spec = CableSpec::new([-0.9, 0.05, -0.6], [-0.9, 0.05, 0.6], 10);
        spec.radius = 0.02;
        spec.linear_velocity = [200.0, 0.0, 0.0];
        cables.push(Cable::from_spec(&spec, 10).unwrap());
        let mut sys = CableSystem::default();
        let (dt, h, g) = (1.0 / 60.0, 1.0 / 240.0, Vec3::new(0.0, -9.81, 0.0));
        for round in 0..3 {
            if round == 2 {
                // A pinned cable moved (as if edited): built again.
                for p in &mut cables[0].x {
                    p.y -= 0.01;
                }
            }
            sys.load(&cables);
            sys.begin(dt, h, g);
            let fixed = |s: usize| {
                let p = sys.segs[s].p as usize;
                sys.w[p] == 0.0 && sys.w[p + 1] == 0.0
            };
            let mut want = Vec::new();
            for i in 0..sys.segs.len() {
                for j in i + 1..sys.segs.len() {
                    if sys.segs[i].p.abs_diff(sys.segs[j].p) > 1
                        && !(fixed(i) && fixed(j))
                        && overlap(&sys.boxes[i], &sys.boxes[j])
                    {
                        want.push((i as u32, j as u32));
                    }
                }
            }
            let mut got = sys.candidates.clone();
            got.sort_unstable();
            assert!(want.len() > 40, "the cables cross the mat: {}", want.len());
            assert_eq!(got, want, "round {round}");
            assert_eq!(sys.fixed.ids.len(), 6 * 10 + 12, "round {round}");
            let builds = if round < 2 { 1 } else { 2 };
            assert_eq!(sys.fixed.builds, builds, "round {round}");
        }
    }

    /// A particle pushed out of its tube within a substep, onto a cable
    /// pinned at every particle (a fixed segment, outside the step's grid):
    /// the extension finds its segments' new pairs with the fixed one.
    #[test]
    fn an_extension_pairs_with_fixed_segments() {
        let mut rail = CableSpec::new([-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], 10);
        rail.pinned = (0..=10).collect();
        rail.radius = 0.02;
        let mut free = CableSpec::new([-1.0, 0.5, 0.05], [1.0, 0.5, 0.05], 10);
        free.radius = 0.02;
        let cables = [
            Cable::from_spec(&rail, 0).unwrap(),
            Cable::from_spec(&free, 1).unwrap(),
        ];
        let mut sys = CableSystem::default();
        let (dt, h, g) = (1.0 / 60.0, 1.0 / 240.0, Vec3::new(0.0, -9.81, 0.0));
        sys.load(&cables);
        sys.begin(dt, h, g);
        let with_rail =
            |sys: &CableSystem| sys.pairs.iter().filter(|p| p.a < 10 && p.b >= 10).count();
        assert_eq!(with_rail(&sys), 0, "0.5 m apart, at rest");
        sys.solve_substep(h, g, 4);
        // Particle 5 of the free cable (16 overall) thrown 45 cm down.
        sys.x[16].y -= 0.45;
        assert!(matches!(sys.extend(h, g), Extension::Grown(_)));
        let pairs: Vec<(u32, u32)> = sys
            .pairs
            .iter()
            .filter(|p| p.a < 10 && p.b >= 10)
            .map(|p| (p.a, p.b))
            .collect();
        // The free cable's segments 4 and 5 (14, 15) meet rail segments
        // 4 and 5 (below particle 16, at x = 0).
        for want in [(4, 14), (5, 15)] {
            assert!(pairs.contains(&want), "{want:?} in {pairs:?}");
        }
    }
}
