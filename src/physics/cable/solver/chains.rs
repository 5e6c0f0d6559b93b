//! The segments' pass of a substep: the XPBD distance constraints of each
//! chain solved together, exactly for the linearised system, [`GROUP`]
//! chains at a time as vectors; and the segments' damping.
//!
//! A cable's segments form a chain, and the system of its constraints is
//! tridiagonal: one elimination down the chain and one substitution back up
//! solve it (see [`ChainGroup::solve_direct`]). Gauss–Seidel sweeps instead
//! carry a correction one link per pass; with 8 substeps × 4 passes they
//! left a hanging 50-segment cable 1.05% long at the bottom of its swing,
//! where one direct solve a pass keeps it within 0.05% with 4 × 4.
//!
//! Every step of the elimination depends on the last (a division apart),
//! so one chain alone leaves the processor waiting; chains of different
//! cables are independent, so a group lays [`GROUP`] lanes (runs of whole
//! cables, whose particles are contiguous) side by side: row `k` holds the
//! `k`-th particle of every lane, and each step works on a row as vectors.
//! A lane's arithmetic never mixes with another's, so a cable's result does
//! not depend on the grouping, bit for bit (but for the extra passes a
//! group takes when one of its cables touches a coupled body, `coupled.rs`,
//! or ends a substep off its length, `strained.rs`: its other lanes take
//! them too).
//!
//! A substep's first pass applies the substep's whole pull along the links'
//! directions where it began; for a taut chain, its moves are then solved
//! again with the tension's stiffness across the links
//! ([`ChainGroup::tension_implicit`]), one lane at a time.

// Lane loops index several rows at the same lane, as vector code does.
#![allow(clippy::needless_range_loop)]

use super::{Props, Seg, Vec3};

/// Lanes solved side by side (two SSE vectors, or one AVX vector).
pub(super) const GROUP: usize = 8;

/// The least compliance of a link, relative to its particles' inverse
/// masses (α̃ ≥ this × (w_a + w_b)). A chain pinned at both ends and pulled
/// straight is singular along its line (its interior can slide along it
/// without changing the total length): only α̃ keeps the elimination's last
/// pivot from zero, and an α̃ below f32's resolution of `w` made it exactly
/// zero (NaN with a 1 kg, 16-segment cable at stiffness 1e11). The floor
/// leaves rounding at 1% of that pivot. It caps the stiffness a substep
/// can express: for a 40 g particle at 240 Hz, near 1e8 N/m, where the
/// static stretch is already far below anything a test can see; the
/// default 1e6 N/m is a hundredfold inside it.
const MIN_COMPLIANCE: f32 = 1.0e-5;

/// A link's `α̃`, its compliance over `h²` (`inv_h2`), kept at least
/// [`MIN_COMPLIANCE`] times its particles' inverse masses summed (`ws`):
/// as the solve takes it and as its residual is read.
#[inline]
fn link_alpha(compliance: f32, ws: f32, inv_h2: f32) -> f32 {
    (compliance * inv_h2).max(MIN_COMPLIANCE * ws)
}

/// [`ChainGroup::tension_implicit`] works on a lane whose particles' `w·Σc`
/// (inverse mass times its links' stiffness across them) reaches this:
/// about `ω²h²/2` of its zigzag, which grows past `2/3`.
const TENSION_IMPLICIT: f32 = 0.05;

type Row = [f32; GROUP];

/// The inverse of a 3 × 3 matrix (by cofactors; the caller's are
/// symmetric and at least the identity, see
/// [`ChainGroup::tension_implicit`]).
fn invert3(m: [[f32; 3]; 3]) -> [[f32; 3]; 3] {
    let c =
        |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let cof = [
        [c(1, 2, 1, 2), -c(1, 2, 0, 2), c(1, 2, 0, 1)],
        [-c(0, 2, 1, 2), c(0, 2, 0, 2), -c(0, 2, 0, 1)],
        [c(0, 1, 1, 2), -c(0, 1, 0, 2), c(0, 1, 0, 1)],
    ];
    let det = m[0][0] * cof[0][0] + m[0][1] * cof[0][1] + m[0][2] * cof[0][2];
    let inv = 1.0 / det;
    // The adjugate is the cofactors' transpose.
    std::array::from_fn(|a| std::array::from_fn(|b| cof[b][a] * inv))
}

