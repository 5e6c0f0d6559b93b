//! The binary stream format (`?format=binary`): the same messages as the
//! JSON stream (hello, tick, ack, error), with quantized states, smallest-
//! three rotations and per-client deltas. proto/binary.md documents it byte
//! by byte; this file is its reference implementation.
//!
//! A [`BinaryEncoder`] serves one group of subscribers that receive the same
//! frames (same format and `every`): it remembers, per body id, the quantized
//! state last sent (the *baseline*). [`BinaryEncoder::encode_tick`] sends only
//! the bodies whose quantized state differs from the baseline, each as
//! residuals against a prediction from the baseline (velocities against the
//! previous velocities, positions and rotations against the previous ones
//! moved by the new velocities over the frame interval). A [`BinaryDecoder`]
//! holds the same baseline and so rebuilds the same integers.
//!
//! Baseline rules (both sides, in this order inside a tick): spawned bodies
//! enter it with their spec's state, removed ids leave it (so a body spawned
//! and removed between two frames leaves no trace), listed bodies take their
//! new state (an id the baseline does not know starts from the all-zero
//! state). A hello replaces the whole baseline.
//!
//! Cables have a baseline of their own: per cable id, its quantized points
//! in the last two frames that carried it. A cable it holds is sent as
//! residuals against the points moved on as over the last frame
//! (`2·now − before`); one it does not (new, or after
//! [`BinaryEncoder::forget_cables`] for a joining subscriber) as a key frame.
//! Removed ids and a hello clear it too.

use super::quantize::{
    decode_normal, dequantize3, encode_normal, predict_position, predict_rotation, prediction_dt,
    quantize3, unzigzag32, unzigzag64, zigzag32, zigzag64, QRot, QState, POSITION_SCALE,
    ROTATION_BITS, ROTATION_MAX,
};
use super::wire::{
    put_f32, put_f64, put_i16, put_str, put_u8, put_varint, BitReader, BitWriter, ByteReader,
};
use super::{Body, BodyState, CableState, ServerMessage, StepMs, WorldInfo};
use crate::physics::events::{ContactEvent, ContactEventKind};
use crate::physics::scene::{BodyKind, ShapeSpec};
use std::collections::HashMap;

pub use super::wire::DecodeError;

/// First byte of every frame (2: cables quantized and predicted; 1 sent
/// them as plain `f32`s).
pub const VERSION: u8 = 2;

/// Second byte of every frame: the message type.
pub mod message {
    pub const HELLO: u8 = 1;
    pub const TICK: u8 = 2;
    pub const ACK: u8 = 3;
    pub const ERROR: u8 = 4;
}

/// Bits of a tick's section byte: which sections follow, in this order.
pub mod section {
    pub const SPAWNED: u8 = 1;
    pub const REMOVED: u8 = 2;
    pub const BODIES: u8 = 4;
    pub const CONTACTS: u8 = 8;
    pub const CABLES: u8 = 16;
}

/// Bits of a body record's field mask: which residuals follow, in this order.
mod field {
    pub const V: u64 = 1;
    pub const W: u64 = 2;
    pub const P: u64 = 4;
    pub const Q: u64 = 8;
}

/// Bits of a body spec's flag byte.
mod spec_flag {
    pub const CCD: u8 = 1;
    pub const SLEEPING_KNOWN: u8 = 2;
    pub const SLEEPING: u8 = 4;
    pub const DENSITY: u8 = 8;
    pub const MASS: u8 = 16;
    pub const LABEL: u8 = 32;
    pub const MARGIN: u8 = 64;
    pub const ID: u8 = 128;
}

/// Bits of a contact's head byte.
mod contact_flag {
    pub const END: u8 = 1;
    pub const IMPULSE: u8 = 2;
}

/// Smallest body record in the bit section: a 1-bit id gap and the mask.
const MIN_RECORD_BITS: usize = 5;
/// Smallest contact: head, a, b − a, three point bytes, the normal.
const MIN_CONTACT_BYTES: usize = 10;
/// Smallest cable record in the bit section: a 1-bit id gap, the key bit,
/// and (a key frame) a 1-bit count.
const MIN_CABLE_BITS: usize = 3;
/// Smallest point in a cable record: three 1-bit residuals.
const MIN_POINT_BITS: usize = 3;

/// What a group's frames last told of a cable: its quantized points in the
/// last frame that carried it (`now`) and in the one before (`before`; the
/// same after a key frame). The next frame predicts `2·now − before`.
#[derive(Clone, Debug, Default, PartialEq)]
struct CableBase {
    before: Vec<[i32; 3]>,
    now: Vec<[i32; 3]>,
}

