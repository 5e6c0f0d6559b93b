//! Cables: chains of particles joined by stiff segments, colliding with
//! bodies and — continuously — with each other.
//!
//! # Integrator: XPBD distance constraints, substepped (why)
//!
//! A cable must keep its length within 1% while hanging, which needs
//! segment stiffnesses far beyond what explicit springs integrate stably at
//! a game tick. Extended position-based dynamics solves each segment as a
//! compliant distance constraint (compliance = 1 / stiffness) directly on
//! positions: it is unconditionally stable, its stiffness does not depend on
//! the iteration count, and with a few substeps per tick a heavy chain stays
//! within a fraction of a percent of its rest length. Velocities are the
//! position change of each substep; segment damping acts on the relative
//! velocity along each segment.
//!
//! Collisions: each particle is a sphere of the cable's radius against the
//! rigid bodies (pushed out along the contact normal, with friction, and the
//! body receives the opposite impulse); segments of different cables — and
//! non-neighbouring segments of one cable — are swept against each other
//! with the thick-segment CCD of [`super::collision::ccd_thick`], and an
//! impact stops the approach with an impulse split over the four particles
//! by where along each segment the contact lies (divided by Σ wᵢ²/mᵢ).

use super::collision::ccd_thick::{closest_points_segment_segment, thick_edge_edge_ccd};
use super::math::Vec3;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Collision radius (m) of a cable whose radius is smaller (threads).
pub const MIN_THICKNESS: f64 = 1.0e-3;

/// Most segments in one cable.
pub const MAX_SEGMENTS: u32 = 100_000;

/// A cable as a scene or the REST API describes it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CableSpec {
    /// Set in snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub from: [f32; 3],
    pub to: [f32; 3],
    #[serde(default = "default_segments")]
    pub segments: u32,
    /// Thickness radius (m); 0 is a thread.
    #[serde(default = "default_radius")]
    pub radius: f32,
    /// Total mass (kg), spread evenly over the particles.
    #[serde(default = "default_mass")]
    pub mass: f32,
    /// Segment stiffness (N/m).
    #[serde(default = "default_stiffness")]
    pub stiffness: f32,
    /// Segment damping (N·s/m) on the relative velocity along each segment.
    #[serde(default)]
    pub damping: f32,
    /// Particle indices held in place.
    #[serde(default)]
    pub pinned: Vec<u32>,
    #[serde(default)]
    pub linear_velocity: [f32; 3],
    #[serde(default)]
    pub restitution: f32,
    #[serde(default = "default_friction")]
    pub friction: f32,
    /// Set in snapshots: the particle positions (then `from`/`to` only give
    /// the rest length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<[f32; 3]>>,
}

fn default_segments() -> u32 {
    16
}
fn default_radius() -> f32 {
    0.02
}
fn default_mass() -> f32 {
    1.0
}
fn default_stiffness() -> f32 {
    1.0e6
}
fn default_friction() -> f32 {
    0.5
}

impl CableSpec {
    pub fn new(from: [f32; 3], to: [f32; 3], segments: u32) -> Self {
        Self {
            id: None,
            from,
            to,
            segments,
            radius: default_radius(),
            mass: default_mass(),
            stiffness: default_stiffness(),
            damping: 0.0,
            pinned: Vec::new(),
            linear_velocity: [0.0; 3],
            restitution: 0.0,
            friction: default_friction(),
            points: None,
        }
    }

    /// One-line error for anything out of range.
    pub fn validate(&self) -> Result<(), String> {
        let finite3 = |name: &str, v: [f32; 3], max: f32| {
            if v.iter().all(|x| x.is_finite() && x.abs() <= max) {
                Ok(())
            } else {
                Err(format!("{name} must be finite and within ±{max}"))
            }
        };
        finite3("from", self.from, super::scene::MAX_COORD)?;
        finite3("to", self.to, super::scene::MAX_COORD)?;
        finite3(
            "linear_velocity",
            self.linear_velocity,
            super::scene::MAX_SPEED,
        )?;
        if self.segments == 0 || self.segments > MAX_SEGMENTS {
            return Err(format!("segments must be in [1, {MAX_SEGMENTS}]"));
        }
        let length = (Vec3::from_array(self.to) - Vec3::from_array(self.from)).length();
        if length.is_nan() || length <= 1.0e-4 {
            return Err("a cable needs from and to apart".into());
        }
        let pos = |name: &str, x: f32, max: f32| {
            if x.is_finite() && x > 0.0 && x <= max {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be positive and at most {max}, got {x}"
                ))
            }
        };
        pos("mass", self.mass, 1.0e6)?;
        pos("stiffness", self.stiffness, 1.0e12)?;
        for (name, x, max) in [
            ("radius", self.radius, 10.0),
            ("damping", self.damping, 1.0e6),
            ("restitution", self.restitution, 1.0),
            ("friction", self.friction, 10.0),
        ] {
            if !(x.is_finite() && x >= 0.0 && x <= max) {
                return Err(format!("{name} must be in [0, {max}], got {x}"));
            }
        }
        if let Some(&p) = self.pinned.iter().find(|&&p| p > self.segments) {
            return Err(format!(
                "pinned particle {p} does not exist (0..={})",
                self.segments
            ));
        }
        if let Some(points) = &self.points {
            if points.len() != self.segments as usize + 1 {
                return Err("points must hold segments + 1 positions".into());
            }
            for p in points {
                finite3("points", *p, super::scene::MAX_COORD)?;
            }
        }
        Ok(())
    }
}

