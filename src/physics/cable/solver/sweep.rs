//! The segments' pass of a substep: XPBD distance constraints swept along
//! each chain, [`GROUP`] chains at a time as vectors.
//!
//! A sweep in chain order (forwards or backwards) carries a correction from
//! one end of a cable to the other, which an even/odd ordering does not (it
//! left a hanging cable 1.05% long). Each step of a sweep depends on the
//! last (a square root and a division apart), so one chain alone leaves the
//! processor waiting; chains of different cables are independent, so a
//! group lays [`GROUP`] lanes (runs of whole cables, whose particles are
//! contiguous) side by side: row `k` holds the `k`-th particle of every
//! lane. A pass copies the group's particles into its rows, sweeps the rows
//! (the particle between two links stays in registers), and copies them
//! back. Square roots and divisions are correctly rounded in vectors as in
//! scalars, so each lane's result is that of sweeping its cables one after
//! another, bit for bit, whatever the grouping.

use super::{Props, Seg, Vec3};

/// Lanes swept side by side (two SSE vectors, or one AVX vector).
pub(super) const GROUP: usize = 8;

type Row = [f32; GROUP];

/// Up to [`GROUP`] lanes laid out row by row; the rows past a shorter
/// lane's end, and the lanes of a group that has fewer, are padding
/// (massless particles, no links).
#[derive(Clone, Debug, Default)]
pub(super) struct SweepGroup {
    /// First particle and particle count of each lane.
    lanes: [(usize, usize); GROUP],
    x: Vec<Row>,
    y: Vec<Row>,
    z: Vec<Row>,
    w: Vec<Row>,
    /// Link `k` joins rows `k` and `k + 1`: 1 where it is a segment (0
    /// between two cables of a lane, and in padding).
    link: Vec<Row>,
    rest: Vec<Row>,
    compliance: Vec<Row>,
    lambda: Vec<Row>,
    /// Damping coefficient of each link (0: none), and the velocity rows
    /// of [`Self::damp`].
    damping: Vec<Row>,
    vx: Vec<Row>,
    vy: Vec<Row>,
    vz: Vec<Row>,
}

impl SweepGroup {
    /// A group over `lanes` (segment ranges of whole cables; at most
    /// [`GROUP`]). `part_segs[i][1]` is the segment that starts at
    /// particle `i` (`u32::MAX`: none).
    pub(super) fn new(
        lanes: &[(usize, usize)],
        segs: &[Seg],
        props: &[Props],
        w: &[f32],
        part_segs: &[[u32; 2]],
    ) -> Self {
        let mut g = Self::default();
        for (l, &(a, b)) in lanes.iter().enumerate().take(GROUP) {
            if b > a {
                let first = segs[a].p as usize;
                g.lanes[l] = (first, segs[b - 1].p as usize + 2 - first);
            }
        }
        let rows = g.lanes.iter().map(|l| l.1).max().unwrap_or(0);
        let zero = [0.0; GROUP];
        for v in [
            &mut g.x, &mut g.y, &mut g.z, &mut g.w, &mut g.vx, &mut g.vy, &mut g.vz,
        ] {
            v.resize(rows, zero);
        }
        let links = rows.saturating_sub(1);
        for v in [
            &mut g.link,
            &mut g.rest,
            &mut g.compliance,
            &mut g.lambda,
            &mut g.damping,
        ] {
            v.resize(links, zero);
        }
        for (l, &(first, count)) in g.lanes.iter().enumerate() {
            for k in 0..count {
                g.w[k][l] = w[first + k];
                let s = part_segs[first + k][1];
                if k + 1 < count && s != u32::MAX {
                    let seg = segs[s as usize];
                    g.link[k][l] = 1.0;
                    g.rest[k][l] = seg.rest;
                    g.compliance[k][l] = seg.compliance;
                    g.damping[k][l] = props[seg.cable as usize].damping.max(0.0);
                }
            }
        }
        g
    }

    /// Forgets the links' accumulated corrections (a new substep).
    pub(super) fn reset(&mut self) {
        self.lambda.iter_mut().for_each(|r| *r = [0.0; GROUP]);
    }