impl CableBase {
    fn key(points: Vec<[i32; 3]>) -> Self {
        Self {
            before: points.clone(),
            now: points,
        }
    }

    /// The prediction of point `k` (wrapping i32).
    fn predict(&self, k: usize) -> [i32; 3] {
        let (a, b) = (self.now[k], self.before[k]);
        [0, 1, 2].map(|i| a[i].wrapping_add(a[i].wrapping_sub(b[i])))
    }

    /// The next frame's points become `now`.
    fn advance(&mut self, points: Vec<[i32; 3]>) {
        self.before = std::mem::replace(&mut self.now, points);
    }
}

// ----------------------------------------------------------------------
// Encoder.
// ----------------------------------------------------------------------

/// Encodes the frames of one subscriber group; see the module docs.
#[derive(Default)]
pub struct BinaryEncoder {
    base: HashMap<u64, QState>,
    /// Per cable id: what this group's frames last told of it.
    cables: HashMap<u64, CableBase>,
    /// Time of the last frame sent (hello or tick): predictions extrapolate
    /// from it.
    time: f64,
    scratch: Vec<(u64, QState)>,
    ids: Vec<u64>,
    bits: BitWriter,
}

impl BinaryEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of bodies in the baseline.
    pub fn baseline_len(&self) -> usize {
        self.base.len()
    }

    /// The quantized state last sent for `id`, dequantized.
    pub fn baseline_state(&self, id: u64) -> Option<BodyState> {
        self.base.get(&id).map(|q| q.to_state(id))
    }

    /// A hello with the full state of `bodies`; the baseline becomes exactly
    /// that state (bodies without an id are sent but not tracked).
    pub fn encode_hello(&mut self, world: &WorldInfo, bodies: &[Body]) -> Vec<u8> {
        self.base.clear();
        self.cables.clear();
        for b in bodies {
            if let Some(id) = b.id {
                self.base.insert(id, spec_state(b));
            }
        }
        self.time = world.time;
        self.write_hello(world, bodies, world.time, false)
    }

    /// A hello for a subscriber joining this group (or resynchronized into
    /// it after falling behind) that leaves the group's baseline untouched:
    /// bodies the baseline knows are sent in their baseline state (what the
    /// other subscribers hold), others in their spec's state, and the
    /// prediction time is the group's last frame time. The next group tick
    /// then decodes correctly for the newcomer.
    pub fn encode_join_hello(&self, world: &WorldInfo, bodies: &[Body]) -> Vec<u8> {
        self.write_hello(world, bodies, self.time, true)
    }

    /// Forgets the cables: the next tick sends each cable it carries as a
    /// key frame (a hello carries no cables, so a subscriber that joins
    /// needs one of every cable; the caller then passes every cable).
    pub fn forget_cables(&mut self) {
        self.cables.clear();
    }

    fn write_hello(
        &self,
        world: &WorldInfo,
        bodies: &[Body],
        time: f64,
        from_baseline: bool,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 48 * bodies.len());
        out.push(VERSION);
        out.push(message::HELLO);
        put_f64(&mut out, time);
        put_world(&mut out, world);
        put_varint(&mut out, bodies.len() as u64);
        let mut record = Vec::with_capacity(64);
        for b in bodies {
            let state = match (from_baseline, b.id.and_then(|id| self.base.get(&id))) {
                (true, Some(q)) => *q,
                _ => spec_state(b),
            };
            put_body(&mut out, &mut record, b, &state);
        }
        out
    }

    /// A tick frame. `states` may list every body or only those that moved
    /// (in any order; for a repeated id the last wins; ids in `removed` are
    /// skipped): only bodies whose quantized state differs from the baseline
    /// are sent. `spawned` bodies enter the baseline (with their spec's
    /// state) and then `removed` ids leave it, before `states` is compared.
    /// Contacts are all sent.
    pub fn encode_tick(
        &mut self,
        tick: u64,
        time: f64,
        states: &[BodyState],
        contacts: &[ContactEvent],
        spawned: &[Body],
        removed: &[u64],
    ) -> Vec<u8> {
        self.encode_tick_with_cables(tick, time, states, contacts, spawned, removed, &[])
    }

    /// [`Self::encode_tick`] with a cables section: the particle positions
    /// of `cables`, quantized, as residuals against the cable baseline or
    /// as key frames (proto/binary.md, **cables**).
    #[allow(clippy::too_many_arguments)]
    pub fn encode_tick_with_cables(
        &mut self,
        tick: u64,
        time: f64,
        states: &[BodyState],
        contacts: &[ContactEvent],
        spawned: &[Body],
        removed: &[u64],
        cables: &[CableState],
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        out.push(VERSION);
        out.push(message::TICK);
        put_varint(&mut out, tick);
        put_f64(&mut out, time);
        let flags_at = out.len();
        out.push(0);
        let mut flags = 0u8;

        if !spawned.is_empty() {
            flags |= section::SPAWNED;
            put_varint(&mut out, spawned.len() as u64);
            let mut record = Vec::with_capacity(64);
            for b in spawned {
                let state = spec_state(b);
                if let Some(id) = b.id {
                    self.base.insert(id, state);
                }
                put_body(&mut out, &mut record, b, &state);
            }
        }

        self.ids.clear();
        self.ids.extend_from_slice(removed);
        self.ids.sort_unstable();
        self.ids.dedup();
        if !removed.is_empty() {
            flags |= section::REMOVED;
            put_varint(&mut out, self.ids.len() as u64);
            let mut next = 0u64;
            for &id in &self.ids {
                self.base.remove(&id);
                self.cables.remove(&id);
                put_varint(&mut out, id - next);
                next = id.wrapping_add(1);
            }
        }

        let dt = prediction_dt(time, self.time);
        self.scratch.clear();
        self.scratch
            .extend(states.iter().map(|s| (s.id, QState::of(s))));
        // Stable: among equal ids the input order stays, and the last wins.
        self.scratch.sort_by_key(|&(id, _)| id);
        self.bits.clear();
        let mut count = 0u64;
        let mut next: u128 = 0;
        for i in 0..self.scratch.len() {
            let (id, new) = self.scratch[i];
            if self.scratch.get(i + 1).is_some_and(|&(n, _)| n == id)
                || self.ids.binary_search(&id).is_ok()
            {
                continue;
            }
            let old = self.base.insert(id, new);
            if old == Some(new) {
                continue;
            }
            let old = old.unwrap_or_default();
            self.bits.exp_golomb((id as u128 - next) as u64);
            next = id as u128 + 1;
            write_body_delta(&mut self.bits, &old, &new, dt);
            count += 1;
        }
        if count > 0 {
            flags |= section::BODIES;
            put_varint(&mut out, count);
            let bytes = self.bits.finish();
            put_varint(&mut out, bytes.len() as u64);
            out.extend_from_slice(bytes);
        }

        if !contacts.is_empty() {
            flags |= section::CONTACTS;
            put_varint(&mut out, contacts.len() as u64);
            for c in contacts {
                let reference = self.base.get(&c.b).map_or([0; 3], |q| q.p);
                put_contact(&mut out, c, reference);
            }
        }

        if !cables.is_empty() {
            flags |= section::CABLES;
            self.write_cables(&mut out, cables);
        }

        out[flags_at] = flags;
        self.time = time;
        out
    }

    /// The cables section: each cable (ascending id; a repeated id is sent
    /// once, the last) as residuals against its prediction, or as a key
    /// frame (its first point, then each point less the one before) when
    /// the baseline does not hold it with as many points.
    fn write_cables(&mut self, out: &mut Vec<u8>, cables: &[CableState]) {
        let mut order: Vec<usize> = (0..cables.len()).collect();
        // Stable: among equal ids the last is kept.
        order.sort_by_key(|&k| cables[k].id);
        order.dedup_by(|later, kept| {
            let same = cables[*later].id == cables[*kept].id;
            if same {
                *kept = *later;
            }
            same
        });
        self.bits.clear();
        let mut next: u128 = 0;
        for &k in &order {
            let c = &cables[k];
            let points: Vec<[i32; 3]> = c
                .points
                .iter()
                .map(|p| quantize3(*p, POSITION_SCALE))
                .collect();
            self.bits.exp_golomb((c.id as u128 - next) as u64);
            next = c.id as u128 + 1;
            match self.cables.get_mut(&c.id) {
                Some(base) if base.now.len() == points.len() => {
                    self.bits.bit(false);
                    for (k, p) in points.iter().enumerate() {
                        write_residual(&mut self.bits, *p, base.predict(k));
                    }
                    base.advance(points);
                }
                _ => {
                    self.bits.bit(true);
                    self.bits.exp_golomb(points.len() as u64);
                    let mut last = [0; 3];
                    for p in &points {
                        write_residual(&mut self.bits, *p, last);
                        last = *p;
                    }
                    self.cables.insert(c.id, CableBase::key(points));
                }
            }
        }
        put_varint(out, order.len() as u64);
        let bytes = self.bits.finish();
        put_varint(out, bytes.len() as u64);
        out.extend_from_slice(bytes);
    }

    /// An ack frame (stateless).
    pub fn encode_ack(seq: u64) -> Vec<u8> {
        let mut out = vec![VERSION, message::ACK];
        put_varint(&mut out, seq);
        out
    }

    /// An error frame (stateless).
    pub fn encode_error(seq: Option<u64>, code: &str, message: &str) -> Vec<u8> {
        let mut out = vec![VERSION, message::ERROR, seq.is_some() as u8];
        if let Some(seq) = seq {
            put_varint(&mut out, seq);
        }
        put_str(&mut out, code);
        put_str(&mut out, message);
        out
    }
}

