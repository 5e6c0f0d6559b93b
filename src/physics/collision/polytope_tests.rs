use super::*;
use crate::physics::math::Quat;
use proptest::prelude::*;
use std::f32::consts::FRAC_PI_4;

fn cuboid(x: f32, y: f32, z: f32) -> Cuboid {
    Cuboid {
        half_extents: Vec3::new(x, y, z),
    }
}

fn corners(c: &Cuboid) -> Vec<Vec3> {
    (0..8).map(|i| c.vertex(i)).collect()
}

fn hull_of(c: &Cuboid) -> ConvexHull {
    ConvexHull::new(&corners(c)).unwrap()
}

fn contact<A: Polytope, B: Polytope>(
    a: &A,
    pa: &Pose,
    b: &B,
    pb: &Pose,
    spec: f32,
) -> Option<Manifold> {
    polytope_contact(a, pa, b, pb, 0.0, 0.0, spec, &mut SatCache::default())
}

fn sorted_ids(m: &Manifold) -> Vec<FeatureId> {
    let mut v: Vec<FeatureId> = m.points().iter().map(|p| p.id).collect();
    v.sort();
    v
}

/// Every point of `want` has a point of `got` within `tol`, and the counts match.
fn assert_same_points(got: &[Vec3], want: &[Vec3], tol: f32) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for w in want {
        assert!(
            got.iter().any(|g| (*g - *w).length() <= tol),
            "missing {w} in {got:?}"
        );
    }
}

fn assert_same_manifold(a: &Manifold, b: &Manifold, tol: f32) {
    assert!(
        a.normal.abs_diff_eq(b.normal, tol),
        "{} vs {}",
        a.normal,
        b.normal
    );
    let pa: Vec<Vec3> = a.points().iter().map(|p| p.point_a).collect();
    let pb: Vec<Vec3> = b.points().iter().map(|p| p.point_a).collect();
    assert_same_points(&pa, &pb, tol);
    let pa: Vec<Vec3> = a.points().iter().map(|p| p.point_b).collect();
    let pb: Vec<Vec3> = b.points().iter().map(|p| p.point_b).collect();
    assert_same_points(&pa, &pb, tol);
    for p in a.points() {
        assert!(b
            .points()
            .iter()
            .any(|q| (q.point_a - p.point_a).length() <= tol
                && (q.separation - p.separation).abs() <= tol));
    }
}

/// Ground box and a unit box resting 1 cm deep on it.
fn resting() -> (Cuboid, Pose, Cuboid, Pose) {
    (
        cuboid(2.0, 0.5, 2.0),
        Pose::IDENTITY,
        cuboid(0.5, 0.5, 0.5),
        Pose::from_position(Vec3::new(0.1, 0.99, -0.2)),
    )
}

#[test]
fn box_box_face_contact() {
    let (a, pa, b, pb) = resting();
    let m = box_box(&a, &pa, &b, &pb, 0.0, &mut SatCache::default()).unwrap();
    assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-6));
    assert_eq!(m.count, 4);
    let mut want_b = Vec::new();
    let mut want_a = Vec::new();
    for (x, z) in [(-0.4, -0.7), (0.6, -0.7), (0.6, 0.3), (-0.4, 0.3)] {
        want_b.push(Vec3::new(x, 0.49, z));
        want_a.push(Vec3::new(x, 0.5, z));
    }
    let got_a: Vec<Vec3> = m.points().iter().map(|p| p.point_a).collect();
    let got_b: Vec<Vec3> = m.points().iter().map(|p| p.point_b).collect();
    assert_same_points(&got_a, &want_a, 1e-5);
    assert_same_points(&got_b, &want_b, 1e-5);
    for p in m.points() {
        assert!((p.separation + 0.01).abs() < 1e-5);
        assert!(((p.point_b - p.point_a).dot(m.normal) - p.separation).abs() < 1e-6);
    }
    let ids = sorted_ids(&m);
    assert!(ids.windows(2).all(|w| w[0] != w[1]), "ids not distinct");
}

