//! Collision shapes: support mappings, bounding boxes and mass properties.
//!
//! Every convex shape is described by a *core* (a point, a segment, a box, a
//! cylinder, a cone or a convex hull) swept by a sphere of radius
//! [`Shape::radius`]. Spheres and capsules are a point and a segment with a
//! radius; any other shape may carry a `margin`, which rounds it (Minkowski sum
//! with a sphere). GJK works on the core and adds the radius afterwards, which
//! keeps it exact for spheres and capsules and robust for rounded shapes.
//!
//! The plane is not convex-bounded: it is a static half-space handled by its own
//! fast paths and never enters the broad phase.

mod capsule;
mod cone;
pub mod convex_hull;
mod cuboid;
mod cylinder;
mod hull_builder;
mod mass;
mod plane;
mod sphere;

pub use capsule::Capsule;
pub use cone::Cone;
pub use convex_hull::{ConvexHull, HullEdge, HullError, HullFace, MAX_HULL_POINTS};
pub use cuboid::{Cuboid, BOX_EDGES, BOX_FACES};
pub use cylinder::Cylinder;
pub use mass::MassProperties;
pub use plane::Plane;
pub use sphere::Sphere;

use super::aabb::Aabb;
use super::math::{Pose, Vec3};
use std::sync::Arc;

/// The geometry of a shape, without its rounding margin.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeKind {
    Sphere(Sphere),
    Box(Cuboid),
    Capsule(Capsule),
    Cylinder(Cylinder),
    Cone(Cone),
    ConvexHull(Arc<ConvexHull>),
    Plane(Plane),
}

/// A shape: geometry plus an optional rounding margin (>= 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub kind: ShapeKind,
    pub margin: f32,
}

impl Shape {
    pub fn new(kind: ShapeKind) -> Self {
        Self { kind, margin: 0.0 }
    }
    pub fn sphere(radius: f32) -> Self {
        Self::new(ShapeKind::Sphere(Sphere { radius }))
    }
    pub fn cuboid(half_extents: Vec3) -> Self {
        Self::new(ShapeKind::Box(Cuboid { half_extents }))
    }
    pub fn capsule(half_height: f32, radius: f32) -> Self {
        Self::new(ShapeKind::Capsule(Capsule {
            half_height,
            radius,
        }))
    }
    pub fn cylinder(half_height: f32, radius: f32) -> Self {
        Self::new(ShapeKind::Cylinder(Cylinder {
            half_height,
            radius,
        }))
    }
    pub fn cone(half_height: f32, radius: f32) -> Self {
        Self::new(ShapeKind::Cone(Cone {
            half_height,
            radius,
        }))
    }
    pub fn convex_hull(points: &[Vec3]) -> Result<Self, HullError> {
        Ok(Self::new(ShapeKind::ConvexHull(Arc::new(ConvexHull::new(
            points,
        )?))))
    }
    pub fn plane(normal: Vec3, offset: f32) -> Self {
        Self::new(ShapeKind::Plane(Plane::new(normal, offset)))
    }
    pub fn with_margin(mut self, margin: f32) -> Self {
        self.margin = margin;
        self
    }

    pub fn is_plane(&self) -> bool {
        matches!(self.kind, ShapeKind::Plane(_))
    }

    /// Radius of the sphere swept over the core: the sphere's or capsule's
    /// radius plus the margin.
    #[inline]
    pub fn radius(&self) -> f32 {
        self.margin
            + match &self.kind {
                ShapeKind::Sphere(s) => s.radius,
                ShapeKind::Capsule(c) => c.radius,
                _ => 0.0,
            }
    }

    /// Support point of the core in local direction `d` (need not be unit).
    #[inline]
    pub fn support_core(&self, d: Vec3) -> Vec3 {
        match &self.kind {
            ShapeKind::Sphere(_) => Vec3::ZERO,
            ShapeKind::Box(b) => b.support(d),
            ShapeKind::Capsule(c) => c.support_core(d),
            ShapeKind::Cylinder(c) => c.support(d),
            ShapeKind::Cone(c) => c.support(d),
            ShapeKind::ConvexHull(h) => h.support(d),
            ShapeKind::Plane(p) => p.support(d),
        }
    }

    /// Support point of the whole (rounded) shape in local direction `d`.
    #[inline]
    pub fn support_local(&self, d: Vec3) -> Vec3 {
        let core = self.support_core(d);
        let r = self.radius();
        if r > 0.0 {
            core + d.normalize_or_zero() * r
        } else {
            core
        }
    }

    /// World support: S(d) = R·S_local(Rᵀd) + x.
    #[inline]
    pub fn support_world(&self, pose: &Pose, d: Vec3) -> Vec3 {
        pose.transform_point(self.support_local(pose.inverse_transform_vector(d)))
    }

    /// World support of the core only.
    #[inline]
    pub fn support_core_world(&self, pose: &Pose, d: Vec3) -> Vec3 {
        pose.transform_point(self.support_core(pose.inverse_transform_vector(d)))
    }

