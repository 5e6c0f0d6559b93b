//! One protocol, three readers: proto/fixtures/stream.json holds a recorded
//! stream (a hello, ticks with contacts, spawns and removals, cables moving,
//! falling asleep, added and removed, a join hello, an ack and an error) from a real `World` through `BinaryEncoder` and
//! `JsonEncoder`, with what the binary frames decode to. This test checks
//! the Rust decoders against it; clients/js/test/fixture.test.js and
//! clients/python/tests/test_fixture.py check the JavaScript and Python ones.
//!
//! Regenerate (after a deliberate format or engine change) with
//! `ARBITER_UPDATE_FIXTURES=1 cargo test --test protocol_fixture`.

use arbiter::physics::cable::{CableSpec, CableState};
use arbiter::physics::scene::{Scene, WorldSpec};
use arbiter::physics::world::World;
use arbiter::physics::{BodyKind, BodySpec, ShapeSpec};
use arbiter::protocol::json::decode_json;
use arbiter::protocol::{
    BinaryDecoder, BinaryEncoder, Body, BodyState, JsonEncoder, ServerMessage, StepMs, WorldInfo,
};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto/fixtures/stream.json")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn body(kind: BodyKind, shape: ShapeSpec, p: [f32; 3]) -> BodySpec {
    let mut b = BodySpec::new(shape);
    b.kind = kind;
    b.position = p;
    b
}

fn scene() -> Scene {
    use BodyKind::*;
    let s = 0.5f32;
    let mut bodies = vec![
        body(
            Static,
            ShapeSpec::Plane {
                normal: [0.0, 1.0, 0.0],
                offset: 0.0,
            },
            [0.0; 3],
        ),
        body(Dynamic, ShapeSpec::Sphere { radius: 0.5 }, [0.0, 0.6, 0.0]),
        body(
            Dynamic,
            ShapeSpec::Box {
                half_extents: [0.5, 0.4, 0.3],
            },
            [1.5, 1.0, 0.0],
        ),
        body(
            Dynamic,
            ShapeSpec::Capsule {
                half_height: 0.4,
                radius: 0.25,
            },
            [-1.5, 1.2, 0.0],
        ),
        body(
            Dynamic,
            ShapeSpec::Cylinder {
                half_height: 0.3,
                radius: 0.4,
            },
            [0.0, 1.0, 1.5],
        ),
        body(
            Dynamic,
            ShapeSpec::Cone {
                half_height: 0.4,
                radius: 0.4,
            },
            [0.0, 1.5, -1.5],
        ),
        body(
            Dynamic,
            ShapeSpec::ConvexHull {
                points: vec![
                    [-s, 0.0, -s],
                    [s, 0.0, -s],
                    [s, 0.0, s],
                    [-s, 0.0, s],
                    [0.0, 0.8, 0.0],
                ],
            },
            [3.0, 0.5, 0.0],
        ),
        body(
            Kinematic,
            ShapeSpec::Box {
                half_extents: [0.2, 0.2, 0.2],
            },
            [-3.0, 0.5, 0.0],
        ),
    ];
    bodies[1].linear_velocity = [2.0, 0.0, 0.0];
    bodies[2].rotation = [0.0, 0.3826834, 0.0, 0.9238795];
    bodies[2].angular_velocity = [0.0, 2.0, 0.0];
    bodies[3].label = Some("capsule ✓".into());
    bodies[3].mass = Some(3.0);
    bodies[4].density = Some(500.0);
    bodies[4].ccd = true;
    bodies[6].margin = 0.01;
    bodies[7].linear_velocity = [1.0, 0.0, 0.0];
    // A rope swinging from a pin (awake throughout) and one lying on the
    // floor (asleep after half a second).
    let mut swinging = CableSpec::new([-4.0, 3.0, 2.0], [-2.0, 3.0, 2.0], 8);
    swinging.pinned = vec![0];
    let resting = CableSpec::new([-4.0, 0.02, -2.0], [-2.0, 0.02, -2.0], 6);
    Scene {
        world: WorldSpec {
            name: "fixture".into(),
            ..WorldSpec::default()
        },
        bodies,
        cables: vec![swinging, resting],
    }
}

