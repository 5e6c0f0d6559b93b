//! The world: bodies, contacts and the step pipeline.

use super::aabb::Aabb;
use super::body::Body;
use super::broad_phase::BroadPhase;
use super::cable::{Cable, CableSpec};
use super::ccd::{CcdSettings, CcdStats};
use super::collision;
use super::contact::{Contact, ContactSet};
use super::events::ContactEvent;
use super::island::SleepSettings;
use super::math::{Quat, Vec3};
use super::scene::{
    check_rotation, check_vec, BodyKind, BodySpec, Scene, WorldSpec, MAX_ANGULAR_SPEED, MAX_COORD,
    MAX_IMPULSE, MAX_SPEED,
};
use super::set::{BodyHandle, BodySet};
use super::solver::{self, ContactConstraint, PointImpulse, SolverBody, SolverSettings, Spin};
use cable_sleep::Region;
use sleep::sleep_speed;
use std::collections::HashMap;
use std::time::Instant;

mod bounds;
mod cable_riders;
mod cable_sleep;
mod cable_supports;
mod cables;
mod continuous;
mod events;
mod limits;
mod narrow;
pub use limits::{MAX_BODY_CANDIDATES, MAX_BODY_OVERLAPS, MAX_STEP_BODY_PAIRS};
mod sleep;

/// Everything that tunes a world's step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldSettings {
    pub gravity: Vec3,
    /// Step length (s).
    pub dt: f32,
    pub solver: SolverSettings,
    pub sleep: SleepSettings,
    /// Pairs closer than this (plus their motion in a step) get speculative
    /// contact points (m).
    pub speculative_distance: f32,
    /// Broad-phase boxes are enlarged by this so small motions need no update (m).
    pub aabb_margin: f32,
    pub ccd: CcdSettings,
    /// Cable substeps per step.
    pub cable_substeps: u32,
    /// The most cable substeps a step takes where cables' particles move
    /// apart fast ([`super::cable::swing_substeps`]), as a multiple of
    /// `cable_substeps` (1: those in every step, as a test that follows
    /// each particle's straight line from one step to the next needs).
    pub cable_substep_factor: u32,
    /// Passes over segments and contacts per cable substep.
    pub cable_iterations: u32,
    /// Tests only: check every pair of cable segments by brute force after
    /// each substep (`CableStats::audit_crossings`). O(N²).
    pub cable_audit: bool,
}

impl Default for WorldSettings {
    fn default() -> Self {
        Self {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            dt: 1.0 / 60.0,
            solver: SolverSettings::default(),
            sleep: SleepSettings::default(),
            speculative_distance: 0.02,
            aabb_margin: 0.05,
            ccd: CcdSettings::default(),
            cable_substeps: 4,
            cable_substep_factor: super::cable::MAX_SUBSTEP_FACTOR,
            cable_iterations: 4,
            cable_audit: false,
        }
    }
}

/// Wall-clock time of each stage of the last step (ms).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct StepProfile {
    pub broad_phase: f32,
    pub narrow_phase: f32,
    pub continuous: f32,
    pub solve: f32,
    pub islands: f32,
    pub events: f32,
    pub total: f32,
}

/// A ray hit from [`World::raycast`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldRayHit {
    pub body: u64,
    pub distance: f32,
    pub point: Vec3,
    pub normal: Vec3,
}

