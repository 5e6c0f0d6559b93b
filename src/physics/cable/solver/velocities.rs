//! The substeps' ends on the velocities: friction between segments and
//! the clamp of the speed that pushing out a starting depth gave them
//! (once a substep: see [`CableSystem::apply_friction_and_depth_clamp`]
//! and [`friction_and_depth_clamp`]), and restitution.

use super::contacts::Contact;
use super::coupled::UNCOUPLED;
use super::kernels;
use super::{both, BodyContact, CableSystem, Contacts, Vec3, RESTITUTION_THRESHOLD};

impl CableSystem {
    /// Coulomb friction of the contacts between segments, on the velocities
    /// at the substep's end (with the depth clamp, see
    /// [`friction_and_depth_clamp`]): a contact that pushed by `λ` (the gap's
    /// correction over the passes) changed the gap's normal velocity by
    /// `λ/h`, so its relative tangential velocity is taken away up to
    /// `μλ/h` (all of it below: it sticks), shared over the four particles
    /// as restitution's impulse is (momentum kept). It only takes relative
    /// velocity away, contact after contact, so it dissipates and never
    /// drives motion. Inside the passes (as a correction of the positions,
    /// bounded by each pass's depth, as before) it fought the chains'
    /// solve, which restored what it held, and their strain came out as
    /// motion: a heap of 200 cables crept at 1.6 cm/s after 6 s, and the
    /// faster the more friction it had (2.7 cm/s at μ = 2); the heap of 100
    /// in `a_heap_of_cables_comes_to_rest_and_sleeps_whatever_its_friction`
    /// did not sleep whole in 7 s, and now does by 6 s. So did a friction
    /// on the positions once after the passes, or in the first pass only
    /// against cables that cannot move. The price: what a substep slid
    /// stays (only the velocity goes), so against a partner held by
    /// something other than this friction (a pinned or sleeping cable, one
    /// on the floor or a body, or held by its chain's tension) a contact
    /// under a steady tangential acceleration `a` creeps at `a·h`: a cable
    /// on cables tilted 20° under the friction angle, at g·sin θ·h = 1.4
    /// cm/s. Sleep judges a particle by its displacement over the step too,
    /// so a creep faster than the sleep speed keeps a cable awake; a slower
    /// one sleeps after the sleep time.
    pub(super) fn apply_friction_and_depth_clamp(&mut self, h: f32) {
        self.on_contact_lists(|c, v, x0, held| friction_and_depth_clamp(c, v, x0, held, h));
    }

    /// `f(contacts, v, x0, held)` on each list of the substep's contacts
    /// (`v` holds particles `x0..`): those within each half of the
    /// particles on two threads (they touch only their half), then those
    /// across.
    fn on_contact_lists(&mut self, f: impl Fn(&Contacts, &mut [Vec3], usize, Held) + Sync) {
        let (par, split) = (self.parallel(), self.split);
        let held = Held {
            any_frozen: !self.held.is_empty(),
            frozen: &self.frozen,
            w: &self.w,
            prev: &self.prev,
            v_start: &self.v_start,
        };
        let [[lo0, hi0, across0], [lo1, hi1, across1]] = &self.selected;
        {
            let (v_lo, v_hi) = self.v.split_at_mut(split);
            both(
                par,
                || [lo0, lo1].map(|c| f(c, v_lo, 0, held)),
                || [hi0, hi1].map(|c| f(c, v_hi, split, held)),
            );
        }
        for c in [across0, across1] {
            f(c, &mut self.v, 0, held);
        }
    }

    /// The depth a body contact began the substep with, pushed out, is not
    /// speed either (as between segments, [`friction_and_depth_clamp`]):
    /// the contact point's opening speed, relative to the body's point,
    /// loses up to depth/h, never below its start's, shared by the two
    /// particles as the passes' corrections are; a dynamic body takes the
    /// momentum back (a coupled one, shared by inverse masses, as in
    /// restitution). A cable spawned 3 cm into a floor was launched 2.6 m
    /// up at 7 m/s (5 cm: 7 m at 12 m/s), and as far off a 50 kg box.
    /// Contacts a rebuild of the pairs dropped in the substep count too
    /// (a 100-segment cable spawned 3 cm into a floor left its tubes in
    /// the first substep, and its contacts were regenerated unpushed).
    pub(super) fn apply_body_depth_clamp(&mut self, h: f32) {
        let mut dropped = std::mem::take(&mut self.pushed_retired);
        for c in &mut dropped {
            self.clamp_body_depth(c, h);
            if c.impulse != Vec3::ZERO {
                self.retired.push((c.body, c.impulse, c.point));
            }
        }
        dropped.clear();
        self.pushed_retired = dropped;
        let mut contacts = std::mem::take(&mut self.body_contacts);
        for c in &mut contacts {
            self.clamp_body_depth(c, h);
        }
        self.body_contacts = contacts;
    }

