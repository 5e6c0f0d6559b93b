//! One world, owned by one OS thread that ticks it at a fixed rate.
//!
//! The physics step runs on its own thread, never on the async runtime, so a
//! heavy world cannot delay other worlds, the REST API or the streams.
//! Commands arrive over a channel and are applied at the start of the next
//! tick in arrival order (while paused, at once). Tick k is due at
//! `start + k / tick_hz`; a step that overruns catches up at most
//! `MAX_CATCH_UP` ticks, then the schedule is re-based and the lost time is
//! dropped (and counted).

use super::metrics::WorldMetrics;
use crate::physics::cable::{CableSpec, CableState};
use crate::physics::scene::{BodySpec, Scene};
use crate::physics::{ContactEvent, Vec3, World};
use crate::protocol::binary::BinaryEncoder;
use crate::protocol::json::JsonEncoder;
use crate::protocol::{Body, BodyState, StepMs, WorldInfo};
use std::collections::BTreeSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, oneshot};

/// Most ticks run back to back to catch up after an overrun.
pub const MAX_CATCH_UP: u64 = 4;
/// Most cable segments in one world.
pub const MAX_CABLE_SEGMENTS: usize = 200_000;
/// Frames a subscriber may fall behind before it is resynchronized.
pub const STREAM_BUFFER: usize = 64;

/// A frame shared by every subscriber of one (format, every) group.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Text(String),
    Binary(Vec<u8>),
}

