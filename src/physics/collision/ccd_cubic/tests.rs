use super::*;
use proptest::prelude::*;

fn v(x: f64, y: f64, z: f64) -> DVec3 {
    DVec3::new(x, y, z)
}

/// The reported time must be conservative (never after `expected`) and,
/// for these well-conditioned cases, within `1e-9` of it.
fn assert_toi(got: Option<f64>, expected: f64) {
    let t = got.unwrap_or_else(|| panic!("expected a contact at {expected}, got none"));
    assert!(
        t <= expected + 1e-15,
        "toi {t} is after the contact at {expected}"
    );
    assert!(
        t >= expected - 1e-9,
        "toi {t} is far before the contact at {expected}"
    );
}

const TRI: [DVec3; 3] = [DVec3::ZERO, DVec3::X, DVec3::Y];

fn vf(p0: DVec3, p1: DVec3, tri0: [DVec3; 3], tri1: [DVec3; 3]) -> Option<f64> {
    vertex_face_ccd(p0, tri0[0], tri0[1], tri0[2], p1, tri1[0], tri1[1], tri1[2])
}

fn ee(a: [DVec3; 2], b: [DVec3; 2], a1: [DVec3; 2], b1: [DVec3; 2]) -> Option<f64> {
    edge_edge_ccd(a[0], a[1], b[0], b[1], a1[0], a1[1], b1[0], b1[1])
}

#[test]
fn vertex_face_hit_through_the_face() {
    // The vertex crosses z = 0 at t = 1/2, inside the triangle.
    assert_toi(vf(v(0.25, 0.25, 1.0), v(0.25, 0.25, -1.0), TRI, TRI), 0.5);
    // Same with the triangle moving up to meet it: z_p = 1 − 2t,
    // z_tri = 0.5 t, so t = 0.4.
    let up = TRI.map(|p| p + v(0.0, 0.0, 0.5));
    assert_toi(vf(v(0.2, 0.3, 1.0), v(0.2, 0.3, -1.0), TRI, up), 0.4);
}

#[test]
fn vertex_face_near_miss_beyond_an_edge() {
    // Crosses the plane 1e-7 beyond the hypotenuse x + y = 1.
    let x = 0.5 + 1e-7;
    assert_eq!(vf(v(x, 0.5, 1.0), v(x, 0.5, -1.0), TRI, TRI), None);
    // And 1e-7 short of reaching the plane.
    assert_eq!(vf(v(0.2, 0.2, 1.0), v(0.2, 0.2, 1e-7), TRI, TRI), None);
}

#[test]
fn edge_edge_hit_and_near_miss() {
    // a (along x) drops from z = 1 to z = −1 through b (along y): t = 1/2.
    let a0 = [v(-1.0, 0.0, 1.0), v(1.0, 0.0, 1.0)];
    let a1 = [v(-1.0, 0.0, -1.0), v(1.0, 0.0, -1.0)];
    let b = [v(0.0, -1.0, 0.0), v(0.0, 1.0, 0.0)];
    assert_toi(ee(a0, b, a1, b), 0.5);
    // b moved 1e-7 beyond the end of a: never touches.
    let b = [v(1.0 + 1e-7, -1.0, 0.0), v(1.0 + 1e-7, 1.0, 0.0)];
    assert_eq!(ee(a0, b, a1, b), None);
    // b exactly at the end of a: touches (closed segments) at t = 1/2.
    let b = [v(1.0, -1.0, 0.0), v(1.0, 1.0, 0.0)];
    assert_toi(ee(a0, b, a1, b), 0.5);
}

#[test]
fn quadratic_coplanarity_polynomial() {
    // f2 rises with t and the vertex drifts in y: the triple product is
    // 1 − 2.2 t − 0.1 t², a quadratic (vanishing cubic coefficient).
    let tri1 = [TRI[0], TRI[1], v(0.0, 1.0, 1.0)];
    let got = vf(v(0.2, 0.2, 1.0), v(0.2, 0.3, -1.0), TRI, tri1);
    let expected = (-2.2 + 5.24f64.sqrt()) / 0.2;
    assert_toi(got, expected);
    let cubic = VertexFaceQuery::new(
        [v(0.2, 0.2, 1.0), TRI[0], TRI[1], TRI[2]],
        [v(0.2, 0.3, -1.0), tri1[0], tri1[1], tri1[2]],
    )
    .cubic();
    // Bernstein form of 3 (1 − 2.2 t − 0.1 t²): 3, 3 − 3.3, 3 − 6.6 − 0.1, ...
    assert!((cubic.b[0] - 3.0).abs() < 1e-12);
    assert!((cubic.b[3] - 3.0 * (1.0 - 2.2 - 0.1)).abs() < 1e-12);
}

