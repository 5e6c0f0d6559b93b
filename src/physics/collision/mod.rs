//! Pure collision queries: shapes and poses in, answers out; no bodies, no time.

pub mod manifold;

pub use manifold::{ContactPoint, FeatureId, FeatureKind, Manifold};
