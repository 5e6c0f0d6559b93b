//! Contact manifolds: up to four points per pair, each with a feature id.

use crate::physics::math::Vec3;

/// Which features of the two shapes produced a contact point. Packed as four
/// bytes: (kind A, index A, kind B, index B). It stays the same while the same
/// features touch, so the solver can carry impulses from frame to frame.
/// Indices keep their low 8 bits: on hulls with more than 256 vertices two
/// points of one manifold can, rarely, share an id, which costs at most that
/// point's warm start.
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

    /// The point of least separation (the deepest), if any.
    pub fn deepest(&self) -> Option<&ContactPoint> {
        self.points()
            .iter()
            .min_by(|a, b| a.separation.total_cmp(&b.separation))
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

/// Sine of the angle within which a direction still selects a face (its
/// normal is that close to the direction) or an edge (that close to
/// perpendicular) as the supporting feature, rather than a lower-dimensional
/// one: about 1.15°. Two segments this close to parallel are clipped against
/// each other instead of meeting at one point.
pub const FEATURE_ANGLE_TOLERANCE: f32 = 0.02;

/// Cosine counterpart of [`FEATURE_ANGLE_TOLERANCE`]: a face supports `d`
/// when `n·d̂` is at least this.
pub const FEATURE_FACE_COS: f32 = 0.999_8;

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

// ---------------------------------------------------------------------------
// Clipping
// ---------------------------------------------------------------------------

/// Which feature is the reference (the one clipped against) when both are
/// polygons. Otherwise the higher-dimensional feature always is, and A for
/// two segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reference {
    /// The polygon whose plane is more nearly perpendicular to the normal;
    /// A unless B is clearly better.
    #[default]
    Auto,
    A,
    B,
}

/// Builds a manifold from the support feature `fa` of A (in direction
/// `normal`) and `fb` of B (in direction −`normal`), `normal` pointing from A
/// to B (normalized here). The features are of the cores; radii push the
/// surface points out along the normal. Points farther apart than
/// `speculative` are dropped.
///
/// * polygon against anything: the other feature is clipped against the
///   polygon's side planes (Sutherland–Hodgman) and each kept point is
///   projected along the normal onto the polygon's plane;
/// * two segments within [`FEATURE_ANGLE_TOLERANCE`] of parallel: the
///   incident segment is clipped to the reference segment's extent;
/// * otherwise (crossing segments, a point against a point or a segment), or
///   when the features do not overlap seen along the normal: the single
///   closest pair of points of the two features.
///
/// More than four points are reduced to four: the deepest, then the ones
/// that span the most area. Each point's [`FeatureId`] names the features that
/// made it (incident vertex on reference face, reference side edge crossing
/// incident edge, reference corner over incident face, …), so it stays the
/// same while the same features touch.
pub fn clip_features(
    fa: &SupportFeature,
    fb: &SupportFeature,
    normal: Vec3,
    radius_a: f32,
    radius_b: f32,
    speculative: f32,
) -> Manifold {
    clip_features_with(
        fa,
        fb,
        normal,
        radius_a,
        radius_b,
        speculative,
        Reference::Auto,
    )
}

/// [`clip_features`] with the reference polygon chosen by the caller (SAT
/// knows which face realized the separating axis).
pub fn clip_features_with(
    fa: &SupportFeature,
    fb: &SupportFeature,
    normal: Vec3,
    radius_a: f32,
    radius_b: f32,
    speculative: f32,
    reference: Reference,
) -> Manifold {
    clip_features_keeping(
        fa,
        fb,
        normal,
        [radius_a, radius_b],
        speculative,
        reference,
        &[],
    )
}

