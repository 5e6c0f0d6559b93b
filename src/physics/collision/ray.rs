//! Ray casts against single shapes.
//!
//! Spheres, planes, boxes and capsules are solved in closed form; every other
//! shape (cylinder, cone, hull, and any shape with a rounding margin that has
//! no closed form) goes through the GJK ray cast of van den Bergen ("Ray
//! casting against general convex objects with application to continuous
//! collision detection", 2004): it advances a point along the ray to the
//! support plane that separates it from the shape until the point is within
//! tolerance of the shape.
//!
//! Rays are cast in the shape's local frame, so far from the origin only the
//! subtraction of the shape's position rounds.

use super::gjk::{closest_to_origin, gjk, GjkResult, SupportMap};
use crate::physics::math::{Pose, Vec3};
use crate::physics::shape::{Plane, Shape, ShapeKind};

/// Where a ray first meets a shape: `point = origin + t·dir`, `normal` the
/// outward unit surface normal there. A ray that starts inside a shape hits
/// at `t = 0` with `normal = −dir`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    pub t: f32,
    pub point: Vec3,
    pub normal: Vec3,
}

/// First hit of the ray `origin + t·dir` (`dir` unit), t ∈ [0, max_t].
pub fn ray_cast(shape: &Shape, pose: &Pose, origin: Vec3, dir: Vec3, max_t: f32) -> Option<RayHit> {
    if !(origin.is_finite() && dir.is_finite() && max_t >= 0.0) {
        return None;
    }
    if let ShapeKind::Plane(p) = &shape.kind {
        let w = p.to_world(pose);
        let w = Plane {
            normal: w.normal,
            offset: w.offset + shape.margin,
        };
        return ray_plane(&w, origin, dir, max_t);
    }
    // Local frame.
    let o = pose.inverse_transform_point(origin);
    let d = pose.inverse_transform_vector(dir);
    let local = match &shape.kind {
        ShapeKind::Sphere(_) => ray_sphere(Vec3::ZERO, shape.radius(), o, d, max_t),
        ShapeKind::Capsule(c) => ray_capsule(c.half_height, shape.radius(), o, d, max_t),
        ShapeKind::Box(b) if shape.margin == 0.0 => ray_box(b.half_extents, o, d, max_t),
        _ => {
            let support = LocalShape(shape);
            let mut hit = gjk_ray_cast(&support, shape.bounding_radius(), o, d, max_t)?;
            if hit.t > 0.0 {
                hit.normal = surface_normal(shape, hit.point).unwrap_or(hit.normal);
            }
            Some(hit)
        }
    }?;
    Some(RayHit {
        t: local.t,
        point: origin + dir * local.t,
        normal: pose.transform_vector(local.normal),
    })
}

/// The outward normal of a (rounded) shape at a local point on its surface.
///
/// GJK's separating planes give the normal of a curved surface only to about
/// the square root of its tolerance, so it is recomputed here from the
/// closest point of the core: along `p − core point` when the shape is
/// rounded, else the normal of the core's face nearest to `p`. `None` leaves
/// GJK's normal (exact for polytope faces).
fn surface_normal(shape: &Shape, p: Vec3) -> Option<Vec3> {
    let rounded = shape.margin > 0.0;
    match &shape.kind {
        ShapeKind::Box(b) => {
            let h = b.half_extents;
            let q = p.clamp(-h, h);
            if rounded && (p - q).length() > 0.5 * shape.margin {
                return (p - q).try_normalize();
            }
            let gap = h - p.abs();
            let axis = gap.min_position();
            let mut n = Vec3::ZERO;
            n[axis] = if p[axis] >= 0.0 { 1.0 } else { -1.0 };
            Some(n)
        }
        ShapeKind::Cylinder(c) => {
            // In the half-plane (ρ, y) the core is the rectangle [0, r]×[±hh].
            let rho = Vec3::new(p.x, 0.0, p.z).length();
            let u = Vec3::new(p.x, 0.0, p.z).normalize_or(Vec3::X);
            let (qr, qy) = (rho.min(c.radius), p.y.clamp(-c.half_height, c.half_height));
            let (dr, dy) = (rho - qr, p.y - qy);
            if rounded && dr.hypot(dy) > 0.5 * shape.margin {
                return (u * dr + Vec3::Y * dy).try_normalize();
            }
            if (c.half_height - p.y.abs()) < (c.radius - rho) {
                Some(Vec3::Y * p.y.signum())
            } else {
                Some(u)
            }
        }
        ShapeKind::Cone(c) => {
            // In the half-plane (ρ, y) the core is the triangle
            // (0, −hh), (r, −hh), (0, hh).
            let rho = Vec3::new(p.x, 0.0, p.z).length();
            let u = Vec3::new(p.x, 0.0, p.z).normalize_or(Vec3::X);
            let (r, hh) = (c.radius, c.half_height);
            let side_n = glam::Vec2::new(2.0 * hh, r).normalize();
            let q = glam::Vec2::new(rho, p.y);
            let apex = glam::Vec2::new(0.0, hh);
            let rim = glam::Vec2::new(r, -hh);
            if rounded {
                // Closest point of the base edge and of the side edge.
                let base_q = glam::Vec2::new(rho.min(r), -hh);
                let e = apex - rim;
                let t = ((q - rim).dot(e) / e.length_squared()).clamp(0.0, 1.0);
                let side_q = rim + e * t;
                let outside_base = p.y < -hh;
                let outside_side = (q - rim).dot(side_n) > 0.0;
                let cq = match (outside_base, outside_side) {
                    (true, false) => base_q,
                    (false, true) => side_q,
                    _ => {
                        if (q - base_q).length() < (q - side_q).length() {
                            base_q
                        } else {
                            side_q
                        }
                    }
                };
                let v = q - cq;
                if v.length() > 0.5 * shape.margin {
                    return (u * v.x + Vec3::Y * v.y).try_normalize();
                }
            }
            if rho <= 1e-5 * r && p.y > 0.0 {
                // The apex: GJK's supporting plane is as good as any.
                return None;
            }
            let to_base = p.y + hh;
            let to_side = -(q - rim).dot(side_n);
            if to_base < to_side {
                Some(-Vec3::Y)
            } else {
                Some(u * side_n.x + Vec3::Y * side_n.y)
            }
        }
        ShapeKind::ConvexHull(_) if rounded => {
            let core = |dir: Vec3| shape.support_core(dir);
            let point = [p];
            match gjk(&CoreFn(core), &point[..], p, f32::INFINITY) {
                GjkResult::Separated { normal, .. } => Some(normal),
                _ => None,
            }
        }
        _ => None,
    }
}

