use super::*;
use crate::physics::math::Quat;
use crate::physics::shape::Cuboid;
use proptest::prelude::*;

fn cube_corners(h: Vec3) -> Vec<Vec3> {
    (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 != 0 { h.x } else { -h.x },
                if i & 2 != 0 { h.y } else { -h.y },
                if i & 4 != 0 { h.z } else { -h.z },
            )
        })
        .collect()
}

/// Checks the structural invariants of a hull built from `points`.
fn check_hull(points: &[Vec3], h: &ConvexHull) {
    let t = h.tolerance();
    let (v, e, f) = (h.vertices.len(), h.edges().len(), h.faces().len());
    assert_eq!(v + f, e + 2, "Euler: V={v} E={e} F={f}");
    for p in &h.vertices {
        assert!(points.contains(p), "vertex {p} is not an input point");
    }
    for (fi, face) in h.faces().iter().enumerate() {
        assert!((face.normal.length() - 1.0).abs() < 1e-5);
        let lp = h.face_vertices(fi);
        assert!(lp.len() >= 3);
        let mut sorted = lp.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), lp.len(), "vertex repeated in face loop");
        // Inside: every input point below the plane (within tolerance), every
        // vertex below it.
        for p in points {
            let d = face.normal.dot(*p) - face.offset;
            assert!(d <= t, "point {p} is {d} outside face {fi} (tol {t})");
        }
        for p in &h.vertices {
            assert!(face.normal.dot(*p) <= face.offset, "hull not convex");
        }
        // Planar and convex, counter-clockwise seen from outside.
        for i in 0..lp.len() {
            let a = h.vertices[lp[i] as usize];
            let b = h.vertices[lp[(i + 1) % lp.len()] as usize];
            let c = h.vertices[lp[(i + 2) % lp.len()] as usize];
            assert!(
                face.offset - face.normal.dot(a) <= t,
                "face {fi} not planar"
            );
            let turn = (b - a).cross(c - b).dot(face.normal);
            assert!(
                turn >= -t * (c - a).length(),
                "face {fi} reflex at a vertex: {turn}"
            );
        }
    }
    for ed in h.edges() {
        let [a, b] = ed.vertices;
        let runs = |f: u16, x: u16, y: u16| {
            let lp = h.face_vertices(f as usize);
            (0..lp.len()).any(|i| lp[i] == x && lp[(i + 1) % lp.len()] == y)
        };
        assert!(runs(ed.faces[0], a, b) && runs(ed.faces[1], b, a));
    }
    // Volume by the divergence theorem (independent of the tetrahedra), in
    // f64 about the first vertex so that far-off hulls keep their digits.
    // Faces are planar only within the tolerance, which bounds the
    // difference: total area × tolerance.
    let o = h.vertices[0].as_dvec3();
    let mut vol = 0.0f64;
    let mut total_area = 0.0f64;
    for (fi, face) in h.faces().iter().enumerate() {
        let lp = h.face_vertices(fi);
        let p = |i: usize| h.vertices[lp[i % lp.len()] as usize].as_dvec3() - o;
        let mut area = glam::DVec3::ZERO;
        for i in 0..lp.len() {
            area += p(i).cross(p(i + 1));
        }
        let n = face.normal.as_dvec3();
        vol += 0.5 * area.dot(n) * n.dot(p(0)) / 3.0;
        total_area += 0.5 * area.length();
    }
    let m = h.mass_properties(1.0).mass as f64;
    let bound = total_area * t as f64 + 1e-5 * vol.abs();
    assert!((m - vol).abs() <= bound, "volume {m} vs {vol}");
}

#[test]
fn cube_corners_give_six_quads() {
    let pts = cube_corners(Vec3::new(1.0, 0.5, 2.0));
    let h = ConvexHull::new(&pts).unwrap();
    assert_eq!(h.vertices.len(), 8);
    assert_eq!(h.faces().len(), 6);
    assert_eq!(h.edges().len(), 12);
    for (fi, f) in h.faces().iter().enumerate() {
        assert_eq!(h.face_vertices(fi).len(), 4);
        let axis = f.normal.abs().max_element();
        assert!((axis - 1.0).abs() < 1e-6);
    }
    check_hull(&pts, &h);
}

