//! Arbiter: an authoritative physics server for multiplayer games.
//!
//! Module map:
//! - [`physics`] — the engine (glam + serde only): shapes, collision queries,
//!   broad phase, bodies, solver, islands, `World::step`.
//! - [`protocol`] — wire types for REST and the WebSocket stream.
//! - [`simulate`] — the headless `arbiter simulate` runner.

pub mod physics;
pub mod protocol;
pub mod simulate;
