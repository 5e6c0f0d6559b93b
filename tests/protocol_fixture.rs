//! One protocol, three readers: proto/fixtures/stream.json holds a recorded
//! stream (a hello, ticks with contacts, spawns and removals, a join hello,
//! an ack and an error) from a real `World` through `BinaryEncoder` and
//! `JsonEncoder`, with what the binary frames decode to. This test checks
//! the Rust decoders against it; clients/js/test/fixture.test.js and
//! clients/python/tests/test_fixture.py check the JavaScript and Python ones.
//!
//! Regenerate (after a deliberate format or engine change) with
//! `ARBITER_UPDATE_FIXTURES=1 cargo test --test protocol_fixture`.

use arbiter::physics::scene::{Scene, WorldSpec};
use arbiter::physics::world::World;
use arbiter::physics::{BodyKind, BodySpec, ShapeSpec};
use arbiter::protocol::json::decode_json;
use arbiter::protocol::{
    BinaryDecoder, BinaryEncoder, Body, BodyState, JsonEncoder, ServerMessage, StepMs, WorldInfo,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
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
    Scene {
        world: WorldSpec {
            name: "fixture".into(),
            ..WorldSpec::default()
        },
        bodies,
        cables: Vec::new(),
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
    }
}

fn bodies(w: &World) -> Vec<Body> {
    w.bodies().map(|b| b.to_spec()).collect()
}

fn states(w: &World) -> Vec<BodyState> {
    w.bodies().map(BodyState::of).collect()
}

/// Records the stream: every = 2, 48 steps, a spawn at step 10, a removal
/// at step 20, a body spawned and removed between two frames (steps 29/30),
/// a join hello at step 36, then an ack and an error.
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
    for step in 1..=48u64 {
        match step {
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
        world.step();
        contacts.extend_from_slice(world.contact_events());
        if step % 2 == 0 {
            let st = states(&world);
            frames.push((
                bin.encode_tick(step, world.time(), &st, &contacts, &spawned, &removed),
                js.encode_tick(step, world.time(), &st, &contacts, &spawned, &removed),
            ));
            contacts.clear();
            spawned.clear();
            removed.clear();
        }
        if step == 36 {
            let (wi, bs) = (info(&world), bodies(&world));
            frames.push((
                bin.encode_join_hello(&wi, &bs),
                js.encode_join_hello(&wi, &bs),
            ));
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
    json!({
        "about": "Recorded Arbiter stream (every = 2): each frame as binary (hex) and JSON text, \
                  and what the binary frame decodes to (as the JSON stream would carry it). \
                  Floats of f32 fields are printed as the shortest decimal of the f32 value. \
                  final_binary_states: every body's state after the last frame, from the binary \
                  stream (quantized); final_json_states: the same from the JSON stream (exact). \
                  Generated by tests/protocol_fixture.rs.",
        "frames": out,
        "final_binary_states": final_binary,
        "final_json_states": final_json,
    })
}

/// A JSON client's view: apply hello and ticks in order.
fn mirror(messages: &[ServerMessage]) -> BTreeMap<u64, BodyState> {
    let mut m = BTreeMap::new();
    for msg in messages {
        match msg {
            ServerMessage::Hello { bodies, .. } => {
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
                ..
            } => {
                for b in spawned {
                    if let Some(id) = b.id {
                        m.insert(id, spec_state(id, b));
                    }
                }
                for id in removed {
                    m.remove(id);
                }
                for s in bodies {
                    m.insert(s.id, *s);
                }
            }
            _ => {}
        }
    }
    m
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
    let mut saw = (0, 0, 0, 0);
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
            ..
        } = &msg
        {
            saw.0 += contacts.len();
            saw.1 += spawned.len();
            saw.2 += removed.len();
            saw.3 += bodies.len();
        }
    }
    assert!(
        saw.0 > 0 && saw.1 >= 2 && saw.2 >= 2 && saw.3 > 0,
        "{saw:?}"
    );
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
    let m = mirror(&messages);
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