#[test]
fn box_on_rotated_box_reduces_octagon_to_four() {
    let a = cuboid(1.2, 0.5, 1.2);
    let pa = Pose::new(Vec3::ZERO, Quat::from_rotation_y(FRAC_PI_4));
    let b = cuboid(1.0, 0.5, 1.0);
    let pb = Pose::from_position(Vec3::new(0.0, 0.99, 0.0));
    let m = box_box(&a, &pa, &b, &pb, 0.0, &mut SatCache::default()).unwrap();
    assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-6));
    assert_eq!(m.count, 4);
    // The overlap of the two squares is an octagon.
    let k = 1.2 * std::f32::consts::SQRT_2 - 1.0;
    let octagon = [
        (1.0, k),
        (k, 1.0),
        (-k, 1.0),
        (-1.0, k),
        (-1.0, -k),
        (-k, -1.0),
        (k, -1.0),
        (1.0, -k),
    ];
    for p in m.points() {
        assert!((p.separation + 0.01).abs() < 1e-5);
        let (x, z) = (p.point_b.x, p.point_b.z);
        assert!(
            octagon
                .iter()
                .any(|o| (o.0 - x).abs() < 1e-5 && (o.1 - z).abs() < 1e-5),
            "{} is not an octagon corner",
            p.point_b
        );
    }
    // The kept quad has the largest area of any four octagon corners.
    let quad_area = |q: [(f32, f32); 4]| {
        // Convex hull area of four points: max over the three orderings.
        let shoelace = |o: [usize; 4]| {
            let mut s = 0.0;
            for i in 0..4 {
                let (p, n) = (q[o[i]], q[o[(i + 1) % 4]]);
                s += p.0 * n.1 - n.0 * p.1;
            }
            (0.5 * s).abs()
        };
        shoelace([0, 1, 2, 3])
            .max(shoelace([0, 2, 1, 3]))
            .max(shoelace([0, 1, 3, 2]))
    };
    let mut best = 0.0f32;
    for i in 0..8 {
        for j in i + 1..8 {
            for k in j + 1..8 {
                for l in k + 1..8 {
                    best = best.max(quad_area([octagon[i], octagon[j], octagon[k], octagon[l]]));
                }
            }
        }
    }
    let p = m.points();
    let got = quad_area([0, 1, 2, 3].map(|i| (p[i].point_b.x, p[i].point_b.z)));
    assert!(
        (got - best).abs() < 1e-4 * best,
        "area {got} vs best {best}"
    );
}

/// A box rotated 45° about z (top edge along z) and one rotated 45° about x
/// and 30° about y (bottom edge horizontal at 30° from x), then A tilted 10°
/// about x so the normal is not an axis. B sits 1 cm into A along the common
/// perpendicular of the two edges' midpoints.
fn crossed_edges() -> (Cuboid, Pose, Cuboid, Pose, Vec3, Vec3, Vec3) {
    let a = cuboid(0.5, 0.5, 0.5);
    let b = cuboid(0.5, 0.5, 0.5);
    let pa = Pose::new(
        Vec3::new(0.3, -0.2, 0.1),
        Quat::from_rotation_x(10f32.to_radians()) * Quat::from_rotation_z(FRAC_PI_4),
    );
    let qb = Quat::from_rotation_y(30f32.to_radians()) * Quat::from_rotation_x(FRAC_PI_4);
    // A's top edge: local x = y = +0.5; B's bottom edge: local y = −0.5, z = +0.5.
    let ea = pa.transform_vector(Vec3::Z);
    let eb = qb * Vec3::X;
    let mut n = ea.cross(eb).normalize();
    if n.y < 0.0 {
        n = -n;
    }
    let mid_a = pa.transform_point(Vec3::new(0.5, 0.5, 0.0));
    let mid_b = mid_a - n * 0.01;
    let pb = Pose::new(mid_b - qb * Vec3::new(0.0, -0.5, 0.5), qb);
    (a, pa, b, pb, n, mid_a, mid_b)
}

