//! Stage 4: the narrow phase, a manifold for every broad-phase pair with a
//! moving body and for every dynamic body near a plane.

use super::World;
use crate::physics::body::Body;
use crate::physics::collision::{self, Manifold, PairCache};
use crate::physics::contact::TOUCH_SLOP;
use crate::physics::math::Pose;
use crate::physics::math::Vec3;
use crate::physics::shape::ShapeKind;

impl World {
    pub(super) fn update_contacts(&mut self, dt: f32) {
        // Which pairs should have a contact: broad-phase pairs between bodies
        // that can respond, and bodies near a plane.
        for c in &mut self.contacts.contacts {
            c.alive = false;
            c.updated = false;
        }
        let mut pairs: Vec<(u32, u32)> = self.broad.pairs().collect();
        let spec = self.settings.speculative_distance;
        for &pi in &self.planes {
            let plane = match &self.bodies.by_index(pi).map(|b| (&b.shape.kind, b.pose)) {
                Some((ShapeKind::Plane(p), pose)) => p.to_world(pose),
                _ => continue,
            };
            for (h, b) in self.bodies.iter() {
                if !b.is_dynamic() {
                    continue;
                }
                let lowest = plane.box_distance(&b.shape.aabb(&b.pose));
                let (coast, pushed) = self.step_displacement(b, dt);
                let reach = spec + coast.length() + pushed.length() + self.settings.aabb_margin;
                if lowest <= reach {
                    pairs.push((pi.min(h.index), pi.max(h.index)));
                }
            }
        }
        for (a, b) in pairs {
            let (Some(ba), Some(bb)) = (self.bodies.by_index(a), self.bodies.by_index(b)) else {
                continue;
            };
            if !ba.is_dynamic() && !bb.is_dynamic() {
                continue;
            }
            let friction = (ba.friction * bb.friction).sqrt();
            let restitution = ba.restitution.max(bb.restitution);
            self.contacts.entry(a, b, friction, restitution).alive = true;
        }
        let removed = self.contacts.retain(|c| c.alive);
        for c in removed {
            if c.was_touching {
                let e = self.end_event(&c);
                self.events.push(e);
            }
        }
        // Narrow phase for every pair with a moving body.
        let bodies = &self.bodies;
        // How far ahead a speculative contact acts: the step, and the
        // substep after it (the last substep's relax pass limits the
        // velocity the next one starts with).
        let horizon = dt * (1.0 + 1.0 / self.settings.solver.substeps.max(1) as f32);
        // What gravity can add to a pair's closing within the horizon, for
        // a body falling onto one that does not fall.
        let gravity_fall = 0.5 * self.settings.gravity.length() * horizon * horizon;
        for c in &mut self.contacts.contacts {
            let (ba, bb) = (bodies.by_index(c.a).unwrap(), bodies.by_index(c.b).unwrap());
            if !Self::is_active(ba) && !Self::is_active(bb) {
                continue;
            }
            // Speculative reach: the relative linear motion of the step, plus
            // the rotational motion only up to a fraction of the bodies'
            // thickness: the solver tracks rotation linearized, which is
            // wrong for fast spins, so those are left to continuous collision.
            let linear = (bb.linear_velocity - ba.linear_velocity).length() * dt;
            let angular = (ba.angular_velocity.length() * ba.bounding_radius.min(1.0e3)
                + bb.angular_velocity.length() * bb.bounding_radius.min(1.0e3))
                * dt;
            let thin = ba.shape.thickness().min(bb.shape.thickness());
            let speculative = spec + linear + angular.min(0.5 * thin);
            let m = collision::contact_manifold(
                &ba.shape,
                &ba.pose,
                &bb.shape,
                &bb.pose,
                speculative,
                &mut c.cache,
            )
            .unwrap_or_else(|| Manifold::new(Vec3::ZERO));
            let fall = if ba.is_dynamic() != bb.is_dynamic() {
                gravity_fall
            } else {
                0.0
            };
            let (m, aimed) = aimed_at_impact(m, ba, bb, horizon, fall, speculative, &c.cache);
            c.set_manifold(m);
            // An aimed manifold's separations are the gaps along the
            // impact's normal; the pair touches when it is apart by less
            // than the slop, which it was not (only pairs apart are aimed).
            if aimed {
                c.touching = false;
            }
            c.updated = true;
        }
    }
}

/// Rounds of [`aimed_at_impact`]'s advancement...
const AIM_ROUNDS: usize = 8;
/// ...which stops this far apart (m).
const AIM_GAP: f32 = 1.0e-3;
/// Pairs moving relative to each other slower than this (m/s) keep the
/// manifold where they are (the restitution threshold's speed: below it a
/// hit does not bounce). Aimed too, the settling contacts of 4,000 spheres
/// poured into a box kept the pile awake 2 s longer.
const AIM_SPEED: f32 = 1.0;

