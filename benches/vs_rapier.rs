//! Side-by-side step times: Arbiter vs rapier3d on the same scenes, in one run,
//! single-threaded, dt = 1/60.
//!
//! Settings side by side: Arbiter runs 4 substeps with one solve and one relax
//! iteration each (soft contacts, 30 Hz, damping ratio 10); rapier3d runs its
//! defaults: 4 solver iterations with one PGS and one stabilization iteration
//! each (its soft-constraint TGS). Both put bodies to sleep. Arbiter's ground
//! is its half-space plane; rapier's is its half-space collider.
//!
//! `cargo bench --bench vs_rapier` (set ARBITER_BENCH_STEPS to change the
//! number of measured steps; default 300).

use arbiter::physics::{BodyKind, BodySpec, ShapeSpec, World};
use rapier3d::prelude as rp;
use std::time::Instant;

#[derive(Clone, Copy)]
enum S {
    Box(f32, f32, f32),
    Sphere(f32),
    Capsule(f32, f32),
}

struct Scene {
    name: &'static str,
    /// (shape, position, static?)
    bodies: Vec<(S, [f32; 3], bool)>,
}

fn pyramid(rows: usize) -> Scene {
    let h = 0.5;
    let mut bodies = Vec::new();
    for row in 0..rows {
        let n = rows - row;
        for i in 0..n {
            let x = (i as f32 - (n as f32 - 1.0) / 2.0) * (2.0 * h + 0.01);
            let y = h + row as f32 * 2.0 * h;
            bodies.push((S::Box(h, h, h), [x, y, 0.0], false));
        }
    }
    Scene {
        name: "pyramid_40_rows_820_boxes",
        bodies,
    }
}

fn spheres_in_container(n: usize) -> Scene {
    let mut bodies = Vec::new();
    let (half, wall_h, t) = (6.0f32, 6.0f32, 0.5f32);
    // Walls (static boxes) around a 12 m × 12 m floor.
    bodies.push((S::Box(half + t, t, half + t), [0.0, -t, 0.0], true));
    bodies.push((S::Box(t, wall_h, half + t), [half + t, wall_h, 0.0], true));
    bodies.push((S::Box(t, wall_h, half + t), [-half - t, wall_h, 0.0], true));
    bodies.push((S::Box(half + t, wall_h, t), [0.0, wall_h, half + t], true));
    bodies.push((S::Box(half + t, wall_h, t), [0.0, wall_h, -half - t], true));
    let r = 0.25;
    let per_row = 20;
    for i in 0..n {
        let x = (i % per_row) as f32 * 0.55 - 5.2;
        let z = ((i / per_row) % per_row) as f32 * 0.55 - 5.2;
        let y = 1.0 + (i / (per_row * per_row)) as f32 * 0.6;
        bodies.push((S::Sphere(r), [x + 0.01 * (i % 7) as f32, y, z], false));
    }
    Scene {
        name: "4000_spheres_in_container",
        bodies,
    }
}

fn mixed(n: usize) -> Scene {
    let mut bodies = Vec::new();
    let per = 10;
    for i in 0..n {
        let x = (i % per) as f32 * 1.5 - 7.0;
        let z = ((i / per) % per) as f32 * 1.5 - 7.0;
        let y = 1.0 + (i / (per * per)) as f32 * 1.5;
        let s = if i % 2 == 0 {
            S::Box(0.4, 0.3, 0.5)
        } else {
            S::Capsule(0.3, 0.25)
        };
        bodies.push((s, [x, y, z], false));
    }
    Scene {
        name: "1000_boxes_and_capsules_on_plane",
        bodies,
    }
}

fn arbiter_world(scene: &Scene) -> (World, Vec<u64>) {
    let mut w = World::default();
    w.add_body(
        &BodySpec::new(ShapeSpec::Plane {
            normal: [0.0, 1.0, 0.0],
            offset: 0.0,
        })
        .kind(BodyKind::Static),
    )
    .unwrap();
    let ids = scene
        .bodies
        .iter()
        .map(|(s, p, fixed)| {
            let shape = match *s {
                S::Box(x, y, z) => ShapeSpec::Box {
                    half_extents: [x, y, z],
                },
                S::Sphere(r) => ShapeSpec::Sphere { radius: r },
                S::Capsule(hh, r) => ShapeSpec::Capsule {
                    half_height: hh,
                    radius: r,
                },
            };
            let kind = if *fixed {
                BodyKind::Static
            } else {
                BodyKind::Dynamic
            };
            w.add_body(&BodySpec::new(shape).kind(kind).position(*p))
                .unwrap()
        })
        .collect();
    (w, ids)
}

fn rapier_world(scene: &Scene) -> (rp::PhysicsWorld, Vec<rp::RigidBodyHandle>) {
    let mut w = rp::PhysicsWorld {
        gravity: rp::Vector::new(0.0, -9.81, 0.0),
        ..Default::default()
    };
    let ground = w.insert_body(rp::RigidBodyBuilder::fixed());
    w.insert_collider(
        rp::ColliderBuilder::new(rp::SharedShape::halfspace(rp::Vector::Y)).friction(0.5),
        Some(ground),
    );
    let handles = scene
        .bodies
        .iter()
        .map(|(s, p, fixed)| {
            let b = if *fixed {
                rp::RigidBodyBuilder::fixed()
            } else {
                rp::RigidBodyBuilder::dynamic()
            }
            .translation(rp::Vector::new(p[0], p[1], p[2]));
            let c = match *s {
                S::Box(x, y, z) => rp::ColliderBuilder::cuboid(x, y, z),
                S::Sphere(r) => rp::ColliderBuilder::ball(r),
                S::Capsule(hh, r) => rp::ColliderBuilder::capsule_y(hh, r),
            }
            .friction(0.5)
            .density(1000.0);
            w.insert(b, c).0
        })
        .collect();
    (w, handles)
}

fn main() {
    let steps: usize = std::env::var("ARBITER_BENCH_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    // `cargo bench` passes --bench; ignore arguments.
    println!("scene, steps, arbiter ms/step, rapier ms/step, ratio (arbiter/rapier), notes");
    for scene in [pyramid(40), spheres_in_container(4000), mixed(1000)] {
        let (mut a, ids) = arbiter_world(&scene);
        let top_start = a.body(*ids.last().unwrap()).unwrap().pose.position;
        let t = Instant::now();
        for _ in 0..steps {
            a.step();
        }
        let a_ms = t.elapsed().as_secs_f64() * 1000.0 / steps as f64;
        let top_end = a.body(*ids.last().unwrap()).unwrap().pose.position;
        let awake = a.bodies().filter(|b| b.is_dynamic() && !b.sleeping).count();

        let (mut r, handles) = rapier_world(&scene);
        let rtop_start = r.bodies[*handles.last().unwrap()].translation();
        let t = Instant::now();
        for _ in 0..steps {
            r.step();
        }
        let r_ms = t.elapsed().as_secs_f64() * 1000.0 / steps as f64;
        let rtop_end = r.bodies[*handles.last().unwrap()].translation();
        println!(
            "{}, {steps}, {a_ms:.3}, {r_ms:.3}, {:.2}, arbiter last body moved {:.3} m ({awake} awake); rapier last body moved {:.3} m",
            scene.name,
            a_ms / r_ms,
            (top_end - top_start).length(),
            (rtop_end - rtop_start).length(),
        );
    }
}
