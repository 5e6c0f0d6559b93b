//! The physics engine. Depends on glam (and serde for specs) only.

pub mod aabb;
pub mod body;
pub mod broad_phase;
pub mod cable;
pub mod ccd;
pub mod ccd_queries;
pub mod collision;
pub mod contact;
pub mod events;
pub mod island;
pub mod math;
pub mod scene;
pub mod set;
pub mod shape;
pub mod solver;
pub mod world;

pub use body::Body;
pub use events::{ContactEvent, ContactEventKind};
pub use math::{Pose, Quat, Vec3};
pub use scene::{BodyKind, BodySpec, Scene, ShapeSpec};
pub use shape::Shape;
pub use world::{
    StepProfile, World, WorldSettings, MAX_BODY_CANDIDATES, MAX_BODY_OVERLAPS, MAX_STEP_BODY_PAIRS,
};
