//! The binary stream codec (proto/binary.md) and the JSON encoder's delta
//! rule, through their public API only.

use arbiter::physics::{BodyKind, BodySpec, ContactEvent, ContactEventKind, ShapeSpec};
use arbiter::protocol::json::decode_json;
use arbiter::protocol::quantize::{
    QRot, QState, POSITION_SCALE, ROTATION_MAX_ERROR, VELOCITY_SCALE,
};
use arbiter::protocol::{
    BinaryDecoder, BinaryEncoder, BodyState, JsonEncoder, ServerMessage, StepMs, WorldInfo,
};
use proptest::prelude::*;

const POS_HALF: f32 = 0.5 / POSITION_SCALE as f32;
const VEL_HALF: f32 = 0.5 / VELOCITY_SCALE as f32;

fn world() -> WorldInfo {
    WorldInfo {
        id: "w1".into(),
        name: "demo ✓".into(),
        tick_hz: 60.0,
        gravity: [0.0, -9.81, 0.0],
        paused: false,
        tick: 120,
        time: 2.0,
        body_count: 3,
        step_ms: StepMs {
            last: 0.25,
            mean: 0.2,
            max: 1.5,
        },
        fault: None,
    }
}

/// A tiny deterministic RNG (xorshift64*) so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [lo, hi).
    fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn unit_quat(&mut self) -> [f32; 4] {
        loop {
            let q = [0; 4].map(|_| self.f(-1.0, 1.0));
            let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.1 && n <= 1.0 {
                return q.map(|x| x / n);
            }
        }
    }
}

fn body(id: u64, shape: ShapeSpec) -> BodySpec {
    let mut b = BodySpec::new(shape);
    b.id = Some(id);
    b.sleeping = Some(false);
    b
}

/// Every shape and every optional field at least once.
fn sample_bodies() -> Vec<BodySpec> {
    let mut plane = body(
        1,
        ShapeSpec::Plane {
            normal: [0.0, 1.0, 0.0],
            offset: -0.5,
        },
    )
    .kind(BodyKind::Static);
    plane.label = Some("ground".into());
    let mut crate_ = body(
        2,
        ShapeSpec::Box {
            half_extents: [0.5, 0.25, 1.0],
        },
    )
    .position([1.25, 3.5, -7.0])
    .linear_velocity([0.5, -2.0, 0.0])
    .angular_velocity([0.0, 1.0, -0.25])
    .density(500.0)
    .ccd(true);
    crate_.rotation = [0.0, 0.6, 0.0, 0.8];
    crate_.sleeping = Some(true);
    let mut hull = body(
        9,
        ShapeSpec::ConvexHull {
            points: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
        },
    )
    .mass(3.0)
    .kind(BodyKind::Kinematic);
    hull.margin = 0.05;
    hull.sleeping = None;
    hull.linear_damping = 0.1;
    vec![
        plane,
        crate_,
        body(3, ShapeSpec::Sphere { radius: 0.3 }).position([-1.0, 0.3, 2.0]),
        body(
            4,
            ShapeSpec::Capsule {
                half_height: 0.5,
                radius: 0.2,
            },
        ),
        body(
            5,
            ShapeSpec::Cylinder {
                half_height: 0.4,
                radius: 0.6,
            },
        )
        .restitution(0.3),
        body(
            6,
            ShapeSpec::Cone {
                half_height: 0.5,
                radius: 0.5,
            },
        )
        .friction(0.9),
        hull,
    ]
}

fn state_of(b: &BodySpec) -> BodyState {
    BodyState {
        id: b.id.unwrap(),
        p: b.position,
        q: b.rotation,
        v: b.linear_velocity,
        w: b.angular_velocity,
    }
}

/// Angle (rad) between two rotations given as quaternions.
fn angle_between(a: [f32; 4], b: [f32; 4]) -> f64 {
    let na = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let dot: f64 = (0..4).map(|k| a[k] as f64 * b[k] as f64).sum::<f64>() / (na * nb);
    2.0 * dot.abs().min(1.0).acos()
}

/// Asserts that `got` is `want` quantized: positions within half a
/// millimetre quantum, velocities within half a velocity quantum, rotation
/// within the documented bound.
fn assert_close(got: &BodyState, want: &BodyState) {
    assert_eq!(got.id, want.id);
    for k in 0..3 {
        assert!(
            (got.p[k] - want.p[k]).abs() <= POS_HALF * 1.0001 + want.p[k].abs() * 1e-7,
            "p {got:?} vs {want:?}"
        );
        assert!(
            (got.v[k] - want.v[k]).abs() <= VEL_HALF * 1.0001,
            "v {got:?} vs {want:?}"
        );
        assert!(
            (got.w[k] - want.w[k]).abs() <= VEL_HALF * 1.0001,
            "w {got:?} vs {want:?}"
        );
    }
    let a = angle_between(got.q, want.q);
    assert!(a <= ROTATION_MAX_ERROR, "q {got:?} vs {want:?}: {a}");
}