/// The quantized state a body spec carries.
fn spec_state(b: &Body) -> QState {
    QState::from_parts(
        b.position,
        b.rotation,
        b.linear_velocity,
        b.angular_velocity,
    )
}

/// One body's residuals in the bit section: the field mask, then each
/// present field. `old` is the baseline, `new` the state to send.
fn write_body_delta(bits: &mut BitWriter, old: &QState, new: &QState, dt: f64) {
    let p_pred = predict_position(old.p, new.v, dt);
    let q_pred = predict_rotation(old.q, new.w, dt);
    let mut mask = 0;
    if new.v != old.v {
        mask |= field::V;
    }
    if new.w != old.w {
        mask |= field::W;
    }
    if new.p != p_pred {
        mask |= field::P;
    }
    if new.q != q_pred {
        mask |= field::Q;
    }
    bits.write(mask, 4);
    if mask & field::V != 0 {
        write_residual(bits, new.v, old.v);
    }
    if mask & field::W != 0 {
        write_residual(bits, new.w, old.w);
    }
    if mask & field::P != 0 {
        write_residual(bits, new.p, p_pred);
    }
    if mask & field::Q != 0 {
        if new.q.index == q_pred.index {
            bits.bit(false);
            write_residual(bits, new.q.c, q_pred.c);
        } else {
            bits.bit(true);
            bits.write(new.q.index as u64, 2);
            for c in new.q.c {
                bits.write((c + ROTATION_MAX) as u64, ROTATION_BITS);
            }
        }
    }
}

