//! The tubes' filter, [`LANES`] candidate pairs at a time: which pairs of
//! segments could come within touching distance while their particles stay
//! in their tubes (see [`CableSystem::judge`] for the argument), in f32
//! vectors instead of one pair at a time in f64.
//!
//! One pair at a time, the closest points' three dependent divisions leave
//! the processor waiting, and whether the pair is kept is a branch it
//! cannot predict (about half are). Side by side, every step of the test
//! works on all lanes at once, with selections instead of branches.
//!
//! f32 is exact enough where it matters: every position is taken relative
//! to the pair's first particle, so the numbers are the size of the pair
//! (not of the world), and a pair is dropped only when its gaps exceed the
//! touching distance by more than a bound of the rounding
//! ([`rounding_bound`]). Any direction proves a gap along it, so the
//! closest points themselves need no such care; the pair keeps the
//! direction as its plane (the verification checks and replaces planes).
//! Segments that touch (no direction from the closest points) go to the
//! f64 judge.

// Lane loops index several arrays at the same lane, as vector code does.
#![allow(clippy::needless_range_loop)]

use super::tubes::Link;
use super::{CableSystem, Pair, Vec3, MIN_GAP};

/// Candidates judged side by side.
const LANES: usize = 8;

/// How many candidates ahead the record of a pair's second segment is
/// fetched ([`prefetch`]).
const PREFETCH_AHEAD: usize = 16;

/// Asks the processor to bring `r` into the cache: the second segment of a
/// candidate is anywhere in the records (3.2 MB at 50,000 segments, more
/// than a core's cache), and waiting for it was a quarter of the filter's
/// time in the packed heap.
#[inline(always)]
fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing and cannot fault, and
    // SSE is part of every x86_64 processor.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

type Row = [f32; LANES];

/// A candidate pair as the filter reads it: segments `ab`, the four
/// particles (A's two, then B's) where the closest points are taken, when
/// the tubes' check starts and at the step's end, and the sum of the
/// segments' largest slacks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    pub ab: [u32; 2],
    pub links: [Link; 2],
    pub at: [Vec3; 4],
    pub from: [Vec3; 4],
    pub end: [Vec3; 4],
    pub slack: f32,
}

/// A bound of the f32 rounding in a gap computed from coordinates of size
/// up to `size` (m): the subtractions that make them relative and the dot
/// products with a unit direction each round by a few units in the last
/// place (6e-8 relative), far inside this.
#[inline]
fn rounding_bound(size: f32) -> f32 {
    1.0e-5 + 4.0e-6 * size
}

/// What the filter says of a lane.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Verdict {
    /// Apart while the particles stay in their tubes.
    Apart,
    /// May come within touching distance: the pair, with the direction of
    /// the closest points and their coordinates along A and B.
    Near { n: Vec3, s: f32, u: f32 },
    /// The segments (nearly) touch where the closest points are taken:
    /// the f32 direction is too rough to be sure it separates them there;
    /// the f64 judge decides.
    Touching,
}

/// `LANES` candidates as the filter reads them: each one's points
/// relative to its first, `p[4·m + k][axis][lane]` for the four particles
/// `k` (A's two, then B's) where the closest points are taken (`m` = 0),
/// when the tubes' check starts (1) and at the step's end (2); the sum of
/// the segments' largest slacks, the largest coordinate, and the touching
/// distance (the sum of the radii).
struct Lanes {
    p: [[Row; 3]; 12],
    slack: Row,
    size: Row,
    reach: Row,
}

impl Lanes {
    fn new() -> Self {
        Self {
            p: [[[0.0; LANES]; 3]; 12],
            slack: [0.0; LANES],
            size: [0.0; LANES],
            reach: [0.0; LANES],
        }
    }

    /// Lane `l`: the points `at`, `from` and `end` (each A's two, then
    /// B's).
    #[inline(always)]
    fn set(&mut self, l: usize, pts: &[[Vec3; 4]; 3], slack: f32, reach: f32) {
        let o = pts[0][0];
        let mut size = 0.0f32;
        for (m, q) in pts.iter().enumerate() {
            for k in 0..4 {
                let d = q[k] - o;
                self.p[4 * m + k][0][l] = d.x;
                self.p[4 * m + k][1][l] = d.y;
                self.p[4 * m + k][2][l] = d.z;
                size = size.max(d.abs().max_element());
            }
        }
        self.size[l] = size;
        self.slack[l] = slack;
        self.reach[l] = reach;
    }
}

