//! The constraint kernels of the substeps' passes, on slices: body
//! contacts and segment contacts (the segments' chain solve and damping are in
//! [`super::chains`]). Each works on the particles
//! `x0..` of a slice, so that the two halves of the cables can be solved
//! side by side.

use super::{BodyContact, Contact, Pair, Seg, Vec3};

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

/// `B(u) − A(s)` over the positions `x` of particles `x0..`.
#[inline]
pub(super) fn pair_gap(pts: &[(usize, f32, f32); 4], x: &[Vec3], x0: usize) -> Vec3 {
    pts.iter()
        .fold(Vec3::ZERO, |g, &(i, wg, sgn)| g + x[i - x0] * (wg * sgn))
}

/// Segment–body contacts: keep `n·x(s) − offset ≥ r`, the correction split
/// between the two particles by where the point lies (weights (1 − s)·w₀
/// and s·w₁ over (1 − s)²w₀ + s²w₁, which moves the point by exactly the
/// penetration), with Coulomb friction on the substep's sliding; the body
/// gets the opposite of the particles' momentum change. `x` holds
/// particles `x0..`.
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
        let [(i0, f0), (i1, f1)] = bc.weights(segs);
        let (a0, a1) = (f0 * w[i0], f1 * w[i1]);
        let denom = f0 * a0 + f1 * a1;
        if denom <= 0.0 {
            continue;
        }
        let xs = x[i0 - x0] * f0 + x[i1 - x0] * f1;
        let c = if w[i0] > 0.0 && w[i1] > 0.0 {
            bc.n.dot(xs) - bc.offset - bc.radius
        } else {
            // One end pinned (the other moves: denom > 0): each end's own
            // distance, the pinned end's depth taken as none. It is not the
            // other particle's to undo: through a lever of 1/s near the pin,
            // even a rounding error of it (1e-7 m) would throw the particle
            // metres away.
            let end = |i: usize, f: f32| {
                let d = bc.n.dot(x[i - x0]) - bc.offset - bc.radius;
                f * if w[i] == 0.0 { d.max(0.0) } else { d }
            };
            end(i0, f0) + end(i1, f1)
        };
        if c >= 0.0 {
            continue;
        }
        let slide = xs - (prev[i0] * f0 + prev[i1] * f1);
        let corr = contact_correction(bc.n, -c, slide, bc.mu);
        x[i0 - x0] += corr * (a0 / denom);
        x[i1 - x0] += corr * (a1 / denom);
        bc.lambda += -c;
        if bc.dynamic {
            bc.impulse -= corr / (denom * h);
        }
    }
}

/// Segment–segment contacts: keep `n·(B(u) − A(s)) ≥ thickness`, with
/// Coulomb friction on the substep's sliding of the contact points; the
/// correction is split over the four particles by barycentric weight
/// divided by Σ wᵢ²/mᵢ (contacts where nothing moves are not selected).
/// `lambda` receives each contact's correction. `x` holds particles `x0..`.
pub(super) fn solve_pairs(contacts: &[Contact], lambda: &mut [f32], x: &mut [Vec3], x0: usize) {
    for (ct, lambda) in contacts.iter().zip(lambda) {
        let ids = ct.particles();
        let weight = ct.weights();
        let gap = (0..4).fold(Vec3::ZERO, |g, m| g + x[ids[m] - x0] * weight[m]);
        let c = ct.n.dot(gap) - ct.thickness;
        if c >= 0.0 {
            continue;
        }
        let correction = contact_correction(ct.n, -c, gap - ct.prev_gap, ct.mu);
        for m in 0..4 {
            x[ids[m] - x0] += correction * ct.share[m];
        }
        *lambda += -c;
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