/// Three residuals `new − predicted` (wrapping i32), each zigzagged and
/// written as an Exp-Golomb code.
fn write_residual(bits: &mut BitWriter, new: [i32; 3], predicted: [i32; 3]) {
    for k in 0..3 {
        bits.exp_golomb(zigzag32(new[k].wrapping_sub(predicted[k])) as u64);
    }
}

fn put_world(out: &mut Vec<u8>, w: &WorldInfo) {
    put_str(out, &w.id);
    put_str(out, &w.name);
    put_f64(out, w.tick_hz);
    for g in w.gravity {
        put_f32(out, g);
    }
    put_u8(out, w.paused as u8);
    put_varint(out, w.tick);
    put_f64(out, w.time);
    put_varint(out, w.body_count as u64);
    put_f64(out, w.step_ms.last);
    put_f64(out, w.step_ms.mean);
    put_f64(out, w.step_ms.max);
}

/// A body spec as a length-prefixed record, its state given as `state`.
fn put_body(out: &mut Vec<u8>, rec: &mut Vec<u8>, b: &Body, state: &QState) {
    rec.clear();
    let mut flags = 0u8;
    if b.ccd {
        flags |= spec_flag::CCD;
    }
    if let Some(s) = b.sleeping {
        flags |= spec_flag::SLEEPING_KNOWN;
        if s {
            flags |= spec_flag::SLEEPING;
        }
    }
    if b.density.is_some() {
        flags |= spec_flag::DENSITY;
    }
    if b.mass.is_some() {
        flags |= spec_flag::MASS;
    }
    if b.label.is_some() {
        flags |= spec_flag::LABEL;
    }
    if b.margin != 0.0 {
        flags |= spec_flag::MARGIN;
    }
    if b.id.is_some() {
        flags |= spec_flag::ID;
    }
    rec.push(flags);
    if let Some(id) = b.id {
        put_varint(rec, id);
    }
    rec.push(match b.kind {
        BodyKind::Dynamic => 0,
        BodyKind::Static => 1,
        BodyKind::Kinematic => 2,
    });
    put_shape(rec, &b.shape);
    for x in state.p {
        put_varint(rec, zigzag32(x) as u64);
    }
    let q = state.q.pack();
    rec.extend_from_slice(&q.to_le_bytes()[..6]);
    for x in state.v.iter().chain(&state.w) {
        put_varint(rec, zigzag32(*x) as u64);
    }
    for x in [
        b.friction,
        b.restitution,
        b.linear_damping,
        b.angular_damping,
    ] {
        put_f32(rec, x);
    }
    if let Some(d) = b.density {
        put_f32(rec, d);
    }
    if let Some(m) = b.mass {
        put_f32(rec, m);
    }
    if b.margin != 0.0 {
        put_f32(rec, b.margin);
    }
    if let Some(l) = &b.label {
        put_str(rec, l);
    }
    put_varint(out, rec.len() as u64);
    out.extend_from_slice(rec);
}