pub struct World {
    pub name: String,
    pub tick_hz: f64,
    pub settings: WorldSettings,
    bodies: BodySet,
    ids: HashMap<u64, BodyHandle>,
    next_id: u64,
    broad: BroadPhase,
    /// Slot indices of plane bodies (they never enter the broad phase).
    planes: Vec<u32>,
    contacts: ContactSet,
    events: Vec<ContactEvent>,
    pending_events: Vec<ContactEvent>,
    moved: Vec<u64>,
    pending_moved: Vec<u64>,
    tick: u64,
    time: f64,
    profile: StepProfile,
    next_island: u32,
    // Scratch memory reused every step.
    solver_bodies: Vec<SolverBody>,
    solver_index: Vec<u32>,
    constraints: Vec<ContactConstraint>,
    constraint_contact: Vec<usize>,
    /// Centre of mass and rotation of each solver body at the step's start.
    start_state: Vec<(Vec3, Quat)>,
    /// Per solver body, what the gyroscopic term needs (`solver::Spin`).
    spins: Vec<Option<Spin>>,
    ccd_stats: CcdStats,
    /// The impacts the continuous pass resolved this step: the pair's
    /// slots (lower first), the normal impulse, the point and the normal
    /// from the lower (for the step's contact events).
    ccd_impacts: Vec<(u32, u32, f32, Vec3, Vec3)>,
    cables: Vec<Cable>,
    cable_system: super::cable::solver::CableSystem,
    /// Cables touching dynamic bodies at the last cable stage's end: the
    /// rigid solver's supports in the next step (`world/cable_supports.rs`).
    cable_supports: Vec<cable_supports::CableSupport>,
    /// The support (index) of each constraint after the contacts' ones.
    support_constraints: Vec<usize>,
    /// Each awake body (slot) the last cable stage only loaded, with the
    /// speed its rest is judged by (`world/cable_sleep.rs`).
    cable_rest_speed: Vec<(u32, f32)>,
    /// Each sleeping body's (slot) cable impulses across gravity dropped
    /// since it fell asleep: a steady small pull adds up and wakes it.
    cable_drift: HashMap<u32, Vec3>,
    /// Cables that rested long enough to sleep in the last cable stage but
    /// touch awake bodies (each pair: cable index, body slot): each falls
    /// asleep with those bodies, in the same step (`world/cable_sleep.rs`).
    cable_sleep_wait: Vec<(u32, u32)>,
    /// The awake dynamic bodies each awake cable touches that touches no
    /// body held up through a support (cable index, body slot; ascending):
    /// the bodies of one cable fall asleep together, with it
    /// (`world/sleep.rs`).
    cable_sleep_links: Vec<(u32, u32)>,
    /// The last cable stage's coupled bodies with the bodies riding on
    /// them (each pair: coupled body's slot, rider's slot; ascending), which
    /// move with them in the stage (`world/cable_riders.rs`).
    cable_riders: Vec<(u32, u32)>,
    /// The contacts that hold them up.
    cable_rider_holds: Vec<cable_riders::Hold>,
    /// The sleeping cables' segments in a grid (for waking them), kept
    /// while no cable falls asleep, wakes, comes or goes.
    sleepers: cable_sleep::Sleepers,
    /// What the cable stage did in the last step.
    pub cable_stats: super::cable::CableStats,
    /// The substeps the last step's cables needed at its start
    /// ([`super::cable::swing_substeps`]).
    cable_swing: u32,
    /// Ids of the cables awake in the last step's cable stage.
    moved_cables: Vec<u64>,
    /// The world's cables' overlapping segment sweeps (see
    /// [`super::cable::MAX_OVERLAPS`]): the tick they were counted at
    /// (`None`: count again), their number or a bound on it, and whether it
    /// is exact (`world/limits.rs`).
    cable_overlap_count: Option<(u64, u64, bool)>,
    /// While `cable_overlap_count` holds, the bounds of each cable's
    /// segment sweeps (by cable), so that a cable added reads only the
    /// cables near it.
    cable_reach: Vec<(Vec3, Vec3)>,
    /// The overlapping segment sweeps among the sleeping cables, and a
    /// hash of what they depend on (`world/limits.rs`).
    sleeper_overlaps: Option<(u64, u64)>,
    /// Overlapping pairs the bodies added since the last step brought (see
    /// [`MAX_BODY_OVERLAPS`]).
    spawned_body_overlaps: u64,
    /// Why the last step stopped short ([`Self::fault`]).
    fault: Option<String>,
}

impl Default for World {
    fn default() -> Self {
        Self::new(WorldSettings::default())
    }
}

impl World {
    pub fn new(settings: WorldSettings) -> Self {
        Self {
            name: "world".into(),
            tick_hz: (1.0 / settings.dt) as f64,
            settings,
            bodies: BodySet::new(),
            ids: HashMap::new(),
            next_id: 1,
            broad: limits::broad_phase(),
            planes: Vec::new(),
            contacts: ContactSet::default(),
            events: Vec::new(),
            pending_events: Vec::new(),
            moved: Vec::new(),
            pending_moved: Vec::new(),
            tick: 0,
            time: 0.0,
            profile: StepProfile::default(),
            next_island: 1,
            solver_bodies: Vec::new(),
            solver_index: Vec::new(),
            constraints: Vec::new(),
            constraint_contact: Vec::new(),
            start_state: Vec::new(),
            spins: Vec::new(),
            ccd_stats: CcdStats::default(),
            ccd_impacts: Vec::new(),
            cables: Vec::new(),
            cable_system: Default::default(),
            cable_supports: Vec::new(),
            support_constraints: Vec::new(),
            cable_rest_speed: Vec::new(),
            cable_drift: HashMap::new(),
            cable_sleep_wait: Vec::new(),
            cable_sleep_links: Vec::new(),
            cable_riders: Vec::new(),
            cable_rider_holds: Vec::new(),
            sleepers: Default::default(),
            cable_stats: Default::default(),
            cable_swing: 0,
            moved_cables: Vec::new(),
            cable_overlap_count: None,
            cable_reach: Vec::new(),
            sleeper_overlaps: None,
            spawned_body_overlaps: 0,
            fault: None,
        }
    }

