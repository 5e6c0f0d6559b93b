//! Stream bandwidth on the "901 cubes" scene (issue 4): a 30 × 30 grid of
//! 1 m cubes on a plane and one 4 m kinematic cube pushed through them at
//! 60 Hz. Reports bytes per second per client, JSON and binary, for
//! `every = 1` and `every = 3`, while the pusher moves and once everything
//! rests, against the uncompressed baseline of the issue (17.37 Mbit/s).
//!
//!     cargo bench --no-default-features --bench bandwidth [-- --synthetic]
//!
//! Everything runs in the real `World`. Box–box contacts only exist once the
//! collision branch is merged; until then (detected at start, or forced with
//! `--synthetic`) the pusher cannot touch the cubes, so the bench moves them
//! itself with velocity edits: a cube the pusher overlaps is kicked ahead
//! (1.3× the pusher's speed, sideways away from its centre line, a little
//! up, a random spin) and a fast cube overlapping a slower one hands it most
//! of its velocity; the World does the rest (gravity, box–plane contacts,
//! friction, sleep). That mode gives an estimate; the real figures come
//! with box–box contacts.

use arbiter::physics::{BodyKind, BodySpec, ContactEvent, ShapeSpec, Vec3, World};
use arbiter::protocol::{
    BinaryDecoder, BinaryEncoder, BodyState, JsonEncoder, ServerMessage, StepMs, WorldInfo,
};
use std::collections::BTreeSet;
use std::time::Instant;

const GRID: usize = 30;
const SPACING: f32 = 1.5;
const HALF: f32 = 0.5;
const PUSHER_HALF: f32 = 2.0;
const PUSHER_SPEED: f32 = 3.0;
const HZ: f64 = 60.0;
/// The uncompressed baseline the issue quotes for this scene.
const BASELINE_BITS_PER_S: f64 = 17.37e6;

/// One subscriber group: a format, a rate, and what it accumulates between
/// its frames (moved ids, contacts), as the server does.
struct Group {
    every: u64,
    binary: BinaryEncoder,
    json: JsonEncoder,
    /// A second binary encoder fed no contacts, to split the bytes.
    binary_no_contacts: BinaryEncoder,
    decoder: BinaryDecoder,
    moved: BTreeSet<u64>,
    contacts: Vec<ContactEvent>,
    stats: Stats,
}

#[derive(Default, Clone, Copy)]
struct Stats {
    seconds: f64,
    frames: u64,
    binary: u64,
    binary_no_contacts: u64,
    json: u64,
    bodies_sent: u64,
    contacts: u64,
}