fn put_shape(out: &mut Vec<u8>, s: &ShapeSpec) {
    match s {
        ShapeSpec::Sphere { radius } => {
            out.push(0);
            put_f32(out, *radius);
        }
        ShapeSpec::Box { half_extents } => {
            out.push(1);
            half_extents.iter().for_each(|x| put_f32(out, *x));
        }
        ShapeSpec::Capsule {
            half_height,
            radius,
        } => {
            out.push(2);
            put_f32(out, *half_height);
            put_f32(out, *radius);
        }
        ShapeSpec::Cylinder {
            half_height,
            radius,
        } => {
            out.push(3);
            put_f32(out, *half_height);
            put_f32(out, *radius);
        }
        ShapeSpec::Cone {
            half_height,
            radius,
        } => {
            out.push(4);
            put_f32(out, *half_height);
            put_f32(out, *radius);
        }
        ShapeSpec::ConvexHull { points } => {
            out.push(5);
            put_varint(out, points.len() as u64);
            points.iter().flatten().for_each(|x| put_f32(out, *x));
        }
        ShapeSpec::Plane { normal, offset } => {
            out.push(6);
            normal.iter().for_each(|x| put_f32(out, *x));
            put_f32(out, *offset);
        }
    }
}

/// A contact: head byte, a, b − a, the point relative to b's baseline
/// position, the octahedral normal, and the impulse unless it is zero.
fn put_contact(out: &mut Vec<u8>, c: &ContactEvent, reference: [i32; 3]) {
    let mut head = 0u8;
    if c.kind == ContactEventKind::End {
        head |= contact_flag::END;
    }
    if c.impulse != 0.0 {
        head |= contact_flag::IMPULSE;
    }
    out.push(head);
    put_varint(out, c.a);
    put_varint(out, zigzag64(c.b.wrapping_sub(c.a) as i64));
    let p = quantize3(c.point, POSITION_SCALE);
    for k in 0..3 {
        put_varint(out, zigzag32(p[k].wrapping_sub(reference[k])) as u64);
    }
    for x in encode_normal(c.normal) {
        put_i16(out, x);
    }
    if head & contact_flag::IMPULSE != 0 {
        put_f32(out, c.impulse);
    }
}

// ----------------------------------------------------------------------
// Decoder.
// ----------------------------------------------------------------------

/// Decodes the frames of one stream; mirrors [`BinaryEncoder`]. A frame that
/// fails to decode leaves the decoder as it was.
#[derive(Default)]
pub struct BinaryDecoder {
    base: HashMap<u64, QState>,
    cables: HashMap<u64, CableBase>,
    time: f64,
}