#[test]
fn zero_motion() {
    let p = v(0.25, 0.25, 0.5);
    assert_eq!(vf(p, p, TRI, TRI), None, "static and apart");
    let p = v(0.25, 0.25, 0.0);
    assert_eq!(vf(p, p, TRI, TRI), Some(0.0), "static and touching");
    let a = [v(-1.0, 0.0, 1.0), v(1.0, 0.0, 1.0)];
    let b = [v(0.0, -1.0, 0.0), v(0.0, 1.0, 0.0)];
    assert_eq!(ee(a, b, a, b), None, "static skew edges");
    let a = [v(-1.0, 0.0, 0.0), v(1.0, 0.0, 0.0)];
    assert_eq!(ee(a, b, a, b), Some(0.0), "static crossing edges");
}

#[test]
fn coplanar_motion_identically_zero_cubic() {
    // Everything stays in z = 0, so the cubic vanishes identically and
    // only the planar (separation) test decides.
    let q = VertexFaceQuery::new(
        [v(-1.0, 0.25, 0.0), TRI[0], TRI[1], TRI[2]],
        [v(1.0, 0.25, 0.0), TRI[0], TRI[1], TRI[2]],
    );
    assert!(q.cubic().b.iter().all(|&b| b == 0.0));
    assert_toi(q.toi(), 0.5);
    // Sliding past above the hypotenuse: no contact.
    assert_eq!(vf(v(-1.0, 1.5, 0.0), v(1.0, 1.5, 0.0), TRI, TRI), None);
    // Edge–edge: a vertical segment sweeping along x meets b at x = −0.5,
    // t = 0.375.
    let a0 = [v(-2.0, -1.0, 0.0), v(-2.0, 1.0, 0.0)];
    let a1 = [v(2.0, -1.0, 0.0), v(2.0, 1.0, 0.0)];
    let b = [v(-0.5, 0.0, 0.0), v(0.5, 0.0, 0.0)];
    assert_toi(ee(a0, b, a1, b), 0.375);
    let b = [v(-0.5, 1.5, 0.0), v(0.5, 1.5, 0.0)];
    assert_eq!(ee(a0, b, a1, b), None);
}

#[test]
fn parallel_edges() {
    // Parallel, overlapping in x, a drops onto b at t = 1/2.
    let a0 = [v(0.0, 0.0, 1.0), v(1.0, 0.0, 1.0)];
    let a1 = [v(0.0, 0.0, -1.0), v(1.0, 0.0, -1.0)];
    let b = [v(0.5, 0.0, 0.0), v(2.0, 0.0, 0.0)];
    assert_toi(ee(a0, b, a1, b), 0.5);
    // Offset by 1e-6 sideways: passes by.
    let b = [v(0.5, 1e-6, 0.0), v(2.0, 1e-6, 0.0)];
    assert_eq!(ee(a0, b, a1, b), None);
    // Collinear but not overlapping, sliding apart.
    let b0 = [v(1.5, 0.0, 0.0), v(2.0, 0.0, 0.0)];
    let b1 = [v(2.5, 0.0, 0.0), v(3.0, 0.0, 0.0)];
    let a = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0)];
    assert_eq!(ee(a, b0, a, b1), None);
}

#[test]
fn shared_endpoint_is_a_contact_at_zero() {
    let o = v(0.0, 0.0, 0.0);
    let a0 = [o, v(1.0, 0.0, 0.0)];
    let b0 = [o, v(0.0, 1.0, 0.0)];
    let a1 = [o, v(1.0, 1.0, 1.0)];
    let b1 = [o, v(0.0, 1.0, 2.0)];
    assert_eq!(ee(a0, b0, a1, b1), Some(0.0));
    // A vertex that is a corner of the face.
    assert_eq!(vf(TRI[1], TRI[1] + v(0.0, 0.0, 1.0), TRI, TRI), Some(0.0));
}

#[test]
fn degenerate_triangle() {
    // All three corners on the x axis: the vertex crossing the axis at
    // x = 0.5 (on the segment) touches, at x = 3 it does not.
    let line = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(2.0, 0.0, 0.0)];
    assert_toi(vf(v(0.5, 0.0, 1.0), v(0.5, 0.0, -1.0), line, line), 0.5);
    assert_eq!(vf(v(3.0, 0.0, 1.0), v(3.0, 0.0, -1.0), line, line), None);
}

#[test]
fn non_finite_input_is_a_contact() {
    let nan = v(f64::NAN, 0.0, 0.0);
    assert_eq!(vf(nan, nan, TRI, TRI), Some(0.0));
}

