//! Arbiter: an authoritative physics server for multiplayer games.
//!
//! # Module map
//!
//! - [`physics`] — the engine; depends on glam and serde only
//!   (`cargo check --no-default-features` builds it alone):
//!   - `physics::shape` — one file per shape: support mapping, AABB, mass
//!     properties; the convex hull builder
//!   - `physics::collision` — pure queries with no bodies: GJK, EPA, support
//!     features and clipping (`manifold`), polytope SAT (`polytope`), the
//!     per-pair dispatcher (`contact`), ray casts, shape casts (`shape_cast`),
//!     time of impact by conservative advancement (`toi`), edge–edge /
//!     vertex–face CCD (`ccd_cubic`) and thick segments (`ccd_thick`)
//!   - `physics::broad_phase` — incremental sweep and prune (its candidate
//!     limit, and the axes it tracks to keep within it, in
//!     `broad_phase/limit.rs`)
//!   - `physics::body`, `physics::set` — bodies in a generational arena
//!   - `physics::contact` — contacts, the feature-id keyed impulse cache
//!   - `physics::solver` — soft-step sequential impulses with warm starting,
//!     friction and restitution
//!   - `physics::ccd` — continuous collision inside the step
//!   - `physics::island` — islands and sleeping
//!   - `physics::world` — `World::step`, the whole pipeline in one function
//!     (stages 4, 5, 7 and 8 in `world/narrow.rs`, `world/continuous.rs`,
//!     `world/cables.rs` and `world/events.rs`; the
//!     cables' supports of resting bodies in `world/cable_supports.rs`, the
//!     bodies riding on bodies moved with their cables in
//!     `world/cable_riders.rs`, and sleep for bodies cables touch and for
//!     cables themselves in `world/cable_sleep.rs`; the bodies' islands,
//!     sleep and waking in `world/sleep.rs`; the world's bounds and speed caps in
//!     `world/bounds.rs`; the limits on bodies and cables spawned into each
//!     other, the step settings checked against them, the bodies' broad
//!     phase and the faults of a step past its pair limits, in
//!     `world/limits.rs`)
//!   - `physics::cable` — cables: XPBD chains, body contacts, and segments
//!     that never cross (pairs from each particle's tube once per step,
//!     per-pair separating planes checked every substep, exact edge–edge CCD
//!     behind them); `cable/pairs.rs` is their grid (and counts the
//!     overlaps a new cable brings, which a world bounds)
//!   - `physics::events` — contact begin/end events
//!   - `physics::scene` — the scene/snapshot format and its validation
//!   - `physics::ccd_queries` — the `arbiter ccd-queries` runner
//! - [`protocol`] — wire types, the JSON and binary stream encoders
//!   (quantization, smallest-three rotations, per-group deltas; cable points
//!   as residuals against their last two frames)
//! - `server` (feature `server`) — `arbiter serve`: HTTP connections, world
//!   threads, REST, WebSocket streams, metrics
//! - [`simulate`] — the headless `arbiter simulate` runner

pub mod physics;
pub mod protocol;
#[cfg(feature = "server")]
pub mod server;
pub mod simulate;
