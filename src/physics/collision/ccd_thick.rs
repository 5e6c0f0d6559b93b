//! Continuous collision detection for thick segments: capsules and cable
//! segments with radii `r1`, `r2`, moving linearly over `t ∈ [0, 1]`.
//!
//! Two thick segments touch when the distance between their centre segments
//! is at most `r = r1 + r2`. The search is an interval method: a time interval
//! `[t1, t2]` is discarded when one of two bounds proves the distance stays
//! above `r` on it, otherwise it is bisected, left half first, until it is
//! narrower than the caller's tolerance; the left end of the first interval
//! that survives is the time of impact.
//!
//! 1. **Cubic bound.** With `e1 = a1 − a0`, `e2 = b1 − b0`, `d = b0 − a0`, the
//!    triple product `f(t) = det(e1, e2, d) = d · (e1 × e2)` is a cubic in `t`.
//!    If points `x` on `a` and `y` on `b` are within `r`, then `d = (y − x) +
//!    s e1 − τ e2` for some `s, τ`, and the last two terms drop out of the
//!    triple product, so `|f(t)| = |(y − x) · (e1 × e2)| ≤ r |e1 × e2|`. Hence
//!    if the image of `f` over the interval, widened by `± r C` where
//!    `C ≥ |e1(t) × e2(t)|` on the interval, excludes zero, there is no
//!    contact there. The image comes from `f` at the two ends and at its
//!    extrema inside the interval (roots of the derivative), each evaluated
//!    with a rigorous error bound. `C` is the smaller of the product of the
//!    largest edge lengths (lengths are convex in `t`, so the largest is at an
//!    end) and the norm of the interval cross product of the componentwise
//!    bounds of the two edge vectors.
//! 2. **Distance bound.** The segment–segment distance at the middle of the
//!    interval, minus how far the segments can move in half the interval (the
//!    largest endpoint displacement of each, times half the width), is a lower
//!    bound of the distance over the interval; if it exceeds `r`, no contact.
//!
//! Unlike the exact predicates of [`super::ccd_cubic`] this is a
//! tolerance-based test (the radii give physical slack): the reported time is
//! the left end of the first interval of width ≤ `tolerance` that could not be
//! ruled out, so it is at most the true first contact time and usually within
//! about `tolerance` of it.

use glam::DVec3;

use super::ccd_cubic::{is_positive, pcross, up, BernsteinCubic, EdgeEdgeQuery, CUBIC_SCALE, U};

/// Closest points of two segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentClosest {
    /// Parameter on segment `a` (`a0 + s (a1 − a0)`), in `[0, 1]`.
    pub s: f64,
    /// Parameter on segment `b` (`b0 + t (b1 − b0)`), in `[0, 1]`.
    pub t: f64,
    pub point_a: DVec3,
    pub point_b: DVec3,
    pub distance_squared: f64,
}

/// Closest points of the segments `a0 a1` and `b0 b1` (either may be a point),
/// in floating point.
///
/// Minimising `|a0 + s e1 − b0 − t e2|²` over the unit square: the optimum of
/// `s` on the whole strip is clamped into `[0, 1]`, the best `t` for it is
/// found and clamped, and `s` is then re-optimised for that `t`. For nearly
/// parallel segments the first `s` is poorly conditioned, but the distance is
/// then nearly flat along the segments, so the error it causes in the distance
/// is second order; exactly parallel segments take `s = 0`, any choice being
/// optimal up to the clamping that follows.
#[inline]
pub fn closest_points_segment_segment(
    a0: DVec3,
    a1: DVec3,
    b0: DVec3,
    b1: DVec3,
) -> SegmentClosest {
    let e1 = a1 - a0;
    let e2 = b1 - b0;
    let r = a0 - b0;
    let a = e1.length_squared();
    let e = e2.length_squared();
    let f = e2.dot(r);
    let (s, t) = if !is_positive(a) && !is_positive(e) {
        (0.0, 0.0)
    } else if !is_positive(a) {
        (0.0, clamp01(f / e))
    } else {
        let c = e1.dot(r);
        if !is_positive(e) {
            (clamp01(-c / a), 0.0)
        } else {
            let b = e1.dot(e2);
            let denom = a * e - b * b;
            let s0 = if denom > 0.0 {
                clamp01((b * f - c * e) / denom)
            } else {
                0.0
            };
            let t = clamp01((b * s0 + f) / e);
            (clamp01((b * t - c) / a), t)
        }
    };
    let point_a = a0 + e1 * s;
    let point_b = b0 + e2 * t;
    SegmentClosest {
        s,
        t,
        point_a,
        point_b,
        distance_squared: (point_b - point_a).length_squared(),
    }
}

