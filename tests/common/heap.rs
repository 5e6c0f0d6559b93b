//! The heap of the cables bench (`benches/cables.rs`) and of the heap
//! tests: a 12 m box (floor and four walls) and `cables` cables of 50
//! segments, 10 m long, 2 cm thick, in crossed layers of 20 from 1 m up,
//! 15 cm apart.

use arbiter::physics::cable::CableSpec;
use arbiter::physics::{BodyKind, BodySpec, ShapeSpec, World};

/// The box's floor and walls: centre and half extents of each.
pub const WALLS: [([f32; 3], [f32; 3]); 5] = [
    ([0.0, -0.5, 0.0], [6.0, 0.5, 6.0]),
    ([6.5, 3.0, 0.0], [0.5, 3.0, 6.0]),
    ([-6.5, 3.0, 0.0], [0.5, 3.0, 6.0]),
    ([0.0, 3.0, 6.5], [6.0, 3.0, 0.5]),
    ([0.0, 3.0, -6.5], [6.0, 3.0, 0.5]),
];

/// Where cable `k` of the heap lies: from, to.
pub fn heap_cable_ends(k: usize) -> ([f32; 3], [f32; 3]) {
    let (layer, row) = (k / 20, k % 20);
    let (y, z) = (1.0 + layer as f32 * 0.15, -5.0 + row as f32 * 0.5);
    if layer % 2 == 0 {
        ([-5.0, y, z], [5.0, y, z])
    } else {
        ([z, y, -5.0], [z, y, 5.0])
    }
}

/// The heap, each cable with friction `friction` (the default if `None`).
pub fn cable_heap(cables: usize, friction: Option<f32>) -> World {
    let mut w = World::default();
    for (p, h) in WALLS {
        let wall = BodySpec::new(ShapeSpec::Box { half_extents: h })
            .kind(BodyKind::Static)
            .position(p);
        w.add_body(&wall).unwrap();
    }
    for k in 0..cables {
        let (from, to) = heap_cable_ends(k);
        let mut spec = CableSpec::new(from, to, 50);
        spec.radius = 0.02;
        spec.damping = 0.5;
        if let Some(mu) = friction {
            spec.friction = mu;
        }
        w.add_cable(&spec).unwrap();
    }
    w
}