    /// Builds a world from a scene; bodies get the scene's ids, or 1, 2, 3, …
    /// in file order. Errors are one line.
    pub fn from_scene(scene: &Scene) -> Result<World, String> {
        scene.validate()?;
        let w = &scene.world;
        let settings = WorldSettings {
            gravity: Vec3::from_array(w.gravity),
            dt: (1.0 / w.tick_hz) as f32,
            ..Default::default()
        };
        let mut world = World::new(settings);
        world.name = w.name.clone();
        world.tick_hz = w.tick_hz;
        world.tick = w.tick.unwrap_or(0);
        world.time = w.time.unwrap_or(0.0);
        for (i, spec) in scene.bodies.iter().enumerate() {
            let id = match spec.id {
                Some(id) => id,
                None => world.fresh_id().map_err(|e| format!("bodies[{i}]: {e}"))?,
            };
            if world.ids.contains_key(&id) || id == 0 {
                return Err(format!("bodies[{i}]: duplicate or zero id {id}"));
            }
            world.next_id = world.next_id.max(id + 1);
            world
                .insert_body(spec, id)
                .map_err(|e| format!("bodies[{i}]: {e}"))?;
            if spec.sleeping == Some(true) {
                let h = world.ids[&id];
                let island = world.next_island;
                world.next_island += 1;
                if let Some(b) = world.bodies.get_mut(h) {
                    if b.is_dynamic() {
                        b.sleeping = true;
                        b.island = island;
                    }
                }
            }
        }
        let slots: Vec<u32> = world.bodies.iter().map(|(h, _)| h.index).collect();
        world.spawned_body_overlaps = world
            .new_body_overlaps(&slots)
            .map_err(|e| format!("bodies: {e}"))?;
        for (i, spec) in scene.cables.iter().enumerate() {
            let id = match spec.id {
                Some(id) => id,
                None => world.fresh_id().map_err(|e| format!("cables[{i}]: {e}"))?,
            };
            if world.ids.contains_key(&id) || world.cables.iter().any(|c| c.id == id) || id == 0 {
                return Err(format!("cables[{i}]: duplicate or zero id {id}"));
            }
            world.next_id = world.next_id.max(id + 1);
            let mut cable = Cable::from_spec(spec, id).map_err(|e| format!("cables[{i}]: {e}"))?;
            if spec.sleeping == Some(true) {
                cable.sleeping = true;
                cable.v.fill(Vec3::ZERO);
            }
            world.cables.push(cable);
        }
        world
            .check_new_cables(0)
            .map_err(|e| format!("cables: {e}"))?;
        // Cables asleep against a dynamic body load awake: the body's
        // supports on them (not in a snapshot) are taken again before they
        // sleep again.
        let reach = world.cable_reach();
        let around: Vec<Aabb> = world
            .bodies
            .iter()
            .filter(|(_, b)| b.is_dynamic())
            .map(|(_, b)| b.shape.aabb(&b.pose).expanded(reach))
            .collect();
        for a in around {
            world.wake_cables_in(&Region::Box(a), false);
        }
        Ok(world)
    }

    /// The id the next thing added gets, unless the ids are spent: they
    /// stay within 2^53 ([`super::scene::MAX_ID`], exact in every JSON
    /// reader), and a scene may hold that id itself.
    fn fresh_id(&self) -> Result<u64, String> {
        if self.next_id > super::scene::MAX_ID {
            return Err(format!(
                "limit: the world's ids are spent (the next would pass 2^53, {})",
                super::scene::MAX_ID
            ));
        }
        Ok(self.next_id)
    }

    /// Adds a cable; returns its id (from the bodies' count).
    pub fn add_cable(&mut self, spec: &CableSpec) -> Result<u64, String> {
        let id = self.fresh_id()?;
        let cable = Cable::from_spec(spec, id)?;
        // (Appended: the supports' segment numbers hold.)
        self.cables.push(cable);
        if let Err(e) = self.check_new_cables(self.cables.len() - 1) {
            self.cables.pop();
            return Err(e);
        }
        self.sleepers.invalidate();
        self.next_id += 1;
        Ok(id)
    }

