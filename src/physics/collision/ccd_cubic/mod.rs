//! Conservative continuous collision detection for the two primitive pairs of
//! triangle meshes: vertex–face and edge–edge, with every point moving
//! linearly from its position at `t = 0` to its position at `t = 1`.
//!
//! # Method
//!
//! Both pairs can only touch at a time when their four points are coplanar.
//! With three edge vectors measured from one of the points, the coplanarity
//! condition is the triple product `f(t) = det(x(t), y(t), z(t))`, a cubic in
//! `t` because each vector is linear in `t`. A contact needs, at the same time,
//! `f(t) = 0` *and* the points being inside (the vertex in the triangle, the
//! two edges crossing).
//!
//! We never solve the cubic in closed form (Cardano with complex cube roots
//! loses real roots to rounding, which is exactly how tunnelling happens).
//! Instead:
//!
//! 1. The cubic is written in the **Bernstein basis on `[0, 1]`**. Because the
//!    triple product is trilinear, its Bernstein coefficients are (sums of)
//!    triple products of the *end positions* only — `det(x0, y0, z0)`,
//!    `det(x1, y0, z0) + …`, `det(x1, y1, z1)` — so no velocity is ever formed
//!    and every coefficient comes with a rigorous floating-point error bound.
//!    Leading coefficients that vanish (the cubic is really a quadratic,
//!    linear, constant or identically zero polynomial) need no special case:
//!    the Bernstein form does not care about the degree.
//! 2. The time interval is **bisected** (de Casteljau at the midpoint, again
//!    with tracked error bounds). On any sub-interval the cubic lies in the
//!    convex hull of its Bernstein coefficients, so if every coefficient is
//!    certainly positive (or certainly negative) — value beyond its error bound
//!    — the points are certainly not coplanar there and the interval is
//!    discarded. A coefficient within its error bound counts as a possible
//!    zero. Near a simple root the hull is tight (overestimation shrinks with
//!    the square of the width), so this isolates the roots to intervals as
//!    narrow as floating point allows.
//! 3. The **inside test** over an interval `[ta, tb]` is a separating-axis
//!    certificate: pick a direction `n` and check that, along `n`, the vertex
//!    is strictly beyond all three triangle corners (or one edge's endpoints
//!    strictly beyond the other's). With `n` fixed, each projected gap
//!    `n · (q(t) − p(t))` is *linear* in `t` and is formed from end-position
//!    differences only, so checking it at `ta` and `tb` with an error bound
//!    proves separation over the whole interval. Any `n` gives a valid proof,
//!    so choosing it is pure heuristics and can never cause a miss: the
//!    closest features at the middle of the interval suggest one; before a
//!    contact is reported every candidate is tried (feature directions,
//!    directions that stay valid while a vertex sweeps past an edge or corner,
//!    see `PairGeometry`), first in `f64` and then in double-double
//!    arithmetic (module `dd`), which decides near misses of `1e-17` that `f64`
//!    cannot. This needs no special case for coplanar motion (identically zero
//!    cubic), parallel edges, degenerate triangles, shared endpoints or zero
//!    motion: it only ever fails to prove separation, which leads to
//!    subdivision.
//!
//! The search is depth first, left child first. An interval that neither test
//! can discard is split until it is `2^-MAX_DEPTH` wide; the first such leaf
//! is reported as the time of impact, its left end. Every time to the left of
//! it has been *proved* collision free, so the reported time is never later
//! than the true first contact (conservative), and it misses no contact
//! (zero false negatives) as long as the error bounds hold. Work limits
//! ([`MAX_NODES`], [`PRECISE_BUDGET`]) and the shortcut for evident contacts
//! (`Verdict::Contact`) only ever skip attempts to *discard* intervals, so
//! they can make the answer earlier or turn a near miss into a reported
//! contact, never hide a contact. The shortcut judges an interval by its
//! ends and middle, so a leaf below it whose primitives are clearly apart
//! (far beyond the noise) still gets its cheap separation tests: two edges
//! 1.8 mm apart over the whole motion, whose lines crossed outside one of
//! them at the coplanar time, were reported touching (a cable throw's pair,
//! which then took an impulse it did not need).
//!
//! # Error bounds
//!
//! With `u = 2^-53` the unit roundoff, every basic operation satisfies
//! `fl(a ∘ b) = (a ∘ b)(1 + δ)`, `|δ| ≤ u`, and also `|fl(a ∘ b) − a ∘ b| ≤
//! u |fl(a ∘ b)|`. The bounds below are first-order bounds multiplied by at
//! least two, and each is finally passed through `up`, which inflates by
//! `2^-50` relative; this absorbs the handful of roundings made while
//! evaluating the bound itself. An absolute `ETA` is added wherever a result
//! could be subnormal (relative bounds fail under gradual underflow). Inputs
//! that are not finite are reported as a contact at `t = 0`.