#[test]
fn tiny_near_miss_needs_double_double() {
    // Query 29 of erleben-cube-cliff-edges/vertex-face/data_0_0.csv (exact
    // ground truth: no contact). The vertex slides along y past the corner
    // f0 = (1, 0.5, 0) while its z drifts from −7.9e-17 to −1.8e-18; the
    // closest approach is far below what f64 certifies.
    let r = |n: i128, d: i128| n as f64 / d as f64;
    let tri = [v(1.0, 0.5, 0.0), v(1.25, -0.5, 1.25), v(1.25, -0.5, -0.25)];
    let p0 = v(
        1.0,
        r(5150549854408787, 1 << 53),
        r(-1592518156610665, 1 << 104),
    );
    let p1 = v(
        1.0,
        r(5001272674527227, 1 << 54),
        r(-18138484381021, 1 << 103),
    );
    let q = VertexFaceQuery::new([p0, tri[0], tri[1], tri[2]], [p1, tri[0], tri[1], tri[2]]);
    let mut stats = CcdStats::default();
    assert_eq!(q.toi_with_stats(&mut stats), None);
    assert!(stats.precise_directions > 0, "{stats:?}");
}

#[test]
fn bernstein_split_matches_evaluation() {
    let c = EdgeEdgeQuery::new(
        [
            v(0.1, 0.2, 0.3),
            v(1.0, -0.5, 0.2),
            v(0.3, 0.9, -0.4),
            v(-0.7, 0.1, 0.8),
        ],
        [
            v(0.4, -0.2, 0.1),
            v(0.6, 0.5, -0.9),
            v(-0.3, 0.2, 0.5),
            v(0.2, -0.8, 0.3),
        ],
    )
    .cubic();
    let (l, r) = c.split_half();
    for &t in &[0.0, 0.1, 0.37, 0.5, 0.8, 1.0] {
        let (full, e) = c.eval(t);
        let (half, eh) = if t <= 0.5 {
            l.eval(2.0 * t)
        } else {
            r.eval(2.0 * t - 1.0)
        };
        assert!((full - half).abs() <= e + eh, "t = {t}: {full} vs {half}");
    }
}

/// Dyadic values: exact in f64, so contacts built from them are exact.
fn dyadic() -> impl Strategy<Value = f64> {
    (0u32..=4).prop_map(|k| f64::from(k) / 4.0)
}