    /// Removes a cable; wakes the sleeping bodies it may have touched (a
    /// sleeping body holds cables as a static one does, and would hang
    /// where they held it up). False when the id is unknown.
    pub fn remove_cable(&mut self, id: u64) -> bool {
        let Some(k) = self.cables.iter().position(|c| c.id == id) else {
            return false;
        };
        let first: usize = self.cables[..k].iter().map(|c| c.segments()).sum();
        let cable = self.cables.remove(k);
        self.forget_supports_on(first as u32, cable.segments() as u32);
        self.cable_overlap_count = None;
        let reach = cable.spec.radius + self.settings.speculative_distance;
        let first = Aabb::new(cable.x[0], cable.x[0]);
        let around = cable
            .x
            .iter()
            .fold(first, |a, &p| a.union(&Aabb::new(p, p)))
            .expanded(reach);
        let near: Vec<u32> = self
            .bodies
            .iter()
            .filter(|(_, b)| b.sleeping && b.shape.aabb(&b.pose).overlaps(&around))
            .map(|(h, _)| h.index)
            .collect();
        for i in near {
            self.wake_index(i);
        }
        // Cables resting on it too (and the sleepers' indices moved).
        self.sleepers.invalidate();
        self.wake_cables_in(&Region::Box(around.expanded(self.cable_reach())), true);
        true
    }

    pub fn cable(&self, id: u64) -> Option<&Cable> {
        self.cables.iter().find(|c| c.id == id)
    }

    pub fn cables(&self) -> &[Cable] {
        &self.cables
    }

    /// Ids of the cables awake in the last step's cable stage (in the
    /// world's order): those whose points the step may have moved. A cable
    /// woken in the step is listed even if it fell asleep again by its end
    /// (a step as long as the sleep time).
    pub fn moved_cables(&self) -> &[u64] {
        &self.moved_cables
    }

    /// How many contacts through cables the next rigid solve holds bodies
    /// up with (`world/cable_supports.rs`).
    pub fn cable_support_count(&self) -> usize {
        self.cable_supports.len()
    }

    /// The world as a scene: bodies with ids and state, tick and time.
    pub fn snapshot(&self) -> Scene {
        Scene {
            world: WorldSpec {
                name: self.name.clone(),
                tick_hz: self.tick_hz,
                gravity: self.settings.gravity.to_array(),
                tick: Some(self.tick),
                time: Some(self.time),
            },
            bodies: self.bodies.iter().map(|(_, b)| b.to_spec()).collect(),
            cables: self.cables.iter().map(|c| c.to_spec()).collect(),
        }
    }

    pub fn tick(&self) -> u64 {
        self.tick
    }
    pub fn time(&self) -> f64 {
        self.time
    }
    pub fn profile(&self) -> StepProfile {
        self.profile
    }
    pub fn body_count(&self) -> usize {
        self.bodies.len()
    }
    pub fn contact_count(&self) -> usize {
        self.contacts.len()
    }
    /// Contact events of the last step (and of edits applied before it).
    pub fn contact_events(&self) -> &[ContactEvent] {
        &self.events
    }
    /// Wire ids of the bodies whose state changed in the last step.
    pub fn moved_bodies(&self) -> &[u64] {
        &self.moved
    }

    pub fn body(&self, id: u64) -> Option<&Body> {
        self.bodies.get(*self.ids.get(&id)?)
    }

    /// Bodies in a deterministic order.
    pub fn bodies(&self) -> impl Iterator<Item = &Body> {
        self.bodies.iter().map(|(_, b)| b)
    }

    /// Adds a body; returns its wire id.
    pub fn add_body(&mut self, spec: &BodySpec) -> Result<u64, String> {
        self.add_bodies(std::slice::from_ref(spec))
            .map(|ids| ids[0])
    }

    /// Adds bodies, all or none (ids in order): each as [`Self::add_body`]
    /// does, and refused together when they would overlap in more pairs
    /// than the world may hold (`world/limits.rs`).
    pub fn add_bodies(&mut self, specs: &[BodySpec]) -> Result<Vec<u64>, String> {
        let first = self.next_id;
        let mut ids = Vec::with_capacity(specs.len());
        let mut added = Ok(0);
        for spec in specs {
            let id = match self.fresh_id() {
                Ok(id) => id,
                Err(e) => {
                    added = Err(e);
                    break;
                }
            };
            if let Err(e) = self.insert_body(spec, id) {
                added = Err(e);
                break;
            }
            self.next_id += 1;
            ids.push(id);
        }
        if added.is_ok() {
            let slots: Vec<u32> = ids.iter().map(|id| self.ids[id].index).collect();
            added = self.new_body_overlaps(&slots);
        }
        match added {
            Ok(n) => self.spawned_body_overlaps += n,
            Err(e) => {
                // (Last first: the set reuses free slots last in, first out,
                // so the next bodies take the same slots, in order.)
                for &id in ids.iter().rev() {
                    self.withdraw_body(id);
                }
                self.next_id = first;
                return Err(e);
            }
        }
        // Sleeping cables they land in (a static or resting one would not
        // move, and so not wake them; it takes no hold from any).
        for &id in &ids {
            if let Some(b) = self.body(id) {
                let around = self.cable_region(b);
                self.wake_cables_in(&around, false);
            }
        }
        Ok(ids)
    }

