//! Fan-out load generator: N WebSocket clients on one world with 1,000
//! moving bodies at 60 Hz. Reports, per N, the ticks each client received,
//! whether every client got every tick, and the p50/p99 delay from a tick's
//! scheduled time to its receipt.
//!
//! `cargo run --release --example fanout -- 50 100 200 400`
//!
//! The server runs in this process on its own runtime; the clients run on a
//! second runtime, so both share the machine's cores as they would on one box.

use arbiter::physics::scene::WorldSpec;
use arbiter::physics::{BodyKind, BodySpec, Scene, ShapeSpec};
use arbiter::server::{run, AppState, Limits};
use futures_util::StreamExt;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

fn scene() -> Scene {
    let mut bodies = Vec::new();
    let walls = [
        ([0.0, -10.5, 0.0], [10.5, 0.5, 10.5]),
        ([0.0, 10.5, 0.0], [10.5, 0.5, 10.5]),
        ([-10.5, 0.0, 0.0], [0.5, 10.5, 10.5]),
        ([10.5, 0.0, 0.0], [0.5, 10.5, 10.5]),
        ([0.0, 0.0, -10.5], [10.5, 10.5, 0.5]),
        ([0.0, 0.0, 10.5], [10.5, 10.5, 0.5]),
    ];
    for (p, h) in walls {
        bodies.push(
            BodySpec::new(ShapeSpec::Box { half_extents: h })
                .kind(BodyKind::Static)
                .position(p)
                .friction(0.0),
        );
    }
    let mut seed = 12345u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    for i in 0..1000 {
        let p = [
            (i % 10) as f32 * 1.8 - 8.1,
            ((i / 10) % 10) as f32 * 1.8 - 8.1,
            (i / 100) as f32 * 1.8 - 8.1,
        ];
        let mut b = BodySpec::new(ShapeSpec::Sphere { radius: 0.3 })
            .position(p)
            .linear_velocity([rnd() * 3.0, rnd() * 3.0, rnd() * 3.0])
            .restitution(1.0)
            .friction(0.0);
        b.angular_damping = 0.0;
        bodies.push(b);
    }
    Scene {
        world: WorldSpec {
            name: "fanout".into(),
            tick_hz: 60.0,
            gravity: [0.0, 0.0, 0.0],
            tick: None,
            time: None,
        },
        bodies,
        cables: Vec::new(),
    }
}

fn main() {
    let ns: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ns = if ns.is_empty() {
        vec![25, 50, 100, 200]
    } else {
        ns
    };
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let stop = CancellationToken::new();
    let (addr, state) = server_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = AppState::new(Limits::default(), stop.clone());
        let s = stop.clone();
        let st = state.clone();
        tokio::spawn(async move {
            run(listener, st, async move { s.cancelled().await })
                .await
                .unwrap()
        });
        (addr, state)
    });
    let world = arbiter::physics::World::from_scene(&scene()).unwrap();
    let id = state.add_world(None, world).unwrap();
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    println!("clients, seconds, ticks expected per client, min received, max received, all every tick, p50 ms, p99 ms");
    for n in ns {
        let secs = 3.0;
        let results = client_rt.block_on(async {
            let start = Instant::now();
            let mut tasks = Vec::new();
            for _ in 0..n {
                let url = format!("ws://{addr}/v1/worlds/{id}/stream?format=binary");
                tasks.push(tokio::spawn(async move {
                    let (mut s, _) = tokio_tungstenite::connect_async(url).await.unwrap();
                    let mut dec = arbiter::protocol::binary::BinaryDecoder::new();
                    let mut got: Vec<(u64, Instant)> = Vec::new();
                    let deadline = start + Duration::from_secs_f64(secs + 1.0);
                    while let Ok(Some(Ok(m))) =
                        tokio::time::timeout_at(deadline.into(), s.next()).await
                    {
                        if let Message::Binary(b) = m {
                            if let Ok(arbiter::protocol::ServerMessage::Tick { tick, .. }) =
                                dec.decode(&b)
                            {
                                got.push((tick, Instant::now()));
                            }
                        }
                    }
                    got
                }));
            }
            let mut all = Vec::new();
            for t in tasks {
                all.push(t.await.unwrap());
            }
            all
        });
        // A common window of ticks every client could have received.
        let lo = results
            .iter()
            .filter_map(|r| r.first().map(|x| x.0))
            .max()
            .unwrap_or(0);
        let hi = results
            .iter()
            .filter_map(|r| r.last().map(|x| x.0))
            .min()
            .unwrap_or(0);
        let expected = hi.saturating_sub(lo) + 1;
        let counts: Vec<u64> = results
            .iter()
            .map(|r| r.iter().filter(|x| x.0 >= lo && x.0 <= hi).count() as u64)
            .collect();
        let all_every = counts.iter().all(|&c| c == expected);
        // Delay from the tick's schedule: the earliest receipt of each tick
        // fixes the schedule (tick k at base + k/60), so delays are measured
        // against the best delivery seen.
        let mut base: Option<Instant> = None;
        for r in &results {
            for &(k, t) in r {
                let b = t - Duration::from_secs_f64(k as f64 / 60.0);
                base = Some(base.map_or(b, |x: Instant| x.min(b)));
            }
        }
        let base = base.unwrap();
        let mut delays: Vec<f64> = results
            .iter()
            .flat_map(|r| {
                r.iter().map(|&(k, t)| {
                    (t - (base + Duration::from_secs_f64(k as f64 / 60.0))).as_secs_f64() * 1000.0
                })
            })
            .collect();
        delays.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            delays
                .get(((delays.len() as f64 - 1.0) * p) as usize)
                .copied()
                .unwrap_or(0.0)
        };
        println!(
            "{n}, {secs}, {expected}, {}, {}, {all_every}, {:.2}, {:.2}",
            counts.iter().min().unwrap(),
            counts.iter().max().unwrap(),
            pct(0.5),
            pct(0.99)
        );
    }
    stop.cancel();
}
