//! Stage 4: the narrow phase, a manifold for every broad-phase pair with a
//! moving body and for every dynamic body near a plane.

use super::World;
use crate::physics::body::Body;
use crate::physics::collision::{self, ContactPoint, Manifold, PairCache};
use crate::physics::contact::{Frozen, FrozenPoint, TOUCH_SLOP};
use crate::physics::math::{Pose, Quat, Vec3};
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
            c.recycled = false;
            if let Some(m) = c
                .frozen
                .as_deref()
                .and_then(|f| recycled(f, c.touching, ba, bb))
            {
                c.set_manifold(m);
                c.recycled = true;
                c.updated = true;
                continue;
            }
            // Speculative reach: the relative linear motion of the step, plus
            // the rotational motion only up to a fraction of the bodies'
            // thickness: the solver tracks rotation linearized, which is
            // wrong for fast spins, so those are left to continuous collision.
            let linear = (bb.linear_velocity - ba.linear_velocity).length() * dt;
            let angular = (at_rim(ba, ba.angular_velocity.length())
                + at_rim(bb, bb.angular_velocity.length()))
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
            if c.touching && !aimed && c.manifold.count >= RECYCLE_POINTS {
                let f = freeze(&c.manifold, ba, bb);
                match &mut c.frozen {
                    Some(kept) => **kept = f,
                    None => c.frozen = Some(Box::new(f)),
                }
            } else {
                c.frozen = None;
            }
        }
    }
}

/// A touching pair is recycled while each kept point's anchors on the two
/// bodies have slid apart across the normal by less than this (m) since
/// the manifold was measured... A box sliding slowly off a ledge is held
/// by its kept points until they have slid this far past the edge: with a
/// limit of 2 cm on the pair's drift instead, boxes came to rest and slept
/// up to 11 mm past an edge (a reviewer's case; now up to 4.6 mm, and 1.1
/// mm measured afresh). At 3 mm a few such refreshes of a tower of 30
/// boxes kept awake, as it settled, started a lean that grew until it
/// fell, and a Jenga-like tower of 20 layers stayed awake; at 4 and 5 mm
/// both stand.
const RECYCLE_SLIP: f32 = 0.004;
/// ...and a tenth of the thinner body's [`thickness`] (half its thinnest
/// dimension), for small bodies...
///
/// [`thickness`]: crate::physics::shape::Shape::thickness
const RECYCLE_SLIP_OF_THICKNESS: f32 = 0.1;
/// ...while neither body has turned more than this (rad) since (the
/// normal and lever arms are kept in world space)...
const RECYCLE_TURN: f32 = 0.05;
/// ...nor twisted about the normal so far that its kept lever arm (off
/// by the twist times its bounding radius) errs in its contact's velocity
/// by more than this (m/s): kept over a heavy disc turning at 0.02 rad/s,
/// the arm carried a box on it outwards by 2.2 cm (a reviewer's case; 1.7
/// mm measured afresh, 2.2 mm now). Bounded by the turn times the radius
/// alone, a tower of 45 boxes refreshed as it swayed and fell; bounded by
/// the whole turn times the angular velocity, staircases of boxes leaning
/// as they settled were refreshed every step, and those within 10-20% of
/// toppling toppled (36 of a reviewer's 144, against 20 measured afresh
/// and 6 now)...
const RECYCLE_ARM_ERROR: f32 = 1.0e-4;
/// ...and while they slide and turn slower than this (m/s: the relative
/// velocity across the normal and each body's angular velocity times its
/// bounding radius): a contact that moves faster is measured every step,
/// so that a body tipping onto a new face or sliding off an edge meets it
/// in time. Along the normal the kept points stay where they are on each
/// body, and the separations are measured from them: a tall tower's sag
/// as it settles is not counted (counted, a tower of 45 boxes swayed 1.3 m
/// at the top, against 0.56 m, both measured with the first version's
/// limit of 2 cm on the pair's drift in place of [`RECYCLE_SLIP`]).
const RECYCLE_SPEED: f32 = 0.25;

