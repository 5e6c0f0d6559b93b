//! Cables: ms per step with full cable–cable CCD for 1,000, 10,000 and
//! 50,000 segments (a heap of cables falling into a box), and the naive
//! all-pairs baseline (every segment pair swept every substep) for 500.
//!
//! `cargo bench --bench cables` prints the mean and the slowest of the
//! measured steps (ARBITER_BENCH_STEPS, default 30 measured
//! steps after 30 steps of falling; ARBITER_BENCH_SIZES, default
//! `1000,10000,50000`; ARBITER_BENCH_SUBSTEPS and ARBITER_BENCH_PASSES,
//! the world's defaults; ARBITER_BENCH_TRACE set: one line per measured
//! step, to follow the heap as it settles; then the same number of steps
//! from step 91 (or from the end of a longer first window), the heap
//! packed and still awake, its dearest part
//! (ARBITER_BENCH_PACKED=0 skips them); ARBITER_BENCH_SETTLE, seconds:
//! then also the same number of steps from that time on, the heap settled
//! and its cables at rest asleep, and as many again while one more cable
//! falls onto it from 6 m above its start).
//!
//! Beside each size, the same heap in rapier3d, two ways: rigid chains
//! (each segment a capsule of the cable's radius, its length between the
//! joints and the cable's mass shared out, with CCD, joined to the next by
//! a spherical joint, no contacts between the two) and rapier's own ropes
//! (soft bodies, `SoftBodyBuilder::rope`); the same walls, rapier's
//! defaults otherwise (no damping; the heap's cables have 0.5), on one
//! thread (its default features; Arbiter's stage runs on two,
//! `RAYON_NUM_THREADS=1` for one): the same 30 steps of falling, then the
//! same measured steps, and the ratio. ARBITER_BENCH_RAPIER=0 skips them.

use arbiter::physics::cable::CableSpec;
use arbiter::physics::collision::ccd_thick::thick_edge_edge_ccd;
use arbiter::physics::{Vec3, World};
use rapier3d::prelude as rp;
use std::time::Instant;

#[path = "../tests/common/heap.rs"]
mod heap;
use heap::cable_heap;