#[test]
fn rotated_boxes_meet_edge_to_edge() {
    let (a, pa, b, pb, n, mid_a, mid_b) = crossed_edges();
    let m = box_box(&a, &pa, &b, &pb, 0.0, &mut SatCache::default()).unwrap();
    assert_eq!(m.count, 1);
    assert!(m.normal.abs_diff_eq(n, 1e-5), "{} vs {n}", m.normal);
    let p = m.points[0];
    assert!((p.separation + 0.01).abs() < 1e-5, "{}", p.separation);
    assert!(
        p.point_a.abs_diff_eq(mid_a, 1e-5),
        "{} vs {mid_a}",
        p.point_a
    );
    assert!(
        p.point_b.abs_diff_eq(mid_b, 1e-5),
        "{} vs {mid_b}",
        p.point_b
    );
    assert_eq!(
        FeatureId(p.id.0 & 0xff00_ff00),
        FeatureId::new(FeatureKind::Edge, 0, FeatureKind::Edge, 0)
    );
}

#[test]
fn hull_of_cube_corners_gives_the_box_manifold() {
    let (a, pa, b, pb) = resting();
    let (ha, hb) = (hull_of(&a), hull_of(&b));
    let want = contact(&a, &pa, &b, &pb, 0.0).unwrap();
    assert_same_manifold(&contact(&ha, &pa, &hb, &pb, 0.0).unwrap(), &want, 1e-5);
    assert_same_manifold(&contact(&a, &pa, &hb, &pb, 0.0).unwrap(), &want, 1e-5);
    assert_same_manifold(&contact(&ha, &pa, &b, &pb, 0.0).unwrap(), &want, 1e-5);

    let a = cuboid(1.2, 0.5, 1.2);
    let pa = Pose::new(Vec3::ZERO, Quat::from_rotation_y(FRAC_PI_4));
    let b = cuboid(1.0, 0.5, 1.0);
    let pb = Pose::from_position(Vec3::new(0.0, 0.99, 0.0));
    let want = contact(&a, &pa, &b, &pb, 0.0).unwrap();
    let got = contact(&hull_of(&a), &pa, &hull_of(&b), &pb, 0.0).unwrap();
    // Same octagon, same depth; the kept quad may differ only by symmetry.
    assert_eq!(got.count, want.count);
    assert!(got.normal.abs_diff_eq(want.normal, 1e-6));
    for p in got.points() {
        assert!((p.separation - want.points[0].separation).abs() < 1e-5);
    }

    let (a, pa, b, pb, ..) = crossed_edges();
    let want = contact(&a, &pa, &b, &pb, 0.0).unwrap();
    assert_same_manifold(
        &contact(&hull_of(&a), &pa, &hull_of(&b), &pb, 0.0).unwrap(),
        &want,
        1e-5,
    );

    let (a, b) = (cuboid(1.0, 0.5, 2.0), hull_of(&cuboid(1.0, 0.5, 2.0)));
    let (ma, mb) = (a.mass_properties(700.0), b.mass_properties(700.0));
    assert!((ma.mass - mb.mass).abs() <= 1e-6 * ma.mass);
    assert!(mb.local_center.length() < 1e-6);
    for c in 0..3 {
        assert!(ma
            .inertia
            .col(c)
            .abs_diff_eq(mb.inertia.col(c), 1e-5 * ma.inertia.col(c).length()));
    }
}