fn tick_parts(
    msg: ServerMessage,
) -> (
    u64,
    f64,
    Vec<BodyState>,
    Vec<ContactEvent>,
    Vec<BodySpec>,
    Vec<u64>,
) {
    match msg {
        ServerMessage::Tick {
            tick,
            time,
            bodies,
            contacts,
            spawned,
            removed,
            ..
        } => (tick, time, bodies, contacts, spawned, removed),
        other => panic!("expected a tick, got {other:?}"),
    }
}

// ----------------------------------------------------------------------
// Round trips of every message.
// ----------------------------------------------------------------------

#[test]
fn hello_round_trips_every_shape_and_field() {
    let bodies = sample_bodies();
    let mut enc = BinaryEncoder::new();
    let frame = enc.encode_hello(&world(), &bodies);
    let mut dec = BinaryDecoder::new();
    let ServerMessage::Hello {
        world: w,
        bodies: got,
        ..
    } = dec.decode(&frame).unwrap()
    else {
        panic!("not a hello")
    };
    assert_eq!(w, world());
    assert_eq!(got.len(), bodies.len());
    for (g, b) in got.iter().zip(&bodies) {
        assert_close(&state_of(g), &state_of(b));
        // Everything but the state comes through exactly.
        let mut g = g.clone();
        g.position = b.position;
        g.rotation = b.rotation;
        g.linear_velocity = b.linear_velocity;
        g.angular_velocity = b.angular_velocity;
        assert_eq!(&g, b);
    }
    assert_eq!(dec.len(), bodies.len());
    // Quarter of what the JSON hello takes, at least.
    let json = JsonEncoder::new().encode_hello(&world(), &bodies);
    assert!(
        frame.len() * 4 < json.len(),
        "{} vs {}",
        frame.len(),
        json.len()
    );
}

#[test]
fn tick_round_trips_states_contacts_spawned_and_removed() {
    let bodies = sample_bodies();
    let mut enc = BinaryEncoder::new();
    let mut dec = BinaryDecoder::new();
    dec.decode(&enc.encode_hello(&world(), &bodies)).unwrap();

    let mut moved = state_of(&bodies[2]);
    moved.p = [-1.5, 0.25, 2.5];
    moved.v = [-3.0, 0.0, 1.0];
    moved.w = [0.0, 4.0, 0.0];
    moved.q = [0.0, 0.38268343, 0.0, 0.9238795];
    let spawned = body(10, ShapeSpec::Sphere { radius: 0.1 }).position([0.0, 5.0, 0.0]);
    let contacts = vec![
        ContactEvent::new(
            ContactEventKind::Begin,
            1,
            3,
            [-1.5, -0.05, 2.5].into(),
            [0.0, 1.0, 0.0].into(),
            12.5,
        ),
        ContactEvent::new(
            ContactEventKind::End,
            9,
            2,
            [100.0, -3.0, 7.25].into(),
            [0.6, 0.0, -0.8].into(),
            0.0,
        ),
    ];
    let frame = enc.encode_tick(
        121,
        2.0 + 1.0 / 60.0,
        &[moved],
        &contacts,
        std::slice::from_ref(&spawned),
        &[4],
    );
    let (tick, time, states, got_contacts, got_spawned, removed) =
        tick_parts(dec.decode(&frame).unwrap());
    assert_eq!(tick, 121);
    assert_eq!(time, 2.0 + 1.0 / 60.0);
    assert_eq!(states.len(), 1);
    assert_close(&states[0], &moved);
    assert_eq!(removed, [4]);
    assert_eq!(got_spawned.len(), 1);
    assert_close(&state_of(&got_spawned[0]), &state_of(&spawned));
    assert_eq!(got_spawned[0].shape, spawned.shape);
    assert_eq!(got_contacts.len(), 2);
    for (g, c) in got_contacts.iter().zip(&contacts) {
        assert_eq!((g.kind, g.a, g.b, g.impulse), (c.kind, c.a, c.b, c.impulse));
        for k in 0..3 {
            assert!((g.point[k] - c.point[k]).abs() <= POS_HALF * 1.0001);
            assert!((g.normal[k] - c.normal[k]).abs() < 1e-4, "{g:?} {c:?}");
        }
    }
    // Baselines: 4 left, 10 entered; the decoder holds the encoder's state.
    assert_eq!(dec.len(), bodies.len());
    assert!(dec.state(4).is_none() && dec.state(10).is_some());
    assert_eq!(
        dec.state(3).map(|s| QState::of(&s)),
        Some(QState::of(&moved))
    );
}