use std::cell::Cell;

use glam::DVec3;

use super::ccd_thick::closest_points_segment_segment;

/// Unit roundoff of `f64` (round to nearest).
pub(crate) const U: f64 = f64::EPSILON * 0.5;

/// Absolute slack for underflow: far larger than the `2^-1075` a subnormal
/// operation can lose, far smaller than any meaningful geometric quantity.
pub(crate) const ETA: f64 = f64::MIN_POSITIVE;

/// Bisection depth of the time search: leaves are `2^-MAX_DEPTH` wide. All
/// interval ends are then of the form `k / 2^MAX_DEPTH`, so `1 - t`, the
/// midpoint and the de Casteljau halving are exact.
pub const MAX_DEPTH: u32 = 50;

/// Upper bound on the intervals one query may examine. When it is reached the
/// query stops and reports a (conservative) contact at the left end of the
/// interval being examined; everything before it has already been proved
/// collision free.
pub const MAX_NODES: u32 = 20_000;

/// Upper bound on the double-double direction tests of one query. They are
/// what removes the false positives that `f64` cannot decide, and a near miss
/// needs a few dozen of them; a true contact approached very slowly can ask
/// for many more (every interval just before the contact is separable, but
/// only barely). Past the budget the query continues in `f64` alone, which
/// can only make the answer more conservative: an earlier time of impact, or
/// a contact reported for a near miss.
pub const PRECISE_BUDGET: u32 = 1024;

/// `x > 0`, spelled out where a NaN must count as "not positive" (the
/// negated comparison `!(x > 0.0)` is what is meant at the call sites).
#[inline(always)]
pub(crate) fn is_positive(x: f64) -> bool {
    x > 0.0
}

/// Inflates a computed error bound so that the roundings made while computing
/// it are covered (see the module docs), and adds the underflow slack.
#[inline(always)]
pub(crate) fn up(x: f64) -> f64 {
    x * (1.0 + 8.0 * U) + ETA
}

/// The "positive" cross product: componentwise `|y| × |z|` with both terms
/// added. `|x| · pcross(|y|, |z|)` is the sum of the absolute values of the
/// six terms of `det(x, y, z)`, the quantity rounding errors scale with.
#[inline(always)]
pub(crate) fn pcross(y: DVec3, z: DVec3) -> DVec3 {
    DVec3::new(
        y.y * z.z + y.z * z.y,
        y.z * z.x + y.x * z.z,
        y.x * z.y + y.y * z.x,
    )
}

/// The factor by which [`BernsteinCubic::from_triple_product`] scales the
/// triple product (it keeps the coefficient sums free of a division by 3).
pub(crate) const CUBIC_SCALE: f64 = 3.0;

/// A cubic on some interval `[ta, tb]`, in the Bernstein basis of that
/// interval (scaled by [`CUBIC_SCALE`], which does not move its roots),
/// with an absolute error bound per coefficient: the exact coefficient `c_i`
/// satisfies `|c_i − b[i]| ≤ e[i]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BernsteinCubic {
    pub b: [f64; 4],
    pub e: [f64; 4],
}

impl BernsteinCubic {
    /// The Bernstein form on `[0, 1]` of `det(x(t), y(t), z(t))` where each
    /// vector moves linearly from `[0]` (t = 0) to `[1]` (t = 1). The vectors
    /// themselves are differences of exact input points, each computed with
    /// one rounding: pass them in together with that knowledge (every
    /// component carries a relative error of at most `u`).
    ///
    /// Coefficients (times 3): `3 d000`, `d100 + d010 + d001`,
    /// `d011 + d101 + d110`, `3 d111`, where `dijk = det(x_i, y_j, z_k)`.
    #[inline]
    pub fn from_triple_product(x: [DVec3; 2], y: [DVec3; 2], z: [DVec3; 2]) -> Self {
        let mut d = [[[0.0f64; 2]; 2]; 2];
        let mut ed = [[[0.0f64; 2]; 2]; 2];
        let ax = [x[0].abs(), x[1].abs()];
        for j in 0..2 {
            for k in 0..2 {
                let c = y[j].cross(z[k]);
                let pc = pcross(y[j].abs(), z[k].abs());
                for i in 0..2 {
                    d[i][j][k] = x[i].dot(c);
                    // Inputs perturbed by u each: 3u P. Evaluating the cross
                    // product (2 roundings deep) and the dot (3 deep): 5u P.
                    // 8u P first order, doubled.
                    ed[i][j][k] = up(16.0 * U * ax[i].dot(pc));
                }
            }
        }
        let three = |v: f64, e: f64| -> (f64, f64) {
            let w = 3.0 * v;
            (w, up(3.0 * e + U * w.abs()))
        };
        let sum3 = |a: (f64, f64), b: (f64, f64), c: (f64, f64)| -> (f64, f64) {
            let s = a.0 + b.0 + c.0;
            // Two additions, each rounding by at most u times a partial sum
            // bounded by |a| + |b| + |c|.
            (
                s,
                up(a.1 + b.1 + c.1 + 4.0 * U * (a.0.abs() + b.0.abs() + c.0.abs())),
            )
        };
        let p = |i: usize, j: usize, k: usize| (d[i][j][k], ed[i][j][k]);
        let c0 = three(d[0][0][0], ed[0][0][0]);
        let c1 = sum3(p(1, 0, 0), p(0, 1, 0), p(0, 0, 1));
        let c2 = sum3(p(0, 1, 1), p(1, 0, 1), p(1, 1, 0));
        let c3 = three(d[1][1][1], ed[1][1][1]);
        BernsteinCubic {
            b: [c0.0, c1.0, c2.0, c3.0],
            e: [c0.1, c1.1, c2.1, c3.1],
        }
    }