#[test]
fn grid_cube_drops_edge_face_and_interior_points() {
    let mut pts = Vec::new();
    for x in -1..=1 {
        for y in -1..=1 {
            for z in -1..=1 {
                pts.push(Vec3::new(x as f32, y as f32, z as f32) * 0.5);
            }
        }
    }
    let h = ConvexHull::new(&pts).unwrap();
    assert_eq!(
        (h.vertices.len(), h.edges().len(), h.faces().len()),
        (8, 12, 6)
    );
    check_hull(&pts, &h);
}

#[test]
fn rotated_cube_corners_still_merge_into_quads() {
    let q = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 0.7);
    let pts: Vec<Vec3> = cube_corners(Vec3::splat(0.5))
        .into_iter()
        .map(|p| q * p + Vec3::new(3.0, -2.0, 1.0))
        .collect();
    let h = ConvexHull::new(&pts).unwrap();
    assert_eq!(
        (h.vertices.len(), h.edges().len(), h.faces().len()),
        (8, 12, 6)
    );
    check_hull(&pts, &h);
}

#[test]
fn duplicates_and_interior_points_are_dropped() {
    let mut pts = cube_corners(Vec3::ONE);
    pts.extend(cube_corners(Vec3::ONE));
    pts.push(Vec3::ZERO);
    pts.push(Vec3::new(0.3, -0.2, 0.9));
    pts.push(Vec3::new(1.0, 0.2, 0.3)); // on a face
    let h = ConvexHull::new(&pts).unwrap();
    assert_eq!(
        (h.vertices.len(), h.edges().len(), h.faces().len()),
        (8, 12, 6)
    );
    check_hull(&pts, &h);
}

#[test]
fn degenerate_inputs_are_errors() {
    let p = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
    assert_eq!(
        ConvexHull::new(&[p(0., 0., 0.), p(1., 0., 0.), p(0., 1., 0.)]),
        Err(HullError::TooFewPoints(3))
    );
    assert_eq!(
        ConvexHull::new(&[
            p(0., 0., 0.),
            p(1., 0., 0.),
            p(0., 1., 0.),
            p(0., 0., f32::NAN)
        ]),
        Err(HullError::NonFinite)
    );
    assert_eq!(
        ConvexHull::new(&[
            p(0., 0., 0.),
            p(1., 0., 0.),
            p(0., 1., 0.),
            p(f32::INFINITY, 0., 1.)
        ]),
        Err(HullError::NonFinite)
    );
    assert!(matches!(
        ConvexHull::new(&[p(1., 2., 3.); 6]),
        Err(HullError::Degenerate(_))
    ));
    let line: Vec<Vec3> = (0..10)
        .map(|i| p(1.0, 2.0, 3.0) * i as f32 - p(4., 4., 4.))
        .collect();
    assert_eq!(
        ConvexHull::new(&line),
        Err(HullError::Degenerate("points are collinear"))
    );
    let q = Quat::from_rotation_x(0.4);
    let plane: Vec<Vec3> = (0..20)
        .map(|i| q * p((i % 5) as f32, (i / 5) as f32, 0.0) + p(0.0, 0.0, 7.0))
        .collect();
    assert_eq!(
        ConvexHull::new(&plane),
        Err(HullError::Degenerate("points are coplanar (flat hull)"))
    );
    // Coplanar up to f32 noise far below the tolerance.
    let mut noisy = plane.clone();
    noisy[7] += q * p(0.0, 0.0, 1e-6);
    assert!(matches!(
        ConvexHull::new(&noisy),
        Err(HullError::Degenerate(_))
    ));
    // A thin but real slab is fine.
    let mut slab = plane.clone();
    slab.push(q * p(2.0, 2.0, 0.01) + p(0.0, 0.0, 7.0));
    let h = ConvexHull::new(&slab).unwrap();
    check_hull(&slab, &h);
    let many: Vec<Vec3> = (0..MAX_HULL_POINTS + 1)
        .map(|i| p((i as f32).sin(), (i as f32 * 1.3).cos(), i as f32 * 1e-3))
        .collect();
    assert_eq!(
        ConvexHull::new(&many),
        Err(HullError::TooManyPoints(MAX_HULL_POINTS + 1))
    );
}

fn assert_mat_close(a: Mat3, b: Mat3, tol: f32) {
    for c in 0..3 {
        for r in 0..3 {
            let (x, y) = (a.col(c)[r], b.col(c)[r]);
            assert!((x - y).abs() <= tol, "{a} vs {b}");
        }
    }
}