/// Distance between the segments `a0 a1` and `b0 b1`.
#[inline]
pub fn segment_segment_distance(a0: DVec3, a1: DVec3, b0: DVec3, b1: DVec3) -> f64 {
    closest_points_segment_segment(a0, a1, b0, b1)
        .distance_squared
        .sqrt()
}

/// A lower bound of the distance between the segments, certified from an
/// approximate closest-point direction: for any direction `n`, the segments
/// are at least `min_ij n̂ · (b_j − a_i)` apart (the smallest gap between their
/// projections on `n`), with equality when `n` joins the true closest points.
/// Never negative.
#[inline]
pub fn segment_segment_distance_lower_bound(a0: DVec3, a1: DVec3, b0: DVec3, b1: DVec3) -> f64 {
    let c = closest_points_segment_segment(a0, a1, b0, b1);
    let n = c.point_b - c.point_a;
    let len = n.length();
    if !is_positive(len) || !len.is_finite() {
        return 0.0;
    }
    let mut gap = f64::INFINITY;
    let mut err = 0.0f64;
    for d in [b0 - a0, b1 - a0, b0 - a1, b1 - a1] {
        gap = gap.min(n.dot(d));
        err = err.max(n.abs().dot(d.abs()));
    }
    let lb = (gap - up(8.0 * U * err)) / (len * (1.0 + 4.0 * U));
    lb.max(0.0)
}

#[inline(always)]
fn clamp01(x: f64) -> f64 {
    // NaN (0/0 for degenerate input) maps to 0.
    if x > 0.0 {
        x.min(1.0)
    } else {
        0.0
    }
}

/// Result of a thick-segment CCD query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThickCcdResult {
    /// First contact time in `[0, 1]` (conservative, within about the
    /// tolerance), or `None` when the thick segments never touch.
    pub toi: Option<f64>,
    /// How many intervals were bisected.
    pub subdivisions: u32,
}

/// Two thick segments, `[a0, a1, b0, b1]` at `t = 0` and `t = 1`, with the
/// radius of segment `a` and of segment `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThickEdgeEdgeQuery {
    pub start: [DVec3; 4],
    pub end: [DVec3; 4],
    pub radius_a: f64,
    pub radius_b: f64,
}

/// Deepest bisection, whatever the tolerance (`2^-60` is below the spacing of
/// `f64` near 1, so nothing is lost).
const MAX_THICK_DEPTH: u32 = 60;

struct ThickSearch {
    start: [DVec3; 4],
    end: [DVec3; 4],
    r: f64,
    tolerance: f64,
    cubic: BernsteinCubic,
    /// Largest displacement over `[0, 1]` of an endpoint of `a`, of `b`.
    move_a: f64,
    move_b: f64,
    /// Rounding slack for positions and distances (see `new`).
    slack: f64,
    subdivisions: u32,
}

impl ThickSearch {
    /// Interval bound of `f` on `[t1, t2]` from its ends and interior extrema.
    fn cubic_range(&self, t1: f64, t2: f64) -> (f64, f64) {
        let c = &self.cubic;
        let (v1, e1) = c.eval(t1);
        let (v2, e2) = c.eval(t2);
        let (mut lo, mut hi, mut err) = (v1.min(v2), v1.max(v2), e1.max(e2));
        // f'(t) / 3 in Bernstein form has coefficients d_i = b_{i+1} − b_i;
        // as a monomial qa t² + qb t + qc.
        let d = [c.b[1] - c.b[0], c.b[2] - c.b[1], c.b[3] - c.b[2]];
        let (qa, qb, qc) = (d[0] - 2.0 * d[1] + d[2], 2.0 * (d[1] - d[0]), d[0]);
        let mut roots = [f64::NAN; 2];
        if qa != 0.0 {
            let disc = qb * qb - 4.0 * qa * qc;
            if disc >= 0.0 {
                // The stable pair of formulas: no cancellation in q.
                let q = -0.5 * (qb + disc.sqrt().copysign(qb));
                roots[0] = q / qa;
                if q != 0.0 {
                    roots[1] = qc / q;
                }
            }
        } else if qb != 0.0 {
            roots[0] = -qc / qb;
        }
        for t in roots {
            if t > t1 && t < t2 {
                let (v, e) = c.eval(t);
                lo = lo.min(v);
                hi = hi.max(v);
                err = err.max(e);
            }
        }
        // A computed extremum location is off by rounding; at a simple
        // critical point the value error this causes is second order in the
        // location error, and where the derivative nearly has a double root
        // the cubic is nearly flat there. Both stay below a few u times the
        // coefficient size, which is what this slack allows.
        let scale = c.b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let widen = up(err + 16.0 * U * scale);
        (lo - widen, hi + widen)
    }

