//! Dynamic bodies that move in the cable stage by what their cable
//! contacts give them (two-way coupling).
//!
//! Bodies are stepped before the cables, and the stage moves a body along
//! its step from its start pose to its end pose. A body that only took the
//! cables' impulses after the stage met them as if it had no give for a
//! whole step: a ball thrown at a rope pinned at both ends went on a full
//! step into the rope, which stretched far beyond its length and sprang
//! back through the ball; and friction spun a light ball one way a step
//! late, then the other way harder (a lagged exchange with a body lighter
//! than what it drags is unstable). So a *coupled* body moves beyond its
//! path by what its contacts give it within the stage: each contact's
//! correction is shared between the segment's particles and the body by
//! their inverse masses along it, `Σ f²wᵢ` against the body's
//! `1/M + (r×d)·I⁻¹(r×d)` (the normal and the friction part each along its
//! own direction; `M`, `I` and the lever `r` those of the body with the
//! bodies riding on it, `world/cable_riders.rs`), the body's displacement
//! and small rotation carry over from pass to pass and substep to substep
//! (as the particles' do), and the planes of its contacts move with it.
//! After the stage the body takes that displacement and rotation; its velocity takes the impulses as
//! before, never bounded (their sum is its velocity beyond its path, but
//! for the momentum of particles held back from it, `verify.rs`, which its
//! velocity takes after the stage only: given within the stage as well,
//! one ball of the pinned-rope test was never thrown back).
//!
//! Coupled: dynamic bodies awake at the stage's start none of whose
//! contacts' segments is held from its other side then (by another body,
//! or by a cable a body or pin holds up; `world/cable_supports.rs`): those
//! keep their bounded impulses and supports. A segment pinned at one end
//! gives way about its pin and does not keep a body from being coupled.
//! The coupled bodies' contacts are solved after the halves, on one
//! thread, in a fixed order; and after the substep's passes, the chains
//! that touch them take more passes with them, until they converge
//! ([`CableSystem::solve_coupled_chains`]).

use super::kernels::{
    body_gap, contact_correction, contact_ends, moving_share, solve_body_contacts, solve_pairs,
};
use super::{BodyContact, CableSystem, Seg};
use crate::physics::math::{Mat3, Quat, Vec3};

/// No coupled body (a [`BodyContact`]'s `coupled`).
pub(crate) const UNCOUPLED: u32 = u32::MAX;

/// Most extra passes over the chains that touch coupled bodies, per pass
/// of the substep ([`CableSystem::solve_coupled_chains`]). A ball dropped
/// onto a rope pinned at both ends (2 m, 20 segments, 0.5 kg, 10⁶ N/m)
/// leaves the total energy (its own, and the rope's kinetic, potential and
/// strain energy) never above its start for balls up to 200 kg (8,000
/// times a particle's mass) with 32, as measured (the test allows 0.5%);
/// with 16, up to 50 kg (the 200 kg ball's rose by 88%), and with 8 the
/// 50 kg ball's rose by 63–87% at the rope's deepest stretch. A 400 kg
/// ball's rises by 3% with 32 (and stretches the rope 18%). The 200 kg
/// ball is at the edge: the same solve with the taut chains' 3 × 3
/// inverse taken by glam instead (equal up to rounding) left its rise at
/// 1%. The passes stop once the contacts converge: light bodies take a
/// few.
const COUPLED_PASSES: u32 = 32;

/// The extra passes end once no coupled contact was deeper than this (m)
/// after its chain's solve.
const COUPLED_TOLERANCE: f32 = 1.0e-4;

/// A dynamic body moving in the stage by its contacts' corrections.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoupledBody {
    /// The body's index in the world's set.
    pub body: u32,
    /// The centre of mass at the end pose of the body and the bodies that
    /// ride on it (`world/cable_riders.rs`), which move with it as one
    /// rigid body: contacts' levers are from it, and its mass and inertia
    /// are theirs together.
    pub com: Vec3,
    pub inv_mass: f32,
    pub inv_inertia: Mat3,
    /// The body's own centre of mass at its end pose (`com` without
    /// riders; contacts' arms are from it).
    pub anchor: Vec3,
    /// Its displacement and rotation (a rotation vector, small) beyond its
    /// path so far, and where they were at the substep's start.
    pub lin: Vec3,
    pub ang: Vec3,
    lin0: Vec3,
    ang0: Vec3,
    /// Its velocity and angular velocity beyond its path, and at the
    /// substep's start.
    dv: Vec3,
    dw: Vec3,
    dv0: Vec3,
    dw0: Vec3,
}