fn grid_point() -> impl Strategy<Value = DVec3> {
    (-8i32..=8, -8i32..=8, -8i32..=8)
        .prop_map(|(x, y, z)| v(f64::from(x), f64::from(y), f64::from(z)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A vertex placed on the moving triangle at a known time t* (random
    /// barycentric coordinates, well inside) must be reported, no later
    /// than t* (up to the rounding of the constructed input).
    #[test]
    fn vertex_face_constructed_contact_is_found(
        tri0 in prop::array::uniform3(prop::array::uniform3(-10.0f64..10.0)),
        tri1 in prop::array::uniform3(prop::array::uniform3(-10.0f64..10.0)),
        free in prop::array::uniform3(-10.0f64..10.0),
        t_star in 0.0f64..=1.0,
        w in (0.01f64..1.0, 0.01f64..1.0, 0.01f64..1.0),
    ) {
        let tri0 = tri0.map(DVec3::from_array);
        let tri1 = tri1.map(DVec3::from_array);
        let sum = w.0 + w.1 + w.2;
        let at = |i: usize| lerp(tri0[i], tri1[i], t_star);
        let p_star = at(0) * (w.0 / sum) + at(1) * (w.1 / sum) + at(2) * (w.2 / sum);
        // The free end of the vertex's path is the one far from t*.
        let free = DVec3::from_array(free);
        let (p0, p1) = if t_star <= 0.5 {
            (p_star - (free - p_star) * (t_star / (1.0 - t_star)), free)
        } else {
            (free, free + (p_star - free) / t_star)
        };
        let toi = vf(p0, p1, tri0, tri1);
        prop_assert!(toi.is_some(), "missed contact at t* = {}", t_star);
        prop_assert!(toi.unwrap() <= t_star + 1e-9, "toi {:?} after t* = {}", toi, t_star);
    }

    /// Exact contacts on a grid, including the degenerate ones (on an
    /// edge or a corner of the triangle, at t = 0 or 1, with no motion):
    /// the contact time and place are exact in f64, so it must be found.
    #[test]
    fn vertex_face_exact_grid_contact_is_found(
        tri0 in prop::array::uniform3(grid_point()),
        tri1 in prop::array::uniform3(grid_point()),
        vel in grid_point(),
        t_star in dyadic(),
        w in (dyadic(), dyadic()),
    ) {
        let (wb, wc) = (w.0, w.1 * (1.0 - w.0));
        let at = |i: usize| tri0[i] + (tri1[i] - tri0[i]) * t_star;
        let p_star = at(0) * (1.0 - wb - wc) + at(1) * wb + at(2) * wc;
        let (p0, p1) = (p_star - vel * t_star, p_star + vel * (1.0 - t_star));
        let toi = vf(p0, p1, tri0, tri1);
        prop_assert!(toi.is_some_and(|t| t <= t_star), "toi {:?}, contact at {}", toi, t_star);
    }

    /// Two segments built to cross at a known time and place.
    #[test]
    fn edge_edge_constructed_contact_is_found(
        a_start in prop::array::uniform2(prop::array::uniform3(-10.0f64..10.0)),
        a_end in prop::array::uniform2(prop::array::uniform3(-10.0f64..10.0)),
        dir in prop::array::uniform3(-10.0f64..10.0),
        vel in prop::array::uniform3(-10.0f64..10.0),
        t_star in 0.0f64..=1.0,
        s in 0.01f64..0.99,
        u in 0.01f64..0.99,
    ) {
        let a0 = a_start.map(DVec3::from_array);
        let a1 = a_end.map(DVec3::from_array);
        let x = lerp(lerp(a0[0], a1[0], t_star), lerp(a0[1], a1[1], t_star), s);
        let (d, vel) = (DVec3::from_array(dir), DVec3::from_array(vel));
        let (b0, b1) = (x - d * u, x + d * (1.0 - u));
        let b_start = [b0 - vel * t_star, b1 - vel * t_star];
        let b_end = [b0 + vel * (1.0 - t_star), b1 + vel * (1.0 - t_star)];
        let toi = ee(a0, b_start, a1, b_end);
        prop_assert!(toi.is_some(), "missed contact at t* = {}", t_star);
        prop_assert!(toi.unwrap() <= t_star + 1e-9, "toi {:?} after t* = {}", toi, t_star);
    }

    /// Exact edge–edge contacts on a grid, endpoints and parallel
    /// segments included.
    #[test]
    fn edge_edge_exact_grid_contact_is_found(
        a_start in prop::array::uniform2(grid_point()),
        a_end in prop::array::uniform2(grid_point()),
        d in grid_point(),
        vel in grid_point(),
        t_star in dyadic(),
        s in dyadic(),
        u in dyadic(),
    ) {
        let at = |i: usize| a_start[i] + (a_end[i] - a_start[i]) * t_star;
        let x = at(0) + (at(1) - at(0)) * s;
        let (b0, b1) = (x - d * u, x + d * (1.0 - u));
        let b_start = [b0 - vel * t_star, b1 - vel * t_star];
        let b_end = [b0 + vel * (1.0 - t_star), b1 + vel * (1.0 - t_star)];
        let toi = ee(a_start, b_start, a_end, b_end);
        prop_assert!(toi.is_some_and(|t| t <= t_star), "toi {:?}, contact at {}", toi, t_star);
    }
}

/// Two segments of a cable throw's substep that stay 1.83 mm apart
/// throughout (the pair's plane separates them by that much at both ends,
/// and so over the whole motion; 10,000 samples of the motion agree). The
/// coplanarity cubic changes sign at t = 0.70 and the edges' closest points
/// are inside both at 0, 0.5 and 1, which the search's shortcut took for an
/// evident contact: it reported one at t = 0.70, with a single separation
/// test. Its leaves now look again where the edges are clearly apart.
#[test]
fn edge_edge_apart_throughout_is_no_contact_though_the_shortcut_calls_one() {
    use glam::DVec3 as D;
    let start = [
        D::new(0.6632810235023499, 1.0061084032058716, 0.17575694620609283),
        D::new(0.7320228815078735, 0.9272663593292236, 0.265322208404541),
        D::new(0.7113731503486633, 0.96933513879776, 0.23532743752002716),
        D::new(0.7053875923156738, 0.9586603045463562, 0.22761788964271545),
    ];
    let end = [
        D::new(0.6632795929908752, 1.0031529664993286, 0.17588381469249725),
        D::new(0.7380250692367554, 0.932317316532135, 0.2673788368701935),
        D::new(0.7081953883171082, 0.9591787457466125, 0.22508275508880615),
        D::new(0.7097015976905823, 0.9720391631126404, 0.21880656480789185),
    ];
    assert_eq!(EdgeEdgeQuery::new(start, end).toi(), None);
    // A true contact of the same kind is still found: B moved onto A's
    // line at t = 0.70 (its segment crossing A's in the interior).
    let t_hit = 0.6997768988451147;
    let at = |i: usize| start[i].lerp(end[i], t_hit);
    let mid_a = at(0).lerp(at(1), 0.5);
    let shift = mid_a - at(2).lerp(at(3), 0.5);
    let (s2, e2) = (
        [start[0], start[1], start[2] + shift, start[3] + shift],
        [end[0], end[1], end[2] + shift, end[3] + shift],
    );
    let toi = EdgeEdgeQuery::new(s2, e2).toi();
    assert!(toi.is_some_and(|t| t <= t_hit), "{toi:?}");
}
