//! Helpers shared by the cable test files (each uses some of them).
#![allow(dead_code)]

pub mod heap;

use arbiter::physics::cable::CableSpec;
use arbiter::physics::{BodyKind, BodySpec, ShapeSpec, Vec3, World, WorldSettings};

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
