//! The router and the REST handlers. Every body is parsed by hand from bytes
//! so that every rejection (malformed JSON, unknown fields, too large) goes
//! through [`ApiError`]'s one shape.

use super::error::ApiPath as Path;
use super::error::{ApiError, ApiResult};
use super::world_thread::{Command, Edit};
use super::{stream, AppState};
use crate::physics::cable::CableSpec;
use crate::physics::scene::{objects_where_expected, BodySpec, Scene, WorldSpec, MAX_COORD};
use crate::physics::{Quat, Vec3, World};
use crate::protocol::{Body, WorldInfo};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

pub fn app(state: AppState) -> Router {
    let limit = state.limits().max_request_bytes;
    Router::new()
        .route("/healthz", get(|| async { Json(json!({"status": "ok"})) }))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(|| async { Json(openapi()) }))
        .route("/v1/worlds", post(create_world).get(list_worlds))
        .route(
            "/v1/worlds/{world}",
            get(get_world).patch(patch_world).delete(delete_world),
        )
        .route("/v1/worlds/{world}/step", post(step_world))
        .route("/v1/worlds/{world}/snapshot", get(snapshot))
        .route("/v1/worlds/{world}/bodies", post(spawn).get(list_bodies))
        .route(
            "/v1/worlds/{world}/bodies/{id}",
            get(get_body).patch(patch_body).delete(delete_body),
        )
        .route("/v1/worlds/{world}/bodies/{id}/impulse", post(impulse))
        .route("/v1/worlds/{world}/raycast", post(raycast))
        .route(
            "/v1/worlds/{world}/cables",
            post(add_cable).get(list_cables),
        )
        .route(
            "/v1/worlds/{world}/cables/{id}",
            get(get_cable).delete(delete_cable),
        )
        .route("/v1/worlds/{world}/stream", get(stream::upgrade))
        .merge(super::assets::router())
        .fallback(|| async { ApiError::not_found("route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed here",
            )
        })
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            read_body,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            count_requests,
        ))
        .with_state(state)
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        "the request body is too large",
    )
}

/// A body that cannot be read as HTTP frames it (a chunk size that is not
/// hexadecimal, say): 400 `malformed_request`, as hyper's own answer to a
/// malformed request line or header is (`http.rs`).
fn malformed_body(e: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(
        "malformed_request",
        format!("the request body is not valid HTTP/1.1 framing: {e}"),
    )
}

/// Reads every request's body before its handler, within the size limit
/// and [`super::Limits::body_timeout`]: a `Content-Length` past the limit
/// is refused at once (413), without waiting for a body that may never
/// come (a request declaring 1 GB and sending one byte hung for good), and
/// a body that does not arrive in time gets 408 `request_timeout` (a slow
/// sender held its connection open indefinitely).
async fn read_body(
    State(state): State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use futures_util::StreamExt;
    let limit = state.limits().max_request_bytes;
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large().into_response();
    }
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    let read = async {
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(malformed_body)?;
            if bytes.len() + chunk.len() > limit {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(())
    };
    match tokio::time::timeout(state.limits().body_timeout, read).await {
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the request body did not arrive within {} s",
                state.limits().body_timeout.as_secs_f64()
            ),
        )
        .into_response(),
        Ok(Err(e)) => e.into_response(),
        Ok(Ok(())) => {
            let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
            next.run(req).await
        }
    }
}

async fn count_requests(
    State(state): State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use std::sync::atomic::Ordering;
    state.metrics().requests.fetch_add(1, Ordering::Relaxed);
    let resp = next.run(req).await;
    if resp.status().is_client_error() {
        state
            .metrics()
            .rejected_requests
            .fetch_add(1, Ordering::Relaxed);
    }
    resp
}

#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain")))]
async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        state.metrics().render(),
    )
        .into_response()
}

/// Parses a JSON body; every failure is a 4xx in the error shape.
pub fn parse<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> ApiResult<T> {
    let bytes = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            malformed_body(e.body_text())
        }
    })?;
    let value = serde_json::from_slice(&bytes).map_err(json_error)?;
    // Every request body is an object (serde would also read a struct
    // from an array of its fields in order: `["x", 30, [0, 1, 0]]` made a
    // world).
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ApiError::invalid(
            "invalid request: the body must be a JSON object",
        ));
    }
    // (And so must what it holds as objects: `{"scene": []}` made a world.)
    let tree: Value = serde_json::from_slice(&bytes).map_err(json_error)?;
    // A key given twice in one object is refused, as the command line
    // refuses it in a scene file (read through a JSON value, the last
    // counted here, and a scene given to REST and to `simulate` made two
    // different worlds, or one and an error).
    serde_json::from_slice::<UniqueKeys>(&bytes)
        .map_err(|e| ApiError::invalid(format!("invalid request: {e}")))?;
    objects_where_expected(&tree)
        .map_err(|e| ApiError::invalid(format!("invalid request: {e}")))?;
    Ok(value)
}

