//! Helpers shared by the cable test files (each uses some of them).
#![allow(dead_code)]

pub mod heap;

use arbiter::physics::cable::CableSpec;
use arbiter::physics::{BodyKind, BodySpec, ShapeSpec, Vec3, World, WorldSettings};
use glam::DVec3;

pub fn world(gravity: Vec3) -> World {
    World::new(WorldSettings {
        gravity,
        ..Default::default()
    })
}

/// A world under gravity with a static floor, `half` metres each way from
/// the origin, whose top is at y = 0.
pub fn on_floor(half: f32) -> World {
    let mut w = world(Vec3::new(0.0, -9.81, 0.0));
    w.add_body(
        &BodySpec::new(ShapeSpec::Box {
            half_extents: [half, 0.5, half],
        })
        .kind(BodyKind::Static)
        .position([0.0, -0.5, 0.0]),
    )
    .unwrap();
    w
}

/// A small deterministic generator in [0, 1).
pub fn lcg(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 40) as f32) / (1u64 << 24) as f32
}

/// A 40-segment cable (1 kg, damping 0.5) from `from` to `to`.
pub fn lay_cable(w: &mut World, from: [f32; 3], to: [f32; 3]) -> u64 {
    let mut spec = CableSpec::new(from, to, 40);
    spec.damping = 0.5;
    w.add_cable(&spec).unwrap()
}

/// A dynamic box of `half` extents at `at`, of `mass` kg.
pub fn box_spec(half: [f32; 3], at: [f32; 3], mass: f32) -> BodySpec {
    BodySpec::new(ShapeSpec::Box { half_extents: half })
        .position(at)
        .mass(mass)
}

/// A random pile on a 3 m floor: with odds `slab_odds`, a free slab
/// (5–35 kg, 10 cm thick) under it; then 2–12 cables (40 segments, 2 m)
/// crossing at random angles, 4 cm apart in height. Returns the world and
/// the pile's nominal top.
pub fn random_pile(seed: &mut u64, slab_odds: f32) -> (World, f32) {
    let mut w = on_floor(3.0);
    let base = if lcg(seed) < slab_odds {
        let slab = box_spec([1.2, 0.05, 1.2], [0.0, 0.05, 0.0], 5.0 + 30.0 * lcg(seed));
        w.add_body(&slab).unwrap();
        0.1
    } else {
        0.0
    };
    let count = 2 + (lcg(seed) * 11.0) as usize;
    for k in 0..count {
        let angle = std::f32::consts::PI * lcg(seed);
        let (c, s) = (angle.cos(), angle.sin());
        let o = 0.4 * (lcg(seed) - 0.5);
        let y = base + 0.02 + 0.04 * k as f32;
        lay_cable(
            &mut w,
            [-c - s * o, y, -s + c * o],
            [c - s * o, y, s + c * o],
        );
    }
    (w, base + 0.04 * count as f32)
}

/// Steps `w` `steps` times and returns, for each of `n` things (bodies or
/// cables), the step it first fell asleep at (if it did) and the last step
/// it woke at (0 if never). `look(w, k)` gives thing `k`'s sleep, whether
/// it is still (no velocity) and its state; while asleep it must be still
/// and its state must not change.
pub fn sleep_steps<S: PartialEq>(
    w: &mut World,
    n: usize,
    steps: usize,
    what: &str,
    look: impl Fn(&World, usize) -> (bool, bool, S),
) -> Vec<(Option<usize>, usize)> {
    let mut out = vec![(None, 0); n];
    let mut asleep_at: Vec<Option<S>> = (0..n).map(|_| None).collect();
    for step in 0..steps {
        w.step();
        for (k, at) in asleep_at.iter_mut().enumerate() {
            let (asleep, still, state) = look(w, k);
            if !asleep {
                if at.is_some() {
                    out[k].1 = step;
                }
                *at = None;
                continue;
            }
            out[k].0.get_or_insert(step);
            assert!(still, "{what}: {k} asleep with a velocity at step {step}");
            if let Some(s) = at {
                assert!(*s == state, "{what}: {k} moved while asleep at step {step}");
            }
            *at = Some(state);
        }
    }
    out
}

/// Distance from `p` to the segment `b0 b1`.
pub fn point_segment(p: DVec3, b0: DVec3, b1: DVec3) -> f64 {
    let d = b1 - b0;
    let t = ((p - b0).dot(d) / d.length_squared().max(1e-300)).clamp(0.0, 1.0);
    (p - b0.lerp(b1, t)).length()
}

