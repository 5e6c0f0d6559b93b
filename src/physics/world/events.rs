//! Stage 8: the step's contact begin and end events.

use super::World;
use crate::physics::contact::Contact;
use crate::physics::events::{ContactEvent, ContactEventKind};
use crate::physics::math::Vec3;
use crate::physics::set::BodySet;

impl World {
    /// Contact begin and end events. A pair counts as touching this step
    /// when its manifold touched as the step began, when the solver pushed
    /// on it (a speculative contact that closed in the step), or when the
    /// continuous pass stopped an impact between them: the impact's impulse
    /// is the step's (with the solver's). A body that lands gets its begin
    /// in the step it lands, with the impulse that stopped it (before, it
    /// came a step later, with the resting impulse alone, and the impact's
    /// was never reported: a reviewer's ball at 8.4 m/s), and a body the
    /// continuous pass left just short of the ground does not end and
    /// begin again as the next step closes the gap.
    pub(super) fn collect_events(&mut self) {
        let mut impacts = std::mem::take(&mut self.ccd_impacts);
        impacts.sort_by_key(|i| (i.0, i.1));
        for c in &mut self.contacts.contacts {
            if !c.updated {
                continue;
            }
            let from = impacts.partition_point(|i| (i.0, i.1) < (c.a, c.b));
            let hits = impacts[from..]
                .iter()
                .take_while(|i| (i.0, i.1) == (c.a, c.b));
            let (mut hit, mut at) = (0.0f32, None);
            for &(_, _, impulse, point, normal) in hits {
                hit += impulse;
                at.get_or_insert((point, normal));
            }
            let touching = c.touching || at.is_some() || c.normal_impulse() > 0.0;
            if touching != c.was_touching {
                let (a, b) = (
                    self.bodies.by_index(c.a).unwrap().id,
                    self.bodies.by_index(c.b).unwrap().id,
                );
                let kind = if touching {
                    ContactEventKind::Begin
                } else {
                    ContactEventKind::End
                };
                let (point, impulse) = deepest(c);
                let (point, normal) = match at {
                    Some(impact) if !c.touching => impact,
                    // Begun on the solver's push alone: the deepest point's
                    // midpoint lies in the gap the step closed (7 cm above
                    // the floor for a ball landing at 8 m/s); the point on
                    // the body that moved less is where they met.
                    _ if !c.touching && touching => (met_at(c, &self.bodies), c.manifold.normal),
                    _ => (point, c.manifold.normal),
                };
                self.events
                    .push(ContactEvent::new(kind, a, b, point, normal, impulse + hit));
            }
            c.was_touching = touching;
        }
        impacts.clear();
        self.ccd_impacts = impacts;
        self.moved.sort_unstable();
        self.moved.dedup();
    }

    pub(super) fn end_event(&self, c: &Contact) -> ContactEvent {
        let a = self.bodies.by_index(c.a).map_or(0, |b| b.id);
        let b = self.bodies.by_index(c.b).map_or(0, |b| b.id);
        let (point, _) = deepest(c);
        ContactEvent::new(ContactEventKind::End, a, b, point, c.manifold.normal, 0.0)
    }
}

/// Where a pair that did not touch as the step began met in it: the
/// deepest point's surface point on the body that moved less in the step
/// (on the static one, if either is).
fn met_at(c: &Contact, bodies: &BodySet) -> Vec3 {
    let Some(p) = c.manifold.deepest() else {
        return Vec3::ZERO;
    };
    let speed = |slot: u32| {
        bodies
            .by_index(slot)
            .filter(|b| !b.is_static())
            .map_or(0.0, |b| b.linear_velocity.length())
    };
    if speed(c.a) <= speed(c.b) {
        p.point_a
    } else {
        p.point_b
    }
}

/// The deepest point's midpoint and the step's total normal impulse.
fn deepest(c: &Contact) -> (Vec3, f32) {
    let p = c.manifold.deepest().map_or(Vec3::ZERO, |p| p.point());
    (p, c.normal_impulse())
}
