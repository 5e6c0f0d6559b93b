//! The cable stage's hold on bodies resting on cables: which segments a
//! body pinches (`Pinch`), the bound on its cable impulses
//! (`impulse_bounds`), and the supports the next rigid solve holds it off
//! the cables with (`CableSupport`). See `world/cables.rs`.

use super::World;
use crate::physics::cable::solver::{BodyContact, CableSystem};
use crate::physics::math::Vec3;
use crate::physics::solver::{ContactConstraint, PointImpulse};

/// How far a segment's surface is from a body contact's plane (negative
/// inside) where the segment is now.
fn gap(sys: &CableSystem, c: &BodyContact) -> f32 {
    let p = sys.segs[c.seg as usize].p as usize;
    c.n.dot(sys.x[p].lerp(sys.x[p + 1], c.s) - c.point) - c.radius
}

/// Whether a particle of segment `seg` is pinned.
fn pinned(sys: &CableSystem, seg: usize) -> bool {
    let p = sys.segs[seg].p as usize;
    sys.w[p] == 0.0 || sys.w[p + 1] == 0.0
}

/// What holds a segment from the side away from a body.
#[derive(Clone, Copy, Debug)]
enum Holder {
    /// A body (its slot): its surface point at the contact and the gap
    /// from there to the segment's surface.
    Body(u32, Vec3, f32),
    /// Another segment held up by a body, directly or through at most
    /// [`GROUND_HOPS`] other segments touching in turn (a heap's layers),
    /// or a pin: the body's slot, or `u32::MAX` for a body that does not
    /// move or a pin (the ground), and the gap from that body to its
    /// segment.
    Ground(u32, f32),
}

/// The root of [`Holder::Ground`] that does not move.
pub(super) const FIXED: u32 = u32::MAX;

/// How many touching segments a segment may be from one a body that does
/// not move (or a pin) holds, and still count as held up (a heap's layers).
const GROUND_HOPS: u32 = 8;

/// Segments pinched from the far side: what touches each (within the
/// world's speculative distance), with the normal out of it.
pub(super) struct Pinch(std::collections::HashMap<u32, Vec<(Holder, Vec3)>>);

impl Pinch {
    pub(super) fn new(sys: &CableSystem, reach: f32) -> Self {
        use std::collections::{HashMap, VecDeque};
        let mut held: HashMap<u32, Vec<(Holder, Vec3)>> = HashMap::new();
        // Segments held up, with their distance in touching hops and what
        // holds them up at the root (what does not move before any body).
        let mut ground: HashMap<u32, (u32, u32, f32)> = HashMap::new();
        for c in &sys.body_contacts {
            let g = gap(sys, c);
            if g < reach {
                held.entry(c.seg)
                    .or_default()
                    .push((Holder::Body(c.body, c.point, g), c.n));
                if !c.dynamic && c.motion == Vec3::ZERO {
                    ground.insert(c.seg, (0, FIXED, 0.0));
                } else {
                    ground.entry(c.seg).or_insert((0, c.body, g.max(0.0)));
                }
            }
        }
        for k in 0..sys.segs.len() {
            if pinned(sys, k) {
                ground.insert(k as u32, (0, FIXED, 0.0));
            }
        }
        let touching = sys.touching_segments(reach);
        let mut next: HashMap<u32, Vec<u32>> = HashMap::new();
        for &(a, b, _) in &touching {
            next.entry(a).or_default().push(b);
        }
        // In order of the segments, so that the result does not depend on
        // the maps' order.
        let mut start: Vec<u32> = ground.keys().copied().collect();
        start.sort_unstable();
        let mut queue: VecDeque<u32> = start.into();
        while let Some(s) = queue.pop_front() {
            let (hops, root, g) = ground[&s];
            if hops == GROUND_HOPS {
                continue;
            }
            for &t in next.get(&s).into_iter().flatten() {
                if let std::collections::hash_map::Entry::Vacant(e) = ground.entry(t) {
                    e.insert((hops + 1, root, g));
                    queue.push_back(t);
                }
            }
        }
        for &(a, b, towards) in &touching {
            if let Some(&(_, root, g)) = ground.get(&b) {
                held.entry(a)
                    .or_default()
                    .push((Holder::Ground(root, g), -towards));
            }
        }
        Self(held)
    }

    /// Whether something holds body contact `c`'s segment on its other
    /// side (another body, or a segment held up by a body or pin; not the
    /// segment's own pin).
    pub(super) fn held_behind(&self, c: &BodyContact) -> bool {
        self.behind(c).is_some()
    }

