//! Wire types shared by the server, the command line and the clients: the
//! JSON messages of DESIGN.md, and their stream encodings.
//!
//! - this file: the message types ([`ServerMessage`], [`ClientCommand`], …)
//! - [`json`]: the JSON stream, with [`JsonEncoder`] sending only changed bodies
//! - [`binary`]: the binary stream of proto/binary.md, [`BinaryEncoder`] and
//!   [`BinaryDecoder`] (per-group baselines, predictive deltas)
//! - [`quantize`]: fixed-point scales, smallest-three rotations, predictors
//! - `wire`: varints, strings and the bit stream the binary format is made of
//!
//! The protocol layer depends on the physics specs (bodies are sent as their
//! spec plus id and sleeping flag) but never on the server.

use crate::physics::body::Body as EngineBody;
pub use crate::physics::cable::CableState;
use crate::physics::events::ContactEvent;
use crate::physics::scene::BodySpec;
use serde::{Deserialize, Serialize};

pub mod binary;
pub mod json;
pub mod quantize;
mod wire;

pub use binary::{BinaryDecoder, BinaryEncoder, DecodeError};
pub use json::{encode_json, JsonEncoder};

/// A body on the wire: its spec with `id` and `sleeping` set.
pub type Body = BodySpec;

/// The state of one body in a tick: position, rotation [x,y,z,w], linear and
/// angular velocity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BodyState {
    pub id: u64,
    pub p: [f32; 3],
    pub q: [f32; 4],
    pub v: [f32; 3],
    pub w: [f32; 3],
}

impl BodyState {
    pub fn of(b: &EngineBody) -> Self {
        Self {
            id: b.id,
            p: b.pose.position.to_array(),
            q: b.pose.rotation.to_array(),
            v: b.linear_velocity.to_array(),
            w: b.angular_velocity.to_array(),
        }
    }
}

/// `step_ms` of a world: last, mean and max step durations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct StepMs {
    pub last: f64,
    pub mean: f64,
    pub max: f64,
}

/// A world as the REST API and the stream's hello describe it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct WorldInfo {
    pub id: String,
    pub name: String,
    pub tick_hz: f64,
    pub gravity: [f32; 3],
    pub paused: bool,
    pub tick: u64,
    pub time: f64,
    pub body_count: usize,
    pub step_ms: StepMs,
    /// Why the world paused itself (a step past its limits, one line
    /// starting `limit: `); absent otherwise, and cleared on resume or by
    /// a manual step that goes through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// Server → client messages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Hello {
        world: WorldInfo,
        bodies: Vec<Body>,
        /// Cable states (JSON streams; binary hellos leave them to the next tick).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        cables: Vec<CableState>,
    },
    Tick {
        tick: u64,
        time: f64,
        bodies: Vec<BodyState>,
        contacts: Vec<ContactEvent>,
        spawned: Vec<Body>,
        removed: Vec<u64>,
        /// The particle positions of the cables that may have moved since
        /// the client's last frame (every cable after a hello;
        /// proto/stream.md).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        cables: Vec<CableState>,
    },
    Ack {
        seq: u64,
    },
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
        code: String,
        message: String,
    },
}

/// Client → server commands.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientCommand {
    Impulse {
        id: u64,
        impulse: [f32; 3],
        #[serde(default)]
        point: Option<[f32; 3]>,
        #[serde(default)]
        seq: Option<u64>,
    },
    Spawn {
        body: BodySpec,
        #[serde(default)]
        seq: Option<u64>,
    },
    Remove {
        id: u64,
        #[serde(default)]
        seq: Option<u64>,
    },
    SetVelocity {
        id: u64,
        #[serde(default)]
        linear: Option<[f32; 3]>,
        #[serde(default)]
        angular: Option<[f32; 3]>,
        #[serde(default)]
        seq: Option<u64>,
    },
}

impl ClientCommand {
    pub fn seq(&self) -> Option<u64> {
        match self {
            ClientCommand::Impulse { seq, .. }
            | ClientCommand::Spawn { seq, .. }
            | ClientCommand::Remove { seq, .. }
            | ClientCommand::SetVelocity { seq, .. } => *seq,
        }
    }
}