#[test]
fn ack_and_error_round_trip() {
    let mut dec = BinaryDecoder::new();
    for seq in [0, 1, 300, u64::MAX] {
        assert_eq!(
            dec.decode(&BinaryEncoder::encode_ack(seq)).unwrap(),
            ServerMessage::Ack { seq }
        );
    }
    for seq in [None, Some(7)] {
        let frame = BinaryEncoder::encode_error(seq, "not_found", "no body 42 — sorry");
        assert_eq!(
            dec.decode(&frame).unwrap(),
            ServerMessage::Error {
                seq,
                code: "not_found".into(),
                message: "no body 42 — sorry".into()
            }
        );
    }
    assert_eq!(BinaryEncoder::encode_ack(5), [2, 3, 5]);
}

// ----------------------------------------------------------------------
// Deltas.
// ----------------------------------------------------------------------

#[test]
fn unchanged_bodies_produce_no_bytes_beyond_the_header() {
    let bodies = sample_bodies();
    let states: Vec<BodyState> = bodies.iter().map(state_of).collect();
    let mut enc = BinaryEncoder::new();
    enc.encode_hello(&world(), &bodies);
    // Tick 121 (1 varint byte... 121 < 128), time f64, section byte.
    let frame = enc.encode_tick(121, 2.1, &states, &[], &[], &[]);
    assert_eq!(frame.len(), 2 + 1 + 8 + 1, "{frame:?}");
    assert_eq!(frame[11], 0, "no section");
    // A change below half a quantum is no change either.
    let mut nudged = states.clone();
    nudged[2].p[0] += POS_HALF * 0.2;
    nudged[2].v[1] += VEL_HALF * 0.2;
    assert_eq!(enc.encode_tick(122, 2.2, &nudged, &[], &[], &[]).len(), 12);
    // JSON compares exactly, so the nudge is sent there.
    let mut json = JsonEncoder::new();
    json.encode_hello(&world(), &bodies);
    let text = json.encode_tick(121, 2.1, &states, &[], &[], &[]);
    assert!(text.contains("\"bodies\":[]"));
    let text = json.encode_tick(122, 2.2, &nudged, &[], &[], &[]);
    let (_, _, sent, ..) = tick_parts(decode_json(&text).unwrap());
    assert_eq!(sent.len(), 1);
}

/// Random motion of `n` bodies: some still, some drifting, some tumbling,
/// some teleported, with ids far apart.
struct Sim {
    rng: Rng,
    states: Vec<BodyState>,
}

impl Sim {
    fn new(seed: u64, n: usize) -> Sim {
        let mut rng = Rng(seed);
        let mut id = 0u64;
        let states = (0..n)
            .map(|i| {
                id += match i % 4 {
                    0 => 1,
                    1 => 2 + rng.next() % 50,
                    2 => 1 + (rng.next() >> 20),
                    _ => 1,
                };
                BodyState {
                    id,
                    p: [rng.f(-100.0, 100.0), rng.f(0.0, 10.0), rng.f(-100.0, 100.0)],
                    q: rng.unit_quat(),
                    v: [0.0; 3],
                    w: [0.0; 3],
                }
            })
            .collect();
        Sim { rng, states }
    }

    fn step(&mut self, dt: f32) {
        for (i, s) in self.states.iter_mut().enumerate() {
            match i % 5 {
                0 => {} // still
                1 => {
                    // falling with gravity
                    s.v[1] -= 9.81 * dt;
                    for k in 0..3 {
                        s.p[k] += s.v[k] * dt;
                    }
                }
                2 | 3 => {
                    // kicked now and then, tumbling, with drag
                    if self.rng.next().is_multiple_of(30) {
                        s.v = [0; 3].map(|_| self.rng.f(-5.0, 5.0));
                        s.w = [0; 3].map(|_| self.rng.f(-10.0, 10.0));
                    }
                    for k in 0..3 {
                        s.v[k] *= 0.99;
                        s.w[k] *= 0.98;
                        s.p[k] += s.v[k] * dt;
                    }
                    let [x, y, z, w] = s.q;
                    let [wx, wy, wz] = s.w.map(|a| a * 0.5 * dt);
                    let q = [
                        x + wx * w + wy * z - wz * y,
                        y + wy * w + wz * x - wx * z,
                        z + wz * w + wx * y - wy * x,
                        w - wx * x - wy * y - wz * z,
                    ];
                    let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
                    s.q = q.map(|c| c / n);
                }
                _ => {
                    // teleported once in a while
                    if self.rng.next().is_multiple_of(50) {
                        s.p = [0; 3].map(|_| self.rng.f(-1000.0, 1000.0));
                        s.q = self.rng.unit_quat();
                    }
                }
            }
        }
    }
}