#[test]
fn mass_properties_match_the_box() {
    let he = Vec3::new(1.0, 0.5, 2.0);
    let want = Cuboid { half_extents: he }.mass_properties(300.0);
    let h = ConvexHull::new(&cube_corners(he)).unwrap();
    let got = h.mass_properties(300.0);
    assert!((got.mass - want.mass).abs() <= 1e-5 * want.mass);
    assert!(got.local_center.length() < 1e-6);
    assert_mat_close(got.inertia, want.inertia, 1e-5 * want.inertia.x_axis.x);

    // Moved and rotated: the centre follows, the inertia rotates.
    let q = Quat::from_euler(glam::EulerRot::XYZ, 0.5, 0.2, -0.9);
    let off = Vec3::new(5.0, -1.0, 2.5);
    let pts: Vec<Vec3> = cube_corners(he).iter().map(|p| q * *p + off).collect();
    let got = ConvexHull::new(&pts).unwrap().mass_properties(300.0);
    assert!((got.mass - want.mass).abs() <= 1e-5 * want.mass);
    assert!((got.local_center - off).length() < 1e-5);
    let r = Mat3::from_quat(q);
    assert_mat_close(
        got.inertia,
        r * want.inertia * r.transpose(),
        1e-4 * want.inertia.z_axis.z,
    );
}

#[test]
fn mass_properties_of_the_unit_tetrahedron() {
    let h = ConvexHull::new(&[Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z]).unwrap();
    let m = h.mass_properties(6.0); // unit mass
    assert!((m.mass - 1.0).abs() < 1e-6);
    assert!(m.local_center.abs_diff_eq(Vec3::splat(0.25), 1e-6));
    // About the centre of mass: I_xx = 6·(1/160 + 1/160), I_xy = 6·(1/480).
    let (d, o) = (6.0 / 80.0, 6.0 / 480.0);
    let want = Mat3::from_cols(Vec3::new(d, o, o), Vec3::new(o, d, o), Vec3::new(o, o, d));
    assert_mat_close(m.inertia, want, 1e-6);
}

fn sphere_points(n: usize) -> Vec<Vec3> {
    // Fibonacci sphere: well spread, no four coplanar in practice.
    let g = std::f32::consts::PI * (3.0 - 5f32.sqrt());
    (0..n)
        .map(|i| {
            let y = 1.0 - 2.0 * (i as f32 + 0.5) / n as f32;
            let r = (1.0 - y * y).sqrt();
            let a = g * i as f32;
            Vec3::new(r * a.cos(), y, r * a.sin()) * 2.0
        })
        .collect()
}

#[test]
fn hill_climbing_support_matches_brute_force() {
    let pts = sphere_points(600);
    let h = ConvexHull::new(&pts).unwrap();
    assert_eq!(h.vertices.len(), 600);
    check_hull(&pts, &h);
    for i in 0..500 {
        let d = Vec3::new(
            (i as f32 * 0.37).sin(),
            (i as f32 * 1.91).cos(),
            (i as f32 * 0.13).sin(),
        );
        let best = h.vertices.iter().map(|v| v.dot(d)).fold(f32::MIN, f32::max);
        assert_eq!(h.support(d).dot(d), best);
    }
    // The AABB from supports equals the one from all vertices.
    let pose = Pose::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_z(0.7));
    let b = h.aabb(&pose);
    let mut want = Aabb::EMPTY;
    for v in &h.vertices {
        let w = pose.transform_point(*v);
        want.min = want.min.min(w);
        want.max = want.max.max(w);
    }
    assert!(b.min.abs_diff_eq(want.min, 1e-5) && b.max.abs_diff_eq(want.max, 1e-5));
}

#[test]
fn large_faces_are_reduced_in_support_features() {
    // A 32-sided prism: two 32-gon caps.
    let mut pts = Vec::new();
    for i in 0..32 {
        let a = i as f32 / 32.0 * std::f32::consts::TAU;
        pts.push(Vec3::new(a.cos(), 0.5, a.sin()));
        pts.push(Vec3::new(a.cos(), -0.5, a.sin()));
    }
    let h = ConvexHull::new(&pts).unwrap();
    assert_eq!(h.faces().len(), 34);
    check_hull(&pts, &h);
    let pose = Pose::from_position(Vec3::new(0.0, 1.0, 0.0));
    let f = h.support_feature(&pose, Vec3::Y);
    assert_eq!(f.count, MAX_FEATURE_POINTS);
    // Every other vertex: the reduced loop keeps a regular 16-gon.
    for p in f.points() {
        assert!((p.y - 1.5).abs() < 1e-6);
        assert!((Vec3::new(p.x, 0.0, p.z).length() - 1.0).abs() < 1e-5);
    }
    let mut area = 0.0;
    for i in 0..f.count {
        area += f.points[i].cross(f.points[(i + 1) % f.count]).y;
    }
    // Counter-clockwise seen from +y, area of a regular 16-gon.
    let want = 0.5 * 16.0 * (std::f32::consts::TAU / 16.0).sin();
    assert!((0.5 * area - want).abs() < 1e-4, "area {}", 0.5 * area);
}