    /// True when the cubic certainly has no zero on its interval: all four
    /// coefficients are certainly of one strict sign (convex hull property).
    /// Comparisons of floating-point numbers are exact, so no rounding enters.
    #[inline(always)]
    pub fn excludes_zero(&self) -> bool {
        let (b, e) = (&self.b, &self.e);
        (b[0] > e[0] && b[1] > e[1] && b[2] > e[2] && b[3] > e[3])
            || (b[0] < -e[0] && b[1] < -e[1] && b[2] < -e[2] && b[3] < -e[3])
    }

    /// True when the cubic certainly has opposite signs at the two ends of
    /// its interval (the end coefficients are the end values), hence a root
    /// inside.
    #[inline(always)]
    pub fn certainly_crosses(&self) -> bool {
        let (b, e) = (&self.b, &self.e);
        (b[0] > e[0] && b[3] < -e[3]) || (b[0] < -e[0] && b[3] > e[3])
    }

    /// Splits at the midpoint (de Casteljau with parameter 1/2) into the
    /// Bernstein forms of the left and right halves.
    ///
    /// Each new coefficient is `(x + y) / 2`; the halving is exact, the sum
    /// rounds by at most `u |z|`, and the inherited error is `(ex + ey) / 2`.
    #[inline(always)]
    pub fn split_half(&self) -> (Self, Self) {
        #[inline(always)]
        fn mid(x: f64, ex: f64, y: f64, ey: f64) -> (f64, f64) {
            let z = (x + y) * 0.5;
            (z, up((ex + ey) * 0.5 + U * z.abs()))
        }
        let [b0, b1, b2, b3] = self.b;
        let [e0, e1, e2, e3] = self.e;
        let (l1, el1) = mid(b0, e0, b1, e1);
        let (m, em) = mid(b1, e1, b2, e2);
        let (r2, er2) = mid(b2, e2, b3, e3);
        let (l2, el2) = mid(l1, el1, m, em);
        let (r1, er1) = mid(m, em, r2, er2);
        let (c, ec) = mid(l2, el2, r1, er1);
        (
            BernsteinCubic {
                b: [b0, l1, l2, c],
                e: [e0, el1, el2, ec],
            },
            BernsteinCubic {
                b: [c, r1, r2, b3],
                e: [ec, er1, er2, e3],
            },
        )
    }

    /// Value at `t ∈ [0, 1]` of the interval's parameter, by de Casteljau, and
    /// a bound on its error. Each step is `x + t (y − x)`: the inherited error
    /// is at most `(1 − t) ex + t ey ≤ max(ex, ey)`, the three roundings at
    /// most `u (|y − x| t + |m| + |z|)` with `m = t (y − x)`.
    #[inline]
    pub fn eval(&self, t: f64) -> (f64, f64) {
        #[inline(always)]
        fn step(x: f64, ex: f64, y: f64, ey: f64, t: f64) -> (f64, f64) {
            let m = t * (y - x);
            let z = x + m;
            (z, up(ex.max(ey) + 2.0 * U * (2.0 * m.abs() + z.abs())))
        }
        let [b0, b1, b2, b3] = self.b;
        let [e0, e1, e2, e3] = self.e;
        let (p0, q0) = step(b0, e0, b1, e1, t);
        let (p1, q1) = step(b1, e1, b2, e2, t);
        let (p2, q2) = step(b2, e2, b3, e3, t);
        let (s0, r0) = step(p0, q0, p1, q1, t);
        let (s1, r1) = step(p1, q1, p2, q2, t);
        step(s0, r0, s1, r1, t)
    }
}

