//! Polytope–polytope contact (boxes and convex hulls) by the separating axis
//! test.
//!
//! The candidate axes are the face normals of both shapes and the cross
//! products of edge pairs. Of the edge pairs only those whose arcs on the
//! Gauss map cross, i.e. that form a face of the Minkowski difference, can
//! realize the minimum, so the others are skipped without a cross product.
//! The largest separation over all axes decides: a face axis leads to a
//! clipped face contact ([`clip_features_keeping`]), an edge axis to a single
//! point at the closest points of the two edges. Faces are preferred over
//! edges, and A's face over B's, unless the other is better by a small
//! tolerance (or was chosen last time and is still within it), which keeps
//! the manifold and its feature ids steady.
//!
//! [`box_box`] takes the edge axes straight from the 3 × 3 pairs of box axes
//! instead of walking edge pairs. A [`SatCache`] per pair remembers the last
//! deciding axis: a separated pair is usually dismissed by that one axis.
//!
//! Everything is computed relative to A's position, so the answer does not
//! lose precision far from the origin; only the final world points are
//! rounded there.

use super::manifold::{
    clip_features_keeping, closest_segment_params, ContactPoint, FeatureId, FeatureKind, Manifold,
    Reference, SupportFeature, MAX_MANIFOLD_POINTS,
};
use crate::physics::math::{Mat3, Pose, Vec3};
use crate::physics::shape::{ConvexHull, Cuboid, BOX_EDGES, BOX_FACES};

/// A convex polyhedron with explicit faces and edges, in its local frame.
pub trait Polytope {
    fn vertex(&self, i: usize) -> Vec3;
    fn face_count(&self) -> usize;
    /// Outward unit normal and offset: the face lies on `n·x = offset`.
    fn face_plane(&self, f: usize) -> (Vec3, f32);
    fn edge_count(&self) -> usize;
    /// The edge's two vertices and its two faces: it runs v0 → v1
    /// counter-clockwise in f0 and v1 → v0 in f1, so n(f0) × n(f1) points
    /// from v0 to v1.
    fn edge(&self, e: usize) -> ([usize; 2], [usize; 2]);
    /// A vertex maximizing `x·d`.
    fn support(&self, d: Vec3) -> Vec3;
    /// Among the faces holding the support vertex in direction `d`, the one
    /// whose normal is most aligned with `d` (the incident face for a clip).
    fn supporting_face(&self, d: Vec3) -> usize;
    /// Face `f` as a world-space polygon for `pose`.
    fn face_feature(&self, pose: &Pose, f: usize) -> SupportFeature;
    /// A point strictly inside.
    fn interior_point(&self) -> Vec3;
}

impl Polytope for Cuboid {
    #[inline]
    fn vertex(&self, i: usize) -> Vec3 {
        Cuboid::vertex(self, i)
    }
    #[inline]
    fn face_count(&self) -> usize {
        BOX_FACES.len()
    }
    #[inline]
    fn face_plane(&self, f: usize) -> (Vec3, f32) {
        (Cuboid::face_normal(f), self.face_offset(f))
    }
    #[inline]
    fn edge_count(&self) -> usize {
        BOX_EDGES.len()
    }
    #[inline]
    fn edge(&self, e: usize) -> ([usize; 2], [usize; 2]) {
        let (v, f) = BOX_EDGES[e];
        (
            [v[0] as usize, v[1] as usize],
            [f[0] as usize, f[1] as usize],
        )
    }
    #[inline]
    fn support(&self, d: Vec3) -> Vec3 {
        Cuboid::support(self, d)
    }
    #[inline]
    fn supporting_face(&self, d: Vec3) -> usize {
        // The face of the largest component holds the support vertex.
        Cuboid::most_aligned_face(d)
    }
    fn face_feature(&self, pose: &Pose, f: usize) -> SupportFeature {
        Cuboid::face_feature(self, pose, f)
    }
    #[inline]
    fn interior_point(&self) -> Vec3 {
        Vec3::ZERO
    }
}

