//! Double-double ("dd") arithmetic for the last tier of the separation
//! test, which decides near misses that plain `f64` cannot: gaps around and
//! below `1e-16` of the coordinate scale (down to where the gap changes by
//! more than itself within the narrowest time interval).
//!
//! Two things limit the `f64` test. The gap functions `n · (q_k(t) − p(t))`
//! are certified to about `u |n| |q − p|`, and a direction `n` rounded to
//! `f64` is tilted by about `u`, so the far end of a unit edge projects
//! `1e-16` off. Here the direction is a pair of `f64` vectors (`hi + lo`,
//! 106 bits), computed from double-double positions, and the gaps are
//! evaluated from *exact* end-point differences with error-free products and
//! sums, so the certified error is about `u² |n| |q − p|`.
//!
//! The rigour is in [`certify_direction`] alone: whatever `n` is, the
//! certified gaps are exact up to the bound it carries. The arithmetic that
//! builds candidate directions is merely accurate, never trusted.

use glam::DVec3;

use super::{up, ETA, U};

/// `a + b = s + e` exactly (Knuth), for finite non-overflowing input.
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a b = p + e` exactly, unless the product underflows (covered by `ETA`
/// in the bounds). With a hardware FMA, `e = fma(a, b, −p)` is exact
/// because `fma` rounds once.
#[cfg(target_feature = "fma")]
#[inline(always)]
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// `a b = p + e` exactly (Dekker), unless the product underflows (covered
/// by `ETA`) or an operand exceeds about `2^995` (the split overflows to a
/// NaN, which every later comparison treats as "not certified"). Used
/// without a hardware FMA, where `mul_add` is a slow library call.
#[cfg(not(target_feature = "fma"))]
#[inline(always)]
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    // Veltkamp's split into two 26-bit halves: x = hi + lo exactly.
    #[inline(always)]
    fn split(x: f64) -> (f64, f64) {
        let c = 134_217_729.0 * x; // 2^27 + 1
        let hi = c - (c - x);
        (hi, x - hi)
    }
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// An unevaluated sum `hi + lo`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

impl Dd {
    #[inline(always)]
    fn norm(hi: f64, lo: f64) -> Dd {
        let (h, l) = two_sum(hi, lo);
        Dd { hi: h, lo: l }
    }

    #[inline(always)]
    pub fn add(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        Dd::norm(s, e + (self.lo + o.lo))
    }

    #[inline(always)]
    pub fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    #[inline(always)]
    pub fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }

    #[inline(always)]
    pub fn mul(self, o: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, o.hi);
        Dd::norm(p, e + (self.hi * o.lo + self.lo * o.hi))
    }
}

/// A vector of double-doubles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd3 {
    pub c: [Dd; 3],
}

impl Dd3 {
    /// `x1 − x0`, exactly.
    #[inline]
    pub fn difference(x1: DVec3, x0: DVec3) -> Dd3 {
        let (a, b) = (x0.to_array(), x1.to_array());
        Dd3 {
            c: std::array::from_fn(|k| {
                let (h, l) = two_sum(b[k], -a[k]);
                Dd { hi: h, lo: l }
            }),
        }
    }

    /// `x0 + t (x1 − x0)`, with the difference formed exactly.
    #[inline]
    pub fn lerp(x0: DVec3, x1: DVec3, t: f64) -> Dd3 {
        let (a, b) = (x0.to_array(), x1.to_array());
        Dd3 {
            c: std::array::from_fn(|k| {
                let (dh, dl) = two_sum(b[k], -a[k]);
                let td = Dd { hi: t, lo: 0.0 }.mul(Dd { hi: dh, lo: dl });
                Dd { hi: a[k], lo: 0.0 }.add(td)
            }),
        }
    }

    #[inline(always)]
    pub fn sub(self, o: Dd3) -> Dd3 {
        Dd3 {
            c: std::array::from_fn(|k| self.c[k].sub(o.c[k])),
        }
    }

    #[inline]
    pub fn cross(self, o: Dd3) -> Dd3 {
        let [x, y, z] = self.c;
        let [a, b, c] = o.c;
        Dd3 {
            c: [
                y.mul(c).sub(z.mul(b)),
                z.mul(a).sub(x.mul(c)),
                x.mul(b).sub(y.mul(a)),
            ],
        }
    }
}

/// An exact end-point difference at t = 0 and at t = 1, each as a
/// `hi + lo` pair of vectors.
pub type Gap = [(DVec3, DVec3); 2];

/// Exact end-point differences `x[i] − x[j]` for the given pairs (at
/// most four; the rest of the array is unused).
pub fn exact_differences(
    start: &[DVec3; 4],
    end: &[DVec3; 4],
    pairs: &[(usize, usize)],
) -> [Gap; 4] {
    let diff = |a: DVec3, b: DVec3| {
        let (x, y, z) = (two_sum(a.x, -b.x), two_sum(a.y, -b.y), two_sum(a.z, -b.z));
        (DVec3::new(x.0, y.0, z.0), DVec3::new(x.1, y.1, z.1))
    };
    let mut out = [[(DVec3::ZERO, DVec3::ZERO); 2]; 4];
    for (o, &(i, j)) in out.iter_mut().zip(pairs) {
        *o = [diff(start[i], start[j]), diff(end[i], end[j])];
    }
    out
}

/// `n · d` for a double-double direction `n = nh + nl` and an exact
/// difference `d = dh + dl`, as an unevaluated `s + c` and a bound on the
/// error of `s + c`.
///
/// Only the leading products `nh_k dh_k` need to be exact: they are split
/// with [`two_prod`] and summed with [`two_sum`], which moves every
/// rounding error into the correction `c` exactly. The correction's own
/// additions round by at most `u` times the partial value each (tracked in
/// `weight`). The cross terms `nh dl + nl dh + nl dl` are about `u` of the
/// total and are summed in plain arithmetic: 5 roundings deep, so within
/// `5u` (taken as `8u`) of their absolute sum, i.e. about `u²` of the total.
#[inline]
fn dot(n: &Dd3, d: &(DVec3, DVec3)) -> (f64, f64, f64) {
    let (dh, dl) = (d.0.to_array(), d.1.to_array());
    let (mut s, mut c, mut weight) = (0.0f64, 0.0f64, 0.0f64);
    let (mut small, mut small_abs) = (0.0f64, 0.0f64);
    for k in 0..3 {
        let Dd { hi: nh, lo: nl } = n.c[k];
        let (p, pe) = two_prod(nh, dh[k]);
        let (s2, se) = two_sum(s, p);
        s = s2;
        let e = pe + se;
        c += e;
        weight += e.abs() + c.abs();
        let (x, y, z) = (nh * dl[k], nl * dh[k], nl * dl[k]);
        small += x + y + z;
        small_abs += x.abs() + y.abs() + z.abs();
    }
    let c2 = c + small;
    let err = up(2.0 * U * (weight + c2.abs()) + 8.0 * U * small_abs + 8.0 * ETA);
    (s, c2, err)
}

/// `v ≈ (1 − t) α + t β` and a bound on `|v − exact|`, where `α`, `β` come
/// from [`dot`] (`1 − t` is exact, as in the `f64` test). The leading
/// products are split exactly; the remainder is about `u` of the total and
/// summed plainly (6 roundings deep, bounded by `8u` of its absolute sum).
#[inline]
fn at(a: (f64, f64, f64), b: (f64, f64, f64), t: f64) -> (f64, f64) {
    let w = 1.0 - t;
    let (p1, e1) = two_prod(w, a.0);
    let (p2, e2) = two_prod(t, b.0);
    let (s, e3) = two_sum(p1, p2);
    let (x, y) = (w * a.1, t * b.1);
    let rest = e1 + e2 + e3 + x + y;
    let rest_abs = e1.abs() + e2.abs() + e3.abs() + x.abs() + y.abs();
    let v = s + rest;
    let err = up(w * a.2 + t * b.2 + 8.0 * U * rest_abs + 2.0 * U * v.abs() + 4.0 * ETA);
    (v, err)
}

/// The double-double version of `super::certify_direction`: all gaps
/// certainly positive, or all certainly negative, on `[ta, tb]`.
pub fn certify_direction(n: &Dd3, gaps: &[Gap], ta: f64, tb: f64) -> bool {
    let finite = n.c.iter().all(|x| x.hi.is_finite() && x.lo.is_finite());
    if !finite || n.c.iter().all(|x| x.hi == 0.0) {
        return false;
    }
    let (mut pos, mut neg) = (true, true);
    for g in gaps {
        let a = dot(n, &g[0]);
        let b = dot(n, &g[1]);
        let (va, ea) = at(a, b, ta);
        let (vb, eb) = at(a, b, tb);
        pos = pos && va > ea && vb > eb;
        neg = neg && -va > ea && -vb > eb;
        if !pos && !neg {
            return false;
        }
    }
    true
}
