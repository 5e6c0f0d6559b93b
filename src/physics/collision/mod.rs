//! Pure collision queries: shapes and poses in, answers out; no bodies, no time.
//!
//! - [`gjk`]: distance and closest points of two convex support mappings
//! - [`epa`]: penetration depth and normal when they overlap
//! - [`feature`]: the vertex / edge / face supporting a shape along a direction
//! - [`manifold`]: contact points, feature ids, clipping of support features
//! - [`polytope`]: separating-axis test and clipping for boxes and hulls
//! - [`contact`]: [`contact_manifold`], the narrow-phase entry point per shape pair
//! - [`ray`]: [`ray_cast`] against one shape
//! - [`shape_cast`]: a shape moving along a translation against another (GJK ray cast)
//! - [`toi`]: time of impact of translating and rotating bodies (conservative advancement)
//! - [`ccd_cubic`], [`ccd_thick`]: edge–edge / vertex–face CCD of moving
//!   points and thick segments

pub mod ccd_cubic;
pub mod ccd_thick;
pub mod contact;
pub mod epa;
pub mod feature;
pub mod gjk;
pub mod manifold;
pub mod polytope;
pub mod ray;
pub mod shape_cast;
pub mod toi;

pub use contact::{contact_manifold, PairCache};
pub use epa::{epa, Penetration};
pub use feature::support_feature;
pub use gjk::{gjk, CoreSupport, GjkResult, ShapeSupport, Simplex, SimplexVertex, SupportMap};
pub use manifold::{
    clip_features, clip_features_keeping, clip_features_with, ContactPoint, FeatureId, FeatureKind,
    Manifold, Reference, SupportFeature,
};
pub use polytope::{box_box, polytope_contact, Polytope, SatAxis, SatCache};
pub use ray::{ray_cast, RayHit};
pub use shape_cast::{shape_cast, ShapeCastHit};
pub use toi::{time_of_impact, Sweep, Toi, ToiSettings};

#[cfg(test)]
mod tests;
