//! Pure collision queries: shapes and poses in, answers out; no bodies, no time.
//!
//! - [`gjk`]: distance and closest points of two convex support mappings
//! - [`epa`]: penetration depth and normal when they overlap
//! - [`feature`]: the vertex / edge / face supporting a shape along a direction
//! - [`manifold`]: contact points, feature ids, clipping of support features
//! - [`contact`]: [`contact_manifold`], the narrow-phase entry point per shape pair
//! - [`ray`]: [`ray_cast`] against one shape

pub mod contact;
pub mod epa;
pub mod feature;
pub mod gjk;
pub mod manifold;
pub mod ray;

pub use contact::{contact_manifold, PairCache};
pub use epa::{epa, Penetration};
pub use feature::support_feature;
pub use gjk::{gjk, CoreSupport, GjkResult, ShapeSupport, Simplex, SimplexVertex, SupportMap};
pub use manifold::{ContactPoint, FeatureId, FeatureKind, Manifold};
pub use ray::{ray_cast, RayHit};

#[cfg(test)]
mod tests;