/// Up to [`GROUP`] lanes laid out row by row; the rows past a shorter
/// lane's end, and the lanes of a group that has fewer, are padding
/// (massless particles, no links). A group holds what lasts (masses,
/// links, λ); positions and the solve's intermediate rows live in a
/// [`Scratch`] shared by the groups a thread solves, so that a pass streams
/// only those through memory and the rest stays in cache.
#[derive(Clone, Debug, Default)]
pub(super) struct ChainGroup {
    /// First particle and particle count of each lane.
    lanes: [(usize, usize); GROUP],
    /// Inverse masses, one row per particle of the longest lane.
    w: Vec<Row>,
    /// Link `k` joins rows `k` and `k + 1`: 1 where it is a segment (0
    /// between two cables of a lane, and in padding).
    link: Vec<Row>,
    rest: Vec<Row>,
    compliance: Vec<Row>,
    lambda: Vec<Row>,
    /// Damping coefficient of each link (0: none), and whether any is not.
    damping: Vec<Row>,
    damped: bool,
    /// λ was just reset: the next solve is the substep's first pass.
    lambda_fresh: bool,
}

/// The rows a group's solve and damping work on: positions and velocities,
/// and per link the direction and the elimination's factor and
/// right-hand side.
#[derive(Clone, Debug, Default)]
pub(super) struct Scratch {
    x: Vec<Row>,
    y: Vec<Row>,
    z: Vec<Row>,
    vx: Vec<Row>,
    vy: Vec<Row>,
    vz: Vec<Row>,
    nx: Vec<Row>,
    ny: Vec<Row>,
    nz: Vec<Row>,
    off: Vec<Row>,
    rhs: Vec<Row>,
    /// The positions the pass began with, and each link's length then.
    x0: Vec<Row>,
    y0: Vec<Row>,
    z0: Vec<Row>,
    len: Vec<Row>,
    /// One lane's elimination of [`ChainGroup::tension_implicit`]: per
    /// row, the factor (3 × 3) and the right-hand side.
    block: Vec<([[f32; 3]; 3], [f32; 3])>,
}

impl Scratch {
    /// At least `rows` rows in every array.
    fn fit(&mut self, rows: usize) -> &mut Self {
        for v in [
            &mut self.x,
            &mut self.y,
            &mut self.z,
            &mut self.vx,
            &mut self.vy,
            &mut self.vz,
            &mut self.nx,
            &mut self.ny,
            &mut self.nz,
            &mut self.off,
            &mut self.rhs,
            &mut self.x0,
            &mut self.y0,
            &mut self.z0,
            &mut self.len,
        ] {
            if v.len() < rows {
                v.resize(rows, [0.0; GROUP]);
            }
        }
        self
    }
}

