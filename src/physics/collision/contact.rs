//! TEMPORARY: minimal dispatcher until the GJK branch lands.

use super::manifold::{ContactPoint, FeatureId, Manifold};
use crate::physics::math::{Pose, Vec3};
use crate::physics::shape::{Shape, ShapeKind};

#[derive(Clone, Debug, Default)]
pub struct PairCache {
    pub dir: Vec3,
    pub sat: super::polytope::SatCache,
}

pub fn contact_manifold(
    a: &Shape,
    pa: &Pose,
    b: &Shape,
    pb: &Pose,
    spec: f32,
    _c: &mut PairCache,
) -> Option<Manifold> {
    match (&a.kind, &b.kind) {
        (ShapeKind::Plane(p), _) => {
            let pl = p.to_world(pa);
            let n = pl.normal;
            let mut m = Manifold::new(n);
            let corners: Vec<Vec3> = match &b.kind {
                ShapeKind::Box(bx) => {
                    let h = bx.half_extents;
                    (0..8)
                        .map(|i| {
                            pb.transform_point(Vec3::new(
                                if i & 1 == 0 { -h.x } else { h.x },
                                if i & 2 == 0 { -h.y } else { h.y },
                                if i & 4 == 0 { -h.z } else { h.z },
                            ))
                        })
                        .collect()
                }
                _ => vec![b.support_core_world(pb, -n)],
            };
            let r = b.radius();
            let mut pts: Vec<(f32, usize, Vec3)> = corners
                .iter()
                .enumerate()
                .map(|(i, c)| (pl.distance(*c) - r, i, *c))
                .filter(|x| x.0 <= spec)
                .collect();
            pts.sort_by(|x, y| x.0.total_cmp(&y.0));
            for (sep, i, c) in pts.into_iter().take(4) {
                let pbp = c - n * r;
                m.push(ContactPoint {
                    point_a: pbp - n * sep,
                    point_b: pbp,
                    separation: sep,
                    id: FeatureId(i as u32),
                });
            }
            (!m.is_empty()).then_some(m)
        }
        (_, ShapeKind::Plane(_)) => contact_manifold(b, pb, a, pa, spec, _c).map(|m| m.swapped()),
        (ShapeKind::Box(ba), ShapeKind::Box(bb)) => super::polytope::box_box(ba, pa, bb, pb, spec, &mut _c.sat),
        (ShapeKind::Sphere(_), ShapeKind::Sphere(_)) => {
            let d = pb.position - pa.position;
            let len = d.length();
            let n = if len > 1e-9 { d / len } else { Vec3::Y };
            let sep = len - a.radius() - b.radius();
            if sep > spec {
                return None;
            }
            let mut m = Manifold::new(n);
            m.push(ContactPoint {
                point_a: pa.position + n * a.radius(),
                point_b: pb.position - n * b.radius(),
                separation: sep,
                id: FeatureId(0),
            });
            Some(m)
        }
        _ => None,
    }
}