impl CoupledBody {
    pub(crate) fn new(body: u32, com: Vec3, inv_mass: f32, inv_inertia: Mat3) -> Self {
        Self::composite(body, com, com, inv_mass, inv_inertia)
    }

    /// A body with riders: its own centre of mass `anchor`, and their
    /// centre of mass, inverse mass and inverse inertia together.
    pub(crate) fn composite(
        body: u32,
        anchor: Vec3,
        com: Vec3,
        inv_mass: f32,
        inv_inertia: Mat3,
    ) -> Self {
        Self {
            body,
            com,
            inv_mass,
            inv_inertia,
            anchor,
            lin: Vec3::ZERO,
            ang: Vec3::ZERO,
            lin0: Vec3::ZERO,
            ang0: Vec3::ZERO,
            dv: Vec3::ZERO,
            dw: Vec3::ZERO,
            dv0: Vec3::ZERO,
            dw0: Vec3::ZERO,
        }
    }

    /// How far the body's point at `arm` (from `com`) is
    /// beyond its path: now, and at the substep's start.
    #[inline]
    fn moved(&self, arm: Vec3) -> Vec3 {
        self.lin + self.ang.cross(arm)
    }

    #[inline]
    fn moved0(&self, arm: Vec3) -> Vec3 {
        self.lin0 + self.ang0.cross(arm)
    }

    /// Its inverse mass at `arm` along unit direction `d`.
    #[inline]
    fn inv_mass_along(&self, arm: Vec3, d: Vec3) -> f32 {
        let rd = arm.cross(d);
        self.inv_mass + rd.dot(self.inv_inertia * rd)
    }

    /// Moves the body by the positional impulse `j` (N·s·s) at `arm`.
    #[inline]
    fn push(&mut self, arm: Vec3, j: Vec3) {
        self.lin += j * self.inv_mass;
        self.ang += self.inv_inertia * arm.cross(j);
    }

    /// The body's rotation and centre of mass moved on by its extra
    /// motion (now, or at the substep's start): `rotation` and `com` (the
    /// body's on its path), turned about the riders' and its centre of
    /// mass there.
    pub(crate) fn displaced(&self, com: Vec3, rotation: Quat, now: bool) -> (Vec3, Quat) {
        self.member_displaced(com + (self.com - self.anchor), com, rotation, now)
    }

    /// A rider's (or the body's) centre of mass `com` and `rotation` moved
    /// on by the extra motion, turned about `pivot` (the centre of mass of
    /// them all, where `com` is).
    pub(crate) fn member_displaced(
        &self,
        pivot: Vec3,
        com: Vec3,
        rotation: Quat,
        now: bool,
    ) -> (Vec3, Quat) {
        let (lin, ang) = if now {
            (self.lin, self.ang)
        } else {
            (self.lin0, self.ang0)
        };
        let turn = Quat::from_scaled_axis(ang);
        (
            pivot + lin + turn * (com - pivot),
            (turn * rotation).normalize(),
        )
    }

    /// The change of velocity and angular velocity an impulse `j` at
    /// `point` gives the body and its riders (a rider at `com` moves at
    /// `dv + dw × (com − self.com)`).
    pub(crate) fn response(&self, j: Vec3, point: Vec3) -> (Vec3, Vec3) {
        (
            j * self.inv_mass,
            self.inv_inertia * (point - self.com).cross(j),
        )
    }

    /// [`Self::response`] as a member (the body or a rider) whose centre
    /// of mass is at `com` takes it: its velocity and angular velocity.
    pub(crate) fn member_response(&self, j: Vec3, point: Vec3, com: Vec3) -> (Vec3, Vec3) {
        let (dv, dw) = self.response(j, point);
        (dv + dw.cross(com - self.com), dw)
    }
}