    /// `C ≥ |e1(t) × e2(t)|` for `t ∈ [t1, t2]`.
    fn cross_bound(&self, t1: f64, t2: f64) -> f64 {
        let (s, e) = (&self.start, &self.end);
        let edge = |i: usize, j: usize, t: f64| {
            let v0 = s[j] - s[i];
            let v1 = e[j] - e[i];
            v0 + (v1 - v0) * t
        };
        let (a1, a2) = (edge(0, 1, t1), edge(0, 1, t2));
        let (b1, b2) = (edge(2, 3, t1), edge(2, 3, t2));
        // Lengths are convex along a linear path: largest at an end.
        let la = a1.length().max(a2.length());
        let lb = b1.length().max(b2.length());
        // Componentwise magnitude bounds, then the interval cross product.
        let ma = a1.abs().max(a2.abs());
        let mb = b1.abs().max(b2.abs());
        let norm = pcross(ma, mb).length();
        up((la * lb).min(norm) * (1.0 + 64.0 * U))
    }

    fn distance_excludes(&self, t1: f64, t2: f64) -> bool {
        let tm = 0.5 * (t1 + t2);
        let x: [DVec3; 4] =
            std::array::from_fn(|i| self.start[i] + (self.end[i] - self.start[i]) * tm);
        let lb = segment_segment_distance_lower_bound(x[0], x[1], x[2], x[3]);
        let motion = (self.move_a + self.move_b) * (0.5 * (t2 - t1));
        lb - motion - self.slack > self.r
    }

    fn visit(&mut self, t1: f64, t2: f64, depth: u32) -> Option<f64> {
        let (lo, hi) = self.cubic_range(t1, t2);
        // The Bernstein form holds CUBIC_SCALE times the triple product.
        let w = up(CUBIC_SCALE * self.r * self.cross_bound(t1, t2));
        if lo > w || hi < -w {
            return None;
        }
        if self.distance_excludes(t1, t2) {
            return None;
        }
        if t2 - t1 <= self.tolerance || depth >= MAX_THICK_DEPTH {
            return Some(t1);
        }
        self.subdivisions += 1;
        let tm = 0.5 * (t1 + t2);
        self.visit(t1, tm, depth + 1)
            .or_else(|| self.visit(tm, t2, depth + 1))
    }
}

impl ThickEdgeEdgeQuery {
    pub fn new(start: [DVec3; 4], end: [DVec3; 4], radius_a: f64, radius_b: f64) -> Self {
        Self {
            start,
            end,
            radius_a,
            radius_b,
        }
    }

    /// First time in `[0, 1]` at which the thick segments touch, to within
    /// `tolerance` in time (non-positive tolerances mean "as fine as `f64`
    /// allows"). Negative radii count as zero; non-finite input reports a
    /// contact at `t = 0`.
    pub fn toi(&self, tolerance: f64) -> ThickCcdResult {
        let finite = self
            .start
            .iter()
            .chain(self.end.iter())
            .all(|p| p.is_finite())
            && self.radius_a.is_finite()
            && self.radius_b.is_finite();
        if !finite {
            return ThickCcdResult {
                toi: Some(0.0),
                subdivisions: 0,
            };
        }
        let (s, e) = (self.start, self.end);
        let displacement = |i: usize| (e[i] - s[i]).length();
        let scale = s
            .iter()
            .chain(e.iter())
            .fold(0.0f64, |m, p| m.max(p.abs().max_element()));
        let mut search = ThickSearch {
            start: s,
            end: e,
            r: self.radius_a.max(0.0) + self.radius_b.max(0.0),
            tolerance: tolerance.max(0.0),
            cubic: EdgeEdgeQuery::new(s, e).cubic(),
            move_a: displacement(0).max(displacement(1)) * (1.0 + 64.0 * U),
            move_b: displacement(2).max(displacement(3)) * (1.0 + 64.0 * U),
            // Positions at an interior time are interpolated with a few
            // roundings each (≤ 3u of the coordinate scale per component);
            // doubled, for both segments, in all three components.
            slack: 64.0 * U * scale,
            subdivisions: 0,
        };
        let toi = search.visit(0.0, 1.0, 0);
        ThickCcdResult {
            toi,
            subdivisions: search.subdivisions,
        }
    }
}