    fn insert_body(&mut self, spec: &BodySpec, id: u64) -> Result<(), String> {
        let body = Body::from_spec(spec, id)?;
        let is_plane = body.shape.is_plane();
        let aabb = body.shape.aabb(&body.pose);
        let h = self.bodies.insert(body);
        self.ids.insert(id, h);
        if is_plane {
            self.planes.push(h.index);
        } else {
            self.broad
                .insert(h.index, aabb.expanded(self.settings.aabb_margin));
        }
        self.pending_moved.push(id);
        Ok(())
    }

    /// Removes a body; wakes what touched it. False when the id is unknown.
    pub fn remove_body(&mut self, id: u64) -> bool {
        let Some(h) = self.ids.remove(&id) else {
            return false;
        };
        let index = h.index;
        // Its island first: bodies resting on cables it holds up share it.
        self.wake_index(index);
        self.forget_supports_of_body(index);
        // And cables resting on it.
        if let Some(b) = self.bodies.get(h) {
            let around = self.cable_region(b);
            self.wake_cables_in(&around, true);
        }
        let mut touched = Vec::new();
        let removed = self.contacts.retain(|c| c.a != index && c.b != index);
        for c in &removed {
            touched.push(if c.a == index { c.b } else { c.a });
            // (As the last events left it: a pair that began on the
            // solver's push or an impact alone did not touch at its step's
            // start.)
            if c.was_touching {
                self.pending_events.push(self.end_event(c));
            }
        }
        for t in touched {
            self.wake_index(t);
        }
        self.planes.retain(|&p| p != index);
        if self.broad.contains(index) {
            self.broad.remove(index);
        }
        self.bodies.remove(h);
        true
    }

    /// Edits a body's state (any field None is left alone) and wakes it.
    ///
    /// The values are checked here, for every caller (REST's `PATCH` and
    /// the stream's `set_velocity` alike), as a scene's body is: a position
    /// within ±[`MAX_COORD`], velocities within ±[`MAX_SPEED`] and
    /// ±[`MAX_ANGULAR_SPEED`] on each axis, a finite non-zero rotation
    /// (`scene::check_vec`, one message for all). A velocity within those
    /// but faster overall is slowed to the speed caps at once, as the step
    /// would (`bounds::cap_speeds`).
    pub fn edit_body(
        &mut self,
        id: u64,
        position: Option<Vec3>,
        rotation: Option<Quat>,
        linear_velocity: Option<Vec3>,
        angular_velocity: Option<Vec3>,
    ) -> Result<(), String> {
        for (name, v, max) in [
            ("position", position, MAX_COORD),
            ("linear_velocity", linear_velocity, MAX_SPEED),
            ("angular_velocity", angular_velocity, MAX_ANGULAR_SPEED),
        ] {
            if let Some(v) = v {
                check_vec(name, v.to_array(), max)?;
            }
        }
        if let Some(q) = rotation {
            check_rotation(q)?;
        }
        let linear_velocity = linear_velocity.map(|v| v.clamp_length_max(MAX_SPEED));
        let angular_velocity = angular_velocity.map(|w| w.clamp_length_max(MAX_ANGULAR_SPEED));
        let h = *self
            .ids
            .get(&id)
            .ok_or_else(|| format!("body {id} not found"))?;
        // Where it may reach cables before the move.
        let before = self.cable_region(self.bodies.get(h).expect("id map and arena agree"));
        let b = self.bodies.get(h).expect("id map and arena agree");
        if b.is_static() && (linear_velocity.is_some() || angular_velocity.is_some()) {
            return Err("a static body has no velocity; make it kinematic".into());
        }
        let mut pose = b.pose;
        if let Some(p) = position {
            pose.position = p;
        }
        if let Some(q) = rotation {
            pose.rotation = super::math::unit_quat(q);
        }
        // Moved into other bodies: counted as a body added there
        // (`world/limits.rs`).
        if (position.is_some() || rotation.is_some() || linear_velocity.is_some())
            && !b.shape.is_plane()
        {
            let aabb = b.shape.aabb(&pose).expanded(self.settings.aabb_margin);
            let d = linear_velocity.unwrap_or(b.linear_velocity) * self.settings.dt;
            let box_then = aabb.swept(d);
            let box_then = (box_then.min, box_then.max);
            let n = self.body_overlaps(&[(h.index, box_then)], 0)?;
            self.spawned_body_overlaps += n;
        }
        let b = self.bodies.get_mut(h).expect("id map and arena agree");
        b.set_pose(pose);
        if let Some(v) = linear_velocity {
            b.linear_velocity = v;
        }
        if let Some(w) = angular_velocity {
            b.angular_velocity = w;
        }
        let aabb = b.shape.aabb(&b.pose);
        let is_plane = b.shape.is_plane();
        if !is_plane {
            self.broad
                .update(h.index, aabb.expanded(self.settings.aabb_margin));
        }
        if position.is_some() || rotation.is_some() {
            // Measured again where it now is, not recycled.
            for c in &mut self.contacts.contacts {
                if c.a == h.index || c.b == h.index {
                    c.frozen = None;
                }
            }
        }
        self.wake_index(h.index);
        self.forget_supports_of_body(h.index);
        // Moving a body wakes whatever it touches now or touched before.
        self.wake_neighbours(h.index);
        // Moved away: what rested on it wakes; moved into: what it meets.
        let after = self.cable_region(self.bodies.get(h).expect("id map and arena agree"));
        self.wake_cables_in(&before, true);
        self.wake_cables_in(&after, false);
        self.pending_moved.push(id);
        Ok(())
    }

