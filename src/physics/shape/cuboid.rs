use super::{rotated_extents, MassProperties};
use crate::physics::aabb::Aabb;
use crate::physics::collision::manifold::{
    SupportFeature, FEATURE_ANGLE_TOLERANCE, FEATURE_FACE_COS,
};
use crate::physics::math::{Pose, Vec3};

/// A box centred at the origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    pub half_extents: Vec3,
}

// Fixed box topology. Vertex `i` has coordinate signs taken from its bits:
// bit 0 → x, bit 1 → y, bit 2 → z (set = +half extent).

const VERTEX_SIGNS: [Vec3; 8] = [
    Vec3::new(-1.0, -1.0, -1.0),
    Vec3::new(1.0, -1.0, -1.0),
    Vec3::new(-1.0, 1.0, -1.0),
    Vec3::new(1.0, 1.0, -1.0),
    Vec3::new(-1.0, -1.0, 1.0),
    Vec3::new(1.0, -1.0, 1.0),
    Vec3::new(-1.0, 1.0, 1.0),
    Vec3::new(1.0, 1.0, 1.0),
];

const FACE_NORMALS: [Vec3; 6] = [
    Vec3::X,
    Vec3::NEG_X,
    Vec3::Y,
    Vec3::NEG_Y,
    Vec3::Z,
    Vec3::NEG_Z,
];

/// Face `f` has outward normal along axis `f / 2`, positive when `f` is even:
/// 0 = +x, 1 = −x, 2 = +y, 3 = −y, 4 = +z, 5 = −z. Each loop is
/// counter-clockwise seen from outside.
pub const BOX_FACES: [[u8; 4]; 6] = [
    [1, 3, 7, 5],
    [0, 4, 6, 2],
    [2, 6, 7, 3],
    [0, 1, 5, 4],
    [4, 5, 7, 6],
    [0, 2, 3, 1],
];

/// The twelve edges: `([v0, v1], [f0, f1])`, running v0 → v1 counter-clockwise
/// in face f0 and v1 → v0 in f1. Edges `4k..4k+4` run along axis `k`, from
/// the vertex with that coordinate negative to the one with it positive.
pub const BOX_EDGES: [([u8; 2], [u8; 2]); 12] = [
    ([0, 1], [3, 5]),
    ([2, 3], [5, 2]),
    ([4, 5], [4, 3]),
    ([6, 7], [2, 4]),
    ([0, 2], [5, 1]),
    ([1, 3], [0, 5]),
    ([4, 6], [1, 4]),
    ([5, 7], [4, 0]),
    ([0, 4], [1, 3]),
    ([1, 5], [3, 0]),
    ([2, 6], [2, 1]),
    ([3, 7], [0, 2]),
];

impl Cuboid {
    #[inline]
    pub fn support(&self, d: Vec3) -> Vec3 {
        let h = self.half_extents;
        Vec3::new(
            if d.x >= 0.0 { h.x } else { -h.x },
            if d.y >= 0.0 { h.y } else { -h.y },
            if d.z >= 0.0 { h.z } else { -h.z },
        )
    }

    /// Index (in the box topology) of the support vertex in direction `d`.
    #[inline]
    pub fn support_vertex_index(d: Vec3) -> usize {
        (d.x >= 0.0) as usize | ((d.y >= 0.0) as usize) << 1 | ((d.z >= 0.0) as usize) << 2
    }

    /// Local position of vertex `i` of the box topology.
    #[inline]
    pub fn vertex(&self, i: usize) -> Vec3 {
        self.half_extents * VERTEX_SIGNS[i & 7]
    }

    /// Outward normal of face `f` (0 = +x, 1 = −x, … 5 = −z).
    #[inline]
    pub fn face_normal(f: usize) -> Vec3 {
        FACE_NORMALS[f]
    }

    /// Plane offset of face `f`: the face lies on `n·x = offset`.
    #[inline]
    pub fn face_offset(&self, f: usize) -> f32 {
        self.half_extents[f / 2]
    }

    /// The face whose outward normal is most aligned with `d`.
    #[inline]
    pub fn most_aligned_face(d: Vec3) -> usize {
        let a = d.abs();
        let axis = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        2 * axis + (d[axis] < 0.0) as usize
    }

    /// Face `f` as a world-space polygon (ids = box vertex indices).
    pub fn face_feature(&self, pose: &Pose, f: usize) -> SupportFeature {
        let mut out = SupportFeature {
            face: f as u8,
            ..Default::default()
        };
        for &v in &BOX_FACES[f] {
            out.push(pose.transform_point(self.vertex(v as usize)), v);
        }
        out
    }

    /// The feature supporting the box in local direction `d`, in world space:
    /// the face whose normal is within [`FEATURE_ANGLE_TOLERANCE`] of `d`, else
    /// the edge nearly perpendicular to `d` (`face` = edge index), else the
    /// support vertex. No allocation.
    pub fn support_feature(&self, pose: &Pose, d: Vec3) -> SupportFeature {
        let dn = d.normalize_or_zero();
        if dn == Vec3::ZERO {
            let mut out = SupportFeature::default();
            out.push(pose.transform_point(self.vertex(0)), 0);
            return out;
        }
        let f = Self::most_aligned_face(dn);
        if dn[f / 2].abs() >= FEATURE_FACE_COS {
            return self.face_feature(pose, f);
        }
        let v = Self::support_vertex_index(dn);
        let a = dn.abs();
        let axis = if a.x <= a.y && a.x <= a.z {
            0
        } else if a.y <= a.z {
            1
        } else {
            2
        };
        let mut out = SupportFeature::default();
        if a[axis] <= FEATURE_ANGLE_TOLERANCE {
            // The edge along `axis` through the support vertex.
            let lo = v & !(1 << axis);
            let hi = v | (1 << axis);
            let k = Self::edge_index(lo, axis);
            out.face = k as u8;
            out.push(pose.transform_point(self.vertex(lo)), lo as u8);
            out.push(pose.transform_point(self.vertex(hi)), hi as u8);
        } else {
            out.face = v as u8;
            out.push(pose.transform_point(self.vertex(v)), v as u8);
        }
        out
    }

