#[path = "../tests/common/heap.rs"]
mod heap;
use arbiter::physics::cable::CableSpec;
use std::time::Instant;
fn main() {
    let n: usize = std::env::var("ZZ_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10000);
    let mut w = heap::cable_heap(n / 50, None);
    while w.cable_stats.asleep < (n / 50) as u64 || w.tick() < 60 {
        w.step();
        if w.tick() > 60 * 30 {
            break;
        }
    }
    println!("asleep {} at tick {}", w.cable_stats.asleep, w.tick());
    let t = Instant::now();
    for _ in 0..30 {
        w.step();
    }
    println!(
        "all asleep: {:.3} ms/step",
        t.elapsed().as_secs_f64() * 1e3 / 30.0
    );
    let mut spec = CableSpec::new([26.0, 9.0, 3.0], [34.0, 9.0, 3.0], 40);
    spec.radius = 0.02;
    w.add_cable(&spec).unwrap();
    let t = Instant::now();
    for _ in 0..1200 {
        w.step();
    }
    let s = w.cable_stats;
    println!("one awake above: {:.3} ms/step, asleep {}, pairs {}, ms pairs {:.2} bodies {:.2} solve {:.2} finish {:.2}", t.elapsed().as_secs_f64() * 1e3 / 1200.0, s.asleep, s.pairs, s.ms_pairs, s.ms_bodies, s.ms_solve, s.ms_finish);
}