impl BinaryDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Current state of body `id` as the stream has told it (dequantized).
    pub fn state(&self, id: u64) -> Option<BodyState> {
        self.base.get(&id).map(|q| q.to_state(id))
    }

    /// Every known body's state, by ascending id.
    pub fn states(&self) -> Vec<BodyState> {
        let mut v: Vec<BodyState> = self.base.iter().map(|(id, q)| q.to_state(*id)).collect();
        v.sort_by_key(|s| s.id);
        v
    }

    /// Number of bodies the decoder tracks.
    pub fn len(&self) -> usize {
        self.base.len()
    }

    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// The quantized state of `id` (for tests comparing with an encoder).
    pub fn quantized(&self, id: u64) -> Option<QState> {
        self.base.get(&id).copied()
    }

    /// Decodes one frame. Tick bodies are returned dequantized, in ascending
    /// id order; hello and spawned bodies carry their quantized state.
    pub fn decode(&mut self, frame: &[u8]) -> Result<ServerMessage, DecodeError> {
        let mut r = ByteReader::new(frame);
        let version = r.u8()?;
        if version != VERSION {
            return Err(DecodeError {
                offset: 0,
                reason: "unknown protocol version",
            });
        }
        let msg = match r.u8()? {
            message::HELLO => self.decode_hello(&mut r)?,
            message::TICK => self.decode_tick(&mut r)?,
            message::ACK => ServerMessage::Ack { seq: r.varint()? },
            message::ERROR => {
                let flags = r.u8()?;
                if flags > 1 {
                    return Err(r.error("unknown error flags"));
                }
                let seq = if flags == 1 { Some(r.varint()?) } else { None };
                ServerMessage::Error {
                    seq,
                    code: r.str()?,
                    message: r.str()?,
                }
            }
            _ => {
                return Err(DecodeError {
                    offset: 1,
                    reason: "unknown message type",
                })
            }
        };
        r.finish()?;
        Ok(msg)
    }

    fn decode_hello(&mut self, r: &mut ByteReader) -> Result<ServerMessage, DecodeError> {
        let time = r.f64()?;
        let world = read_world(r)?;
        let n = r.count(1)?;
        let mut bodies = Vec::with_capacity(n);
        let mut base = HashMap::with_capacity(n);
        for _ in 0..n {
            let (body, state) = read_body(r)?;
            if let Some(id) = body.id {
                base.insert(id, state);
            }
            bodies.push(body);
        }
        r.finish()?;
        self.base = base;
        self.cables.clear();
        self.time = time;
        Ok(ServerMessage::Hello {
            world,
            bodies,
            cables: Vec::new(),
        })
    }

    fn decode_tick(&mut self, r: &mut ByteReader) -> Result<ServerMessage, DecodeError> {
        let tick = r.varint()?;
        let time = r.f64()?;
        let flags = r.u8()?;
        if flags & !0x1f != 0 {
            return Err(r.error("unknown section flags"));
        }
        // Changes are staged and applied only once the frame has decoded.
        let mut staged: HashMap<u64, Option<QState>> = HashMap::new();
        let get = |staged: &HashMap<u64, Option<QState>>, id: u64| match staged.get(&id) {
            Some(s) => *s,
            None => self.base.get(&id).copied(),
        };

        let mut spawned = Vec::new();
        if flags & section::SPAWNED != 0 {
            let n = r.count(1)?;
            spawned.reserve(n);
            for _ in 0..n {
                let (body, state) = read_body(r)?;
                if let Some(id) = body.id {
                    staged.insert(id, Some(state));
                }
                spawned.push(body);
            }
        }

        let mut removed = Vec::new();
        if flags & section::REMOVED != 0 {
            let n = r.count(1)?;
            removed.reserve(n);
            let mut next = 0u64;
            let mut first = true;
            for _ in 0..n {
                let gap = r.varint()?;
                if !first && next == 0 {
                    return Err(r.error("removed id overflows 64 bits"));
                }
                let id = next
                    .checked_add(gap)
                    .ok_or_else(|| r.error("removed id overflows 64 bits"))?;
                next = id.wrapping_add(1);
                first = false;
                staged.insert(id, None);
                removed.push(id);
            }
        }

        let mut bodies = Vec::new();
        if flags & section::BODIES != 0 {
            let (n, mut bits) = bit_section(
                r,
                MIN_RECORD_BITS,
                "body count larger than the bit section can hold",
            )?;
            let dt = prediction_dt(time, self.time);
            bodies.reserve(n as usize);
            let mut next: u128 = 0;
            for _ in 0..n {
                let gap = bits.exp_golomb()?;
                let id = next + gap as u128;
                let id = u64::try_from(id).map_err(|_| bits.error("body id overflows 64 bits"))?;
                next = id as u128 + 1;
                let old = get(&staged, id).unwrap_or_default();
                let new = read_body_delta(&mut bits, &old, dt)?;
                staged.insert(id, Some(new));
                bodies.push(new.to_state(id));
            }
            bits.finish()?;
        }

        let mut contacts = Vec::new();
        if flags & section::CONTACTS != 0 {
            let n = r.count(MIN_CONTACT_BYTES)?;
            contacts.reserve(n);
            for _ in 0..n {
                contacts.push(read_contact(r, |b| get(&staged, b).map(|q| q.p))?);
            }
        }

        let mut cables = Vec::new();
        let mut cable_bases: Vec<(u64, CableBase)> = Vec::new();
        if flags & section::CABLES != 0 {
            let (n, mut bits) = bit_section(
                r,
                MIN_CABLE_BITS,
                "cable count larger than the bit section can hold",
            )?;
            cables.reserve(n as usize);
            let mut next: u128 = 0;
            for _ in 0..n {
                let gap = bits.exp_golomb()?;
                let id = next + gap as u128;
                let id = u64::try_from(id).map_err(|_| bits.error("cable id overflows 64 bits"))?;
                next = id as u128 + 1;
                // Removed in this frame: the baseline no longer holds it.
                let known = staged.get(&id).is_none_or(|s| s.is_some());
                let points = if bits.bit()? {
                    let m = bits.exp_golomb()?;
                    if m < 2 {
                        return Err(bits.error("a cable of fewer than two points"));
                    }
                    if m > (bits.bits_left() / MIN_POINT_BITS) as u64 {
                        return Err(bits.error("point count larger than the bit section can hold"));
                    }
                    let mut last = [0; 3];
                    let mut points = Vec::with_capacity(m as usize);
                    for _ in 0..m {
                        last = read_residual(&mut bits, last)?;
                        points.push(last);
                    }
                    cable_bases.push((id, CableBase::key(points.clone())));
                    points
                } else {
                    let base = self.cables.get(&id).filter(|_| known).ok_or_else(|| {
                        bits.error("cable residuals for a cable not in the baseline")
                    })?;
                    let mut points = Vec::with_capacity(base.now.len());
                    for k in 0..base.now.len() {
                        points.push(read_residual(&mut bits, base.predict(k))?);
                    }
                    let mut next_base = base.clone();
                    next_base.advance(points.clone());
                    cable_bases.push((id, next_base));
                    points
                };
                cables.push(CableState {
                    id,
                    points: points
                        .iter()
                        .map(|p| dequantize3(*p, POSITION_SCALE))
                        .collect(),
                });
            }
            bits.finish()?;
        }
        r.finish()?;

        for (id, s) in staged {
            match s {
                Some(q) => {
                    self.base.insert(id, q);
                }
                None => {
                    self.base.remove(&id);
                    self.cables.remove(&id);
                }
            }
        }
        self.cables.extend(cable_bases);
        self.time = time;
        Ok(ServerMessage::Tick {
            tick,
            time,
            bodies,
            contacts,
            spawned,
            removed,
            cables,
        })
    }
}

