//! The server's answers to bad or odd input over real sockets (port 0):
//! every REST error path and its code, bodies too large or too slow,
//! stream messages past the size limit, and a spawn's reply.

use arbiter::server::Limits;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

#[path = "common/http.rs"]
mod http_client;
use http_client::{
    ball_world, http, json_req, new_world, next_json, start, start_with, tick_of, ws,
};

/// A spawn's reply is the body as `GET` gives it, to the byte: its f32
/// numbers as written (it had its keys sorted and its numbers widened,
/// `"radius":0.20000000298023224`), single and in a batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_replies_with_the_body_as_get_gives_it() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let spec = r#"{"kind":"static","shape":{"type":"sphere","radius":0.2},"position":[3,0.1,0],"friction":0.3}"#;
    let (st, posted) = http(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/bodies"),
        Some(spec),
    )
    .await;
    assert_eq!(st, 201, "{posted}");
    assert!(
        posted.contains(r#""radius":0.2}"#) && posted.contains(r#""friction":0.3,"#),
        "{posted}"
    );
    let body: Value = serde_json::from_str(&posted).unwrap();
    let url = format!("/v1/worlds/{id}/bodies/{}", body["id"]);
    let (_, got) = http(srv.addr, "GET", &url, None).await;
    assert_eq!(posted, got);
    let batch = format!(r#"{{"bodies":[{spec}]}}"#);
    let (st, posted) = http(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/bodies"),
        Some(&batch),
    )
    .await;
    assert_eq!(st, 201, "{posted}");
    let list: Value = serde_json::from_str(&posted).unwrap();
    let url = format!("/v1/worlds/{id}/bodies/{}", list["bodies"][0]["id"]);
    let (_, got) = http(srv.addr, "GET", &url, None).await;
    assert_eq!(posted, format!(r#"{{"bodies":[{got}]}}"#));
}

/// A command message past the request size limit (1 MiB) closes the
/// stream with 1009 "message too big" (a 17 MB one dropped the connection
/// without a close frame); a second subscriber streams on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_past_the_size_limit_closes_the_stream_with_1009() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let mut big = ws(srv.addr, &id, "").await;
    let mut other = ws(srv.addr, &id, "").await;
    next_json(&mut big).await.unwrap();
    next_json(&mut other).await.unwrap();
    let label = "x".repeat(2 << 20);
    let cmd = json!({"type": "spawn", "body": {"shape": {"type": "sphere", "radius": 1}, "label": label}});
    // (The server may close before the client has written it all.)
    let _ = big.send(Message::Text(cmd.to_string().into())).await;
    let mut code = None;
    for _ in 0..600 {
        match tokio::time::timeout(Duration::from_secs(5), big.next()).await {
            Ok(Some(Ok(Message::Close(f)))) => {
                code = f.map(|f| u16::from(f.code));
                break;
            }
            Ok(Some(Ok(_))) => continue,
            other => panic!("no close frame: {other:?}"),
        }
    }
    assert_eq!(code, Some(1009));
    let before = tick_of(srv.addr, &id).await;
    let mut ticks = 0;
    while ticks < 5 {
        let m = next_json(&mut other).await.unwrap();
        ticks += (m["type"] == "tick") as u32;
    }
    assert!(tick_of(srv.addr, &id).await > before);
}

/// A request whose `Content-Length` is past the size limit is refused at
/// once, whatever comes after (a request declaring 1 GB and sending `{`
/// hung for good), and one whose body does not arrive within the body
/// timeout gets 408; both in the error shape, and the server serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_come_is_not_waited_for() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let srv = start_with(Limits {
        body_timeout: std::time::Duration::from_millis(500),
        ..Limits::default()
    })
    .await;
    let addr = srv.addr;
    let send = |length: u64, body: &'static str| async move {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "POST /v1/worlds HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n{body}"
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 4096];
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("an answer, not a wait")
            .unwrap();
        String::from_utf8_lossy(&buf[..n]).to_string()
    };
    // (Waiting for the body would have ended in 408 after the timeout.)
    let huge = send(999_999_999, "{").await;
    assert!(huge.starts_with("HTTP/1.1 413"), "{huge}");
    assert!(huge.contains(r#""code":"payload_too_large""#), "{huge}");
    let slow = send(100, "{").await;
    assert!(slow.starts_with("HTTP/1.1 408"), "{slow}");
    assert!(slow.contains(r#""code":"request_timeout""#), "{slow}");
    let (st, _) = json_req(srv.addr, "POST", "/v1/worlds", Some(serde_json::json!({}))).await;
    assert_eq!(st, 201);
}

/// A connection that never finishes its request line and headers is closed
/// after the header timeout (it was kept for good: a review held 20,000 of
/// them open, the process's file limit), and one that half-closes after its
/// request (`shutdown(SHUT_WR)`, as `nc -N` does) still gets its answer
/// (the request was applied and the connection closed unanswered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_headers_are_timed_out_and_a_half_close_is_answered() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let srv = start_with(Limits {
        header_timeout: std::time::Duration::from_millis(500),
        ..Limits::default()
    })
    .await;
    for partial in ["", "GET /healthz HTTP/1.1\r\nHost: te"] {
        let mut s = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
        s.write_all(partial.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 4096];
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("closed, not kept");
        // Closed: end of stream (or a reset), perhaps after a 408.
        if let Ok(n) = read {
            let text = String::from_utf8_lossy(&buf[..n]);
            assert!(
                n == 0 || text.starts_with("HTTP/1.1 408"),
                "{partial:?}: {text}"
            );
        }
    }
    let answer = half_closed_exchange(
        srv.addr,
        b"POST /v1/worlds HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let (st, _) = json_req(srv.addr, "GET", "/healthz", None).await;
    assert_eq!(st, 200);
}

/// `request` sent raw over TCP, the connection half-closed after it, and
/// all that comes back until the server closes it (within 10 s).
async fn half_closed_exchange(addr: std::net::SocketAddr, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    s.shutdown().await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        s.read_to_end(&mut answer),
    )
    .await
    .expect("an answer")
    .unwrap();
    String::from_utf8(answer).unwrap()
}

