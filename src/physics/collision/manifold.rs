//! Contact manifolds: up to four points per pair, each with a feature id.

use crate::physics::math::Vec3;

/// Which features of the two shapes produced a contact point. Packed as four
/// bytes: (kind A, index A, kind B, index B). It stays the same while the same
/// features touch, so the solver can carry impulses from frame to frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FeatureId(pub u32);

/// The kind of a feature in a [`FeatureId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FeatureKind {
    Vertex = 0,
    Edge = 1,
    Face = 2,
}

impl FeatureId {
    pub const fn new(kind_a: FeatureKind, index_a: u8, kind_b: FeatureKind, index_b: u8) -> Self {
        FeatureId(
            (kind_a as u32) << 24 | (index_a as u32) << 16 | (kind_b as u32) << 8 | index_b as u32,
        )
    }

    /// The same contact seen from the other shape (A and B swapped).
    pub const fn swapped(self) -> Self {
        FeatureId((self.0 >> 16) | ((self.0 & 0xffff) << 16))
    }
}

/// One contact point. `point_a` lies on A's surface and `point_b` on B's, in
/// world space; `separation = (point_b − point_a)·normal` is negative when the
/// shapes overlap and positive for speculative points.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactPoint {
    pub point_a: Vec3,
    pub point_b: Vec3,
    pub separation: f32,
    pub id: FeatureId,
}

impl ContactPoint {
    /// Midpoint between the two surface points.
    pub fn point(&self) -> Vec3 {
        (self.point_a + self.point_b) * 0.5
    }
}

pub const MAX_MANIFOLD_POINTS: usize = 4;

/// Up to four contact points sharing one normal, pointing from A to B.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Manifold {
    pub normal: Vec3,
    pub points: [ContactPoint; MAX_MANIFOLD_POINTS],
    pub count: usize,
}

impl Manifold {
    pub fn new(normal: Vec3) -> Self {
        Self {
            normal,
            ..Default::default()
        }
    }

    pub fn points(&self) -> &[ContactPoint] {
        &self.points[..self.count]
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds a point; ignored when full (callers reduce first).
    pub fn push(&mut self, p: ContactPoint) {
        if self.count < MAX_MANIFOLD_POINTS {
            self.points[self.count] = p;
            self.count += 1;
        }
    }

    /// The same manifold seen from B: normal flipped, points and ids swapped.
    pub fn swapped(&self) -> Manifold {
        let mut m = *self;
        m.normal = -self.normal;
        for p in &mut m.points[..m.count] {
            std::mem::swap(&mut p.point_a, &mut p.point_b);
            p.id = p.id.swapped();
        }
        m
    }
}