    /// [`Self::apply_body_depth_clamp`] on one contact (the body's share of
    /// the change goes to its impulse).
    fn clamp_body_depth(&mut self, bc: &mut BodyContact, h: f32) {
        if bc.lambda <= 0.0 {
            return;
        }
        let Some((ends, [a0, a1], denom)) = kernels::contact_ends(bc, &self.segs, &self.w) else {
            return;
        };
        let [(i0, _), (i1, _)] = ends;
        if self.frozen[i0] || self.frozen[i1] {
            return;
        }
        // Speeds first: most contacts resting on a body gain no opening
        // speed, and need no depth.
        let vn = self.body_normal_speed(bc, ends, false);
        let vn0 = self.body_normal_speed(bc, ends, true);
        let gained = vn - vn0.max(0.0);
        if gained <= 0.0 {
            return;
        }
        let start = self.plane_at_substep_start(bc);
        let (_, c0, _) = kernels::body_gap(bc, ends, &self.w, &self.prev, 0, start);
        let opening = gained.min(-c0 / h);
        if opening <= 0.0 {
            return;
        }
        if bc.coupled != UNCOUPLED {
            self.restitute_coupled(bc, -opening);
            return;
        }
        self.v[i0] -= bc.n * (opening * a0 / denom);
        self.v[i1] -= bc.n * (opening * a1 / denom);
        if bc.dynamic {
            let share = kernels::moving_share(&self.w, ends);
            bc.impulse += bc.n * (opening * share / denom);
        }
    }

    /// How fast body contact `bc`'s point on its segment (at `ends`)
    /// leaves the body's point along `n`, at the substep's start or now.
    fn body_normal_speed(&self, bc: &BodyContact, ends: [(usize, f32); 2], start: bool) -> f32 {
        let [(i0, f0), (i1, f1)] = ends;
        let v = if start { &self.v_start } else { &self.v };
        let vb = bc.n.dot(bc.motion) / self.step;
        bc.n.dot(v[i0] * f0 + v[i1] * f1) - vb - self.coupled_speed(bc, start)
    }

    /// Contacts that pushed this substep and were approached faster than
    /// the threshold leave at `e` times the approach speed: an impulse
    /// divided by Σ wᵢ²/mᵢ, split by the barycentric weights.
    pub(super) fn apply_restitution(&mut self) {
        // Only pairs solved this substep can have pushed. A contact holds
        // all it needs (the pair list may have been rebuilt since).
        self.on_contact_lists(restitution);
        for k in 0..self.body_contacts.len() {
            let bc = self.body_contacts[k];
            if bc.lambda <= 0.0 || bc.e <= 0.0 {
                continue;
            }
            let Some((ends, [a0, a1], denom)) = kernels::contact_ends(&bc, &self.segs, &self.w)
            else {
                continue;
            };
            let [(i0, _), (i1, _)] = ends;
            let vn0 = self.body_normal_speed(&bc, ends, true);
            if vn0 > -RESTITUTION_THRESHOLD {
                continue;
            }
            let dv = -bc.e * vn0 - self.body_normal_speed(&bc, ends, false);
            if dv <= 0.0 {
                continue;
            }
            if bc.coupled != UNCOUPLED {
                let mut c = self.body_contacts[k];
                self.restitute_coupled(&mut c, dv);
                self.body_contacts[k] = c;
                continue;
            }
            self.v[i0] += bc.n * (dv * a0 / denom);
            self.v[i1] += bc.n * (dv * a1 / denom);
            if bc.dynamic {
                let share = kernels::moving_share(&self.w, ends);
                self.body_contacts[k].impulse -= bc.n * (dv * share / denom);
            }
        }
    }
}