fn main() {
    let force_synthetic = std::env::args().any(|a| a == "--synthetic");
    let box_contacts = box_box_contacts_exist();
    let synthetic = force_synthetic || !box_contacts;
    println!("901 cubes: {GRID}×{GRID} grid of 1 m cubes ({SPACING} m apart) on a plane, a 4 m kinematic pusher at {PUSHER_SPEED} m/s, {HZ} Hz");
    println!(
        "box–box contacts in this build: {}; mode: {}",
        if box_contacts { "yes" } else { "no" },
        if synthetic {
            "SYNTHETIC kicks of the cubes the pusher overlaps (estimate)"
        } else {
            "real collisions"
        }
    );

    let mut world = World::default();
    world.name = "901 cubes".into();
    world
        .add_body(
            &BodySpec::new(ShapeSpec::Plane {
                normal: [0.0, 1.0, 0.0],
                offset: 0.0,
            })
            .kind(BodyKind::Static),
        )
        .unwrap();
    let extent = (GRID - 1) as f32 * SPACING;
    for i in 0..GRID {
        for j in 0..GRID {
            world
                .add_body(
                    &BodySpec::new(ShapeSpec::Box {
                        half_extents: [HALF; 3],
                    })
                    .position([
                        i as f32 * SPACING - extent / 2.0,
                        HALF,
                        j as f32 * SPACING - extent / 2.0,
                    ]),
                )
                .unwrap();
        }
    }
    let start_x = -extent / 2.0 - PUSHER_HALF - 3.0;
    let end_x = extent / 2.0 + PUSHER_HALF + 3.0;
    let pusher = world
        .add_body(
            &BodySpec::new(ShapeSpec::Box {
                half_extents: [PUSHER_HALF; 3],
            })
            .kind(BodyKind::Kinematic)
            .position([start_x, PUSHER_HALF, 0.0]),
        )
        .unwrap();
    println!(
        "bodies: {} (plane + {} cubes + pusher)",
        world.body_count(),
        GRID * GRID
    );

    // Let the grid come to rest (every cube asleep) before anyone connects.
    let t0 = Instant::now();
    let mut settle = 0;
    while settle < 600 && !world_at_rest(&world) {
        world.step();
        settle += 1;
    }
    println!("settled in {settle} steps");

    let mut groups: Vec<Group> = [1u64, 3]
        .iter()
        .map(|&every| Group {
            every,
            binary: BinaryEncoder::new(),
            json: JsonEncoder::new(),
            binary_no_contacts: BinaryEncoder::new(),
            decoder: BinaryDecoder::new(),
            moved: BTreeSet::new(),
            contacts: Vec::new(),
            stats: Stats::default(),
        })
        .collect();
    let bodies: Vec<BodySpec> = world.bodies().map(|b| b.to_spec()).collect();
    let info = world_info(&world);
    let mut hello_sizes = (0, 0);
    for g in &mut groups {
        let frame = g.binary.encode_hello(&info, &bodies);
        g.binary_no_contacts.encode_hello(&info, &bodies);
        hello_sizes = (frame.len(), g.json.encode_hello(&info, &bodies).len());
        g.decoder.decode(&frame).unwrap();
    }
    println!(
        "hello: binary {} bytes, JSON {} bytes",
        hello_sizes.0, hello_sizes.1
    );

    // Phase 1: push through the grid, then stop the pusher.
    world
        .edit_body(
            pusher,
            None,
            None,
            Some(Vec3::new(PUSHER_SPEED, 0.0, 0.0)),
            None,
        )
        .unwrap();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut steps = 0u64;
    let moving = run_phase(&mut world, &mut groups, |world| {
        let x = world.body(pusher).unwrap().pose.position.x;
        if x >= end_x {
            return false;
        }
        if synthetic {
            kick_overlapped_cubes(world, pusher, &mut rng);
        }
        steps += 1;
        true
    });
    world
        .edit_body(pusher, None, None, Some(Vec3::ZERO), None)
        .unwrap();
    // Phase 2: wait for everything to come to rest (not measured).
    let settling = run_phase(&mut world, &mut groups, {
        let mut n = 0;
        move |world| {
            n += 1;
            n < 60 * 60 && !world_at_rest(world)
        }
    });
    // Phase 3: at rest, 10 s.
    let rest = run_phase(&mut world, &mut groups, {
        let mut n = 0;
        move |_| {
            n += 1;
            n <= 600
        }
    });
    let wall = t0.elapsed().as_secs_f64();

    for (name, per_group) in [
        ("pusher moving", &moving),
        ("settling", &settling),
        ("at rest", &rest),
    ] {
        println!();
        println!("{name}: {:.1} s simulated", per_group[0].seconds);
        println!(
            "  every  frames/s  bodies/frame  contacts/frame    JSON kbit/s   binary kbit/s (of which contacts)   binary vs 17.37 Mbit/s"
        );
        for (g, s) in groups.iter().zip(per_group.iter()) {
            let kbit = |bytes: u64| bytes as f64 * 8.0 / s.seconds / 1000.0;
            println!(
                "  {:>5}  {:>8.1}  {:>12.1}  {:>14.1}  {:>13.1}  {:>14.1} ({:>6.1})              {:>8.5} (1/{:.0})",
                g.every,
                s.frames as f64 / s.seconds,
                s.bodies_sent as f64 / s.frames.max(1) as f64,
                s.contacts as f64 / s.frames.max(1) as f64,
                kbit(s.json),
                kbit(s.binary),
                kbit(s.binary - s.binary_no_contacts),
                kbit(s.binary) * 1000.0 / BASELINE_BITS_PER_S,
                BASELINE_BITS_PER_S / (kbit(s.binary) * 1000.0),
            );
        }
    }

    // The decoders followed the world to within the quantization.
    let mut worst_p = 0.0f32;
    for g in &groups {
        for b in world.bodies() {
            let got = g.decoder.state(b.id).expect("decoder knows every body");
            let want = BodyState::of(b);
            for k in 0..3 {
                worst_p = worst_p.max((got.p[k] - want.p[k]).abs());
            }
        }
    }
    println!();
    println!(
        "decoded states vs world after the run: worst position error {:.3} mm (quantum 0.977 mm)",
        worst_p * 1000.0
    );
    println!(
        "targets for binary, every=1: moving ≤ 256 kbit/s → {}; at rest ≤ 16 kbit/s → {}",
        verdict(&moving[0], 256.0),
        verdict(&rest[0], 16.0)
    );
    println!("{steps} pusher steps; wall time {wall:.1} s");
}