    /// Applies a linear impulse (at a world point, or the centre of mass) and
    /// an optional angular impulse; wakes the body.
    ///
    /// The values are checked here, for every caller (REST and the stream
    /// alike): impulses within ±[`MAX_IMPULSE`] on each axis, the point
    /// within ±[`MAX_COORD`] (`scene::check_vec`, one message for all). An
    /// impulse that would take the body past the speed caps is applied and
    /// the body slowed to them at once.
    pub fn apply_impulse(
        &mut self,
        id: u64,
        impulse: Vec3,
        point: Option<Vec3>,
        angular: Option<Vec3>,
    ) -> Result<(), String> {
        check_vec("impulse", impulse.to_array(), MAX_IMPULSE)?;
        if let Some(p) = point {
            check_vec("point", p.to_array(), MAX_COORD)?;
        }
        if let Some(a) = angular {
            check_vec("angular_impulse", a.to_array(), MAX_IMPULSE)?;
        }
        let h = *self
            .ids
            .get(&id)
            .ok_or_else(|| format!("body {id} not found"))?;
        let b = self.bodies.get_mut(h).expect("id map and arena agree");
        if !b.is_dynamic() {
            return Err(format!("body {id} is not dynamic"));
        }
        b.apply_impulse(impulse, point);
        if let Some(l) = angular {
            b.apply_angular_impulse(l);
        }
        // The speed caps of `keep_in_bounds` at once (a paused world's
        // snapshot is taken before any step).
        bounds::cap_speeds(b);
        self.wake_index(h.index);
        self.pending_moved.push(id);
        Ok(())
    }

    /// Adds a force (N) applied at the centre of mass during the next step.
    pub fn add_force(&mut self, id: u64, force: Vec3) -> Result<(), String> {
        let h = *self
            .ids
            .get(&id)
            .ok_or_else(|| format!("body {id} not found"))?;
        let b = self.bodies.get_mut(h).expect("id map and arena agree");
        b.force += force;
        self.wake_index(h.index);
        Ok(())
    }

    /// Closest hit along a ray (direction need not be unit).
    pub fn raycast(&self, origin: Vec3, direction: Vec3, max_distance: f32) -> Option<WorldRayHit> {
        let len = direction.length();
        if len.is_nan() || len <= 0.0 || !origin.is_finite() || !max_distance.is_finite() {
            return None;
        }
        let dir = direction / len;
        let inv = dir.recip();
        let mut best: Option<WorldRayHit> = None;
        for (_, b) in self.bodies.iter() {
            let limit = best.map_or(max_distance, |h| h.distance);
            if !b.shape.is_plane() {
                let aabb: Aabb = b.shape.aabb(&b.pose);
                if aabb.ray_hit(origin, inv, limit).is_none() {
                    continue;
                }
            }
            if let Some(hit) = collision::ray_cast(&b.shape, &b.pose, origin, dir, limit) {
                if best.is_none_or(|h| hit.t < h.distance) {
                    best = Some(WorldRayHit {
                        body: b.id,
                        distance: hit.t,
                        point: hit.point,
                        normal: hit.normal,
                    });
                }
            }
        }
        best
    }

