//! Convex hulls built from point clouds: vertices, polygon faces, edges and
//! the adjacency the queries need. The builder lives in `hull_builder.rs`.

use super::hull_builder;
use super::MassProperties;
use crate::physics::aabb::Aabb;
use crate::physics::collision::manifold::{
    SupportFeature, FEATURE_ANGLE_TOLERANCE, FEATURE_FACE_COS, MAX_FEATURE_POINTS,
};
use crate::physics::math::{Mat3, Pose, Vec3};
use glam::{DMat3, DVec3};

/// Most input points a hull may be built from.
pub const MAX_HULL_POINTS: usize = 1024;

/// Hulls with more vertices than this find support points by hill climbing
/// over the vertex adjacency instead of trying every vertex.
const HILL_CLIMB_MIN_VERTICES: usize = 32;

#[derive(Clone, Debug, PartialEq)]
pub enum HullError {
    TooFewPoints(usize),
    TooManyPoints(usize),
    NonFinite,
    Degenerate(&'static str),
}

impl std::fmt::Display for HullError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HullError::TooFewPoints(n) => {
                write!(f, "a convex hull needs at least 4 points, got {n}")
            }
            HullError::TooManyPoints(n) => write!(
                f,
                "a convex hull takes at most {MAX_HULL_POINTS} points, got {n}"
            ),
            HullError::NonFinite => write!(f, "convex hull points must be finite"),
            HullError::Degenerate(why) => write!(f, "degenerate convex hull: {why}"),
        }
    }
}

impl std::error::Error for HullError {}

/// A polygon face: the plane `normal·x = offset` (outward unit normal, every
/// vertex of the hull has `normal·x <= offset`) and a vertex loop,
/// counter-clockwise seen from outside.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HullFace {
    pub normal: Vec3,
    pub offset: f32,
    first: u32,
    len: u32,
    /// The loop used as a support feature: the face loop itself, or for
    /// faces with more than [`MAX_FEATURE_POINTS`] vertices the reduced loop
    /// that keeps the most area.
    feature_first: u32,
    feature_len: u32,
}

/// An edge: its two vertices and its two faces. It runs
/// `vertices[0] → vertices[1]` counter-clockwise in `faces[0]` and back in
/// `faces[1]`, so `normal(faces[0]) × normal(faces[1])` points along it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HullEdge {
    pub vertices: [u16; 2],
    pub faces: [u16; 2],
}

/// Compressed adjacency lists: the items of vertex `v` are
/// `items[start[v]..start[v + 1]]`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Adjacency {
    start: Vec<u32>,
    items: Vec<u16>,
}

