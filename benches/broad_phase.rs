//! Broad-phase benchmarks: time of one `update_pairs` after every body has
//! moved a little (all boxes change every frame; applying the motions is not
//! timed).
//!
//! Run: `cargo bench --no-default-features --bench broad_phase`

use std::hint::black_box;
use std::time::{Duration, Instant};

use arbiter::physics::aabb::Aabb;
use arbiter::physics::broad_phase::{AxisPolicy, BroadPhase};
use arbiter::physics::math::Vec3;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn vec(&mut self, lo: Vec3, hi: Vec3) -> Vec3 {
        Vec3::new(
            self.range(lo.x, hi.x),
            self.range(lo.y, hi.y),
            self.range(lo.z, hi.z),
        )
    }
}

/// Bodies moving at constant velocity, bouncing inside per-body bounds.
struct World {
    pos: Vec<Vec3>,
    vel: Vec<Vec3>,
    half: Vec<Vec3>,
    lo: Vec<Vec3>,
    hi: Vec<Vec3>,
}

impl World {
    fn boxes(&self) -> impl Iterator<Item = Aabb> + '_ {
        self.pos
            .iter()
            .zip(&self.half)
            .map(|(&p, &h)| Aabb::from_center_half_extents(p, h))
    }

    fn step(&mut self) {
        for i in 0..self.pos.len() {
            let mut p = self.pos[i] + self.vel[i];
            for a in 0..3 {
                if p[a] < self.lo[i][a] || p[a] > self.hi[i][a] {
                    self.vel[i][a] = -self.vel[i][a];
                    p[a] = p[a].clamp(self.lo[i][a], self.hi[i][a]);
                }
            }
            self.pos[i] = p;
        }
    }

    /// A cloud of `n` bodies uniformly scattered in `[0, size]`.
    fn scattered(n: usize, size: Vec3, speed: f32, seed: u64) -> Self {
        let mut r = Rng(seed);
        let mut w = World::empty();
        for _ in 0..n {
            w.pos.push(r.vec(Vec3::ZERO, size));
            w.vel.push(r.vec(Vec3::splat(-speed), Vec3::splat(speed)));
            w.half.push(r.vec(Vec3::splat(0.25), Vec3::splat(0.75)));
            w.lo.push(Vec3::ZERO);
            w.hi.push(size);
        }
        w
    }

    /// `n` unit boxes in a row along X (spacing 0.9, so neighbours overlap),
    /// jittering by up to ±0.1 around their place.
    fn lined_up(n: usize, seed: u64) -> Self {
        let mut r = Rng(seed);
        let mut w = World::empty();
        for i in 0..n {
            let home = Vec3::new(i as f32 * 0.9, 0.0, 0.0);
            w.pos
                .push(home + r.vec(Vec3::splat(-0.05), Vec3::splat(0.05)));
            w.vel.push(r.vec(Vec3::splat(-0.01), Vec3::splat(0.01)));
            w.half.push(Vec3::splat(0.5));
            w.lo.push(home - Vec3::splat(0.1));
            w.hi.push(home + Vec3::splat(0.1));
        }
        w
    }

    fn empty() -> Self {
        World {
            pos: Vec::new(),
            vel: Vec::new(),
            half: Vec::new(),
            lo: Vec::new(),
            hi: Vec::new(),
        }
    }
}

/// Classic three-axis SAP without the fallback to a full sort.
const CLASSIC_NO_FALLBACK: Option<AxisPolicy> = None;

fn setup(world: &World, policy: Option<AxisPolicy>) -> BroadPhase {
    let mut bp = match policy {
        Some(p) => BroadPhase::with_axis_policy(p),
        None => {
            let mut bp = BroadPhase::with_axis_policy(AxisPolicy::Fixed([true; 3]));
            bp.set_swap_budget(Some(usize::MAX));
            bp
        }
    };
    for (k, b) in world.boxes().enumerate() {
        bp.insert(k as u32, b);
    }
    bp.update_pairs();
    bp
}