    /// A hash of every body's and cable's state (FNV-1a over the bits), for
    /// determinism checks.
    pub fn state_hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for i in 0..8 {
                h ^= (x >> (i * 8)) & 0xff;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for (_, b) in self.bodies.iter() {
            eat(b.id);
            let p = b.pose.position;
            let q = b.pose.rotation;
            for x in [p.x, p.y, p.z, q.x, q.y, q.z, q.w] {
                eat(x.to_bits() as u64);
            }
            for v in [b.linear_velocity, b.angular_velocity] {
                eat(v.x.to_bits() as u64);
                eat(v.y.to_bits() as u64);
                eat(v.z.to_bits() as u64);
            }
            eat(b.sleeping as u64);
        }
        for c in &self.cables {
            eat(c.id);
            for p in c.x.iter().chain(&c.v) {
                eat(p.x.to_bits() as u64);
                eat(p.y.to_bits() as u64);
                eat(p.z.to_bits() as u64);
            }
            eat(c.sleeping as u64);
        }
        h
    }

    // ------------------------------------------------------------------
    // The step.
    // ------------------------------------------------------------------

    /// Advances the world by one step of `settings.dt`, following the
    /// pipeline of DESIGN.md (commands were applied before the call).
    pub fn step(&mut self) {
        let start = Instant::now();
        let dt = self.settings.dt;
        self.events.clear();
        self.moved.clear();
        // 2. Velocities: gravity, forces and damping become per-second
        //    changes, integrated inside the solver's substeps.
        // 3. Broad phase: swept AABBs, overlapping pairs (too many: no step,
        //    no events; those pending wait for the next).
        self.update_broad_phase(dt);
        if self.body_pairs_fault() {
            let ms = start.elapsed().as_secs_f32() * 1000.0;
            (self.profile, self.ccd_stats) = (Default::default(), Default::default());
            (self.profile.broad_phase, self.profile.total) = (ms, ms);
            return;
        }
        self.spawned_body_overlaps = 0;
        self.events.append(&mut self.pending_events);
        self.moved.append(&mut self.pending_moved);
        let t = lap(&mut self.profile.broad_phase, start);
        // 4. Narrow phase: manifolds with feature ids, impulses carried over.
        self.update_contacts(dt);
        self.wake_touched_islands(dt);
        let t = lap(&mut self.profile.narrow_phase, t);
        // 6. Solve contacts (and 7. integrate positions) in substeps.
        self.prepare_solver();
        solver::solve(
            &mut self.solver_bodies,
            &mut self.constraints,
            dt,
            &self.settings.solver,
            &self.spins,
        );
        self.finish_bodies();
        let t = lap(&mut self.profile.solve, t);
        // 5. Continuous collision: fast bodies swept along the solved motion,
        //    impacts resolved in time order.
        self.continuous(dt);
        let t = lap(&mut self.profile.continuous, t);
        // 7. Cables, then islands and sleep.
        self.step_cables(dt);
        self.keep_in_bounds();
        self.update_sleep(dt);
        let t = lap(&mut self.profile.islands, t);
        // 8. Events: contact begin/end, moved bodies.
        self.collect_events();
        lap(&mut self.profile.events, t);

        self.tick += 1;
        self.time += dt as f64;
        self.profile.total = start.elapsed().as_secs_f32() * 1000.0;
    }

    fn is_active(b: &Body) -> bool {
        match b.kind {
            BodyKind::Dynamic => !b.sleeping,
            BodyKind::Kinematic => {
                b.linear_velocity != Vec3::ZERO || b.angular_velocity != Vec3::ZERO
            }
            BodyKind::Static => false,
        }
    }