#[test]
fn feature_ids_survive_a_small_motion() {
    // Overhanging box: two incident corners inside, two clip points on the
    // ground's edge.
    let a = cuboid(1.0, 0.5, 1.0);
    let b = cuboid(0.5, 0.5, 0.5);
    let pb = Pose::from_position(Vec3::new(0.8, 0.99, 0.1));
    let nudge = |p: &Pose| {
        Pose::new(
            p.position + Vec3::new(0.001, 0.0, -0.001),
            Quat::from_rotation_y(5e-4) * p.rotation,
        )
    };
    let m0 = contact(&a, &Pose::IDENTITY, &b, &pb, 0.0).unwrap();
    assert_eq!(m0.count, 4);
    let kinds: Vec<u32> = sorted_ids(&m0)
        .iter()
        .map(|id| id.0 & 0xff00_ff00)
        .collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|&&k| k == FeatureId::new(FeatureKind::Edge, 0, FeatureKind::Edge, 0).0)
            .count(),
        2
    );
    let m1 = contact(&a, &Pose::IDENTITY, &b, &nudge(&pb), 0.0).unwrap();
    assert_eq!(sorted_ids(&m0), sorted_ids(&m1));

    // Tilted box: unequal depths.
    let pt = Pose::new(Vec3::new(0.2, 0.985, 0.0), Quat::from_rotation_z(0.01));
    let m0 = contact(&a, &Pose::IDENTITY, &b, &pt, 0.0).unwrap();
    let m1 = contact(&a, &Pose::IDENTITY, &b, &nudge(&pt), 0.0).unwrap();
    assert!(m0.count >= 2);
    assert_eq!(sorted_ids(&m0), sorted_ids(&m1));

    // Octagon reduced to four: the same four are kept.
    let a = cuboid(1.2, 0.5, 1.2);
    let pa = Pose::new(Vec3::ZERO, Quat::from_rotation_y(FRAC_PI_4));
    let b = cuboid(1.0, 0.5, 1.0);
    let pb = Pose::from_position(Vec3::new(0.0, 0.99, 0.0));
    let m0 = contact(&a, &pa, &b, &pb, 0.0).unwrap();
    let m1 = contact(&a, &pa, &b, &nudge(&pb), 0.0).unwrap();
    assert_eq!(m0.count, 4);
    assert_eq!(sorted_ids(&m0), sorted_ids(&m1));

    // Edge–edge.
    let (a, pa, b, pb, ..) = crossed_edges();
    let m0 = contact(&a, &pa, &b, &pb, 0.0).unwrap();
    let m1 = contact(&a, &pa, &b, &nudge(&pb), 0.0).unwrap();
    assert_eq!(sorted_ids(&m0), sorted_ids(&m1));
}

fn assert_swapped(ab: &Manifold, ba: &Manifold) {
    assert!(ab.normal.abs_diff_eq(-ba.normal, 1e-6));
    assert_eq!(ab.count, ba.count);
    let mut s1: Vec<f32> = ab.points().iter().map(|p| p.separation).collect();
    let mut s2: Vec<f32> = ba.points().iter().map(|p| p.separation).collect();
    s1.sort_by(f32::total_cmp);
    s2.sort_by(f32::total_cmp);
    for (x, y) in s1.iter().zip(&s2) {
        assert!((x - y).abs() < 1e-5);
    }
    let a1: Vec<Vec3> = ab.points().iter().map(|p| p.point_a).collect();
    let b2: Vec<Vec3> = ba.points().iter().map(|p| p.point_b).collect();
    assert_same_points(&a1, &b2, 1e-5);
    let b1: Vec<Vec3> = ab.points().iter().map(|p| p.point_b).collect();
    let a2: Vec<Vec3> = ba.points().iter().map(|p| p.point_a).collect();
    assert_same_points(&b1, &a2, 1e-5);
}

#[test]
fn swapping_a_and_b_flips_the_normal() {
    let (a, pa, b, pb) = resting();
    assert_swapped(
        &contact(&a, &pa, &b, &pb, 0.0).unwrap(),
        &contact(&b, &pb, &a, &pa, 0.0).unwrap(),
    );
    let (a, pa, b, pb, ..) = crossed_edges();
    assert_swapped(
        &contact(&a, &pa, &b, &pb, 0.0).unwrap(),
        &contact(&b, &pb, &a, &pa, 0.0).unwrap(),
    );
    // A tilted box: the deepest corner is the same either way.
    let (a, pa, b, _) = resting();
    let pt = Pose::new(Vec3::new(0.2, 0.985, 0.0), Quat::from_rotation_z(0.05));
    assert_swapped(
        &contact(&a, &pa, &b, &pt, 0.0).unwrap(),
        &contact(&b, &pt, &a, &pa, 0.0).unwrap(),
    );
}

