//! The constraint kernels of the substeps' passes, on slices: body
//! contacts and segment contacts (the segments' chain solve and damping are in
//! [`super::chains`]). Each works on the particles
//! `x0..` of a slice, so that the two halves of the cables can be solved
//! side by side.

use super::contacts::Contact;
use super::{BodyContact, Pair, Seg, Vec3};

/// The four particles of a pair with their barycentric weights and the
/// side they are on (−1 for A, +1 for B).
#[inline]
pub(super) fn pair_points(p: &Pair) -> [(usize, f32, f32); 4] {
    let (pa, pb) = (p.pa as usize, p.pb as usize);
    [
        (pa, 1.0 - p.s, -1.0),
        (pa + 1, p.s, -1.0),
        (pb, 1.0 - p.u, 1.0),
        (pb + 1, p.u, 1.0),
    ]
}

/// The closest points of segments `a0 a1` and `b0 b1` (in f32, relative
/// to `a0`): the unit direction from A's to B's, and their coordinates
/// along A and B; `None` when they (nearly) touch and have no direction.
#[inline]
pub(super) fn closest_direction(
    a0: Vec3,
    a1: Vec3,
    b0: Vec3,
    b1: Vec3,
) -> Option<(Vec3, f32, f32)> {
    let (e1, b0) = (a1 - a0, b0 - a0);
    let e2 = b1 - a0 - b0;
    let (a, e) = (e1.length_squared(), e2.length_squared());
    let (f, c) = (-e2.dot(b0), -e1.dot(b0));
    let b = e1.dot(e2);
    const TINY: f32 = 1.0e-12;
    let denom = a * e - b * b;
    let s0 = if denom > 0.0 && a > TINY {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let u = if e > TINY {
        ((b * s0 + f) / e).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let s = if a > TINY {
        ((b * u - c) / a).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let d = b0 + e2 * u - e1 * s;
    let len = d.length();
    (len > 1.0e-6).then(|| (d / len, s, u))
}

/// Whether a contact whose `Σ wᵢ²/mᵢ` is `denom` moves anything: not when
/// it is zero, nor so small that its inverse overflows (the shares of its
/// particles would be infinite, and 0·∞ a NaN for a pinned one).
#[inline]
pub(super) fn moves_anything(denom: f32) -> bool {
    denom > 0.0 && (1.0 / denom).is_finite()
}

/// `B(u) − A(s)` over the positions `x` of particles `x0..`.
#[inline]
pub(super) fn pair_gap(pts: &[(usize, f32, f32); 4], x: &[Vec3], x0: usize) -> Vec3 {
    pts.iter()
        .fold(Vec3::ZERO, |g, &(i, wg, sgn)| g + x[i - x0] * (wg * sgn))
}

/// Segment–body contacts: keep `n·x(s) − offset ≥ r`, the correction split
/// between the two particles by where the point lies (weights (1 − s)·w₀
/// and s·w₁ over (1 − s)²w₀ + s²w₁, which moves the point by exactly the
/// penetration), with Coulomb friction on the substep's sliding (relative
/// to the body's point); the body gets the opposite of the particles'
/// momentum change. `x` holds particles `x0..`.
pub(super) fn solve_body_contacts(
    contacts: &mut [BodyContact],
    segs: &[Seg],
    w: &[f32],
    x: &mut [Vec3],
    x0: usize,
    prev: &[Vec3],
    h: f32,
) {
    for bc in contacts {
        let Some(([(i0, f0), (i1, f1)], [a0, a1], denom)) = contact_ends(bc, segs, w) else {
            continue;
        };
        let (xs, c, _) = body_gap(bc, [(i0, f0), (i1, f1)], w, x, x0, bc.offset);
        if c >= 0.0 {
            continue;
        }
        let slide = xs - (prev[i0] * f0 + prev[i1] * f1) - bc.slide;
        let corr = contact_correction(bc.n, -c, slide, bc.mu);
        x[i0 - x0] += corr * (a0 / denom);
        x[i1 - x0] += corr * (a1 / denom);
        bc.lambda += -c;
        if bc.dynamic {
            bc.impulse -= corr * moving_share(w, [(i0, f0), (i1, f1)]) / (denom * h);
        }
    }
}

/// A body contact's two particles with their weights, `fᵢ·wᵢ` of each,
/// and `Σ fᵢ²wᵢ`.
pub(super) type Ends = ([(usize, f32); 2], [f32; 2], f32);

/// [`Ends`] of a body contact; `None` when neither particle moves
/// ([`moves_anything`]).
#[inline]
pub(super) fn contact_ends(bc: &BodyContact, segs: &[Seg], w: &[f32]) -> Option<Ends> {
    let [(i0, f0), (i1, f1)] = bc.weights(segs);
    let (a0, a1) = (f0 * w[i0], f1 * w[i1]);
    let denom = f0 * a0 + f1 * a1;
    moves_anything(denom).then_some(([(i0, f0), (i1, f1)], [a0, a1], denom))
}

/// A body contact's point on the segment's axis, how far it is out of
/// the plane at `offset` (less the radius; negative: in), and how much that
/// changes as the plane moves (the weights of the ends whose depth counts).
/// `x` holds particles `x0..`.
#[inline]
pub(super) fn body_gap(
    bc: &BodyContact,
    [(i0, f0), (i1, f1)]: [(usize, f32); 2],
    w: &[f32],
    x: &[Vec3],
    x0: usize,
    offset: f32,
) -> (Vec3, f32, f32) {
    let xs = x[i0 - x0] * f0 + x[i1 - x0] * f1;
    if w[i0] > 0.0 && w[i1] > 0.0 {
        (xs, bc.n.dot(xs) - offset - bc.radius, 1.0)
    } else {
        // One end pinned (the other moves): each end's own distance, the
        // pinned end's depth taken as none. It is not the other particle's
        // to undo: through a lever of 1/s near the pin, even a rounding
        // error of it (1e-7 m) would throw the particle metres away.
        let end = |i: usize, f: f32| {
            let d = bc.n.dot(x[i - x0]) - offset - bc.radius;
            if w[i] > 0.0 || d > 0.0 {
                (f * d, f)
            } else {
                (0.0, 0.0)
            }
        };
        let ((c0, k0), (c1, k1)) = (end(i0, f0), end(i1, f1));
        (xs, c0 + c1, k0 + k1)
    }
}

/// The share of a body contact's correction that particles with mass
/// take: 1 (as `(1 − s) + s`) unless an end is pinned, when it is the other
/// end's weight alone (the body gets the momentum the particles received,
/// not the pinned end's lever of 1/s).
#[inline]
pub(super) fn moving_share(w: &[f32], ends: [(usize, f32); 2]) -> f32 {
    if ends.iter().all(|&(i, _)| w[i] > 0.0) {
        1.0
    } else {
        ends.iter()
            .filter(|&&(i, _)| w[i] > 0.0)
            .map(|&(_, f)| f)
            .sum()
    }
}

/// Segment–segment contacts: keep `n·(B(u) − A(s)) ≥ thickness`; the
/// correction is split over the four particles by barycentric weight
/// divided by Σ wᵢ²/mᵢ (contacts where nothing moves are not selected).
/// Their friction acts on the velocities at the substep's end
/// (`CableSystem::apply_friction_and_depth_clamp`). `lambda` receives each
/// contact's correction. `x` holds particles `x0..`.
pub(super) fn solve_pairs(contacts: &[Contact], lambda: &mut [f32], x: &mut [Vec3], x0: usize) {
    for (ct, lambda) in contacts.iter().zip(lambda) {
        let ids = ct.particles();
        // Without a branch on the depth: whether a contact is closed is
        // not predictable, and an open one adds zero.
        let depth = ct.depth(x, x0);
        let correction = ct.n * depth;
        for m in 0..4 {
            x[ids[m] - x0] += correction * ct.share[m];
        }
        *lambda += depth;
    }
}

/// The correction of a contact point that is `depth` deep along `n`: out
/// by the depth, and back against this substep's sliding `slide` as far as
/// Coulomb's cone allows (μ times the depth).
#[inline]
pub(super) fn contact_correction(n: Vec3, depth: f32, slide: Vec3, mu: f32) -> Vec3 {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A segment pinned at its first particle, its free particle 1 mm
    /// into a dynamic body's face, against a contact at `s` along it: the
    /// free particle comes out by its own depth and the body takes the
    /// momentum the particle took, however near the pin the contact lies
    /// (a lever of 1/s would multiply both).
    #[test]
    fn a_contact_next_to_a_pin_moves_the_free_particle_and_the_body_by_its_own_share() {
        let (h, w1, r) = (1.0 / 240.0, 4.0, 0.02);
        let segs = [Seg {
            p: 0,
            cable: 0,
            rest: 0.2,
            compliance: 1e-6,
        }];
        let w = [0.0, w1];
        for s in [0.5, 1e-3, 4e-8] {
            // The pin exactly on the surface (its depth a rounding error
            // off zero), the free particle 1 mm in.
            let prev = [Vec3::new(0.0, 1.0 + r, 0.0), Vec3::new(0.2, 1.0 + r, 0.0)];
            let mut x = [
                Vec3::new(0.0, 1.0 + r - 1e-7, 0.0),
                Vec3::new(0.2, 1.0 + r - 1e-3, 0.0),
            ];
            let mut c = [BodyContact::new(
                0,
                s,
                Vec3::Y,
                Vec3::new(0.0, 1.0, 0.0),
                r,
                0.0,
                0.0,
                7,
                true,
            )];
            solve_body_contacts(&mut c, &segs, &w, &mut x, 0, &prev, h);
            let moved = x[1].y - (1.0 + r - 1e-3);
            assert!(
                (0.0..=1.1e-3).contains(&moved),
                "s {s}: the free particle moved {moved} m (it was 1 mm in)"
            );
            let taken = moved / w1 / h;
            let given = -c[0].impulse.y;
            assert!(
                (given - taken).abs() <= 1e-3 * taken.abs() + 1e-6,
                "s {s}: the body got {given} N·s, the particle {taken}"
            );
        }
    }

    /// The f32 closest points agree with the f64 routine's: the points
    /// their coordinates name are within 1 µm as far apart as the exact
    /// closest points, and the direction is from A's point to B's, for
    /// random segments of up to 1 m 1 km from the origin. A quarter of
    /// them are parallel as far as f32 there allows (within 1e-4 rad):
    /// there the f32 coordinates may take the wrong end of the overlap,
    /// within 100 µm as far apart (the direction still within 1e-3 rad).
    #[test]
    fn closest_direction_agrees_with_the_f64_closest_points() {
        use crate::physics::cable::lcg;
        use crate::physics::collision::ccd_thick::closest_points_segment_segment;
        let mut seed = 11;
        let mut worst = [0.0f64; 2];
        for round in 0..20_000 {
            let base = Vec3::splat(1000.0);
            let mut q = || base + Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) - 0.5;
            let (a0, a1, b0) = (q(), q(), q());
            // Every fourth pair parallel.
            let b1 = if round % 4 == 0 {
                b0 + (a1 - a0) * 0.7
            } else {
                q()
            };
            let exact = closest_points_segment_segment(
                a0.as_dvec3(),
                a1.as_dvec3(),
                b0.as_dvec3(),
                b1.as_dvec3(),
            );
            let dist = exact.distance_squared.sqrt();
            let Some((n, s, u)) = closest_direction(a0, a1, b0, b1) else {
                assert!(dist < 1e-5, "round {round}: no direction at {dist} m");
                continue;
            };
            let (pa, pb) = (
                a0.as_dvec3().lerp(a1.as_dvec3(), s as f64),
                b0.as_dvec3().lerp(b1.as_dvec3(), u as f64),
            );
            let d = pb - pa;
            let (parallel, error) = (round % 4 == 0, (d.length() - dist).abs());
            worst[parallel as usize] = worst[parallel as usize].max(error);
            assert!(
                error < if parallel { 1e-4 } else { 1e-6 },
                "round {round}: {} against {dist}",
                d.length()
            );
            if dist > 1e-3 {
                assert!(
                    (n.as_dvec3() - d / d.length()).length() < 1e-3,
                    "round {round}: direction {n} against {}",
                    d / d.length()
                );
            }
        }
        println!(
            "worst distance error {:e} m, parallel {:e} m",
            worst[0], worst[1]
        );
    }
}