    /// World-space bounding box for a pose.
    pub fn aabb(&self, pose: &Pose) -> Aabb {
        let core = match &self.kind {
            ShapeKind::Sphere(_) => Aabb::new(pose.position, pose.position),
            ShapeKind::Box(b) => b.aabb(pose),
            ShapeKind::Capsule(c) => c.core_aabb(pose),
            ShapeKind::Cylinder(c) => c.aabb(pose),
            ShapeKind::Cone(c) => c.aabb(pose),
            ShapeKind::ConvexHull(h) => h.aabb(pose),
            ShapeKind::Plane(p) => p.aabb(pose),
        };
        core.expanded(self.radius())
    }

    /// Largest distance from the shape's local origin to its surface.
    pub fn bounding_radius(&self) -> f32 {
        self.radius()
            + match &self.kind {
                ShapeKind::Sphere(_) => 0.0,
                ShapeKind::Box(b) => b.half_extents.length(),
                ShapeKind::Capsule(c) => c.half_height,
                ShapeKind::Cylinder(c) => c.half_height.hypot(c.radius),
                ShapeKind::Cone(c) => c.half_height.hypot(c.radius),
                ShapeKind::ConvexHull(h) => h.bounding_radius(),
                ShapeKind::Plane(_) => f32::INFINITY,
            }
    }

    /// Half the thinnest dimension: how far the shape can move before it may
    /// have passed through something as thin as itself. Continuous collision
    /// treats a body as fast when it moves more than a fraction of this.
    pub fn thickness(&self) -> f32 {
        self.margin
            + match &self.kind {
                ShapeKind::Sphere(s) => s.radius,
                ShapeKind::Box(b) => b.half_extents.min_element(),
                ShapeKind::Capsule(c) => c.radius,
                ShapeKind::Cylinder(c) => c.half_height.min(c.radius),
                // The apex is sharp: half the smaller dimension.
                ShapeKind::Cone(c) => 0.5 * c.half_height.min(c.radius),
                ShapeKind::ConvexHull(h) => h
                    .faces()
                    .iter()
                    .map(|f| f.offset - f.normal.dot(h.centroid()))
                    .fold(f32::INFINITY, f32::min)
                    .max(0.0),
                ShapeKind::Plane(_) => f32::INFINITY,
            }
    }

    /// Mass, centre of mass and inertia about the centre of mass for a
    /// density. The margin's thin shell is ignored (it is a contact skin).
    pub fn mass_properties(&self, density: f32) -> MassProperties {
        match &self.kind {
            ShapeKind::Sphere(s) => s.mass_properties(density, self.margin),
            ShapeKind::Box(b) => b.mass_properties(density),
            ShapeKind::Capsule(c) => c.mass_properties(density, self.margin),
            ShapeKind::Cylinder(c) => c.mass_properties(density),
            ShapeKind::Cone(c) => c.mass_properties(density),
            ShapeKind::ConvexHull(h) => h.mass_properties(density),
            ShapeKind::Plane(_) => MassProperties::INFINITE,
        }
    }

    /// Checks sizes: finite and positive. Planes need a non-zero normal.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |name: &str, v: f32| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be a positive finite number, got {v}"))
            }
        };
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return Err(format!(
                "margin must be a non-negative finite number, got {}",
                self.margin
            ));
        }
        match &self.kind {
            ShapeKind::Sphere(s) => pos("radius", s.radius),
            ShapeKind::Box(b) => {
                pos("half_extents.x", b.half_extents.x)?;
                pos("half_extents.y", b.half_extents.y)?;
                pos("half_extents.z", b.half_extents.z)
            }
            ShapeKind::Capsule(c) => {
                pos("half_height", c.half_height)?;
                pos("radius", c.radius)
            }
            ShapeKind::Cylinder(c) => {
                pos("half_height", c.half_height)?;
                pos("radius", c.radius)
            }
            ShapeKind::Cone(c) => {
                pos("half_height", c.half_height)?;
                pos("radius", c.radius)
            }
            ShapeKind::ConvexHull(_) => Ok(()),
            ShapeKind::Plane(p) => {
                if p.normal.is_finite() && p.offset.is_finite() && p.normal.length() > 0.5 {
                    Ok(())
                } else {
                    Err("plane needs a finite non-zero normal and a finite offset".into())
                }
            }
        }
    }
}

/// Rotated box extents: half extents of the AABB of a box with half extents
/// `h` rotated by the pose.
#[inline]
pub(crate) fn rotated_extents(pose: &Pose, h: Vec3) -> Vec3 {
    let m = glam::Mat3::from_quat(pose.rotation);
    Vec3::new(
        m.x_axis.x.abs() * h.x + m.y_axis.x.abs() * h.y + m.z_axis.x.abs() * h.z,
        m.x_axis.y.abs() * h.x + m.y_axis.y.abs() * h.y + m.z_axis.y.abs() * h.z,
        m.x_axis.z.abs() * h.x + m.y_axis.z.abs() * h.y + m.z_axis.z.abs() * h.z,
    )
}