/// f32 spacing at 10 km: 2^-10 m ≈ 0.98 mm. Positions are chosen on that
/// grid, so the relative placement is exact in both frames: normals and
/// separations must agree to 1e-5, and world points to one spacing (the
/// rounding of adding 10 km back).
#[test]
fn translation_invariance_at_10_km() {
    const ULP_10KM: f32 = 1.0 / 1024.0;
    let far = Vec3::new(10_000.0, 0.0, -10_000.0);
    let snap = |v: Vec3| (v * 1024.0).round() / 1024.0;
    let check = |a: &dyn Fn(&Pose, &Pose) -> Manifold, pa: Pose, pb: Pose| {
        let (pa, pb) = (
            Pose::new(snap(pa.position), pa.rotation),
            Pose::new(snap(pb.position), pb.rotation),
        );
        let near = a(&pa, &pb);
        let shifted = a(
            &Pose::new(pa.position + far, pa.rotation),
            &Pose::new(pb.position + far, pb.rotation),
        );
        assert_eq!(near.count, shifted.count);
        assert!(near.normal.abs_diff_eq(shifted.normal, 1e-5));
        for (p, q) in near.points().iter().zip(shifted.points()) {
            assert_eq!(p.id, q.id);
            assert!((p.separation - q.separation).abs() <= 1e-5);
            assert!((q.point_a - far - p.point_a).abs().max_element() <= ULP_10KM);
            assert!((q.point_b - far - p.point_b).abs().max_element() <= ULP_10KM);
        }
    };
    let (a, pa, b, pb) = resting();
    check(&|x, y| contact(&a, x, &b, y, 0.0).unwrap(), pa, pb);
    let (a, pa, b, pb, ..) = crossed_edges();
    check(&|x, y| contact(&a, x, &b, y, 0.0).unwrap(), pa, pb);
    let (ha, hb) = (hull_of(&a), hull_of(&b));
    check(&|x, y| contact(&ha, x, &hb, y, 0.0).unwrap(), pa, pb);
}

#[test]
fn speculative_contacts_and_the_cache() {
    let a = cuboid(2.0, 0.5, 2.0);
    let b = cuboid(0.5, 0.5, 0.5);
    let gap = Pose::from_position(Vec3::new(0.0, 1.05, 0.0));
    let mut cache = SatCache::default();
    let m = box_box(&a, &Pose::IDENTITY, &b, &gap, 0.1, &mut cache).unwrap();
    assert_eq!(m.count, 4);
    for p in m.points() {
        assert!((p.separation - 0.05).abs() < 1e-5);
    }
    assert!(!cache.separated);
    assert!(box_box(&a, &Pose::IDENTITY, &b, &gap, 0.01, &mut cache).is_none());
    assert!(cache.separated);
    assert!(matches!(cache.axis, SatAxis::FaceA(2) | SatAxis::FaceB(3)));
    // Still apart: the cached axis answers alone.
    let axis = cache.axis;
    assert!(box_box(&a, &Pose::IDENTITY, &b, &gap, 0.01, &mut cache).is_none());
    assert_eq!(cache.axis, axis);
    // Into contact with the same cache.
    let touch = Pose::from_position(Vec3::new(0.0, 0.99, 0.0));
    let m = box_box(&a, &Pose::IDENTITY, &b, &touch, 0.01, &mut cache).unwrap();
    assert_eq!(m.count, 4);
    assert!(!cache.separated);
    // Apart sideways: corner to corner, 0.2 apart along x and z.
    let corner = Pose::from_position(Vec3::new(2.7, 0.9, 2.7));
    assert!(box_box(
        &a,
        &Pose::IDENTITY,
        &b,
        &corner,
        0.1,
        &mut SatCache::default()
    )
    .is_none());
}