#[test]
fn delta_frames_decode_to_the_same_state_as_a_full_frame() {
    let mut sim = Sim::new(7, 200);
    let specs = |states: &[BodyState]| -> Vec<BodySpec> {
        states
            .iter()
            .map(|s| {
                let mut b = body(s.id, ShapeSpec::Sphere { radius: 0.5 });
                b.position = s.p;
                b.rotation = s.q;
                b.linear_velocity = s.v;
                b.angular_velocity = s.w;
                b
            })
            .collect()
    };
    let mut enc = BinaryEncoder::new();
    let mut dec = BinaryDecoder::new();
    dec.decode(&enc.encode_hello(&world(), &specs(&sim.states)))
        .unwrap();
    let dt = 1.0 / 60.0;
    for tick in 1..=600u64 {
        sim.step(dt);
        let frame = enc.encode_tick(tick, tick as f64 * dt as f64, &sim.states, &[], &[], &[]);
        let (_, _, sent, ..) = tick_parts(dec.decode(&frame).unwrap());
        for s in &sent {
            let want = sim.states.iter().find(|x| x.id == s.id).unwrap();
            assert_close(s, want);
        }
        if tick % 100 == 0 {
            // A fresh full frame of the same state decodes to the same integers.
            let mut full = BinaryDecoder::new();
            full.decode(&BinaryEncoder::new().encode_hello(&world(), &specs(&sim.states)))
                .unwrap();
            for s in &sim.states {
                assert_eq!(dec.quantized(s.id), full.quantized(s.id), "body {}", s.id);
                assert_eq!(dec.quantized(s.id), Some(QState::of(s)));
            }
        }
    }
}

#[test]
fn moved_list_and_all_bodies_give_the_same_bytes() {
    let mut sim = Sim::new(11, 60);
    let specs: Vec<BodySpec> = sim
        .states
        .iter()
        .map(|s| {
            let mut b = body(s.id, ShapeSpec::Sphere { radius: 0.5 });
            b.position = s.p;
            b.rotation = s.q;
            b
        })
        .collect();
    let mut all = BinaryEncoder::new();
    let mut moved = BinaryEncoder::new();
    assert_eq!(
        all.encode_hello(&world(), &specs),
        moved.encode_hello(&world(), &specs)
    );
    let mut prev = sim.states.clone();
    for tick in 1..=120u64 {
        sim.step(1.0 / 60.0);
        let changed: Vec<BodyState> = sim
            .states
            .iter()
            .zip(&prev)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| *a)
            .collect();
        let t = tick as f64 / 60.0;
        assert_eq!(
            all.encode_tick(tick, t, &sim.states, &[], &[], &[]),
            moved.encode_tick(tick, t, &changed, &[], &[], &[]),
        );
        prev = sim.states.clone();
    }
}

#[test]
fn moving_bodies_cost_a_fraction_of_their_full_state() {
    // Smooth tumbling motion: the predictions leave small residuals.
    let mut states: Vec<BodyState> = (1..=100u64)
        .map(|id| BodyState {
            id,
            p: [id as f32, 0.5, -3.0],
            q: [0.0, 0.0, 0.0, 1.0],
            v: [2.0, 0.0, 0.5],
            w: [0.0, 0.0, -4.0],
        })
        .collect();
    let mut enc = BinaryEncoder::new();
    let dt = 1.0f32 / 60.0;
    let mut last = 0;
    for tick in 1..=60u64 {
        for s in &mut states {
            s.v[0] *= 0.98;
            s.w[2] *= 0.98;
            for k in 0..3 {
                s.p[k] += s.v[k] * dt;
            }
            let h = 0.5 * s.w[2] * dt;
            let [x, y, z, w] = s.q;
            let q = [x - h * y, y + h * x, z + h * w, w - h * z];
            let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
            s.q = q.map(|c| c / n);
        }
        last = enc
            .encode_tick(tick, tick as f64 * dt as f64, &states, &[], &[], &[])
            .len();
    }
    // 100 bodies × 13 f32 = 5200 bytes uncompressed.
    assert!(last < 100 * 10, "{last} bytes for 100 moving bodies");
}

#[test]
fn a_joining_subscriber_follows_the_group_from_its_join_hello() {
    let mut sim = Sim::new(3, 50);
    let specs: Vec<BodySpec> = sim
        .states
        .iter()
        .map(|s| {
            let mut b = body(s.id, ShapeSpec::Sphere { radius: 0.5 });
            b.position = s.p;
            b.rotation = s.q;
            b
        })
        .collect();
    let mut enc = BinaryEncoder::new();
    let mut early = BinaryDecoder::new();
    early.decode(&enc.encode_hello(&world(), &specs)).unwrap();
    let mut late = BinaryDecoder::new();
    for tick in 1..=90u64 {
        sim.step(1.0 / 60.0);
        if tick == 45 {
            // The newcomer gets the world's current bodies but the group's
            // baseline state; a body spawned since the last frame too.
            let mut now = specs.clone();
            now.push(body(10_000, ShapeSpec::Sphere { radius: 1.0 }));
            late.decode(&enc.encode_join_hello(&world(), &now)).unwrap();
        }
        let frame = enc.encode_tick(tick, tick as f64 / 60.0, &sim.states, &[], &[], &[]);
        early.decode(&frame).unwrap();
        if tick >= 45 {
            late.decode(&frame).unwrap();
            for s in &sim.states {
                assert_eq!(late.quantized(s.id), early.quantized(s.id));
            }
        }
    }
}

