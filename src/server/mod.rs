//! The server: `arbiter serve`. REST for worlds and bodies, a WebSocket stream
//! per world, `/metrics` and `/healthz`.
//!
//! Tasks and channels: every world is owned by one OS thread
//! ([`world_thread`]) that ticks it at a fixed rate and receives commands over
//! a channel; REST handlers and WebSocket sessions send commands with a
//! oneshot for the reply. Each tick, the world thread encodes one frame per
//! (format, every) subscriber group and publishes it on a bounded broadcast
//! channel shared by that group's sessions ([`stream`]).

pub mod assets;
pub mod error;
mod http;
pub mod metrics;
pub mod rest;
pub mod stream;
pub mod world_thread;

use crate::physics::scene::Scene;
use crate::physics::World;
use error::{ApiError, ApiResult};
use metrics::Metrics;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, RwLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use world_thread::{Command, Reply, WorldThread};

/// Limits that protect the server from any one client.
#[derive(Clone, Debug)]
pub struct Limits {
    pub max_worlds: usize,
    pub max_bodies_per_world: usize,
    pub max_request_bytes: usize,
    pub max_batch: usize,
    pub max_steps: u64,
    pub max_every: u32,
    /// How long a request's body may take to arrive (then 408).
    pub body_timeout: Duration,
    /// How long a connection may take to send a request's line and headers
    /// (then it is closed).
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_worlds: 64,
            max_bodies_per_world: 20_000,
            max_request_bytes: 1 << 20,
            max_batch: 1_000,
            max_steps: 10_000,
            max_every: 600,
            body_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(30),
        }
    }
}

struct WorldEntry {
    tx: mpsc::Sender<Command>,
}

/// Shared state: a cheap clone over an `Arc`. The std `RwLock` is right here:
/// it guards a small map and is never held across an `.await`.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    worlds: RwLock<BTreeMap<String, WorldEntry>>,
    next_world: AtomicU64,
    limits: Limits,
    metrics: Metrics,
    shutdown: CancellationToken,
}

impl AppState {
    pub fn new(limits: Limits, shutdown: CancellationToken) -> Self {
        Self {
            inner: Arc::new(Inner {
                worlds: RwLock::new(BTreeMap::new()),
                next_world: AtomicU64::new(1),
                limits,
                metrics: Metrics::default(),
                shutdown,
            }),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// Starts a world on its own thread; `id` None picks the next "wN".
    /// A world with more bodies than a world may hold is refused, wherever
    /// it comes from (a REST scene, `serve --scene`, the demo).
    pub fn add_world(&self, id: Option<&str>, world: World) -> ApiResult<String> {
        let (bodies, most) = (
            world.bodies().count(),
            self.inner.limits.max_bodies_per_world,
        );
        if bodies > most {
            return Err(ApiError::conflict(
                "limit_reached",
                format!("too many bodies for one world: {bodies}, at most {most}"),
            ));
        }
        let mut worlds = self.inner.worlds.write().expect("worlds lock");
        if worlds.len() >= self.inner.limits.max_worlds {
            return Err(ApiError::conflict(
                "limit_reached",
                format!("at most {} worlds", self.inner.limits.max_worlds),
            ));
        }
        let id = match id {
            Some(id) => id.to_string(),
            None => loop {
                let n = self.inner.next_world.fetch_add(1, Ordering::Relaxed);
                let candidate = format!("w{n}");
                if !worlds.contains_key(&candidate) {
                    break candidate;
                }
            },
        };
        let (tx, rx) = mpsc::channel();
        let metrics = self.inner.metrics.add_world(&id);
        let thread = WorldThread::new(
            id.clone(),
            world,
            self.inner.limits.max_bodies_per_world,
            metrics,
        );
        std::thread::Builder::new()
            .name(format!("world-{id}"))
            .spawn(move || thread.run(rx))
            .map_err(|e| ApiError::unavailable(format!("cannot start world thread: {e}")))?;
        worlds.insert(id.clone(), WorldEntry { tx });
        Ok(id)
    }

    /// Stops a world: its thread ends and its streams close.
    pub fn remove_world(&self, id: &str) -> bool {
        let removed = self
            .inner
            .worlds
            .write()
            .expect("worlds lock")
            .remove(id)
            .is_some();
        if removed {
            self.inner.metrics.remove_world(id);
        }
        removed
    }

    pub fn world_ids(&self) -> Vec<String> {
        self.inner
            .worlds
            .read()
            .expect("worlds lock")
            .keys()
            .cloned()
            .collect()
    }

    /// Sends a command to a world's thread and awaits the reply (503 after
    /// [`ANSWER_TIMEOUT`]).
    pub async fn ask<T>(
        &self,
        world: &str,
        make: impl FnOnce(Reply<T>) -> Command,
    ) -> ApiResult<T> {
        self.ask_within(world, make, ANSWER_TIMEOUT).await
    }

    /// [`Self::ask`], waiting at most `wait` for the answer.
    pub async fn ask_within<T>(
        &self,
        world: &str,
        make: impl FnOnce(Reply<T>) -> Command,
        wait: Duration,
    ) -> ApiResult<T> {
        let tx = {
            let worlds = self.inner.worlds.read().expect("worlds lock");
            worlds
                .get(world)
                .map(|w| w.tx.clone())
                .ok_or_else(|| ApiError::not_found("world"))?
        };
        let (rtx, rrx) = tokio::sync::oneshot::channel();
        tx.send(make(rtx))
            .map_err(|_| ApiError::not_found("world"))?;
        // (A world deleted meanwhile must not be kept alive by this request:
        // its thread ends when the last sender goes, and the reply with it.)
        drop(tx);
        let shutdown = self.shutdown_token();
        let answer = tokio::select! {
            a = tokio::time::timeout(wait, rrx) => a,
            _ = shutdown.cancelled() => return Err(ApiError::unavailable("the server is shutting down")),
        };
        match answer {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(msg))) => Err(classify(msg)),
            Ok(Err(_)) => Err(ApiError::not_found("world")),
            Err(_) => Err(ApiError::unavailable("the world did not answer in time")),
        }
    }
}