    /// Index in [`BOX_EDGES`] of the edge along `axis` whose lower vertex is
    /// `lo` (bit `axis` of `lo` clear).
    #[inline]
    pub fn edge_index(lo: usize, axis: usize) -> usize {
        4 * axis + edge_slot(lo, axis)
    }

    pub fn aabb(&self, pose: &Pose) -> Aabb {
        Aabb::from_center_half_extents(pose.position, rotated_extents(pose, self.half_extents))
    }

    pub fn mass_properties(&self, density: f32) -> MassProperties {
        let s = self.half_extents * 2.0;
        let m = density * s.x * s.y * s.z;
        let k = m / 12.0;
        MassProperties::diagonal(
            m,
            Vec3::ZERO,
            Vec3::new(
                k * (s.y * s.y + s.z * s.z),
                k * (s.x * s.x + s.z * s.z),
                k * (s.x * s.x + s.y * s.y),
            ),
        )
    }
}

/// Position (0..4) among the four edges along `axis` of the edge whose lower
/// vertex is `lo`: the two other coordinate bits, in order.
#[inline]
fn edge_slot(lo: usize, axis: usize) -> usize {
    let (b0, b1) = match axis {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    ((lo >> b0) & 1) | ((lo >> b1) & 1) << 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::math::Quat;

    #[test]
    fn box_topology_is_consistent() {
        let b = Cuboid {
            half_extents: Vec3::new(1.0, 2.0, 3.0),
        };
        for (f, face) in BOX_FACES.iter().enumerate() {
            // Newell normal of the loop equals the face normal (CCW outside).
            let mut n = Vec3::ZERO;
            for i in 0..4 {
                let p = b.vertex(face[i] as usize);
                let q = b.vertex(face[(i + 1) % 4] as usize);
                n += p.cross(q);
            }
            assert!(n.normalize().abs_diff_eq(Cuboid::face_normal(f), 1e-6));
            for &v in face {
                let d = Cuboid::face_normal(f).dot(b.vertex(v as usize)) - b.face_offset(f);
                assert!(d.abs() < 1e-6);
            }
        }
        for (k, (v, f)) in BOX_EDGES.iter().enumerate() {
            let axis = k / 4;
            assert_eq!(v[1] as usize, v[0] as usize | 1 << axis);
            assert_eq!(v[0] as usize & (1 << axis), 0);
            assert_eq!(edge_slot(v[0] as usize, axis), k % 4);
            // Both faces contain both vertices, one in each direction.
            let dir = |face: &[u8; 4], a: u8, b: u8| {
                (0..4).any(|i| face[i] == a && face[(i + 1) % 4] == b)
            };
            let f0 = &BOX_FACES[f[0] as usize];
            let f1 = &BOX_FACES[f[1] as usize];
            assert!(dir(f0, v[0], v[1]) && dir(f1, v[1], v[0]));
            // n0 × n1 points along v0 → v1.
            let e = b.vertex(v[1] as usize) - b.vertex(v[0] as usize);
            let c = Cuboid::face_normal(f[0] as usize).cross(Cuboid::face_normal(f[1] as usize));
            assert!(c.dot(e) > 0.0);
        }
    }

    #[test]
    fn support_feature_picks_face_edge_or_vertex() {
        let b = Cuboid {
            half_extents: Vec3::new(1.0, 0.5, 2.0),
        };
        let pose = Pose::new(Vec3::new(3.0, 0.0, 0.0), Quat::from_rotation_y(0.3));
        // Slightly tilted +y: the top face.
        let f = b.support_feature(&pose, Vec3::new(0.01, 1.0, 0.0));
        assert_eq!(f.count, 4);
        assert_eq!(f.face, 2);
        for p in f.points() {
            let l = pose.inverse_transform_point(*p);
            assert!((l.y - 0.5).abs() < 1e-6);
        }
        // Between +y and +x: the edge along z at (+x, +y).
        let f = b.support_feature(&pose, Vec3::new(1.0, 1.0, 0.005));
        assert_eq!(f.count, 2);
        assert_eq!(BOX_EDGES[f.face as usize].0, [f.ids[0], f.ids[1]]);
        for p in f.points() {
            let l = pose.inverse_transform_point(*p);
            assert!((l.x - 1.0).abs() < 1e-6 && (l.y - 0.5).abs() < 1e-6);
        }
        // A generic direction: the vertex.
        let f = b.support_feature(&pose, Vec3::new(1.0, -1.0, 1.0));
        assert_eq!(f.count, 1);
        let l = pose.inverse_transform_point(f.points[0]);
        assert!(l.abs_diff_eq(Vec3::new(1.0, -0.5, 2.0), 1e-6));
    }
}