#[test]
fn a_hello_resets_the_baseline() {
    let bodies = sample_bodies();
    let mut enc = BinaryEncoder::new();
    let mut dec = BinaryDecoder::new();
    dec.decode(&enc.encode_hello(&world(), &bodies)).unwrap();
    let only = vec![bodies[1].clone()];
    dec.decode(&enc.encode_hello(&world(), &only)).unwrap();
    assert_eq!((enc.baseline_len(), dec.len()), (1, 1));
    // Body 3 is unknown again: a tick sends it whole and both agree.
    let frame = enc.encode_tick(200, 5.0, &[state_of(&bodies[2])], &[], &[], &[]);
    let (_, _, sent, ..) = tick_parts(dec.decode(&frame).unwrap());
    assert_eq!(sent.len(), 1);
    assert_eq!(dec.quantized(3), Some(QState::of(&state_of(&bodies[2]))));
}

#[test]
fn every_nth_frames_with_removals_and_spawns_stay_in_step() {
    let mut sim = Sim::new(5, 80);
    let mut enc = BinaryEncoder::new();
    let mut dec = BinaryDecoder::new();
    let mut next_id = 1u64 << 50;
    for tick in 1..=300u64 {
        sim.step(1.0 / 120.0);
        if tick % 4 != 0 {
            continue; // every = 4
        }
        let removed: Vec<u64> = if tick % 40 == 0 {
            let id = sim.states.remove(3).id;
            vec![id, id] // duplicates are fine
        } else {
            vec![]
        };
        let spawned: Vec<BodySpec> = if tick % 24 == 0 {
            next_id += 1000;
            let b = body(next_id, ShapeSpec::Sphere { radius: 0.2 }).position([1.0, 2.0, 3.0]);
            sim.states.push(state_of(&b));
            vec![b]
        } else {
            vec![]
        };
        let frame = enc.encode_tick(
            tick,
            tick as f64 / 120.0,
            &sim.states,
            &[],
            &spawned,
            &removed,
        );
        let (.., got_spawned, got_removed) = tick_parts(dec.decode(&frame).unwrap());
        assert_eq!(got_spawned.len(), spawned.len());
        assert_eq!(got_removed.len(), removed.len().min(1));
        assert_eq!(dec.len(), sim.states.len());
        assert_eq!(enc.baseline_len(), sim.states.len());
        for s in &sim.states {
            assert_eq!(dec.quantized(s.id), Some(QState::of(s)));
        }
    }
}

// ----------------------------------------------------------------------
// Ranges.
// ----------------------------------------------------------------------

#[test]
fn far_apart_ids_and_extreme_values_round_trip() {
    let ids = [0u64, 1, 1 << 40, u64::MAX - 1, u64::MAX];
    let limit = i32::MAX as f32 / 1024.0; // ≈ 2 097 152 m
    let states: Vec<BodyState> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| BodyState {
            id,
            p: [-2.0e6, 1.0e5 * i as f32, -0.0004],
            q: [-0.5, -0.5, -0.5, -0.5],
            v: [-1.0e4, 1.0e4, 0.0],
            w: [1.0e4, -3.0, 0.001],
        })
        .collect();
    let mut enc = BinaryEncoder::new();
    let mut dec = BinaryDecoder::new();
    for (tick, time) in [(1u64, 0.0), (u64::MAX, f64::MAX)] {
        let frame = enc.encode_tick(tick, time, &states, &[], &[], &ids[..0]);
        let (t, ..) = tick_parts(dec.decode(&frame).unwrap());
        assert_eq!(t, tick);
    }
    for s in &states {
        assert_close(&dec.state(s.id).unwrap(), s);
    }
    // Out of range: clamps to the ends of the documented range; NaN → 0.
    let wild = BodyState {
        id: 5,
        p: [1.0e9, -1.0e9, f32::NAN],
        q: [f32::NAN, 0.0, 0.0, 1.0],
        v: [f32::INFINITY, -1.0e8, f32::NAN],
        w: [0.0; 3],
    };
    let frame = enc.encode_tick(3, 1.0, &[wild], &[], &[], &[]);
    let (_, _, sent, ..) = tick_parts(dec.decode(&frame).unwrap());
    let got = sent[0];
    assert!(
        (got.p[0] - limit).abs() < 1.0 && (got.p[1] + limit).abs() < 1.0,
        "{got:?}"
    );
    assert_eq!(got.p[2], 0.0);
    assert_eq!(got.q, [0.0, 0.0, 0.0, 1.0]);
    assert!((got.v[0] - i32::MAX as f32 / 128.0).abs() < 1.0);
    assert_eq!(got.v[2], 0.0);
    // Removing the extreme ids works too.
    let frame = enc.encode_tick(4, 1.1, &[], &[], &[], &[u64::MAX, 0]);
    let (.., removed) = tick_parts(dec.decode(&frame).unwrap());
    assert_eq!(removed, [0, u64::MAX]);
}

