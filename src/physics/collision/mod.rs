//! Pure collision queries: shapes and poses in, answers out; no bodies, no time.

pub mod ccd_cubic;
pub mod ccd_thick;
pub mod contact;
pub mod manifold;
pub mod polytope;
pub mod ray;

pub use contact::{contact_manifold, PairCache};
pub use manifold::{
    clip_features, clip_features_keeping, clip_features_with, ContactPoint, FeatureId, FeatureKind,
    Manifold, Reference, SupportFeature,
};
pub use polytope::{box_box, polytope_contact, Polytope, SatAxis, SatCache};
pub use ray::{ray_cast, RayHit};