/// The particles held back this substep (`frozen`: they count as pinned),
/// and every particle's inverse mass, position and velocity at the
/// substep's start.
#[derive(Clone, Copy)]
struct Held<'a> {
    /// Whether any particle is held back this substep (the held ones are
    /// the only frozen ones at its end): else `frozen` need not be read.
    any_frozen: bool,
    frozen: &'a [bool],
    w: &'a [f32],
    prev: &'a [Vec3],
    v_start: &'a [Vec3],
}

impl Held<'_> {
    /// Each particle's share of a change to contact `ct`'s gap (as in the
    /// passes, `share` moves the gap by what it multiplies): the
    /// contact's own, or with a particle held back, the others' taken
    /// again without it; `None` when nothing of it moves.
    fn shares(&self, ct: &Contact) -> Option<[f32; 4]> {
        let ids = ct.particles();
        if !(self.any_frozen && ids.iter().any(|&i| self.frozen[i])) {
            return Some(ct.share);
        }
        let weight = ct.weights();
        let moving = |k: usize| !self.frozen[ids[k]];
        let denom: f32 = (0..4)
            .filter(|&k| moving(k))
            .map(|k| weight[k] * weight[k] * self.w[ids[k]])
            .sum();
        kernels::moves_anything(denom).then(|| {
            std::array::from_fn(|k| {
                if moving(k) {
                    weight[k] * self.w[ids[k]] / denom
                } else {
                    0.0
                }
            })
        })
    }
}

/// Restitution of `contacts`, whose particles are in `v` (which holds
/// particles `x0..`): each contact that pushed this substep and was
/// approached faster than the threshold leaves at `e` times the approach
/// speed, by an impulse divided by Σ wᵢ²/mᵢ split by the barycentric
/// weights (a particle held back counts as pinned).
fn restitution(contacts: &Contacts, v: &mut [Vec3], x0: usize, held: Held) {
    let pushed = contacts.lambda.iter().zip(&contacts.e);
    for (k, (&lambda, &e)) in pushed.enumerate() {
        if lambda <= 0.0 || e <= 0.0 {
            continue;
        }
        let ct = &contacts.list[k];
        let vn0 = ct.n.dot(ct.gap(held.v_start, 0));
        if vn0 > -RESTITUTION_THRESHOLD {
            continue;
        }
        let dv = -e * vn0 - ct.n.dot(ct.gap(v, x0));
        if dv <= 0.0 {
            continue;
        }
        let Some(share) = held.shares(ct) else {
            continue;
        };
        for (i, share) in ct.particles().into_iter().zip(share) {
            v[i - x0] += ct.n * (dv * share);
        }
    }
}