/// The filter on `LANES` candidates (with `FROM_AT`, their tubes' check
/// starts where the closest points are taken: the gap there is read once).
fn judge_lanes<const FROM_AT: bool>(lanes: &Lanes) -> [Verdict; LANES] {
    let (p, slack, size, reach) = (&lanes.p, &lanes.slack, &lanes.size, &lanes.reach);
    let mut out_n = [[0.0f32; LANES]; 3];
    let (mut out_s, mut out_u) = ([0.0f32; LANES], [0.0f32; LANES]);
    let (mut apart, mut touching) = ([false; LANES], [false; LANES]);
    // Selections rather than `min`/`max` (whose NaN rules keep the loop
    // from becoming vector code); no NaN reaches them.
    #[inline(always)]
    fn lo(a: f32, b: f32) -> f32 {
        if a < b {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn hi(a: f32, b: f32) -> f32 {
        if a > b {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn unit(x: f32) -> f32 {
        hi(lo(x, 1.0), 0.0)
    }
    const TINY: f32 = 1.0e-12;
    for l in 0..LANES {
        // Closest points of A = [0, a1] and B = [b0, b1] (as the f64
        // routine, its special cases as selections).
        let e1 = [p[1][0][l], p[1][1][l], p[1][2][l]];
        let b0 = [p[2][0][l], p[2][1][l], p[2][2][l]];
        let e2 = [p[3][0][l] - b0[0], p[3][1][l] - b0[1], p[3][2][l] - b0[2]];
        let a = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
        let e = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
        let f = -(e2[0] * b0[0] + e2[1] * b0[1] + e2[2] * b0[2]);
        let cc = -(e1[0] * b0[0] + e1[1] * b0[1] + e1[2] * b0[2]);
        let b = e1[0] * e2[0] + e1[1] * e2[1] + e1[2] * e2[2];
        let denom = a * e - b * b;
        let ok = denom > 0.0;
        let s0 = if ok {
            unit((b * f - cc * e) / if ok { denom } else { 1.0 })
        } else {
            0.0
        };
        let ia = if a > TINY { 1.0 / hi(a, TINY) } else { 0.0 };
        let ie = if e > TINY { 1.0 / hi(e, TINY) } else { 0.0 };
        let t = unit((b * s0 + f) * ie);
        let s = unit((b * t - cc) * ia);
        let g = [
            b0[0] + e2[0] * t - e1[0] * s,
            b0[1] + e2[1] * t - e1[1] * s,
            b0[2] + e2[2] * t - e1[2] * s,
        ];
        let len = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        let live = len > 1.0e-6;
        let inv = 1.0 / hi(len, 1.0e-6);
        let n = [g[0] * inv, g[1] * inv, g[2] * inv];
        // Gaps along n where the closest points are taken (m = 0), when the
        // tubes' check starts (1) and at the end (2).
        let gap = |m: usize| {
            let d = |k: usize| {
                let q = 4 * m + k;
                n[0] * p[q][0][l] + n[1] * p[q][1][l] + n[2] * p[q][2][l]
            };
            lo(d(2), d(3)) - hi(d(0), d(1))
        };
        let gap_at = gap(0);
        let gaps = [gap_at, if FROM_AT { gap_at } else { gap(1) }, gap(2)];
        let rounding = rounding_bound(size[l]);
        apart[l] = live & (lo(gaps[1], gaps[2]) - slack[l] - rounding > reach[l]);
        // The plane a kept pair takes must separate the segments where it
        // is taken (the verification builds on that): else the f64 judge.
        touching[l] = !live | (gaps[0] - rounding < MIN_GAP as f32);
        out_n[0][l] = n[0];
        out_n[1][l] = n[1];
        out_n[2][l] = n[2];
        out_s[l] = s;
        out_u[l] = t;
    }
    std::array::from_fn(|l| {
        if touching[l] {
            Verdict::Touching
        } else if apart[l] {
            Verdict::Apart
        } else {
            Verdict::Near {
                n: Vec3::new(out_n[0][l], out_n[1][l], out_n[2][l]),
                s: out_s[l],
                u: out_u[l],
            }
        }
    })
}

impl CableSystem {
    /// Appends to `out` the pairs among candidates `0..count` (candidate
    /// `k` is `candidate(k)`) that the tubes' filter keeps, in order.
    pub(super) fn judge_all(
        &self,
        count: usize,
        candidate: impl Fn(usize) -> Candidate,
        out: &mut Vec<Pair>,
    ) {
        self.judge_batches::<false>(
            count,
            |k| {
                let c = candidate(k);
                ([c.at, c.from, c.end], c.slack, c.links, c.ab)
            },
            &candidate,
            |p| out.push(p),
        );
    }

    /// Appends to `out` the pairs among `candidates` of the step's (or a
    /// rebuild's) pairs that the tubes' filter keeps, in order, and their
    /// segments to `ends`: read from the segments' records
    /// (`filter_segs`), where the tubes start where the closest points are
    /// taken.
    pub(super) fn judge_built(
        &self,
        candidates: &[(u32, u32)],
        out: &mut Vec<Pair>,
        ends: &mut Vec<[u32; 2]>,
    ) {
        let segs = &self.filter_segs;
        self.judge_batches::<true>(
            candidates.len(),
            |k| {
                if let Some(&(_, ahead)) = candidates.get(k + PREFETCH_AHEAD) {
                    prefetch(&segs[ahead as usize]);
                }
                let (a, b) = candidates[k];
                let (fa, fb) = (&segs[a as usize], &segs[b as usize]);
                let at = [fa.at[0], fa.at[1], fb.at[0], fb.at[1]];
                let end = [fa.end[0], fa.end[1], fb.end[0], fb.end[1]];
                (
                    [at, at, end],
                    fa.slack + fb.slack,
                    [fa.link, fb.link],
                    [a, b],
                )
            },
            |k| self.built_candidate(candidates[k].0, candidates[k].1),
            |p| {
                ends.push([p.a, p.b]);
                out.push(p);
            },
        );
    }

    /// The filter over candidates `0..count`, [`LANES`] at a time:
    /// `points(k)` gives candidate `k`'s points (`at`, `from`, `end`), the
    /// sum of its slacks, its segments' links and ids; `candidate(k)` the
    /// whole candidate, for the few the f64 judge decides; `keep` takes
    /// each kept pair. `FROM_AT`: every candidate's `from` is its `at`.
    fn judge_batches<const FROM_AT: bool>(
        &self,
        count: usize,
        points: impl Fn(usize) -> ([[Vec3; 4]; 3], f32, [Link; 2], [u32; 2]),
        candidate: impl Fn(usize) -> Candidate,
        mut keep: impl FnMut(Pair),
    ) {
        let mut lanes = Lanes::new();
        let mut ids = [([Link::default(); 2], [0u32; 2]); LANES];
        for first in (0..count).step_by(LANES) {
            let live = (count - first).min(LANES);
            for l in 0..LANES {
                // Short batches repeat their first candidate.
                let k = first + if l < live { l } else { 0 };
                let (pts, slack, links, ab) = points(k);
                let reach = self.props[links[0].cable as usize].radius
                    + self.props[links[1].cable as usize].radius;
                lanes.set(l, &pts, slack, reach);
                ids[l] = (links, ab);
            }
            let verdicts = judge_lanes::<FROM_AT>(&lanes);
            for (l, v) in verdicts.into_iter().enumerate().take(live) {
                match v {
                    Verdict::Apart => {}
                    Verdict::Near { n, s, u } => {
                        let (links, ab) = ids[l];
                        keep(self.pair_record(ab, links, n, s, u))
                    }
                    Verdict::Touching => {
                        if let Some(p) = self.judge(&candidate(first + l)) {
                            keep(p);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cable::lcg;

    /// The smallest gap between the segments along any direction over the
    /// two configurations is at least their distance at each: a pair the
    /// vector filter drops must have a distance above the touching
    /// distance plus slack at both `from` and `end` (checked in f64 with
    /// the exact closest points), and its kept pairs' directions separate
    /// the segments where they were taken (those it cannot be sure of go
    /// to the f64 judge; few do).
    #[test]
    fn dropped_pairs_are_apart_and_kept_planes_separate() {
        use crate::physics::collision::ccd_thick::segment_segment_distance;
        let mut seed = 5;
        let link = Link {
            p: 0,
            cable: 0,
            rest: 0.1,
        };
        let (mut dropped, mut kept, mut touching) = (0, 0, 0);
        for round in 0..4000 {
            let base = Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * 1000.0;
            let mut q =
                || base + (Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) - 0.5) * 1.5;
            let at = [q(), q(), q(), q()];
            let end = [q(), q(), q(), q()];
            let c = Candidate {
                ab: [round, round + 1],
                links: [link, link],
                at,
                from: at,
                end,
                slack: 0.01 * lcg(&mut seed),
            };
            let mut lanes = Lanes::new();
            for l in 0..LANES {
                lanes.set(l, &[c.at, c.from, c.end], c.slack, 0.04);
            }
            let v = judge_lanes::<false>(&lanes);
            assert!(v.iter().all(|x| *x == v[0]), "lanes are independent");
            // Told that `from` is `at`, the filter says the same.
            assert_eq!(judge_lanes::<true>(&lanes), v, "round {round}");
            let dist = |x: [Vec3; 4]| {
                let d = x.map(|v| v.as_dvec3());
                segment_segment_distance(d[0], d[1], d[2], d[3])
            };
            match v[0] {
                Verdict::Apart => {
                    dropped += 1;
                    let bound = 0.04 + c.slack as f64;
                    assert!(dist(at) > bound && dist(end) > bound, "round {round}");
                }
                Verdict::Near { n, .. } => {
                    kept += 1;
                    let d = at.map(|v| v.as_dvec3());
                    let sep = super::super::verify::separation(n.as_dvec3(), &d);
                    assert!(sep >= MIN_GAP * 0.5, "round {round}: {sep} {}", dist(at));
                }
                Verdict::Touching => touching += 1,
            }
        }
        assert!(
            dropped > 500 && kept > 500,
            "{dropped} dropped, {kept} kept"
        );
        assert!(touching < 40, "{touching} left to the f64 judge");
    }
}
