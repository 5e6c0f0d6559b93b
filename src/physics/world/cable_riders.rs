//! Bodies that ride on a coupled body: a stack resting on a body that
//! moves with its cables inside the cable stage (`cable/solver/coupled.rs`)
//! moves with it there, as one rigid body.
//!
//! Bodies are stepped before the cables, and the rigid solver does not see
//! the cables: a box resting on a box on a rope bridge fell with it in the
//! rigid step, the cable stage pushed only the lower one back up (it alone
//! touches the ropes), and the next rigid step pushed them apart again. The
//! upper box sank up to 3 cm into the lower one, never came to rest and
//! crept off it (a 0.5 kg box on a 1 kg box fell off in 7 s; 11 of the 13
//! stacks of `tests/cable_ropes.rs` fell off). Now the coupled body and the
//! bodies resting on it (its *riders*) move in the stage as one: their mass
//! and inertia together share each correction with the particles, and the
//! riders take its extra motion and the cables' impulses as points of the
//! same rigid body, so the stack keeps its contacts as the rigid step left
//! them.
//!
//! Moved as one, a rider keeps its motion relative to the body under it
//! for good (the rigid step changes it only where they press, and the
//! stage not at all): a 5 kg box on a 1 kg box rocked on an edge with its
//! far side 2–3 mm up and never came to rest. So each contact holding a
//! rider up ends the stage plastic along its normal ([`World::settle_riders`]:
//! without it 7 of the 13 stacks never slept and one fell off).
//!
//! A rider is an awake dynamic body that touches no cable, rests on the
//! coupled body or another of its riders (their contact's normal, from the
//! lower body to the upper, within 60° of up, its points within
//! [`RIDING_GAP`], and the upper body not parting from the lower faster
//! than [`World::riding_speed`]), and touches nothing else but awake
//! dynamic bodies above it that do not rest on it in that sense: a body
//! also resting on the ground, on another coupled body or on a body
//! outside the stack keeps its own motion, and so do bodies resting on it.
//! A dynamic body above a rider that does not rest on it (a box a few
//! millimetres above it, landing, or tilted on an edge with its far side
//! beyond the riding gap) is moved by the rigid step alone, and leaves
//! the rider under it riding: before, it kept that rider, and all under it
//! but the coupled body, out of the stack, and the body, pushed up by its
//! cables alone, went into them (5.4 cm in a three-box stack dropped on
//! the rope bridge, under a box tilted 0.9–3.2 mm above the one below it,
//! found with the coupled contacts solved deepest first, an experiment not
//! kept). A box tilted on an edge does press on the rider; the stage,
//! which does not move it, may then take the rider some millimetres into
//! it (8.3 mm there), for the next rigid step to resolve. Static,
//! kinematic and sleeping bodies above, and bodies resting on a member
//! but kept out of the stack (touching a cable, say), still keep it out.

use super::World;
use crate::physics::body::Body;
use crate::physics::cable::solver::CoupledBody;
use crate::physics::math::{Mat3, Vec3};
use std::collections::{BTreeSet, HashMap};

/// A contact holds a body up when its normal (from the lower body to the
/// upper) is at least this close to up (cos 60°)...
const UPRIGHT: f32 = 0.5;

/// ...none of its points is farther apart than this (m): closer than
/// touching (7.5 mm, for events and islands), as the rider takes the lower
/// body's push (and the bodies do not part faster than
/// [`World::riding_speed`]).
const RIDING_GAP: f32 = 2.5e-3;

/// A contact holding a rider up.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hold {
    lower: u32,
    upper: u32,
    /// From the lower body to the upper.
    normal: Vec3,
}

/// Passes of [`World::settle_riders`] over a stack's contacts (each
/// contact's exchange disturbs its neighbours').
const SETTLE_PASSES: usize = 4;

/// Whether an inverse inertia can be inverted (a body free to turn).
fn invertible(m: Mat3) -> bool {
    let d = m.determinant();
    d != 0.0 && d.is_finite()
}