/// A cable's state on the wire: `{"id", "points"}`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CableState {
    pub id: u64,
    pub points: Vec<[f32; 3]>,
}

#[derive(Clone, Debug)]
pub struct Cable {
    pub id: u64,
    pub spec: CableSpec,
    pub x: Vec<Vec3>,
    pub v: Vec<Vec3>,
    /// Inverse mass per particle; 0 for pinned ones.
    pub w: Vec<f32>,
    pub rest: f32,
    pub particle_mass: f32,
}

impl Cable {
    pub fn from_spec(spec: &CableSpec, id: u64) -> Result<Cable, String> {
        spec.validate()?;
        let n = spec.segments as usize;
        let (a, b) = (Vec3::from_array(spec.from), Vec3::from_array(spec.to));
        let x: Vec<Vec3> = match &spec.points {
            Some(p) => p.iter().map(|q| Vec3::from_array(*q)).collect(),
            None => (0..=n).map(|i| a.lerp(b, i as f32 / n as f32)).collect(),
        };
        let particle_mass = spec.mass / (n + 1) as f32;
        let mut w = vec![1.0 / particle_mass; n + 1];
        for &p in &spec.pinned {
            w[p as usize] = 0.0;
        }
        let v0 = Vec3::from_array(spec.linear_velocity);
        let v = w
            .iter()
            .map(|&wi| if wi > 0.0 { v0 } else { Vec3::ZERO })
            .collect();
        Ok(Cable {
            id,
            spec: spec.clone(),
            x,
            v,
            w,
            rest: (b - a).length() / n as f32,
            particle_mass,
        })
    }

    pub fn segments(&self) -> usize {
        self.x.len() - 1
    }

    /// Current length along the particles.
    pub fn length(&self) -> f32 {
        self.x.windows(2).map(|p| (p[1] - p[0]).length()).sum()
    }

    pub fn state(&self) -> CableState {
        CableState {
            id: self.id,
            points: self.x.iter().map(|p| p.to_array()).collect(),
        }
    }

    pub fn to_spec(&self) -> CableSpec {
        let mut s = self.spec.clone();
        s.id = Some(self.id);
        s.points = Some(self.x.iter().map(|p| p.to_array()).collect());
        s
    }

    /// Kinetic plus gravitational potential energy (J), for tests.
    pub fn energy(&self, gravity: Vec3) -> f32 {
        self.x
            .iter()
            .zip(&self.v)
            .zip(&self.w)
            .filter(|(_, &w)| w > 0.0)
            .map(|((x, v), _)| {
                0.5 * self.particle_mass * v.length_squared() - self.particle_mass * gravity.dot(*x)
            })
            .sum()
    }

    /// Substep prediction: gravity, then positions.
    pub(crate) fn predict(&mut self, g: Vec3, h: f32) {
        for i in 0..self.x.len() {
            if self.w[i] > 0.0 {
                self.v[i] += g * h;
                self.x[i] += self.v[i] * h;
            }
        }
    }

    /// XPBD distance constraints (one pass, alternating direction).
    pub(crate) fn solve_segments(&mut self, h: f32, lambda: &mut [f32], reverse: bool) {
        let alpha = 1.0 / (self.spec.stiffness * h * h);
        let n = self.segments();
        for k in 0..n {
            let i = if reverse { n - 1 - k } else { k };
            let (wi, wj) = (self.w[i], self.w[i + 1]);
            let ws = wi + wj;
            if ws == 0.0 {
                continue;
            }
            let d = self.x[i + 1] - self.x[i];
            let len = d.length();
            if len < 1.0e-9 {
                continue;
            }
            let nrm = d / len;
            let c = len - self.rest;
            let dl = (-c - alpha * lambda[i]) / (ws + alpha);
            lambda[i] += dl;
            self.x[i] -= nrm * (dl * wi);
            self.x[i + 1] += nrm * (dl * wj);
        }
    }