/// A section of `n` records in a bit section: `varint n`, `varint len`,
/// then `len` bytes of bits; `n` more than the bits can hold at
/// `min_bits` a record is the error `too_many`.
fn bit_section<'a>(
    r: &mut ByteReader<'a>,
    min_bits: usize,
    too_many: &'static str,
) -> Result<(u64, BitReader<'a>), DecodeError> {
    let n = r.varint()?;
    let len = r.varint()?;
    if len > r.remaining() as u64 {
        return Err(r.error("bit section longer than the frame"));
    }
    let mut sub = r.sub(len as usize)?;
    let base_offset = sub.offset();
    let data = sub.bytes(len as usize)?;
    let bits = BitReader::new(data, base_offset);
    if n > (bits.bits_left() / min_bits) as u64 {
        return Err(r.error(too_many));
    }
    Ok((n, bits))
}

fn read_body_delta(bits: &mut BitReader, old: &QState, dt: f64) -> Result<QState, DecodeError> {
    let mask = bits.read(4)?;
    let v = if mask & field::V != 0 {
        read_residual(bits, old.v)?
    } else {
        old.v
    };
    let w = if mask & field::W != 0 {
        read_residual(bits, old.w)?
    } else {
        old.w
    };
    let p_pred = predict_position(old.p, v, dt);
    let p = if mask & field::P != 0 {
        read_residual(bits, p_pred)?
    } else {
        p_pred
    };
    let q_pred = predict_rotation(old.q, w, dt);
    let q = if mask & field::Q != 0 {
        if bits.bit()? {
            let index = bits.read(2)? as u8;
            let mut c = [0i32; 3];
            for x in &mut c {
                *x = bits.read(ROTATION_BITS)? as i32 - ROTATION_MAX;
            }
            QRot { index, c }
        } else {
            QRot {
                index: q_pred.index,
                c: read_residual(bits, q_pred.c)?,
            }
        }
    } else {
        q_pred
    };
    if !q.is_valid() {
        return Err(bits.error("rotation component out of range"));
    }
    Ok(QState { p, q, v, w })
}

fn read_residual(bits: &mut BitReader, predicted: [i32; 3]) -> Result<[i32; 3], DecodeError> {
    let mut out = predicted;
    for x in &mut out {
        let z = u32::try_from(bits.exp_golomb()?)
            .map_err(|_| bits.error("residual overflows 32 bits"))?;
        *x = x.wrapping_add(unzigzag32(z));
    }
    Ok(out)
}

fn read_world(r: &mut ByteReader) -> Result<WorldInfo, DecodeError> {
    let id = r.str()?;
    let name = r.str()?;
    let tick_hz = r.f64()?;
    let gravity = [r.f32()?, r.f32()?, r.f32()?];
    let paused = match r.u8()? {
        0 => false,
        1 => true,
        _ => return Err(r.error("paused must be 0 or 1")),
    };
    let tick = r.varint()?;
    let time = r.f64()?;
    let body_count =
        usize::try_from(r.varint()?).map_err(|_| r.error("body_count overflows usize"))?;
    let step_ms = StepMs {
        last: r.f64()?,
        mean: r.f64()?,
        max: r.f64()?,
    };
    Ok(WorldInfo {
        id,
        name,
        tick_hz,
        gravity,
        paused,
        tick,
        time,
        body_count,
        step_ms,
        // (Not in the binary hello: a fault reaches binary subscribers as
        // an error message.)
        fault: None,
    })
}