/// Times `update_pairs` only; the motion and `update` calls are not timed.
fn bench_scene(c: &mut Criterion, name: &str, mut world: World, policy: Option<AxisPolicy>) {
    let mut bp = setup(&world, policy);
    for _ in 0..30 {
        world.step();
        for (k, b) in world.boxes().enumerate() {
            bp.update(k as u32, b);
        }
        bp.update_pairs();
    }
    let s = *bp.stats();
    eprintln!(
        "{name}: bodies {} pairs {} candidates {} tracked {:?} swaps/frame {} overlap-fraction {:?}",
        world.pos.len(),
        s.pairs,
        s.candidates,
        s.tracked_axes,
        s.swaps,
        s.overlap_fraction
    );
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                world.step();
                for (k, b) in world.boxes().enumerate() {
                    bp.update(k as u32, b);
                }
                let t = Instant::now();
                bp.update_pairs();
                total += t.elapsed();
                black_box(bp.pair_count());
            }
            total
        })
    });
}

fn brute_force(boxes: &[Aabb], out: &mut Vec<(u32, u32)>) {
    out.clear();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes[i].overlaps(&boxes[j]) {
                out.push((i as u32, j as u32));
            }
        }
    }
}

fn benches(c: &mut Criterion) {
    let n = 10_000;
    let adaptive = Some(AxisPolicy::Adaptive);
    // Three axes, with the fallback to sort-and-rebuild when a sort exceeds
    // its swap budget.
    let classic = Some(AxisPolicy::Fixed([true; 3]));

    // 10k bodies in a 50³ region, up to 0.05 per axis per frame.
    let scattered = || World::scattered(n, Vec3::splat(50.0), 0.05, 1);
    bench_scene(c, "scattered_10k", scattered(), adaptive);
    bench_scene(c, "lined_up_10k", World::lined_up(n, 2), adaptive);
    bench_scene(
        c,
        "lined_up_10k_classic_3axis",
        World::lined_up(n, 2),
        classic,
    );
    // Flat scene: 200 x 1 x 200.
    let ground = || World::scattered(n, Vec3::new(200.0, 1.0, 200.0), 0.05, 3);
    bench_scene(
        c,
        "lined_up_10k_classic_3axis_no_fallback",
        World::lined_up(n, 2),
        CLASSIC_NO_FALLBACK,
    );
    bench_scene(c, "ground_10k", ground(), adaptive);
    bench_scene(c, "ground_10k_classic_3axis", ground(), classic);
    bench_scene(
        c,
        "ground_10k_classic_3axis_no_fallback",
        ground(),
        CLASSIC_NO_FALLBACK,
    );

    // Worst case for incremental sorting: every body teleports to a random
    // place each frame (the swap budget makes it fall back to sort + sweep).
    let mut tele_rng = Rng(9);
    let tele = scattered();
    let mut bp = setup(&tele, adaptive);
    c.bench_function("teleport_all_10k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for (k, h) in tele.half.iter().enumerate() {
                    let p = tele_rng.vec(Vec3::ZERO, Vec3::splat(50.0));
                    bp.update(k as u32, Aabb::from_center_half_extents(p, *h));
                }
                let t = Instant::now();
                bp.update_pairs();
                total += t.elapsed();
                black_box(bp.pair_count());
            }
            total
        })
    });

    // Inserting 10k bodies at once and running the first update.
    let boxes: Vec<Aabb> = scattered().boxes().collect();
    c.bench_function("insert_10k_batch", |b| {
        b.iter_batched(
            BroadPhase::new,
            |mut bp| {
                for (k, &bx) in boxes.iter().enumerate() {
                    bp.insert(k as u32, bx);
                }
                bp.update_pairs();
                bp.pair_count()
            },
            BatchSize::LargeInput,
        )
    });

    // 1k bodies (same density as the 10k cloud): SAP vs brute force.
    let size = Vec3::splat(50.0 * (0.1f32).cbrt());
    bench_scene(
        c,
        "scattered_1k",
        World::scattered(1000, size, 0.05, 4),
        adaptive,
    );
    let mut world = World::scattered(1000, size, 0.05, 4);
    let mut bx: Vec<Aabb> = Vec::new();
    let mut out = Vec::new();
    c.bench_function("brute_force_1k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                world.step();
                bx.clear();
                bx.extend(world.boxes());
                let t = Instant::now();
                brute_force(&bx, &mut out);
                total += t.elapsed();
                black_box(out.len());
            }
            total
        })
    });
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(group);