#[test]
fn margins_push_points_to_the_rounded_surfaces() {
    let a = cuboid(2.0, 0.5, 2.0);
    let b = cuboid(0.5, 0.5, 0.5);
    // Cores 3 cm apart, radii 2 cm each: surfaces 1 cm deep.
    let pb = Pose::from_position(Vec3::new(0.0, 1.03, 0.0));
    let m = polytope_contact(
        &a,
        &Pose::IDENTITY,
        &b,
        &pb,
        0.02,
        0.02,
        0.0,
        &mut SatCache::default(),
    )
    .unwrap();
    assert_eq!(m.count, 4);
    for p in m.points() {
        assert!((p.separation + 0.01).abs() < 1e-5);
        assert!((p.point_a.y - 0.52).abs() < 1e-5);
        assert!((p.point_b.y - 0.51).abs() < 1e-5);
    }
}

/// Independent separation: the largest over every face normal and every
/// edge-pair cross product (no Gauss-map pruning), by vertex enumeration.
fn brute_separation(
    va: &[Vec3],
    fa: &[Vec3],
    ea: &[Vec3],
    vb: &[Vec3],
    fb: &[Vec3],
    eb: &[Vec3],
) -> f32 {
    let along = |n: Vec3| {
        let max_a = va.iter().map(|v| v.dot(n)).fold(f32::MIN, f32::max);
        let min_b = vb.iter().map(|v| v.dot(n)).fold(f32::MAX, f32::min);
        min_b - max_a
    };
    let mut axes: Vec<Vec3> = fa.iter().chain(fb).copied().collect();
    for x in ea {
        for y in eb {
            let c = x.cross(*y);
            if c.length() > 1e-3 {
                axes.push(c.normalize());
            }
        }
    }
    axes.iter()
        .map(|&n| along(n).max(along(-n)))
        .fold(f32::MIN, f32::max)
}

fn world_geometry<P: Polytope>(p: &P, pose: &Pose, nv: usize) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
    let v = (0..nv).map(|i| pose.transform_point(p.vertex(i))).collect();
    let f = (0..p.face_count())
        .map(|i| pose.transform_vector(p.face_plane(i).0))
        .collect();
    let e = (0..p.edge_count())
        .map(|i| {
            let ([a, b], _) = p.edge(i);
            pose.transform_vector(p.vertex(b) - p.vertex(a))
        })
        .collect();
    (v, f, e)
}

fn check_against_brute_force<A: Polytope, B: Polytope>(
    a: &A,
    pa: &Pose,
    nva: usize,
    b: &B,
    pb: &Pose,
    nvb: usize,
) -> Result<(), TestCaseError> {
    check_contact_fn(a, pa, nva, b, pb, nvb, contact(a, pa, b, pb, 0.0))
}