impl World {
    /// The bodies that ride on each of the coupled bodies `roots` (each
    /// pair: root slot, rider slot), none of them in `touched` (bodies with
    /// cable contacts); and the contacts that hold them up.
    pub(super) fn cable_riders(
        &self,
        roots: &[u32],
        touched: &BTreeSet<u32>,
    ) -> (Vec<(u32, u32)>, Vec<Hold>) {
        let up = -self.settings.gravity.normalize_or_zero();
        if up == Vec3::ZERO || roots.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let movable = |slot: u32| {
            self.bodies
                .by_index(slot)
                .is_some_and(|b| b.is_dynamic() && !b.sleeping && b.inv_mass > 0.0)
        };
        // Each body's touching contacts: the other body, the normal from
        // this one to it, and whether the contact rests: no point apart at
        // the step's start (when the manifolds were taken), and the bodies
        // not parting faster than [`Self::riding_speed`] at the points'
        // centre after the rigid step.
        let speed = self.riding_speed();
        let mut touching: HashMap<u32, Vec<(u32, Vec3, bool)>> = HashMap::new();
        for c in self.contacts.contacts.iter().filter(|c| c.touching) {
            let (Some(a), Some(b)) = (self.bodies.by_index(c.a), self.bodies.by_index(c.b)) else {
                continue;
            };
            let (n, points) = (c.manifold.normal, c.manifold.points());
            let at = points.iter().map(|p| p.point()).sum::<Vec3>() / points.len().max(1) as f32;
            let rests = !points.is_empty()
                && points.iter().all(|p| p.separation <= RIDING_GAP)
                && normal_speed(a, b, n, at) <= speed;
            touching.entry(c.a).or_default().push((c.b, n, rests));
            touching.entry(c.b).or_default().push((c.a, -n, rests));
        }
        let none = Vec::new();
        let around = |slot: u32| touching.get(&slot).unwrap_or(&none);
        let mut owner: HashMap<u32, u32> = roots.iter().map(|&r| (r, r)).collect();
        let mut out = Vec::new();
        let mut holds = Vec::new();
        for &root in roots {
            // Up the stack from the root.
            let mut stack = vec![root];
            let mut members = vec![root];
            while let Some(m) = stack.pop() {
                for &(o, n, rests) in around(m) {
                    if n.dot(up) >= UPRIGHT
                        && rests
                        && !owner.contains_key(&o)
                        && !touched.contains(&o)
                        && movable(o)
                    {
                        owner.insert(o, root);
                        members.push(o);
                        stack.push(o);
                    }
                }
            }
            // Down to those that touch only the stack, or awake dynamic
            // bodies above them that do not rest on them (hovering,
            // parting, or tilted beyond the riding gap: the rigid step
            // moves those).
            loop {
                let before = members.len();
                let inside: BTreeSet<u32> = members.iter().copied().collect();
                let free_above =
                    |o: u32, n: Vec3, rests: bool| n.dot(up) >= UPRIGHT && !rests && movable(o);
                members.retain(|&m| {
                    m == root
                        || around(m)
                            .iter()
                            .all(|&(o, n, rests)| inside.contains(&o) || free_above(o, n, rests))
                });
                if members.len() == before {
                    break;
                }
            }
            let inside: BTreeSet<u32> = members.iter().copied().collect();
            for &m in &members {
                holds.extend(
                    around(m)
                        .iter()
                        .filter(|&&(o, n, rests)| {
                            inside.contains(&o) && n.dot(up) >= UPRIGHT && rests
                        })
                        .map(|&(o, normal, _)| Hold {
                            lower: m,
                            upper: o,
                            normal,
                        }),
                );
            }
            out.extend(members.into_iter().skip(1).map(|r| (root, r)));
        }
        out.sort_unstable();
        (out, holds)
    }