/// Requests hyper cannot parse get its own answer (400, 414, 431), which
/// had an empty body: now the error shape, its type and length right; the
/// server goes on answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_are_not_http_get_the_error_shape() {
    let srv = start().await;
    let many: String = (0..200).map(|i| format!("X-H{i}: 1\r\n")).collect();
    let cases = [
        ("GARBAGE\r\n\r\n".to_string(), 400, "malformed_request"),
        (
            "POST /v1/worlds HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n".into(),
            400,
            "malformed_request",
        ),
        // A chunk size that is not hexadecimal (it was 400 `bad_request`,
        // a code the error table does not list).
        (
            "POST /v1/worlds HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
                .into(),
            400,
            "malformed_request",
        ),
        (
            format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(100_000)),
            414,
            "uri_too_long",
        ),
        (
            format!("GET /v1/worlds HTTP/1.1\r\nHost: t\r\n{many}\r\n"),
            431,
            "headers_too_large",
        ),
    ];
    for (request, status, code) in cases {
        let answer = half_closed_exchange(srv.addr, request.as_bytes()).await;
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head");
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{answer}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], code, "{body}");
        assert!(v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    let (st, _) = json_req(srv.addr, "GET", "/healthz", None).await;
    assert_eq!(st, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_path_returns_its_code() {
    let srv = start_with(Limits {
        max_request_bytes: 4096,
        ..Limits::default()
    })
    .await;
    let id = new_world(srv.addr, ball_world()).await;
    let bodies = format!("/v1/worlds/{id}/bodies");
    let big = format!("{{\"name\":\"{}\"}}", "x".repeat(10_000));
    let sphere = |extra: &str| format!("{{\"shape\":{{\"type\":\"sphere\",\"radius\":1}}{extra}}}");
    let hull = r#"{"shape":{"type":"convex_hull","points":[[0,0,0],[1,0,0],[0,1,0],[1,1,0]]}}"#;
    let ray = r#"{"origin":[0,1,0],"direction":[0,0,0],"max_distance":5}"#;
    let cases: Vec<(&str, String, Option<String>, u16, &str)> = vec![
        (
            "POST",
            "/v1/worlds".into(),
            Some("{not json".into()),
            400,
            "malformed_json",
        ),
        (
            "POST",
            "/v1/worlds".into(),
            Some(r#"{"nmae":"x"}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            "/v1/worlds".into(),
            Some(big),
            413,
            "payload_too_large",
        ),
        (
            "POST",
            "/v1/worlds".into(),
            Some(r#"{"tick_hz":0}"#.into()),
            422,
            "invalid_value",
        ),
        // Valid JSON whose number no float holds (serde calls it a syntax
        // error; it answered 400 malformed_json).
        (
            "POST",
            "/v1/worlds".into(),
            Some(r#"{"tick_hz":1e999}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "PATCH",
            format!("/v1/worlds/{id}"),
            Some(r#"{"gravity":[0,-1e999,0]}"#.into()),
            422,
            "invalid_value",
        ),
        ("GET", "/v1/worlds/nope".into(), None, 404, "not_found"),
        (
            "GET",
            "/v1/worlds/nope/bodies/1".into(),
            None,
            404,
            "not_found",
        ),
        ("GET", format!("{bodies}/999"), None, 404, "not_found"),
        ("GET", format!("{bodies}/abc"), None, 404, "not_found"),
        ("DELETE", format!("{bodies}/999"), None, 404, "not_found"),
        (
            "POST",
            bodies.clone(),
            Some(r#"{"shape":{"type":"sphere","radius":-1}}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            bodies.clone(),
            Some(sphere(r#","position":[0,1e39,0]"#)),
            422,
            "invalid_value",
        ),
        (
            "POST",
            bodies.clone(),
            Some(sphere(r#","mass":-2"#)),
            422,
            "invalid_value",
        ),
        (
            "POST",
            bodies.clone(),
            Some(r#"{"shape":{"type":"plane","normal":[0,1,0]}}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            bodies.clone(),
            Some(hull.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            bodies.clone(),
            Some(r#"{"shape":{"type":"blob"}}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            format!("{bodies}/1/impulse"),
            Some(r#"{"impulse":[1,0,0]}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            format!("{bodies}/999/impulse"),
            Some(r#"{"impulse":[1,0,0]}"#.into()),
            404,
            "not_found",
        ),
        (
            "PATCH",
            format!("/v1/worlds/{id}"),
            Some(r#"{"tick_hz":5000}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            format!("/v1/worlds/{id}/step"),
            Some(r#"{"steps":1}"#.into()),
            409,
            "not_paused",
        ),
        (
            "POST",
            format!("/v1/worlds/{id}/raycast"),
            Some(ray.into()),
            422,
            "invalid_value",
        ),
        ("GET", "/nowhere".into(), None, 404, "not_found"),
        (
            "GET",
            format!("/v1/worlds/{id}/stream?format=xml"),
            None,
            400,
            "unsupported_format",
        ),
        (
            "GET",
            format!("/v1/worlds/{id}/stream"),
            None,
            400,
            "websocket_required",
        ),
        (
            "GET",
            format!("/v1/worlds/{id}/stream?every=0"),
            None,
            422,
            "invalid_value",
        ),
        // Query parameters that are not numbers, out of their type's range
        // or given twice (axum answered these in plain text).
        (
            "GET",
            format!("/v1/worlds/{id}/stream?every=-1"),
            None,
            422,
            "invalid_value",
        ),
        (
            "GET",
            format!("/v1/worlds/{id}/stream?every=18446744073709551616"),
            None,
            422,
            "invalid_value",
        ),
        (
            "GET",
            format!("/v1/worlds/{id}/stream?format=json&format=binary"),
            None,
            422,
            "invalid_value",
        ),
        // A path segment that is not UTF-8 names no world.
        ("GET", "/v1/worlds/%ff%fe".into(), None, 404, "not_found"),
        (
            "GET",
            "/v1/worlds/%ff/stream".into(),
            None,
            404,
            "not_found",
        ),
        (
            "DELETE",
            format!("/v1/worlds/{id}/bodies/%ff"),
            None,
            404,
            "not_found",
        ),
        // A struct read from an array of its fields in order.
        (
            "POST",
            "/v1/worlds".into(),
            Some(r#"["x",30,[0,1,0]]"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            "/v1/worlds".into(),
            Some("[]".into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            "/v1/worlds".into(),
            Some(r#"{"scene":[]}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            "/v1/worlds".into(),
            Some(r#"{"scene":{"world":["x",30,[0,1,0]]}}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            bodies.clone(),
            Some(r#"{"bodies":[[null,"dynamic",{"type":"sphere","radius":1}]]}"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            bodies.clone(),
            Some(r#"[null,"dynamic",{"type":"sphere","radius":1}]"#.into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            format!("/v1/worlds/{id}/cables"),
            Some("[null,[0,5,0],[2,5,0]]".into()),
            422,
            "invalid_value",
        ),
        (
            "POST",
            format!("/v1/worlds/{id}/raycast"),
            Some("[[0,5,0],[0,-1,0],10]".into()),
            422,
            "invalid_value",
        ),
        // 100,000 segments wound into a millimetre: 5·10⁹ overlapping
        // pairs (the process ran out of memory at its first step).
        (
            "POST",
            format!("/v1/worlds/{id}/cables"),
            Some(r#"{"from":[0,5,0],"to":[0,5,0.001],"segments":100000}"#.into()),
            409,
            "limit_reached",
        ),
        // Points all at one place.
        (
            "POST",
            format!("/v1/worlds/{id}/cables"),
            Some(
                r#"{"from":[0,1,0],"to":[1,1,0],"segments":2,"points":[[0,1,0],[0,1,0],[0,1,0]]}"#
                    .into(),
            ),
            422,
            "invalid_value",
        ),
    ];
    for (method, path, body, status, code) in cases {
        let (st, text) = http(srv.addr, method, &path, body.as_deref()).await;
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(st, status, "{method} {path}: {text}");
        assert_eq!(v["error"]["code"], code, "{method} {path}: {text}");
        assert!(v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    // The world kept ticking through all of it, and nothing was lost.
    let a = tick_of(srv.addr, &id).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_, w) = json_req(srv.addr, "GET", &format!("/v1/worlds/{id}"), None).await;
    assert!(w["tick"].as_u64().unwrap() > a);
    assert_eq!(w["body_count"], 1);
    let (st, hit) = json_req(
        srv.addr,
        "POST",
        &format!("/v1/worlds/{id}/raycast"),
        Some(json!({"origin": [0, 5, 0], "direction": [0, -1, 0], "max_distance": 10})),
    )
    .await;
    assert_eq!(st, 200);
    assert!(
        (hit["hit"]["distance"].as_f64().unwrap() - 5.0).abs() < 1e-4,
        "{hit}"
    );
}

/// A key given twice in one object is refused with 422 wherever it is,
/// as the command line refuses it in a scene file: a scene given to REST
/// kept the last `name` and made a world, where `simulate` refused it.
/// Nothing is made or changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_given_twice_is_refused() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let (_, before) = http(srv.addr, "GET", "/v1/worlds", None).await;
    let (_, bodies_before) = http(srv.addr, "GET", &format!("/v1/worlds/{id}/bodies"), None).await;
    for (path, body) in [
        (
            "/v1/worlds".to_string(),
            r#"{"scene":{"world":{"name":"a","name":"b"}}}"#,
        ),
        (
            "/v1/worlds".to_string(),
            r#"{"name":"a","tick_hz":30,"name":"b"}"#,
        ),
        (
            format!("/v1/worlds/{id}/bodies"),
            r#"{"shape":{"type":"sphere","radius":1,"radius":2},"position":[9,1,0]}"#,
        ),
        (
            format!("/v1/worlds/{id}/bodies"),
            r#"{"bodies":[{"shape":{"type":"sphere","radius":1},"position":[9,1,0],"position":[0,5,0]}]}"#,
        ),
    ] {
        let (st, text) = http(srv.addr, "POST", &path, Some(body)).await;
        assert_eq!(st, 422, "{body}: {text}");
        let err: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(err["error"]["code"], "invalid_value", "{text}");
        assert!(text.contains("given twice"), "{text}");
    }
    let (_, after) = http(srv.addr, "GET", "/v1/worlds", None).await;
    let names = |t: &str| {
        serde_json::from_str::<Value>(t)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&before), names(&after));
    let (_, bodies_after) = http(srv.addr, "GET", &format!("/v1/worlds/{id}/bodies"), None).await;
    let count = |t: &str| {
        serde_json::from_str::<Value>(t)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(count(&bodies_before), count(&bodies_after));
}

/// The reply (`ack` or `error`) to the command sent with `seq`.
async fn reply_to(s: &mut http_client::Ws, seq: u64) -> Value {
    for _ in 0..600 {
        let m = next_json(s).await.expect("a reply");
        if (m["type"] == "ack" || m["type"] == "error") && m["seq"] == seq {
            return m;
        }
    }
    panic!("no reply to {seq}");
}

/// The stream's commands and the REST requests doing the same thing go
/// through one check (the world's): the same input is accepted by both or
/// refused by both, with the same code and message. Before, the stream
/// acked a velocity of 10⁵ m/s (clamped to 10⁴) that REST refused, said
/// "velocities must be finite" of an angular velocity of 10⁷, refused an
/// impulse of 5·10⁶ N·s "must be finite" that REST took, and took an
/// impulse at a point 10⁶ m away that REST refused. An impulse past the
/// speed caps is applied and the body slowed to them, on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_and_rest_apply_one_rule_to_the_same_command() {
    let srv = start().await;
    let id = new_world(
        srv.addr,
        json!({"scene": {"world": {"gravity": [0, 0, 0]}, "bodies": [
            {"shape": {"type": "sphere", "radius": 0.5}, "position": [0, 5, 0]}
        ]}}),
    )
    .await;
    // (Paused: each command is applied at once, and nothing else moves.)
    let (st, _) = http_client::pause(srv.addr, &id).await;
    assert_eq!(st, 200);
    let mut s = ws(srv.addr, &id, "").await;
    assert_eq!(next_json(&mut s).await.unwrap()["type"], "hello");
    let body = format!("/v1/worlds/{id}/bodies/1");
    let impulse = format!("/v1/worlds/{id}/bodies/1/impulse");
    let spawn = format!("/v1/worlds/{id}/bodies");
    let heavy_cone = json!({"shape": {"type": "cone", "half_height": 1, "radius": 1}, "mass": 2e9});
    // (stream command, REST method, path and body, accepted)
    let cases: Vec<(Value, &str, String, Value, bool)> = vec![
        (
            json!({"type": "set_velocity", "id": 1, "linear": [1e5, 0, 0]}),
            "PATCH",
            body.clone(),
            json!({"linear_velocity": [1e5, 0, 0]}),
            false,
        ),
        (
            json!({"type": "set_velocity", "id": 1, "angular": [1e5, 0, 0]}),
            "PATCH",
            body.clone(),
            json!({"angular_velocity": [1e5, 0, 0]}),
            false,
        ),
        (
            json!({"type": "set_velocity", "id": 1, "angular": [1e7, 0, 0]}),
            "PATCH",
            body.clone(),
            json!({"angular_velocity": [1e7, 0, 0]}),
            false,
        ),
        (
            json!({"type": "set_velocity", "id": 1, "linear": [1e4, 0, 0], "angular": [0, -1e4, 0]}),
            "PATCH",
            body.clone(),
            json!({"linear_velocity": [1e4, 0, 0], "angular_velocity": [0, -1e4, 0]}),
            true,
        ),
        // Within the limit on each axis, past it overall: slowed to it at
        // once (the check below).
        (
            json!({"type": "set_velocity", "id": 1, "linear": [1e4, -1e4, 0]}),
            "PATCH",
            body.clone(),
            json!({"linear_velocity": [1e4, -1e4, 0]}),
            true,
        ),
        (
            json!({"type": "set_velocity", "id": 99, "linear": [1, 0, 0]}),
            "PATCH",
            format!("/v1/worlds/{id}/bodies/99"),
            json!({"linear_velocity": [1, 0, 0]}),
            false,
        ),
        (
            json!({"type": "impulse", "id": 1, "impulse": [1e9, 0, 0]}),
            "POST",
            impulse.clone(),
            json!({"impulse": [1e9, 0, 0]}),
            true,
        ),
        (
            json!({"type": "impulse", "id": 1, "impulse": [-5e6, 0, 0]}),
            "POST",
            impulse.clone(),
            json!({"impulse": [-5e6, 0, 0]}),
            true,
        ),
        (
            json!({"type": "impulse", "id": 1, "impulse": [2e9, 0, 0]}),
            "POST",
            impulse.clone(),
            json!({"impulse": [2e9, 0, 0]}),
            false,
        ),
        (
            json!({"type": "impulse", "id": 1, "impulse": [1, 0, 0], "point": [1e6, 0, 0]}),
            "POST",
            impulse.clone(),
            json!({"impulse": [1, 0, 0], "point": [1e6, 0, 0]}),
            false,
        ),
        (
            json!({"type": "impulse", "id": 1, "impulse": [0, 0, 1e9], "point": [1e5, 5, 0]}),
            "POST",
            impulse.clone(),
            json!({"impulse": [0, 0, 1e9], "point": [1e5, 5, 0]}),
            true,
        ),
        (
            json!({"type": "spawn", "body": heavy_cone}),
            "POST",
            spawn.clone(),
            heavy_cone.clone(),
            false,
        ),
        (
            json!({"type": "remove", "id": 99}),
            "DELETE",
            format!("{spawn}/99"),
            Value::Null,
            false,
        ),
    ];
    for (seq, (mut cmd, method, path, req, accepted)) in (1u64..).zip(cases) {
        cmd["seq"] = json!(seq);
        s.send(Message::Text(cmd.to_string().into())).await.unwrap();
        let streamed = reply_to(&mut s, seq).await;
        let req = (!req.is_null()).then(|| req.to_string());
        let (st, text) = http(srv.addr, method, &path, req.as_deref()).await;
        let what = format!("{cmd} / {method} {path} {req:?}: {streamed} / {st} {text}");
        if accepted {
            assert_eq!(streamed["type"], "ack", "{what}");
            assert!((200..300).contains(&st), "{what}");
        } else {
            let rest: Value = serde_json::from_str(&text).unwrap();
            assert!((400..500).contains(&st), "{what}");
            assert_eq!(streamed["type"], "error", "{what}");
            assert_eq!(streamed["code"], rest["error"]["code"], "{what}");
            assert_eq!(streamed["message"], rest["error"]["message"], "{what}");
            let message = streamed["message"].as_str().unwrap();
            assert!(!message.contains("finite"), "{what}");
        }
        // Never past the speed caps, whatever was applied.
        let (_, b) = json_req(srv.addr, "GET", &body, None).await;
        let length = |v: &Value| {
            let v: Vec<f64> = serde_json::from_value(v.clone()).unwrap();
            v.iter().map(|x| x * x).sum::<f64>().sqrt()
        };
        assert!(
            length(&b["linear_velocity"]) <= 1.0e4 * 1.000_01,
            "{what}: {b}"
        );
        assert!(
            length(&b["angular_velocity"]) <= 1.0e4 * 1.000_01,
            "{what}: {b}"
        );
    }
    // The refusals name the field and the limit.
    let (_, refused) = json_req(
        srv.addr,
        "PATCH",
        &body,
        Some(json!({"angular_velocity": [1e7, 0, 0]})),
    )
    .await;
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("angular_velocity is out of range (|x| ≤ 10000)"),
        "{message}"
    );
    // The impulse of 10⁹ N·s at 10⁵ m left the body at the caps.
    let (_, b) = json_req(srv.addr, "GET", &body, None).await;
    let w: Vec<f64> = serde_json::from_value(b["angular_velocity"].clone()).unwrap();
    let spin = w.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((spin - 1.0e4).abs() < 1.0, "{b}");
}

/// A command the server cannot read (a field of the wrong type, an
/// unknown type) is answered with its `seq` when the message is a JSON
/// object holding an integer `seq` (it came without); without when it is
/// not, and a binary message carrying a JSON command keeps its seq too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_server_cannot_read_keeps_a_readable_seq() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let (st, _) = http_client::pause(srv.addr, &id).await;
    assert_eq!(st, 200);
    let mut s = ws(srv.addr, &id, "").await;
    assert_eq!(next_json(&mut s).await.unwrap()["type"], "hello");
    let cases: Vec<(&str, Option<u64>)> = vec![
        (
            r#"{"type":"impulse","id":"two","impulse":[0,1,0],"seq":10}"#,
            Some(10),
        ),
        (r#"{"type":"bogus","seq":9}"#, Some(9)),
        (r#"{"seq":8}"#, Some(8)),
        (r#"{"type":"remove","id":1,"seq":7,"extra":true}"#, Some(7)),
        (r#"{"type":"remove","seq":6}"#, Some(6)),
        (r#"{"type":"bogus","seq":"9"}"#, None),
        (r#"{"type":"bogus","seq":-1}"#, None),
        (r#"{"type":"bogus","seq":1.5}"#, None),
        (r#"{"type":"bogus"}"#, None),
        (r#"[{"seq":3}]"#, None),
        (r#"{"type":"bogus","seq":5"#, None),
        ("not json", None),
    ];
    for (text, seq) in cases {
        s.send(Message::Text(text.into())).await.unwrap();
        let m = next_json(&mut s).await.expect("a reply");
        assert_eq!(m["type"], "error", "{text}: {m}");
        assert_eq!(m["code"], "invalid_command", "{text}: {m}");
        assert_eq!(m.get("seq").and_then(Value::as_u64), seq, "{text}: {m}");
    }
    let binary = br#"{"type":"remove","id":1,"seq":4}"#.to_vec();
    s.send(Message::Binary(binary.into())).await.unwrap();
    let m = next_json(&mut s).await.expect("a reply");
    assert_eq!(m["code"], "unsupported_message", "{m}");
    assert_eq!(m["seq"], 4, "{m}");
    s.send(Message::Binary(vec![0x02, 0x03].into()))
        .await
        .unwrap();
    let m = next_json(&mut s).await.expect("a reply");
    assert_eq!(m["code"], "unsupported_message", "{m}");
    assert!(m.get("seq").is_none(), "{m}");
    // Still served: a readable command is acked.
    let ok = r#"{"type":"set_velocity","id":1,"seq":3}"#;
    s.send(Message::Text(ok.into())).await.unwrap();
    let m = next_json(&mut s).await.expect("a reply");
    assert_eq!(m, json!({"type": "ack", "seq": 3}));
}

/// A box of 10⁴ m half extents at the default density (8·10¹⁵ kg, moments
/// of 5·10²³ kg·m²), inside the sizes a shape may have, is a body (it was
/// refused, "the body's inertia is singular"); a hull of 0.1 mm edges
/// (10⁻⁹ kg), whose moments single precision cannot invert, is refused
/// with 422 saying so, with its moments and the least mass its shape
/// takes, and the same over the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_whose_inertia_is_out_of_range_is_told_the_masses_its_shape_takes() {
    let srv = start().await;
    let id = new_world(srv.addr, ball_world()).await;
    let spawn = format!("/v1/worlds/{id}/bodies");
    let big = json!({"shape": {"type": "box", "half_extents": [1e4, 1e4, 1e4]}, "position": [0, 1.5e4, 0]});
    let (st, b) = json_req(srv.addr, "POST", &spawn, Some(big)).await;
    assert_eq!(st, 201, "{b}");
    let e = 1e-4;
    let cube: Vec<[f64; 3]> = (0..8)
        .map(|k| {
            let bit = |i: u32| if k & (1 << i) != 0 { e } else { 0.0 };
            [bit(0), bit(1), bit(2)]
        })
        .collect();
    let tiny = json!({"shape": {"type": "convex_hull", "points": cube}, "position": [5, 1, 0]});
    let (st, err) = json_req(srv.addr, "POST", &spawn, Some(tiny.clone())).await;
    assert_eq!(st, 422, "{err}");
    assert_eq!(err["error"]["code"], "invalid_value");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message
            .starts_with("the body's inertia is out of the engine's range: a mass of 1.000e-9 kg")
            && message.contains("moments of inertia of [")
            && message.contains("this shape takes a mass of at least ")
            && !message.contains("singular"),
        "{message}"
    );
    let mut s = ws(srv.addr, &id, "").await;
    assert_eq!(next_json(&mut s).await.unwrap()["type"], "hello");
    let cmd = json!({"type": "spawn", "body": tiny, "seq": 1});
    s.send(Message::Text(cmd.to_string().into())).await.unwrap();
    let m = reply_to(&mut s, 1).await;
    assert_eq!(m["code"], "invalid_value", "{m}");
    assert_eq!(m["message"], message, "{m}");
    // The world steps on with the big box in it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_, b) = json_req(srv.addr, "GET", &format!("{spawn}/{}", b["id"]), None).await;
    let y = b["position"][1].as_f64().unwrap();
    assert!(y.is_finite() && y < 1.5e4, "{b}");
}
