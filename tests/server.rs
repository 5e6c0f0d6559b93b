//! The server over real sockets (port 0): REST, the WebSocket stream, limits.

use arbiter::protocol::binary::BinaryDecoder;
use arbiter::protocol::ServerMessage;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

#[path = "common/http.rs"]
mod http_client;
use http_client::{
    ball_world, http, json_req, new_world, next_binary_tick, next_json, pause, start, tick_of, ws,
};

/// Tests that measure rates or load a core run one at a time: the test
/// harness runs tests in parallel on a 2-core machine, and a heavy world in
/// one test would otherwise slow another test's world.
static TIMING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ball_falls_in_the_stream_and_lands_with_a_contact_begin() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let mut s = ws(srv.addr, &id, "").await;
    let hello = next_json(&mut s).await.unwrap();
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["bodies"].as_array().unwrap().len(), 1);
    let (st, ball) = json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/bodies"),
        Some(json!({"shape": {"type": "sphere", "radius": 0.25}, "position": [0, 1.5, 0]})),
    )
    .await;
    assert_eq!(st, 201, "{ball}");
    let ball_id = ball["id"].as_u64().unwrap();
    let mut heights = Vec::new();
    let mut landed = false;
    let mut spawned_seen = false;
    for _ in 0..180 {
        let m = next_json(&mut s).await.expect("ticks keep coming");
        assert_eq!(m["type"], "tick");
        spawned_seen |= m["spawned"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["id"] == ball_id);
        for b in m["bodies"].as_array().unwrap() {
            if b["id"] == ball_id {
                heights.push(b["p"][1].as_f64().unwrap());
            }
        }
        if m["contacts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "begin" && c["b"] == ball_id)
        {
            landed = true;
            break;
        }
    }
    assert!(spawned_seen, "the spawn shows up in a tick");
    assert!(landed, "a contact begin when the ball lands");
    assert!(
        heights.len() > 5 && heights.windows(2).filter(|w| w[1] < w[0]).count() > heights.len() / 2
    );
    assert!(
        *heights.last().unwrap() < 0.4,
        "it fell to the plane: {heights:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ticks_advance_at_the_configured_rate() {
    let _timing = TIMING.lock().await;
    let srv = start().await;
    let id = new_world(
        srv.addr,
        json!({"name": "rate", "tick_hz": 50, "gravity": [0, -9.81, 0]}),
    )
    .await;
    let t0 = Instant::now();
    let a = tick_of(srv.addr, &id).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let b = tick_of(srv.addr, &id).await;
    let dt = t0.elapsed().as_secs_f64();
    let expected = 50.0 * dt;
    let ticks = (b - a) as f64;
    assert!(
        (ticks - expected).abs() < 0.2 * expected,
        "{ticks} ticks in {dt:.2} s at 50 Hz"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_then_step_advances_exactly_n_ticks() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let (st, _) = json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/step"),
        Some(json!({"steps": 3})),
    )
    .await;
    assert_eq!(st, 409, "stepping a running world is a conflict");
    let (st, p) = pause(srv.addr, &id).await;
    assert_eq!(st, 200);
    assert_eq!(p["paused"], true);
    let t0 = p["tick"].as_u64().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        tick_of(srv.addr, &id).await,
        t0,
        "a paused world does not tick"
    );
    let (st, r) = json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/step"),
        Some(json!({"steps": 7})),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(r["tick"].as_u64().unwrap(), t0 + 7);
}

