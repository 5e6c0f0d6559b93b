//! WebSocket sessions: `GET /v1/worlds/{world}/stream?format=json|binary&every=N`.
//!
//! A session first gets a hello (the full state, as its group's baseline),
//! then the frames its (format, every) group shares, encoded once per tick
//! by the world thread. A session that falls more than the broadcast buffer
//! behind is skipped forward: it gets a fresh hello and continues from the
//! group's next frame, so a slow reader never slows the world and the
//! server's memory stays bounded. Client commands are answered with an ack
//! or an error in the session's format.

use super::error::{ApiError, ApiPath, ApiQuery};
use super::world_thread::{Command, Format, Frame, Subscription};
use super::AppState;
use crate::physics::Vec3;
use crate::protocol::binary::BinaryEncoder;
use crate::protocol::json::JsonEncoder;
use crate::protocol::ClientCommand;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

#[derive(Deserialize)]
pub struct StreamParams {
    format: Option<String>,
    every: Option<u32>,
}

pub async fn upgrade(
    State(state): State<AppState>,
    ApiPath(world): ApiPath<String>,
    ApiQuery(params): ApiQuery<StreamParams>,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    let format = match params.format.as_deref() {
        None | Some("json") => Format::Json,
        Some("binary") => Format::Binary,
        Some(other) => {
            return ApiError::bad_request(
                "unsupported_format",
                format!("format must be json or binary, not {other}"),
            )
            .into_response()
        }
    };
    let every = params.every.unwrap_or(1);
    if every == 0 || every > state.limits().max_every {
        return ApiError::invalid(format!(
            "every must be in [1, {}]",
            state.limits().max_every
        ))
        .into_response();
    }
    // The world must exist before the upgrade.
    let sub = match state
        .ask(&world, |r| Command::Subscribe(format, every, r))
        .await
    {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => {
            return ApiError::bad_request("websocket_required", e.to_string()).into_response()
        }
    };
    // Commands are small; a message past the REST size limit closes the
    // connection with 1009 (a 17 MB one dropped it without a close frame).
    let limit = state.limits().max_request_bytes;
    ws.max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| session(socket, state, world, format, every, sub))
}

fn to_message(f: &Frame) -> Message {
    match f {
        Frame::Text(s) => Message::Text(s.clone().into()),
        Frame::Binary(b) => Message::Binary(b.clone().into()),
    }
}

fn reply_ack(format: Format, seq: Option<u64>) -> Option<Message> {
    let seq = seq?;
    Some(match format {
        Format::Json => Message::Text(JsonEncoder::encode_ack(seq).into()),
        Format::Binary => Message::Binary(BinaryEncoder::encode_ack(seq).into()),
    })
}

fn reply_error(format: Format, seq: Option<u64>, code: &str, message: &str) -> Message {
    match format {
        Format::Json => Message::Text(JsonEncoder::encode_error(seq, code, message).into()),
        Format::Binary => Message::Binary(BinaryEncoder::encode_error(seq, code, message).into()),
    }
}

async fn session(
    mut socket: WebSocket,
    state: AppState,
    world: String,
    format: Format,
    every: u32,
    sub: Subscription,
) {
    let shutdown = state.shutdown_token();
    let Subscription { hello, mut frames } = sub;
    if socket.send(to_message(&hello)).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            frame = frames.recv() => match frame {
                Ok(f) => {
                    if socket.send(to_message(&f)).await.is_err() {
                        return;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    // Too slow: skip forward with a fresh full state.
                    match state.ask(&world, |r| Command::Subscribe(format, every, r)).await {
                        Ok(s) => {
                            frames = s.frames;
                            if socket.send(to_message(&s.hello)).await.is_err() {
                                return;
                            }
                        }
                        Err(_) => break,
                    }
                }
                Err(RecvError::Closed) => break,
            },
            msg = socket.recv() => match msg {
                Some(Ok(Message::Text(text))) => {
                    let reply = command(&state, &world, format, text.as_str()).await;
                    if let Some(m) = reply {
                        if socket.send(m).await.is_err() {
                            return;
                        }
                    }
                }
                Some(Ok(Message::Binary(bytes))) => {
                    // (A JSON command sent as a binary message keeps its seq.)
                    let seq = readable_seq(&bytes);
                    let m = reply_error(format, seq, "unsupported_message", "commands are JSON text messages");
                    if socket.send(m).await.is_err() {
                        return;
                    }
                }
                Some(Err(e)) => {
                    // (The socket reports a message or frame past the limit
                    // as a capacity error; say so before closing.)
                    if e.to_string().contains("Space limit exceeded") {
                        let _ = socket
                            .send(Message::Close(Some(CloseFrame {
                                code: 1009,
                                reason: "message too big".into(),
                            })))
                            .await;
                    }
                    return;
                }
                Some(Ok(Message::Close(_))) | None => return,
                Some(Ok(_)) => {}
            },
            _ = shutdown.cancelled() => break,
        }
    }
    // The world is gone or the server is stopping: say goodbye.
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code: 1001,
            reason: "world closed".into(),
        })))
        .await;
}

/// The `seq` of a command the server cannot read: that of a JSON object
/// holding an integer `seq` (a command of an unknown type, a field of the
/// wrong type), so that the client can tell which command failed; none
/// otherwise (not JSON, not an object, a `seq` that is no integer ≥ 0).
fn readable_seq(bytes: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Seq {
        seq: Option<serde_json::Value>,
    }
    // (Any other field is ignored; a key given twice is not read.)
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return None;
    }
    serde_json::from_slice::<Seq>(bytes).ok()?.seq?.as_u64()
}

/// Applies one client command; the reply is an ack (when it had a seq) or
/// an error. The values are checked by the world, as those of the REST
/// requests doing the same are (`World::edit_body`,
/// `World::apply_impulse`): one rule and one message for both.
async fn command(state: &AppState, world: &str, format: Format, text: &str) -> Option<Message> {
    let cmd: ClientCommand = match serde_json::from_str(text) {
        Ok(c) => c,
        Err(e) => {
            return Some(reply_error(
                format,
                readable_seq(text.as_bytes()),
                "invalid_command",
                &format!("invalid command: {e}"),
            ))
        }
    };
    let seq = cmd.seq();
    let result = match cmd {
        ClientCommand::Impulse {
            id, impulse, point, ..
        } => {
            state
                .ask(world, |reply| Command::Impulse {
                    id,
                    impulse: Vec3::from_array(impulse),
                    point: point.map(Vec3::from_array),
                    angular: None,
                    reply,
                })
                .await
        }
        ClientCommand::Spawn { body, .. } => state
            .ask(world, |r| Command::Spawn(vec![body], r))
            .await
            .map(|_| ()),
        ClientCommand::Remove { id, .. } => state.ask(world, |r| Command::Remove(id, r)).await,
        ClientCommand::SetVelocity {
            id,
            linear,
            angular,
            ..
        } => {
            let edit = super::world_thread::Edit {
                linear_velocity: linear.map(Vec3::from_array),
                angular_velocity: angular.map(Vec3::from_array),
                ..Default::default()
            };
            state
                .ask(world, |r| Command::Edit(id, edit, r))
                .await
                .map(|_| ())
        }
    };
    match result {
        Ok(()) => reply_ack(format, seq),
        Err(e) => Some(reply_error(format, seq, e.code, &e.message)),
    }
}