impl Polytope for ConvexHull {
    #[inline]
    fn vertex(&self, i: usize) -> Vec3 {
        self.vertices[i]
    }
    #[inline]
    fn face_count(&self) -> usize {
        self.faces().len()
    }
    #[inline]
    fn face_plane(&self, f: usize) -> (Vec3, f32) {
        let face = &self.faces()[f];
        (face.normal, face.offset)
    }
    #[inline]
    fn edge_count(&self) -> usize {
        self.edges().len()
    }
    #[inline]
    fn edge(&self, e: usize) -> ([usize; 2], [usize; 2]) {
        let ed = &self.edges()[e];
        (
            [ed.vertices[0] as usize, ed.vertices[1] as usize],
            [ed.faces[0] as usize, ed.faces[1] as usize],
        )
    }
    #[inline]
    fn support(&self, d: Vec3) -> Vec3 {
        ConvexHull::support(self, d)
    }
    fn supporting_face(&self, d: Vec3) -> usize {
        ConvexHull::supporting_face(self, d)
    }
    fn face_feature(&self, pose: &Pose, f: usize) -> SupportFeature {
        ConvexHull::face_feature(self, pose, f)
    }
    #[inline]
    fn interior_point(&self) -> Vec3 {
        self.centroid()
    }
}

/// The axis that decided the last query of a pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SatAxis {
    #[default]
    None,
    /// Face of A.
    FaceA(u16),
    /// Face of B.
    FaceB(u16),
    /// Edge of A × edge of B.
    Edges(u16, u16),
}

/// What one pair remembers between frames: the axis that decided last time,
/// and the ids of the points kept. A pair that was separated is first tested
/// along that axis again, which usually ends the query at once; a pair in
/// contact keeps the same kind of reference feature while the alternatives
/// are not clearly better, and the same points when more than four must be
/// reduced to four.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SatCache {
    pub axis: SatAxis,
    /// The axis separated the shapes by more than the speculative distance.
    pub separated: bool,
    pub kept: [FeatureId; MAX_MANIFOLD_POINTS],
    pub kept_count: u8,
    /// The normal (world frame, A to B) that decides between face axes that
    /// separate the shapes exactly as much (set by the caller before each
    /// query: the pair's last normal, or a new pair's own direction). Two
    /// identical boxes at one point tie on all six face axes; taking the
    /// first for every pair pushed 80 boxes spawned at one point apart along
    /// one line, the outer ones at 31 m/s.
    pub prefer: Vec3,
}

/// Slack before switching reference feature: absolute (m) plus relative to
/// the separation.
pub(crate) const SWITCH_ABS: f32 = 5e-4;
pub(crate) const SWITCH_REL: f32 = 0.02;

/// Maps points of one polytope's frame into the other's.
struct Rel {
    rot: Mat3,
    trans: Vec3,
}

impl Rel {
    #[inline]
    fn point(&self, p: Vec3) -> Vec3 {
        self.rot * p + self.trans
    }
}

/// Contact between two polytopes with rounding radii (margins)
/// `radius_a`, `radius_b`. None when they are farther apart than
/// `speculative` (surface to surface), or when no point comes within it.
/// The normal points from A to B.
#[allow(clippy::too_many_arguments)]
pub fn polytope_contact<A: Polytope + ?Sized, B: Polytope + ?Sized>(
    a: &A,
    pose_a: &Pose,
    b: &B,
    pose_b: &Pose,
    radius_a: f32,
    radius_b: f32,
    speculative: f32,
    cache: &mut SatCache,
) -> Option<Manifold> {
    let pair = Pair {
        a,
        pose_a,
        b,
        pose_b,
        radius_a,
        radius_b,
        speculative,
    };
    contact(&pair, cache, |rel, stop| edge_query(a, b, rel, stop))
}

/// Box–box contact (no rounding): [`polytope_contact`] for two cuboids with
/// the edge axes taken directly from the 3 × 3 pairs of box axes, without
/// allocation.
pub fn box_box(
    a: &Cuboid,
    pose_a: &Pose,
    b: &Cuboid,
    pose_b: &Pose,
    speculative: f32,
    cache: &mut SatCache,
) -> Option<Manifold> {
    let pair = Pair {
        a,
        pose_a,
        b,
        pose_b,
        radius_a: 0.0,
        radius_b: 0.0,
        speculative,
    };
    contact(&pair, cache, |rel, _| box_edge_query(a, b, rel))
}