/// ...and only manifolds of at least this many points: one point (a
/// sphere, a tip) cannot hold a body from tilting, and a sphere's point
/// and normal move with every roll (recycled, the 4,000 spheres of
/// `vs_rapier`'s pour were still awake after 5 s).
const RECYCLE_POINTS: usize = 2;

/// The manifold measured for a touching pair, in both bodies' frames.
fn freeze(m: &Manifold, ba: &Body, bb: &Body) -> Frozen {
    let mut f = Frozen {
        normal: m.normal,
        rotations: [ba.pose.rotation, bb.pose.rotation],
        count: m.count,
        ..Default::default()
    };
    for (fp, p) in f.points.iter_mut().zip(m.points()) {
        *fp = FrozenPoint {
            id: p.id,
            arms: [p.point_a - ba.com, p.point_b - bb.com],
            local: [
                ba.pose.inverse_transform_point(p.point_a),
                bb.pose.inverse_transform_point(p.point_b),
            ],
        };
    }
    f
}

/// The angle (rad) of the turn from `from` to `to`, and of its part about
/// the unit `axis` (its twist).
fn turn(from: Quat, to: Quat, axis: Vec3) -> (f32, f32) {
    let q = (to * from.inverse()).xyz();
    let angle = |sin_half: f32| 2.0 * sin_half.min(1.0).asin();
    (angle(q.length()), angle(q.dot(axis).abs()))
}

/// How far (m) a body's turning moves a point at its bounding radius, for
/// a turn (rad) or an angular velocity (rad/s: a speed).
fn at_rim(b: &Body, angle: f32) -> f32 {
    if angle == 0.0 {
        0.0
    } else {
        angle * b.bounding_radius.min(1.0e3)
    }
}

/// A touching pair's manifold rebuilt from its kept points at the bodies'
/// poses now (its separations measured along the kept normal), when the
/// pair has barely moved since it was measured: see [`RECYCLE_SLIP`] and
/// the limits after it. Measured again each step, the manifold of two
/// boxes stacked face to face changes its points and normal with every
/// small tilt; recycled, with the lever arms kept (see [`Frozen`]), a
/// tower of 30 unit boxes stands where it fell within 12 s, and the narrow
/// phase skips most of a resting pile. A kinematic body's contacts are
/// measured every step: it is driven, and a box on a platform tilting at
/// 0.02 rad/s, held by a kept normal, slid 2° late (a reviewer's case).
fn recycled(f: &Frozen, touching: bool, ba: &Body, bb: &Body) -> Option<Manifold> {
    let kinematic = |b: &Body| !b.is_dynamic() && !b.is_static();
    if !touching || kinematic(ba) || kinematic(bb) {
        return None;
    }
    let dv = bb.linear_velocity - ba.linear_velocity;
    let sliding = (dv - f.normal * dv.dot(f.normal)).length();
    let turning =
        at_rim(ba, ba.angular_velocity.length()) + at_rim(bb, bb.angular_velocity.length());
    if sliding + turning > RECYCLE_SPEED {
        return None;
    }
    let thinner = ba.shape.thickness().min(bb.shape.thickness());
    let slip = RECYCLE_SLIP.min(RECYCLE_SLIP_OF_THICKNESS * thinner);
    let turned_far = |from: Quat, b: &Body| {
        let (t, twist) = turn(from, b.pose.rotation, f.normal);
        t.is_nan()
            || t > RECYCLE_TURN
            || at_rim(b, twist) * b.angular_velocity.length() > RECYCLE_ARM_ERROR
    };
    if turned_far(f.rotations[0], ba) || turned_far(f.rotations[1], bb) {
        return None;
    }
    let mut m = Manifold::new(f.normal);
    for p in &f.points[..f.count] {
        let point_a = ba.pose.transform_point(p.local[0]);
        let point_b = bb.pose.transform_point(p.local[1]);
        let d = point_b - point_a;
        let separation = d.dot(f.normal);
        let slid = (d - f.normal * separation).length();
        if slid.is_nan() || slid > slip {
            return None;
        }
        m.push(ContactPoint {
            point_a,
            point_b,
            separation,
            id: p.id,
        });
    }
    Some(m)
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