/// A setting from the environment (to measure other substep and pass
/// counts), else the default.
fn env_or(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn heap(segments: usize) -> World {
    let mut w = cable_heap(segments / 50, None);
    let s = &mut w.settings;
    s.cable_substeps = env_or("ARBITER_BENCH_SUBSTEPS", s.cable_substeps);
    s.cable_iterations = env_or("ARBITER_BENCH_PASSES", s.cable_iterations);
    w
}

/// Every segment pair of every cable swept with the thick-segment CCD: the
/// all-pairs baseline the issue starts from.
fn naive_all_pairs(x0: &[Vec3], x1: &[Vec3], per: usize) -> usize {
    let segs: Vec<usize> = (0..x0.len() - 1)
        .filter(|i| (i + 1) % (per + 1) != 0)
        .collect();
    let mut hits = 0;
    for a in 0..segs.len() {
        for b in a + 1..segs.len() {
            let (i, j) = (segs[a], segs[b]);
            if j <= i + 1 {
                continue;
            }
            let start = [x0[i], x0[i + 1], x0[j], x0[j + 1]].map(|p| p.as_dvec3());
            let end = [x1[i], x1[i + 1], x1[j], x1[j + 1]].map(|p| p.as_dvec3());
            if thick_edge_edge_ccd(start, end, 0.02, 0.02, 1e-4)
                .toi
                .is_some()
            {
                hits += 1;
            }
        }
    }
    hits
}

/// The heap of `tests/common/heap.rs` in rapier3d: `cables` chains of 50
/// capsules (0.2 m between joints, radius 2 cm, 1 kg a chain, friction
/// 0.5) with CCD, spherical joints between neighbours, in the same box.
fn rapier_heap(cables: usize) -> rp::PhysicsWorld {
    let mut w = rp::PhysicsWorld {
        gravity: rp::Vector::new(0.0, -9.81, 0.0),
        ..Default::default()
    };
    for (p, h) in heap::WALLS {
        w.insert(
            rp::RigidBodyBuilder::fixed().translation(rp::Vector::new(p[0], p[1], p[2])),
            rp::ColliderBuilder::cuboid(h[0], h[1], h[2]).friction(0.5),
        );
    }
    let (segments, half) = (50, 0.1);
    for k in 0..cables {
        let (from, to) = heap::heap_cable_ends(k);
        let along_x = from[0] != to[0];
        let mut last: Option<rp::RigidBodyHandle> = None;
        for i in 0..segments {
            let f = (i as f32 + 0.5) / segments as f32;
            let at = rp::Vector::from(from).lerp(rp::Vector::from(to), f);
            // (capsule_x turned to lie along z.)
            let turn = if along_x {
                rp::Vector::ZERO
            } else {
                rp::Vector::new(0.0, -std::f32::consts::FRAC_PI_2, 0.0)
            };
            let body = rp::RigidBodyBuilder::dynamic()
                .translation(at)
                .rotation(turn)
                .ccd_enabled(true);
            let collider = rp::ColliderBuilder::capsule_x(half, 0.02)
                .friction(0.5)
                .mass(1.0 / segments as f32);
            let (handle, _) = w.insert(body, collider);
            if let Some(prev) = last {
                w.insert_impulse_joint(
                    prev,
                    handle,
                    rp::SphericalJointBuilder::new()
                        .local_anchor1(rp::Vector::new(half, 0.0, 0.0))
                        .local_anchor2(rp::Vector::new(-half, 0.0, 0.0))
                        .contacts_enabled(false),
                );
            }
            last = Some(handle);
        }
    }
    w
}

/// The heap of `tests/common/heap.rs` in rapier3d's own ropes: soft
/// bodies of 51 particles (`SoftBodyBuilder::rope`: stretch and bend
/// edges, colliding as a wire), radius 2 cm, 1 kg each, its defaults
/// otherwise, in the same box.
fn rapier_rope_heap(cables: usize) -> rp::PhysicsWorld {
    let mut w = rapier_heap(0);
    for k in 0..cables {
        let (from, to) = heap::heap_cable_ends(k);
        w.insert_soft_body(
            rp::SoftBodyBuilder::rope(rp::Vector::from(from), rp::Vector::from(to), 51)
                .particle_radius(0.02)
                .mass(1.0),
        );
    }
    w
}

/// The mean of some heights.
fn mean(ys: impl Iterator<Item = f32>) -> f32 {
    let (sum, n) = ys.fold((0.0, 0), |(s, n), y| (s + y, n + 1));
    sum / n.max(1) as f32
}

/// Milliseconds a call of `step` takes over `steps` calls: the mean and
/// the slowest.
fn ms_per_step(steps: usize, mut step: impl FnMut()) -> (f64, f64) {
    let (mut total, mut slowest) = (0.0f64, 0.0f64);
    for _ in 0..steps {
        let started = Instant::now();
        step();
        let ms = started.elapsed().as_secs_f64() * 1e3;
        total += ms;
        slowest = slowest.max(ms);
    }
    (total / steps as f64, slowest)
}

fn main() {
    let steps: usize = std::env::var("ARBITER_BENCH_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let settings = heap(0).settings;
    println!(
        "segments, ms/step ({} substeps x {} passes, full CCD), slowest step ms, segment pairs/step, contacts/step, body contacts/step, exact CCD queries/step, impacts/step, frozen/step, rebuilds+extensions/step, every step within 16.7 ms",
        settings.cable_substeps, settings.cable_iterations
    );
    let sizes: Vec<usize> = std::env::var("ARBITER_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 50_000]);
    for n in sizes {
        let mut w = heap(n);
        for _ in 0..30 {
            w.step();
        }
        let t = Instant::now();
        let mut sum = [0u64; 7];
        let mut phases = [0.0f64; 6];
        let mut slowest = 0.0f64;
        let trace = std::env::var("ARBITER_BENCH_TRACE").is_ok();
        for step in 0..steps {
            let started = Instant::now();
            w.step();
            slowest = slowest.max(started.elapsed().as_secs_f64() * 1e3);
            let s = w.cable_stats;
            if trace {
                println!(
                    "  step {}: {:.1} ms, {} substeps, {} pairs, {} contacts, {} extensions; pairs {:.1}, extensions {:.1}, body contacts {:.1}, solve {:.1}, verify {:.1}, substep ends {:.1} ms",
                    31 + step,
                    started.elapsed().as_secs_f64() * 1e3,
                    s.substeps,
                    s.pairs,
                    s.contacts,
                    s.rebuilds + s.extensions,
                    s.ms_pairs,
                    s.ms_extend,
                    s.ms_bodies,
                    s.ms_solve,
                    s.ms_verify,
                    s.ms_finish
                );
            }
            for (acc, x) in phases.iter_mut().zip([
                s.ms_pairs,
                s.ms_extend,
                s.ms_bodies,
                s.ms_solve,
                s.ms_verify,
                s.ms_finish,
            ]) {
                *acc += x / steps as f64;
            }
            for (acc, x) in sum.iter_mut().zip([
                s.pairs,
                s.contacts,
                s.body_contacts,
                s.ccd_queries,
                s.impacts,
                s.frozen,
                s.rebuilds + s.extensions,
            ]) {
                *acc += x;
            }
        }
        let ms = t.elapsed().as_secs_f64() * 1000.0 / steps as f64;
        let per: Vec<String> = sum.iter().map(|x| (x / steps as u64).to_string()).collect();
        println!(
            "{n}, {ms:.2}, {slowest:.2}, {}, {}",
            per.join(", "),
            slowest <= 16.7
        );
        println!(
            "  phases (ms/step): pairs {:.2}, extensions {:.2}, body contacts {:.2}, solve {:.2}, verify {:.2}, substep ends {:.2}",
            phases[0], phases[1], phases[2], phases[3], phases[4], phases[5]
        );
        if env_or("ARBITER_BENCH_RAPIER", 1) != 0 {
            let mean_y = mean(w.cables().iter().flat_map(|c| c.x.iter().map(|x| x.y)));
            for (name, mut r) in [
                ("capsule chains, spherical joints, CCD", rapier_heap(n / 50)),
                ("soft-body ropes", rapier_rope_heap(n / 50)),
            ] {
                for _ in 0..30 {
                    r.step();
                }
                let (r_ms, _) = ms_per_step(steps, || r.step());
                let bodies = r
                    .bodies
                    .iter()
                    .filter(|(_, b)| b.is_dynamic())
                    .map(|(_, b)| b.translation().y);
                let particles = r
                    .soft_bodies
                    .iter()
                    .flat_map(|(_, b)| b.particle_positions().map(|p| p.y));
                println!(
                    "  rapier3d ({name}, one thread): {r_ms:.2} ms/step; arbiter/rapier {:.3}; mean height after the steps: arbiter {mean_y:.2} m, rapier {:.2} m",
                    ms / r_ms,
                    if r.soft_bodies.is_empty() { mean(bodies) } else { mean(particles) }
                );
            }
        }
        // The heap packed (from 1.5 s after the drop): its cables lie on
        // each other, awake, the dearest part of its fall.
        if env_or("ARBITER_BENCH_PACKED", 1) != 0 {
            while w.tick() < 90 {
                w.step();
            }
            // (After a longer first window, the steps that follow it.)
            let first = w.tick() + 1;
            let (ms, slowest) = ms_per_step(steps, || w.step());
            println!(
                "  packed (steps {}-{}): {ms:.2} ms/step, slowest {slowest:.2}, {} pairs, {} contacts, {} of {} cables asleep",
                first,
                first + steps as u64 - 1,
                w.cable_stats.pairs,
                w.cable_stats.contacts,
                w.cable_stats.asleep,
                w.cables().len()
            );
        }
        // The heap settled (ARBITER_BENCH_SETTLE seconds after the drop):
        // the cables at rest asleep.
        let settle = env_or("ARBITER_BENCH_SETTLE", 0) as usize * 60;
        if settle > 0 {
            while (w.tick() as usize) < settle {
                w.step();
            }
            let (ms, _) = ms_per_step(steps, || w.step());
            println!(
                "  settled {} s: {ms:.2} ms/step, {} of {} cables asleep, {} pairs, {} contacts",
                settle / 60,
                w.cable_stats.asleep,
                w.cables().len(),
                w.cable_stats.pairs,
                w.cable_stats.contacts
            );
            // One cable (40 segments, 8 m) dropped 6 m above the heap's
            // start: the same steps while it falls, the heap asleep.
            let mut spec = CableSpec::new([-4.0, 9.0, 3.0], [4.0, 9.0, 3.0], 40);
            spec.radius = 0.02;
            w.add_cable(&spec).unwrap();
            let (ms, _) = ms_per_step(steps, || w.step());
            println!(
                "  one cable falling onto it: {ms:.2} ms/step, {} of {} cables asleep, {} pairs",
                w.cable_stats.asleep,
                w.cables().len(),
                w.cable_stats.pairs,
            );
        }
    }
    // Naive baseline: 500 edges (10 cables of 50), one substep's sweep of
    // all pairs, times the substeps of a step.
    let mut w = heap(500);
    for _ in 0..30 {
        w.step();
    }
    let x0: Vec<Vec3> = w.cables().iter().flat_map(|c| c.x.clone()).collect();
    w.step();
    let x1: Vec<Vec3> = w.cables().iter().flat_map(|c| c.x.clone()).collect();
    let t = Instant::now();
    let reps = 3;
    let mut hits = 0;
    for _ in 0..reps {
        hits += naive_all_pairs(&x0, &x1, 50);
    }
    let ms = t.elapsed().as_secs_f64() * 1000.0 / reps as f64 * settings.cable_substeps as f64;
    println!(
        "naive all-pairs, 500 edges: {ms:.1} ms/step ({:.1} steps/s), {} hits per sweep",
        1000.0 / ms,
        hits / reps
    );
}