/// Any JSON, read only to refuse an object that names a key twice.
struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Walk;
        impl<'de> serde::de::Visitor<'de> for Walk {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys)
            }
            fn visit_i64<E>(self, _: i64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys)
            }
            fn visit_u64<E>(self, _: u64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys)
            }
            fn visit_f64<E>(self, _: f64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys)
            }
            fn visit_str<E>(self, _: &str) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys)
            }
            fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<UniqueKeys, A::Error> {
                while seq.next_element::<UniqueKeys>()?.is_some() {}
                Ok(UniqueKeys)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<UniqueKeys, A::Error> {
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format!(
                            "the key `{key}` is given twice in one object"
                        )));
                    }
                    map.next_value::<UniqueKeys>()?;
                }
                Ok(UniqueKeys)
            }
        }
        d.deserialize_any(Walk)
    }
}

/// A body serde cannot read: 400 `malformed_json` when it is not JSON,
/// 422 `invalid_value` when it is but does not fit (a wrong type, an
/// unknown field, or a number out of range: `1e999` is valid JSON, which
/// serde reports as a syntax error).
fn json_error(e: serde_json::Error) -> ApiError {
    let data = e.classify() == serde_json::error::Category::Data;
    if data || e.to_string().starts_with("number out of range") {
        ApiError::invalid(format!("invalid request: {e}"))
    } else {
        ApiError::bad_request("malformed_json", format!("malformed JSON: {e}"))
    }
}

fn vec3(name: &str, v: [f32; 3], max: f32) -> ApiResult<Vec3> {
    let v = Vec3::from_array(v);
    if !v.is_finite() || v.abs().max_element() > max {
        return Err(ApiError::invalid(format!(
            "{name} must be finite and within ±{max}"
        )));
    }
    Ok(v)
}