impl CableSystem {
    /// The stage's coupled bodies (after the first body contacts): their
    /// contacts, now and any added later, are solved with them.
    pub(crate) fn couple(&mut self, bodies: Vec<CoupledBody>) {
        self.coupled_of = bodies
            .iter()
            .enumerate()
            .map(|(k, b)| (b.body, k as u32))
            .collect();
        self.coupled = bodies;
        self.sort_body_contacts();
    }

    /// The stage's coupled bodies.
    pub(crate) fn coupled_bodies(&self) -> &[CoupledBody] {
        &self.coupled
    }

    /// The coupled body of contact `c`, if its body is one.
    pub(crate) fn coupled_body(&self, c: &BodyContact) -> Option<&CoupledBody> {
        self.coupled.get(c.coupled as usize)
    }

    /// Tags each body contact with its coupled body (and its lever).
    pub(super) fn tag_coupled(&mut self) {
        if self.coupled.is_empty() {
            return;
        }
        for c in &mut self.body_contacts {
            c.coupled = UNCOUPLED;
            if let Some(&k) = self.coupled_of.get(&c.body) {
                c.coupled = k;
                let b = &self.coupled[k as usize];
                // Its impulses go where it touches at the end pose.
                c.point = b.anchor + c.arm;
                c.lever = c.point - b.com;
            }
        }
    }

    /// Substep start: each coupled body goes on at its extra velocity.
    pub(super) fn predict_coupled(&mut self, h: f32) {
        for b in &mut self.coupled {
            b.lin0 = b.lin;
            b.ang0 = b.ang;
            b.dv0 = b.dv;
            b.dw0 = b.dw;
            b.lin += b.dv * h;
            b.ang += b.dw * h;
        }
    }

    /// Substep end: each coupled body's extra velocity from its move.
    pub(super) fn finish_coupled(&mut self, h: f32) {
        for b in &mut self.coupled {
            b.dv = (b.lin - b.lin0) / h;
            b.dw = (b.ang - b.ang0) / h;
        }
    }

    /// Extra passes, after the substep's, over the chains that touch
    /// coupled bodies: their chain solves, their contacts (with bodies and
    /// with segments) and the coupled contacts, until no coupled contact
    /// is deeper than [`COUPLED_TOLERANCE`] after its chain's solve, at
    /// most [`COUPLED_PASSES`] per pass of the substep.
    ///
    /// Gauss–Seidel passes that alternate a chain's solve and a contact
    /// with a body hundreds of times heavier than its particles converge
    /// slowly: the contact moves the particles (they have the smaller
    /// mass), the chain pulls them back, and the body gives way by only
    /// its share each time. With the substep's four passes, a 10 kg ball
    /// dropped 30 cm onto a 0.5 kg rope pinned at both ends stretched it
    /// 18–20% (its own stiffness gives about 2%), and boxes of 25 and 50 kg
    /// fell off a bridge of two such ropes.
    ///
    /// The unit is a chain group (up to [`super::chains::GROUP`] lanes of
    /// whole cables: its other cables take the passes too). Finding their
    /// contacts reads the substep's contacts once; each pass then costs
    /// what those groups and contacts cost. It runs on one thread (its
    /// order is fixed), and at least one pass is taken.
    pub(super) fn solve_coupled_chains(&mut self, inv_h2: f32, h: f32, iterations: u32) {
        let mut local: Vec<usize> = Vec::new();
        for bc in &self.body_contacts[self.coupled_split..] {
            let p = self.segs[bc.seg as usize].p as usize;
            if let Some(g) = self.groups.iter().position(|g| g.holds(p)) {
                if !local.contains(&g) {
                    local.push(g);
                }
            }
        }
        if local.is_empty() {
            return;
        }
        local.sort_unstable();
        // Their particles: runs, ascending.
        let mut runs: Vec<std::ops::Range<usize>> = local
            .iter()
            .flat_map(|&g| self.groups[g].lane_ranges())
            .filter(|r| !r.is_empty())
            .collect();
        runs.sort_unstable_by_key(|r| r.start);
        let inside = |i: usize| {
            let k = runs.partition_point(|r| r.start <= i);
            k > 0 && runs[k - 1].contains(&i)
        };
        // Their other contacts: with bodies not coupled, and with segments
        // (where any of the four particles is theirs).
        let segs = &self.segs;
        let bodies: Vec<usize> = (0..self.coupled_split)
            .filter(|&k| inside(segs[self.body_contacts[k].seg as usize].p as usize))
            .collect();
        let mut pairs: Vec<(usize, usize, usize)> = Vec::new();
        // In the regular passes' order (each half's lists of its own, then
        // the lists across), which does not depend on where the pair list
        // was cut ([`CableSystem::select_active`]).
        for (half, l, k, ct) in self.selected_in_order() {
            if ct.particles().into_iter().any(inside) {
                pairs.push((half, l, k));
            }
        }
        for _ in 0..COUPLED_PASSES * iterations {
            self.local_pass(&local, &bodies, &pairs, inv_h2, h);
            self.stats.coupled_passes += 1;
            if self.solve_coupled_pass(h) < COUPLED_TOLERANCE {
                break;
            }
        }
    }