fn info(w: &World) -> WorldInfo {
    WorldInfo {
        id: "fixture".into(),
        name: "fixture".into(),
        tick_hz: 60.0,
        gravity: [0.0, -9.81, 0.0],
        paused: false,
        tick: w.tick(),
        time: w.time(),
        body_count: w.body_count(),
        step_ms: StepMs {
            last: 0.125,
            mean: 0.1,
            max: 0.5,
        },
        fault: None,
    }
}

fn bodies(w: &World) -> Vec<Body> {
    w.bodies().map(|b| b.to_spec()).collect()
}

fn states(w: &World) -> Vec<BodyState> {
    w.bodies().map(BodyState::of).collect()
}

/// The cables a frame carries, as the server picks them: those awake before
/// or after a step since the last frame or added since (`moved`), or every
/// cable after a join.
fn cable_states(w: &World, moved: &BTreeSet<u64>, all: bool) -> Vec<CableState> {
    w.cables()
        .iter()
        .filter(|c| all || moved.contains(&c.id))
        .map(|c| c.state())
        .collect()
}

fn awake_cables(w: &World) -> impl Iterator<Item = u64> + '_ {
    w.cables().iter().filter(|c| !c.sleeping).map(|c| c.id)
}

/// Records the stream: every = 2, 48 steps, a spawn at step 10, a cable
/// added at step 12, a removal at step 20, the cable removed at step 24, a
/// body spawned and removed between two frames (steps 29/30), a join hello
/// at step 36 (the next frame carries every cable as a key frame), then an
/// ack and an error.
fn record() -> Value {
    let mut world = World::from_scene(&scene()).unwrap();
    let mut bin = BinaryEncoder::new();
    let mut js = JsonEncoder::new();
    let mut frames: Vec<(Vec<u8>, String)> = Vec::new();
    let (wi, bs) = (info(&world), bodies(&world));
    frames.push((bin.encode_hello(&wi, &bs), js.encode_hello(&wi, &bs)));
    let mut contacts = Vec::new();
    let mut spawned: Vec<Body> = Vec::new();
    let mut removed: Vec<u64> = Vec::new();
    let (mut moved_cables, mut all_cables) = (BTreeSet::new(), true);
    let mut added_cable = 0;
    for step in 1..=48u64 {
        match step {
            12 => {
                let mut c = CableSpec::new([1.0, 2.5, -2.0], [2.0, 2.5, -2.0], 5);
                c.linear_velocity = [0.0, 1.0, 0.0];
                added_cable = world.add_cable(&c).unwrap();
                moved_cables.insert(added_cable);
            }
            24 => {
                assert!(world.remove_cable(added_cable));
                removed.push(added_cable);
            }
            10 => {
                let mut b = body(
                    BodyKind::Dynamic,
                    ShapeSpec::Sphere { radius: 0.3 },
                    [0.2, 3.0, 0.0],
                );
                b.angular_velocity = [0.0, 0.0, 3.0];
                let id = world.add_body(&b).unwrap();
                spawned.push(world.body(id).unwrap().to_spec());
            }
            20 => {
                assert!(world.remove_body(3));
                removed.push(3);
            }
            29 => {
                let b = body(
                    BodyKind::Dynamic,
                    ShapeSpec::Sphere { radius: 0.2 },
                    [5.0, 2.0, 0.0],
                );
                let id = world.add_body(&b).unwrap();
                spawned.push(world.body(id).unwrap().to_spec());
            }
            30 => {
                let id = spawned.last().unwrap().id.unwrap();
                assert!(world.remove_body(id));
                removed.push(id);
            }
            _ => {}
        }
        moved_cables.extend(awake_cables(&world));
        world.step();
        moved_cables.extend(awake_cables(&world));
        contacts.extend_from_slice(world.contact_events());
        if step % 2 == 0 {
            let st = states(&world);
            let cables = cable_states(&world, &moved_cables, all_cables);
            let t = world.time();
            frames.push((
                bin.encode_tick_with_cables(step, t, &st, &contacts, &spawned, &removed, &cables),
                js.encode_tick_with_cables(step, t, &st, &contacts, &spawned, &removed, &cables),
            ));
            contacts.clear();
            spawned.clear();
            removed.clear();
            moved_cables.clear();
            all_cables = false;
        }
        if step == 36 {
            let (wi, bs) = (info(&world), bodies(&world));
            let all: Vec<CableState> = world.cables().iter().map(|c| c.state()).collect();
            frames.push((
                bin.encode_join_hello(&wi, &bs),
                js.encode_join_hello_with_cables(&wi, &bs, &all),
            ));
            bin.forget_cables();
            all_cables = true;
        }
    }
    frames.push((
        BinaryEncoder::encode_ack(42),
        arbiter::protocol::encode_json(&ServerMessage::Ack { seq: 42 }),
    ));
    let err = ServerMessage::Error {
        seq: Some(7),
        code: "not_found".into(),
        message: "no body 99 in world fixture".into(),
    };
    frames.push((
        BinaryEncoder::encode_error(Some(7), "not_found", "no body 99 in world fixture"),
        arbiter::protocol::encode_json(&err),
    ));

    let mut decoder = BinaryDecoder::new();
    let mut out = Vec::new();
    for (b, j) in &frames {
        let decoded = decoder.decode(b).unwrap();
        out.push(json!({
            "binary": hex(b),
            "json": j,
            "decoded": serde_json::to_value(&decoded).unwrap(),
        }));
    }
    // The final state each reader must hold: dequantized from the binary
    // stream; exact (the world's own f32 values) from the JSON stream.
    let final_binary: BTreeMap<String, Value> = decoder
        .states()
        .into_iter()
        .map(|s| (s.id.to_string(), serde_json::to_value(s).unwrap()))
        .collect();
    let final_json: BTreeMap<String, Value> = states(&world)
        .into_iter()
        .map(|s| (s.id.to_string(), serde_json::to_value(s).unwrap()))
        .collect();
    let decoded: Vec<ServerMessage> = out
        .iter()
        .map(|f| serde_json::from_value(f["decoded"].clone()).unwrap())
        .collect();
    let final_binary_cables = cable_map(&mirror(&decoded).1);
    let final_json_cables = cable_map(
        &world
            .cables()
            .iter()
            .map(|c| (c.id, c.state().points))
            .collect(),
    );
    json!({
        "about": "Recorded Arbiter stream (every = 2): each frame as binary (hex) and JSON text, \
                  and what the binary frame decodes to (as the JSON stream would carry it). \
                  Floats of f32 fields are printed as the shortest decimal of the f32 value. \
                  final_binary_states: every body's state after the last frame, from the binary \
                  stream (quantized); final_json_states: the same from the JSON stream (exact); \
                  final_binary_cables and final_json_cables: every cable's points after the last \
                  frame, the same way (a client keeps each cable until a tick carries it again). \
                  Generated by tests/protocol_fixture.rs.",
        "frames": out,
        "final_binary_states": final_binary,
        "final_json_states": final_json,
        "final_binary_cables": final_binary_cables,
        "final_json_cables": final_json_cables,
    })
}