/// A length-prefixed body record: the spec (its state dequantized) and the
/// quantized state. Bytes after the known fields inside the record are
/// skipped (room for later versions).
fn read_body(outer: &mut ByteReader) -> Result<(Body, QState), DecodeError> {
    let len = outer.varint()?;
    if len > outer.remaining() as u64 {
        return Err(outer.error("body record longer than the frame"));
    }
    let mut r = outer.sub(len as usize)?;
    let flags = r.u8()?;
    let id = if flags & spec_flag::ID != 0 {
        Some(r.varint()?)
    } else {
        None
    };
    let kind = match r.u8()? {
        0 => BodyKind::Dynamic,
        1 => BodyKind::Static,
        2 => BodyKind::Kinematic,
        _ => return Err(r.error("unknown body kind")),
    };
    let shape = read_shape(&mut r)?;
    let mut p = [0i32; 3];
    for x in &mut p {
        *x = unzigzag32(r.varint32()?);
    }
    let q = QRot::unpack(r.u48()?).ok_or_else(|| r.error("rotation component out of range"))?;
    let mut v = [0i32; 3];
    let mut w = [0i32; 3];
    for x in v.iter_mut().chain(&mut w) {
        *x = unzigzag32(r.varint32()?);
    }
    let state = QState { p, q, v, w };
    let friction = r.f32()?;
    let restitution = r.f32()?;
    let linear_damping = r.f32()?;
    let angular_damping = r.f32()?;
    let density = (flags & spec_flag::DENSITY != 0)
        .then(|| r.f32())
        .transpose()?;
    let mass = (flags & spec_flag::MASS != 0)
        .then(|| r.f32())
        .transpose()?;
    let margin = if flags & spec_flag::MARGIN != 0 {
        r.f32()?
    } else {
        0.0
    };
    let label = (flags & spec_flag::LABEL != 0)
        .then(|| r.str())
        .transpose()?;
    let sleeping =
        (flags & spec_flag::SLEEPING_KNOWN != 0).then_some(flags & spec_flag::SLEEPING != 0);
    let s = state.to_state(0);
    let body = Body {
        id,
        kind,
        shape,
        position: s.p,
        rotation: s.q,
        linear_velocity: s.v,
        angular_velocity: s.w,
        density,
        mass,
        friction,
        restitution,
        linear_damping,
        angular_damping,
        margin,
        ccd: flags & spec_flag::CCD != 0,
        label,
        sleeping,
    };
    Ok((body, state))
}

fn read_shape(r: &mut ByteReader) -> Result<ShapeSpec, DecodeError> {
    Ok(match r.u8()? {
        0 => ShapeSpec::Sphere { radius: r.f32()? },
        1 => ShapeSpec::Box {
            half_extents: [r.f32()?, r.f32()?, r.f32()?],
        },
        2 => ShapeSpec::Capsule {
            half_height: r.f32()?,
            radius: r.f32()?,
        },
        3 => ShapeSpec::Cylinder {
            half_height: r.f32()?,
            radius: r.f32()?,
        },
        4 => ShapeSpec::Cone {
            half_height: r.f32()?,
            radius: r.f32()?,
        },
        5 => {
            let n = r.count(12)?;
            let mut points = Vec::with_capacity(n);
            for _ in 0..n {
                points.push([r.f32()?, r.f32()?, r.f32()?]);
            }
            ShapeSpec::ConvexHull { points }
        }
        6 => ShapeSpec::Plane {
            normal: [r.f32()?, r.f32()?, r.f32()?],
            offset: r.f32()?,
        },
        _ => return Err(r.error("unknown shape type")),
    })
}

fn read_contact(
    r: &mut ByteReader,
    position_of: impl Fn(u64) -> Option<[i32; 3]>,
) -> Result<ContactEvent, DecodeError> {
    let head = r.u8()?;
    if head & !0x03 != 0 {
        return Err(r.error("unknown contact flags"));
    }
    let a = r.varint()?;
    let b = a.wrapping_add(unzigzag64(r.varint()?) as u64);
    let reference = position_of(b).unwrap_or([0; 3]);
    let mut p = [0i32; 3];
    for k in 0..3 {
        p[k] = reference[k].wrapping_add(unzigzag32(r.varint32()?));
    }
    let normal = decode_normal([r.i16()?, r.i16()?]);
    let impulse = if head & contact_flag::IMPULSE != 0 {
        r.f32()?
    } else {
        0.0
    };
    Ok(ContactEvent {
        kind: if head & contact_flag::END != 0 {
            ContactEventKind::End
        } else {
            ContactEventKind::Begin
        },
        a,
        b,
        point: p.map(|x| (x as f64 / POSITION_SCALE) as f32),
        normal,
        impulse,
    })
}