impl Adjacency {
    fn from_lists(lists: Vec<Vec<u16>>) -> Self {
        let mut a = Adjacency::default();
        a.start.push(0);
        for l in lists {
            a.items.extend(l);
            a.start.push(a.items.len() as u32);
        }
        a
    }
    #[inline]
    fn of(&self, v: usize) -> &[u16] {
        &self.items[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

/// A convex polyhedron. Build it with [`ConvexHull::new`]; the fields are
/// consistent with each other, so treat them as read-only.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    /// Hull vertices (a subset of the input points, in input order).
    pub vertices: Vec<Vec3>,
    faces: Vec<HullFace>,
    edges: Vec<HullEdge>,
    /// Face loops, then the reduced feature loops of large faces.
    loops: Vec<u16>,
    vertex_edges: Adjacency,
    vertex_faces: Adjacency,
    /// Vertices extreme along −x, +x, −y, +y, −z, +z: hill-climbing starts.
    extremes: [u16; 6],
    centroid: Vec3,
    bounding_radius: f32,
    tolerance: f32,
}

impl ConvexHull {
    /// The convex hull of `points`: 4 to [`MAX_HULL_POINTS`] finite points
    /// that span a volume. Interior and duplicate points are dropped;
    /// coplanar triangles become one polygon face.
    pub fn new(points: &[Vec3]) -> Result<Self, HullError> {
        if points.len() < 4 {
            return Err(HullError::TooFewPoints(points.len()));
        }
        if points.len() > MAX_HULL_POINTS {
            return Err(HullError::TooManyPoints(points.len()));
        }
        if points.iter().any(|p| !p.is_finite()) {
            return Err(HullError::NonFinite);
        }
        let raw = hull_builder::build(points)?;

        // Renumber the used input points in input order.
        let mut index = vec![u16::MAX; points.len()];
        for (lp, _) in &raw.faces {
            for &v in lp {
                index[v as usize] = 0;
            }
        }
        let mut vertices = Vec::new();
        for (i, slot) in index.iter_mut().enumerate() {
            if *slot == 0 {
                *slot = vertices.len() as u16;
                vertices.push(points[i]);
            }
        }

        let mut faces = Vec::with_capacity(raw.faces.len());
        let mut loops: Vec<u16> = Vec::new();
        for (lp, n) in &raw.faces {
            let normal = n.as_vec3().normalize();
            // The plane supports every vertex, evaluated exactly as a caller's
            // `normal.dot(v) <= offset` test would be.
            let offset = vertices
                .iter()
                .map(|v| normal.dot(*v))
                .fold(f32::NEG_INFINITY, f32::max);
            let first = loops.len() as u32;
            loops.extend(lp.iter().map(|&v| index[v as usize]));
            faces.push(HullFace {
                normal,
                offset,
                first,
                len: lp.len() as u32,
                feature_first: first,
                feature_len: lp.len() as u32,
            });
        }
        for f in &mut faces {
            if f.len as usize > MAX_FEATURE_POINTS {
                let lp = &loops[f.first as usize..(f.first + f.len) as usize];
                let reduced = reduce_loop(lp, &vertices, f.normal);
                f.feature_first = loops.len() as u32;
                f.feature_len = reduced.len() as u32;
                loops.extend(reduced);
            }
        }

        // Unique edges, each with the face where it runs a→b and the one
        // where it runs b→a.
        let mut directed: Vec<(u16, u16, u16)> = Vec::new();
        for (fi, f) in faces.iter().enumerate() {
            let lp = &loops[f.first as usize..(f.first + f.len) as usize];
            for i in 0..lp.len() {
                directed.push((lp[i], lp[(i + 1) % lp.len()], fi as u16));
            }
        }
        directed.sort_unstable();
        let mut edges = Vec::new();
        for &(a, b, f) in &directed {
            if a < b {
                let j = directed
                    .binary_search_by(|e| (e.0, e.1).cmp(&(b, a)))
                    .map_err(|_| {
                        HullError::Degenerate("numerical failure while building the hull")
                    })?;
                edges.push(HullEdge {
                    vertices: [a, b],
                    faces: [f, directed[j].2],
                });
            }
        }

        let nv = vertices.len();
        let mut ve = vec![Vec::new(); nv];
        for (i, e) in edges.iter().enumerate() {
            ve[e.vertices[0] as usize].push(i as u16);
            ve[e.vertices[1] as usize].push(i as u16);
        }
        let mut vf = vec![Vec::new(); nv];
        for (fi, f) in faces.iter().enumerate() {
            for &v in &loops[f.first as usize..(f.first + f.len) as usize] {
                vf[v as usize].push(fi as u16);
            }
        }
        let mut extremes = [0u16; 6];
        for axis in 0..3 {
            for (i, v) in vertices.iter().enumerate() {
                if v[axis] < vertices[extremes[2 * axis] as usize][axis] {
                    extremes[2 * axis] = i as u16;
                }
                if v[axis] > vertices[extremes[2 * axis + 1] as usize][axis] {
                    extremes[2 * axis + 1] = i as u16;
                }
            }
        }
        let centroid = vertices.iter().copied().sum::<Vec3>() / nv as f32;
        let bounding_radius = vertices.iter().map(|v| v.length()).fold(0.0, f32::max);
        Ok(Self {
            vertices,
            faces,
            edges,
            loops,
            vertex_edges: Adjacency::from_lists(ve),
            vertex_faces: Adjacency::from_lists(vf),
            extremes,
            centroid,
            bounding_radius,
            tolerance: raw.tolerance as f32,
        })
    }

    pub fn faces(&self) -> &[HullFace] {
        &self.faces
    }

    pub fn edges(&self) -> &[HullEdge] {
        &self.edges
    }

    /// The vertex loop of face `f` (indices into `vertices`).
    pub fn face_vertices(&self, f: usize) -> &[u16] {
        let face = &self.faces[f];
        &self.loops[face.first as usize..(face.first + face.len) as usize]
    }

    /// The loop of face `f` used as a support feature (at most
    /// [`MAX_FEATURE_POINTS`] vertices).
    pub fn face_feature_vertices(&self, f: usize) -> &[u16] {
        let face = &self.faces[f];
        &self.loops[face.feature_first as usize..(face.feature_first + face.feature_len) as usize]
    }

    /// Edges at vertex `v`.
    pub fn vertex_edges(&self, v: usize) -> &[u16] {
        self.vertex_edges.of(v)
    }

    /// Faces around vertex `v`.
    pub fn vertex_faces(&self, v: usize) -> &[u16] {
        self.vertex_faces.of(v)
    }

    /// Average of the vertices: a point strictly inside the hull.
    pub fn centroid(&self) -> Vec3 {
        self.centroid
    }

    /// How far (in the points' units) an input point may lie outside a face
    /// plane, and a face vertex inside its plane: the builder's relative
    /// tolerance (1e-5 of the bounding box diagonal) plus rounding.
    pub fn tolerance(&self) -> f32 {
        self.tolerance
    }

    /// Index of a vertex maximizing `v·d`.
    pub fn support_index(&self, d: Vec3) -> usize {
        if self.vertices.len() <= HILL_CLIMB_MIN_VERTICES {
            let mut best = 0;
            let mut best_d = self.vertices[0].dot(d);
            for (i, v) in self.vertices.iter().enumerate().skip(1) {
                let x = v.dot(d);
                if x > best_d {
                    best_d = x;
                    best = i;
                }
            }
            return best;
        }
        let mut v = self.extremes[0] as usize;
        let mut best_d = self.vertices[v].dot(d);
        for &e in &self.extremes[1..] {
            let x = self.vertices[e as usize].dot(d);
            if x > best_d {
                best_d = x;
                v = e as usize;
            }
        }
        // On a convex polyhedron a vertex no neighbour improves on is a
        // global maximum.
        loop {
            let mut moved = false;
            for &e in self.vertex_edges.of(v) {
                let ed = &self.edges[e as usize];
                let w = if ed.vertices[0] as usize == v {
                    ed.vertices[1]
                } else {
                    ed.vertices[0]
                } as usize;
                let x = self.vertices[w].dot(d);
                if x > best_d {
                    best_d = x;
                    v = w;
                    moved = true;
                }
            }
            if !moved {
                return v;
            }
        }
    }

    #[inline]
    pub fn support(&self, d: Vec3) -> Vec3 {
        self.vertices[self.support_index(d)]
    }

    /// The face around the support vertex in direction `d` whose normal is
    /// most aligned with `d`: the face a clip should use, since it holds the
    /// deepest point. (The face most aligned with `d` over the whole hull
    /// need not hold the support vertex.)
    pub fn supporting_face(&self, d: Vec3) -> usize {
        let v = self.support_index(d);
        let mut best = (0usize, f32::NEG_INFINITY);
        for &f in self.vertex_faces.of(v) {
            let x = self.faces[f as usize].normal.dot(d);
            if x > best.1 {
                best = (f as usize, x);
            }
        }
        best.0
    }

    pub fn aabb(&self, pose: &Pose) -> Aabb {
        if self.vertices.len() <= HILL_CLIMB_MIN_VERTICES {
            let mut b = Aabb::EMPTY;
            for &v in &self.vertices {
                let w = pose.transform_point(v);
                b.min = b.min.min(w);
                b.max = b.max.max(w);
            }
            return b;
        }
        // Support along each world axis: R·S(Rᵀ e) for ±e.
        let m = Mat3::from_quat(pose.rotation).transpose();
        let mut b = Aabb::new(pose.position, pose.position);
        for axis in 0..3 {
            let d = m.col(axis);
            b.max[axis] += pose.transform_vector(self.support(d))[axis];
            b.min[axis] += pose.transform_vector(self.support(-d))[axis];
        }
        b
    }

    pub fn bounding_radius(&self) -> f32 {
        self.bounding_radius
    }

    /// Volume, centre of mass and inertia about it, by splitting the hull
    /// into tetrahedra from an interior point to each face triangle (sums in
    /// f64).
    pub fn mass_properties(&self, density: f32) -> MassProperties {
        let o = self.centroid.as_dvec3();
        let mut volume = 0.0f64;
        let mut moment = DVec3::ZERO;
        let mut cov = DMat3::ZERO;
        for f in 0..self.faces.len() {
            let lp = self.face_vertices(f);
            let a = self.vertices[lp[0] as usize].as_dvec3() - o;
            for i in 1..lp.len() - 1 {
                let b = self.vertices[lp[i] as usize].as_dvec3() - o;
                let c = self.vertices[lp[i + 1] as usize].as_dvec3() - o;
                let det = a.dot(b.cross(c));
                volume += det / 6.0;
                moment += (a + b + c) * (det / 24.0);
                // ∫ x xᵀ over the tetrahedron (0, a, b, c):
                // det/120 · (a aᵀ + b bᵀ + c cᵀ + s sᵀ), s = a + b + c.
                let s = a + b + c;
                cov += (outer(a) + outer(b) + outer(c) + outer(s)) * (det / 120.0);
            }
        }
        let c = moment / volume;
        let cov_com = cov - outer(c) * volume;
        let trace = cov_com.x_axis.x + cov_com.y_axis.y + cov_com.z_axis.z;
        let rho = density as f64;
        let inertia = (DMat3::from_diagonal(DVec3::splat(trace)) - cov_com) * rho;
        MassProperties {
            mass: (volume * rho) as f32,
            local_center: (o + c).as_vec3(),
            inertia: inertia.as_mat3(),
        }
    }

    /// Face `f` as a world-space polygon: ids = vertex indices (low 8 bits),
    /// `face` = face index (low 8 bits).
    pub fn face_feature(&self, pose: &Pose, f: usize) -> SupportFeature {
        let mut out = SupportFeature {
            face: f as u8,
            ..Default::default()
        };
        for &v in self.face_feature_vertices(f) {
            out.push(pose.transform_point(self.vertices[v as usize]), v as u8);
        }
        out
    }

    /// The feature supporting the hull in local direction `d`, in world space
    /// for `pose`: the face around the support vertex whose normal is within
    /// [`FEATURE_ANGLE_TOLERANCE`] of `d` (large faces reduced to at most
    /// [`MAX_FEATURE_POINTS`] vertices), else the edge at the support vertex
    /// most nearly perpendicular to `d` if within that tolerance (`face` =
    /// edge index), else the support vertex. `ids` are vertex indices.
    pub fn support_feature(&self, pose: &Pose, d: Vec3) -> SupportFeature {
        let dn = d.normalize_or_zero();
        let v = self.support_index(dn);
        let mut out = SupportFeature::default();
        if dn == Vec3::ZERO {
            out.push(pose.transform_point(self.vertices[v]), v as u8);
            return out;
        }
        let f = self.supporting_face(dn);
        if self.faces[f].normal.dot(dn) >= FEATURE_FACE_COS {
            return self.face_feature(pose, f);
        }
        let mut best_edge = (usize::MAX, f32::INFINITY);
        for &e in self.vertex_edges.of(v) {
            let ed = &self.edges[e as usize];
            let dir =
                self.vertices[ed.vertices[1] as usize] - self.vertices[ed.vertices[0] as usize];
            let x = dir.normalize_or_zero().dot(dn).abs();
            if x < best_edge.1 {
                best_edge = (e as usize, x);
            }
        }
        if best_edge.1 <= FEATURE_ANGLE_TOLERANCE {
            let ed = &self.edges[best_edge.0];
            out.face = best_edge.0 as u8;
            for &w in &ed.vertices {
                out.push(pose.transform_point(self.vertices[w as usize]), w as u8);
            }
            return out;
        }
        out.face = v as u8;
        out.push(pose.transform_point(self.vertices[v]), v as u8);
        out
    }
}

fn outer(a: DVec3) -> DMat3 {
    DMat3::from_cols(a * a.x, a * a.y, a * a.z)
}

/// Reduces a convex loop to [`MAX_FEATURE_POINTS`] vertices by repeatedly
/// dropping the vertex whose removal loses the least area (greedy: close to,
/// not always exactly, the largest polygon on that many vertices).
fn reduce_loop(lp: &[u16], vertices: &[Vec3], normal: Vec3) -> Vec<u16> {
    let mut out = lp.to_vec();
    while out.len() > MAX_FEATURE_POINTS {
        let n = out.len();
        let area = |i: usize| {
            let a = vertices[out[(i + n - 1) % n] as usize];
            let b = vertices[out[i] as usize];
            let c = vertices[out[(i + 1) % n] as usize];
            (b - a).cross(c - b).dot(normal).abs()
        };
        // Near-ties (rounding) go to the first vertex in loop order, so a
        // regular polygon loses every other vertex and stays regular.
        let least = (0..n).map(area).fold(f32::INFINITY, f32::min);
        let best = (0..n)
            .find(|&i| area(i) <= least * (1.0 + 1e-3))
            .unwrap_or(0);
        out.remove(best);
    }
    out
}

#[cfg(test)]
#[path = "convex_hull_tests.rs"]
mod tests;