type Cables = BTreeMap<u64, Vec<[f32; 3]>>;

fn cable_map(c: &Cables) -> Value {
    serde_json::to_value(
        c.iter()
            .map(|(id, p)| (id.to_string(), p.clone()))
            .collect::<BTreeMap<String, Vec<[f32; 3]>>>(),
    )
    .unwrap()
}

/// A client's view: apply hello and ticks in order (bodies, and cables kept
/// until a tick carries them again or removes them).
fn mirror(messages: &[ServerMessage]) -> (BTreeMap<u64, BodyState>, Cables) {
    let mut m = BTreeMap::new();
    let mut cm = Cables::new();
    for msg in messages {
        match msg {
            ServerMessage::Hello { bodies, cables, .. } => {
                cm = cables.iter().map(|c| (c.id, c.points.clone())).collect();
                m.clear();
                for b in bodies {
                    if let Some(id) = b.id {
                        m.insert(id, spec_state(id, b));
                    }
                }
            }
            ServerMessage::Tick {
                bodies,
                spawned,
                removed,
                cables,
                ..
            } => {
                for b in spawned {
                    if let Some(id) = b.id {
                        m.insert(id, spec_state(id, b));
                    }
                }
                for id in removed {
                    m.remove(id);
                    cm.remove(id);
                }
                for s in bodies {
                    m.insert(s.id, *s);
                }
                for c in cables {
                    cm.insert(c.id, c.points.clone());
                }
            }
            _ => {}
        }
    }
    (m, cm)
}

fn spec_state(id: u64, b: &Body) -> BodyState {
    BodyState {
        id,
        p: b.position,
        q: b.rotation,
        v: b.linear_velocity,
        w: b.angular_velocity,
    }
}