impl Frame {
    pub fn len(&self) -> usize {
        match self {
            Frame::Text(s) => s.len(),
            Frame::Binary(b) => b.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Binary,
}

/// What a subscription gets: the hello to send first and the group's frames.
pub struct Subscription {
    pub hello: Frame,
    pub frames: broadcast::Receiver<Arc<Frame>>,
}

pub type Reply<T> = oneshot::Sender<Result<T, String>>;

/// A velocity or pose edit; None fields stay.
#[derive(Debug, Clone, Default)]
pub struct Edit {
    pub position: Option<Vec3>,
    pub rotation: Option<crate::physics::Quat>,
    pub linear_velocity: Option<Vec3>,
    pub angular_velocity: Option<Vec3>,
}

pub enum Command {
    Info(Reply<WorldInfo>),
    Snapshot(Reply<Scene>),
    Spawn(Vec<BodySpec>, Reply<Vec<Body>>),
    Body(u64, Reply<Body>),
    Bodies(Reply<Vec<Body>>),
    Edit(u64, Edit, Reply<Body>),
    Impulse {
        id: u64,
        impulse: Vec3,
        point: Option<Vec3>,
        angular: Option<Vec3>,
        reply: Reply<()>,
    },
    Remove(u64, Reply<()>),
    Raycast {
        origin: Vec3,
        direction: Vec3,
        max_distance: f32,
        reply: Reply<Option<crate::physics::world::WorldRayHit>>,
    },
    Patch {
        paused: Option<bool>,
        gravity: Option<Vec3>,
        tick_hz: Option<f64>,
        reply: Reply<WorldInfo>,
    },
    Step(u64, Reply<u64>),
    Subscribe(Format, u32, Reply<Subscription>),
    AddCable(CableSpec, Reply<CableSpec>),
    Cables(Reply<Vec<CableSpec>>),
    Cable(u64, Reply<CableSpec>),
    RemoveCable(u64, Reply<()>),
}

struct Group {
    format: Format,
    every: u32,
    tx: broadcast::Sender<Arc<Frame>>,
    json: JsonEncoder,
    binary: BinaryEncoder,
    since: u32,
    moved: BTreeSet<u64>,
    contacts: Vec<ContactEvent>,
    spawned: Vec<Body>,
    removed: Vec<u64>,
    /// Cables that may have moved (or were added) since the group's last
    /// frame; with `all_cables`, every cable goes in the next frame (a
    /// client joined, and a binary hello carries no cables).
    cables: BTreeSet<u64>,
    all_cables: bool,
}

pub struct WorldThread {
    pub id: String,
    pub world: World,
    pub paused: bool,
    /// Why a step paused the world ([`World::fault`]), until it resumes.
    fault: Option<String>,
    pub max_bodies: usize,
    groups: Vec<Group>,
    metrics: Arc<WorldMetrics>,
    // Changes since the last tick, for the streams.
    spawned: Vec<Body>,
    removed: Vec<u64>,
    touched: BTreeSet<u64>,
    /// Cables added since the last tick.
    added_cables: Vec<u64>,
    step_sum: f64,
    step_count: u64,
    step_max: f64,
    /// A `POST /step` under way: the steps left and its reply. It runs in
    /// slices of [`STEP_SLICE`], the commands that arrive in between
    /// applied between them.
    stepping: Option<(u64, Reply<u64>)>,
}

/// The longest a `POST /step` runs before the world thread looks at its
/// commands again. Run in one go, 3,000 steps of a 3,000-box world held
/// the thread for 100 s: every request to that world (`GET` its state
/// included) waited 30 s and got 503, the list of worlds waited as long,
/// and the step itself got 503 while it went on (a reviewer's case).
const STEP_SLICE: Duration = Duration::from_millis(10);
/// The most commands applied between two slices of a `POST /step`.
const MAX_COMMANDS_BETWEEN_SLICES: usize = 1024;

impl WorldThread {
    pub fn new(id: String, world: World, max_bodies: usize, metrics: Arc<WorldMetrics>) -> Self {
        Self {
            id,
            world,
            paused: false,
            fault: None,
            max_bodies,
            groups: Vec::new(),
            metrics,
            spawned: Vec::new(),
            removed: Vec::new(),
            touched: BTreeSet::new(),
            added_cables: Vec::new(),
            stepping: None,
            step_sum: 0.0,
            step_count: 0,
            step_max: 0.0,
        }
    }

    pub fn info(&self) -> WorldInfo {
        let w = &self.world;
        WorldInfo {
            id: self.id.clone(),
            name: w.name.clone(),
            tick_hz: w.tick_hz,
            gravity: w.settings.gravity.to_array(),
            paused: self.paused,
            tick: w.tick(),
            time: w.time(),
            body_count: w.body_count(),
            step_ms: StepMs {
                last: w.profile().total as f64,
                mean: if self.step_count > 0 {
                    self.step_sum / self.step_count as f64
                } else {
                    0.0
                },
                max: self.step_max,
            },
            fault: self.fault.clone(),
        }
    }

    fn body(&self, id: u64) -> Result<Body, String> {
        self.world
            .body(id)
            .map(|b| b.to_spec())
            .ok_or_else(|| format!("body {id} not found"))
    }

    /// Runs the fixed-rate loop until every command sender is gone.
    pub fn run(mut self, rx: Receiver<Command>) {
        let mut start = Instant::now();
        let mut k: u64 = 0;
        loop {
            let period = Duration::from_secs_f64(1.0 / self.world.tick_hz);
            let due = start + period.mul_f64(k as f64);
            let now = Instant::now();
            let timeout = if self.stepping.is_some() {
                Duration::ZERO
            } else if self.paused {
                Duration::from_millis(50)
            } else {
                due.saturating_duration_since(now)
            };
            match rx.recv_timeout(timeout) {
                Ok(cmd) => {
                    if self.apply(cmd) {
                        start = Instant::now();
                        k = 0;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if self.stepping.is_some() {
                // Every command waiting (up to a budget) between slices: one
                // a slice capped a world at a hundred commands a second.
                for _ in 0..MAX_COMMANDS_BETWEEN_SLICES {
                    match rx.try_recv() {
                        Ok(cmd) => {
                            if self.apply(cmd) {
                                start = Instant::now();
                                k = 0;
                            }
                        }
                        Err(std::sync::mpsc::TryRecvError::Empty) => break,
                        Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
                    }
                }
                self.step_slice();
                continue;
            }
            if self.paused || Instant::now() < due {
                continue;
            }
            // Commands that arrived before the due time were applied in
            // order above (a flood of them cannot starve the tick: the due
            // check follows every command); now the tick.
            self.tick();
            k += 1;
            let behind = Instant::now().saturating_duration_since(start + period.mul_f64(k as f64));
            let late_ticks = (behind.as_secs_f64() / period.as_secs_f64()) as u64;
            if late_ticks > MAX_CATCH_UP {
                // Drop the time instead of spiralling.
                self.metrics.record_dropped(late_ticks - MAX_CATCH_UP);
                start = Instant::now() - period.mul_f64(k as f64);
            } else if late_ticks > 0 {
                self.metrics.record_overrun();
            }
        }
    }

    /// Runs the `POST /step` under way for up to [`STEP_SLICE`] (one step
    /// at least), and answers it once its steps are done or one of them
    /// stops at a fault.
    fn step_slice(&mut self) {
        let Some((mut left, reply)) = self.stepping.take() else {
            return;
        };
        if reply.is_closed() {
            // Its client is gone (the connection closed): the rest is not run.
            return;
        }
        let start = Instant::now();
        while left > 0 {
            self.tick();
            left -= 1;
            if let Some(f) = &self.fault {
                let _ = reply.send(Err(f.clone()));
                return;
            }
            if start.elapsed() >= STEP_SLICE {
                break;
            }
        }
        if left == 0 {
            let _ = reply.send(Ok(self.world.tick()));
        } else {
            self.stepping = Some((left, reply));
        }
    }

    /// Applies one command; returns true when the tick schedule must be
    /// re-based (resume, tick rate change).
    fn apply(&mut self, cmd: Command) -> bool {
        self.metrics.record_command();
        match cmd {
            Command::Info(r) => {
                let _ = r.send(Ok(self.info()));
            }
            Command::Snapshot(r) => {
                let _ = r.send(Ok(self.world.snapshot()));
            }
            Command::Spawn(specs, r) => {
                if self.world.body_count() + specs.len() > self.max_bodies {
                    let _ = r.send(Err(format!(
                        "limit: a world holds at most {} bodies",
                        self.max_bodies
                    )));
                    return false;
                }
                // Validate all first so a batch is all or nothing.
                for (i, s) in specs.iter().enumerate() {
                    if let Err(e) = s.validate() {
                        let msg = if specs.len() > 1 {
                            format!("bodies[{i}]: {e}")
                        } else {
                            e
                        };
                        let _ = r.send(Err(msg));
                        return false;
                    }
                }
                let ids = match self.world.add_bodies(&specs) {
                    Ok(ids) => ids,
                    Err(e) => {
                        let _ = r.send(Err(e));
                        return false;
                    }
                };
                let mut out = Vec::with_capacity(ids.len());
                for id in ids {
                    let b = self.body(id).expect("just added");
                    self.spawned.push(b.clone());
                    out.push(b);
                }
                let _ = r.send(Ok(out));
            }
            Command::Body(id, r) => {
                let _ = r.send(self.body(id));
            }
            Command::Bodies(r) => {
                let _ = r.send(Ok(self.world.bodies().map(|b| b.to_spec()).collect()));
            }
            Command::Edit(id, e, r) => {
                let res = self
                    .world
                    .edit_body(
                        id,
                        e.position,
                        e.rotation,
                        e.linear_velocity,
                        e.angular_velocity,
                    )
                    .and_then(|_| self.body(id));
                if res.is_ok() {
                    self.touched.insert(id);
                }
                let _ = r.send(res);
            }
            Command::Impulse {
                id,
                impulse,
                point,
                angular,
                reply,
            } => {
                let res = self.world.apply_impulse(id, impulse, point, angular);
                let _ = reply.send(res);
            }
            Command::Remove(id, r) => {
                if self.world.remove_body(id) {
                    self.removed.push(id);
                    let _ = r.send(Ok(()));
                } else {
                    let _ = r.send(Err(format!("body {id} not found")));
                }
            }
            Command::Raycast {
                origin,
                direction,
                max_distance,
                reply,
            } => {
                let _ = reply.send(Ok(self.world.raycast(origin, direction, max_distance)));
            }
            Command::Patch {
                paused,
                gravity,
                tick_hz,
                reply,
            } => {
                // (Both or neither: refused, it changes nothing.)
                if let Err(e) = self.world.set_step(tick_hz, gravity) {
                    let _ = reply.send(Err(e));
                    return false;
                }
                let mut rebase = tick_hz.is_some();
                if let Some(p) = paused {
                    rebase |= self.paused && !p;
                    self.paused = p;
                    if !p {
                        self.fault = None;
                        // Resumed: a `POST /step` under way ends where it is.
                        if let Some((_, r)) = self.stepping.take() {
                            let _ = r.send(Ok(self.world.tick()));
                        }
                    }
                }
                let _ = reply.send(Ok(self.info()));
                return rebase;
            }
            Command::Step(n, r) => {
                if !self.paused {
                    let _ = r.send(Err("the world is not paused".into()));
                } else if self.stepping.is_some() {
                    let _ = r.send(Err(
                        "busy: the world is still running an earlier POST /step".into(),
                    ));
                } else {
                    self.stepping = Some((n, r));
                }
            }
            Command::Subscribe(format, every, r) => {
                let _ = r.send(Ok(self.subscribe(format, every.max(1))));
            }
            Command::AddCable(spec, r) => {
                let segments: usize = self.world.cables().iter().map(|c| c.segments()).sum();
                if segments + spec.segments as usize > MAX_CABLE_SEGMENTS {
                    let _ = r.send(Err(format!(
                        "limit: a world holds at most {MAX_CABLE_SEGMENTS} cable segments"
                    )));
                    return false;
                }
                let res = self.world.add_cable(&spec).map(|id| {
                    self.added_cables.push(id);
                    self.world.cable(id).expect("just added").to_spec()
                });
                let _ = r.send(res);
            }
            Command::Cables(r) => {
                let _ = r.send(Ok(self
                    .world
                    .cables()
                    .iter()
                    .map(|c| c.to_spec())
                    .collect()));
            }
            Command::Cable(id, r) => {
                let res = self
                    .world
                    .cable(id)
                    .map(|c| c.to_spec())
                    .ok_or_else(|| format!("cable {id} not found"));
                let _ = r.send(res);
            }
            Command::RemoveCable(id, r) => {
                let res = if self.world.remove_cable(id) {
                    // Streams list it with the removed bodies (ids are
                    // counted together).
                    self.removed.push(id);
                    Ok(())
                } else {
                    Err(format!("cable {id} not found"))
                };
                let _ = r.send(res);
            }
        }
        false
    }

    fn subscribe(&mut self, format: Format, every: u32) -> Subscription {
        let info = self.info();
        let bodies: Vec<Body> = self.world.bodies().map(|b| b.to_spec()).collect();
        let idx = match self
            .groups
            .iter()
            .position(|g| g.format == format && g.every == every)
        {
            Some(i) => i,
            None => {
                let (tx, _) = broadcast::channel(STREAM_BUFFER);
                let mut g = Group {
                    format,
                    every,
                    tx,
                    json: JsonEncoder::new(),
                    binary: BinaryEncoder::new(),
                    since: 0,
                    moved: BTreeSet::new(),
                    contacts: Vec::new(),
                    spawned: Vec::new(),
                    removed: Vec::new(),
                    cables: BTreeSet::new(),
                    all_cables: false,
                };
                // The group's baseline starts from the full state.
                match format {
                    Format::Json => {
                        g.json.encode_hello(&info, &bodies);
                    }
                    Format::Binary => {
                        g.binary.encode_hello(&info, &bodies);
                    }
                }
                self.groups.push(g);
                self.groups.len() - 1
            }
        };
        // The next shared frame carries every cable, in full (binary: key
        // frames): a binary hello has none, and a frame lists only the
        // cables that moved, as residuals against the group's last frames.
        // (A JSON hello carries them all, exactly.)
        self.groups[idx].all_cables = format == Format::Binary;
        self.groups[idx].binary.forget_cables();
        let g = &self.groups[idx];
        // A newcomer (or a resynchronized slow reader) gets the group's
        // baseline so the next shared frame decodes for it too.
        let cables = self.cable_states();
        let hello = match format {
            Format::Json => Frame::Text(
                g.json
                    .encode_join_hello_with_cables(&info, &bodies, &cables),
            ),
            Format::Binary => Frame::Binary(g.binary.encode_join_hello(&info, &bodies)),
        };
        Subscription {
            hello,
            frames: g.tx.subscribe(),
        }
    }

    /// Every cable's state, by ascending id.
    fn cable_states(&self) -> Vec<CableState> {
        let mut states: Vec<CableState> = self.world.cables().iter().map(|c| c.state()).collect();
        states.sort_by_key(|c| c.id);
        states
    }

    /// Ids of the cables awake now (in the world's order).
    fn awake_cables(&self) -> impl Iterator<Item = u64> + '_ {
        self.world
            .cables()
            .iter()
            .filter(|c| !c.sleeping)
            .map(|c| c.id)
    }

    /// One tick: step, then feed every subscriber group.
    fn tick(&mut self) {
        // A cable may have moved in the step if it was awake before it (woken
        // by an edit since the last step, say) or in its cable stage (woken
        // in the step, even if asleep again by its end).
        let mut moved_cables: BTreeSet<u64> = self.awake_cables().collect();
        let before = self.world.tick();
        // (A step that goes through clears the last one's fault.)
        self.fault = None;
        self.world.step();
        if self.world.tick() == before {
            // The step was not taken (its bodies' pairs were past the
            // limit): no frame.
            return self.pause_on_fault();
        }
        moved_cables.extend(self.world.moved_cables().iter().copied());
        moved_cables.extend(self.added_cables.drain(..));
        let ms = self.world.profile().total as f64;
        self.step_sum += ms;
        self.step_count += 1;
        self.step_max = self.step_max.max(ms);
        self.metrics
            .record_tick(ms, self.world.body_count(), self.world.contact_count());
        self.groups.retain(|g| g.tx.receiver_count() > 0);
        let mut subscribers = 0;
        let moved: Vec<u64> = self.world.moved_bodies().to_vec();
        for g in &mut self.groups {
            subscribers += g.tx.receiver_count();
            g.moved.extend(moved.iter().copied());
            g.moved.extend(self.touched.iter().copied());
            g.contacts.extend_from_slice(self.world.contact_events());
            g.spawned.extend(self.spawned.iter().cloned());
            g.removed.extend(self.removed.iter().copied());
            g.cables.extend(moved_cables.iter().copied());
            g.since += 1;
            if g.since < g.every {
                continue;
            }
            g.since = 0;
            let states: Vec<BodyState> = g
                .moved
                .iter()
                .filter_map(|&id| self.world.body(id).map(BodyState::of))
                .collect();
            // The cables that may have moved since the group's last frame
            // (all after a binary client joined), by ascending id.
            let mut cables: Vec<CableState> = self
                .world
                .cables()
                .iter()
                .filter(|c| g.all_cables || g.cables.contains(&c.id))
                .map(|c| c.state())
                .collect();
            cables.sort_by_key(|c| c.id);
            let (tick, time) = (self.world.tick(), self.world.time());
            let frame = match g.format {
                Format::Json => Frame::Text(g.json.encode_tick_with_cables(
                    tick,
                    time,
                    &states,
                    &g.contacts,
                    &g.spawned,
                    &g.removed,
                    &cables,
                )),
                Format::Binary => Frame::Binary(g.binary.encode_tick_with_cables(
                    tick,
                    time,
                    &states,
                    &g.contacts,
                    &g.spawned,
                    &g.removed,
                    &cables,
                )),
            };
            let bytes = frame.len() as u64 * g.tx.receiver_count() as u64;
            self.metrics.record_bytes(bytes);
            let _ = g.tx.send(Arc::new(frame));
            g.moved.clear();
            g.contacts.clear();
            g.spawned.clear();
            g.removed.clear();
            g.cables.clear();
            g.all_cables = false;
        }
        self.metrics.set_subscribers(subscribers);
        self.spawned.clear();
        self.removed.clear();
        self.touched.clear();
        self.pause_on_fault();
    }

    /// After a step that stopped short ([`World::fault`]): the world pauses
    /// (the next steps would stop there too, each at a full step's cost)
    /// and every subscriber gets an `error` message with code
    /// `limit_reached` and the fault. A later step (resumed, or `POST
    /// /step`) tries again.
    fn pause_on_fault(&mut self) {
        let Some(fault) = self.world.fault() else {
            return;
        };
        tracing::warn!(world = %self.id, "paused: {fault}");
        for g in &self.groups {
            let frame = match g.format {
                Format::Json => {
                    Frame::Text(JsonEncoder::encode_error(None, "limit_reached", fault))
                }
                Format::Binary => {
                    Frame::Binary(BinaryEncoder::encode_error(None, "limit_reached", fault))
                }
            };
            let _ = g.tx.send(Arc::new(frame));
        }
        self.fault = Some(fault.to_owned());
        self.paused = true;
    }
}