    /// The touching contacts, each with its two bodies.
    fn touching(&self) -> impl Iterator<Item = (&Contact, &Body, &Body)> + '_ {
        self.contacts
            .contacts
            .iter()
            .filter(|c| c.touching)
            .map(|c| {
                let body = |i| self.bodies.by_index(i).unwrap();
                (c, body(c.a), body(c.b))
            })
    }

    fn prepare_solver(&mut self) {
        let g = self.settings.gravity;
        self.solver_bodies.clear();
        self.solver_bodies.push(SolverBody::STATIC);
        self.solver_index.clear();
        self.solver_index.resize(self.bodies.capacity(), 0);
        self.start_state.clear();
        self.start_state.push((Vec3::ZERO, Quat::IDENTITY));
        self.spins.clear();
        self.spins.push(None);
        for (h, b) in self.bodies.iter() {
            if b.is_static() || b.sleeping {
                continue;
            }
            self.solver_index[h.index as usize] = self.solver_bodies.len() as u32;
            self.start_state.push((b.com, b.pose.rotation));
            let dynamic = b.is_dynamic();
            self.spins.push(if dynamic {
                Spin::new(b.pose.rotation, b.inertia_local, b.inv_inertia_local)
            } else {
                None
            });
            self.solver_bodies.push(SolverBody {
                v: b.linear_velocity,
                w: b.angular_velocity,
                dp: Vec3::ZERO,
                dq: Quat::IDENTITY,
                dtheta: Vec3::ZERO,
                inv_mass: b.inv_mass,
                inv_i: b.inv_inertia_world,
                dv: if dynamic {
                    g + b.force * b.inv_mass
                } else {
                    Vec3::ZERO
                },
                dw: if dynamic {
                    b.inv_inertia_world * b.torque
                } else {
                    Vec3::ZERO
                },
                linear_damping: b.linear_damping,
                angular_damping: b.angular_damping,
            });
        }
        self.constraints.clear();
        self.constraint_contact.clear();
        let mut points: Vec<(Vec3, Vec3, f32, PointImpulse)> = Vec::with_capacity(4);
        for (ci, c) in self.contacts.contacts.iter().enumerate() {
            let (sa, sb) = (
                self.solver_index[c.a as usize],
                self.solver_index[c.b as usize],
            );
            if c.manifold.count == 0 || (sa == 0 && sb == 0) {
                continue;
            }
            let (ba, bb) = (
                self.bodies.by_index(c.a).unwrap(),
                self.bodies.by_index(c.b).unwrap(),
            );
            points.clear();
            for (i, p) in c.manifold.points().iter().enumerate() {
                points.push((p.point_a, p.point_b, p.separation, c.impulses[i]));
            }
            // A recycled manifold keeps the lever arms it was measured with.
            if let Some(f) = c.frozen.as_ref().filter(|_| c.recycled) {
                for (pt, fp) in points.iter_mut().zip(&f.points) {
                    pt.0 = ba.com + fp.arms[0];
                    pt.1 = bb.com + fp.arms[1];
                }
            }
            self.constraints.push(ContactConstraint::new(
                sa,
                sb,
                &self.solver_bodies[sa as usize],
                &self.solver_bodies[sb as usize],
                ba.com,
                bb.com,
                c.manifold.normal,
                &points,
                c.friction,
                c.restitution,
            ));
            self.constraint_contact.push(ci);
        }
        self.cable_support_constraints();
    }

    fn finish_bodies(&mut self) {
        for (h, b) in self.bodies.iter_mut() {
            let si = self.solver_index[h.index as usize];
            if si == 0 {
                continue;
            }
            let s = &self.solver_bodies[si as usize];
            let com = b.com + s.dp;
            let rot = (s.dq * b.pose.rotation).normalize();
            if com.is_finite() && rot.is_finite() && s.v.is_finite() && s.w.is_finite() {
                b.set_com_pose(com, rot);
                b.linear_velocity = s.v;
                b.angular_velocity = s.w;
            } else {
                // Last line of defence: never let a NaN into the world.
                b.linear_velocity = Vec3::ZERO;
                b.angular_velocity = Vec3::ZERO;
            }
            b.update_inertia();
            b.force = Vec3::ZERO;
            b.torque = Vec3::ZERO;
        }
        for (k, &ci) in self.constraint_contact.iter().enumerate() {
            let con = &self.constraints[k];
            let c = &mut self.contacts.contacts[ci];
            for i in 0..con.count {
                c.impulses[i] = con.point_impulse(i);
                c.total_impulse[i] = con.points[i].total_normal_impulse;
            }
        }
        // The cable supports' impulses, to start them with next step.
        let first = self.constraint_contact.len();
        for (k, &si) in self.support_constraints.iter().enumerate() {
            if let Some(sup) = self.cable_supports.get_mut(si) {
                sup.impulse = self.constraints[first + k].point_impulse(0);
            }
        }
    }

    /// Total kinetic energy of the dynamic bodies (J).
    pub fn kinetic_energy(&self) -> f32 {
        self.bodies().map(|b| b.kinetic_energy()).sum()
    }
}

fn lap(slot: &mut f32, since: Instant) -> Instant {
    let now = Instant::now();
    *slot = (now - since).as_secs_f32() * 1000.0;
    now
}