/// A rigorous "certainly positive on `[ta, tb]`" test for a function that is
/// linear in time, `g(t) = (1 − t) alpha + t beta`, with `|alpha − α| ≤ ea` and
/// `|beta − β| ≤ eb` for the exact end values α, β.
///
/// `g` is linear, so it is positive on the interval iff it is at both ends.
/// At each end `v = (1 − t) alpha + t beta` is computed with two products and
/// one sum (`1 − t` is exact for the dyadic times used here), so its rounding
/// error is at most `2u ((1 − t)|alpha| + t|beta|)`.
#[inline(always)]
fn linear_positive(alpha: f64, ea: f64, beta: f64, eb: f64, ta: f64, tb: f64) -> bool {
    let at = |t: f64| -> bool {
        let s = 1.0 - t;
        let v = s * alpha + t * beta;
        let err = up(s * ea + t * eb + 4.0 * U * (s * alpha.abs() + t * beta.abs()));
        v > err
    };
    at(ta) && at(tb)
}

/// `n · d` and a bound on its error, where `d` is a difference of two exact
/// points computed with one rounding (relative error ≤ u per component) and
/// `n` is any fixed floating-point vector: `u Σ|n||d|` from the rounded `d`
/// plus `3u Σ|n||d|` for the dot product, doubled.
#[inline(always)]
fn dot_with_bound(n: DVec3, d: DVec3) -> (f64, f64) {
    (n.dot(d), up(8.0 * U * n.abs().dot(d.abs())))
}

/// The feature of a triangle `[f0, f1, f2]` nearest to a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriangleFeature {
    Face,
    /// The edge from corner `.0` to corner `.1`.
    Edge(usize, usize),
    Vertex(usize),
}

/// Closest point of the triangle `tri` to `p`, and the feature it lies on, in
/// floating point. Used to choose separating directions, so it need not be
/// exact; it must merely be sensible and never panic (degenerate triangles
/// fall back to their edges).
#[inline]
pub fn closest_point_on_triangle(p: DVec3, tri: [DVec3; 3]) -> (DVec3, TriangleFeature) {
    let [a, b, c] = tri;
    let ab = b - a;
    let ac = c - a;
    let n = ab.cross(ac);
    let nn = n.length_squared();
    if nn > 0.0 && nn.is_finite() {
        let ap = p - a;
        // Barycentric coordinates of the projection of p onto the plane:
        // (q - a) = wb ab + wc ac, and crossing with ac (resp. ab) isolates
        // wb (resp. wc); the normal component of ap drops out of both.
        let wb = ap.cross(ac).dot(n) / nn;
        let wc = ab.cross(ap).dot(n) / nn;
        if wb >= 0.0 && wc >= 0.0 && wb + wc <= 1.0 {
            return (a + ab * wb + ac * wc, TriangleFeature::Face);
        }
    }
    let mut best = (a, TriangleFeature::Vertex(0));
    let mut best_d = f64::INFINITY;
    for (i, j) in [(0, 1), (1, 2), (2, 0)] {
        let (q, s) = closest_point_on_segment(p, tri[i], tri[j]);
        let feature = if s <= 0.0 {
            TriangleFeature::Vertex(i)
        } else if s >= 1.0 {
            TriangleFeature::Vertex(j)
        } else {
            TriangleFeature::Edge(i, j)
        };
        let d = (p - q).length_squared();
        if d < best_d {
            best = (q, feature);
            best_d = d;
        }
    }
    best
}

/// Closest point of the segment `ab` to `p`, and its parameter in `[0, 1]`,
/// in floating point.
#[inline]
pub fn closest_point_on_segment(p: DVec3, a: DVec3, b: DVec3) -> (DVec3, f64) {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 > 0.0 && len2.is_finite() {
        let s = ((p - a).dot(ab) / len2).clamp(0.0, 1.0);
        (a + ab * s, s)
    } else {
        (a, 0.0)
    }
}

#[inline(always)]
fn lerp(a: DVec3, b: DVec3, t: f64) -> DVec3 {
    a + (b - a) * t
}

/// A direction perpendicular to the line through `o` with direction `e`,
/// pointing at `q` (up to sign), computed as `(e × (q − o)) × e`.
///
/// Why not simply `q − closest point`: when `q` is within `δ` of a line of
/// length `L`, the rounding of the closest point tilts that difference by
/// about `u L / δ`, and the far end of the edge then projects onto the wrong
/// side — separation fails for a gap of `δ = 1e-11` on a unit edge. The double
/// cross product is perpendicular to `e` up to a relative `u` whatever the
/// accuracy of the middle vector, so both ends of the edge project alike.
#[inline(always)]
fn perpendicular_towards(e: DVec3, o: DVec3, q: DVec3) -> DVec3 {
    e.cross(q - o).cross(e)
}