/// A long `POST /step` runs in slices: the world answers other requests
/// between them (run in one go, 3,000 steps of a 3,000-box world held its
/// thread for 100 s, every request to it got 503 after 30 s, the step
/// itself too while it went on, and the list of worlds waited as long); a
/// second `POST /step` meanwhile is refused with 409 `busy`, and resuming
/// the world ends the step where it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_step_lets_the_world_answer_meanwhile() {
    let srv = start().await;
    // 2,000 spheres falling apart with nothing under them: awake for good
    // (a pile falls asleep and makes the steps cheap), each step as dear.
    let all: Vec<Value> = (0..2000)
        .map(|i| {
            json!({"shape": {"type": "sphere", "radius": 0.1},
                   "position": [(i % 20) as f32 * 0.5, (i / 400) as f32 * 0.5, ((i / 20) % 20) as f32 * 0.5]})
        })
        .collect();
    let id = new_world(srv.addr, json!({"scene": {"bodies": all}})).await;
    let (_, p) = pause(srv.addr, &id).await;
    let t0 = p["tick"].as_u64().unwrap();
    let (addr, path) = (srv.addr, format!("/v1/worlds/{id}/step"));
    let long =
        tokio::spawn(
            async move { json_req(addr, "POST", &path, Some(json!({"steps": 10000}))).await },
        );
    // Answered while the steps go on (polled until the step has begun,
    // for a loaded machine).
    let deadline = Instant::now() + Duration::from_secs(20);
    let mid = loop {
        let (st, w) = json_req(srv.addr, "GET", &format!("/v1/worlds/{id}"), None).await;
        assert_eq!(st, 200, "{w}");
        let tick = w["tick"].as_u64().unwrap();
        if tick > t0 || Instant::now() > deadline {
            break tick;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        mid > t0 && mid < t0 + 10000,
        "answered at tick {mid} ({t0})"
    );
    assert!(!long.is_finished(), "the step is still running");
    let (st, busy) = json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/step"),
        Some(json!({"steps": 1})),
    )
    .await;
    assert_eq!((st, busy["error"]["code"].as_str()), (409, Some("busy")));
    let (st, _) = json_req(
        srv.addr,
        "PATCH",
        &format!("/v1/worlds/{id}"),
        Some(json!({"paused": false})),
    )
    .await;
    assert_eq!(st, 200);
    let (st, r) = long.await.unwrap();
    assert_eq!(st, 200, "{r}");
    let end = r["tick"].as_u64().unwrap();
    assert!(end >= mid && end < t0 + 10000, "ended at {end}");
    // A world deleted during a step ends it: the step gets 404 (the request
    // kept the world's thread alive through its steps before).
    pause(srv.addr, &id).await;
    let (addr, path) = (srv.addr, format!("/v1/worlds/{id}/step"));
    let long =
        tokio::spawn(
            async move { json_req(addr, "POST", &path, Some(json!({"steps": 10000}))).await },
        );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (st, _) = http(srv.addr, "DELETE", &format!("/v1/worlds/{id}"), None).await;
    assert_eq!(st, 204);
    let (st, r) = long.await.unwrap();
    assert_eq!(st, 404, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_commands_move_bodies_and_get_acks() {
    let srv = start().await;
    let id = new_world(
        srv.addr,
        json!({"scene": {"world": {"gravity": [0, 0, 0]}, "bodies": [{"shape": {"type": "sphere", "radius": 0.5}}]}}),
    )
    .await;
    let mut s = ws(srv.addr, &id, "").await;
    next_json(&mut s).await.unwrap();
    let cmd = json!({"type": "impulse", "id": 1, "impulse": [523.6, 0, 0], "seq": 7});
    s.send(Message::Text(cmd.to_string().into())).await.unwrap();
    let mut acked = false;
    for _ in 0..60 {
        let m = next_json(&mut s).await.unwrap();
        if m["type"] == "ack" {
            assert_eq!(m["seq"], 7);
            acked = true;
            break;
        }
    }
    assert!(acked);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, b) = json_req(srv.addr, "GET", &format!("/v1/worlds/{id}/bodies/1"), None).await;
    let vx = b["linear_velocity"][0].as_f64().unwrap();
    // A 0.5 m sphere of water weighs 523.6 kg: the impulse gives 1 m/s.
    assert!((vx - 1.0).abs() < 0.01, "vx = {vx}");
    let set = json!({"type": "set_velocity", "id": 1, "linear": [0, 2, 0], "seq": 8});
    s.send(Message::Text(set.to_string().into())).await.unwrap();
    let remove = json!({"type": "remove", "id": 99, "seq": 9});
    s.send(Message::Text(remove.to_string().into()))
        .await
        .unwrap();
    s.send(Message::Text("{\"type\":\"fly\"}".into()))
        .await
        .unwrap();
    let mut seen = (false, false, false);
    for _ in 0..120 {
        let m = next_json(&mut s).await.unwrap();
        if m["type"] == "ack" && m["seq"] == 8 {
            seen.0 = true;
        }
        if m["type"] == "error" && m["seq"] == 9 {
            assert_eq!(m["code"], "not_found");
            seen.1 = true;
        }
        if m["type"] == "error" && m.get("seq").is_none() {
            seen.2 = true;
        }
        if seen == (true, true, true) {
            break;
        }
    }
    assert_eq!(seen, (true, true, true));
    let (_, b) = json_req(srv.addr, "GET", &format!("/v1/worlds/{id}/bodies/1"), None).await;
    assert!(
        (b["linear_velocity"][1].as_f64().unwrap() - 2.0).abs() < 1e-3,
        "{b}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_world_closes_its_streams() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let mut s = ws(srv.addr, &id, "").await;
    next_json(&mut s).await.unwrap();
    let (st, _) = http(srv.addr, "DELETE", &format!("/v1/worlds/{id}"), None).await;
    assert_eq!(st, 204);
    let t = Instant::now();
    let mut closed = false;
    while t.elapsed() < Duration::from_secs(3) {
        match tokio::time::timeout(Duration::from_secs(3), s.next()).await {
            Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) => {
                closed = true;
                break;
            }
            Ok(Some(Ok(_))) => continue,
            Err(_) => break,
        }
    }
    assert!(closed, "the stream closed");
    let (st, _) = http(srv.addr, "GET", &format!("/v1/worlds/{id}"), None).await;
    assert_eq!(st, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_subscribers_all_receive_every_tick() {
    let _timing = TIMING.lock().await;
    let srv = start().await;
    let specs: Vec<Value> = (0..50)
        .map(|i| json!({"shape": {"type": "sphere", "radius": 0.2}, "position": [i as f32 * 0.5, 3, 0]}))
        .collect();
    let id = new_world(srv.addr, ball_world()).await;
    json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/bodies"),
        Some(json!({"bodies": specs})),
    )
    .await;
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let addr = srv.addr;
        let id = id.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = ws(addr, &id, "").await;
            let hello = next_json(&mut s).await.unwrap();
            assert_eq!(hello["type"], "hello");
            let mut ticks = Vec::new();
            while ticks.len() < 60 {
                let m = next_json(&mut s).await.unwrap();
                if m["type"] == "tick" {
                    ticks.push(m["tick"].as_u64().unwrap());
                }
            }
            ticks
        }));
    }
    for t in tasks {
        let ticks = t.await.unwrap();
        for w in ticks.windows(2) {
            assert_eq!(w[1], w[0] + 1, "a subscriber missed a tick");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_never_reads_does_not_slow_the_world() {
    let _timing = TIMING.lock().await;
    let srv = start().await;
    let specs: Vec<Value> = (0..300)
        .map(|i| {
            json!({"shape": {"type": "box", "half_extents": [0.2, 0.2, 0.2]},
                   "position": [(i % 20) as f32 * 0.5, 1 + i / 20, 0]})
        })
        .collect();
    let id = new_world(srv.addr, ball_world()).await;
    json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/bodies"),
        Some(json!({"bodies": specs})),
    )
    .await;
    // Connect and never read.
    let _lazy = ws(srv.addr, &id, "").await;
    let a = tick_of(srv.addr, &id).await;
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let b = tick_of(srv.addr, &id).await;
    let ticks = (b - a) as f64;
    let expected = 60.0 * t0.elapsed().as_secs_f64();
    assert!(
        ticks > 0.8 * expected,
        "{ticks} ticks, expected about {expected}"
    );
    // A reader that does read still gets every tick meanwhile.
    let mut s = ws(srv.addr, &id, "").await;
    next_json(&mut s).await.unwrap();
    let mut last = None;
    for _ in 0..30 {
        let m = next_json(&mut s).await.unwrap();
        let t = m["tick"].as_u64().unwrap();
        if let Some(l) = last {
            assert_eq!(t, l + 1);
        }
        last = Some(t);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_stream_decodes_to_the_world_state() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/bodies"),
        Some(json!({"shape": {"type": "box", "half_extents": [0.3, 0.3, 0.3]}, "position": [0, 4, 0]})),
    )
    .await;
    let mut s = ws(srv.addr, &id, "?format=binary&every=3").await;
    let mut dec = BinaryDecoder::new();
    let mut ticks = Vec::new();
    let mut got_hello = false;
    while ticks.len() < 20 {
        let msg = tokio::time::timeout(Duration::from_secs(5), s.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Binary(b) = msg {
            match dec.decode(&b).unwrap() {
                ServerMessage::Hello { .. } => got_hello = true,
                ServerMessage::Tick { tick, .. } => ticks.push(tick),
                _ => {}
            }
        }
    }
    assert!(got_hello);
    for w in ticks.windows(2) {
        assert_eq!(w[1], w[0] + 3, "every=3 sends every third tick");
    }
    // Pause, catch up with the stream, step to the next frame's tick, and
    // compare the decoded state with the server's at that same tick.
    let (_, b) = pause(srv.addr, &id).await;
    let mut tick = b["tick"].as_u64().unwrap();
    while *ticks.last().unwrap() + 3 <= tick {
        let t = next_binary_tick(&mut s, &mut dec).await;
        ticks.push(t);
    }
    let last = *ticks.last().unwrap();
    if last != tick {
        let n = last + 3 - tick;
        let (_, r) = json_req(
            srv.addr,
            "POST",
            &format!("/v1/worlds/{id}/step"),
            Some(json!({"steps": n})),
        )
        .await;
        tick = r["tick"].as_u64().unwrap();
        let t = next_binary_tick(&mut s, &mut dec).await;
        assert_eq!(t, tick);
    }
    let (_, body) = json_req(srv.addr, "GET", &format!("/v1/worlds/{id}/bodies/2"), None).await;
    let decoded = dec.state(2).unwrap();
    for k in 0..3 {
        let server = body["position"][k].as_f64().unwrap() as f32;
        assert!(
            (decoded.p[k] - server).abs() < 0.002,
            "{:?} vs {body}",
            decoded.p
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proto_openapi_json_is_what_the_server_serves() {
    let generated = arbiter::server::rest::openapi().to_pretty_json().unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("proto/openapi.json");
    if std::env::var("UPDATE_OPENAPI").is_ok() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path)
        .expect("proto/openapi.json exists (UPDATE_OPENAPI=1 writes it)");
    assert_eq!(
        committed, generated,
        "proto/openapi.json is stale: run UPDATE_OPENAPI=1 cargo test --test server"
    );
    let srv = start().await;
    let (st, served) = json_req(srv.addr, "GET", "/openapi.json", None).await;
    assert_eq!(st, 200);
    let committed: Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(served, committed);
    assert!(served["openapi"].as_str().unwrap().starts_with("3.1"));
    assert!(served["paths"]["/v1/worlds/{world}/bodies/{id}/impulse"]["post"].is_object());
    // Every REST route is in it (the cables' were not).
    for (path, methods) in [
        ("/v1/worlds", &["get", "post"][..]),
        ("/v1/worlds/{world}", &["get", "patch", "delete"][..]),
        ("/v1/worlds/{world}/step", &["post"][..]),
        ("/v1/worlds/{world}/snapshot", &["get"][..]),
        ("/v1/worlds/{world}/bodies", &["get", "post"][..]),
        (
            "/v1/worlds/{world}/bodies/{id}",
            &["get", "patch", "delete"][..],
        ),
        ("/v1/worlds/{world}/cables", &["get", "post"][..]),
        ("/v1/worlds/{world}/cables/{id}", &["get", "delete"][..]),
        ("/v1/worlds/{world}/raycast", &["post"][..]),
        ("/metrics", &["get"][..]),
    ] {
        for m in methods {
            assert!(served["paths"][path][m].is_object(), "{m} {path}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contact_events_are_not_lost_when_every_skips_ticks() {
    let srv = start().await;
    let id = new_world(
        srv.addr,
        json!({"scene": {"bodies": [
            {"kind": "static", "shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0}},
            {"shape": {"type": "sphere", "radius": 0.25}, "position": [0, 1.0, 0], "restitution": 0.7}
        ]}}),
    )
    .await;
    // every=25: frames every ~0.4 s; the landing's begin event (and the
    // bounce's end) fall between frames and must still arrive.
    let mut s = ws(srv.addr, &id, "?every=25").await;
    next_json(&mut s).await.unwrap();
    let mut kinds = Vec::new();
    let mut last_tick = None;
    for _ in 0..6 {
        let m = next_json(&mut s).await.unwrap();
        let t = m["tick"].as_u64().unwrap();
        if let Some(l) = last_tick {
            assert_eq!(t, l + 25);
        }
        last_tick = Some(t);
        for c in m["contacts"].as_array().unwrap() {
            kinds.push(c["kind"].as_str().unwrap().to_string());
        }
    }
    assert!(kinds.iter().any(|k| k == "begin"), "{kinds:?}");
    assert!(
        kinds.iter().any(|k| k == "end"),
        "a bounce ends the contact: {kinds:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_sends_close_frames_to_streams() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let mut s = ws(srv.addr, &id, "").await;
    next_json(&mut s).await.unwrap();
    srv.stop.cancel();
    let mut closed = false;
    for _ in 0..200 {
        match tokio::time::timeout(Duration::from_secs(3), s.next()).await {
            Ok(Some(Ok(Message::Close(Some(frame))))) => {
                assert_eq!(u16::from(frame.code), 1001);
                closed = true;
                break;
            }
            Ok(Some(Ok(_))) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
    assert!(closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_is_skipped_forward_with_a_fresh_hello() {
    let _timing = TIMING.lock().await;
    let srv = start().await;
    let bodies: Vec<Value> = (0..400)
        .map(|i| {
            json!({"shape": {"type": "sphere", "radius": 0.1}, "position": [(i % 20) as f32 * 0.3, 0, (i / 20) as f32 * 0.3],
                   "linear_velocity": [0, 0, 1], "linear_damping": 0})
        })
        .collect();
    let id = new_world(
        srv.addr,
        json!({"scene": {"world": {"tick_hz": 500, "gravity": [0, 0, 0]}, "bodies": bodies}}),
    )
    .await;
    let mut s = ws(srv.addr, &id, "").await;
    let first = next_json(&mut s).await.unwrap();
    assert_eq!(first["type"], "hello");
    // Stop reading while the world produces 500 frames a second.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let mut hellos = 0;
    let mut last_tick = 0;
    let mut gap = false;
    for _ in 0..5000 {
        let m = next_json(&mut s).await.unwrap();
        match m["type"].as_str() {
            Some("hello") => {
                hellos += 1;
                break;
            }
            Some("tick") => {
                let t = m["tick"].as_u64().unwrap();
                gap |= last_tick != 0 && t != last_tick + 1;
                last_tick = t;
            }
            _ => {}
        }
    }
    assert!(
        hellos == 1 && !gap,
        "the lagging reader got a fresh hello before any gap (hellos {hellos})"
    );
    // And after the resync it follows the ticks again.
    let a = next_json(&mut s).await.unwrap()["tick"].as_u64().unwrap();
    let b = next_json(&mut s).await.unwrap()["tick"].as_u64().unwrap();
    assert_eq!(b, a + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overrunning_world_drops_time_and_counts_it_without_stalling_the_api() {
    let _timing = TIMING.lock().await;
    let srv = start().await;
    // 2,000 boxes falling into a heap at 1,000 Hz: every step takes longer
    // than its 1 ms period on any machine.
    let bodies: Vec<Value> = (0..2000)
        .map(|i| {
            json!({"shape": {"type": "box", "half_extents": [0.2, 0.2, 0.2]},
                   "position": [(i % 10) as f32 * 0.45, 0.3 + (i / 100) as f32 * 0.45, ((i / 10) % 10) as f32 * 0.45]})
        })
        .collect();
    let mut all = vec![
        json!({"kind": "static", "shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0}}),
    ];
    all.extend(bodies);
    let id = new_world(
        srv.addr,
        json!({"scene": {"world": {"tick_hz": 1000}, "bodies": all}}),
    )
    .await;
    let calm = new_world(srv.addr, ball_world()).await;
    let t0 = Instant::now();
    let a = tick_of(srv.addr, &calm).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // The API answered promptly and the calm world kept its rate meanwhile.
    let b = tick_of(srv.addr, &calm).await;
    let expected = 60.0 * t0.elapsed().as_secs_f64();
    assert!(
        ((b - a) as f64) > 0.8 * expected,
        "calm world: {} ticks, expected {expected}",
        b - a
    );
    let (_, metrics) = http(srv.addr, "GET", "/metrics", None).await;
    let dropped: u64 = metrics
        .lines()
        .find(|l| l.starts_with(&format!("arbiter_dropped_ticks_total{{world=\"{id}\"}}")))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .expect("a dropped-ticks series for the heavy world");
    assert!(dropped > 0, "the heavy world dropped time: {metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cables_over_rest_and_in_both_stream_formats() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let cables = format!("/v1/worlds/{id}/cables");
    let (st, c) = json_req(
        srv.addr,
        "POST",
        &cables,
        Some(json!({"from": [-1, 3, 0], "to": [1, 3, 0], "segments": 10, "pinned": [0]})),
    )
    .await;
    assert_eq!(st, 201, "{c}");
    let cid = c["id"].as_u64().unwrap();
    assert_eq!(cid, 2, "cables count with the bodies");
    assert_eq!(c["points"].as_array().unwrap().len(), 11);
    let (st, bad) = json_req(
        srv.addr,
        "POST",
        &cables,
        Some(json!({"from": [0, 0, 0], "to": [0, 0, 0]})),
    )
    .await;
    assert_eq!(st, 422, "{bad}");
    let (st, list) = json_req(srv.addr, "GET", &cables, None).await;
    assert_eq!(st, 200);
    assert_eq!(list.as_array().unwrap().len(), 1);
    // JSON: the hello and every tick carry the cable, and it falls.
    let mut s = ws(srv.addr, &id, "").await;
    let hello = next_json(&mut s).await.unwrap();
    assert_eq!(hello["cables"][0]["id"], cid);
    let mut ys = Vec::new();
    for _ in 0..30 {
        let m = next_json(&mut s).await.unwrap();
        let pts = m["cables"][0]["points"].as_array().unwrap();
        assert_eq!(pts.len(), 11);
        assert_eq!(pts[0], json!([-1.0, 3.0, 0.0]), "the pinned end stays");
        ys.push(pts[10][1].as_f64().unwrap());
    }
    assert!(ys.last().unwrap() < &2.9, "the free end falls: {ys:?}");
    // Binary: the same cable in the tick's cable section.
    let mut b = ws(srv.addr, &id, "?format=binary").await;
    let mut dec = BinaryDecoder::new();
    let mut seen = false;
    for _ in 0..10 {
        if let Message::Binary(f) = b.next().await.unwrap().unwrap() {
            if let ServerMessage::Tick { cables, .. } = dec.decode(&f).unwrap() {
                assert_eq!(cables[0].id, cid);
                assert_eq!(cables[0].points.len(), 11);
                seen = true;
                break;
            }
        }
    }
    assert!(seen);
    let (st, _) = http(srv.addr, "DELETE", &format!("{cables}/{cid}"), None).await;
    assert_eq!(st, 204);
    let (st, _) = http(srv.addr, "GET", &format!("{cables}/{cid}"), None).await;
    assert_eq!(st, 404);
}

/// A stream tick lists only the cables that may have moved since the
/// client's last frame: a cable asleep on the floor is left out, a new one
/// comes in, a client that joins gets every cable in its first tick (a
/// binary hello has none), and a removed cable's id comes in `removed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_ticks_carry_the_cables_that_moved_and_every_cable_after_a_join() {
    let srv = start().await;
    let mut world = ball_world();
    world["scene"]["cables"] = json!([
        {"from": [-1, 0.02, 0], "to": [1, 0.02, 0], "segments": 10}
    ]);
    let id = new_world(srv.addr, world).await;
    assert_eq!(pause(srv.addr, &id).await.0, 200);
    let cables = format!("/v1/worlds/{id}/cables");
    let (_, list) = json_req(srv.addr, "GET", &cables, None).await;
    let resting = list[0]["id"].as_u64().unwrap();
    let step = |n: u32| {
        let path = format!("/v1/worlds/{id}/step");
        async move {
            let (st, r) = json_req(srv.addr, "POST", &path, Some(json!({"steps": n}))).await;
            assert_eq!(st, 200, "{r}");
        }
    };
    let ids = |m: &Value| -> Vec<u64> {
        m["cables"]
            .as_array()
            .map(|c| c.iter().map(|c| c["id"].as_u64().unwrap()).collect())
            .unwrap_or_default()
    };
    let mut json_s = ws(srv.addr, &id, "").await;
    let hello = next_json(&mut json_s).await.unwrap();
    assert_eq!(ids(&hello), [resting]);
    // The cable on the floor comes to rest and sleeps: a tick carries it
    // while it is awake at the step's start or end, and no tick after.
    let (mut was_asleep, mut quiet) = (false, 0);
    for _ in 0..300 {
        step(1).await;
        let m = next_json(&mut json_s).await.unwrap();
        assert_eq!(m["type"], "tick");
        let (_, c) = json_req(srv.addr, "GET", &format!("{cables}/{resting}"), None).await;
        let asleep = c["sleeping"] == true;
        if was_asleep && asleep {
            assert!(
                m.get("cables").is_none(),
                "a sleeping cable is not sent: {m}"
            );
            quiet += 1;
            if quiet == 5 {
                break;
            }
        } else {
            assert_eq!(ids(&m), [resting], "a cable awake in the step is sent");
        }
        was_asleep = asleep;
    }
    assert_eq!(quiet, 5, "the cable on the floor sleeps within 5 s");
    // A new cable, falling: ticks carry it alone.
    let (st, c) = json_req(
        srv.addr,
        "POST",
        &cables,
        Some(json!({"from": [-1, 1, 0.5], "to": [1, 1, 0.5], "segments": 10})),
    )
    .await;
    assert_eq!(st, 201, "{c}");
    let falling = c["id"].as_u64().unwrap();
    // A binary client joins: its first tick has both cables (its hello
    // none); the JSON group's tick has the moving one only.
    let mut bin_s = ws(srv.addr, &id, "?format=binary").await;
    let mut dec = BinaryDecoder::new();
    loop {
        let Message::Binary(f) = bin_s.next().await.unwrap().unwrap() else {
            continue;
        };
        if let ServerMessage::Hello { .. } = dec.decode(&f).unwrap() {
            break;
        }
    }
    step(1).await;
    let m = next_json(&mut json_s).await.unwrap();
    assert_eq!(
        ids(&m),
        [falling],
        "the JSON tick lists the moving cable only"
    );
    let bin_tick = |dec: &mut BinaryDecoder, f: &[u8]| match dec.decode(f).unwrap() {
        ServerMessage::Tick {
            cables, removed, ..
        } => (cables.iter().map(|c| c.id).collect::<Vec<_>>(), removed),
        other => panic!("not a tick: {other:?}"),
    };
    let Message::Binary(f) = bin_s.next().await.unwrap().unwrap() else {
        panic!("a binary frame")
    };
    let (bin_ids, _) = bin_tick(&mut dec, &f);
    assert_eq!(
        bin_ids,
        [resting, falling],
        "a new client's first tick has every cable"
    );
    step(1).await;
    let Message::Binary(f) = bin_s.next().await.unwrap().unwrap() else {
        panic!("a binary frame")
    };
    assert_eq!(bin_tick(&mut dec, &f).0, [falling], "then only what moves");
    let _ = next_json(&mut json_s).await.unwrap();
    // Removing the falling cable: both streams list its id as removed.
    let (st, _) = http(srv.addr, "DELETE", &format!("{cables}/{falling}"), None).await;
    assert_eq!(st, 204);
    step(1).await;
    let m = next_json(&mut json_s).await.unwrap();
    assert_eq!(m["removed"], json!([falling]), "{m}");
    assert!(m.get("cables").is_none(), "{m}");
    let Message::Binary(f) = bin_s.next().await.unwrap().unwrap() else {
        panic!("a binary frame")
    };
    assert_eq!(bin_tick(&mut dec, &f), (vec![], vec![falling]));
}