fn check_contact_fn<A: Polytope, B: Polytope>(
    a: &A,
    pa: &Pose,
    nva: usize,
    b: &B,
    pb: &Pose,
    nvb: usize,
    m: Option<Manifold>,
) -> Result<(), TestCaseError> {
    let (va, fa, ea) = world_geometry(a, pa, nva);
    let (vb, fb, eb) = world_geometry(b, pb, nvb);
    let truth = brute_separation(&va, &fa, &ea, &vb, &fb, &eb);
    // Keep clear of the boundary where f32 rounding decides.
    prop_assume!(truth.abs() > 1e-4);
    match m {
        None => prop_assert!(truth > 0.0, "missed contact, separation {truth}"),
        Some(m) => {
            prop_assert!(truth < 0.0, "contact while {truth} apart");
            prop_assert!((m.normal.length() - 1.0).abs() < 1e-5);
            // The chosen axis may trail the best by the switching slack,
            // SWITCH_ABS + SWITCH_REL·|chosen|, and |chosen| is at most
            // (|truth| + SWITCH_ABS) / (1 − SWITCH_REL); plus f32 rounding.
            let slack =
                SWITCH_ABS + SWITCH_REL * (truth.abs() + SWITCH_ABS) / (1.0 - SWITCH_REL) + 1e-5;
            let deepest = m
                .points()
                .iter()
                .map(|p| p.separation)
                .fold(f32::MAX, f32::min);
            prop_assert!(
                deepest >= truth - slack,
                "deeper than possible: {deepest} < {truth}"
            );
            for p in m.points() {
                prop_assert!(p.separation <= 1e-6);
                prop_assert!(((p.point_b - p.point_a).dot(m.normal) - p.separation).abs() < 1e-4);
                // Each point lies on (or in) its shape.
                let inside = |x: Vec3, f: &[Vec3], v: &[Vec3]| {
                    f.iter().all(|n| {
                        let top = v.iter().map(|w| w.dot(*n)).fold(f32::MIN, f32::max);
                        x.dot(*n) <= top + 1e-4
                    })
                };
                prop_assert!(inside(p.point_a, &fa, &va), "point_a off A");
                prop_assert!(inside(p.point_b, &fb, &vb), "point_b off B");
            }
        }
    }
    Ok(())
}

fn arb_pose(reach: f32) -> impl Strategy<Value = Pose> {
    (
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0),
        (-3.2f32..3.2, -3.2f32..3.2, -3.2f32..3.2),
    )
        .prop_map(move |(p, r)| {
            Pose::new(
                Vec3::new(p.0, p.1, p.2) * reach,
                Quat::from_euler(glam::EulerRot::XYZ, r.0, r.1, r.2),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_box_pairs_agree_with_brute_force_sat(
        ha in (0.1f32..1.5, 0.1f32..1.5, 0.1f32..1.5),
        hb in (0.1f32..1.5, 0.1f32..1.5, 0.1f32..1.5),
        pa in arb_pose(0.5),
        pb in arb_pose(2.0),
    ) {
        let a = cuboid(ha.0, ha.1, ha.2);
        let b = cuboid(hb.0, hb.1, hb.2);
        check_against_brute_force(&a, &pa, 8, &b, &pb, 8)?;
        // The box-specific edge query answers the same.
        let m = box_box(&a, &pa, &b, &pb, 0.0, &mut SatCache::default());
        check_contact_fn(&a, &pa, 8, &b, &pb, 8, m)?;
    }

    #[test]
    fn random_hull_pairs_agree_with_brute_force_sat(
        ca in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0), 8..24),
        cb in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0), 8..24),
        pa in arb_pose(0.5),
        pb in arb_pose(1.5),
    ) {
        let a = ConvexHull::new(&ca.iter().map(|p| Vec3::new(p.0, p.1, p.2)).collect::<Vec<_>>()).unwrap();
        let b = ConvexHull::new(&cb.iter().map(|p| Vec3::new(p.0, p.1, p.2)).collect::<Vec<_>>()).unwrap();
        let (na, nb) = (a.vertices.len(), b.vertices.len());
        check_against_brute_force(&a, &pa, na, &b, &pb, nb)?;
    }
}