fn verdict(s: &Stats, target_kbit: f64) -> String {
    let kbit = s.binary as f64 * 8.0 / s.seconds / 1000.0;
    format!(
        "{kbit:.1} kbit/s, {}",
        if kbit <= target_kbit {
            "met"
        } else {
            "NOT met"
        }
    )
}

/// Steps the world while `go` says so; every group encodes a frame each
/// `every` ticks with what accumulated since its last one. Returns the
/// statistics of the phase per group.
fn run_phase(
    world: &mut World,
    groups: &mut [Group],
    mut go: impl FnMut(&mut World) -> bool,
) -> Vec<Stats> {
    let before: Vec<Stats> = groups.iter().map(|g| g.stats).collect();
    let t_start = world.time();
    while go(world) {
        world.step();
        let tick = world.tick();
        let time = world.time();
        for g in groups.iter_mut() {
            g.moved.extend(world.moved_bodies());
            g.contacts.extend_from_slice(world.contact_events());
            if !tick.is_multiple_of(g.every) {
                continue;
            }
            let states: Vec<BodyState> = g
                .moved
                .iter()
                .filter_map(|id| world.body(*id).map(BodyState::of))
                .collect();
            let bin = g
                .binary
                .encode_tick(tick, time, &states, &g.contacts, &[], &[]);
            let bin_nc = g
                .binary_no_contacts
                .encode_tick(tick, time, &states, &[], &[], &[]);
            let json = g
                .json
                .encode_tick(tick, time, &states, &g.contacts, &[], &[]);
            let ServerMessage::Tick { bodies, .. } = g.decoder.decode(&bin).unwrap() else {
                unreachable!()
            };
            g.stats.frames += 1;
            g.stats.binary += bin.len() as u64;
            g.stats.binary_no_contacts += bin_nc.len() as u64;
            g.stats.json += json.len() as u64;
            g.stats.bodies_sent += bodies.len() as u64;
            g.stats.contacts += g.contacts.len() as u64;
            g.moved.clear();
            g.contacts.clear();
        }
    }
    let seconds = world.time() - t_start;
    groups
        .iter()
        .zip(before)
        .map(|(g, b)| Stats {
            seconds,
            frames: g.stats.frames - b.frames,
            binary: g.stats.binary - b.binary,
            binary_no_contacts: g.stats.binary_no_contacts - b.binary_no_contacts,
            json: g.stats.json - b.json,
            bodies_sent: g.stats.bodies_sent - b.bodies_sent,
            contacts: g.stats.contacts - b.contacts,
        })
        .collect()
}

fn world_at_rest(world: &World) -> bool {
    world
        .bodies()
        .all(|b| b.kind != BodyKind::Dynamic || b.sleeping)
}

fn world_info(world: &World) -> WorldInfo {
    WorldInfo {
        id: "cubes".into(),
        name: world.name.clone(),
        tick_hz: world.tick_hz,
        gravity: world.settings.gravity.to_array(),
        paused: false,
        tick: world.tick(),
        time: world.time(),
        body_count: world.body_count(),
        step_ms: StepMs::default(),
        fault: None,
    }
}