    /// One pass over some chain groups (`local`), then over some body
    /// contacts (by index) and contacts between segments (by half, list
    /// and index in `selected`), in that order, on one thread: the extra
    /// passes of the coupled bodies' chains and of strained ones
    /// (`strained.rs`).
    pub(super) fn local_pass(
        &mut self,
        local: &[usize],
        bodies: &[usize],
        pairs: &[(usize, usize, usize)],
        inv_h2: f32,
        h: f32,
    ) {
        for &g in local {
            self.groups[g].solve_direct(&mut self.scratch[0], &mut self.x, 0, inv_h2);
        }
        for &k in bodies {
            solve_body_contacts(
                &mut self.body_contacts[k..k + 1],
                &self.segs,
                &self.w,
                &mut self.x,
                0,
                &self.prev,
                h,
            );
        }
        for &(half, l, k) in pairs {
            let c = &mut self.selected[half][l];
            solve_pairs(&c.list[k..k + 1], &mut c.lambda[k..k + 1], &mut self.x, 0);
        }
    }

    /// The coupled bodies' contacts (one pass; see [`solve_coupled`]):
    /// the deepest a contact was.
    pub(super) fn solve_coupled_pass(&mut self, h: f32) -> f32 {
        let from = self.coupled_split;
        solve_coupled_both_ways(
            &mut self.body_contacts[from..],
            &mut self.coupled,
            &self.segs,
            &self.w,
            &mut self.x,
            &self.prev,
            h,
        )
    }

    /// The restitution of a coupled body's contact `bc` (the normal speed
    /// to add, `dv`, shared with the body as its correction is; the body's
    /// impulse goes to `bc`).
    pub(super) fn restitute_coupled(&mut self, bc: &mut BodyContact, dv: f32) {
        let Some(([(i0, f0), (i1, f1)], [a0, a1], denom)) = contact_ends(bc, &self.segs, &self.w)
        else {
            return;
        };
        let share = moving_share(&self.w, [(i0, f0), (i1, f1)]);
        let b = &mut self.coupled[bc.coupled as usize];
        // The body's normal speed counts whole (`coupled_speed`), so its
        // share of the change is `share·w_b`.
        let k_n = dv / (denom + share * b.inv_mass_along(bc.lever, bc.n));
        self.v[i0] += bc.n * (k_n * a0);
        self.v[i1] += bc.n * (k_n * a1);
        let j = -bc.n * (k_n * share);
        b.dv += j * b.inv_mass;
        b.dw += b.inv_inertia * bc.lever.cross(j);
        bc.impulse += j;
    }

    /// Where body contact `bc`'s plane was (its offset along `n`) when the
    /// substep began: back by the body point's move over the substep, and
    /// for a coupled body by its extra move within the substep.
    pub(super) fn plane_at_substep_start(&self, bc: &BodyContact) -> f32 {
        let start = bc.offset - bc.n.dot(bc.slide);
        match self.coupled_body(bc) {
            Some(b) => start + bc.n.dot(b.moved0(bc.lever)),
            None => start,
        }
    }

    /// A coupled body's normal speed at contact `bc` beyond its path, at
    /// the substep's start (`start`) or now.
    pub(super) fn coupled_speed(&self, bc: &BodyContact, start: bool) -> f32 {
        self.coupled_body(bc).map_or(0.0, |b| {
            let (v, w) = if start { (b.dv0, b.dw0) } else { (b.dv, b.dw) };
            bc.n.dot(v + w.cross(bc.lever))
        })
    }
}