    /// Coupled body `root` with its riders: their centre of mass, mass and
    /// inertia together; `None` if a body is gone or an inertia cannot be
    /// inverted (a body that cannot turn).
    pub(super) fn composite(&self, root: u32, riders: &[u32]) -> Option<CoupledBody> {
        let members: Vec<(f32, Vec3, Mat3)> = std::iter::once(root)
            .chain(riders.iter().copied())
            .filter_map(|k| {
                let b = self.bodies.by_index(k)?;
                Some((b.inv_mass, b.com, b.inv_inertia_world))
            })
            .collect();
        if members.len() != riders.len() + 1 || members.iter().any(|m| !invertible(m.2)) {
            return None;
        }
        let mass: f32 = members.iter().map(|m| 1.0 / m.0).sum();
        let centre = members.iter().map(|m| m.1 / m.0).sum::<Vec3>() / mass;
        // Each member's inertia about the common centre (parallel axes).
        let inertia = members.iter().fold(Mat3::ZERO, |acc, &(w, c, inv_i)| {
            let d = c - centre;
            let shift = Mat3::from_diagonal(Vec3::splat(d.length_squared()))
                - Mat3::from_cols(d * d.x, d * d.y, d * d.z);
            acc + inv_i.inverse() + shift * (1.0 / w)
        });
        let inv = inertia.inverse();
        (inv.is_finite() && centre.is_finite() && mass.is_finite())
            .then(|| CoupledBody::composite(root, members[0].1, centre, 1.0 / mass, inv))
    }

    /// Drops the riders (and their holds) of coupled body `root`: it moves
    /// alone.
    pub(super) fn drop_riders(&mut self, root: u32) {
        let riders: BTreeSet<u32> = self
            .riders_of(root)
            .iter()
            .map(|&(_, r)| r)
            .chain([root])
            .collect();
        self.cable_riders.retain(|&(r, _)| r != root);
        self.cable_rider_holds
            .retain(|h| !(riders.contains(&h.lower) && riders.contains(&h.upper)));
    }

    /// The riders of the stage's coupled body `root`.
    pub(super) fn riders_of(&self, root: u32) -> &[(u32, u32)] {
        let from = self.cable_riders.partition_point(|&(r, _)| r < root);
        let to = self.cable_riders.partition_point(|&(r, _)| r <= root);
        &self.cable_riders[from..to]
    }

    /// Each rider of `cb` takes its extra displacement and rotation in the
    /// stage, as a point of the same rigid body.
    pub(super) fn move_riders(&mut self, cb: &CoupledBody) {
        let riders: Vec<u32> = self.riders_of(cb.body).iter().map(|&(_, r)| r).collect();
        for r in riders {
            let Some(b) = self.bodies.by_index_mut(r) else {
                continue;
            };
            let (com, rotation) = cb.member_displaced(cb.com, b.com, b.pose.rotation, true);
            if com.is_finite() && rotation.is_finite() {
                b.set_com_pose(com, rotation);
                b.update_inertia();
            }
        }
    }

    /// The impulse `j` at `point` of a cable contact with coupled body
    /// `cb`, given to it and its riders as one rigid body.
    pub(super) fn give_composite(&mut self, cb: &CoupledBody, j: Vec3, point: Vec3) {
        let members: Vec<u32> = std::iter::once(cb.body)
            .chain(self.riders_of(cb.body).iter().map(|&(_, r)| r))
            .collect();
        for m in members {
            if let Some(b) = self.bodies.by_index_mut(m) {
                let (dv, dw) = cb.member_response(j, point, b.com);
                b.linear_velocity += dv;
                b.angular_velocity += dw;
            }
        }
    }

    /// How fast a rider may part from the body under it and still ride
    /// (m/s): a step's gravity. The manifolds are taken before the rigid
    /// step, so a body that bounces off in it (restitution acts above 1 m/s
    /// of approach) may still be within the gap; it parts faster and keeps
    /// its bounce (as a rider it was made to stay). Not below: a body of
    /// restitution under about 0.16 bouncing off at just over 1 m/s is made
    /// to stay.
    fn riding_speed(&self) -> f32 {
        self.settings.gravity.length() * self.settings.dt
    }