/// [`CableSystem::apply_friction_and_depth_clamp`] on `contacts`, whose
/// particles are in `v` (which holds particles `x0..`). A particle held back this substep
/// counts as pinned (as in restitution): the others share the change.
///
/// With it, the depth a contact's segments began the substep with is
/// pushed out as position only: its gap's opening speed loses up to
/// depth/h, but never goes below what it was at the start (0 if it was
/// closing). A contact that bounces is clamped too: restitution then sets
/// its speed from the approach. The passes push out whatever depth the
/// segments have, and the velocities, taken from the positions, kept that
/// push as speed: a depth left between cables that settle together was
/// pushed out in one substep once the cables under fell asleep (and so
/// stood still), and in the 50,000-segment heap a cable lying on two that
/// fell asleep went up at 0.3 m/s, woke them, settled and was thrown up
/// again, for good (14 of 1,000 cables awake after 20 s). Clamped instead
/// to no more opening speed than at the start (whatever the depth), one
/// ball of 120 thrown at a pinned rope got through; capped at 5 cm/s, the
/// 50 m/s swing test's crossing check failed: pushing out what a
/// substep's approach drove in must stay speed.
///
/// Left as it is: the bound is the depth, not what this contact pushed of
/// it (λ), so speed that another constraint gave the same particles in
/// that substep may go too (bounded by the depth, and only down to the
/// start's speed: it never adds energy). Bounded by min(depth, λ)/h, one
/// cable of the 50,000-segment heap never slept: a particle of it on the
/// floor, under two sleeping cables, went back and forth at 0.03–0.09 m/s
/// every other step, with no contact clamped. And a third segment resting
/// on one that a depth is pushed out of is carried with it, and their
/// contact (which began touching, not overlapping) keeps that as speed.
/// The body contacts' depth: [`CableSystem::apply_body_depth_clamp`].
fn friction_and_depth_clamp(contacts: &Contacts, v: &mut [Vec3], x0: usize, held: Held, h: f32) {
    for (k, ct) in contacts.list.iter().enumerate() {
        let (lambda, mu) = (contacts.lambda[k], contacts.mu[k]);
        if lambda <= 0.0 {
            continue;
        }
        let ids = ct.particles();
        let Some(share) = held.shares(ct) else {
            continue;
        };
        let vg = ct.gap(v, x0);
        let vn = ct.n.dot(vg);
        // The depth the segments began the substep with, pushed out, is
        // not speed: the gap loses up to depth/h of its opening speed, down
        // to its start's (0 if it was closing); a bounce is restitution's.
        let mut opening = 0.0;
        if vn > 0.0 {
            // (The start is read only for a gap that opens.)
            let depth = ct.thickness - ct.n.dot(ct.gap(held.prev, 0));
            if depth > 0.0 {
                let vn0 = ct.n.dot(ct.gap(held.v_start, 0));
                opening = (vn - vn0.max(0.0)).min(depth / h).max(0.0);
            }
        }
        let vt = vg - ct.n * vn;
        let (speed, limit) = (vt.length(), mu * lambda / h);
        let slide = if speed <= 0.0 || mu <= 0.0 {
            Vec3::ZERO
        } else if speed <= limit {
            -vt
        } else {
            vt * (-limit / speed)
        };
        let dv = slide - ct.n * opening;
        if dv == Vec3::ZERO {
            continue;
        }
        for (&i, &share) in ids.iter().zip(&share) {
            v[i - x0] += dv * share;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::contacts::Contact;
    use super::*;

    /// The friction of one contact between two free segments: the gap's
    /// normal velocity is kept, its tangential velocity falls by exactly
    /// min(|vt|, μλ/h), and momentum (Σ v/w) is kept; with a particle held
    /// back, it keeps its velocity and the others still change the gap by
    /// the same.
    #[test]
    fn friction_takes_sliding_away_and_keeps_momentum() {
        let w = [1.0f32, 2.0, 0.5, 1.5];
        let (s, u) = (0.3f32, 0.6f32);
        let weight = [-(1.0 - s), -s, 1.0 - u, u];
        let denom: f32 = (0..4).map(|k| weight[k] * weight[k] * w[k]).sum();
        let n = Vec3::Y;
        let contact = Contact {
            pa: 0,
            pb: 2,
            n,
            thickness: 0.04,
            s,
            u,
            share: std::array::from_fn(|k| weight[k] * w[k] / denom),
            fixed: 0,
        };
        let (h, mu) = (1.0 / 240.0, 0.5);
        let gap = |v: &[Vec3]| (0..4).fold(Vec3::ZERO, |g, k| g + v[k] * weight[k]);
        let momentum = |v: &[Vec3]| (0..4).fold(Vec3::ZERO, |p, k| p + v[k] / w[k]);
        for (lambda, frozen) in [
            (1.0e-4, [false; 4]),
            (1.0e-2, [false; 4]),
            (1.0e-4, [false, true, false, false]),
        ] {
            let mut c = Contacts::default();
            c.push(contact, 0.0, mu);
            c.lambda[0] = lambda;
            let v0 = [
                Vec3::new(0.3, -0.2, 0.1),
                Vec3::new(-0.1, 0.4, 0.2),
                Vec3::new(0.05, 0.1, -0.3),
                Vec3::new(0.2, 0.0, 0.4),
            ];
            let mut v = v0;
            friction_and_depth_clamp(
                &c,
                &mut v,
                0,
                Held {
                    any_frozen: frozen.contains(&true),
                    frozen: &frozen,
                    w: &w,
                    prev: &[Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::ONE],
                    v_start: &v0,
                },
                h,
            );
            let (g0, g1) = (gap(&v0), gap(&v));
            assert!((n.dot(g1) - n.dot(g0)).abs() < 1e-6, "normal kept");
            let (t0, t1) = (g0 - n * n.dot(g0), g1 - n * n.dot(g1));
            let taken = t0.length().min(mu * lambda / h);
            assert!(
                ((t0.length() - t1.length()) - taken).abs() < 1e-5 && t1.dot(t0) >= 0.0,
                "tangential {t0} -> {t1}, {taken} taken"
            );
            for k in 0..4 {
                if frozen[k] {
                    assert_eq!(v[k], v0[k], "a held particle keeps its velocity");
                }
            }
            if !frozen.contains(&true) {
                assert!(
                    (momentum(&v) - momentum(&v0)).length() < 1e-5,
                    "momentum kept"
                );
            }
        }
    }

    /// A contact whose segments began the substep `depth` into each other
    /// loses the opening speed that pushing that depth out gave it: up to
    /// depth/h (whatever it pushed), never below its start's (0 if it was
    /// closing), bouncing or not (restitution comes after); momentum is kept, a
    /// closing gap is left alone, and so is a contact whose segments began
    /// apart. The particles sit at 2..6 of the system, read through a
    /// slice from particle 2 (as the upper half's are).
    #[test]
    fn a_contact_keeps_no_opening_speed_from_the_depth_it_began_with() {
        let (s, u, h, thickness) = (0.3f32, 0.6f32, 1.0f32 / 240.0, 0.04f32);
        let weight = [-(1.0 - s), -s, 1.0 - u, u];
        let w = [0.0f32, 0.0, 1.0, 2.0, 0.5, 1.5];
        let denom: f32 = (0..4).map(|k| weight[k] * weight[k] * w[k + 2]).sum();
        let n = Vec3::Y;
        let contact = Contact {
            pa: 2,
            pb: 4,
            n,
            thickness,
            s,
            u,
            share: std::array::from_fn(|k| weight[k] * w[k + 2] / denom),
            fixed: 0,
        };
        let gap = |v: &[Vec3]| (0..4).fold(Vec3::ZERO, |g, k| g + v[k] * weight[k]);
        let momentum = |v: &[Vec3]| (0..4).fold(Vec3::ZERO, |p, k| p + v[k] / w[k + 2]);
        for depth in [1.0e-3f32, -1.0e-3] {
            let b = Vec3::Y * (thickness - depth);
            let prev = [Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, Vec3::X, b, b + Vec3::X];
            // (The gap's normal speed after the passes, B's at the start,
            // λ, e) -> the gap's after, from 1 mm in (depth/h = 0.24 m/s).
            for (vn, b0, lambda, e, expect) in [
                (0.3f32, -0.05f32, 1.0e-3f32, 0.0f32, 0.06f32),
                (0.3, 0.0, 1.0e-3, 0.0, 0.06),
                (0.3, 0.1, 1.0e-3, 0.0, 0.1),
                (0.3, 0.5, 1.0e-3, 0.0, 0.3),
                (0.3, -2.0, 1.0e-3, 0.5, 0.06),
                (0.3, 0.0, 0.5e-3, 0.0, 0.06),
                (0.1, -0.05, 1.0e-3, 0.0, 0.0),
                (-0.1, 0.0, 1.0e-3, 0.0, -0.1),
            ] {
                let expect = if depth > 0.0 { expect } else { vn };
                let after = [Vec3::ZERO, Vec3::ZERO, Vec3::Y * vn, Vec3::Y * vn];
                let mut start = [Vec3::ZERO; 6];
                start[4] = Vec3::Y * b0;
                start[5] = Vec3::Y * b0;
                let held = Held {
                    any_frozen: false,
                    frozen: &[false; 6],
                    w: &w,
                    prev: &prev,
                    v_start: &start,
                };
                let mut c = Contacts::default();
                c.push(contact, e, 0.0);
                c.lambda[0] = lambda;
                let mut v = after;
                friction_and_depth_clamp(&c, &mut v, 2, held, h);
                let got = n.dot(gap(&v));
                assert!(
                    (got - expect).abs() < 1e-5,
                    "depth {depth}, {vn} from {b0} (λ {lambda}, e {e}): {got}, not {expect}"
                );
                assert!((momentum(&v) - momentum(&after)).length() < 1e-5);
                // Nothing pushed: nothing changes.
                c.lambda[0] = 0.0;
                let mut v = after;
                friction_and_depth_clamp(&c, &mut v, 2, held, h);
                assert_eq!(v, after);
            }
        }
    }
}