/// A speculative manifold (the bodies apart, closing) taken where they will
/// meet within `horizon` (the step and the substep after it) instead of
/// where they are, and whether it was replaced: its normal and points from
/// the bodies' poses advanced along their velocities to within [`AIM_GAP`]
/// of the first contact (conservative advancement: the gap over the
/// closing speed along the normal, at most [`AIM_ROUNDS`] rounds, never
/// past the contact), the points moved back by each body's advance, their
/// separations measured along that normal. A pair shown not to meet within
/// the horizon gets no manifold (see below); one the rounds do not settle
/// keeps the manifold where it is. Taken at the step's start, a ball
/// striking another glancingly was pushed along the line of their centres a
/// step before the impact: at 8 m/s, 0.9 of the way off centre, the struck
/// ball left at 56° to the line of flight instead of 64°, at 50 m/s at 34°,
/// at 240 Hz still 52° (a black-box reviewer's cases). Turning is left out
/// of the advance (the bodies translate); `fall` is what gravity can add to
/// the closing within the horizon.
fn aimed_at_impact(
    m: Manifold,
    ba: &Body,
    bb: &Body,
    horizon: f32,
    fall: f32,
    speculative: f32,
    cache: &PairCache,
) -> (Manifold, bool) {
    let dv = bb.linear_velocity - ba.linear_velocity;
    let gap = |m: &Manifold| m.points().iter().map(|p| p.separation).reduce(f32::min);
    let Some(first) = gap(&m) else {
        return (m, false);
    };
    if dv.length() < AIM_SPEED || first <= TOUCH_SLOP || -dv.dot(m.normal) <= 0.0 {
        return (m, false);
    }
    let mut cache = cache.clone();
    let (mut t, mut aimed) = (0.0f32, None::<(Manifold, f32)>);
    // Met: within AIM_GAP. Missed: apart and not closing any more (the
    // gap along a translation is convex in time), or closing too slowly
    // to meet within the horizon.
    let (mut met, mut missed) = (false, None::<f32>);
    for _ in 0..AIM_ROUNDS {
        let now = aimed.as_ref().map_or(&m, |(a, _)| a);
        let (Some(sep), closing) = (gap(now), -dv.dot(now.normal)) else {
            break;
        };
        if sep <= AIM_GAP {
            met = true;
            break;
        }
        if closing <= 0.0 {
            missed = Some(sep);
            break;
        }
        let next = t + (sep - 0.5 * AIM_GAP) / closing;
        if next.is_nan() {
            break;
        }
        if next >= horizon {
            missed = Some(sep);
            break;
        }
        t = next;
        let pa = Pose::new(ba.pose.position + ba.linear_velocity * t, ba.pose.rotation);
        let pb = Pose::new(bb.pose.position + bb.linear_velocity * t, bb.pose.rotation);
        let Some(m_t) =
            collision::contact_manifold(&ba.shape, &pa, &bb.shape, &pb, speculative, &mut cache)
        else {
            break;
        };
        if m_t.count == 0 || !m_t.normal.is_finite() {
            break;
        }
        aimed = Some((m_t, t));
    }
    // A pair that does not meet within the horizon as it translates, and
    // whose turning and falling cannot close the gap left either, has no
    // contact this step: its manifold where it is, closing along the line
    // of the step's start, stopped pairs that pass each other (spheres 5 cm
    // apart at 10 m/s traded 7.6 N·s), and past a near miss's closest
    // approach the aimed one, moved back along a normal that opens, read as
    // an overlap.
    let unmodelled = (ba.angular_velocity.length() * ba.bounding_radius
        + bb.angular_velocity.length() * bb.bounding_radius)
        * horizon
        + fall;
    if let Some(sep) = missed {
        return if unmodelled < sep {
            (Manifold::new(Vec3::ZERO), true)
        } else {
            (m, false)
        };
    }
    let Some((aimed, at)) = aimed.filter(|_| met) else {
        return (m, false);
    };
    // Back to the step's start: each body's points by its own advance.
    let n = aimed.normal;
    let mut out = Manifold::new(n);
    for p in aimed.points() {
        let mut q = *p;
        q.point_a -= ba.linear_velocity * at;
        q.point_b -= bb.linear_velocity * at;
        q.separation = (q.point_b - q.point_a).dot(n);
        if q.separation.is_nan() || q.separation < 0.0 {
            return (m, false);
        }
        out.push(q);
    }
    (out, true)
}