    /// Each contact holding a rider up ends the stage plastic along its
    /// normal: the two bodies' velocities along it (at their centres) made
    /// equal by equal and opposite impulses, and their turning across it
    /// (tipping) made equal by equal and opposite angular impulses (sliding
    /// and turning about the normal left to the rigid step's friction), a
    /// few passes over a stack's contacts. Momentum is kept; angular
    /// momentum changes by `(c_lower − c_upper) × j` for the normal
    /// impulse `j`, nothing for a rider centred above the body under it.
    /// (Matching the velocities at the contact's points instead, which
    /// keeps angular momentum, left 3 of the 13 stacks of
    /// `tests/cable_ropes.rs` awake, one of them falling off: a rider 8 cm
    /// off centre.) For a rider off centre on a stack turning at `ω`, this
    /// leaves the contact's points parting or closing at `(ω × d)·n` (`d`
    /// between the centres), past [`Self::riding_speed`] for 8 cm above
    /// 2 rad/s: the rider then leaves the stack for that step (not seen in
    /// the tests).
    pub(super) fn settle_riders(&mut self) {
        for _ in 0..SETTLE_PASSES {
            for k in 0..self.cable_rider_holds.len() {
                self.settle(self.cable_rider_holds[k]);
            }
        }
    }

    fn settle(&mut self, hold: Hold) {
        let Hold {
            lower,
            upper,
            normal: n,
        } = hold;
        let (Some(a), Some(b)) = (self.bodies.by_index(lower), self.bodies.by_index(upper)) else {
            return;
        };
        let j = n * ((b.linear_velocity - a.linear_velocity).dot(n) / (a.inv_mass + b.inv_mass));
        let turn = b.angular_velocity - a.angular_velocity;
        let tip = turn - n * turn.dot(n);
        let both = a.inv_inertia_world + b.inv_inertia_world;
        let couple = if invertible(both) {
            both.inverse() * tip
        } else {
            Vec3::ZERO
        };
        let (ia, ib) = (a.inv_inertia_world, b.inv_inertia_world);
        if !(j.is_finite() && couple.is_finite()) {
            return;
        }
        if let Some(a) = self.bodies.by_index_mut(lower) {
            a.linear_velocity += j * a.inv_mass;
            a.angular_velocity += ia * couple;
        }
        if let Some(b) = self.bodies.by_index_mut(upper) {
            b.linear_velocity -= j * b.inv_mass;
            b.angular_velocity -= ib * couple;
        }
    }
}