// ----------------------------------------------------------------------
// Robustness.
// ----------------------------------------------------------------------

#[test]
fn a_failed_decode_leaves_the_decoder_unchanged() {
    let bodies = sample_bodies();
    let mut enc = BinaryEncoder::new();
    let mut dec = BinaryDecoder::new();
    dec.decode(&enc.encode_hello(&world(), &bodies)).unwrap();
    let before = dec.states();
    let mut moved = state_of(&bodies[2]);
    moved.p[0] += 1.0;
    let frame = enc.encode_tick(121, 2.1, &[moved], &[], &[], &[5]);
    for cut in 0..frame.len() {
        assert!(dec.decode(&frame[..cut]).is_err(), "cut at {cut}");
        assert_eq!(dec.states(), before);
    }
    let mut longer = frame.clone();
    longer.push(0);
    assert!(dec.decode(&longer).is_err());
    assert_eq!(dec.states(), before);
    dec.decode(&frame).unwrap();
    assert_ne!(dec.states(), before);
}

#[test]
fn malformed_headers_are_errors() {
    let mut dec = BinaryDecoder::new();
    for frame in [
        &[][..],
        &[2],
        &[1, 3, 0],                               // version 1 (cables as f32s): unknown
        &[2, 9, 0],                               // unknown type
        &[2, 4, 2, 0, 0],                         // unknown error flags
        &[2, 4, 0, 1, 0xff, 0],                   // code not UTF-8
        &[2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10], // unknown section
        &[2, 3, 0x80],                            // truncated varint
    ] {
        assert!(dec.decode(frame).is_err(), "{frame:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut dec = BinaryDecoder::new();
        let _ = dec.decode(&bytes);
        // Same bytes behind a valid header of each message type.
        for ty in 1..=4u8 {
            let mut f = vec![2, ty];
            f.extend_from_slice(&bytes);
            let _ = dec.decode(&f);
        }
    }

    #[test]
    fn corrupted_valid_frames_never_panic_the_decoder(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let bodies = sample_bodies();
        let mut enc = BinaryEncoder::new();
        let hello = enc.encode_hello(&world(), &bodies);
        let mut moved: Vec<BodyState> = bodies.iter().map(state_of).collect();
        for s in &mut moved {
            s.p[1] += 0.3;
            s.w[0] += 1.0;
        }
        let contact = ContactEvent::new(ContactEventKind::Begin, 1, 3, [0.0; 3].into(), [0.0, 1.0, 0.0].into(), 1.0);
        let tick = enc.encode_tick(121, 2.1, &moved, &[contact], &bodies[..2], &[6]);
        for frame in [hello, tick] {
            let mut f = frame.clone();
            for (i, x) in &flips {
                let n = f.len();
                f[i % n] ^= x;
            }
            f.truncate(f.len() - cut % 3);
            let mut dec = BinaryDecoder::new();
            let _ = dec.decode(&f);
            let _ = dec.decode(&frame);
        }
    }

    #[test]
    fn positions_and_velocities_are_within_half_a_quantum(
        p in proptest::array::uniform3(-2.0e6f32..2.0e6),
        small in proptest::array::uniform3(-10.0f32..10.0),
        v in proptest::array::uniform3(-1.0e4f32..1.0e4),
        w in proptest::array::uniform3(-100.0f32..100.0),
    ) {
        let mut enc = BinaryEncoder::new();
        let mut dec = BinaryDecoder::new();
        let a = BodyState { id: 1, p, q: [0.0, 0.0, 0.0, 1.0], v, w };
        let b = BodyState { id: 2, p: small, q: [0.0, 0.0, 0.0, 1.0], v: w, w: v };
        dec.decode(&enc.encode_tick(1, 0.5, &[a, b], &[], &[], &[])).unwrap();
        // Then move them (a delta frame) and check again.
        let a2 = BodyState { p: [p[0] * 0.5, p[1] + 1.0, -p[2]], ..a };
        let b2 = BodyState { p: [small[1], small[2], small[0]], ..b };
        dec.decode(&enc.encode_tick(2, 0.6, &[a2, b2], &[], &[], &[])).unwrap();
        for s in [a2, b2] {
            let got = dec.state(s.id).unwrap();
            for k in 0..3 {
                // Half a millimetre quantum plus the f32 rounding of the output.
                prop_assert!((got.p[k] - s.p[k]).abs() <= POS_HALF + s.p[k].abs() * 1.2e-7);
                prop_assert!((got.v[k] - s.v[k]).abs() <= VEL_HALF + s.v[k].abs() * 1.2e-7);
                prop_assert!((got.w[k] - s.w[k]).abs() <= VEL_HALF + s.w[k].abs() * 1.2e-7);
            }
        }
    }

    #[test]
    fn rotations_are_within_the_stated_angle(
        q in proptest::array::uniform4(-1.0f32..1.0),
        q2 in proptest::array::uniform4(-1.0f32..1.0),
        w in proptest::array::uniform3(-20.0f32..20.0),
    ) {
        let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        let n2 = q2.iter().map(|x| x * x).sum::<f32>().sqrt();
        prop_assume!(n > 1e-3 && n2 > 1e-3);
        let q = q.map(|x| x / n);
        let q2 = q2.map(|x| x / n2);
        // Directly, through a full frame and through a delta frame (which
        // predicts from the angular velocity).
        let direct = QRot::from_f32(q).to_f32();
        prop_assert!(angle_between(direct, q) <= ROTATION_MAX_ERROR);
        let mut enc = BinaryEncoder::new();
        let mut dec = BinaryDecoder::new();
        let a = BodyState { id: 1, p: [0.0; 3], q, v: [0.0; 3], w };
        dec.decode(&enc.encode_tick(1, 0.0, &[a], &[], &[], &[])).unwrap();
        prop_assert!(angle_between(dec.state(1).unwrap().q, q) <= ROTATION_MAX_ERROR);
        let b = BodyState { q: q2, ..a };
        dec.decode(&enc.encode_tick(2, 1.0 / 60.0, &[b], &[], &[], &[])).unwrap();
        prop_assert!(angle_between(dec.state(1).unwrap().q, q2) <= ROTATION_MAX_ERROR);
        prop_assert_eq!(dec.quantized(1), Some(QState::of(&b)));
    }
}

#[test]
fn rotation_error_bound_holds_over_a_million_random_quaternions() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut worst = 0.0f64;
    for _ in 0..1_000_000 {
        let q = rng.unit_quat();
        worst = worst.max(angle_between(QRot::from_f32(q).to_f32(), q));
    }
    println!("worst rotation error {worst:e} rad, bound {ROTATION_MAX_ERROR:e}");
    assert!(
        worst <= ROTATION_MAX_ERROR,
        "{worst} > {ROTATION_MAX_ERROR}"
    );
    // The bound is not loose by orders of magnitude either.
    assert!(worst > ROTATION_MAX_ERROR / 10.0, "{worst}");
}