/// Whether two overlapping dynamic boxes produce a contact in this build.
fn box_box_contacts_exist() -> bool {
    let mut w = World::default();
    w.settings.gravity = Vec3::ZERO;
    let cube = |x: f32| {
        BodySpec::new(ShapeSpec::Box {
            half_extents: [0.5; 3],
        })
        .position([x, 5.0, 0.0])
    };
    w.add_body(&cube(0.0)).unwrap();
    w.add_body(&cube(0.9)).unwrap();
    w.step();
    !w.contact_events().is_empty()
}

/// Synthetic stand-in for box–box contacts. A cube the pusher overlaps is
/// sent off ahead of it and away from its centre line, spinning; a cube
/// moving faster than 1 m/s that overlaps a slower one hands it 70 % of its
/// horizontal velocity (and keeps 40 %), so pushes spread through the grid
/// as a band of moving cubes, as collisions would.
fn kick_overlapped_cubes(world: &mut World, pusher: u64, rng: &mut u64) {
    let p = world.body(pusher).unwrap();
    let (pp, pv) = (p.pose.position, p.linear_velocity);
    let reach = PUSHER_HALF + HALF;
    let mut rand = move || {
        *rng ^= *rng >> 12;
        *rng ^= *rng << 25;
        *rng ^= *rng >> 27;
        (rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    };
    let cubes: Vec<(u64, Vec3, Vec3)> = world
        .bodies()
        .filter(|b| b.kind == BodyKind::Dynamic)
        .map(|b| (b.id, b.pose.position, b.linear_velocity))
        .collect();
    let mut kicks: Vec<(u64, Vec3, Vec3)> = Vec::new();
    for &(id, x, v) in &cubes {
        let d = x - pp;
        if d.x.abs() < reach && d.z.abs() < reach && d.y.abs() < reach && v.x < pv.x * 1.05 {
            let side = if d.z >= 0.0 { 1.0 } else { -1.0 };
            let v = Vec3::new(
                pv.x * 1.3,
                1.0 + rand(),
                side * (0.5 + 1.5 * rand()) * (d.z.abs() / reach + 0.2),
            );
            let w = Vec3::new(rand() - 0.5, rand() - 0.5, rand() - 0.5) * 8.0;
            kicks.push((id, v, w));
        }
    }
    // Cube–cube hand-overs, found through a grid of cells one spacing wide.
    let cell = |x: Vec3| {
        (
            (x.x / SPACING).floor() as i64,
            (x.z / SPACING).floor() as i64,
        )
    };
    let mut cells: std::collections::HashMap<(i64, i64), Vec<usize>> = Default::default();
    for (i, c) in cubes.iter().enumerate() {
        cells.entry(cell(c.1)).or_default().push(i);
    }
    for &(id, x, v) in &cubes {
        let speed = Vec3::new(v.x, 0.0, v.z).length();
        if speed < 1.0 {
            continue;
        }
        let (cx, cz) = cell(x);
        for dx in -1..=1 {
            for dz in -1..=1 {
                for &j in cells.get(&(cx + dx, cz + dz)).into_iter().flatten() {
                    let (other, y, u) = cubes[j];
                    let d = y - x;
                    let overlap =
                        d.x.abs() < 2.0 * HALF && d.z.abs() < 2.0 * HALF && d.y.abs() < 2.0 * HALF;
                    let slower = Vec3::new(u.x, 0.0, u.z).length() < 0.5 * speed;
                    if other != id && overlap && slower {
                        let w = Vec3::new(rand() - 0.5, rand() - 0.5, rand() - 0.5) * 4.0;
                        kicks.push((other, Vec3::new(v.x * 0.7, u.y + 0.3, v.z * 0.7), w));
                        kicks.push((id, Vec3::new(v.x * 0.4, v.y, v.z * 0.4), w * -0.5));
                    }
                }
            }
        }
    }
    for (id, v, w) in kicks {
        world.edit_body(id, None, None, Some(v), Some(w)).unwrap();
    }
}
