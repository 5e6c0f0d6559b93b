//! Pure collision queries: shapes and poses in, answers out; no bodies, no time.

pub mod manifold;
pub mod polytope;

pub use manifold::{
    clip_features, clip_features_keeping, clip_features_with, ContactPoint, FeatureId, FeatureKind,
    Manifold, Reference, SupportFeature,
};
pub use polytope::{box_box, polytope_contact, Polytope, SatAxis, SatCache};