    /// Velocities from the substep's motion, then segment damping.
    pub(crate) fn update_velocities(&mut self, prev: &[Vec3], h: f32) {
        for (((x, v), &w), &p) in self.x.iter_mut().zip(&mut self.v).zip(&self.w).zip(prev) {
            if w > 0.0 {
                *v = (*x - p) / h;
            } else {
                *x = p;
                *v = Vec3::ZERO;
            }
        }
        let c = self.spec.damping;
        if c > 0.0 {
            for i in 0..self.segments() {
                let (wi, wj) = (self.w[i], self.w[i + 1]);
                let ws = wi + wj;
                if ws == 0.0 {
                    continue;
                }
                let d = (self.x[i + 1] - self.x[i]).normalize_or_zero();
                let rel = (self.v[i + 1] - self.v[i]).dot(d);
                // Implicit: the relative speed decays by 1/(1 + c·h·Σw).
                let dv = rel * (1.0 - 1.0 / (1.0 + c * h * ws));
                self.v[i] += d * (dv * wi / ws);
                self.v[i + 1] -= d * (dv * wj / ws);
            }
        }
    }
}

/// A segment in the cable–cable pass: (cable index, segment index).
type Seg = (u32, u32);

/// Sweeps every pair of segments that could meet during a substep (a hash
/// grid over the swept boxes, so the cost follows the close pairs) and
/// resolves impacts in time order per pair; returns (pairs tested, impacts,
/// subdivisions).
pub(crate) fn collide_cables(cables: &mut [Cable], prev: &[Vec<Vec3>], h: f32) -> (u64, u64, u64) {
    // Grid cell: a few times the largest segment + radius.
    let mut cell = 0.0f32;
    for c in cables.iter() {
        cell = cell.max(c.rest * 1.5 + 2.0 * c.spec.radius);
    }
    if cell <= 0.0 {
        return (0, 0, 0);
    }
    let inv = 1.0 / cell;
    let key = |p: Vec3| {
        (
            (p.x * inv).floor() as i32,
            (p.y * inv).floor() as i32,
            (p.z * inv).floor() as i32,
        )
    };
    let mut grid: HashMap<(i32, i32, i32), Vec<Seg>> = HashMap::new();
    let mut boxes: Vec<Vec<(Vec3, Vec3)>> = Vec::with_capacity(cables.len());
    for (ci, c) in cables.iter().enumerate() {
        // Padded so that boxes of threads (radius 0) meeting exactly at a
        // boundary still overlap: the culling must stay conservative.
        let r = Vec3::splat(c.spec.radius + 1.0e-5);
        let mut bs = Vec::with_capacity(c.segments());
        for s in 0..c.segments() {
            let pts = [prev[ci][s], prev[ci][s + 1], c.x[s], c.x[s + 1]];
            let lo = pts
                .iter()
                .fold(Vec3::splat(f32::INFINITY), |a, &p| a.min(p))
                - r;
            let hi = pts
                .iter()
                .fold(Vec3::splat(f32::NEG_INFINITY), |a, &p| a.max(p))
                + r;
            bs.push((lo, hi));
            let (a, b) = (key(lo), key(hi));
            if (b.0 - a.0) as i64 * (b.1 - a.1) as i64 * (b.2 - a.2) as i64 > 64 {
                continue; // a wildly fast segment: skip the grid, it is rare
            }
            for x in a.0..=b.0 {
                for y in a.1..=b.1 {
                    for z in a.2..=b.2 {
                        grid.entry((x, y, z))
                            .or_default()
                            .push((ci as u32, s as u32));
                    }
                }
            }
        }
        boxes.push(bs);
    }
    let mut pairs: Vec<(Seg, Seg)> = Vec::new();
    for segs in grid.values() {
        for i in 0..segs.len() {
            for j in i + 1..segs.len() {
                let (a, b) = if segs[i] < segs[j] {
                    (segs[i], segs[j])
                } else {
                    (segs[j], segs[i])
                };
                if a.0 == b.0 && b.1.abs_diff(a.1) <= 1 {
                    continue; // neighbours on one cable share a particle
                }
                let (ba, bb) = (
                    boxes[a.0 as usize][a.1 as usize],
                    boxes[b.0 as usize][b.1 as usize],
                );
                if ba.0.cmple(bb.1).all() && bb.0.cmple(ba.1).all() {
                    pairs.push((a, b));
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let (mut impacts, mut subdivisions) = (0u64, 0u64);
    for &(a, b) in &pairs {
        let (ca, sa) = (a.0 as usize, a.1 as usize);
        let (cb, sb) = (b.0 as usize, b.1 as usize);
        let start = [
            prev[ca][sa],
            prev[ca][sa + 1],
            prev[cb][sb],
            prev[cb][sb + 1],
        ]
        .map(|p| p.as_dvec3());
        let end = [
            cables[ca].x[sa],
            cables[ca].x[sa + 1],
            cables[cb].x[sb],
            cables[cb].x[sb + 1],
        ]
        .map(|p| p.as_dvec3());
        let (ra, rb) = (cables[ca].spec.radius as f64, cables[cb].spec.radius as f64);
        // Threads get a 1 mm collision thickness: with exactly zero thickness
        // two touching threads are coplanar every substep and rounding alone
        // decides which side they end on (the exact edge–edge CCD finds the
        // first crossing, but cannot keep them apart afterwards).
        let (ra, rb) = (ra.max(MIN_THICKNESS), rb.max(MIN_THICKNESS));
        let res = thick_edge_edge_ccd(start, end, ra, rb, 1e-4);
        subdivisions += res.subdivisions as u64;
        let toi = res.toi;
        let Some(toi) = toi else { continue };
        let t = toi as f32;
        let at = |s: usize, i: usize, c: usize| prev[c][s + i].lerp(cables[c].x[s + i], t);
        let (p0, p1, q0, q1) = (at(sa, 0, ca), at(sa, 1, ca), at(sb, 0, cb), at(sb, 1, cb));
        let sc = closest_points_segment_segment(
            p0.as_dvec3(),
            p1.as_dvec3(),
            q0.as_dvec3(),
            q1.as_dvec3(),
        );
        let (s, u) = (sc.s as f32, sc.t as f32);
        let pa = p0.lerp(p1, s);
        let pb = q0.lerp(q1, u);
        // The contact normal from A to B: along the gap when there is one
        // (thick cables stop at r1 + r2); for threads touching at zero
        // distance, the edges' cross product, oriented by which side B was
        // on at the start of the substep.
        let gap = pb - pa;
        let n = if gap.length() > 1.0e-4 * (ra + rb).max(1.0e-3) as f32 {
            gap.normalize()
        } else {
            let c = (p1 - p0).cross(q1 - q0).normalize_or(Vec3::Y);
            let start_gap = {
                let sc0 = closest_points_segment_segment(start[0], start[1], start[2], start[3]);
                (sc0.point_b - sc0.point_a).as_vec3()
            };
            if start_gap.dot(c) < 0.0 {
                -c
            } else {
                c
            }
        };
        // Velocities over the substep along each segment at the contact.
        let vel = |c: usize, s0: usize, f: f32| {
            let v0 = (cables[c].x[s0] - prev[c][s0]) / h;
            let v1 = (cables[c].x[s0 + 1] - prev[c][s0 + 1]) / h;
            v0.lerp(v1, f)
        };
        let vn = (vel(cb, sb, u) - vel(ca, sa, s)).dot(n);
        if vn >= 0.0 {
            continue;
        }
        let wts = [
            (ca, sa, 1.0 - s, -1.0f32),
            (ca, sa + 1, s, -1.0),
            (cb, sb, 1.0 - u, 1.0),
            (cb, sb + 1, u, 1.0),
        ];
        let denom: f32 = wts
            .iter()
            .map(|&(c, i, wgt, _)| wgt * wgt * cables[c].w[i])
            .sum();
        if denom <= 0.0 {
            continue;
        }
        let e = cables[ca].spec.restitution.max(cables[cb].spec.restitution);
        let j = -(1.0 + e) * vn / denom;
        impacts += 1;
        // Move each particle back to the impact time and on with its new
        // velocity for the rest of the substep.
        for &(c, i, wgt, sign) in &wts {
            let wi = cables[c].w[i];
            if wi == 0.0 {
                continue;
            }
            let v_old = (cables[c].x[i] - prev[c][i]) / h;
            let v_new = v_old + n * (sign * j * wgt * wi);
            let x_t = prev[c][i] + v_old * (t * h);
            cables[c].x[i] = x_t + v_new * ((1.0 - t) * h);
        }
    }
    (pairs.len() as u64, impacts, subdivisions)
}