    /// What pinches body contact `c`'s segment, if anything: it cannot give
    /// way from the body because a particle of it is pinned, or another
    /// body or a segment held up by a body or pin holds it on its other
    /// side. (Cables that only touch each other, with nothing behind them,
    /// do not.)
    fn holder(&self, sys: &CableSystem, c: &BodyContact) -> Option<Holder> {
        if pinned(sys, c.seg as usize) {
            return Some(Holder::Ground(FIXED, 0.0));
        }
        self.behind(c)
    }

    /// What holds contact `c`'s segment on its other side, if anything.
    fn behind(&self, c: &BodyContact) -> Option<Holder> {
        let held = self.0.get(&c.seg)?;
        held.iter()
            .find(|&&(h, m)| {
                let by = match h {
                    Holder::Body(b, ..) | Holder::Ground(b, _) => b,
                };
                m.dot(c.n) < -0.5 && by != c.body
            })
            .map(|&(h, _)| h)
    }
}

/// How far off a cable the rigid solver holds a body resting on it (m).
const SUPPORT_SKIN: f32 = 1.0e-3;

/// A segment touching a dynamic body at the end of the cable stage that
/// cannot give way from it ([`Pinch::holder`]): in the next step, the
/// rigid solver holds the body off it, a skin off, by a contact (warm
/// started from the same support's last impulses) with what holds the
/// segment: the body behind it (through the cable's thickness), or the
/// cable itself as a fixed point when a pin or the ground holds it. The
/// body thus rests on the cable as on any support rather than sinking into
/// it each step and being pushed out a step late (a 64 kg box on a cable
/// lying on the floor kept bouncing at 0.1 m/s and never slept). The cable
/// does not feel the body's weight (what holds it is taken to), so a cable
/// free to move (a rope hanging between pins, away from them) gets no
/// supports: a fixed point there would hold up a body the rope cannot.
#[derive(Clone, Copy, Debug)]
pub(super) struct CableSupport {
    /// The body's slot, and what holds it up: another body's slot (a
    /// two-body contact through the cable, the cable's thickness taken
    /// out of the gap) or [`FIXED`] (the cable itself, fixed).
    pub(super) body: u32,
    holder: u32,
    /// The holder's point (on the far body, or on the cable's surface).
    far: Vec3,
    /// Out of the body, towards the cable.
    n: Vec3,
    /// The body's surface point, and the gap from it to the holder's
    /// point (less the cable's thickness between two bodies).
    point: Vec3,
    separation: f32,
    mu: f32,
    /// The segment and where along it (in sixteenths), to find the same
    /// support in the next step; and the impulses it took in the last
    /// rigid solve (its warm start in the next).
    seg: u32,
    at: i32,
    pub(super) impulse: PointImpulse,
}

impl World {
    /// Forgets the supports of body `slot` and those it holds up (it was
    /// removed or moved by an edit).
    pub(super) fn forget_supports_of_body(&mut self, slot: u32) {
        self.cable_supports
            .retain(|s| s.body != slot && s.holder != slot);
    }

    /// Forgets the supports on the `count` segments from `first` (a cable
    /// removed) and renumbers those after them.
    pub(super) fn forget_supports_on(&mut self, first: u32, count: u32) {
        self.cable_supports
            .retain(|s| s.seg < first || s.seg >= first + count);
        for s in &mut self.cable_supports {
            if s.seg >= first + count {
                s.seg -= count;
            }
        }
    }

    /// The rigid solver's constraints for the cable supports of bodies it
    /// moves (after the contacts' ones).
    pub(super) fn cable_support_constraints(&mut self) {
        self.support_constraints.clear();
        for (k, sup) in self.cable_supports.iter().enumerate() {
            let si = self
                .solver_index
                .get(sup.body as usize)
                .copied()
                .unwrap_or(0);
            let Some(b) = self.bodies.by_index(sup.body) else {
                continue;
            };
            // Asleep (or no longer dynamic): nothing to hold.
            if si == 0 || !b.is_dynamic() {
                continue;
            }
            // The body is held a skin off the cable: the rigid solver's
            // soft contacts yield a little under load (0.3 mm under any
            // weight at its 30 Hz stiffness), and a cable stage that found
            // the body inside the cable would push it out a step late.
            let separation = sup.separation - SUPPORT_SKIN;
            // A static or sleeping holder is solver body 0.
            let (hi, far_com) = match self.bodies.by_index(sup.holder) {
                Some(h) => (
                    self.solver_index
                        .get(sup.holder as usize)
                        .copied()
                        .unwrap_or(0),
                    h.com,
                ),
                None => (0, sup.far),
            };
            if hi == si {
                continue;
            }
            self.support_constraints.push(k);
            self.constraints.push(ContactConstraint::new(
                si,
                hi,
                &self.solver_bodies[si as usize],
                &self.solver_bodies[hi as usize],
                b.com,
                far_com,
                sup.n,
                &[(sup.point, sup.far, separation, sup.impulse)],
                sup.mu,
                0.0,
            ));
        }
    }