// ----------------------------------------------------------------------
// JSON.
// ----------------------------------------------------------------------

#[test]
fn json_messages_round_trip_and_ticks_carry_only_changes() {
    let bodies = sample_bodies();
    let mut enc = JsonEncoder::new();
    let hello = enc.encode_hello(&world(), &bodies);
    assert_eq!(
        decode_json(&hello).unwrap(),
        ServerMessage::Hello {
            world: world(),
            bodies: bodies.clone(),
            cables: vec![],
        }
    );
    let mut moved = state_of(&bodies[2]);
    moved.p[1] = 0.2999;
    let contact = ContactEvent::new(
        ContactEventKind::Begin,
        3,
        1,
        [0.0; 3].into(),
        [0.0, -1.0, 0.0].into(),
        2.0,
    );
    let states: Vec<BodyState> = bodies
        .iter()
        .map(|b| if b.id == Some(3) { moved } else { state_of(b) })
        .collect();
    let text = enc.encode_tick(121, 2.0, &states, &[contact], &[], &[6]);
    assert_eq!(
        decode_json(&text).unwrap(),
        ServerMessage::Tick {
            tick: 121,
            time: 2.0,
            bodies: vec![moved],
            contacts: vec![contact],
            spawned: vec![],
            removed: vec![6],
            cables: vec![],
        }
    );
    assert!(text.starts_with(r#"{"type":"tick","tick":121,"time":2.0,"bodies":[{"id":3,"#));
}

// ----------------------------------------------------------------------
// The examples of proto/binary.md.
// ----------------------------------------------------------------------

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn documented_example_frames_are_what_the_encoder_writes() {
    let doc: String = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/proto/binary.md"))
        .split_whitespace()
        .collect();
    let world = WorldInfo {
        id: "w1".into(),
        name: "demo".into(),
        tick_hz: 60.0,
        gravity: [0.0, -9.81, 0.0],
        paused: false,
        tick: 0,
        time: 0.0,
        body_count: 2,
        step_ms: StepMs::default(),
        fault: None,
    };
    let plane = body(
        1,
        ShapeSpec::Plane {
            normal: [0.0, 1.0, 0.0],
            offset: 0.0,
        },
    )
    .kind(BodyKind::Static);
    let ball = body(2, ShapeSpec::Sphere { radius: 0.5 }).position([0.0, 1.0, 0.0]);
    let mut enc = BinaryEncoder::new();
    let hello = enc.encode_hello(&world, &[plane, ball]);
    assert_eq!(hello.len(), 167);
    assert!(doc.contains(&hex(&hello)), "hello: {}", hex(&hello));

    let moved = BodyState {
        id: 2,
        p: [0.0333, 0.9973, 0.0],
        q: [0.0, 0.0, -0.0333, 0.99944],
        v: [2.0, -0.1635, 0.0],
        w: [0.0, 0.0, -4.0],
    };
    let contact = ContactEvent::new(
        ContactEventKind::Begin,
        1,
        2,
        [0.0333, 0.0, 0.0].into(),
        [0.0, 1.0, 0.0].into(),
        1.25,
    );
    let tick = enc.encode_tick(1, 1.0 / 60.0, &[moved], &[contact], &[], &[]);
    assert_eq!(tick.len(), 38);
    assert!(doc.contains(&hex(&tick)), "tick: {}", hex(&tick));
    assert_eq!(
        QState::of(&moved),
        QState {
            p: [34, 1021, 0],
            q: QRot {
                index: 3,
                c: [0, 0, -772]
            },
            v: [256, -21, 0],
            w: [0, 0, -512],
        }
    );

    let mut dec = BinaryDecoder::new();
    dec.decode(&hello).unwrap();
    let decoded = arbiter::protocol::encode_json(&dec.decode(&tick).unwrap());
    assert!(doc.contains(&decoded), "{decoded}");

    let ack = BinaryEncoder::encode_ack(300);
    let error = BinaryEncoder::encode_error(Some(5), "not_found", "no body 9");
    assert!(doc.contains(&hex(&ack)) && doc.contains(&hex(&error)));
}

#[test]
fn contact_normals_are_within_a_ten_thousandth_of_a_radian() {
    let mut rng = Rng(42);
    let mut worst = 0.0f64;
    for _ in 0..200_000 {
        let q = rng.unit_quat();
        let n = [q[0], q[1], q[2]];
        let len = n.iter().map(|x| x * x).sum::<f32>().sqrt();
        if len < 1e-3 {
            continue;
        }
        let c = ContactEvent::new(ContactEventKind::End, 1, 2, [0.0; 3].into(), n.into(), 0.0);
        let mut enc = BinaryEncoder::new();
        let frame = enc.encode_tick(1, 0.0, &[], &[c], &[], &[]);
        let (_, _, _, got, ..) = tick_parts(BinaryDecoder::new().decode(&frame).unwrap());
        // atan2(|d × n|, d · n): acos of a dot product near 1 would drown
        // the answer in f32 rounding.
        let d = got[0].normal.map(f64::from);
        let n = n.map(f64::from);
        let cross = [
            d[1] * n[2] - d[2] * n[1],
            d[2] * n[0] - d[0] * n[2],
            d[0] * n[1] - d[1] * n[0],
        ];
        let sin = cross.iter().map(|x| x * x).sum::<f64>().sqrt();
        let cos: f64 = (0..3).map(|k| d[k] * n[k]).sum();
        worst = worst.max(sin.atan2(cos));
    }
    assert!(worst < 1e-4, "{worst}");
}

#[test]
fn a_body_spawned_and_removed_between_two_frames_leaves_no_trace() {
    let bodies = sample_bodies();
    let mut enc = BinaryEncoder::new();
    let mut dec = BinaryDecoder::new();
    let mut json = JsonEncoder::new();
    dec.decode(&enc.encode_hello(&world(), &bodies)).unwrap();
    json.encode_hello(&world(), &bodies);
    let brief = body(50, ShapeSpec::Sphere { radius: 0.1 });
    let frame = enc.encode_tick(
        121,
        2.1,
        &[state_of(&brief)],
        &[],
        std::slice::from_ref(&brief),
        &[50],
    );
    let (_, _, sent, _, spawned, removed) = tick_parts(dec.decode(&frame).unwrap());
    assert!(sent.is_empty());
    assert_eq!((spawned.len(), removed.as_slice()), (1, &[50][..]));
    assert!(dec.state(50).is_none());
    assert_eq!(
        (enc.baseline_len(), dec.len()),
        (bodies.len(), bodies.len())
    );
    let text = json.encode_tick(121, 2.1, &[state_of(&brief)], &[], &[brief], &[50]);
    let (_, _, sent, ..) = tick_parts(decode_json(&text).unwrap());
    assert!(sent.is_empty());
    assert_eq!(json.baseline_len(), bodies.len());
}