/// [`solve_coupled`] in contact order and in reverse order, from the same
/// state, and the mean of the two: what the pass leaves no longer depends
/// on which of two contacts sharing a load comes first.
///
/// Solved one after another, the first of two contacts that hold a body
/// together takes each pass's whole correction along its own normal, and
/// the second, already closed by it, none. A ball in the V of a rope pinned
/// at both ends (its contacts on the two arms, normals ±6° from vertical)
/// had 86% of the load on the arm of the lower segment index, and so was
/// pushed along the rope, toward the higher indices, by a tenth of its
/// load: dropped 1 mm on either side of the middle or 1 cm to one side, it
/// was at +17 cm 25 steps later, and left the middle for good. Each pass
/// only moves points by linear corrections, so the mean of two passes
/// from the same start is a pass too. (It is not always shallower than
/// both: a contact's gap is linear in the points only while both its
/// particles move; with one end pinned it is convex. The convergence test
/// reads the depths each pass found, before its corrections.) It costs a
/// second pass, and copies of the coupled contacts and bodies, a pass.
fn solve_coupled_both_ways(
    contacts: &mut [BodyContact],
    bodies: &mut [CoupledBody],
    segs: &[Seg],
    w: &[f32],
    x: &mut [Vec3],
    prev: &[Vec3],
    h: f32,
) -> f32 {
    if contacts.len() < 2 {
        return solve_coupled(false, contacts, bodies, segs, w, x, prev, h);
    }
    let mut particles: Vec<usize> = contacts
        .iter()
        .flat_map(|bc| {
            let p = segs[bc.seg as usize].p as usize;
            [p, p + 1]
        })
        .collect();
    particles.sort_unstable();
    particles.dedup();
    let x_start: Vec<Vec3> = particles.iter().map(|&i| x[i]).collect();
    let (bodies_start, contacts_start) = (bodies.to_vec(), contacts.to_vec());
    let forward = solve_coupled(false, contacts, bodies, segs, w, x, prev, h);
    let x_forward: Vec<Vec3> = particles.iter().map(|&i| x[i]).collect();
    let (bodies_forward, contacts_forward) = (bodies.to_vec(), contacts.to_vec());
    for (&i, &p) in particles.iter().zip(&x_start) {
        x[i] = p;
    }
    bodies.copy_from_slice(&bodies_start);
    contacts.copy_from_slice(&contacts_start);
    let backward = solve_coupled(true, contacts, bodies, segs, w, x, prev, h);
    for (&i, &p) in particles.iter().zip(&x_forward) {
        x[i] = (x[i] + p) * 0.5;
    }
    for (b, f) in bodies.iter_mut().zip(&bodies_forward) {
        b.lin = (b.lin + f.lin) * 0.5;
        b.ang = (b.ang + f.ang) * 0.5;
    }
    for (c, f) in contacts.iter_mut().zip(&contacts_forward) {
        c.lambda = (c.lambda + f.lambda) * 0.5;
        c.impulse = (c.impulse + f.impulse) * 0.5;
    }
    forward.max(backward)
}