#[test]
fn recorded_stream_decodes_to_the_fixture() {
    let path = fixture_path();
    if std::env::var_os("ARBITER_UPDATE_FIXTURES").is_some() {
        let text = serde_json::to_string_pretty(&record()).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text + "\n").unwrap();
    }
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let frames = fixture["frames"].as_array().unwrap();
    assert!(frames.len() > 20);

    // Binary: the Rust decoder gives exactly the recorded messages.
    let mut decoder = BinaryDecoder::new();
    let mut binary_messages = Vec::new();
    let mut saw = (0, 0, 0, 0, 0);
    for (i, f) in frames.iter().enumerate() {
        let msg = decoder
            .decode(&unhex(f["binary"].as_str().unwrap()))
            .unwrap();
        same(
            &serde_json::to_value(&msg).unwrap(),
            &f["decoded"],
            &format!("frame {i}"),
        );
        if let ServerMessage::Tick {
            contacts,
            spawned,
            removed,
            bodies,
            cables,
            ..
        } = &msg
        {
            saw.0 += contacts.len();
            saw.1 += spawned.len();
            saw.2 += removed.len();
            saw.3 += bodies.len();
            saw.4 += cables.len();
        }
        binary_messages.push(msg);
    }
    assert!(
        saw.0 > 0 && saw.1 >= 2 && saw.2 >= 3 && saw.3 > 0 && saw.4 > 0,
        "{saw:?}"
    );
    let binary_cables = mirror(&binary_messages).1;
    same(
        &cable_map(&binary_cables),
        &fixture["final_binary_cables"],
        "final binary cables",
    );
    // Within the quantization of the world's own points (the JSON stream's).
    let exact = fixture["final_json_cables"].as_object().unwrap();
    assert_eq!(exact.len(), binary_cables.len());
    for (id, points) in &binary_cables {
        let want = exact[&id.to_string()].as_array().unwrap();
        assert_eq!(want.len(), points.len());
        for (p, q) in points.iter().zip(want) {
            for k in 0..3 {
                let e = q[k].as_f64().unwrap();
                assert!(
                    (p[k] as f64 - e).abs() <= 0.5 / 1024.0 + 1e-6,
                    "cable {id}: {p:?} {q}"
                );
            }
        }
    }
    let final_binary: BTreeMap<String, Value> = decoder
        .states()
        .into_iter()
        .map(|s| (s.id.to_string(), serde_json::to_value(s).unwrap()))
        .collect();
    same(
        &serde_json::to_value(final_binary).unwrap(),
        &fixture["final_binary_states"],
        "final binary states",
    );

    // JSON: every frame parses, and a mirror ends in the world's exact state.
    let messages: Vec<ServerMessage> = frames
        .iter()
        .map(|f| decode_json(f["json"].as_str().unwrap()).unwrap())
        .collect();
    let (m, cables) = mirror(&messages);
    same(
        &cable_map(&cables),
        &fixture["final_json_cables"],
        "final JSON cables",
    );
    let final_json: BTreeMap<String, Value> = m
        .values()
        .map(|s| (s.id.to_string(), serde_json::to_value(s).unwrap()))
        .collect();
    same(
        &serde_json::to_value(final_json).unwrap(),
        &fixture["final_json_states"],
        "final JSON states",
    );
}

/// Deep equality of JSON values. serde_json (without `float_roundtrip`) may
/// parse a float one f64 ulp off, so a number matches when it is within
/// 2 ulps, or when the actual value is an f32 and the expected one rounds to
/// it (the fixture prints f32 fields through f64).
fn same(actual: &Value, expected: &Value, path: &str) {
    match (actual, expected) {
        (Value::Number(a), Value::Number(e)) => {
            let (a, e) = (a.as_f64().unwrap(), e.as_f64().unwrap());
            let ulps = (a.to_bits() as i64 - e.to_bits() as i64).abs();
            let f32_ok = a == (a as f32) as f64 && a as f32 == e as f32;
            assert!(a == e || ulps <= 2 || f32_ok, "{path}: {a} != {e}");
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{path}: length");
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                same(x, y, &format!("{path}[{i}]"));
            }
        }
        (Value::Object(a), Value::Object(e)) => {
            let (ka, ke): (Vec<_>, Vec<_>) = (a.keys().collect(), e.keys().collect());
            assert_eq!(ka, ke, "{path}: keys");
            for (k, v) in e {
                same(&a[k], v, &format!("{path}.{k}"));
            }
        }
        _ => assert_eq!(actual, expected, "{path}"),
    }
}