/// How fast body `b` leaves body `a` along `n` (from `a` to `b`) at
/// `point` (negative: closing).
fn normal_speed(a: &Body, b: &Body, n: Vec3, point: Vec3) -> f32 {
    (b.velocity_at(point) - a.velocity_at(point)).dot(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::{BodySpec, ShapeSpec};

    /// The slot of body `id`.
    fn slot(w: &World, id: u64) -> u32 {
        w.bodies
            .iter()
            .find(|(_, b)| b.id == id)
            .map(|(h, _)| h.index)
            .unwrap()
    }

    /// A box resting on a root (the coupled body; no cables here) rides
    /// with it, and so does a box resting on that one; a box 3.5 mm above
    /// it instead (touching, within the 7.5 mm slop, but not resting: beyond
    /// [`RIDING_GAP`]) does not ride, and leaves the box under it riding
    /// (it kept it out of the stack before).
    #[test]
    fn a_box_hovering_above_a_rider_leaves_it_riding() {
        for (gap, both) in [(0.0035, false), (0.0, true)] {
            let mut w = World::default();
            let cuboid = |half: [f32; 3], y: f32| {
                BodySpec::new(ShapeSpec::Box { half_extents: half })
                    .mass(1.0)
                    .position([0.0, y, 0.0])
            };
            let root = w.add_body(&cuboid([0.15, 0.1, 0.3], 0.0)).unwrap();
            let lower = w.add_body(&cuboid([0.1, 0.05, 0.1], 0.15)).unwrap();
            let upper = w.add_body(&cuboid([0.1, 0.05, 0.1], 0.25 + gap)).unwrap();
            // One step under gravity: the contacts are taken, and all three
            // fall together.
            w.step();
            let s = [root, lower, upper].map(|id| slot(&w, id));
            // The upper box touches the lower (within the 5 mm slop), and
            // rests on it only when set on it.
            let between = w
                .contacts
                .contacts
                .iter()
                .find(|c| [c.a, c.b] == [s[1], s[2]] || [c.a, c.b] == [s[2], s[1]])
                .expect("the two boxes' contact");
            let apart = between.manifold.points().iter().map(|p| p.separation);
            assert!(between.touching);
            assert_eq!(apart.clone().all(|d| d <= RIDING_GAP), both, "{gap}");
            let (riders, holds) = w.cable_riders(&[s[0]], &BTreeSet::new());
            let want = if both {
                vec![(s[0], s[1]), (s[0], s[2])]
            } else {
                vec![(s[0], s[1])]
            };
            assert_eq!(riders, want, "upper box {gap} m above");
            assert_eq!(holds.len(), want.len());
            assert!(holds.iter().all(|h| h.normal.dot(Vec3::Y) > 0.99));
        }
    }

    /// Two 1 m cubes of 1 kg, one on the other, make one 1 × 2 × 1 m box
    /// of 2 kg: its centre halfway up, its inertia the box's
    /// (`m(b² + c²)/12` about each axis), an impulse's response that of
    /// the box. A rider whose inertia cannot be inverted makes none, and
    /// its root then moves alone: its riders and their holds are dropped,
    /// and another root's are kept.
    #[test]
    fn a_stack_of_two_cubes_moves_as_one_box() {
        let mut w = World::default();
        let cube = |y: f32| {
            BodySpec::new(ShapeSpec::Box {
                half_extents: [0.5, 0.5, 0.5],
            })
            .mass(1.0)
            .position([0.0, y, 0.0])
        };
        let ids: Vec<u64> = [0.0, 1.0, 5.0, 6.0]
            .iter()
            .map(|&y| w.add_body(&cube(y)).unwrap())
            .collect();
        let s: Vec<u32> = ids.iter().map(|&id| slot(&w, id)).collect();
        let cb = w.composite(s[0], &[s[1]]).unwrap();
        assert!((cb.com - Vec3::new(0.0, 0.5, 0.0)).length() < 1e-6);
        assert!((cb.anchor - Vec3::ZERO).length() < 1e-6);
        assert!((cb.inv_mass - 0.5).abs() < 1e-6);
        let inertia = cb.inv_inertia.inverse();
        let want = Mat3::from_diagonal(Vec3::new(10.0, 4.0, 10.0) / 12.0);
        for (a, b) in inertia.to_cols_array().iter().zip(want.to_cols_array()) {
            assert!((a - b).abs() < 1e-5, "{inertia} against {want}");
        }
        // 1 N·s along x at the bottom box's centre, 0.5 m below the
        // composite's: v = 0.5 m/s, ω = r × j / I about z.
        let (dv, dw) = cb.response(Vec3::X, Vec3::ZERO);
        assert!((dv - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-6);
        assert!((dw - Vec3::new(0.0, 0.0, 0.5 / (10.0 / 12.0))).length() < 1e-5);

        // Both stacks listed; the second's rider made unable to turn.
        w.cable_riders = vec![(s[0], s[1]), (s[2], s[3])];
        w.cable_rider_holds = vec![
            Hold {
                lower: s[0],
                upper: s[1],
                normal: Vec3::Y,
            },
            Hold {
                lower: s[2],
                upper: s[3],
                normal: Vec3::Y,
            },
        ];
        w.bodies.by_index_mut(s[3]).unwrap().inv_inertia_world = Mat3::ZERO;
        assert!(w.composite(s[2], &[s[3]]).is_none());
        w.drop_riders(s[2]);
        assert_eq!(w.cable_riders, vec![(s[0], s[1])]);
        assert_eq!(w.cable_rider_holds.len(), 1);
        assert_eq!(w.cable_rider_holds[0].lower, s[0]);
    }
}