/// A resting box jittered by ±0.1 mm and ±0.1 mrad for 200 frames with one
/// cache: the kept features never change, also where eight points are
/// reduced to four.
#[test]
fn ids_stay_put_while_a_box_jitters_at_rest() {
    let mut seed = 12345u32;
    let mut rnd = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    };
    let cases = [
        (
            cuboid(2.0, 0.5, 2.0),
            Pose::IDENTITY,
            Vec3::new(0.3, 0.995, -0.2),
        ),
        (
            cuboid(1.0, 0.5, 1.0),
            Pose::IDENTITY,
            Vec3::new(0.8, 0.995, 0.1),
        ),
        (
            cuboid(1.2, 0.5, 1.2),
            Pose::new(Vec3::ZERO, Quat::from_rotation_y(FRAC_PI_4)),
            Vec3::new(0.0, 0.995, 0.0),
        ),
    ];
    for (a, pa, at) in cases {
        let b = if a.half_extents.x > 1.1 {
            cuboid(1.0, 0.5, 1.0)
        } else {
            cuboid(0.5, 0.5, 0.5)
        };
        let mut cache = SatCache::default();
        let mut first: Option<Vec<FeatureId>> = None;
        for _ in 0..200 {
            let pos = at + Vec3::new(rnd(), rnd(), rnd()) * 1e-4;
            let rot = Quat::from_euler(
                glam::EulerRot::XYZ,
                rnd() * 5e-4,
                rnd() * 5e-4,
                rnd() * 5e-4,
            );
            let m = box_box(&a, &pa, &b, &Pose::new(pos, rot), 0.01, &mut cache).unwrap();
            assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-3));
            let ids = sorted_ids(&m);
            match &first {
                None => first = Some(ids),
                Some(f) => assert_eq!(f, &ids),
            }
        }
    }
}

#[test]
fn prism_with_32_gon_caps_stands_on_a_box() {
    // Caps larger than a support feature carries: the reduced 16-gon clips.
    let mut pts = Vec::new();
    for i in 0..32 {
        let a = i as f32 / 32.0 * std::f32::consts::TAU;
        pts.push(Vec3::new(a.cos(), 0.5, a.sin()));
        pts.push(Vec3::new(a.cos(), -0.5, a.sin()));
    }
    let prism = ConvexHull::new(&pts).unwrap();
    let ground = cuboid(3.0, 0.5, 3.0);
    let pb = Pose::from_position(Vec3::new(0.2, 0.99, 0.0));
    let m = contact(&ground, &Pose::IDENTITY, &prism, &pb, 0.0).unwrap();
    assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-6));
    assert_eq!(m.count, 4);
    for p in m.points() {
        assert!((p.separation + 0.01).abs() < 1e-5);
        let r = Vec3::new(p.point_b.x - 0.2, 0.0, p.point_b.z).length();
        assert!((r - 1.0).abs() < 1e-5, "off the rim: {}", p.point_b);
    }
    // The four spread around the rim: the quad covers most of the disc.
    let q: Vec<Vec3> = m.points().iter().map(|p| p.point_b).collect();
    let mut diag = 0.0f32;
    for i in 0..4 {
        for j in i + 1..4 {
            diag = diag.max((q[i] - q[j]).length());
        }
    }
    assert!(diag > 1.9, "widest pair {diag}");
}

#[test]
fn large_hull_uses_hill_climbing_and_finds_its_lowest_vertex() {
    let g = std::f32::consts::PI * (3.0 - 5f32.sqrt());
    let pts: Vec<Vec3> = (0..500)
        .map(|i| {
            let y = 1.0 - 2.0 * (i as f32 + 0.5) / 500.0;
            let r = (1.0 - y * y).sqrt();
            let a = g * i as f32;
            Vec3::new(r * a.cos(), y, r * a.sin())
        })
        .collect();
    let ball = ConvexHull::new(&pts).unwrap();
    let rot = Quat::from_rotation_x(0.3);
    let low = ball
        .vertices
        .iter()
        .map(|v| (rot * *v).y)
        .fold(f32::MAX, f32::min);
    let ground = cuboid(3.0, 0.5, 3.0);
    let pb = Pose::new(Vec3::new(0.0, 0.5 - low - 0.02, 0.0), rot);
    let m = contact(&ground, &Pose::IDENTITY, &ball, &pb, 0.0).unwrap();
    let deepest = m
        .points()
        .iter()
        .map(|p| p.separation)
        .fold(f32::MAX, f32::min);
    assert!((deepest + 0.02).abs() < 1e-5, "{deepest}");
    assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-5));
}