    /// One pass over the group's links, forwards or backwards along every
    /// lane. `x` holds particles `x0..`.
    pub(super) fn sweep(&mut self, x: &mut [Vec3], x0: usize, inv_h2: f32, reverse: bool) {
        let rows = self.x.len();
        if rows < 2 {
            return;
        }
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            if count == 0 {
                continue;
            }
            for (k, p) in x[first - x0..][..count].iter().enumerate() {
                (self.x[k][l], self.y[k][l], self.z[k][l]) = (p.x, p.y, p.z);
            }
        }
        if reverse {
            // Carry the upper particle of each link down the rows.
            let mut b = self.row(rows - 1);
            for k in (0..rows - 1).rev() {
                let mut a = self.row(k);
                self.link(k, &mut a, &mut b, inv_h2);
                self.set_row(k + 1, &b);
                b = a;
            }
            self.set_row(0, &b);
        } else {
            let mut a = self.row(0);
            for k in 0..rows - 1 {
                let mut b = self.row(k + 1);
                self.link(k, &mut a, &mut b, inv_h2);
                self.set_row(k, &a);
                a = b;
            }
            self.set_row(rows - 1, &a);
        }
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            if count == 0 {
                continue;
            }
            for (k, p) in x[first - x0..][..count].iter_mut().enumerate() {
                *p = Vec3::new(self.x[k][l], self.y[k][l], self.z[k][l]);
            }
        }
    }

    /// Implicit damping of the relative velocity along every link, in chain
    /// order (as the scalar formula: `Δv = rel·(1 − 1/(1 + c·h·(w_a +
    /// w_b)))`, shared by inverse mass). `x` and `v` hold particles `x0..`.
    pub(super) fn damp(&mut self, x: &[Vec3], v: &mut [Vec3], x0: usize, h: f32) {
        let rows = self.x.len();
        if rows < 2 || self.damping.iter().all(|r| r.iter().all(|&c| c == 0.0)) {
            return;
        }
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let (xs, vs) = (&x[first - x0..][..count], &v[first - x0..][..count]);
            for (k, (p, q)) in xs.iter().zip(vs).enumerate() {
                (self.x[k][l], self.y[k][l], self.z[k][l]) = (p.x, p.y, p.z);
                (self.vx[k][l], self.vy[k][l], self.vz[k][l]) = (q.x, q.y, q.z);
            }
        }
        let mut va = [self.vx[0], self.vy[0], self.vz[0]];
        for k in 0..rows - 1 {
            let mut vb = [self.vx[k + 1], self.vy[k + 1], self.vz[k + 1]];
            let (wa, wb, c) = (self.w[k], self.w[k + 1], self.damping[k]);
            for l in 0..GROUP {
                let d = [
                    self.x[k + 1][l] - self.x[k][l],
                    self.y[k + 1][l] - self.y[k][l],
                    self.z[k + 1][l] - self.z[k][l],
                ];
                // normalize_or_zero: times the reciprocal length.
                let rcp = 1.0 / (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                let ws = wa[l] + wb[l];
                let live = c[l] > 0.0 && ws != 0.0;
                let d = if rcp.is_finite() && rcp > 0.0 && live {
                    [d[0] * rcp, d[1] * rcp, d[2] * rcp]
                } else {
                    [0.0; 3]
                };
                let rel = (vb[0][l] - va[0][l]) * d[0]
                    + (vb[1][l] - va[1][l]) * d[1]
                    + (vb[2][l] - va[2][l]) * d[2];
                let dv = rel * (1.0 - 1.0 / (1.0 + c[l] * h * ws));
                let (da, db) = (dv * wa[l] / ws, dv * wb[l] / ws);
                let (da, db) = if live { (da, db) } else { (0.0, 0.0) };
                for axis in 0..3 {
                    va[axis][l] += d[axis] * da;
                    vb[axis][l] -= d[axis] * db;
                }
            }
            (self.vx[k], self.vy[k], self.vz[k]) = (va[0], va[1], va[2]);
            va = vb;
        }
        (self.vx[rows - 1], self.vy[rows - 1], self.vz[rows - 1]) = (va[0], va[1], va[2]);
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            if count == 0 {
                continue;
            }
            for (k, q) in v[first - x0..][..count].iter_mut().enumerate() {
                *q = Vec3::new(self.vx[k][l], self.vy[k][l], self.vz[k][l]);
            }
        }
    }

    #[inline(always)]
    fn row(&self, k: usize) -> [Row; 3] {
        [self.x[k], self.y[k], self.z[k]]
    }

    #[inline(always)]
    fn set_row(&mut self, k: usize, r: &[Row; 3]) {
        (self.x[k], self.y[k], self.z[k]) = (r[0], r[1], r[2]);
    }

    /// Link `k` of every lane, between particles `a` (row `k`) and `b`
    /// (row `k + 1`): the XPBD step `Δλ = (−C − α̃λ) / (w_a + w_b + α̃)`
    /// along the link's direction, as the scalar formula computes it. A
    /// missing link, two pinned ends or coincident particles move nothing.
    #[inline(always)]
    fn link(&mut self, k: usize, a: &mut [Row; 3], b: &mut [Row; 3], inv_h2: f32) {
        let (wa, wb) = (self.w[k], self.w[k + 1]);
        let (link, rest, compliance) = (self.link[k], self.rest[k], self.compliance[k]);
        let lambda = &mut self.lambda[k];
        for l in 0..GROUP {
            let (dx, dy, dz) = (b[0][l] - a[0][l], b[1][l] - a[1][l], b[2][l] - a[2][l]);
            let len = (dx * dx + dy * dy + dz * dz).sqrt();
            let ws = wa[l] + wb[l];
            let alpha = compliance[l] * inv_h2;
            let c = len - rest[l];
            let dl = (-c - alpha * lambda[l]) / (ws + alpha);
            let live = link[l] != 0.0 && ws != 0.0 && len >= 1.0e-9;
            let dl = if live { dl } else { 0.0 };
            let n = if live {
                [dx / len, dy / len, dz / len]
            } else {
                [0.0; 3]
            };
            lambda[l] += dl;
            let (da, db) = (dl * wa[l], dl * wb[l]);
            for (axis, n) in n.iter().enumerate() {
                a[axis][l] -= n * da;
                b[axis][l] += n * db;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scalar formula, one segment after another.
    fn scalar(segs: &[Seg], w: &[f32], x: &mut [Vec3], lambda: &mut [f32], inv_h2: f32, rev: bool) {
        let order: Vec<usize> = if rev {
            (0..segs.len()).rev().collect()
        } else {
            (0..segs.len()).collect()
        };
        for i in order {
            let s = segs[i];
            let p = s.p as usize;
            let ws = w[p] + w[p + 1];
            if ws == 0.0 {
                continue;
            }
            let d = x[p + 1] - x[p];
            let len = d.length();
            if len < 1.0e-9 {
                continue;
            }
            let n = d / len;
            let alpha = s.compliance * inv_h2;
            let dl = (-(len - s.rest) - alpha * lambda[i]) / (ws + alpha);
            lambda[i] += dl;
            x[p] -= n * (dl * w[p]);
            x[p + 1] += n * (dl * w[p + 1]);
        }
    }

    /// Implicit damping along each segment, one after another.
    fn scalar_damp(segs: &[Seg], c: f32, w: &[f32], x: &[Vec3], v: &mut [Vec3], h: f32) {
        for seg in segs {
            let p = seg.p as usize;
            let (wi, wj) = (w[p], w[p + 1]);
            let ws = wi + wj;
            if ws == 0.0 {
                continue;
            }
            let d = (x[p + 1] - x[p]).normalize_or_zero();
            let rel = (v[p + 1] - v[p]).dot(d);
            let dv = rel * (1.0 - 1.0 / (1.0 + c * h * ws));
            v[p] += d * (dv * wi / ws);
            v[p + 1] -= d * (dv * wj / ws);
        }
    }

    /// Eleven cables of different lengths (one with pinned ends, one with
    /// two coincident particles) in lanes of one to three cables: every
    /// particle ends bit for bit where the scalar sweep puts it, forwards
    /// and backwards, over several passes.
    #[test]
    fn a_group_sweeps_as_the_scalar_formula_does() {
        let mut segs = Vec::new();
        let (mut x, mut w) = (Vec::new(), Vec::new());
        let mut cable_segs = Vec::new();
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        for c in 0..11u32 {
            let n = 3 + (c as usize * 7) % 13;
            let first = x.len() as u32;
            let start = segs.len();
            for k in 0..=n {
                x.push(Vec3::new(
                    k as f32 * 0.1 + rnd() * 0.05,
                    c as f32 + rnd() * 0.05,
                    rnd() * 0.05,
                ));
                w.push(if c == 2 && (k == 0 || k == n) {
                    0.0
                } else {
                    1.0 + rnd()
                });
            }
            if c == 5 {
                x[first as usize + 2] = x[first as usize + 1];
            }
            for k in 0..n as u32 {
                segs.push(Seg {
                    p: first + k,
                    cable: c,
                    rest: 0.1,
                    compliance: 1.0e-6 * (1 + c) as f32,
                });
            }
            cable_segs.push((start, segs.len()));
        }
        let mut part_segs = vec![[u32::MAX; 2]; x.len()];
        for (k, s) in segs.iter().enumerate() {
            part_segs[s.p as usize][1] = k as u32;
            part_segs[s.p as usize + 1][0] = k as u32;
        }
        // Lanes of 1, 2 or 3 whole cables.
        let mut lanes = Vec::new();
        let mut c = 0;
        for take in [1, 2, 3, 1, 2, 2] {
            lanes.push((cable_segs[c].0, cable_segs[c + take - 1].1));
            c += take;
        }
        let props = vec![
            Props {
                radius: 0.01,
                restitution: 0.0,
                friction: 0.5,
                damping: 0.7,
            };
            11
        ];
        let inv_h2 = 1.0 / (0.002f32 * 0.002);
        let initial = x.clone();
        let (mut xs, mut lam) = (x.clone(), vec![0.0; segs.len()]);
        let mut groups: Vec<SweepGroup> = lanes
            .chunks(4)
            .map(|l| SweepGroup::new(l, &segs, &props, &w, &part_segs))
            .collect();
        for pass in 0..6 {
            let rev = pass % 2 == 1;
            scalar(&segs, &w, &mut xs, &mut lam, inv_h2, rev);
            for g in &mut groups {
                g.sweep(&mut x, 0, inv_h2, rev);
            }
            for (i, (a, b)) in x.iter().zip(&xs).enumerate() {
                assert_eq!(
                    a.to_array().map(f32::to_bits),
                    b.to_array().map(f32::to_bits),
                    "particle {i}, pass {pass}"
                );
            }
        }
        // Damping, from random velocities.
        let mut v: Vec<Vec3> = (0..x.len())
            .map(|_| Vec3::new(rnd(), rnd(), rnd()))
            .collect();
        let mut vs = v.clone();
        let mut groups: Vec<SweepGroup> = lanes
            .chunks(4)
            .map(|l| SweepGroup::new(l, &segs, &props, &w, &part_segs))
            .collect();
        for _ in 0..3 {
            scalar_damp(&segs, 0.7, &w, &x, &mut vs, 0.002);
            for g in &mut groups {
                g.damp(&x, &mut v, 0, 0.002);
            }
            for (i, (a, b)) in v.iter().zip(&vs).enumerate() {
                assert_eq!(
                    a.to_array().map(f32::to_bits),
                    b.to_array().map(f32::to_bits),
                    "velocity {i}"
                );
            }
        }
        // The passes did something, and the pinned ends stayed.
        assert!(lam.iter().any(|l| l.abs() > 1.0e-3));
        let pinned = segs[cable_segs[2].0].p as usize;
        assert_eq!(x[pinned], initial[pinned]);
        assert_ne!(x[pinned + 1], initial[pinned + 1]);
    }
}
