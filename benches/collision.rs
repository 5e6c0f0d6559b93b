//! Collision queries side by side with parry3d on the same poses, in one run:
//! GJK distance box–box and hull–hull, the box–box contact manifold, shape
//! casts (with Arbiter's tolerance varied), and the cost of continuous
//! collision in a step with 1,000 fast bodies.
//!
//! `cargo bench --bench collision` (ARBITER_BENCH_ITERS sets iterations per
//! case; default 200,000).

use arbiter::physics::collision::gjk::{gjk, CoreSupport, GjkResult};
use arbiter::physics::collision::{box_box, shape_cast, SatCache};
use arbiter::physics::math::{Pose, Quat, Vec3};
use arbiter::physics::shape::{Cuboid, Shape};
use arbiter::physics::{BodyKind, BodySpec, ShapeSpec, World, WorldSettings};
use parry3d::math as pm;
use parry3d::query as pq;
use parry3d::shape as ps;
use std::hint::black_box;
use std::time::Instant;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
    fn unit(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            let l = v.length();
            if l > 0.1 && l <= 1.0 {
                return v / l;
            }
        }
    }
    fn rot(&mut self) -> Quat {
        Quat::from_axis_angle(self.unit(), self.range(0.0, std::f32::consts::TAU))
    }
}

fn ppose(p: &Pose) -> pm::Pose {
    let t = p.position;
    let q = p.rotation;
    pm::Pose::from_parts(
        pm::Vector::new(t.x, t.y, t.z),
        pm::Rotation::from_xyzw(q.x, q.y, q.z, q.w),
    )
}

fn pvec(v: Vec3) -> pm::Vector {
    pm::Vector::new(v.x, v.y, v.z)
}

/// ns per call of `f` over `iters` calls cycling through `n` inputs.
fn time<F: FnMut(usize)>(iters: usize, n: usize, mut f: F) -> f64 {
    for i in 0..n.min(iters) {
        f(i % n);
    }
    let t = Instant::now();
    for i in 0..iters {
        f(i % n);
    }
    t.elapsed().as_nanos() as f64 / iters as f64
}

fn report(name: &str, ours: f64, theirs: f64) {
    println!(
        "{name:<44} arbiter {ours:>9.1} ns   parry3d {theirs:>9.1} ns   ratio {:.2}",
        ours / theirs
    );
}