/// True when, along `n`, the projected gaps `n · d_k(t)` are certainly all
/// positive or all negative over `[ta, tb]`, where `d_k(t)` moves linearly
/// from `d0[k]` to `d1[k]`. Any `n` may be used: only the dot products are
/// certified, not the choice of direction.
#[inline]
fn certify_direction(n: DVec3, d0: &[DVec3], d1: &[DVec3], ta: f64, tb: f64) -> bool {
    if !is_positive(n.length_squared()) || !n.is_finite() {
        return false;
    }
    let (mut pos, mut neg) = (true, true);
    for (a, b) in d0.iter().zip(d1) {
        let (a, ea) = dot_with_bound(n, *a);
        let (b, eb) = dot_with_bound(n, *b);
        pos = pos && linear_positive(a, ea, b, eb, ta, tb);
        neg = neg && linear_positive(-a, ea, -b, eb, ta, tb);
        if !pos && !neg {
            return false;
        }
    }
    true
}

/// The geometry-specific half of the separation test: which end-point gaps
/// must keep one sign, and which directions to try.
///
/// The directions of a pair are numbered `0..DIRECTIONS`, the same in `f64`
/// and in double-double. Besides the directions of the closest features at
/// one instant there are *trajectory* directions, which stay valid over a
/// whole interval when a vertex sweeps past an edge or a corner: the normal
/// common to the edge and the vertex's relative velocity, or the
/// perpendicular from the vertex's straight path to the corner. Along those
/// the gap is constant in time (for translating features), which is what a
/// near miss passing a corner at `1e-17` needs — any instantaneous direction
/// turns by a large angle within the narrowest time interval.
trait PairGeometry {
    /// Gaps `x[i] − x[j]` (indices into `[p, f0, f1, f2]` or
    /// `[a0, a1, b0, b1]`) that must all be certainly positive, or all
    /// certainly negative, along a separating direction.
    const GAPS: usize;
    const DIRECTIONS: usize;
    fn gap_pairs() -> &'static [(usize, usize)];

    /// The direction the closest features at positions `x` suggest: its
    /// number, the raw closest-point difference (one more candidate) and the
    /// distance.
    fn suggest(x: &[DVec3; 4]) -> Suggestion;

    /// Direction `k` at positions `x`, the points moving with velocities `v`
    /// (end minus start).
    fn direction(x: &[DVec3; 4], v: &[DVec3; 4], k: usize) -> DVec3;

    /// Direction `k` from double-double positions and velocities.
    fn direction_dd(x: &[dd::Dd3; 4], v: &[dd::Dd3; 4], k: usize) -> dd::Dd3;

    /// True when, at positions `x`, the primitives clearly overlap "in the
    /// plane": the vertex projects well inside the triangle, or the two edges
    /// cross well inside both, at a clear angle.
    fn clear_interior(x: &[DVec3; 4]) -> bool;
}

struct Suggestion {
    primary: usize,
    diff: DVec3,
    distance: f64,
}

/// Relative margin for [`PairGeometry::clear_interior`].
const CLEAR_MARGIN: f64 = 1e-6;

/// Intervals at least this wide whose primitives are within the noise level
/// at the middle get one double-double direction tried before they are split
/// (see [`Separator`]); narrower ones are left to the leaves, where walking
/// is cheap.
const NEAR_MIN_WIDTH: f64 = 1.0 / (1u64 << (MAX_DEPTH - 20)) as f64;

/// What the separation test concluded about a time interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Certainly no contact in the interval.
    Separated,
    /// Not separated, and a contact is evidently there (see
    /// [`Separator::classify`]): below this interval the search only needs
    /// the cubic to narrow the time down.
    Contact,
    /// Not separated.
    Unknown,
}