struct CoreFn<F: Fn(Vec3) -> Vec3>(F);

impl<F: Fn(Vec3) -> Vec3> SupportMap for CoreFn<F> {
    fn support(&self, dir: Vec3) -> Vec3 {
        (self.0)(dir)
    }
}

struct LocalShape<'a>(&'a Shape);

impl SupportMap for LocalShape<'_> {
    fn support(&self, dir: Vec3) -> Vec3 {
        self.0.support_local(dir)
    }
}

fn inside_hit(o: Vec3, d: Vec3) -> RayHit {
    RayHit {
        t: 0.0,
        point: o,
        normal: -d,
    }
}

/// The half-space `normal·x ≤ offset`.
pub fn ray_plane(p: &Plane, o: Vec3, d: Vec3, max_t: f32) -> Option<RayHit> {
    let s = p.distance(o);
    if s <= 0.0 {
        return Some(inside_hit(o, d));
    }
    let dn = p.normal.dot(d);
    if dn >= 0.0 {
        return None;
    }
    let t = s / -dn;
    (t <= max_t).then(|| RayHit {
        t,
        point: o + d * t,
        normal: p.normal,
    })
}

/// Sphere of radius `r` centred at `c`.
pub fn ray_sphere(c: Vec3, r: f32, o: Vec3, d: Vec3, max_t: f32) -> Option<RayHit> {
    let m = o - c;
    let cc = m.length_squared() - r * r;
    if cc <= 0.0 {
        return Some(inside_hit(o, d));
    }
    let b = m.dot(d);
    if b >= 0.0 {
        return None;
    }
    // b² − cc cancels badly when the sphere is small and far; by Lagrange's
    // identity it equals r² − |m × d|², which does not.
    let disc = r * r - m.cross(d).length_squared();
    if disc < 0.0 {
        return None;
    }
    // The smaller root in the cancellation-free form cc / (−b + √disc).
    let t = cc / (-b + disc.sqrt());
    if t > max_t {
        return None;
    }
    let p = o + d * t;
    Some(RayHit {
        t,
        point: p,
        normal: (p - c).normalize_or(-d),
    })
}

/// Box of half extents `h` centred at the origin (slab test).
pub fn ray_box(h: Vec3, o: Vec3, d: Vec3, max_t: f32) -> Option<RayHit> {
    let mut t_enter = f32::NEG_INFINITY;
    let mut t_exit = f32::INFINITY;
    let mut enter_axis = 0;
    for i in 0..3 {
        if d[i].abs() < 1e-12 {
            if o[i].abs() > h[i] {
                return None;
            }
            continue;
        }
        let inv = 1.0 / d[i];
        let mut t0 = (-h[i] - o[i]) * inv;
        let mut t1 = (h[i] - o[i]) * inv;
        if t0 > t1 {
            std::mem::swap(&mut t0, &mut t1);
        }
        if t0 > t_enter {
            t_enter = t0;
            enter_axis = i;
        }
        t_exit = t_exit.min(t1);
    }
    if t_enter > t_exit || t_exit < 0.0 {
        return None;
    }
    if t_enter <= 0.0 {
        return Some(inside_hit(o, d));
    }
    if t_enter > max_t {
        return None;
    }
    let mut normal = Vec3::ZERO;
    normal[enter_axis] = -d[enter_axis].signum();
    Some(RayHit {
        t: t_enter,
        point: o + d * t_enter,
        normal,
    })
}