/// Distance of two segments (the distance from a point of A to B is
/// convex along A: a ternary search finds its least, to far below a
/// nanometre).
pub fn segment_distance(a0: DVec3, a1: DVec3, b0: DVec3, b1: DVec3) -> f64 {
    let at = |s: f64| point_segment(a0.lerp(a1, s), b0, b1);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..100 {
        let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if at(m1) <= at(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    at(0.5 * (lo + hi))
}

/// The deepest overlap (m) of two segments' capsules in `w` (of different
/// cables, or of one more than two links apart), all its cables of
/// `radius`: a grid of 25 cm cells over the segments' midpoints, each
/// segment against those of its cell and the 26 around (segments up to
/// 25 cm long).
pub fn deepest_overlap(w: &World, radius: f64) -> f64 {
    use std::collections::HashMap;
    let segs: Vec<(usize, usize, DVec3, DVec3)> = w
        .cables()
        .iter()
        .enumerate()
        .flat_map(|(c, cable)| {
            (0..cable.x.len() - 1)
                .map(move |i| (c, i, cable.x[i].as_dvec3(), cable.x[i + 1].as_dvec3()))
        })
        .collect();
    let cell = |s: &(usize, usize, DVec3, DVec3)| (s.2.lerp(s.3, 0.5) / 0.25).floor().as_ivec3();
    let mut grid: HashMap<glam::IVec3, Vec<usize>> = HashMap::new();
    for (k, s) in segs.iter().enumerate() {
        grid.entry(cell(s)).or_default().push(k);
    }
    let mut deepest = f64::NEG_INFINITY;
    for (k, s) in segs.iter().enumerate() {
        let c = cell(s);
        for d in (0..27).map(|n| glam::IVec3::new(n % 3 - 1, n / 3 % 3 - 1, n / 9 - 1)) {
            for &m in grid.get(&(c + d)).into_iter().flatten() {
                let t = &segs[m];
                if m <= k || (t.0 == s.0 && t.1.abs_diff(s.1) <= 2) {
                    continue;
                }
                deepest = deepest.max(2.0 * radius - segment_distance(s.2, s.3, t.2, t.3));
            }
        }
    }
    deepest
}

/// A cable's energy under gravity `g` (along −y): its particles' kinetic
/// and potential energy and its segments' strain energy (`k·stretch²/2`).
pub fn cable_energy(w: &World, id: u64, g: f32) -> f32 {
    let c = w.cable(id).unwrap();
    let moving = c.x.iter().zip(&c.v).zip(&c.w).filter(|(_, &wi)| wi > 0.0);
    let motion: f32 = moving
        .map(|((x, v), &wi)| (0.5 * v.length_squared() + g * x.y) / wi)
        .sum();
    let strain: f32 =
        c.x.windows(2)
            .map(|q| 0.5 * c.spec.stiffness * ((q[1] - q[0]).length() - c.rest).powi(2))
            .sum();
    motion + strain
}

/// A cable (39 segments, 1.4 m) dropped from `y` (its lower end, at
/// `from_x`) across a line pinned at both ends (60 segments, 2.2 m, from
/// 2.5 m down to 1.1 m), both of `stiffness`, under gravity.
#[derive(Clone, Copy, Debug)]
pub struct LineDrop {
    pub line_radius: f32,
    pub line_mass: f32,
    pub drop_radius: f32,
    pub drop_mass: f32,
    pub stiffness: f32,
    pub from_x: f32,
    pub y: f32,
    pub friction: f32,
    /// With `WorldSettings::cable_audit` (ten times slower).
    pub audit: bool,
}

impl LineDrop {
    /// What the fall gives, down to the line (at 1.8 m) and 1 m on.
    pub fn fall(&self) -> f32 {
        self.drop_mass * 9.81 * (self.y - 1.8 + 1.0)
    }

    /// 120 steps of the drop: the worst link's strain (|length / rest −
    /// 1|), the most the energy (kinetic, potential, strain) rose above
    /// its start, the particles the fail-safe froze, and (with `audit`)
    /// the segment pairs whose centre lines touched.
    pub fn run(&self) -> (f32, f32, u64, u64) {
        let mut w = world(Vec3::new(0.0, -9.81, 0.0));
        w.settings.cable_audit = self.audit;
        let mut line = CableSpec::new([-0.6, 2.5, 0.0], [-0.6, 1.1, 1.7], 60);
        line.pinned = vec![0, 60];
        (line.radius, line.mass, line.stiffness) =
            (self.line_radius, self.line_mass, self.stiffness);
        w.add_cable(&line).unwrap();
        let (x, y) = (self.from_x, self.y);
        let mut dropped = CableSpec::new([x, y, 0.85], [x - 1.2, y + 0.75, 0.79], 39);
        (dropped.radius, dropped.mass, dropped.stiffness) =
            (self.drop_radius, self.drop_mass, self.stiffness);
        dropped.friction = self.friction;
        w.add_cable(&dropped).unwrap();
        let energy =
            |w: &World| -> f32 { w.cables().iter().map(|c| cable_energy(w, c.id, 9.81)).sum() };
        let e0 = energy(&w);
        let (mut worst, mut rise, mut frozen, mut crossings) = (0.0f32, 0.0f32, 0, 0);
        for _ in 0..120 {
            w.step();
            frozen += w.cable_stats.frozen;
            crossings += w.cable_stats.audit_crossings;
            for c in w.cables() {
                for q in c.x.windows(2) {
                    worst = worst.max(((q[1] - q[0]).length() / c.rest - 1.0).abs());
                }
            }
            rise = rise.max(energy(&w) - e0);
        }
        (worst, rise, frozen, crossings)
    }
}

/// `n` spheres of 25 cm spread over a sphere of 30 m about the origin
/// (apart), thrown at its centre at 600 m/s: without gravity, their boxes
/// swept over the third step of 60 Hz all hold the centre (every pair
/// overlaps).
pub fn converging_spheres(n: usize) -> Vec<BodySpec> {
    // Points spread over the sphere (a Fibonacci lattice).
    let golden = std::f32::consts::PI * (3.0 - 5f32.sqrt());
    (0..n)
        .map(|k| {
            let y = 1.0 - 2.0 * (k as f32 + 0.5) / n as f32;
            let r = (1.0 - y * y).sqrt();
            let a = golden * k as f32;
            let dir = Vec3::new(r * a.cos(), y, r * a.sin());
            BodySpec::new(ShapeSpec::Sphere { radius: 0.25 })
                .position((dir * 30.0).to_array())
                .linear_velocity((dir * -600.0).to_array())
        })
        .collect()
}
