//! Helpers shared by the cable test files (each uses some of them).
#![allow(dead_code)]

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
