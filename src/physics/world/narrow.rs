//! Stage 4: the narrow phase, a manifold for every broad-phase pair with a
//! moving body and for every dynamic body near a plane.

use super::World;
use crate::physics::collision::{self, Manifold};
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
            c.set_manifold(m);
            c.updated = true;
        }
    }
}