/// How long a request waits for its world's thread to answer. The thread
/// answers between steps, and a step past this (a world far past its
/// limits) gets 503 `world_unavailable`, though the command is still
/// applied when the step ends. `POST /step` waits as long as its steps
/// take.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// Maps a world thread's one-line error to an API error.
fn classify(msg: String) -> ApiError {
    if msg.contains("not found") {
        ApiError::new(axum::http::StatusCode::NOT_FOUND, "not_found", msg)
    } else if msg.contains("not paused") {
        ApiError::conflict("not_paused", msg)
    } else if msg.starts_with("busy") {
        ApiError::conflict("busy", msg)
    } else if msg.starts_with("limit") {
        ApiError::conflict("limit_reached", msg)
    } else {
        ApiError::invalid(msg)
    }
}

/// The demo world: boxes, spheres and capsules tumbling onto a plane.
pub fn demo_scene() -> Scene {
    let text = include_str!("../../scenes/demo.json");
    Scene::from_json(text).expect("the built-in demo scene is valid")
}

/// What `arbiter serve` needs.
pub struct ServeConfig {
    pub addr: SocketAddr,
    pub scenes: Vec<PathBuf>,
    pub limits: Limits,
}

/// Binds, starts the demo world and the scene worlds, and serves until
/// `shutdown` resolves (Ctrl-C / SIGTERM in the binary).
pub async fn serve(
    config: ServeConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| format!("cannot bind {}: {e}", config.addr))?;
    let token = CancellationToken::new();
    let state = AppState::new(config.limits, token.clone());
    let demo = World::from_scene(&demo_scene())?;
    state
        .add_world(Some("demo"), demo)
        .map_err(|e| format!("the demo world: {}", e.message))?;
    for path in &config.scenes {
        let scene = crate::simulate::load_scene(path)?;
        let world = World::from_scene(&scene).map_err(|e| format!("{}: {e}", path.display()))?;
        let id = state
            .add_world(None, world)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?;
        tracing::info!(world = %id, scene = %path.display(), "world started");
    }
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    tracing::info!(addr = %local, "arbiter listening");
    println!("arbiter listening on http://{local}");
    run(listener, state, async move {
        shutdown.await;
        token.cancel();
    })
    .await
}

/// Serves `app(state)` on a bound listener until `shutdown` resolves.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let token = state.shutdown_token();
    let app = rest::app(state.clone());
    let stop = token.clone();
    tokio::spawn(async move {
        shutdown.await;
        stop.cancel();
    });
    let header_timeout = state.limits().header_timeout;
    http::serve(listener, app, token, header_timeout).await;
    for id in state.world_ids() {
        state.remove_world(&id);
    }
    Ok(())
}