/// The inside half of the search: proves, for a time interval, that the
/// primitives do not touch anywhere in it (regardless of coplanarity), by
/// certifying a separating direction.
///
/// Effort grows only where it can pay:
/// 1. always: the direction suggested by the closest features at the middle
///    of the interval, then the last directions that needed more effort (the
///    hints: a direction found once usually keeps working nearby in time);
/// 2. before a contact is reported (at a leaf): every `f64` candidate, then
///    every double-double candidate ([`dd`]);
/// 3. on an interval at least [`NEAR_MIN_WIDTH`] wide whose primitives are
///    within [`Separator::noise`] of each other at its middle: the suggested
///    direction in double-double. Below the noise level `f64` cannot certify
///    anything, and without this a stretch of near contact (a vertex sliding
///    `1e-17` above a face, say) would be discarded leaf by leaf.
struct Separator<G: PairGeometry> {
    start: [DVec3; 4],
    end: [DVec3; 4],
    /// The gaps at t = 0 and t = 1, each with one rounding.
    d0: [DVec3; 4],
    d1: [DVec3; 4],
    /// Velocities (end − start).
    velocity: [DVec3; 4],
    /// Distances below this are beyond what `f64` certifies reliably.
    noise: f64,
    hint: Cell<DVec3>,
    /// The last double-double direction that worked, and how many times in a
    /// row it has failed since.
    precise_hint: Cell<Option<dd::Dd3>>,
    precise_misses: Cell<u32>,
    /// Directions certified in double-double so far (for [`CcdStats`]).
    precise_count: Cell<u32>,
    /// The exact gaps, computed when first needed.
    exact_gaps: Cell<Option<[dd::Gap; 4]>>,
    geometry: std::marker::PhantomData<G>,
}

impl<G: PairGeometry> Separator<G> {
    fn new(start: [DVec3; 4], end: [DVec3; 4]) -> Self {
        let mut d0 = [DVec3::ZERO; 4];
        let mut d1 = [DVec3::ZERO; 4];
        for (k, &(i, j)) in G::gap_pairs().iter().enumerate() {
            d0[k] = start[i] - start[j];
            d1[k] = end[i] - end[j];
        }
        let scale = start
            .iter()
            .chain(end.iter())
            .fold(0.0f64, |m, p| m.max(p.abs().max_element()));
        Separator {
            start,
            end,
            d0,
            d1,
            velocity: std::array::from_fn(|i| end[i] - start[i]),
            // 2^-40 of the coordinate scale: f64 certificates lose their
            // reliability a few hundred ulps above the unit roundoff.
            noise: scale * (1.0 / (1u64 << 40) as f64),
            hint: Cell::new(DVec3::ZERO),
            precise_hint: Cell::new(None),
            precise_misses: Cell::new(0),
            precise_count: Cell::new(0),
            exact_gaps: Cell::new(None),
            geometry: std::marker::PhantomData,
        }
    }

    #[inline(always)]
    fn positions(&self, t: f64) -> [DVec3; 4] {
        std::array::from_fn(|i| lerp(self.start[i], self.end[i], t))
    }

    #[inline(always)]
    fn test(&self, n: DVec3, ta: f64, tb: f64) -> bool {
        certify_direction(n, &self.d0[..G::GAPS], &self.d1[..G::GAPS], ta, tb)
    }

    #[inline]
    fn test_dd(&self, n: &dd::Dd3, ta: f64, tb: f64) -> bool {
        let count = self.precise_count.get();
        if count >= PRECISE_BUDGET {
            return false;
        }
        self.precise_count.set(count + 1);
        let gaps = match self.exact_gaps.get() {
            Some(g) => g,
            None => {
                let g = dd::exact_differences(&self.start, &self.end, G::gap_pairs());
                self.exact_gaps.set(Some(g));
                g
            }
        };
        dd::certify_direction(n, &gaps[..G::GAPS], ta, tb)
    }

    /// Whether the primitives certainly do not touch during `[ta, tb]`.
    /// `last` says that a contact will be reported unless this succeeds;
    /// `crossing` that the coplanarity cubic certainly changes sign on the
    /// interval.
    ///
    /// [`Verdict::Contact`] is a heuristic shortcut for the common genuine
    /// contact: the cubic certainly has a root in the interval and the
    /// primitives overlap clearly "in the plane" at both ends and the middle
    /// of it. No effort is then wasted on separating what is not separable;
    /// a wrong call can only add a false positive, never hide a contact,
    /// because skipping a separation test never discards an interval.
    #[inline]
    fn classify(&self, ta: f64, tb: f64, last: bool, crossing: bool) -> Verdict {
        let tm = 0.5 * (ta + tb);
        let x = self.positions(tm);
        let hint = G::suggest(&x);
        if self.test(G::direction(&x, &self.velocity, hint.primary), ta, tb)
            || self.test(self.hint.get(), ta, tb)
        {
            return Verdict::Separated;
        }
        if let Some(h) = self.precise_hint.get() {
            if self.test_dd(&h, ta, tb) {
                self.precise_misses.set(0);
                return Verdict::Separated;
            }
            // Worth its cost while the search walks through a stretch of
            // near contact, not once that stretch is behind it.
            let m = self.precise_misses.get() + 1;
            self.precise_misses.set(m);
            if m >= 4 {
                self.precise_hint.set(None);
                self.precise_misses.set(0);
            }
        }
        if crossing
            && G::clear_interior(&x)
            && G::clear_interior(&self.positions(ta))
            && G::clear_interior(&self.positions(tb))
        {
            return Verdict::Contact;
        }
        if !(last || (tb - ta >= NEAR_MIN_WIDTH && hint.distance <= self.noise)) {
            return Verdict::Unknown;
        }
        if self.separated_hard(ta, tb, tm, &x, last, &hint) {
            Verdict::Separated
        } else {
            Verdict::Unknown
        }
    }