/// [`clip_features_with`], and when more than four points must be reduced,
/// points whose ids are in `prefer` (last frame's) win ties and stay the
/// deepest within [`REDUCE_KEEP_DEPTH`].
pub fn clip_features_keeping(
    fa: &SupportFeature,
    fb: &SupportFeature,
    normal: Vec3,
    [radius_a, radius_b]: [f32; 2],
    speculative: f32,
    reference: Reference,
    prefer: &[FeatureId],
) -> Manifold {
    let normal = normal.normalize_or_zero();
    let mut out = Manifold::new(normal);
    if fa.count == 0 || fb.count == 0 || normal == Vec3::ZERO {
        return out;
    }
    let ref_is_a = choose_reference(fa, fb, normal, reference);
    let ctx = if ref_is_a {
        Ctx {
            r: fa,
            inc: fb,
            n: normal,
            radius: radius_a + radius_b,
            ref_is_a,
        }
    } else {
        Ctx {
            r: fb,
            inc: fa,
            n: -normal,
            radius: radius_a + radius_b,
            ref_is_a,
        }
    };
    let mut cands = Candidates::default();
    match (dim(ctx.r), dim(ctx.inc)) {
        (2, _) => clip_against_polygon(&ctx, &mut cands),
        (1, 1) if segments_parallel(ctx.r, ctx.inc) => clip_segments(&ctx, &mut cands),
        _ => {}
    }
    if cands.len == 0 {
        // No overlap seen along the normal (or no area to clip against):
        // the closest pair of points.
        let (p_ref, p_inc, id) = closest_features(ctx.r, ctx.inc, ref_is_a);
        cands.push(Candidate {
            p_ref,
            p_inc,
            sep: (p_inc - p_ref).dot(ctx.n) - ctx.radius,
            id,
        });
    }
    // Keep the points within reach, without duplicates (in place).
    let eps = 1e-5 * cands.extent();
    let mut kept = 0;
    for i in 0..cands.len {
        let c = cands.items[i];
        if c.sep > speculative {
            continue;
        }
        let dup = cands.items[..kept]
            .iter()
            .position(|k| k.id == c.id || (k.p_inc - c.p_inc).length_squared() <= eps * eps);
        match dup {
            Some(k) if c.sep < cands.items[k].sep => cands.items[k] = c,
            Some(_) => {}
            None => {
                cands.items[kept] = c;
                kept += 1;
            }
        }
    }
    cands.len = kept;
    let (sel, count) = reduce(cands.items(), ctx.n, prefer);
    let (ra, rb) = (radius_a, radius_b);
    for &i in &sel[..count] {
        let c = cands.items[i];
        // Core points to surface points: the reference surface lies r_ref out
        // along n_ref, the incident one r_inc back.
        let (r_ref, r_inc) = if ref_is_a { (ra, rb) } else { (rb, ra) };
        let s_ref = c.p_ref + ctx.n * r_ref;
        let s_inc = c.p_inc - ctx.n * r_inc;
        let (point_a, point_b) = if ref_is_a {
            (s_ref, s_inc)
        } else {
            (s_inc, s_ref)
        };
        out.push(ContactPoint {
            point_a,
            point_b,
            separation: c.sep,
            id: c.id,
        });
    }
    out
}

/// The reference and incident features, oriented: `n` points from the
/// reference feature towards the incident one.
struct Ctx<'a> {
    r: &'a SupportFeature,
    inc: &'a SupportFeature,
    n: Vec3,
    radius: f32,
    ref_is_a: bool,
}

