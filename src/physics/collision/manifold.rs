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

/// Most vertices a support feature can carry (a hull face with more is
/// reduced to this many by its builder).
pub const MAX_FEATURE_POINTS: usize = 16;

/// The feature of a shape that supports it in a direction, in world space: a
/// vertex (1 point), an edge (2) or a face polygon (3+, counter-clockwise seen
/// from outside). `ids[i]` names vertex i for feature ids; `face` names the
/// face (or edge) as a whole.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SupportFeature {
    pub count: usize,
    pub points: [Vec3; MAX_FEATURE_POINTS],
    pub ids: [u8; MAX_FEATURE_POINTS],
    pub face: u8,
}

impl Default for SupportFeature {
    fn default() -> Self {
        Self {
            count: 0,
            points: [Vec3::ZERO; MAX_FEATURE_POINTS],
            ids: [0; MAX_FEATURE_POINTS],
            face: 0,
        }
    }
}

impl SupportFeature {
    pub fn push(&mut self, p: Vec3, id: u8) {
        if self.count < MAX_FEATURE_POINTS {
            self.points[self.count] = p;
            self.ids[self.count] = id;
            self.count += 1;
        }
    }
    pub fn points(&self) -> &[Vec3] {
        &self.points[..self.count]
    }
}

/// Builds a manifold from the support feature `fa` of A (in direction
/// `normal`) and `fb` of B (in direction −`normal`), `normal` pointing from A
/// to B. The features are of the cores; radii push the surface points out.
/// Points farther apart than `speculative` are dropped.
///
/// PLACEHOLDER until the clipping routine lands: keeps the single closest pair.
pub fn clip_features(
    fa: &SupportFeature,
    fb: &SupportFeature,
    normal: Vec3,
    radius_a: f32,
    radius_b: f32,
    speculative: f32,
) -> Manifold {
    let mut m = Manifold::new(normal);
    let mut best: Option<ContactPoint> = None;
    for (i, &pa) in fa.points().iter().enumerate() {
        for (j, &pb) in fb.points().iter().enumerate() {
            let sep = (pb - pa).dot(normal) - radius_a - radius_b;
            if sep <= speculative && best.is_none_or(|b| sep < b.separation) {
                best = Some(ContactPoint {
                    point_a: pa + normal * radius_a,
                    point_b: pb - normal * radius_b,
                    separation: sep,
                    id: FeatureId::new(
                        FeatureKind::Vertex,
                        fa.ids[i],
                        FeatureKind::Vertex,
                        fb.ids[j],
                    ),
                });
            }
        }
    }
    if let Some(b) = best {
        m.push(b);
    }
    m
}