#[test]
fn hull_support_feature_picks_face_edge_or_vertex() {
    let h = ConvexHull::new(&cube_corners(Vec3::new(1.0, 0.5, 2.0))).unwrap();
    let pose = Pose::new(Vec3::new(3.0, 0.0, 0.0), Quat::from_rotation_y(0.3));
    let f = h.support_feature(&pose, Vec3::new(0.01, 1.0, 0.0));
    assert_eq!(f.count, 4);
    for p in f.points() {
        assert!((pose.inverse_transform_point(*p).y - 0.5).abs() < 1e-6);
    }
    let f = h.support_feature(&pose, Vec3::new(1.0, 1.0, 0.005));
    assert_eq!(f.count, 2);
    for p in f.points() {
        let l = pose.inverse_transform_point(*p);
        assert!((l.x - 1.0).abs() < 1e-6 && (l.y - 0.5).abs() < 1e-6);
    }
    let f = h.support_feature(&pose, Vec3::new(1.0, -1.0, 1.0));
    assert_eq!(f.count, 1);
    let l = pose.inverse_transform_point(f.points[0]);
    assert!(l.abs_diff_eq(Vec3::new(1.0, -0.5, 2.0), 1e-6));
}

/// Exact test for grid inputs: are all points on one plane (or line)?
fn grid_is_flat(c: &[(i32, i32, i32)]) -> bool {
    let v: Vec<[i64; 3]> = c
        .iter()
        .map(|p| [p.0 as i64, p.1 as i64, p.2 as i64])
        .collect();
    let sub = |a: [i64; 3], b: [i64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: [i64; 3], b: [i64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let dot = |a: [i64; 3], b: [i64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    for i in 0..v.len() {
        for j in 0..v.len() {
            for k in 0..v.len() {
                let n = cross(sub(v[j], v[i]), sub(v[k], v[i]));
                if n != [0, 0, 0] {
                    return v.iter().all(|p| dot(n, sub(*p, v[i])) == 0);
                }
            }
        }
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_clouds_give_valid_hulls(
        pts in prop::collection::vec((-10.0f32..10.0, -10.0f32..10.0, -10.0f32..10.0), 8..120)
    ) {
        let pts: Vec<Vec3> = pts.into_iter().map(|(x, y, z)| Vec3::new(x, y, z)).collect();
        let h = ConvexHull::new(&pts).unwrap();
        check_hull(&pts, &h);
    }

    #[test]
    fn grid_clouds_with_coplanar_and_duplicate_points(
        pts in prop::collection::vec((-3i32..=3, -3i32..=3, -3i32..=3), 4..60),
        rot in (-3.0f32..3.0, -3.0f32..3.0, -3.0f32..3.0),
    ) {
        let q = Quat::from_euler(glam::EulerRot::XYZ, rot.0, rot.1, rot.2);
        let world: Vec<Vec3> = pts
            .iter()
            .map(|&(x, y, z)| q * (Vec3::new(x as f32, y as f32, z as f32) * 0.25))
            .collect();
        match ConvexHull::new(&world) {
            Ok(h) => check_hull(&world, &h),
            Err(HullError::Degenerate(_)) => prop_assert!(grid_is_flat(&pts)),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn scaled_and_offset_clouds(
        pts in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0), 8..60),
        scale_exp in -3i32..=3,
        offset in (-1e4f32..1e4, -1e4f32..1e4, -1e4f32..1e4),
        flatten in 0usize..3,
    ) {
        // Some clouds squashed to a thin slab, ten times thicker than the
        // tolerance, along one axis.
        let scale = 10f32.powi(scale_exp);
        let off = Vec3::new(offset.0, offset.1, offset.2) * (scale / 1e3).min(1.0);
        let world: Vec<Vec3> = pts
            .iter()
            .map(|&(x, y, z)| {
                let mut p = Vec3::new(x, y, z);
                if flatten == 1 {
                    p.y *= 1e-3;
                }
                p * scale + off
            })
            .collect();
        match ConvexHull::new(&world) {
            Ok(h) => check_hull(&world, &h),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}