impl Ctx<'_> {
    /// A feature id from the reference's and the incident's parts.
    fn id(&self, kr: FeatureKind, ir: u8, ki: FeatureKind, ii: u8) -> FeatureId {
        if self.ref_is_a {
            FeatureId::new(kr, ir, ki, ii)
        } else {
            FeatureId::new(ki, ii, kr, ir)
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Candidate {
    /// Point on the reference core.
    p_ref: Vec3,
    /// Point on the incident core.
    p_inc: Vec3,
    sep: f32,
    id: FeatureId,
}

const MAX_CANDIDATES: usize = 2 * MAX_FEATURE_POINTS;

#[derive(Clone, Copy)]
struct Candidates {
    items: [Candidate; MAX_CANDIDATES],
    len: usize,
}

impl Default for Candidates {
    fn default() -> Self {
        Self {
            items: [Candidate::default(); MAX_CANDIDATES],
            len: 0,
        }
    }
}

impl Candidates {
    fn push(&mut self, c: Candidate) {
        if self.len < MAX_CANDIDATES {
            self.items[self.len] = c;
            self.len += 1;
        }
    }
    fn items(&self) -> &[Candidate] {
        &self.items[..self.len]
    }
    /// Largest distance of a point from the first: the patch size.
    fn extent(&self) -> f32 {
        let Some(first) = self.items().first() else {
            return 0.0;
        };
        self.items()
            .iter()
            .map(|c| (c.p_inc - first.p_inc).length())
            .fold(0.0, f32::max)
    }
}

/// 0 for a point, 1 for a segment, 2 for a polygon.
fn dim(f: &SupportFeature) -> usize {
    f.count.min(3) - 1
}

/// Unit normal of a polygon (Newell's method), oriented by its winding.
fn polygon_normal(f: &SupportFeature) -> Vec3 {
    let pts = f.points();
    let c = centroid(pts);
    let mut n = Vec3::ZERO;
    for i in 0..pts.len() {
        n += (pts[i] - c).cross(pts[(i + 1) % pts.len()] - c);
    }
    n.normalize_or_zero()
}

fn centroid(pts: &[Vec3]) -> Vec3 {
    pts.iter().copied().sum::<Vec3>() / pts.len() as f32
}

fn choose_reference(
    fa: &SupportFeature,
    fb: &SupportFeature,
    normal: Vec3,
    reference: Reference,
) -> bool {
    let (da, db) = (dim(fa), dim(fb));
    if da != db {
        return da > db;
    }
    if da < 2 {
        return true;
    }
    match reference {
        Reference::A => true,
        Reference::B => false,
        Reference::Auto => {
            let aa = polygon_normal(fa).dot(normal).abs();
            let ab = polygon_normal(fb).dot(normal).abs();
            ab <= aa + 1e-5
        }
    }
}

fn segments_parallel(a: &SupportFeature, b: &SupportFeature) -> bool {
    let ea = (a.points[1] - a.points[0]).normalize_or_zero();
    let eb = (b.points[1] - b.points[0]).normalize_or_zero();
    ea.cross(eb).length() <= FEATURE_ANGLE_TOLERANCE
}

/// The plane a reference feature projects onto: through `origin`, with unit
/// normal `normal` (oriented along n_ref) and `denom = normal·n_ref`.
struct RefPlane {
    origin: Vec3,
    normal: Vec3,
    denom: f32,
}

impl RefPlane {
    fn new(origin: Vec3, normal: Vec3, n_ref: Vec3) -> Self {
        let normal = if normal.dot(n_ref) < 0.0 {
            -normal
        } else {
            normal
        };
        let denom = normal.dot(n_ref);
        // A plane steeper than 60° to the normal is no reference: project
        // onto the plane perpendicular to the normal instead.
        if denom < 0.5 {
            Self {
                origin,
                normal: n_ref,
                denom: 1.0,
            }
        } else {
            Self {
                origin,
                normal,
                denom,
            }
        }
    }

    /// Candidate for incident point `x`: its projection along n_ref onto the
    /// plane, and the distance along n_ref between them.
    fn project(&self, ctx: &Ctx, x: Vec3, id: FeatureId) -> Candidate {
        let t = (x - self.origin).dot(self.normal) / self.denom;
        Candidate {
            p_ref: x - ctx.n * t,
            p_inc: x,
            sep: t - ctx.radius,
            id,
        }
    }
}

/// What the polygon edge leaving a clip-polygon vertex lies on.
#[derive(Clone, Copy)]
enum Along {
    /// An incident edge, named by its start vertex id.
    Incident(u8),
    /// Side plane `j` of the reference polygon.
    Side(u8),
}

#[derive(Clone, Copy)]
struct ClipVertex {
    p: Vec3,
    id: FeatureId,
    along: Along,
}

/// A convex polygon of n vertices clipped by k planes keeps at most n + k.
const CLIP_CAPACITY: usize = 2 * MAX_FEATURE_POINTS;

#[derive(Clone, Copy)]
struct ClipPolygon {
    v: [ClipVertex; CLIP_CAPACITY],
    len: usize,
}

impl ClipPolygon {
    fn new() -> Self {
        Self {
            v: [ClipVertex {
                p: Vec3::ZERO,
                id: FeatureId::default(),
                along: Along::Side(0),
            }; CLIP_CAPACITY],
            len: 0,
        }
    }
    fn push(&mut self, v: ClipVertex) {
        if self.len < CLIP_CAPACITY {
            self.v[self.len] = v;
            self.len += 1;
        }
    }
}

/// Clips the incident feature against the side planes of the reference
/// polygon and projects what is left onto its plane.
fn clip_against_polygon(ctx: &Ctx, out: &mut Candidates) {
    use FeatureKind::{Edge, Face, Vertex};
    let r = ctx.r;
    let m = r.count;
    let pn = polygon_normal(r);
    if pn == Vec3::ZERO {
        return;
    }
    let c = centroid(r.points());
    let size = r
        .points()
        .iter()
        .map(|p| (*p - c).length())
        .fold(0.0, f32::max);
    let eps = 1e-5 * size;
    let plane = RefPlane::new(c, pn, ctx.n);
    // Side plane j: through r_j, outward normal (r_{j+1} − r_j) × pn (the
    // loop winds counter-clockwise about pn).
    let mut sides = [(Vec3::ZERO, Vec3::ZERO); MAX_FEATURE_POINTS];
    for (j, s) in sides.iter_mut().enumerate().take(m) {
        let a = r.points[j];
        let e = r.points[(j + 1) % m] - a;
        *s = (a, e.cross(pn).normalize_or_zero());
    }
    let side = |j: usize| sides[j];
    let inside = |x: Vec3| {
        (0..m).all(|j| {
            let (a, s) = side(j);
            (x - a).dot(s) <= eps
        })
    };
    let inc = ctx.inc;
    match dim(inc) {
        0 => {
            let x = inc.points[0];
            if inside(x) {
                out.push(plane.project(ctx, x, ctx.id(Face, r.face, Vertex, inc.ids[0])));
            }
        }
        1 => {
            // Parametric clip of the segment p0 + u (p1 − p0), u ∈ [0, 1].
            let (p0, p1) = (inc.points[0], inc.points[1]);
            let (mut u0, mut u1) = (0.0f32, 1.0f32);
            let (mut by0, mut by1) = (usize::MAX, usize::MAX);
            for j in 0..m {
                let (a, s) = side(j);
                let d0 = (p0 - a).dot(s);
                let d1 = (p1 - a).dot(s);
                if d0 > eps && d1 > eps {
                    return;
                }
                // Crossing of the plane itself, clamped: an end within eps
                // of the plane counts as on it.
                if d0 > eps {
                    let u = (d0 / (d0 - d1)).clamp(0.0, 1.0);
                    if u > u0 {
                        (u0, by0) = (u, j);
                    }
                } else if d1 > eps {
                    let u = (d0 / (d0 - d1)).clamp(0.0, 1.0);
                    if u < u1 {
                        (u1, by1) = (u, j);
                    }
                }
            }
            if u0 > u1 {
                return;
            }
            for (u, by, k) in [(u0, by0, 0), (u1, by1, 1)] {
                let x = p0 + (p1 - p0) * u;
                let id = if by == usize::MAX {
                    ctx.id(Face, r.face, Vertex, inc.ids[k])
                } else {
                    ctx.id(Edge, r.ids[by], Edge, inc.face)
                };
                out.push(plane.project(ctx, x, id));
            }
        }
        _ => {
            // Ping-pong between two buffers: no copies of whole polygons.
            let mut bufs = [ClipPolygon::new(), ClipPolygon::new()];
            for k in 0..inc.count {
                bufs[0].push(ClipVertex {
                    p: inc.points[k],
                    id: ctx.id(Face, r.face, Vertex, inc.ids[k]),
                    along: Along::Incident(inc.ids[k]),
                });
            }
            for j in 0..m {
                let (src, dst) = if j % 2 == 0 {
                    let (a, b) = bufs.split_at_mut(1);
                    (&a[0], &mut b[0])
                } else {
                    let (a, b) = bufs.split_at_mut(1);
                    (&b[0], &mut a[0])
                };
                clip_by_side(ctx, src, dst, side(j), j, m, eps);
                if dst.len == 0 {
                    return;
                }
            }
            let poly = &bufs[m % 2];
            for v in &poly.v[..poly.len] {
                out.push(plane.project(ctx, v.p, v.id));
            }
        }
    }
}

/// One Sutherland–Hodgman step: keeps the part of `src` inside side plane
/// `j` (point `a`, outward normal `s`) in `dst`. A new vertex where an
/// incident edge crosses the plane is named by (side j, that edge); where a
/// stretch along an earlier side crosses it, by the reference corner between
/// the two sides.
fn clip_by_side(
    ctx: &Ctx,
    src: &ClipPolygon,
    dst: &mut ClipPolygon,
    (a, s): (Vec3, Vec3),
    j: usize,
    m: usize,
    eps: f32,
) {
    use FeatureKind::{Edge, Face, Vertex};
    let r = ctx.r;
    dst.len = 0;
    for k in 0..src.len {
        let p = src.v[k];
        let q = src.v[(k + 1) % src.len];
        let dp = (p.p - a).dot(s);
        let dq = (q.p - a).dot(s);
        let (p_in, q_in) = (dp <= eps, dq <= eps);
        if p_in {
            let mut p = p;
            if !q_in && dp >= -eps {
                // p is on the plane: it is where the polygon leaves, and its
                // edge now runs along side j.
                p.along = Along::Side(j as u8);
                dst.push(p);
                continue;
            }
            dst.push(p);
        }
        if p_in != q_in && !(q_in && dq >= -eps) {
            let t = dp / (dp - dq);
            let x = p.p + (q.p - p.p) * t;
            let id = match p.along {
                Along::Incident(e) => ctx.id(Edge, r.ids[j], Edge, e),
                Along::Side(jp) => {
                    // Two side planes meet at a reference corner.
                    let corner = if (jp as usize + 1) % m == j {
                        j
                    } else {
                        (j + 1) % m
                    };
                    ctx.id(Vertex, r.ids[corner], Face, ctx.inc.face)
                }
            };
            let along = if p_in { Along::Side(j as u8) } else { p.along };
            dst.push(ClipVertex { p: x, id, along });
        }
    }
}

/// Two nearly parallel segments: the incident one clipped to the reference
/// one's extent.
fn clip_segments(ctx: &Ctx, out: &mut Candidates) {
    use FeatureKind::{Edge, Vertex};
    let (r, inc) = (ctx.r, ctx.inc);
    let (r0, r1) = (r.points[0], r.points[1]);
    let len = (r1 - r0).length();
    if len <= 0.0 {
        return;
    }
    let e = (r1 - r0) / len;
    let eps = 1e-5 * len;
    let (p0, p1) = (inc.points[0], inc.points[1]);
    let (s0, s1) = ((p0 - r0).dot(e), (p1 - r0).dot(e));
    // Parameter range of the incident segment inside [0, len] along e.
    let (mut u0, mut u1) = (0.0f32, 1.0f32);
    let (mut by0, mut by1) = (usize::MAX, usize::MAX);
    for (bound, k, sign) in [(0.0f32, 0usize, -1.0f32), (len, 1usize, 1.0f32)] {
        // Inside when sign·(s − bound) <= eps.
        let d0 = sign * (s0 - bound);
        let d1 = sign * (s1 - bound);
        if d0 > eps && d1 > eps {
            return;
        }
        if d0 > eps {
            let u = (d0 / (d0 - d1)).clamp(0.0, 1.0);
            if u > u0 {
                (u0, by0) = (u, k);
            }
        } else if d1 > eps {
            let u = (d0 / (d0 - d1)).clamp(0.0, 1.0);
            if u < u1 {
                (u1, by1) = (u, k);
            }
        }
    }
    if u0 > u1 {
        return;
    }
    let pn = ctx.n - e * ctx.n.dot(e);
    let plane = RefPlane::new(r0, pn.normalize_or(ctx.n), ctx.n);
    for (u, by, k) in [(u0, by0, 0), (u1, by1, 1)] {
        let x = p0 + (p1 - p0) * u;
        let id = if by == usize::MAX {
            ctx.id(Edge, r.face, Vertex, inc.ids[k])
        } else {
            ctx.id(Vertex, r.ids[by], Edge, inc.face)
        };
        out.push(plane.project(ctx, x, id));
    }
}

/// The closest points of two features (points, segments or convex polygons
/// that do not intersect), with the feature id of the pair that realizes
/// them.
fn closest_features(
    r: &SupportFeature,
    inc: &SupportFeature,
    ref_is_a: bool,
) -> (Vec3, Vec3, FeatureId) {
    let mut best = (f32::INFINITY, Vec3::ZERO, Vec3::ZERO, FeatureId::default());
    let id = |kr, ir, ki, ii| {
        if ref_is_a {
            FeatureId::new(kr, ir, ki, ii)
        } else {
            FeatureId::new(ki, ii, kr, ir)
        }
    };
    let mut consider = |pr: Vec3, pi: Vec3, fid: FeatureId| {
        let d = (pi - pr).length_squared();
        if d < best.0 {
            best = (d, pr, pi, fid);
        }
    };
    for k in 0..inc.count {
        let (q, kind, idx) = closest_on_feature(r, inc.points[k]);
        consider(
            q,
            inc.points[k],
            id(kind, idx, FeatureKind::Vertex, inc.ids[k]),
        );
    }
    for k in 0..r.count {
        let (q, kind, idx) = closest_on_feature(inc, r.points[k]);
        consider(r.points[k], q, id(FeatureKind::Vertex, r.ids[k], kind, idx));
    }
    for (a0, a1, ea) in feature_edges(r) {
        for (b0, b1, eb) in feature_edges(inc) {
            let (s, t) = closest_segment_params(a0.1, a1.1, b0.1, b1.1);
            let (kr, ir) = param_feature(s, a0.0, a1.0, ea);
            let (ki, ii) = param_feature(t, b0.0, b1.0, eb);
            consider(
                a0.1 + (a1.1 - a0.1) * s,
                b0.1 + (b1.1 - b0.1) * t,
                id(kr, ir, ki, ii),
            );
        }
    }
    (best.1, best.2, best.3)
}

/// The edges of a feature: `((id, start), (id, end), edge id)`. A segment's
/// edge is named by the feature's `face`; a polygon's by its start vertex.
fn feature_edges(f: &SupportFeature) -> impl Iterator<Item = ((u8, Vec3), (u8, Vec3), u8)> + '_ {
    let n = match f.count {
        0 | 1 => 0,
        2 => 1,
        c => c,
    };
    (0..n).map(move |i| {
        let j = (i + 1) % f.count;
        let e = if f.count == 2 { f.face } else { f.ids[i] };
        ((f.ids[i], f.points[i]), (f.ids[j], f.points[j]), e)
    })
}

fn param_feature(s: f32, start: u8, end: u8, edge: u8) -> (FeatureKind, u8) {
    if s <= 0.0 {
        (FeatureKind::Vertex, start)
    } else if s >= 1.0 {
        (FeatureKind::Vertex, end)
    } else {
        (FeatureKind::Edge, edge)
    }
}

/// Closest point of a feature to `x`, and the part of the feature it lies on.
fn closest_on_feature(f: &SupportFeature, x: Vec3) -> (Vec3, FeatureKind, u8) {
    match dim(f) {
        0 => (f.points[0], FeatureKind::Vertex, f.ids[0]),
        1 => {
            let s = closest_segment_param(f.points[0], f.points[1], x);
            let (k, i) = param_feature(s, f.ids[0], f.ids[1], f.face);
            (f.points[0] + (f.points[1] - f.points[0]) * s, k, i)
        }
        _ => {
            let pts = f.points();
            let n = polygon_normal(f);
            let inside = (0..pts.len()).all(|j| {
                let e = pts[(j + 1) % pts.len()] - pts[j];
                (x - pts[j]).dot(e.cross(n)) <= 0.0
            });
            if inside && n != Vec3::ZERO {
                return (x - n * (x - pts[0]).dot(n), FeatureKind::Face, f.face);
            }
            let mut best = (f32::INFINITY, Vec3::ZERO, FeatureKind::Vertex, 0u8);
            for ((ia, a), (ib, b), e) in feature_edges(f) {
                let s = closest_segment_param(a, b, x);
                let q = a + (b - a) * s;
                let d = (x - q).length_squared();
                if d < best.0 {
                    let (k, i) = param_feature(s, ia, ib, e);
                    best = (d, q, k, i);
                }
            }
            (best.1, best.2, best.3)
        }
    }
}

/// Parameter in [0, 1] of the point of segment ab closest to x.
fn closest_segment_param(a: Vec3, b: Vec3, x: Vec3) -> f32 {
    let ab = b - a;
    let l = ab.length_squared();
    if l <= 0.0 {
        0.0
    } else {
        ((x - a).dot(ab) / l).clamp(0.0, 1.0)
    }
}

/// Parameters (s, t) in [0, 1]² of the closest points of segments
/// p1 + s (q1 − p1) and p2 + t (q2 − p2).
pub(crate) fn closest_segment_params(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> (f32, f32) {
    super::contact::closest_segment_segment(p1, q1 - p1, p2, q2 - p2)
}

/// Relative slack within which two candidates count as equally good during
/// reduction; the tie goes to a point kept last frame, then to the smaller
/// feature id, so that the same points are kept while the contact moves a
/// little.
const REDUCE_TIE: f32 = 0.02;
/// Absolute slack (m) for "equally deep".
const REDUCE_DEPTH_TIE: f32 = 1e-4;
/// Absolute slack (m) within which a point kept last frame still counts as
/// the deepest: a resting box that rocks by a fraction of a milliradian keeps
/// its four points.
const REDUCE_KEEP_DEPTH: f32 = 1e-3;

/// Picks at most four points: the deepest, the farthest from it, the one
/// spanning the largest triangle with those, and the one adding the most
/// area to that triangle. Returns indices into `c`.
fn reduce(c: &[Candidate], n: Vec3, prefer: &[FeatureId]) -> ([usize; MAX_MANIFOLD_POINTS], usize) {
    let mut sel = [0usize; MAX_MANIFOLD_POINTS];
    if c.len() <= MAX_MANIFOLD_POINTS {
        for (i, s) in sel.iter_mut().enumerate().take(c.len()) {
            *s = i;
        }
        return (sel, c.len());
    }
    // Best score, ties within `slack` going to a preferred id (kept last
    // time), then to the smallest id.
    let kept_before = |i: usize| prefer.contains(&c[i].id);
    let pick = |score: &dyn Fn(usize) -> f32, taken: &[usize], slack: f32| -> Option<usize> {
        let best = (0..c.len())
            .filter(|i| !taken.contains(i))
            .map(score)
            .fold(f32::NEG_INFINITY, f32::max);
        (0..c.len())
            .filter(|i| !taken.contains(i) && score(*i) >= best - slack)
            .min_by_key(|&i| (!kept_before(i), c[i].id, i))
    };
    let tangent = |v: Vec3| v - n * v.dot(n);
    let p = |i: usize| c[i].p_ref;
    let deepest = (0..c.len()).map(|i| c[i].sep).fold(f32::INFINITY, f32::min);
    let i0 = (0..c.len())
        .filter(|&i| kept_before(i) && c[i].sep <= deepest + REDUCE_KEEP_DEPTH)
        .min_by(|&i, &j| c[i].sep.total_cmp(&c[j].sep).then(c[i].id.cmp(&c[j].id)))
        .or_else(|| pick(&|i| -c[i].sep, &[], REDUCE_DEPTH_TIE))
        .unwrap_or(0);
    sel[0] = i0;
    let d2 = |i: usize| tangent(p(i) - p(i0)).length_squared();
    let best = (0..c.len()).map(d2).fold(0.0, f32::max);
    if best <= 0.0 {
        return (sel, 1);
    }
    let Some(i1) = pick(&d2, &sel[..1], REDUCE_TIE * best) else {
        return (sel, 1);
    };
    sel[1] = i1;
    let area = |i: usize| (p(i1) - p(i0)).cross(p(i) - p(i0)).dot(n);
    let best = (0..c.len())
        .filter(|i| !sel[..2].contains(i))
        .map(|i| area(i).abs())
        .fold(0.0, f32::max);
    if best <= 1e-6 * d2(i1) {
        return (sel, 2);
    }
    let Some(i2) = pick(&|i| area(i).abs(), &sel[..2], REDUCE_TIE * best) else {
        return (sel, 2);
    };
    sel[2] = i2;
    // Area a fourth point adds outside the triangle (winding sign s).
    let s = area(i2).signum();
    let tri = [i0, i1, i2];
    let added = |i: usize| {
        (0..3)
            .map(|k| {
                let (a, b) = (p(tri[k]), p(tri[(k + 1) % 3]));
                -s * (b - a).cross(p(i) - a).dot(n)
            })
            .fold(0.0, f32::max)
    };
    let best = (0..c.len())
        .filter(|i| !sel[..3].contains(i))
        .map(added)
        .fold(0.0, f32::max);
    if best <= 1e-6 * area(i2).abs() {
        return (sel, 3);
    }
    match pick(&added, &sel[..3], REDUCE_TIE * best) {
        Some(i3) => {
            sel[3] = i3;
            (sel, 4)
        }
        None => (sel, 3),
    }
}

#[cfg(test)]
#[path = "manifold_tests.rs"]
mod tests;
