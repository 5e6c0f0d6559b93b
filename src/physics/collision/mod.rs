//! Pure collision queries: shapes and poses in, answers out; no bodies, no time.
//!
//! - [`gjk`]: distance and closest points of two convex support mappings
//! - [`epa`]: penetration depth and normal when they overlap
//! - [`manifold`]: contact points, feature ids, clipping of support features

pub mod epa;
pub mod gjk;
pub mod manifold;

pub use epa::{epa, Penetration};
pub use gjk::{gjk, CoreSupport, GjkResult, ShapeSupport, Simplex, SimplexVertex, SupportMap};
pub use manifold::{ContactPoint, FeatureId, FeatureKind, Manifold};

#[cfg(test)]
mod tests;
