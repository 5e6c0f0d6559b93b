//! Stage 7 of the step: cables (see `physics/cable.rs`).

use super::World;
use crate::physics::aabb::Aabb;
use crate::physics::cable;
use crate::physics::collision;
use crate::physics::math::{Pose, Vec3};

impl World {
    /// Stage 7: cables (see `cable.rs`): XPBD substeps, particles against
    /// bodies, segments against segments with thick-segment CCD.
    pub(super) fn step_cables(&mut self, dt: f32) {
        if self.cables.is_empty() {
            return;
        }
        let n = self.settings.cable_substeps.max(1);
        let h = dt / n as f32;
        let g = self.settings.gravity;
        // Bodies near any cable, once per step.
        let mut near: Vec<u32> = Vec::new();
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for c in &self.cables {
            let reach =
                c.spec.radius + c.v.iter().map(|v| v.length()).fold(0.0, f32::max) * dt + 0.1;
            for p in &c.x {
                lo = lo.min(*p - Vec3::splat(reach));
                hi = hi.max(*p + Vec3::splat(reach));
            }
        }
        let zone = Aabb::new(lo, hi);
        for (h_, b) in self.bodies.iter() {
            if b.shape.is_plane() || b.shape.aabb(&b.pose).overlaps(&zone) {
                near.push(h_.index);
            }
        }
        let mut stats = (0, 0, 0);
        let mut lambdas: Vec<Vec<f32>> = self
            .cables
            .iter()
            .map(|c| vec![0.0; c.segments()])
            .collect();
        for sub in 0..n {
            let prev: Vec<Vec<Vec3>> = self.cables.iter().map(|c| c.x.clone()).collect();
            for (c, l) in self.cables.iter_mut().zip(&mut lambdas) {
                c.predict(g, h);
                l.iter_mut().for_each(|x| *x = 0.0);
                for it in 0..self.settings.cable_iterations {
                    c.solve_segments(h, l, (sub + it) % 2 == 1);
                }
            }
            self.cable_body_contacts(&near, &prev, h);
            let s = cable::collide_cables(&mut self.cables, &prev, h);
            stats = (stats.0 + s.0, stats.1 + s.1, stats.2 + s.2);
            for (c, p) in self.cables.iter_mut().zip(&prev) {
                c.update_velocities(p, h);
            }
        }
        self.cable_stats = stats;
    }

    /// Each cable particle is a sphere of the cable's radius: pushed out of
    /// the bodies it overlaps, with friction; dynamic bodies get the opposite
    /// impulse at the contact.
    pub(super) fn cable_body_contacts(&mut self, near: &[u32], prev: &[Vec<Vec3>], h: f32) {
        let mut kicks: Vec<(u32, Vec3, Vec3)> = Vec::new();
        for (c, prev) in self.cables.iter_mut().zip(prev) {
            let r = c.spec.radius.max(1.0e-3);
            let ball = crate::physics::shape::Shape::sphere(r);
            #[allow(clippy::needless_range_loop)] // x, w and prev in step
            for i in 0..c.x.len() {
                if c.w[i] == 0.0 {
                    continue;
                }
                for &bi in near {
                    let Some(b) = self.bodies.by_index(bi) else {
                        continue;
                    };
                    let pose = Pose::from_position(c.x[i]);
                    let mut cache = collision::PairCache::default();
                    let Some(m) = collision::contact_manifold(
                        &ball, &pose, &b.shape, &b.pose, 0.0, &mut cache,
                    ) else {
                        continue;
                    };
                    let Some(p) = m
                        .points()
                        .iter()
                        .min_by(|a, b| a.separation.total_cmp(&b.separation))
                    else {
                        continue;
                    };
                    if p.separation >= 0.0 {
                        continue;
                    }
                    let n = m.normal; // from the particle into the body
                    let push = n * p.separation; // moves the particle out
                    c.x[i] += push;
                    // Friction: cancel the tangential motion of this substep
                    // up to μ times the push.
                    let dx = c.x[i] - prev[i];
                    let tangential = dx - n * dx.dot(n);
                    let mu = (c.spec.friction * b.friction).sqrt();
                    let limit = mu * push.length();
                    let t_len = tangential.length();
                    let cancel = if t_len <= limit {
                        tangential
                    } else {
                        tangential * (limit / t_len)
                    };
                    c.x[i] -= cancel;
                    if b.is_dynamic() {
                        let dp = (push - cancel) * (c.particle_mass / h);
                        kicks.push((bi, -dp, p.point_b));
                    }
                }
            }
        }
        for (bi, impulse, point) in kicks {
            if let Some(b) = self.bodies.by_index_mut(bi) {
                b.apply_impulse(impulse, Some(point));
                b.sleeping = false;
                b.sleep_time = 0.0;
            }
        }
    }
}
