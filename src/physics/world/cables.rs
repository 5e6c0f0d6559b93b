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

    /// Each segment is a capsule of the cable's radius against the bodies
    /// it overlaps: every contact point pushes the segment out, the
    /// correction split between its two particles by where along the segment
    /// the point lies (weights (1 − s)·w₀ and s·w₁ over (1 − s)²w₀ + s²w₁,
    /// which moves the contact point by exactly the penetration), with
    /// Coulomb friction on the substep's sliding; dynamic bodies get the
    /// opposite impulse at the contact.
    pub(super) fn cable_body_contacts(&mut self, near: &[u32], prev: &[Vec<Vec3>], h: f32) {
        let mut kicks: Vec<(u32, Vec3, Vec3)> = Vec::new();
        for (c, prev) in self.cables.iter_mut().zip(prev) {
            let r = c.spec.radius.max(1.0e-3);
            for i in 0..c.segments() {
                let (w0, w1) = (c.w[i], c.w[i + 1]);
                if w0 == 0.0 && w1 == 0.0 {
                    continue;
                }
                for &bi in near {
                    let Some(b) = self.bodies.by_index(bi) else {
                        continue;
                    };
                    let (x0, x1) = (c.x[i], c.x[i + 1]);
                    let d = x1 - x0;
                    let len = d.length();
                    let pose = Pose::new(
                        (x0 + x1) * 0.5,
                        crate::physics::Quat::from_rotation_arc(Vec3::Y, d.normalize_or(Vec3::Y)),
                    );
                    let capsule = crate::physics::shape::Shape::capsule((0.5 * len).max(1.0e-5), r);
                    let mut cache = collision::PairCache::default();
                    let Some(m) = collision::contact_manifold(
                        &capsule, &pose, &b.shape, &b.pose, 0.0, &mut cache,
                    ) else {
                        continue;
                    };
                    let out = -m.normal; // from the body towards the cable
                    let mu = (c.spec.friction * b.friction).sqrt();
                    for p in m.points() {
                        if p.separation >= 0.0 {
                            continue;
                        }
                        let depth = -p.separation;
                        let s = if len > 1.0e-9 {
                            ((p.point_a - x0).dot(d) / (len * len)).clamp(0.0, 1.0)
                        } else {
                            0.5
                        };
                        let (a0, a1) = ((1.0 - s) * w0, s * w1);
                        let denom = (1.0 - s) * a0 + s * a1;
                        if denom <= 0.0 {
                            continue;
                        }
                        // Normal correction of the contact point: `depth`.
                        let mut corr = out * depth;
                        // Friction: cancel the contact point's sliding this
                        // substep, up to μ times the push.
                        let slide = (1.0 - s) * (c.x[i] - prev[i]) + s * (c.x[i + 1] - prev[i + 1]);
                        let tangential = slide - out * slide.dot(out);
                        let limit = mu * depth;
                        let t_len = tangential.length();
                        corr -= if t_len <= limit {
                            tangential
                        } else {
                            tangential * (limit / t_len)
                        };
                        c.x[i] += corr * (a0 / denom);
                        c.x[i + 1] += corr * (a1 / denom);
                        if b.is_dynamic() {
                            // The particles' momentum change, returned.
                            kicks.push((bi, -corr / (denom * h), p.point_b));
                        }
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