    /// Whether the primitives are well beyond the noise apart in the
    /// middle of `[ta, tb]` and the directions their closest features
    /// suggest certify it over the interval.
    #[cold]
    fn clearly_apart(&self, ta: f64, tb: f64) -> bool {
        let x = self.positions(0.5 * (ta + tb));
        let hint = G::suggest(&x);
        hint.distance > 1024.0 * self.noise
            && (self.test(hint.diff, ta, tb)
                || self.test(G::direction(&x, &self.velocity, hint.primary), ta, tb))
    }

    #[cold]
    fn separated_hard(
        &self,
        ta: f64,
        tb: f64,
        tm: f64,
        x: &[DVec3; 4],
        last: bool,
        hint: &Suggestion,
    ) -> bool {
        if last {
            let others = (0..G::DIRECTIONS)
                .filter(|&k| k != hint.primary)
                .map(|k| G::direction(x, &self.velocity, k));
            for n in std::iter::once(hint.diff).chain(others) {
                if self.test(n, ta, tb) {
                    self.hint.set(n);
                    return true;
                }
            }
        }
        let xd: [dd::Dd3; 4] =
            std::array::from_fn(|i| dd::Dd3::lerp(self.start[i], self.end[i], tm));
        let vd: [dd::Dd3; 4] =
            std::array::from_fn(|i| dd::Dd3::difference(self.end[i], self.start[i]));
        let order =
            std::iter::once(hint.primary).chain((0..G::DIRECTIONS).filter(|&k| k != hint.primary));
        for k in order.take(if last { G::DIRECTIONS } else { 1 }) {
            let n = G::direction_dd(&xd, &vd, k);
            if self.test_dd(&n, ta, tb) {
                self.precise_hint.set(Some(n));
                self.precise_misses.set(0);
                return true;
            }
        }
        false
    }
}

/// Statistics of one query, for profiling and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcdStats {
    /// Time intervals examined (1 when the first test settles the query).
    pub nodes: u32,
    /// Separation tests run (each may try several directions).
    pub separation_tests: u32,
    /// Directions certified in double-double.
    pub precise_directions: u32,
}

/// Depth-first, left-first search for the first time interval that neither
/// the coplanarity cubic nor the separation test can rule out.
#[inline]
fn search<G: PairGeometry>(
    start: [DVec3; 4],
    end: [DVec3; 4],
    cubic: BernsteinCubic,
    stats: &mut CcdStats,
) -> Option<f64> {
    if !all_finite(&start) || !all_finite(&end) {
        return Some(0.0);
    }
    stats.nodes += 1;
    if cubic.excludes_zero() {
        return None;
    }
    let sep = Separator::<G>::new(start, end);
    // (left end, depth, cubic on the interval, contact evident). Right
    // children are pushed before left ones, so the stack never holds more
    // than one pending sibling per level plus the current node.
    let mut stack = [(0.0f64, 0u32, cubic, false); MAX_DEPTH as usize + 2];
    let mut len = 1usize;
    let mut result = None;
    while len > 0 {
        len -= 1;
        let (ta, depth, poly, mut contact) = stack[len];
        if depth > 0 {
            stats.nodes += 1;
            if poly.excludes_zero() {
                continue;
            }
        }
        let width = 1.0 / (1u64 << depth) as f64;
        let tb = ta + width;
        let last = depth >= MAX_DEPTH || stats.nodes >= MAX_NODES;
        if !contact {
            stats.separation_tests += 1;
            match sep.classify(ta, tb, last, poly.certainly_crosses()) {
                Verdict::Separated => continue,
                Verdict::Contact => contact = true,
                Verdict::Unknown => {}
            }
        }
        if last {
            // A leaf below an interval the shortcut called an evident
            // contact had no separation test of its own. The shortcut reads
            // the primitives at an interval's ends and middle only, and
            // where the lines' crossing leaves an edge in between, the
            // coplanar time is a near miss: two cable segments 1.8 mm apart
            // all along were reported touching. Primitives clearly apart at
            // the leaf get its cheap tests (at a true contact they are
            // within the noise, and nothing is tried).
            if contact {
                stats.separation_tests += 1;
                if sep.clearly_apart(ta, tb) {
                    continue;
                }
            }
            result = Some(ta);
            break;
        }
        let (left, right) = poly.split_half();
        let tm = ta + width * 0.5;
        stack[len] = (tm, depth + 1, right, contact);
        stack[len + 1] = (ta, depth + 1, left, contact);
        len += 2;
    }
    stats.precise_directions += sep.precise_count.get();
    result
}