/// Capsule: the segment (0, ±hh, 0) swept by `r`. The first entry into the
/// union of the side cylinder and the two end spheres.
pub fn ray_capsule(hh: f32, r: f32, o: Vec3, d: Vec3, max_t: f32) -> Option<RayHit> {
    let q = Vec3::new(0.0, o.y.clamp(-hh, hh), 0.0);
    if (o - q).length_squared() <= r * r {
        return Some(inside_hit(o, d));
    }
    let mut best: Option<RayHit> = None;
    let mut consider = |h: Option<RayHit>| {
        if let Some(h) = h {
            if best.is_none_or(|b| h.t < b.t) {
                best = Some(h);
            }
        }
    };
    // Side: (ox + t dx)² + (oz + t dz)² = r², entry root, |y| ≤ hh.
    let a = d.x * d.x + d.z * d.z;
    if a > 1e-12 {
        let b = o.x * d.x + o.z * d.z;
        let c = o.x * o.x + o.z * o.z - r * r;
        // b² − a·c without the cancellation (Lagrange's identity in 2D).
        let cross = o.x * d.z - o.z * d.x;
        let disc = a * r * r - cross * cross;
        if c > 0.0 && b < 0.0 && disc >= 0.0 {
            let t = c / (-b + disc.sqrt());
            let p = o + d * t;
            if t <= max_t && p.y.abs() <= hh {
                consider(Some(RayHit {
                    t,
                    point: p,
                    normal: Vec3::new(p.x, 0.0, p.z).normalize_or(-d),
                }));
            }
        }
    }
    consider(ray_sphere(Vec3::Y * hh, r, o, d, max_t));
    consider(ray_sphere(-Vec3::Y * hh, r, o, d, max_t));
    best
}

/// Most iterations of the GJK ray cast.
pub const RAY_MAX_ITERATIONS: usize = 64;
/// The GJK ray cast stops when the ray point is this fraction of the shape's
/// size from the shape.
pub const RAY_TOLERANCE: f32 = 1e-5;

/// GJK ray cast against any support mapping whose points lie within `size`
/// of the local origin. Exposed for shape casts of rounded or custom sets.
pub fn gjk_ray_cast<S: SupportMap + ?Sized>(
    shape: &S,
    size: f32,
    o: Vec3,
    d: Vec3,
    max_t: f32,
) -> Option<RayHit> {
    gjk_ray_cast_with_tolerance(
        shape,
        RAY_TOLERANCE * size.max(f32::MIN_POSITIVE),
        o,
        d,
        max_t,
    )
}

/// [`gjk_ray_cast`] with an absolute tolerance `eps`: the search stops when the
/// ray point is within `eps` of the set. Larger tolerances take fewer
/// iterations (the shape-cast benchmark shows the trade).
pub fn gjk_ray_cast_with_tolerance<S: SupportMap + ?Sized>(
    shape: &S,
    eps: f32,
    o: Vec3,
    d: Vec3,
    max_t: f32,
) -> Option<RayHit> {
    let mut lambda = 0.0f32;
    let mut x = o;
    let mut normal = Vec3::ZERO;
    let mut pts = [Vec3::ZERO; 4];
    let mut np = 0usize;
    let mut v = x - shape.support(-d);
    for _ in 0..RAY_MAX_ITERATIONS {
        if v.length_squared() <= eps * eps {
            break;
        }
        let p = shape.support(v);
        let w = x - p;
        let vw = v.dot(w);
        if vw > 0.0 {
            let vd = v.dot(d);
            if vd >= 0.0 {
                return None;
            }
            lambda -= vw / vd;
            if lambda.is_nan() || lambda > max_t {
                return None;
            }
            x = o + d * lambda;
            normal = v;
        }
        // Points already in the set add nothing (they would make it flat).
        if pts[..np]
            .iter()
            .all(|&q| (q - p).length_squared() > eps * eps * 1e-4)
        {
            if np == 4 {
                // Only happens with a reduced set of 4 that did not contain
                // the ray point; restart the set from the new point.
                np = 0;
            }
            pts[np] = p;
            np += 1;
        }
        let mut ws = [Vec3::ZERO; 4];
        for i in 0..np {
            ws[i] = x - pts[i];
        }
        let c = closest_to_origin(&ws[..np]);
        if c.inside {
            v = Vec3::ZERO;
            break;
        }
        let mut k = 0;
        for i in 0..np {
            if c.mask & (1 << i) != 0 {
                pts[k] = pts[i];
                k += 1;
            }
        }
        np = k;
        v = c.v;
    }
    if v.length_squared() > (100.0 * eps) * (100.0 * eps) {
        // Did not converge; refuse rather than report a wrong point.
        return None;
    }
    if lambda == 0.0 {
        return Some(inside_hit(o, d));
    }
    Some(RayHit {
        t: lambda,
        point: x,
        normal: normal.normalize_or(-d),
    })
}