    /// The bodies (slots) of each support of the last stage between two
    /// bodies: one island for sleep, so that they fall asleep together
    /// (else the one still awake would wake the other, through the cables
    /// between them, every time it fell asleep).
    pub(super) fn cable_support_pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.cable_supports
            .iter()
            .filter(|s| s.holder != FIXED)
            .map(|s| (s.body, s.holder))
    }

    /// The share of its cable impulses each dynamic body takes (1 unless
    /// less), so that they never throw it off the cables faster than the
    /// collision can: along the impulses' sum `d`, the body's point where
    /// they act leaves at most as fast as off a cable of no give moving at
    /// `c`, `max(c + e·max(c − a, 0), −e·a, 0)`, `a` its speed along `d`
    /// before (negative while it comes on), `e` the contacts' restitution
    /// and `c` the fastest any particle of the touching segments moved
    /// along `d` at the step's start or end (a thrown cable may push a body
    /// up to its own speed). Only for a body pinching a segment
    /// ([`Pinch::holder`]); elsewhere momentum is kept exactly. The stage
    /// moves a body along its path as if it had no give: a cable caught
    /// between it and the floor is pushed out of the body and back by the
    /// floor in every pass, and the body was credited with all those
    /// pushes (a 0.5 kg box dropped 5 cm onto cables on the floor left at
    /// 48 m/s). No real collision throws a body off faster than this.
    pub(super) fn impulse_bounds(
        &self,
        sys: &CableSystem,
        pinch: Option<&Pinch>,
    ) -> std::collections::HashMap<u32, f32> {
        #[derive(Default)]
        struct Sum {
            j: Vec3,
            at: Vec3,
            weight: f32,
            e: f32,
            c: f32,
            pinched: bool,
            /// The contacts' segments' particles (cable, index in it).
            touched: Vec<(usize, usize)>,
        }
        let mut sums: std::collections::BTreeMap<u32, Sum> = Default::default();
        fn add(
            sums: &mut std::collections::BTreeMap<u32, Sum>,
            body: u32,
            j: Vec3,
            at: Vec3,
        ) -> &mut Sum {
            let s = sums.entry(body).or_default();
            let m = j.length();
            s.j += j;
            s.at += at * m;
            s.weight += m;
            s
        }
        let mut out = std::collections::HashMap::new();
        // None: no contact with a dynamic body.
        let Some(pinch) = pinch else {
            return out;
        };
        let mut base = Vec::with_capacity(self.cables.len());
        let mut first = 0u32;
        for c in &self.cables {
            base.push(first);
            first += c.x.len() as u32;
        }
        for c in &sys.body_contacts {
            if !c.dynamic || c.impulse == Vec3::ZERO {
                continue;
            }
            // (A coupled body's impulses are what it moved by in the
            // stage: they stay whole.)
            if sys.coupled_body(c).is_some() {
                continue;
            }
            let s = add(&mut sums, c.body, c.impulse, c.point);
            s.e = s.e.max(c.e);
            s.pinched |= pinch.holder(sys, c).is_some();
            let seg = &sys.segs[c.seg as usize];
            let local = (seg.p - base[seg.cable as usize]) as usize;
            s.touched.push((seg.cable as usize, local));
        }
        for &(body, j, point) in &sys.retired {
            if j != Vec3::ZERO {
                add(&mut sums, body, j, point);
            }
        }
        for (body, mut s) in sums {
            let Some(b) = self.bodies.by_index(body) else {
                continue;
            };
            let len = s.j.length();
            if !s.pinched || !b.is_dynamic() || len == 0.0 || s.weight == 0.0 {
                continue;
            }
            let d = s.j / len;
            for &(k, i) in &s.touched {
                let first = base[k] as usize + i;
                let before = &self.cables[k].v[i..i + 2];
                for (v0, v1) in before.iter().zip(&sys.v[first..first + 2]) {
                    s.c = s.c.max(v0.dot(d)).max(v1.dot(d));
                }
            }
            let r = s.at / s.weight - b.com;
            let a = (b.linear_velocity + b.angular_velocity.cross(r)).dot(d);
            let rd = r.cross(d);
            let gain = len * (b.inv_mass + rd.dot(b.inv_inertia_world * rd));
            // As if off a cable of no give moving at `c`.
            let cap = (s.c + s.e * (s.c - a).max(0.0)).max(-s.e * a).max(0.0);
            if a + gain > cap && gain > 0.0 {
                out.insert(body, ((cap - a) / gain).clamp(0.0, 1.0));
            }
        }
        out
    }

    /// The body contacts the stage ends with that touch a dynamic body, or
    /// nearly (the world's speculative distance): the next step's supports.
    pub(super) fn find_cable_supports(&mut self, sys: &CableSystem, pinch: Option<&Pinch>) {
        // The supports of a sleeping body, or of one resting on a sleeping
        // cable (which has no body contacts), stay as they were: neither
        // moves until it wakes, and the rigid solve that wakes it (struck,
        // say) needs them (the stage then takes them again). Only while the
        // body still reaches the segment (a cable dragged away from under a
        // sleeping body, slowly enough to leave it asleep, takes its support
        // along); not judged by the body holding it up, which may be layers
        // of cables below the segment.
        let (cables, bodies) = (&self.cables, &self.bodies);
        let reach = self.settings.speculative_distance;
        let near = |slot: u32, seg: u32| {
            let Some(b) = bodies.by_index(slot) else {
                return false;
            };
            let (lo, hi) = sys.seg_box(seg as usize);
            let r = sys.radius(seg as usize) + reach;
            b.shape
                .aabb(&b.pose)
                .expanded(r)
                .overlaps(&crate::physics::aabb::Aabb::new(lo, hi))
        };
        let keep = |s: &CableSupport| {
            let Some(g) = sys.segs.get(s.seg as usize) else {
                return false;
            };
            (bodies.by_index(s.body).is_some_and(|b| b.sleeping)
                || cables[g.cable as usize].sleeping)
                && near(s.body, s.seg)
        };
        let (kept, old): (Vec<CableSupport>, Vec<CableSupport>) =
            self.cable_supports.drain(..).partition(keep);
        // A sleeping body with supports kept takes no new ones (one with
        // none, loaded from a snapshot or after an edit, takes them).
        let held: std::collections::HashSet<u32> = kept.iter().map(|s| s.body).collect();
        self.cable_supports = kept;
        // The last ones' impulses, to start the same supports with.
        let last: std::collections::HashMap<(u32, u32, u32, i32), PointImpulse> = old
            .into_iter()
            .map(|s| ((s.body, s.seg, s.holder, s.at), s.impulse))
            .collect();
        let Some(pinch) = pinch else {
            return;
        };
        let mut wake = Vec::new();
        for c in &sys.body_contacts {
            let separation = gap(sys, c);
            // (A NaN gap is no support; a sleeping body's are kept.)
            // (A coupled body moved with its cables in the stage: it
            // needs no support from them.)
            if !c.dynamic
                || sys.coupled_body(c).is_some()
                || separation.is_nan()
                || separation >= reach
                || (held.contains(&c.body)
                    && self.bodies.by_index(c.body).is_some_and(|b| b.sleeping))
            {
                continue;
            }
            let on_cable = c.point + c.n * separation;
            let (holder, far, separation) = match pinch.holder(sys, c) {
                None => continue,
                // Through the cable to the body behind it.
                Some(Holder::Body(h, q, g)) => (h, q, separation + g),
                // Through cables to the body under them (its gap to them
                // too), or the cable as a fixed point when the ground holds
                // it.
                Some(Holder::Ground(root, g)) => (root, on_cable, separation + g),
            };
            // A sleeping body holding an awake one wakes (with its island).
            if self.bodies.by_index(holder).is_some_and(|h| h.sleeping)
                && self.bodies.by_index(c.body).is_some_and(|b| !b.sleeping)
            {
                wake.push(holder);
            }
            let at = (c.s * 16.0).round() as i32;
            let impulse = last
                .get(&(c.body, c.seg, holder, at))
                .copied()
                .unwrap_or_default();
            self.cable_supports.push(CableSupport {
                body: c.body,
                holder,
                far,
                n: c.n,
                point: c.point,
                separation,
                mu: c.mu,
                seg: c.seg,
                at,
                impulse,
            });
        }
        for slot in wake {
            self.wake_index(slot);
        }
    }
}