/// Thick edge–edge CCD: segment `a0 a1` with radius `r1` against segment
/// `b0 b1` with radius `r2`, `start = [a0, a1, b0, b1]` at `t = 0` and `end`
/// at `t = 1`. See [`ThickEdgeEdgeQuery::toi`].
#[inline]
pub fn thick_edge_edge_ccd(
    start: [DVec3; 4],
    end: [DVec3; 4],
    r1: f64,
    r2: f64,
    tolerance: f64,
) -> ThickCcdResult {
    ThickEdgeEdgeQuery::new(start, end, r1, r2).toi(tolerance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64, z: f64) -> DVec3 {
        DVec3::new(x, y, z)
    }

    #[test]
    fn segment_distance_cases() {
        let d = segment_segment_distance;
        // Crossing at a gap of 0.1.
        assert!(
            (d(
                v(-1.0, 0.0, 0.1),
                v(1.0, 0.0, 0.1),
                v(0.0, -1.0, 0.0),
                v(0.0, 1.0, 0.0)
            ) - 0.1)
                .abs()
                < 1e-15
        );
        // Parallel and overlapping, 0.5 apart.
        assert!(
            (d(
                v(0.0, 0.0, 0.0),
                v(2.0, 0.0, 0.0),
                v(1.0, 0.5, 0.0),
                v(3.0, 0.5, 0.0)
            ) - 0.5)
                .abs()
                < 1e-15
        );
        // Collinear, endpoints 1 apart.
        assert!(
            (d(
                v(0.0, 0.0, 0.0),
                v(1.0, 0.0, 0.0),
                v(2.0, 0.0, 0.0),
                v(3.0, 0.0, 0.0)
            ) - 1.0)
                .abs()
                < 1e-15
        );
        // Endpoint against interior: (0, 0, 1) above the segment on the x axis.
        assert!(
            (d(
                v(0.0, 0.0, 1.0),
                v(0.0, 0.0, 2.0),
                v(-1.0, 0.0, 0.0),
                v(1.0, 0.0, 0.0)
            ) - 1.0)
                .abs()
                < 1e-15
        );
        // Degenerate segments (points).
        let p = v(1.0, 2.0, 2.0);
        assert!((d(p, p, DVec3::ZERO, DVec3::ZERO) - 3.0).abs() < 1e-15);
        assert!((d(p, p, v(0.0, 2.0, 2.0), v(2.0, 2.0, 2.0))).abs() < 1e-15);
        // Shared endpoint.
        assert_eq!(d(DVec3::ZERO, DVec3::X, DVec3::ZERO, DVec3::Y), 0.0);
        // The certified lower bound never exceeds the distance.
        let lb = segment_segment_distance_lower_bound(
            v(-1.0, 0.0, 0.1),
            v(1.0, 0.0, 0.1),
            v(0.0, -1.0, 0.0),
            v(0.0, 1.0, 0.0),
        );
        assert!(lb <= 0.1 && lb > 0.1 - 1e-14);
    }

    /// Segment `a` along x at height 0.1, static; segment `b` along y at
    /// height 0, sweeping along x from −2 to 2. They cross (in projection)
    /// from t = 1/4, at a constant gap of 0.1.
    fn crossing(r1: f64, r2: f64, tolerance: f64) -> ThickCcdResult {
        let a = [v(-1.0, 0.0, 0.1), v(1.0, 0.0, 0.1)];
        let start = [a[0], a[1], v(-2.0, -1.0, 0.0), v(-2.0, 1.0, 0.0)];
        let end = [a[0], a[1], v(2.0, -1.0, 0.0), v(2.0, 1.0, 0.0)];
        thick_edge_edge_ccd(start, end, r1, r2, tolerance)
    }

    #[test]
    fn crossing_capsules_hit_when_radii_exceed_the_gap() {
        let tol = 1e-6;
        let res = crossing(0.1, 0.05, tol);
        // Contact when b's line is within sqrt(0.15² − 0.1²) of a's end:
        // x_b = −2 + 4t = −1 − sqrt(0.0125).
        let expected = (1.0 - 0.0125f64.sqrt()) / 4.0;
        let toi = res.toi.expect("the capsules touch");
        assert!(toi <= expected, "{toi} after {expected}");
        assert!(
            toi >= expected - 3.0 * tol,
            "{toi} too early for {expected}"
        );
        assert!(res.subdivisions > 0);
    }

    #[test]
    fn crossing_capsules_miss_when_radii_are_below_the_gap() {
        let res = crossing(0.03, 0.02, 1e-6);
        assert_eq!(res.toi, None);
    }

    #[test]
    fn approaching_capsules_analytic_time() {
        // b drops onto a: gap 1 − 2t between crossing axes, r = 0.2: t = 0.4.
        let a = [v(-1.0, 0.0, 0.0), v(1.0, 0.0, 0.0)];
        let start = [a[0], a[1], v(0.0, -1.0, 1.0), v(0.0, 1.0, 1.0)];
        let end = [a[0], a[1], v(0.0, -1.0, -1.0), v(0.0, 1.0, -1.0)];
        let tol = 1e-9;
        let res = thick_edge_edge_ccd(start, end, 0.1, 0.1, tol);
        let toi = res.toi.expect("hit");
        assert!(toi <= 0.4 && toi >= 0.4 - 3.0 * tol, "{toi}");
        assert!(res.subdivisions > 0);
        // Already touching at t = 0.
        let res = thick_edge_edge_ccd(start, end, 0.6, 0.5, tol);
        assert_eq!(res.toi, Some(0.0));
    }

    #[test]
    fn parallel_capsules() {
        // Parallel segments sliding towards each other sideways: gap
        // 1 − t, r = 0.5: contact at t = 0.5.
        let start = [
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.0, 1.0, 0.0),
            v(1.0, 1.0, 0.0),
        ];
        let end = [
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
        ];
        let tol = 1e-7;
        let toi = thick_edge_edge_ccd(start, end, 0.25, 0.25, tol)
            .toi
            .expect("hit");
        assert!(toi <= 0.5 && toi >= 0.5 - 3.0 * tol, "{toi}");
        // Parallel, never closer than 1.
        let end = [start[0], start[1], v(5.0, 1.0, 0.0), v(6.0, 1.0, 0.0)];
        assert_eq!(thick_edge_edge_ccd(start, end, 0.25, 0.25, tol).toi, None);
    }

    #[test]
    fn zero_radius_and_bad_input() {
        let res = crossing(0.0, 0.0, 1e-6);
        assert_eq!(res.toi, None);
        let nan = [v(f64::NAN, 0.0, 0.0); 4];
        assert_eq!(thick_edge_edge_ccd(nan, nan, 0.1, 0.1, 1e-6).toi, Some(0.0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// Against dense sampling: no sampled time before the reported one is
        /// a contact, and the reported time is (nearly) one.
        #[test]
        fn agrees_with_sampling(
            start in proptest::array::uniform4(proptest::array::uniform3(-2.0f64..2.0)),
            end in proptest::array::uniform4(proptest::array::uniform3(-2.0f64..2.0)),
            r1 in 0.0f64..0.5,
            r2 in 0.0f64..0.5,
        ) {
            let (start, end) = (start.map(DVec3::from_array), end.map(DVec3::from_array));
            let tol = 1e-6;
            let res = thick_edge_edge_ccd(start, end, r1, r2, tol);
            let dist = |t: f64| {
                let x: [DVec3; 4] = std::array::from_fn(|i| start[i] + (end[i] - start[i]) * t);
                segment_segment_distance(x[0], x[1], x[2], x[3])
            };
            let r = r1 + r2;
            let limit = res.toi.unwrap_or(1.0);
            for k in 0..=2000 {
                let t = f64::from(k) / 2000.0;
                if t < limit || res.toi.is_none() {
                    proptest::prop_assert!(dist(t) > r - 1e-12, "contact at {} before {:?}", t, res.toi);
                }
            }
            if let Some(t) = res.toi {
                let speed: f64 = (0..4).map(|i| (end[i] - start[i]).length()).sum();
                proptest::prop_assert!(dist(t) <= r + 2.0 * speed * tol + 1e-12, "no contact near {}", t);
            }
        }
    }
}
