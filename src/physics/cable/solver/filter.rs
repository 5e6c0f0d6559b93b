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

/// The filter on `LANES` candidates, each with its touching distance
/// `reach` (the sum of the radii).
fn judge_lanes(c: &[Candidate; LANES], reach: &Row) -> [Verdict; LANES] {
    // Points relative to each candidate's first: at, from and end, four
    // each, `p[k][axis][lane]`; the largest coordinate of each lane.
    let mut p = [[[0.0f32; LANES]; 3]; 12];
    let (mut slack, mut size) = ([0.0f32; LANES], [0.0f32; LANES]);
    for l in 0..LANES {
        let o = c[l].at[0];
        for k in 0..4 {
            for (m, q) in [c[l].at[k], c[l].from[k], c[l].end[k]]
                .into_iter()
                .enumerate()
            {
                let d = q - o;
                p[4 * m + k][0][l] = d.x;
                p[4 * m + k][1][l] = d.y;
                p[4 * m + k][2][l] = d.z;
                size[l] = size[l].max(d.abs().max_element());
            }
        }
        slack[l] = c[l].slack;
    }
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
        let mut gaps = [0.0f32; 3];
        for m in 0..3 {
            let d = |k: usize| {
                let q = 4 * m + k;
                n[0] * p[q][0][l] + n[1] * p[q][1][l] + n[2] * p[q][2][l]
            };
            gaps[m] = lo(d(2), d(3)) - hi(d(0), d(1));
        }
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
    /// Appends to `out` the pairs among `candidates` that the tubes'
    /// filter keeps, in order.
    pub(super) fn judge_all(
        &self,
        candidates: impl Iterator<Item = Candidate>,
        out: &mut Vec<Pair>,
    ) {
        let mut batch: Vec<Candidate> = Vec::with_capacity(LANES);
        let flush = |batch: &mut Vec<Candidate>, out: &mut Vec<Pair>| {
            if batch.is_empty() {
                return;
            }
            let live = batch.len();
            while batch.len() < LANES {
                batch.push(batch[0]);
            }
            let lanes: &[Candidate; LANES] = batch[..].try_into().expect("a full batch");
            let reach: Row = std::array::from_fn(|l| {
                let [la, lb] = lanes[l].links;
                self.props[la.cable as usize].radius + self.props[lb.cable as usize].radius
            });
            let verdicts = judge_lanes(lanes, &reach);
            for (c, v) in lanes.iter().zip(verdicts).take(live) {
                match v {
                    Verdict::Apart => {}
                    Verdict::Near { n, s, u } => out.push(self.pair_record(c.ab, c.links, n, s, u)),
                    Verdict::Touching => out.extend(self.judge(c)),
                }
            }
            batch.clear();
        };
        for c in candidates {
            batch.push(c);
            if batch.len() == LANES {
                flush(&mut batch, out);
            }
        }
        flush(&mut batch, out);
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
            let reach = [0.04; LANES];
            let v = judge_lanes(&[c; LANES], &reach);
            assert!(v.iter().all(|x| *x == v[0]), "lanes are independent");
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
