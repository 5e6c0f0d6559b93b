//! A server on port 0 for tests, and a minimal HTTP/1.1 client.
#![allow(dead_code)]

use arbiter::protocol::binary::BinaryDecoder;
use arbiter::protocol::ServerMessage;
use arbiter::server::{run, AppState, Limits};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

pub struct Server {
    pub addr: SocketAddr,
    pub stop: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

pub async fn start() -> Server {
    start_with(Limits::default()).await
}

pub async fn start_with(limits: Limits) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let state = AppState::new(limits, stop.clone());
    let s = stop.clone();
    tokio::spawn(async move {
        run(listener, state, async move { s.cancelled().await })
            .await
            .unwrap();
    });
    Server { addr, stop }
}

/// A minimal HTTP/1.1 client: one request per connection.
pub async fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.unwrap_or("");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.unwrap();
    let text = String::from_utf8_lossy(&buf).to_string();
    let status: u16 = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    (status, body)
}

pub async fn json_req(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let b = body.map(|b| b.to_string());
    let (st, text) = http(addr, method, path, b.as_deref()).await;
    (st, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Creates a world (asserting 201); its id.
pub async fn new_world(addr: SocketAddr, body: Value) -> String {
    let (st, w) = json_req(addr, "POST", "/v1/worlds", Some(body)).await;
    assert_eq!(st, 201, "{w}");
    w["id"].as_str().unwrap().to_string()
}

/// Pauses world `id`: the status and the world's reply.
pub async fn pause(addr: SocketAddr, id: &str) -> (u16, Value) {
    json_req(
        addr,
        "PATCH",
        &format!("/v1/worlds/{id}"),
        Some(json!({"paused": true})),
    )
    .await
}

/// A world with a floor, ticking at 60 Hz.
pub fn ball_world() -> Value {
    json!({"scene": {"world": {"name": "t", "tick_hz": 60}, "bodies": [
        {"kind": "static", "shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0}}
    ]}})
}

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub async fn ws(addr: SocketAddr, world: &str, query: &str) -> Ws {
    let url = format!("ws://{addr}/v1/worlds/{world}/stream{query}");
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

pub async fn next_json(s: &mut Ws) -> Option<Value> {
    loop {
        match tokio::time::timeout(Duration::from_secs(5), s.next())
            .await
            .ok()??
        {
            Ok(Message::Text(t)) => return serde_json::from_str(t.as_str()).ok(),
            Ok(Message::Close(_)) | Err(_) => return None,
            _ => {}
        }
    }
}

/// The tick number of the next binary tick frame.
pub async fn next_binary_tick(s: &mut Ws, dec: &mut BinaryDecoder) -> u64 {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), s.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Binary(b) = msg {
            if let ServerMessage::Tick { tick, .. } = dec.decode(&b).unwrap() {
                return tick;
            }
        }
    }
}

pub async fn tick_of(addr: SocketAddr, id: &str) -> u64 {
    let (_, w) = json_req(addr, "GET", &format!("/v1/worlds/{id}"), None).await;
    w["tick"].as_u64().unwrap()
}
