//! Convex hulls built from point clouds.
//! PLACEHOLDER: the hull builder (faces, edges) lands with the polytope work.

use super::MassProperties;
use crate::physics::aabb::Aabb;
use crate::physics::math::{Pose, Vec3};

#[derive(Clone, Debug, PartialEq)]
pub enum HullError {
    TooFewPoints(usize),
    NonFinite,
    Degenerate(&'static str),
}

impl std::fmt::Display for HullError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HullError::TooFewPoints(n) => {
                write!(f, "a convex hull needs at least 4 points, got {n}")
            }
            HullError::NonFinite => write!(f, "convex hull points must be finite"),
            HullError::Degenerate(why) => write!(f, "degenerate convex hull: {why}"),
        }
    }
}

impl std::error::Error for HullError {}

#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    pub vertices: Vec<Vec3>,
}

impl ConvexHull {
    pub fn new(points: &[Vec3]) -> Result<Self, HullError> {
        if points.len() < 4 {
            return Err(HullError::TooFewPoints(points.len()));
        }
        if points.iter().any(|p| !p.is_finite()) {
            return Err(HullError::NonFinite);
        }
        Ok(Self {
            vertices: points.to_vec(),
        })
    }

    #[inline]
    pub fn support(&self, d: Vec3) -> Vec3 {
        let mut best = self.vertices[0];
        let mut best_d = best.dot(d);
        for &v in &self.vertices[1..] {
            let x = v.dot(d);
            if x > best_d {
                best_d = x;
                best = v;
            }
        }
        best
    }

    pub fn aabb(&self, pose: &Pose) -> Aabb {
        let mut b = Aabb::EMPTY;
        for &v in &self.vertices {
            let w = pose.transform_point(v);
            b.min = b.min.min(w);
            b.max = b.max.max(w);
        }
        b
    }

    pub fn bounding_radius(&self) -> f32 {
        self.vertices.iter().map(|v| v.length()).fold(0.0, f32::max)
    }

    pub fn mass_properties(&self, density: f32) -> MassProperties {
        let _ = density;
        MassProperties::INFINITE
    }
}

impl ConvexHull {
    /// The feature supporting the hull in local direction `d`, in world space
    /// for `pose`. PLACEHOLDER: the support vertex only.
    pub fn support_feature(
        &self,
        pose: &Pose,
        d: Vec3,
    ) -> crate::physics::collision::manifold::SupportFeature {
        let mut f = crate::physics::collision::manifold::SupportFeature::default();
        f.push(pose.transform_point(self.support(d)), 0);
        f
    }
}