/// The arguments of a contact query.
struct Pair<'a, A: ?Sized, B: ?Sized> {
    a: &'a A,
    pose_a: &'a Pose,
    b: &'a B,
    pose_b: &'a Pose,
    radius_a: f32,
    radius_b: f32,
    speculative: f32,
}

/// SAT and manifold, with the edge query passed in (`rel` maps A's frame
/// into B's; the query may stop early past `stop`).
fn contact<A: Polytope + ?Sized, B: Polytope + ?Sized>(
    pair: &Pair<A, B>,
    cache: &mut SatCache,
    edge_query: impl Fn(&Rel, f32) -> EdgeQuery,
) -> Option<Manifold> {
    let Pair {
        a,
        pose_a,
        b,
        pose_b,
        radius_a,
        radius_b,
        speculative,
    } = *pair;
    let reach = speculative + radius_a + radius_b;
    let origin = pose_a.position;
    let ra = Mat3::from_quat(pose_a.rotation);
    let rb = Mat3::from_quat(pose_b.rotation);
    let d = pose_b.position - origin;
    let rbt = rb.transpose();
    let rat = ra.transpose();
    let a_to_b = Rel {
        rot: rbt * ra,
        trans: rbt * -d,
    };
    let b_to_a = Rel {
        rot: rat * rb,
        trans: rat * d,
    };

    if let Some(sep) = cached_separation(a, b, &a_to_b, &b_to_a, cache.axis) {
        if sep > reach {
            cache.separated = true;
            cache.kept_count = 0;
            return None;
        }
    }
    let separated = |cache: &mut SatCache, axis| {
        *cache = SatCache {
            axis,
            separated: true,
            ..Default::default()
        };
        None
    };
    let prefer = cache.prefer;
    let (fa_sep, fa) = face_query(a, b, &a_to_b, reach, rat * prefer);
    if fa_sep > reach {
        return separated(cache, SatAxis::FaceA(fa as u16));
    }
    let (fb_sep, fb) = face_query(b, a, &b_to_a, reach, rbt * -prefer);
    if fb_sep > reach {
        return separated(cache, SatAxis::FaceB(fb as u16));
    }
    let edge = edge_query(&a_to_b, reach);
    if edge.sep > reach {
        return separated(cache, SatAxis::Edges(edge.a as u16, edge.b as u16));
    }

    // The best axis, and the one hysteresis keeps: faces before edges, A's
    // face before B's, the kind used last time before a switch.
    let slack = |s: f32| SWITCH_ABS + SWITCH_REL * s.abs();
    let best = if edge.sep > fa_sep.max(fb_sep) {
        Axis::Edge
    } else if fb_sep > fa_sep {
        Axis::FaceB
    } else {
        Axis::FaceA
    };
    let use_b = if matches!(cache.axis, SatAxis::FaceB(_)) {
        fb_sep + slack(fb_sep) >= fa_sep
    } else {
        fb_sep > fa_sep + slack(fa_sep)
    };
    let face_sep = if use_b { fb_sep } else { fa_sep };
    let use_edge = edge.sep > f32::NEG_INFINITY
        && if matches!(cache.axis, SatAxis::Edges(..)) {
            edge.sep + slack(edge.sep) >= face_sep
        } else {
            edge.sep > face_sep + slack(face_sep)
        };
    let preferred = if use_edge {
        Axis::Edge
    } else if use_b {
        Axis::FaceB
    } else {
        Axis::FaceA
    };

    let prefer = &cache.kept[..cache.kept_count as usize];
    let local_a = Pose::new(Vec3::ZERO, pose_a.rotation);
    let local_b = Pose::new(d, pose_b.rotation);
    // The manifold for an axis, and whether it is a real contact there. The
    // best axis always is; a kept axis that is not the best may not be (its
    // features need not overlap), and then the best one is used.
    let build = |axis: Axis| -> (Manifold, bool) {
        match axis {
            Axis::Edge => {
                let ([u, v], _) = a.edge(edge.a);
                let ([s, t], _) = b.edge(edge.b);
                let (a0, a1) = (ra * a.vertex(u), ra * a.vertex(v));
                let (b0, b1) = (rb * b.vertex(s) + d, rb * b.vertex(t) + d);
                let n = (rb * edge.axis).normalize();
                let (s, t) = closest_segment_params(a0, a1, b0, b1);
                let (ca, cb) = (a0 + (a1 - a0) * s, b0 + (b1 - b0) * t);
                let sep = (cb - ca).dot(n) - radius_a - radius_b;
                let mut m = Manifold::new(n);
                if sep <= speculative {
                    m.push(ContactPoint {
                        point_a: ca + n * radius_a,
                        point_b: cb - n * radius_b,
                        separation: sep,
                        id: FeatureId::new(
                            FeatureKind::Edge,
                            edge.a as u8,
                            FeatureKind::Edge,
                            edge.b as u8,
                        ),
                    });
                }
                // Edges cross: the closest points are inside both.
                let inside = s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0;
                (m, inside)
            }
            Axis::FaceA | Axis::FaceB => {
                let (m, sat) = if axis == Axis::FaceA {
                    let n = ra * a.face_plane(fa).0;
                    let ib = b.supporting_face(rbt * -n);
                    let fa_feat = a.face_feature(&local_a, fa);
                    let fb_feat = b.face_feature(&local_b, ib);
                    let m = clip_features_keeping(
                        &fa_feat,
                        &fb_feat,
                        n,
                        [radius_a, radius_b],
                        speculative,
                        Reference::A,
                        prefer,
                    );
                    (m, fa_sep)
                } else {
                    let n = -(rb * b.face_plane(fb).0);
                    let ia = a.supporting_face(rat * n);
                    let fa_feat = a.face_feature(&local_a, ia);
                    let fb_feat = b.face_feature(&local_b, fb);
                    let m = clip_features_keeping(
                        &fa_feat,
                        &fb_feat,
                        n,
                        [radius_a, radius_b],
                        speculative,
                        Reference::B,
                        prefer,
                    );
                    (m, fb_sep)
                };
                // The deepest point along the axis made it into the clip.
                let deepest = m
                    .points()
                    .iter()
                    .map(|p| p.separation)
                    .fold(f32::INFINITY, f32::min);
                let real = deepest + radius_a + radius_b <= sat + slack(sat);
                (m, real)
            }
        }
    };
    let (mut m, real) = build(preferred);
    let mut used = preferred;
    if !real && preferred != best {
        m = build(best).0;
        used = best;
    }
    // Apart, the axis's separation is a lower bound of the distance; when
    // the feature nearest along it was clipped away, the points left claim
    // more room than there is (seen: 3.7 cm for a true 3.4 cm, a box and a
    // tetrahedron; 4.48 cm for 4.44 cm, within the switching slack), and a
    // speculative contact must never do that. B's points move in along the
    // normal together until the nearest claims the axis's separation (which
    // it does already, up to rounding, when the nearest feature is kept).
    let sat = match used {
        Axis::FaceA => fa_sep,
        Axis::FaceB => fb_sep,
        Axis::Edge => edge.sep,
    };
    let nearest = m
        .points()
        .iter()
        .map(|p| p.separation + radius_a + radius_b)
        .fold(f32::INFINITY, f32::min);
    if sat > 0.0 && nearest.is_finite() && nearest > sat + 1.0e-6 {
        let excess = nearest - sat;
        let n = m.normal;
        for p in &mut m.points[..m.count] {
            p.separation -= excess;
            p.point_b -= n * excess;
        }
    }
    cache.axis = match used {
        Axis::FaceA => SatAxis::FaceA(fa as u16),
        Axis::FaceB => SatAxis::FaceB(fb as u16),
        Axis::Edge => SatAxis::Edges(edge.a as u16, edge.b as u16),
    };
    cache.separated = false;
    cache.kept_count = m.count as u8;
    for (k, p) in cache.kept.iter_mut().zip(m.points()) {
        *k = p.id;
    }
    if m.count == 0 {
        return None;
    }
    for p in &mut m.points[..m.count] {
        p.point_a += origin;
        p.point_b += origin;
    }
    Some(m)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Axis {
    FaceA,
    FaceB,
    Edge,
}

/// Largest separation over the face normals of `p`, measured against `q`
/// (`rel` maps p's frame into q's). Stops early past `stop`.
fn face_query<P: Polytope + ?Sized, Q: Polytope + ?Sized>(
    p: &P,
    q: &Q,
    rel: &Rel,
    stop: f32,
    prefer: Vec3,
) -> (f32, usize) {
    let mut best = (f32::NEG_INFINITY, 0);
    for i in 0..p.face_count() {
        let sep = face_separation(p, q, rel, i);
        // (An exact tie, to rounding, goes to the face nearer `prefer`.)
        let tie = (sep - best.0).abs() <= 1.0e-6 * (1.0 + sep.abs())
            && p.face_plane(i).0.dot(prefer) > p.face_plane(best.1).0.dot(prefer);
        if sep > best.0 || tie {
            best = (sep, i);
            if sep > stop {
                break;
            }
        }
    }
    best
}

#[inline]
fn face_separation<P: Polytope + ?Sized, Q: Polytope + ?Sized>(
    p: &P,
    q: &Q,
    rel: &Rel,
    i: usize,
) -> f32 {
    let (n, off) = p.face_plane(i);
    let nq = rel.rot * n;
    let dq = off + nq.dot(rel.trans);
    nq.dot(q.support(-nq)) - dq
}

struct EdgeQuery {
    sep: f32,
    a: usize,
    b: usize,
    /// Unit axis in B's frame, pointing from A to B.
    axis: Vec3,
}

/// Do the arc a→b and the arc c→d on the unit sphere cross? `bxa` is a
/// positive multiple of b × a and `dxc` of d × c: the normals of their great
/// circles. c and d must lie on opposite sides of the first circle, a and b
/// on opposite sides of the second, and the crossing must be on the same
/// hemisphere for both arcs (not at the antipode).
#[inline]
fn arcs_cross(a: Vec3, b: Vec3, bxa: Vec3, c: Vec3, d: Vec3, dxc: Vec3) -> bool {
    let cba = c.dot(bxa);
    let dba = d.dot(bxa);
    let adc = a.dot(dxc);
    let bdc = b.dot(dxc);
    cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0
}

/// Largest separation over the cross products of edge pairs that form a
/// face of the Minkowski difference A − B, in B's frame.
///
/// The arc of an edge on the Gauss map runs from n(f0) to n(f1); its great
/// circle's normal n(f1) × n(f0) is a positive multiple of −(v1 − v0), so the
/// edge vectors, needed for the axis anyway, stand in for the cross
/// products. B enters the difference with its normals negated, which leaves
/// the circle normal −(v1 − v0) unchanged.
fn edge_query<P: Polytope + ?Sized, Q: Polytope + ?Sized>(
    a: &P,
    b: &Q,
    a_to_b: &Rel,
    stop: f32,
) -> EdgeQuery {
    let mut best = EdgeQuery {
        sep: f32::NEG_INFINITY,
        a: 0,
        b: 0,
        axis: Vec3::Y,
    };
    let ca = a_to_b.point(a.interior_point());
    for i in 0..a.edge_count() {
        let ([u, v], [f0, f1]) = a.edge(i);
        let pa = a_to_b.point(a.vertex(u));
        let ea = a_to_b.point(a.vertex(v)) - pa;
        let n1 = a_to_b.rot * a.face_plane(f0).0;
        let n2 = a_to_b.rot * a.face_plane(f1).0;
        let ea_len = ea.length();
        for j in 0..b.edge_count() {
            let ([s, t], [g0, g1]) = b.edge(j);
            let pb = b.vertex(s);
            let eb = b.vertex(t) - pb;
            let m1 = -b.face_plane(g0).0;
            let m2 = -b.face_plane(g1).0;
            if !arcs_cross(n1, n2, -ea, m1, m2, -eb) {
                continue;
            }
            let axis = ea.cross(eb);
            let len = axis.length();
            // Parallel edges: their faces already give the axis.
            if len <= 1e-5 * ea_len * eb.length() {
                continue;
            }
            let mut n = axis / len;
            if n.dot(pa - ca) < 0.0 {
                n = -n;
            }
            let sep = n.dot(pb - pa);
            if sep > best.sep {
                best = EdgeQuery {
                    sep,
                    a: i,
                    b: j,
                    axis: n,
                };
                if sep > stop {
                    return best;
                }
            }
        }
    }
    best
}

/// The edge query for two boxes: the nine cross products of their axes,
/// each with the separation of the boxes' projections, and the two edges
/// that support the boxes along the best one. In B's frame. No Gauss-map
/// test is needed: when an edge axis beats every face axis it is the best
/// direction overall, hence a face of the Minkowski difference; when it does
/// not, the faces are used (and a held edge axis is checked for a real
/// crossing before use).
fn box_edge_query(a: &Cuboid, b: &Cuboid, a_to_b: &Rel) -> EdgeQuery {
    let (ha, hb) = (a.half_extents, b.half_extents);
    let ax = [a_to_b.rot.x_axis, a_to_b.rot.y_axis, a_to_b.rot.z_axis];
    // From A's centre to B's.
    let t = -a_to_b.trans;
    let mut best = EdgeQuery {
        sep: f32::NEG_INFINITY,
        a: 0,
        b: 0,
        axis: Vec3::Y,
    };
    let mut best_ij = (0, 0);
    for (i, ai) in ax.iter().enumerate() {
        for j in 0..3 {
            let c = ai.cross(Vec3::AXES[j]);
            let len = c.length();
            if len <= 1e-5 {
                continue;
            }
            let mut n = c / len;
            if n.dot(t) < 0.0 {
                n = -n;
            }
            let r_a =
                ha.x * n.dot(ax[0]).abs() + ha.y * n.dot(ax[1]).abs() + ha.z * n.dot(ax[2]).abs();
            let r_b = hb.dot(n.abs());
            let sep = n.dot(t) - r_a - r_b;
            if sep > best.sep {
                best.sep = sep;
                best.axis = n;
                best_ij = (i, j);
            }
        }
    }
    if best.sep > f32::NEG_INFINITY {
        let (i, j) = best_ij;
        let n = best.axis;
        // A's edge along axis i supporting +n; B's along j supporting −n.
        let mut lo_a = 0;
        for (k, axk) in ax.iter().enumerate() {
            if k != i && n.dot(*axk) >= 0.0 {
                lo_a |= 1 << k;
            }
        }
        let mut lo_b = 0;
        for k in 0..3 {
            if k != j && n[k] <= 0.0 {
                lo_b |= 1 << k;
            }
        }
        best.a = Cuboid::edge_index(lo_a, i);
        best.b = Cuboid::edge_index(lo_b, j);
    }
    best
}

/// Separation along the axis cached from the last query, if it still names
/// features of these shapes.
fn cached_separation<A: Polytope + ?Sized, B: Polytope + ?Sized>(
    a: &A,
    b: &B,
    a_to_b: &Rel,
    b_to_a: &Rel,
    axis: SatAxis,
) -> Option<f32> {
    match axis {
        SatAxis::None => None,
        SatAxis::FaceA(i) => {
            ((i as usize) < a.face_count()).then(|| face_separation(a, b, a_to_b, i as usize))
        }
        SatAxis::FaceB(j) => {
            ((j as usize) < b.face_count()).then(|| face_separation(b, a, b_to_a, j as usize))
        }
        SatAxis::Edges(i, j) => {
            if i as usize >= a.edge_count() || j as usize >= b.edge_count() {
                return None;
            }
            let ([u, v], _) = a.edge(i as usize);
            let ([s, t], _) = b.edge(j as usize);
            let ea = a_to_b.rot * (a.vertex(v) - a.vertex(u));
            let eb = b.vertex(t) - b.vertex(s);
            let n = ea.cross(eb).normalize_or_zero();
            if n == Vec3::ZERO {
                return None;
            }
            // Any axis separates by min_B − max_A along it; try both signs.
            let along = |n: Vec3| {
                let max_a = n.dot(a_to_b.point(a.support(a_to_b.rot.transpose() * n)));
                let min_b = n.dot(b.support(-n));
                min_b - max_a
            };
            Some(along(n).max(along(-n)))
        }
    }
}

#[cfg(test)]
#[path = "polytope_tests.rs"]
mod tests;