/// A vertex–face query: `[p, f0, f1, f2]` at `t = 0` and at `t = 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VertexFaceQuery {
    pub start: [DVec3; 4],
    pub end: [DVec3; 4],
}

/// An edge–edge query: `[a0, a1, b0, b1]` at `t = 0` and at `t = 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeEdgeQuery {
    pub start: [DVec3; 4],
    pub end: [DVec3; 4],
}

#[inline(always)]
fn all_finite(points: &[DVec3; 4]) -> bool {
    points.iter().all(|p| p.is_finite())
}

impl VertexFaceQuery {
    pub fn new(start: [DVec3; 4], end: [DVec3; 4]) -> Self {
        Self { start, end }
    }

    /// The coplanarity cubic `det(f1 − f0, f2 − f0, p − f0)` on `[0, 1]`.
    pub(crate) fn cubic(&self) -> BernsteinCubic {
        let (s, e) = (&self.start, &self.end);
        BernsteinCubic::from_triple_product(
            [s[2] - s[1], e[2] - e[1]],
            [s[3] - s[1], e[3] - e[1]],
            [s[0] - s[1], e[0] - e[1]],
        )
    }

    /// Conservative time of impact in `[0, 1]`, or `None` when the vertex
    /// certainly never touches the (closed) triangle. Non-finite input
    /// reports a contact at `t = 0`.
    #[inline]
    pub fn toi(&self) -> Option<f64> {
        self.toi_with_stats(&mut CcdStats::default())
    }

    /// [`Self::toi`], also reporting how much work the query took.
    pub fn toi_with_stats(&self, stats: &mut CcdStats) -> Option<f64> {
        search::<VertexFace>(self.start, self.end, self.cubic(), stats)
    }
}

impl EdgeEdgeQuery {
    pub fn new(start: [DVec3; 4], end: [DVec3; 4]) -> Self {
        Self { start, end }
    }

    /// The coplanarity cubic `det(a1 − a0, b1 − b0, b0 − a0)` on `[0, 1]`.
    pub(crate) fn cubic(&self) -> BernsteinCubic {
        let (s, e) = (&self.start, &self.end);
        BernsteinCubic::from_triple_product(
            [s[1] - s[0], e[1] - e[0]],
            [s[3] - s[2], e[3] - e[2]],
            [s[2] - s[0], e[2] - e[0]],
        )
    }

    /// Conservative time of impact in `[0, 1]`, or `None` when the two
    /// (closed) segments certainly never touch. Non-finite input reports a
    /// contact at `t = 0`.
    #[inline]
    pub fn toi(&self) -> Option<f64> {
        self.toi_with_stats(&mut CcdStats::default())
    }

    /// [`Self::toi`], also reporting how much work the query took.
    pub fn toi_with_stats(&self, stats: &mut CcdStats) -> Option<f64> {
        search::<EdgeEdge>(self.start, self.end, self.cubic(), stats)
    }
}

/// Vertex–face CCD: the vertex `p` against the triangle `f0 f1 f2`, all moving
/// linearly from the `_0` positions (t = 0) to the `_1` positions (t = 1).
///
/// Returns a time of impact in `[0, 1]` that is never later than the first
/// true contact, or `None` when there is certainly no contact.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn vertex_face_ccd(
    p0: DVec3,
    f0_0: DVec3,
    f1_0: DVec3,
    f2_0: DVec3,
    p1: DVec3,
    f0_1: DVec3,
    f1_1: DVec3,
    f2_1: DVec3,
) -> Option<f64> {
    VertexFaceQuery::new([p0, f0_0, f1_0, f2_0], [p1, f0_1, f1_1, f2_1]).toi()
}

/// Edge–edge CCD: the segment `a0 a1` against the segment `b0 b1`, all moving
/// linearly from the `_0` positions (t = 0) to the `_1` positions (t = 1).
///
/// Returns a time of impact in `[0, 1]` that is never later than the first
/// true contact, or `None` when there is certainly no contact.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn edge_edge_ccd(
    a0_0: DVec3,
    a1_0: DVec3,
    b0_0: DVec3,
    b1_0: DVec3,
    a0_1: DVec3,
    a1_1: DVec3,
    b0_1: DVec3,
    b1_1: DVec3,
) -> Option<f64> {
    EdgeEdgeQuery::new([a0_0, a1_0, b0_0, b1_0], [a0_1, a1_1, b0_1, b1_1]).toi()
}

mod dd;
mod geometry;
use geometry::{EdgeEdge, VertexFace};

#[cfg(test)]
mod tests;
