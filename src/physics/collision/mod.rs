//! Pure collision queries: shapes and poses in, answers out; no bodies, no time.

pub mod ccd_cubic;
pub mod ccd_thick;
pub mod contact;
pub mod manifold;
pub mod ray;

pub use contact::{contact_manifold, PairCache};
pub use manifold::{ContactPoint, FeatureId, FeatureKind, Manifold};
pub use ray::{ray_cast, RayHit};