fn main() {
    let iters: usize = std::env::var("ARBITER_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    const N: usize = 256;

    // --- GJK distance, box–box, separated poses.
    let h = Vec3::new(0.5, 0.3, 0.4);
    let a_box = Shape::cuboid(h);
    let p_box = ps::Cuboid::new(pvec(h));
    let poses: Vec<(Pose, Pose)> = (0..N)
        .map(|_| {
            let pa = Pose::new(Vec3::ZERO, rng.rot());
            let pb = Pose::new(rng.unit() * rng.range(1.5, 3.0), rng.rot());
            (pa, pb)
        })
        .collect();
    let pposes: Vec<(pm::Pose, pm::Pose)> =
        poses.iter().map(|(a, b)| (ppose(a), ppose(b))).collect();
    let ours = time(iters, N, |i| {
        let (pa, pb) = &poses[i];
        let r = gjk(
            &CoreSupport {
                shape: &a_box,
                pose: pa,
            },
            &CoreSupport {
                shape: &a_box,
                pose: pb,
            },
            pb.position - pa.position,
            f32::INFINITY,
        );
        black_box(matches!(r, GjkResult::Separated { .. }));
    });
    let theirs = time(iters, N, |i| {
        let (pa, pb) = &pposes[i];
        black_box(pq::distance(pa, &p_box, pb, &p_box).ok());
    });
    report("GJK distance box-box (separated)", ours, theirs);

    // --- GJK distance, hull–hull (32 random points each), separated.
    let cloud: Vec<Vec3> = (0..32).map(|_| rng.unit() * rng.range(0.3, 0.6)).collect();
    let a_hull = Shape::convex_hull(&cloud).expect("hull");
    let pcloud: Vec<pm::Vector> = cloud.iter().map(|&v| pvec(v)).collect();
    let p_hull = ps::ConvexPolyhedron::from_convex_hull(&pcloud).expect("parry hull");
    let ours = time(iters, N, |i| {
        let (pa, pb) = &poses[i];
        let r = gjk(
            &CoreSupport {
                shape: &a_hull,
                pose: pa,
            },
            &CoreSupport {
                shape: &a_hull,
                pose: pb,
            },
            pb.position - pa.position,
            f32::INFINITY,
        );
        black_box(matches!(r, GjkResult::Separated { .. }));
    });
    let theirs = time(iters, N, |i| {
        let (pa, pb) = &pposes[i];
        black_box(pq::distance(pa, &p_hull, pb, &p_hull).ok());
    });
    report("GJK distance hull-hull (32 pts, separated)", ours, theirs);

    // --- Contact manifold box–box, resting and overlapping poses.
    let cub = Cuboid { half_extents: h };
    let touching: Vec<(Pose, Pose)> = (0..N)
        .map(|_| {
            let tilt = Quat::from_axis_angle(rng.unit(), rng.range(0.0, 0.3));
            let pa = Pose::new(Vec3::ZERO, Quat::IDENTITY);
            let pb = Pose::new(
                Vec3::new(
                    rng.range(-0.3, 0.3),
                    2.0 * h.y - rng.range(0.0, 0.05),
                    rng.range(-0.3, 0.3),
                ),
                tilt,
            );
            (pa, pb)
        })
        .collect();
    let ptouching: Vec<pm::Pose> = touching
        .iter()
        .map(|(a, b)| ppose(a).inv_mul(&ppose(b)))
        .collect();
    let mut caches = vec![SatCache::default(); N];
    let ours = time(iters, N, |i| {
        let (pa, pb) = &touching[i];
        black_box(box_box(&cub, pa, &cub, pb, 0.02, &mut caches[i]).map(|m| m.count));
    });
    let mut manifolds: Vec<pq::ContactManifold<(), ()>> =
        (0..N).map(|_| pq::ContactManifold::new()).collect();
    let theirs = time(iters, N, |i| {
        pq::details::contact_manifold_cuboid_cuboid(
            &ptouching[i],
            &p_box,
            &p_box,
            0.02,
            &mut manifolds[i],
        );
        black_box(manifolds[i].points.len());
    });
    report("contact manifold box-box (touching, cached)", ours, theirs);

    // --- Shape casts: box cast along a translation against a hull.
    let casts: Vec<(Pose, Vec3, Pose)> = (0..N)
        .map(|_| {
            let pb = Pose::new(Vec3::ZERO, rng.rot());
            let start = rng.unit() * 4.0;
            let dir = (-start + rng.unit() * 0.6).normalize() * 8.0;
            (Pose::new(start, rng.rot()), dir, pb)
        })
        .collect();
    let pcasts: Vec<(pm::Pose, pm::Vector, pm::Pose)> = casts
        .iter()
        .map(|(a, d, b)| (ppose(a), pvec(*d), ppose(b)))
        .collect();
    let theirs = time(iters, N, |i| {
        let (pa, d, pb) = &pcasts[i];
        let opts = pq::ShapeCastOptions {
            max_time_of_impact: 1.0,
            ..Default::default()
        };
        black_box(pq::cast_shapes(pa, *d, &p_box, pb, pm::Vector::ZERO, &p_hull, opts).ok());
    });
    for tol in [1e-2f32, 1e-3, 1e-4] {
        let ours = time(iters, N, |i| {
            let (pa, d, pb) = &casts[i];
            black_box(shape_cast(&a_box, pa, *d, &a_hull, pb, tol).map(|h| h.toi));
        });
        report(
            &format!("shape cast box->hull (tolerance {tol} m)"),
            ours,
            theirs,
        );
    }
    // Accuracy of the time of impact against parry's, per tolerance.
    for tol in [1e-2f32, 1e-3, 1e-4] {
        let mut worst: f32 = 0.0;
        let mut agree = 0;
        for i in 0..N {
            let (pa, d, pb) = &casts[i];
            let ours = shape_cast(&a_box, pa, *d, &a_hull, pb, tol).map(|h| h.toi);
            let (ppa, pd, ppb) = &pcasts[i];
            let opts = pq::ShapeCastOptions {
                max_time_of_impact: 1.0,
                ..Default::default()
            };
            let theirs = pq::cast_shapes(ppa, *pd, &p_box, ppb, pm::Vector::ZERO, &p_hull, opts)
                .ok()
                .flatten()
                .map(|h| h.time_of_impact);
            match (ours, theirs) {
                (Some(a), Some(b)) => {
                    agree += 1;
                    worst = worst.max((a - b).abs() * d.length());
                }
                (None, None) => agree += 1,
                _ => {}
            }
        }
        println!("shape cast tolerance {tol}: {agree}/{N} hit/miss agree with parry3d, worst |Δ distance| {worst:.2e} m");
    }

    // --- CCD cost in a step with 1,000 fast bodies.
    for ccd in [false, true] {
        let mut settings = WorldSettings {
            gravity: Vec3::ZERO,
            ..Default::default()
        };
        settings.ccd.enabled = ccd;
        let mut w = World::new(settings);
        for (x, y, z, hx, hy, hz) in [
            (0.0, -20.5, 0.0, 20.5, 0.5, 20.5),
            (0.0, 20.5, 0.0, 20.5, 0.5, 20.5),
            (-20.5, 0.0, 0.0, 0.5, 20.5, 20.5),
            (20.5, 0.0, 0.0, 0.5, 20.5, 20.5),
            (0.0, 0.0, -20.5, 20.5, 20.5, 0.5),
            (0.0, 0.0, 20.5, 20.5, 20.5, 0.5),
        ] {
            w.add_body(
                &BodySpec::new(ShapeSpec::Box {
                    half_extents: [hx, hy, hz],
                })
                .kind(BodyKind::Static)
                .position([x, y, z]),
            )
            .unwrap();
        }
        let mut r2 = Rng(7);
        for i in 0..1000 {
            let p = Vec3::new(
                r2.range(-18.0, 18.0),
                r2.range(-18.0, 18.0),
                r2.range(-18.0, 18.0),
            );
            let v = r2.unit() * r2.range(50.0, 200.0);
            let shape = if i % 2 == 0 {
                ShapeSpec::Sphere { radius: 0.1 }
            } else {
                ShapeSpec::Box {
                    half_extents: [0.1, 0.1, 0.1],
                }
            };
            w.add_body(
                &BodySpec::new(shape)
                    .position(p.to_array())
                    .linear_velocity(v.to_array())
                    .restitution(0.5),
            )
            .unwrap();
        }
        let steps = 120;
        let t = Instant::now();
        let mut impacts = 0;
        for _ in 0..steps {
            w.step();
            impacts += w.ccd_stats().impacts;
        }
        let ms = t.elapsed().as_secs_f64() * 1000.0 / steps as f64;
        let escaped = w
            .bodies()
            .filter(|b| b.is_dynamic() && b.pose.position.abs().max_element() > 20.0)
            .count();
        println!(
            "1,000 fast bodies in a closed box, ccd {}: {ms:.2} ms/step, {impacts} CCD impacts, {escaped} escaped the box",
            if ccd { "on " } else { "off" }
        );
    }
}