fn body_id(id: &str) -> ApiResult<u64> {
    id.parse().map_err(|_| ApiError::not_found("body"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneReq {
    scene: Scene,
}

#[utoipa::path(post, path = "/v1/worlds", tag = "worlds", request_body(content = Object, description = "A WorldSpec `{name, tick_hz, gravity}` or `{\"scene\": Scene}`"), responses((status = 201, body = WorldInfo), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_world(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let req: Value = parse(body)?;
    let scene = if req.get("scene").is_some() {
        serde_json::from_value::<SceneReq>(req)
            .map_err(|e| ApiError::invalid(format!("invalid scene: {e}")))?
            .scene
    } else {
        let spec: WorldSpec = serde_json::from_value(req)
            .map_err(|e| ApiError::invalid(format!("invalid world spec: {e}")))?;
        Scene {
            world: spec,
            bodies: Vec::new(),
            cables: Vec::new(),
        }
    };
    // (Before the world is built; `add_world` checks it again.)
    let most = state.limits().max_bodies_per_world;
    if scene.bodies.len() > most {
        return Err(ApiError::conflict(
            "limit_reached",
            format!(
                "too many bodies for one world: {}, at most {most}",
                scene.bodies.len()
            ),
        ));
    }
    let world = World::from_scene(&scene).map_err(ApiError::invalid)?;
    let id = state.add_world(None, world)?;
    let info = state.ask(&id, Command::Info).await?;
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

#[utoipa::path(get, path = "/v1/worlds", tag = "worlds", responses((status = 200, body = [WorldInfo])))]
async fn list_worlds(State(state): State<AppState>) -> ApiResult<Json<Vec<WorldInfo>>> {
    let mut out = Vec::new();
    for id in state.world_ids() {
        if let Ok(info) = state.ask(&id, Command::Info).await {
            out.push(info);
        }
    }
    Ok(Json(out))
}

#[utoipa::path(get, path = "/v1/worlds/{world}", tag = "worlds", params(("world" = String, Path)), responses((status = 200, body = WorldInfo), (status = 404, body = ErrorBody)))]
async fn get_world(
    State(state): State<AppState>,
    Path(world): Path<String>,
) -> ApiResult<Json<WorldInfo>> {
    Ok(Json(state.ask(&world, Command::Info).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchWorld {
    paused: Option<bool>,
    gravity: Option<[f32; 3]>,
    tick_hz: Option<f64>,
}

#[utoipa::path(patch, path = "/v1/worlds/{world}", tag = "worlds", params(("world" = String, Path)), request_body = PatchWorld, responses((status = 200, body = WorldInfo), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "A slower tick_hz or a stronger gravity would pass the world's limits of overlapping bodies or cable segments"), (status = 422, body = ErrorBody)))]
async fn patch_world(
    State(state): State<AppState>,
    Path(world): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Json<WorldInfo>> {
    let p: PatchWorld = parse(body)?;
    let gravity = p.gravity.map(|g| vec3("gravity", g, 1.0e3)).transpose()?;
    if let Some(hz) = p.tick_hz {
        if !(hz.is_finite() && (1.0..=1000.0).contains(&hz)) {
            return Err(ApiError::invalid("tick_hz must be in [1, 1000]"));
        }
    }
    let info = state
        .ask(&world, |reply| Command::Patch {
            paused: p.paused,
            gravity,
            tick_hz: p.tick_hz,
            reply,
        })
        .await?;
    Ok(Json(info))
}

#[utoipa::path(delete, path = "/v1/worlds/{world}", tag = "worlds", params(("world" = String, Path)), responses((status = 204, description = "Deleted; its streams close"), (status = 404, body = ErrorBody)))]
async fn delete_world(
    State(state): State<AppState>,
    Path(world): Path<String>,
) -> ApiResult<StatusCode> {
    if state.remove_world(&world) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("world"))
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepReq {
    steps: u64,
}

#[utoipa::path(post, path = "/v1/worlds/{world}/step", tag = "worlds", params(("world" = String, Path)), request_body = StepReq, responses((status = 200, body = TickReply), (status = 409, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn step_world(
    State(state): State<AppState>,
    Path(world): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Json<Value>> {
    let s: StepReq = parse(body)?;
    let max = state.limits().max_steps;
    if s.steps == 0 || s.steps > max {
        return Err(ApiError::invalid(format!("steps must be in [1, {max}]")));
    }
    // As long as its steps take: the world answers other requests between
    // them meanwhile.
    let tick = state
        .ask_within(&world, |r| Command::Step(s.steps, r), Duration::MAX)
        .await?;
    Ok(Json(json!({ "tick": tick })))
}

#[utoipa::path(get, path = "/v1/worlds/{world}/snapshot", tag = "worlds", params(("world" = String, Path)), responses((status = 200, body = Object, description = "A Scene with ids and state"), (status = 404, body = ErrorBody)))]
async fn snapshot(
    State(state): State<AppState>,
    Path(world): Path<String>,
) -> ApiResult<Json<Scene>> {
    Ok(Json(state.ask(&world, Command::Snapshot).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Batch {
    bodies: Vec<BodySpec>,
}

#[utoipa::path(post, path = "/v1/worlds/{world}/bodies", tag = "bodies", params(("world" = String, Path)), request_body(content = Object, description = "A BodySpec, or `{\"bodies\": [BodySpec]}`"), responses((status = 201, body = Object, description = "The Body, or `{\"bodies\": [Body]}`"), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn spawn(
    State(state): State<AppState>,
    Path(world): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let v: Value = parse(body)?;
    let batch = v.get("bodies").is_some();
    let specs = if batch {
        let b: Batch = serde_json::from_value(v)
            .map_err(|e| ApiError::invalid(format!("invalid batch: {e}")))?;
        if b.bodies.len() > state.limits().max_batch {
            return Err(ApiError::invalid(format!(
                "a batch holds at most {} bodies",
                state.limits().max_batch
            )));
        }
        b.bodies
    } else {
        let spec: BodySpec = serde_json::from_value(v)
            .map_err(|e| ApiError::invalid(format!("invalid body: {e}")))?;
        vec![spec]
    };
    let mut bodies = state.ask(&world, |r| Command::Spawn(specs, r)).await?;
    // Serialized as they are, as `GET` does (through a `Value`, the reply
    // had its keys sorted and its f32 numbers widened: radius
    // 0.20000000298023224).
    #[derive(serde::Serialize)]
    struct Spawned {
        bodies: Vec<Body>,
    }
    let out = if batch {
        Json(Spawned { bodies }).into_response()
    } else {
        match bodies.pop() {
            Some(b) => Json(b).into_response(),
            None => return Err(ApiError::invalid("nothing was spawned")),
        }
    };
    Ok((StatusCode::CREATED, out).into_response())
}

#[utoipa::path(get, path = "/v1/worlds/{world}/bodies", tag = "bodies", params(("world" = String, Path)), responses((status = 200, body = [Object], description = "Bodies: BodySpec with id and sleeping"), (status = 404, body = ErrorBody)))]
async fn list_bodies(
    State(state): State<AppState>,
    Path(world): Path<String>,
) -> ApiResult<Json<Vec<Body>>> {
    Ok(Json(state.ask(&world, Command::Bodies).await?))
}

#[utoipa::path(get, path = "/v1/worlds/{world}/bodies/{id}", tag = "bodies", params(("world" = String, Path), ("id" = u64, Path)), responses((status = 200, body = Object, description = "The Body"), (status = 404, body = ErrorBody)))]
async fn get_body(
    State(state): State<AppState>,
    Path((world, id)): Path<(String, String)>,
) -> ApiResult<Json<Body>> {
    let id = body_id(&id)?;
    Ok(Json(state.ask(&world, |r| Command::Body(id, r)).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchBody {
    position: Option<[f32; 3]>,
    rotation: Option<[f32; 4]>,
    linear_velocity: Option<[f32; 3]>,
    angular_velocity: Option<[f32; 3]>,
}

#[utoipa::path(patch, path = "/v1/worlds/{world}/bodies/{id}", tag = "bodies", params(("world" = String, Path), ("id" = u64, Path)), request_body = PatchBody, responses((status = 200, body = Object, description = "The Body"), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "The move would pass the world's limit of overlapping bodies"), (status = 422, body = ErrorBody)))]
async fn patch_body(
    State(state): State<AppState>,
    Path((world, id)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Json<Body>> {
    let id = body_id(&id)?;
    let p: PatchBody = parse(body)?;
    // (Checked by the world, as the stream's `set_velocity` is:
    // `World::edit_body`.)
    let edit = Edit {
        position: p.position.map(Vec3::from_array),
        rotation: p.rotation.map(Quat::from_array),
        linear_velocity: p.linear_velocity.map(Vec3::from_array),
        angular_velocity: p.angular_velocity.map(Vec3::from_array),
    };
    Ok(Json(
        state.ask(&world, |r| Command::Edit(id, edit, r)).await?,
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImpulseReq {
    impulse: [f32; 3],
    point: Option<[f32; 3]>,
    angular_impulse: Option<[f32; 3]>,
}

#[utoipa::path(post, path = "/v1/worlds/{world}/bodies/{id}/impulse", tag = "bodies", params(("world" = String, Path), ("id" = u64, Path)), request_body = ImpulseReq, responses((status = 204, description = "Applied"), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn impulse(
    State(state): State<AppState>,
    Path((world, id)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<StatusCode> {
    let id = body_id(&id)?;
    let r: ImpulseReq = parse(body)?;
    // (Checked by the world, as the stream's `impulse` is:
    // `World::apply_impulse`.)
    state
        .ask(&world, |reply| Command::Impulse {
            id,
            impulse: Vec3::from_array(r.impulse),
            point: r.point.map(Vec3::from_array),
            angular: r.angular_impulse.map(Vec3::from_array),
            reply,
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(delete, path = "/v1/worlds/{world}/bodies/{id}", tag = "bodies", params(("world" = String, Path), ("id" = u64, Path)), responses((status = 204, description = "Removed"), (status = 404, body = ErrorBody)))]
async fn delete_body(
    State(state): State<AppState>,
    Path((world, id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let id = body_id(&id)?;
    state.ask(&world, |r| Command::Remove(id, r)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/v1/worlds/{world}/cables", tag = "cables", params(("world" = String, Path)), request_body(content = Object, description = "A CableSpec: {from, to, segments, radius, mass, stiffness, damping, pinned, linear_velocity, restitution, friction}"), responses((status = 201, body = Object, description = "The cable: its spec with id and points"), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "The world's cable segment limit, or its limit of overlapping cable segments"), (status = 422, body = ErrorBody)))]
async fn add_cable(
    State(state): State<AppState>,
    Path(world): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let spec: CableSpec = parse(body)?;
    let cable = state.ask(&world, |r| Command::AddCable(spec, r)).await?;
    Ok((StatusCode::CREATED, Json(cable)).into_response())
}

#[utoipa::path(get, path = "/v1/worlds/{world}/cables", tag = "cables", params(("world" = String, Path)), responses((status = 200, body = [Object], description = "Cables: spec with id and points"), (status = 404, body = ErrorBody)))]
async fn list_cables(
    State(state): State<AppState>,
    Path(world): Path<String>,
) -> ApiResult<Json<Vec<CableSpec>>> {
    Ok(Json(state.ask(&world, Command::Cables).await?))
}

#[utoipa::path(get, path = "/v1/worlds/{world}/cables/{id}", tag = "cables", params(("world" = String, Path), ("id" = u64, Path)), responses((status = 200, body = Object, description = "The cable"), (status = 404, body = ErrorBody)))]
async fn get_cable(
    State(state): State<AppState>,
    Path((world, id)): Path<(String, String)>,
) -> ApiResult<Json<CableSpec>> {
    let id: u64 = id.parse().map_err(|_| ApiError::not_found("cable"))?;
    Ok(Json(state.ask(&world, |r| Command::Cable(id, r)).await?))
}

#[utoipa::path(delete, path = "/v1/worlds/{world}/cables/{id}", tag = "cables", params(("world" = String, Path), ("id" = u64, Path)), responses((status = 204, description = "Removed"), (status = 404, body = ErrorBody)))]
async fn delete_cable(
    State(state): State<AppState>,
    Path((world, id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let id: u64 = id.parse().map_err(|_| ApiError::not_found("cable"))?;
    state.ask(&world, |r| Command::RemoveCable(id, r)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RaycastReq {
    origin: [f32; 3],
    direction: [f32; 3],
    max_distance: f32,
}

#[utoipa::path(post, path = "/v1/worlds/{world}/raycast", tag = "queries", params(("world" = String, Path)), request_body = RaycastReq, responses((status = 200, body = Object, description = "`{\"hit\": null | {body, distance, point, normal}}`"), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn raycast(
    State(state): State<AppState>,
    Path(world): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Json<Value>> {
    let r: RaycastReq = parse(body)?;
    let origin = vec3("origin", r.origin, MAX_COORD)?;
    let direction = vec3("direction", r.direction, 1.0e6)?;
    if direction.length() < 1e-9 {
        return Err(ApiError::invalid("direction must be non-zero"));
    }
    if !(r.max_distance.is_finite() && r.max_distance >= 0.0 && r.max_distance <= 1.0e6) {
        return Err(ApiError::invalid("max_distance must be in [0, 1e6]"));
    }
    let hit = state
        .ask(&world, |reply| Command::Raycast {
            origin,
            direction,
            max_distance: r.max_distance,
            reply,
        })
        .await?;
    Ok(Json(json!({
        "hit": hit.map(|h| json!({
            "body": h.body,
            "distance": h.distance,
            "point": h.point.to_array(),
            "normal": h.normal.to_array(),
        }))
    })))
}

/// The error shape, for the OpenAPI document.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub(crate) struct ErrorBody {
    error: ErrorDetail,
}

#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub(crate) struct ErrorDetail {
    code: String,
    message: String,
}

/// `{"tick": T}`, for the OpenAPI document.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub(crate) struct TickReply {
    tick: u64,
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Arbiter",
        description = "Authoritative physics server: worlds, bodies, queries. The WebSocket stream is described in proto/stream.md and proto/binary.md."
    ),
    paths(
        metrics,
        create_world,
        list_worlds,
        get_world,
        patch_world,
        delete_world,
        step_world,
        snapshot,
        spawn,
        list_bodies,
        get_body,
        patch_body,
        impulse,
        delete_body,
        add_cable,
        list_cables,
        get_cable,
        delete_cable,
        raycast
    ),
    components(schemas(
        WorldInfo,
        crate::protocol::StepMs,
        ErrorBody,
        ErrorDetail,
        TickReply,
        PatchWorld,
        StepReq,
        PatchBody,
        ImpulseReq,
        RaycastReq
    ))
)]
struct ApiDoc;

/// The OpenAPI 3.1 document of this API, generated from the handlers.
pub fn openapi() -> utoipa::openapi::OpenApi {
    use utoipa::OpenApi;
    ApiDoc::openapi()
}