/// Coupled body contacts: as [`super::kernels::solve_body_contacts`], the
/// plane moved with the body's extra motion, and each correction shared
/// with the body by inverse mass (see the module documentation).
#[allow(clippy::too_many_arguments)]
fn solve_coupled(
    backward: bool,
    contacts: &mut [BodyContact],
    bodies: &mut [CoupledBody],
    segs: &[Seg],
    w: &[f32],
    x: &mut [Vec3],
    prev: &[Vec3],
    h: f32,
) -> f32 {
    let mut deepest: f32 = 0.0;
    let n = contacts.len();
    for m in 0..n {
        let bc = &mut contacts[if backward { n - 1 - m } else { m }];
        let Some(([(i0, f0), (i1, f1)], [a0, a1], denom)) = contact_ends(bc, segs, w) else {
            continue;
        };
        let b = &mut bodies[bc.coupled as usize];
        let moved = b.moved(bc.lever);
        let offset = bc.offset + bc.n.dot(moved);
        let (xs, c, counted) = body_gap(bc, [(i0, f0), (i1, f1)], w, x, 0, offset);
        if c >= 0.0 {
            continue;
        }
        deepest = deepest.max(-c);
        let slide = xs - (prev[i0] * f0 + prev[i1] * f1) - bc.slide - (moved - b.moved0(bc.lever));
        let corr = contact_correction(bc.n, -c, slide, bc.mu);
        let share = moving_share(w, [(i0, f0), (i1, f1)]);
        // The normal and the friction part, each by the inverse masses
        // along it.
        let normal = bc.n * corr.dot(bc.n);
        let tangent = corr - normal;
        let t_len = tangent.length();
        // Moving the body's point by δ along `n` changes the depth by
        // `counted·δ` (the ends whose depth counts, a pinned end only while
        // it is out), and the body takes `share` of the correction.
        let wn = b.inv_mass_along(bc.lever, bc.n);
        let mut lam = normal / (denom + share * counted * wn);
        if t_len > 0.0 {
            let wt = b.inv_mass_along(bc.lever, tangent / t_len);
            lam += tangent / (denom + share * share * wt);
        }
        x[i0] += lam * a0;
        x[i1] += lam * a1;
        let j = -lam * share;
        b.push(bc.lever, j);
        bc.lambda += -c;
        bc.impulse += j / h;
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One segment of 20 cm from particle 0 to 1.
    fn one_segment() -> Seg {
        Seg {
            p: 0,
            cable: 0,
            rest: 0.2,
            compliance: 1e-6,
        }
    }

    /// A free segment (two particles of 0.1 kg) 1 cm deep in a coupled
    /// body's face at its middle, the body 0.2 kg: the correction is
    /// shared by inverse mass along the normal (`Σ f²w = 5` against the
    /// body's `1/M + (r×n)·I⁻¹(r×n)`), the contact then holds exactly,
    /// and the body takes the momentum the particles took. With the lever
    /// along the normal (a ball's), the body does not turn; off it, it
    /// turns, and gives way more.
    #[test]
    fn a_contact_shares_its_correction_with_a_coupled_body_by_inverse_mass() {
        let h = 1.0 / 240.0;
        let segs = [one_segment()];
        let w = [10.0, 10.0];
        for (arm, turns) in [
            (Vec3::new(0.0, 0.3, 0.0), false),
            (Vec3::new(0.4, 0.3, 0.0), true),
        ] {
            let start = [Vec3::new(-0.1, -0.01, 0.0), Vec3::new(0.1, -0.01, 0.0)];
            let mut x = start;
            let mut c = BodyContact::new(0, 0.5, Vec3::Y, Vec3::ZERO, 0.0, 0.0, 0.0, 0, true);
            c.coupled = 0;
            c.arm = arm;
            c.lever = arm;
            let inertia = Mat3::from_diagonal(Vec3::splat(50.0));
            let mut bodies = [CoupledBody::new(0, -arm, 5.0, inertia)];
            let wb = bodies[0].inv_mass_along(arm, Vec3::Y);
            assert_eq!(wb > 5.0, turns, "the lever's share: {wb}");
            let mut contacts = [c];
            for _ in 0..3 {
                let _ = solve_coupled(
                    false,
                    &mut contacts,
                    &mut bodies,
                    &segs,
                    &w,
                    &mut x,
                    &start,
                    h,
                );
            }
            let b = bodies[0];
            let (point, body) = ((x[0].y + x[1].y) * 0.5, b.moved(arm).y);
            // The particles' point and the body's point each moved by its
            // share of the depth, and they touch.
            assert!(
                (point - (-0.01 + 0.01 * 5.0 / (5.0 + wb))).abs() < 1e-6,
                "{point}"
            );
            assert!((body - (-0.01 * wb / (5.0 + wb))).abs() < 1e-6, "{body}");
            assert!((point - body).abs() < 1e-6);
            assert_eq!(b.ang != Vec3::ZERO, turns, "turned: {}", b.ang);
            // Momentum: the particles' gain is the body's impulse, and
            // the body's linear move is that impulse over its mass.
            let gained: Vec3 = (0..2).map(|i| (x[i] - start[i]) / (w[i] * h)).sum();
            assert!((gained + contacts[0].impulse).length() < 1e-4);
            assert!((b.lin - contacts[0].impulse * h * b.inv_mass).length() < 1e-7);
        }
    }

    /// A coupled ball in the V of a rope (two segments meeting at a
    /// particle 1 cm below their other ends), 5 mm into both arms, its
    /// contacts' normals mirror images: a pass pushes it straight up. In
    /// one order only, the first contact took the whole correction along
    /// its own normal and pushed the ball sideways by a tenth of it.
    #[test]
    fn a_body_in_a_v_is_pushed_straight_out_whichever_contact_comes_first() {
        let segs = [0, 1].map(|p| Seg { p, ..one_segment() });
        let w = [10.0; 3];
        let start = [
            Vec3::new(-0.1, 0.01, 0.0),
            Vec3::ZERO,
            Vec3::new(0.1, 0.01, 0.0),
        ];
        let com = Vec3::new(0.0, 0.1, 0.0);
        let contact = |seg: u32, s: f32, side: f32| {
            let n = Vec3::new(0.1 * side, -1.0, 0.0).normalize();
            let p = segs[seg as usize].p as usize;
            let at = start[p].lerp(start[p + 1], s);
            let q = at + n * 0.005;
            let mut c = BodyContact::new(seg, s, n, q, 0.0, 0.0, 0.0, 0, true);
            c.coupled = 0;
            c.arm = q - com;
            c.lever = c.arm;
            c
        };
        let h = 1.0 / 240.0;
        let run = |both: bool| {
            let mut x = start;
            let mut bodies = [CoupledBody::new(0, com, 0.02, Mat3::IDENTITY * 2.0)];
            let mut contacts = [contact(0, 0.9, -1.0), contact(1, 0.1, 1.0)];
            if both {
                solve_coupled_both_ways(&mut contacts, &mut bodies, &segs, &w, &mut x, &start, h);
            } else {
                solve_coupled(
                    false,
                    &mut contacts,
                    &mut bodies,
                    &segs,
                    &w,
                    &mut x,
                    &start,
                    h,
                );
            }
            (bodies[0].lin, bodies[0].ang)
        };
        let (lin, ang) = run(true);
        assert!(lin.y > 0.0, "pushed out: {lin}");
        assert!(lin.x.abs() < 1e-6 * lin.y, "pushed sideways: {lin}");
        assert!(ang.length() < 1e-6 * lin.y, "turned: {ang}");
        // The same contacts in one order: the first one's push.
        let (lin, _) = run(false);
        assert!(lin.x.abs() > 0.05 * lin.y, "one order: {lin}");
    }

    /// A segment pinned at one end, the pinned end 5 mm out of a coupled
    /// body's face and the free one 2 cm in, the contact at its middle:
    /// moving the body's face moves both ends' depths, so one solve leaves
    /// the contact exactly touching (a correction sized for the free end's
    /// share alone overshot it by 2.5 mm).
    #[test]
    fn a_segment_pinned_at_one_end_is_solved_against_a_coupled_body_in_one_go() {
        let segs = [one_segment()];
        let w = [0.0, 10.0];
        let start = [Vec3::new(-0.1, 0.005, 0.0), Vec3::new(0.1, -0.02, 0.0)];
        let mut x = start;
        let mut c = BodyContact::new(0, 0.5, Vec3::Y, Vec3::ZERO, 0.0, 0.0, 0.0, 0, true);
        c.coupled = 0;
        c.arm = Vec3::new(0.0, 0.3, 0.0);
        c.lever = c.arm;
        let mut bodies = [CoupledBody::new(0, -c.arm, 5.0, Mat3::IDENTITY)];
        let mut contacts = [c];
        let _ = solve_coupled(
            false,
            &mut contacts,
            &mut bodies,
            &segs,
            &w,
            &mut x,
            &start,
            1.0 / 240.0,
        );
        let offset = bodies[0].moved(c.arm).y;
        let (_, gap, counted) = body_gap(&contacts[0], [(0, 0.5), (1, 0.5)], &w, &x, 0, offset);
        assert_eq!(counted, 1.0, "both ends' depths count");
        assert!(gap.abs() < 1e-6, "left {gap} m off touching");
        assert_eq!(x[0], start[0], "the pin stays");
    }
}