impl ChainGroup {
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
        g.w.resize(rows, zero);
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
                    g.damped |= g.damping[k][l] > 0.0;
                }
            }
        }
        g
    }

    /// The group with the particles `held` says weighing nothing: its
    /// solves leave them where they are, as pinned ones.
    pub(super) fn holding(mut self, held: impl Fn(usize) -> bool) -> Self {
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            for k in 0..count {
                if held(first + k) {
                    self.w[k][l] = 0.0;
                }
            }
        }
        self
    }

    /// `passes` solves of the lanes' links from λ = 0, as a substep's
    /// later passes solve them (without the first pass's tension across
    /// taut links, [`Self::tension_implicit`]): the lanes' free particles
    /// pulled back onto their links (to what their compliance allows).
    /// `x` holds particles `x0..`.
    pub(super) fn pull_onto_links(
        &mut self,
        sc: &mut Scratch,
        x: &mut [Vec3],
        x0: usize,
        inv_h2: f32,
        passes: u32,
    ) {
        self.reset();
        self.lambda_fresh = false;
        for _ in 0..passes {
            self.solve_direct(sc, x, x0, inv_h2);
        }
    }

    /// Each lane's first particle and particle count (none: count 0).
    #[cfg(test)]
    pub(super) fn lanes(&self) -> &[(usize, usize)] {
        &self.lanes
    }

    /// Whether particle `i` is in one of the group's lanes.
    pub(super) fn holds(&self, i: usize) -> bool {
        self.lane_ranges().any(|r| r.contains(&i))
    }

    /// The particles of each lane (none: an empty range).
    pub(super) fn lane_ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.lanes
            .iter()
            .map(|&(first, count)| first..first + count)
    }

    /// Forgets the links' accumulated corrections λ (a new substep).
    pub(super) fn reset(&mut self) {
        self.lambda_fresh = true;
        self.lambda.iter_mut().for_each(|r| *r = [0.0; GROUP]);
    }

    /// How far the group's links are from what the last solve left them,
    /// its worst `|C + α̃λ|` (the XPBD residual: the length a link is off
    /// beyond what its compliance and λ explain) over its rest length, for
    /// `x` (particles `x0..`) as they are now. Zero right after a solve (but
    /// for its linearisation); what a pass's later moves (contacts) undid
    /// of it.
    pub(super) fn worst_residual(&self, x: &[Vec3], x0: usize, inv_h2: f32) -> f32 {
        let mut worst = 0.0f32;
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            let p = &x[first.saturating_sub(x0)..][..count];
            for k in 0..count.saturating_sub(1) {
                let (wa, wb) = (self.w[k][l], self.w[k + 1][l]);
                let ws = wa + wb;
                let rest = self.rest[k][l];
                if self.link[k][l] == 0.0 || ws == 0.0 || rest <= 0.0 {
                    continue;
                }
                let len = (p[k + 1] - p[k]).length();
                if len < 1.0e-9 {
                    // (No direction: the solve moves nothing there.)
                    continue;
                }
                let alpha = link_alpha(self.compliance[k][l], ws, inv_h2);
                worst = worst.max((len - rest + alpha * self.lambda[k][l]).abs() / rest);
            }
        }
        worst
    }

    /// One Newton step on every lane's chain at once: the XPBD system of
    /// all its links, `(J W Jᵀ + α̃) Δλ = −C − α̃λ`, is tridiagonal along a
    /// chain (link `k` shares particle `k + 1` with link `k + 1`: coupling
    /// `−w_{k+1} n_k·n_{k+1}`), so it is solved exactly by elimination down
    /// the chain and substitution back up, and every particle moves by
    /// `w (n_{k−1}Δλ_{k−1} − n_k Δλ_k)`. The matrix is (weakly) diagonally
    /// dominant (its diagonal is `w_k + w_{k+1} + α̃`), so the elimination
    /// needs no pivoting: by induction each pivot is at least `w_{k+1} + α̃`,
    /// which leaves only a link whose far particle is pinned to `α̃` alone
    /// (kept off zero by [`MIN_COMPLIANCE`]). A missing link, two pinned ends or coincident particles
    /// make a row of their own that moves nothing. `x` holds particles
    /// `x0..`.
    pub(super) fn solve_direct(
        &mut self,
        sc: &mut Scratch,
        x: &mut [Vec3],
        x0: usize,
        inv_h2: f32,
    ) {
        let rows = self.w.len();
        if rows < 2 {
            return;
        }
        let sc = sc.fit(rows);
        self.gather([&mut sc.x, &mut sc.y, &mut sc.z], x, x0);
        if self.lambda_fresh {
            sc.x0[..rows].copy_from_slice(&sc.x[..rows]);
            sc.y0[..rows].copy_from_slice(&sc.y[..rows]);
            sc.z0[..rows].copy_from_slice(&sc.z[..rows]);
        }
        let links = rows - 1;
        // Down the chain: link k's direction and row, then the elimination
        // of row k − 1 (its coupling to row k needs link k's direction).
        // `off` keeps the factors c'ⱼ and `rhs` the eliminated d'ⱼ.
        let zero = [0.0; GROUP];
        let (mut n_prev, mut diag_prev, mut rhs_prev) = ([zero; 3], zero, zero);
        let (mut c_prev, mut d_prev, mut o_prev) = (zero, zero, zero);
        for k in 0..links {
            let (xa, ya, za) = (sc.x[k], sc.y[k], sc.z[k]);
            let (xb, yb, zb) = (sc.x[k + 1], sc.y[k + 1], sc.z[k + 1]);
            let (wa, wb) = (self.w[k], self.w[k + 1]);
            let (link, rest) = (self.link[k], self.rest[k]);
            let (compliance, lambda) = (self.compliance[k], self.lambda[k]);
            let (mut n, mut diag, mut rhs) = ([zero; 3], zero, zero);
            let lens = &mut sc.len[k];
            for l in 0..GROUP {
                let d = [xb[l] - xa[l], yb[l] - ya[l], zb[l] - za[l]];
                let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                lens[l] = len;
                let ws = wa[l] + wb[l];
                let live = (link[l] != 0.0) & (ws != 0.0) & (len >= 1.0e-9);
                let alpha = link_alpha(compliance[l], ws, inv_h2);
                let inv = 1.0 / len;
                for a in 0..3 {
                    n[a][l] = if live { d[a] * inv } else { 0.0 };
                }
                diag[l] = if live { ws + alpha } else { 1.0 };
                rhs[l] = if live {
                    -(len - rest[l]) - alpha * lambda[l]
                } else {
                    0.0
                };
            }
            (sc.nx[k], sc.ny[k], sc.nz[k]) = (n[0], n[1], n[2]);
            if k > 0 {
                for l in 0..GROUP {
                    let cos =
                        n_prev[0][l] * n[0][l] + n_prev[1][l] * n[1][l] + n_prev[2][l] * n[2][l];
                    let o = -wa[l] * cos;
                    let m = diag_prev[l] - o_prev[l] * c_prev[l];
                    d_prev[l] = (rhs_prev[l] - o_prev[l] * d_prev[l]) / m;
                    c_prev[l] = o / m;
                    o_prev[l] = o;
                }
                (sc.off[k - 1], sc.rhs[k - 1]) = (c_prev, d_prev);
            }
            (n_prev, diag_prev, rhs_prev) = (n, diag, rhs);
        }
        for l in 0..GROUP {
            let m = diag_prev[l] - o_prev[l] * c_prev[l];
            d_prev[l] = (rhs_prev[l] - o_prev[l] * d_prev[l]) / m;
        }
        (sc.off[links - 1], sc.rhs[links - 1]) = (zero, d_prev);
        // Back up the chain: Δλⱼ = d'ⱼ − c'ⱼ Δλⱼ₊₁, and particle j + 1
        // moves by w (nⱼ Δλⱼ − nⱼ₊₁ Δλⱼ₊₁) once both are known.
        let (mut dl_next, mut n_next) = (zero, [zero; 3]);
        for j in (0..links).rev() {
            let (c, d) = (sc.off[j], sc.rhs[j]);
            let n = [sc.nx[j], sc.ny[j], sc.nz[j]];
            let w = self.w[j + 1];
            let mut dl = zero;
            let mut p = [sc.x[j + 1], sc.y[j + 1], sc.z[j + 1]];
            let lambda = &mut self.lambda[j];
            for l in 0..GROUP {
                dl[l] = d[l] - c[l] * dl_next[l];
                lambda[l] += dl[l];
                for a in 0..3 {
                    p[a][l] += w[l] * (n[a][l] * dl[l] - n_next[a][l] * dl_next[l]);
                }
            }
            (sc.x[j + 1], sc.y[j + 1], sc.z[j + 1]) = (p[0], p[1], p[2]);
            (dl_next, n_next) = (dl, n);
        }
        let w = self.w[0];
        let mut p = [sc.x[0], sc.y[0], sc.z[0]];
        for l in 0..GROUP {
            for a in 0..3 {
                // As in the loop, with no link below (the same rounding).
                p[a][l] += w[l] * (0.0 - n_next[a][l] * dl_next[l]);
            }
        }
        (sc.x[0], sc.y[0], sc.z[0]) = (p[0], p[1], p[2]);
        if self.lambda_fresh {
            // Each link's stiffness across it (`off`: free once the solve is
            // done), and each lane's largest `w·Σc`.
            let mut most = zero;
            let mut c_prev = zero;
            for k in 0..rows {
                let c: Row = if k < links {
                    let (lambda, len) = (self.lambda[k], sc.len[k]);
                    std::array::from_fn(|l| {
                        if len[l] > 1.0e-9 {
                            (-lambda[l]).max(0.0) / len[l]
                        } else {
                            0.0
                        }
                    })
                } else {
                    zero
                };
                let w = self.w[k];
                for l in 0..GROUP {
                    most[l] = most[l].max(w[l] * (c_prev[l] + c[l]));
                }
                sc.off[k] = c;
                c_prev = c;
            }
            for l in 0..GROUP {
                if most[l] >= TENSION_IMPLICIT {
                    self.tension_implicit(sc, rows, l);
                }
            }
        }
        self.scatter([&sc.x, &sc.y, &sc.z], x, x0);
        self.lambda_fresh = false;
    }

    /// Lane `l`'s moves this pass, `Δx` (rows `x − x0`), made implicit in
    /// its links' tension: replaced by `δ`, `(I + W·K) δ = Δx`, `K` the
    /// chain's stiffness across its links from their tension: for link
    /// `k`, `c·(I − n nᵀ)` between its particles, `c = −λ/len` (the
    /// tension so far over the length; `λ < 0` pulls; the second
    /// derivative of a link's length is its perpendicular projection over
    /// its length). The direct solve applies the substep's whole pull
    /// along the links' directions where the pass began: across a taut
    /// chain, that straightens a particle standing out of line by `ω²h²`
    /// times its offset (`ω` the chain's highest transverse frequency,
    /// which rises with the tension), an explicit step, and past
    /// `ωh ≈ 1.15` the zigzag of neighbouring particles grew: a rope
    /// pinned at both ends and 0.1% taut zigzagged at 0.1 m/s for good
    /// (1% taut, at 1–3 m/s), and never slept. Solved with `K`, as
    /// backward Euler does, a zigzag shrinks by `1/(1 + ω²h²)` instead.
    /// `K` has no part along a link, so along a straight chain the links'
    /// lengths are solved as before (at a bend, a neighbour's stiffness
    /// reaches along a link and holds back part of the first pass's length
    /// correction there, which the later passes finish; λ keeps the pass's
    /// whole correction). A translation is left as it was, and momentum is
    /// kept (pinned particles take what they are given). Block tridiagonal
    /// (3 × 3): one elimination and one substitution; each pivot is `w`
    /// times a Schur complement of the positive definite `W⁻¹ + K`, at
    /// least the identity, so none is singular. The gate is per lane: a
    /// lane's other cables are treated with its taut one.
    ///
    /// Called for a lane where `w·Σc` (`c` in `off`) reaches
    /// [`TENSION_IMPLICIT`] somewhere (slack or lightly loaded chains: the
    /// step is a small fraction of the offset, and stable), on the
    /// substep's first pass, which applies its pull (the later passes
    /// correct what is left, along the new directions).
    fn tension_implicit(&self, sc: &mut Scratch, rows: usize, l: usize) {
        let count = self.lanes[l].1.min(rows);
        if count < 3 {
            return;
        }
        // Each link's stiffness across it (`c`, in `off`) and direction.
        let link = |k: usize| -> (f32, [f32; 3]) {
            (sc.off[k][l], [sc.nx[k][l], sc.ny[k][l], sc.nz[k][l]])
        };
        // `c (I − n nᵀ)`.
        let across = |(c, n): (f32, [f32; 3])| -> [[f32; 3]; 3] {
            std::array::from_fn(|a| {
                std::array::from_fn(|b| c * ((a == b) as u32 as f32 - n[a] * n[b]))
            })
        };
        let block = &mut sc.block;
        block.clear();
        let (mut prev_k, mut prev_c, mut prev_d) =
            ([[0.0f32; 3]; 3], [[0.0f32; 3]; 3], [0.0f32; 3]);
        for i in 0..count {
            let w = self.w[i][l];
            let kb = if i > 0 { prev_k } else { [[0.0; 3]; 3] };
            let ka = if i + 1 < count {
                across(link(i))
            } else {
                [[0.0; 3]; 3]
            };
            let delta = [
                sc.x[i][l] - sc.x0[i][l],
                sc.y[i][l] - sc.y0[i][l],
                sc.z[i][l] - sc.z0[i][l],
            ];
            // M = I + w (Kb + Ka) − A C'ᵢ₋₁ with A = −w Kb; rhs − A d'ᵢ₋₁.
            let mut m = [[0.0f32; 3]; 3];
            let mut r = delta;
            for a in 0..3 {
                for b in 0..3 {
                    let mut ac = 0.0;
                    for q in 0..3 {
                        ac += kb[a][q] * prev_c[q][b];
                    }
                    m[a][b] = (a == b) as u32 as f32 + w * (kb[a][b] + ka[a][b]) + w * ac;
                }
                for q in 0..3 {
                    r[a] += w * kb[a][q] * prev_d[q];
                }
            }
            let inv = invert3(m);
            // C' = M⁻¹ (−w Ka), d' = M⁻¹ r.
            let c: [[f32; 3]; 3] = std::array::from_fn(|a| {
                std::array::from_fn(|b| (0..3).map(|q| -inv[a][q] * w * ka[q][b]).sum())
            });
            let d: [f32; 3] = std::array::from_fn(|a| (0..3).map(|q| inv[a][q] * r[q]).sum());
            block.push((c, d));
            (prev_k, prev_c, prev_d) = (ka, c, d);
        }
        let mut next = [0.0f32; 3];
        for i in (0..count).rev() {
            let (c, d) = block[i];
            let delta: [f32; 3] =
                std::array::from_fn(|a| d[a] - (0..3).map(|q| c[a][q] * next[q]).sum::<f32>());
            sc.x[i][l] = sc.x0[i][l] + delta[0];
            sc.y[i][l] = sc.y0[i][l] + delta[1];
            sc.z[i][l] = sc.z0[i][l] + delta[2];
            next = delta;
        }
    }

    /// Each lane's particles of `src` (which holds particles `x0..`) into
    /// the rows `dst` (x, y and z).
    fn gather(&self, dst: [&mut [Row]; 3], src: &[Vec3], x0: usize) {
        let [dx, dy, dz] = dst;
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            if count > 0 {
                for (k, p) in src[first - x0..][..count].iter().enumerate() {
                    (dx[k][l], dy[k][l], dz[k][l]) = (p.x, p.y, p.z);
                }
            }
            // Padding: the rows past the lane's end move nothing (w = 0,
            // no links), but hold finite numbers.
            for k in count..self.w.len() {
                (dx[k][l], dy[k][l], dz[k][l]) = (0.0, 0.0, 0.0);
            }
        }
    }

    /// The rows `src` back into each lane's particles of `dst`.
    fn scatter(&self, src: [&[Row]; 3], dst: &mut [Vec3], x0: usize) {
        let [sx, sy, sz] = src;
        for (l, &(first, count)) in self.lanes.iter().enumerate() {
            if count == 0 {
                continue;
            }
            for (k, p) in dst[first - x0..][..count].iter_mut().enumerate() {
                *p = Vec3::new(sx[k][l], sy[k][l], sz[k][l]);
            }
        }
    }

    /// Implicit damping of the relative velocity along every link, in chain
    /// order (as the scalar formula: `Δv = rel·(1 − 1/(1 + c·h·(w_a +
    /// w_b)))`, shared by inverse mass). `x` and `v` hold particles `x0..`.
    pub(super) fn damp(&mut self, sc: &mut Scratch, x: &[Vec3], v: &mut [Vec3], x0: usize, h: f32) {
        let rows = self.w.len();
        if rows < 2 || !self.damped {
            return;
        }
        let sc = sc.fit(rows);
        self.gather([&mut sc.x, &mut sc.y, &mut sc.z], x, x0);
        self.gather([&mut sc.vx, &mut sc.vy, &mut sc.vz], v, x0);
        let mut va = [sc.vx[0], sc.vy[0], sc.vz[0]];
        for k in 0..rows - 1 {
            let mut vb = [sc.vx[k + 1], sc.vy[k + 1], sc.vz[k + 1]];
            let (wa, wb, c) = (self.w[k], self.w[k + 1], self.damping[k]);
            for l in 0..GROUP {
                let d = [
                    sc.x[k + 1][l] - sc.x[k][l],
                    sc.y[k + 1][l] - sc.y[k][l],
                    sc.z[k + 1][l] - sc.z[k][l],
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
            (sc.vx[k], sc.vy[k], sc.vz[k]) = (va[0], va[1], va[2]);
            va = vb;
        }
        (sc.vx[rows - 1], sc.vy[rows - 1], sc.vz[rows - 1]) = (va[0], va[1], va[2]);
        self.scatter([&sc.vx, &sc.vy, &sc.vz], v, x0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    struct Chains {
        segs: Vec<Seg>,
        x: Vec<Vec3>,
        w: Vec<f32>,
        part_segs: Vec<[u32; 2]>,
        /// Each cable's segment range.
        cables: Vec<(usize, usize)>,
        props: Vec<Props>,
    }

    /// Eleven cables of 3 to 15 segments of rest length 0.1, bent and
    /// stretched or squeezed by up to 5% per segment; cable 2 has both ends
    /// pinned and cable 5 two coincident particles.
    fn chains(compliance: f32) -> Chains {
        let (mut segs, mut x, mut w, mut cables) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut seed = 7u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        for c in 0..11u32 {
            let n = 3 + (c as usize * 7) % 13;
            let first = x.len() as u32;
            let start = segs.len();
            let mut p = Vec3::new(0.0, c as f32, 0.0);
            for k in 0..=n {
                if k > 0 {
                    let dir = Vec3::new(1.0, rnd() * 0.6, rnd() * 0.6).normalize();
                    p += dir * 0.1 * (1.0 + rnd() * 0.1);
                }
                x.push(p);
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
                    compliance,
                });
            }
            cables.push((start, segs.len()));
        }
        let mut part_segs = vec![[u32::MAX; 2]; x.len()];
        for (k, s) in segs.iter().enumerate() {
            part_segs[s.p as usize][1] = k as u32;
            part_segs[s.p as usize + 1][0] = k as u32;
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
        Chains {
            segs,
            x,
            w,
            part_segs,
            cables,
            props,
        }
    }

    /// Lanes of 1, 2 or 3 whole cables, in groups of up to four lanes.
    fn groups(ch: &Chains) -> Vec<ChainGroup> {
        let mut lanes = Vec::new();
        let mut c = 0;
        for take in [1, 2, 3, 1, 2, 2] {
            lanes.push((ch.cables[c].0, ch.cables[c + take - 1].1));
            c += take;
        }
        lanes
            .chunks(4)
            .map(|l| ChainGroup::new(l, &ch.segs, &ch.props, &ch.w, &ch.part_segs))
            .collect()
    }

    fn worst_error(ch: &Chains, x: &[Vec3]) -> f32 {
        // Cable 5's coincident particles are there for robustness only.
        ch.segs
            .iter()
            .filter(|s| s.cable != 5)
            .map(|s| {
                let len = (x[s.p as usize + 1] - x[s.p as usize]).length();
                if len < 1.0e-6 {
                    0.0
                } else {
                    (len - s.rest).abs() / s.rest
                }
            })
            .fold(0.0, f32::max)
    }

    /// The direct solve converges as Newton's method does: 5% of stretch
    /// and bends of up to 30° lose over 80% of the worst error in one solve
    /// (about 90% here) and are below 2e-5 in three. Pinned ends stay, momentum is kept, and each
    /// cable's result is the same, bit for bit, whatever lane and group it
    /// is solved in.
    #[test]
    fn direct_solves_restore_every_chain_as_newton_steps_do() {
        let ch = chains(1.0e-9);
        let inv_h2 = 1.0 / (0.004f32 * 0.004);
        let mut x = ch.x.clone();
        let before = worst_error(&ch, &x);
        assert!(before > 0.03, "the chains start stretched: {before}");
        let mut gs = groups(&ch);
        let mut sc = Scratch::default();
        for g in &mut gs {
            g.solve_direct(&mut sc, &mut x, 0, inv_h2);
        }
        let one = worst_error(&ch, &x);
        assert!(one < 0.2 * before, "one solve: {before} -> {one}");
        for _ in 0..2 {
            for g in &mut gs {
                g.solve_direct(&mut sc, &mut x, 0, inv_h2);
            }
        }
        let three = worst_error(&ch, &x);
        assert!(three < 2.0e-5, "three solves: {three}");
        assert!(x.iter().all(|p| p.is_finite()));
        // Pinned ends.
        let (a, b) = ch.cables[2];
        let (p0, p1) = (ch.segs[a].p as usize, ch.segs[b - 1].p as usize + 1);
        assert_eq!((x[p0], x[p1]), (ch.x[p0], ch.x[p1]));
        assert_ne!(x[p0 + 1], ch.x[p0 + 1]);
        // Momentum of each unpinned cable (internal forces only).
        for (c, &(a, b)) in ch.cables.iter().enumerate().filter(|(c, _)| *c != 2) {
            let parts = ch.segs[a].p as usize..ch.segs[b - 1].p as usize + 2;
            let m = |x: &[Vec3]| -> Vec3 { parts.clone().map(|i| x[i] / ch.w[i]).sum() };
            let (m0, m1) = (m(&ch.x), m(&x));
            assert!((m1 - m0).length() < 1.0e-4, "cable {c}: {m0} -> {m1}");
        }
        // Alone, in a group of one lane, each cable ends the same.
        for &(a, b) in &ch.cables {
            let mut alone = ch.x.clone();
            let mut g = ChainGroup::new(&[(a, b)], &ch.segs, &ch.props, &ch.w, &ch.part_segs);
            for _ in 0..3 {
                g.solve_direct(&mut sc, &mut alone, 0, inv_h2);
            }
            for i in ch.segs[a].p as usize..ch.segs[b - 1].p as usize + 2 {
                assert_eq!(
                    alone[i].to_array().map(f32::to_bits),
                    x[i].to_array().map(f32::to_bits),
                    "particle {i}"
                );
            }
        }
    }

    /// [`ChainGroup::worst_residual`] reads what the solves leave: before
    /// any, each link's stretch (λ is 0); after three, nothing (but the
    /// linearisation's rounding), also for compliant links that stay
    /// stretched under their λ, which a stretch alone would read as off.
    #[test]
    fn the_residual_is_what_the_solves_leave_not_the_stretch() {
        let inv_h2 = 1.0 / (0.004f32 * 0.004);
        for (compliance, stays) in [(1.0e-9, false), (2.0e-5, true)] {
            let ch = chains(compliance);
            let mut x = ch.x.clone();
            let mut gs = groups(&ch);
            let before: f32 = gs
                .iter()
                .map(|g| g.worst_residual(&x, 0, inv_h2))
                .fold(0.0, f32::max);
            // (Cable 5's coincident particles included: their link moves
            // nothing and is left out, the next one is twice as long.)
            let stretch = ch
                .segs
                .iter()
                .map(|s| (x[s.p as usize + 1] - x[s.p as usize]).length())
                .filter(|&len| len >= 1.0e-9)
                .map(|len| (len - 0.1).abs() / 0.1)
                .fold(0.0, f32::max);
            assert!(
                (before - stretch).abs() < 1.0e-6,
                "{before} against {stretch}"
            );
            let mut sc = Scratch::default();
            for _ in 0..3 {
                for g in &mut gs {
                    g.solve_direct(&mut sc, &mut x, 0, inv_h2);
                }
            }
            let after: f32 = gs
                .iter()
                .map(|g| g.worst_residual(&x, 0, inv_h2))
                .fold(0.0, f32::max);
            assert!(
                after < 1.0e-4,
                "compliance {compliance}: {after} after three solves"
            );
            // A compliant chain ends off its length where the residual
            // does not (α̃ = 1.25, near the particles' w: a link gives
            // back only part of its stretch in a substep).
            let left = worst_error(&ch, &x);
            assert_eq!(
                left > 0.01,
                stays,
                "compliance {compliance}: stretch {left}"
            );
        }
    }

    /// A chain of 20 links pinned at both ends and pulled 0.1%, 0.3% and 1%
    /// longer than its rest length (25 g particles, 10⁶ N/m, substeps of
    /// 1/240 s, four passes), started with its particles 0.5 mm out of
    /// line alternately: the zigzag dies out within 2 s. Solved with the
    /// tension's pull applied explicitly across the links, it grew into a
    /// steady zigzag at 0.10, 0.24 and 1–3 m/s.
    #[test]
    fn a_taut_chain_does_not_zigzag() {
        let n = 20usize;
        let h = 1.0 / 240.0;
        let segs: Vec<Seg> = (0..n as u32)
            .map(|k| Seg {
                p: k,
                cable: 0,
                rest: 0.1,
                compliance: 1.0e-6,
            })
            .collect();
        let mut part_segs = vec![[u32::MAX; 2]; n + 1];
        for (k, s) in segs.iter().enumerate() {
            part_segs[s.p as usize][1] = k as u32;
            part_segs[s.p as usize + 1][0] = k as u32;
        }
        let props = [Props {
            radius: 0.01,
            restitution: 0.0,
            friction: 0.5,
            damping: 0.0,
        }];
        let w: Vec<f32> = (0..=n)
            .map(|i| if i == 0 || i == n { 0.0 } else { 40.0 })
            .collect();
        for stretch in [0.001f32, 0.003, 0.01] {
            let span = 2.0 * (1.0 + stretch);
            let mut x: Vec<Vec3> = (0..=n)
                .map(|i| {
                    let out = if i == 0 || i == n {
                        0.0
                    } else if i % 2 == 1 {
                        5.0e-4
                    } else {
                        -5.0e-4
                    };
                    Vec3::new(span * (i as f32 / n as f32 - 0.5), out, 0.0)
                })
                .collect();
            let mut g = ChainGroup::new(&[(0, n)], &segs, &props, &w, &part_segs);
            let mut sc = Scratch::default();
            let mut v = vec![Vec3::ZERO; n + 1];
            for _ in 0..480 {
                let prev = x.clone();
                for i in 1..n {
                    x[i] += v[i] * h;
                }
                g.reset();
                for _ in 0..4 {
                    g.solve_direct(&mut sc, &mut x, 0, 1.0 / (h * h));
                }
                for i in 0..=n {
                    v[i] = (x[i] - prev[i]) / h;
                }
            }
            let rms = (v.iter().map(|v| v.length_squared()).sum::<f32>() / n as f32).sqrt();
            assert!(rms < 1.0e-3, "{stretch}: still at {rms} m/s");
            assert!(
                x.iter().all(|p| p.y.abs() < 1.0e-4),
                "{stretch}: not straight"
            );
        }
        // Free (no pins), stretched 1% and zigzagging: the first pass,
        // made implicit in the tension, keeps the chain's momentum.
        let free = vec![40.0f32; n + 1];
        let x0: Vec<Vec3> = (0..=n)
            .map(|i| {
                let out = if i % 2 == 1 { 5.0e-4 } else { -5.0e-4 };
                Vec3::new(0.101 * i as f32, out, 0.002 * (i as f32).sin())
            })
            .collect();
        let mut x = x0.clone();
        let mut g = ChainGroup::new(&[(0, n)], &segs, &props, &free, &part_segs);
        g.reset();
        g.solve_direct(&mut Scratch::default(), &mut x, 0, 1.0 / (h * h));
        let moved: Vec3 = x.iter().zip(&x0).map(|(a, b)| (*a - *b) / 40.0).sum();
        assert!(moved.length() < 1.0e-7, "momentum: {moved}");
        assert_ne!(x, x0);
    }

    /// Damping in groups is bit for bit the scalar formula.
    #[test]
    fn group_damping_is_the_scalar_formula() {
        let ch = chains(1.0e-6);
        let mut seed = 3u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let mut v: Vec<Vec3> = (0..ch.x.len())
            .map(|_| Vec3::new(rnd(), rnd(), rnd()))
            .collect();
        let mut vs = v.clone();
        let mut gs = groups(&ch);
        let mut sc = Scratch::default();
        for _ in 0..3 {
            scalar_damp(&ch.segs, 0.7, &ch.w, &ch.x, &mut vs, 0.002);
            for g in &mut gs {
                g.damp(&mut sc, &ch.x, &mut v, 0, 0.002);
            }
            for (i, (a, b)) in v.iter().zip(&vs).enumerate() {
                assert_eq!(
                    a.to_array().map(f32::to_bits),
                    b.to_array().map(f32::to_bits),
                    "velocity {i}"
                );
            }
        }
        assert_ne!(v[3], Vec3::ZERO);
    }
}
