//! TEMPORARY ray casts until the GJK branch lands.

use crate::physics::math::{Pose, Vec3};
use crate::physics::shape::{Shape, ShapeKind};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    pub t: f32,
    pub point: Vec3,
    pub normal: Vec3,
}

pub fn ray_cast(shape: &Shape, pose: &Pose, origin: Vec3, dir: Vec3, max_t: f32) -> Option<RayHit> {
    match &shape.kind {
        ShapeKind::Plane(p) => {
            let pl = p.to_world(pose);
            let d0 = pl.distance(origin);
            let dn = pl.normal.dot(dir);
            if d0 <= 0.0 {
                return Some(RayHit {
                    t: 0.0,
                    point: origin,
                    normal: pl.normal,
                });
            }
            if dn >= 0.0 {
                return None;
            }
            let t = -d0 / dn;
            (t <= max_t).then(|| RayHit {
                t,
                point: origin + dir * t,
                normal: pl.normal,
            })
        }
        ShapeKind::Sphere(_) => {
            let r = shape.radius();
            let m = origin - pose.position;
            let b = m.dot(dir);
            let c = m.length_squared() - r * r;
            if c <= 0.0 {
                return Some(RayHit {
                    t: 0.0,
                    point: origin,
                    normal: -dir,
                });
            }
            let disc = b * b - c;
            if b > 0.0 || disc < 0.0 {
                return None;
            }
            let t = -b - disc.sqrt();
            let p = origin + dir * t;
            (t <= max_t).then(|| RayHit {
                t,
                point: p,
                normal: (p - pose.position) / r,
            })
        }
        _ => None,
    }
}
