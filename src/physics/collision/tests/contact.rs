use super::*;
use crate::physics::collision::gjk::{ShapeSupport, SupportMap};
use crate::physics::collision::FeatureKind;
use crate::physics::math::Quat;

const TOL: f32 = 1e-5;

#[test]
fn sphere_sphere_distance_is_analytic() {
    let a = Shape::sphere(1.0);
    let b = Shape::sphere(0.5);
    let pa = Pose::from_position(Vec3::new(1.0, 2.0, 3.0));
    let dir = Vec3::new(2.0, -1.0, 2.0).normalize();
    for (dist, spec, expect) in [
        (2.0, 1.0, Some(0.5)),
        (2.0, 0.4, None),
        (1.2, 0.0, Some(-0.3)),
        (1.5, 0.0, Some(0.0)),
    ] {
        let pb = Pose::from_position(pa.position + dir * dist);
        let m = manifold(&a, &pa, &b, &pb, spec);
        match (m, expect) {
            (None, None) => {}
            (Some(m), Some(sep)) => {
                assert_well_formed(&m);
                assert_eq!(m.count, 1);
                assert!((m.points[0].separation - sep).abs() < TOL, "{m:?}");
                assert!((m.normal - dir).length() < TOL);
                assert!((m.points[0].point_a - (pa.position + dir)).length() < TOL);
            }
            (m, e) => panic!("dist {dist}: got {m:?}, expected {e:?}"),
        }
    }
}

#[test]
fn sphere_box_distance_is_analytic() {
    let bx = Shape::cuboid(Vec3::new(1.0, 2.0, 3.0));
    let pose = Pose::new(
        Vec3::new(-2.0, 1.0, 0.5),
        rot(Vec3::new(1.0, 2.0, 0.5), 0.7),
    );
    let s = Shape::sphere(0.5);
    // Local sphere centre, expected separation, expected feature kind on the box.
    let cases = [
        (Vec3::new(1.3, 0.2, -1.0), 0.3 - 0.5, FeatureKind::Face),
        (Vec3::new(1.6, 2.8, 0.0), 1.0 - 0.5, FeatureKind::Edge),
        (Vec3::new(1.1, 2.2, 3.2), 0.3 - 0.5, FeatureKind::Vertex),
        // Inside: nearest face is +x at 0.1.
        (Vec3::new(0.9, 0.5, 0.5), -0.1 - 0.5, FeatureKind::Face),
    ];
    for (cl, sep, kind) in cases {
        let c = pose.transform_point(cl);
        let sp = Pose::from_position(c);
        let m = manifold(&s, &sp, &bx, &pose, 1.0).unwrap();
        assert_well_formed(&m);
        assert!((m.points[0].separation - sep).abs() < TOL, "{cl}: {m:?}");
        let id = m.points[0].id.0;
        assert_eq!(id & 0xff00, (kind as u32) << 8, "{cl}: {m:?}");
        // Normal from the sphere to the box: the box point minus the centre.
        let q = pose.inverse_transform_point(m.points[0].point_b);
        assert!(
            (q.abs() - Vec3::new(1.0, 2.0, 3.0)).max_element() < 1e-4,
            "{q}"
        );
        // Box as A: same depth, flipped normal.
        let r = manifold(&bx, &pose, &s, &sp, 1.0).unwrap();
        assert!((r.points[0].separation - sep).abs() < TOL);
        assert!((r.normal + m.normal).length() < TOL);
    }
}

#[test]
fn box_on_plane_gives_four_points_with_the_right_depth() {
    let ground = Shape::plane(Vec3::Y, 0.0);
    let bx = Shape::cuboid(Vec3::splat(0.5));
    let pose = Pose::new(Vec3::new(3.0, 0.48, -2.0), Quat::from_rotation_y(0.6));
    let m = manifold(&ground, &Pose::IDENTITY, &bx, &pose, 0.01).unwrap();
    assert_well_formed(&m);
    assert_eq!(m.count, 4);
    assert!((m.normal - Vec3::Y).length() < TOL);
    for p in m.points() {
        assert!((p.separation + 0.02).abs() < TOL, "{m:?}");
        assert!(p.point_a.y.abs() < TOL);
        assert_eq!(p.id.0 >> 8 & 0xff, FeatureKind::Vertex as u32);
    }
    // Distinct corner ids.
    let mut ids: Vec<u32> = m.points().iter().map(|p| p.id.0).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4);

    // Plane as B: normal flips, depths stay.
    let r = manifold(&bx, &pose, &ground, &Pose::IDENTITY, 0.01).unwrap();
    assert_eq!(r.count, 4);
    assert!((r.normal + Vec3::Y).length() < TOL);
    assert!((min_separation(&r) + 0.02).abs() < TOL);

    // Tilted onto an edge: two points touching, the other two too high.
    let tilt = Pose::new(
        Vec3::new(0.0, 0.5 * 2f32.sqrt() - 0.01, 0.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
    );
    let m = manifold(&ground, &Pose::IDENTITY, &bx, &tilt, 0.05).unwrap();
    assert_eq!(m.count, 2, "{m:?}");
    for p in m.points() {
        assert!((p.separation + 0.01).abs() < 1e-5);
    }
}

#[test]
fn rotated_plane_with_offset() {
    let n = Vec3::new(1.0, 2.0, -0.5).normalize();
    let plane = Shape::plane(n, 1.5);
    let s = Shape::sphere(0.3);
    let c = n * 1.7 + n.any_orthonormal_vector() * 4.0;
    let m = manifold(&plane, &Pose::IDENTITY, &s, &Pose::from_position(c), 0.0).unwrap();
    assert!((m.points[0].separation - (0.2 - 0.3)).abs() < TOL);
    // The plane's own pose moves it.
    let pp = Pose::from_position(n * 0.1);
    let m = manifold(&plane, &pp, &s, &Pose::from_position(c), 0.0).unwrap();
    assert!((m.points[0].separation - (0.1 - 0.3)).abs() < TOL);
}

#[test]
fn capsule_and_cone_on_plane() {
    let ground = Shape::plane(Vec3::Y, 0.0);
    // Lying capsule: two points.
    let cap = Shape::capsule(0.5, 0.2);
    let pose = Pose::new(Vec3::new(0.0, 0.19, 0.0), Quat::from_rotation_z(1.5707964));
    let m = manifold(&ground, &Pose::IDENTITY, &cap, &pose, 0.01).unwrap();
    assert_eq!(m.count, 2);
    for p in m.points() {
        assert!((p.separation + 0.01).abs() < TOL);
    }
    // Standing capsule: one.
    let m = manifold(
        &ground,
        &Pose::IDENTITY,
        &cap,
        &Pose::from_position(Vec3::new(0.0, 0.69, 0.0)),
        0.01,
    )
    .unwrap();
    assert_eq!(m.count, 1);
    // Cone on its base: four rim points; on its side: apex and a rim point.
    let cone = Shape::cone(0.5, 0.3);
    let m = manifold(
        &ground,
        &Pose::IDENTITY,
        &cone,
        &Pose::from_position(Vec3::new(0.0, 0.49, 0.0)),
        0.0,
    )
    .unwrap();
    assert_eq!(m.count, 4);
    assert!((min_separation(&m) + 0.01).abs() < TOL);
    let half_angle = (0.3f32 / 1.0).atan();
    let side = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2 + half_angle);
    // Centre height when lying on the side: distance from the axis midpoint
    // to the side line.
    let h = 0.3 * 0.5 / (0.3f32.hypot(1.0));
    let m = manifold(
        &ground,
        &Pose::IDENTITY,
        &cone,
        &Pose::new(Vec3::new(0.0, h - 0.002, 0.0), side),
        0.0,
    )
    .unwrap();
    assert_eq!(m.count, 2, "{m:?}");
    for p in m.points() {
        assert!((p.separation + 0.002).abs() < 1e-5, "{m:?}");
    }
}

#[test]
fn cylinder_standing_on_plane_gives_at_least_three_points() {
    let ground = Shape::plane(Vec3::Y, 0.0);
    let cyl = Shape::cylinder(0.5, 0.3);
    let pose = Pose::new(Vec3::new(1.0, 0.495, 2.0), Quat::from_rotation_y(0.4));
    let m = manifold(&ground, &Pose::IDENTITY, &cyl, &pose, 0.01).unwrap();
    assert_well_formed(&m);
    assert!(m.count >= 3, "{m:?}");
    for p in m.points() {
        assert!((p.separation + 0.005).abs() < TOL);
        // On the rim.
        let l = pose.inverse_transform_point(p.point_b);
        assert!((Vec3::new(l.x, 0.0, l.z).length() - 0.3).abs() < 1e-5);
    }
    // Slightly tilted: the deepest rim point is one of them, with the exact depth.
    let tilt = Quat::from_rotation_x(0.02);
    let pose = Pose::new(Vec3::new(0.0, 0.5, 0.0), tilt);
    let m = manifold(&ground, &Pose::IDENTITY, &cyl, &pose, 0.02).unwrap();
    let lowest = 0.5 - (0.5 * 0.02f32.cos() + 0.3 * 0.02f32.sin());
    assert!((min_separation(&m) - lowest).abs() < TOL, "{m:?}");
    assert!(m.count >= 3);
    // Lying on its side: two points along the side line.
    let pose = Pose::new(Vec3::new(0.0, 0.29, 0.0), Quat::from_rotation_x(1.5707964));
    let m = manifold(&ground, &Pose::IDENTITY, &cyl, &pose, 0.005).unwrap();
    assert_eq!(m.count, 2, "{m:?}");
}

#[test]
fn capsules_parallel_give_two_points() {
    let a = Shape::capsule(1.0, 0.3);
    let b = Shape::capsule(0.5, 0.2);
    let rz = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let pa = Pose::new(Vec3::ZERO, rz);
    let pb = Pose::new(Vec3::new(0.8, 0.45, 0.0), rz);
    let m = manifold(&a, &pa, &b, &pb, 0.0).unwrap();
    assert_well_formed(&m);
    assert_eq!(m.count, 2, "{m:?}");
    assert!((m.normal - Vec3::Y).length() < TOL);
    let mut xs: Vec<f32> = m.points().iter().map(|p| p.point_a.x).collect();
    xs.sort_by(f32::total_cmp);
    // B spans x ∈ [0.3, 1.3], clipped to A's [−1, 1].
    assert!(
        (xs[0] - 0.3).abs() < TOL && (xs[1] - 1.0).abs() < TOL,
        "{xs:?}"
    );
    for p in m.points() {
        assert!((p.separation + 0.05).abs() < TOL);
    }
    // Crossed: one point with the right depth.
    let pb = Pose::new(Vec3::new(0.2, 0.48, 0.1), Quat::from_rotation_x(1.5707964));
    let m = manifold(&a, &pa, &b, &pb, 0.0).unwrap();
    assert_eq!(m.count, 1);
    assert!((m.points[0].separation - (0.48 - 0.5)).abs() < TOL, "{m:?}");
    assert!((m.normal - Vec3::Y).length() < TOL);
    // Axes intersecting: still a finite normal perpendicular to both.
    let pb = Pose::new(Vec3::new(0.2, 0.0, 0.0), Quat::from_rotation_x(1.5707964));
    let m = manifold(&a, &pa, &b, &pb, 0.0).unwrap();
    assert_well_formed(&m);
    assert!((m.points[0].separation + 0.5).abs() < TOL);
    assert!(m.normal.x.abs() < TOL && m.normal.z.abs() < TOL);
}

#[test]
fn sphere_capsule_both_orders() {
    let s = Shape::sphere(0.25);
    let c = Shape::capsule(0.5, 0.25);
    let pc = Pose::new(Vec3::new(0.0, 1.0, 0.0), Quat::from_rotation_z(0.5));
    for (offset, sep) in [(0.4, -0.1), (0.6, 0.1)] {
        let ps = Pose::from_position(pc.transform_point(Vec3::new(offset, 0.2, 0.0)));
        let m = manifold(&s, &ps, &c, &pc, 0.2).unwrap();
        assert!((m.points[0].separation - sep).abs() < TOL);
        let r = manifold(&c, &pc, &s, &ps, 0.2).unwrap();
        assert!((r.points[0].separation - sep).abs() < TOL);
        assert!((r.normal + m.normal).length() < TOL);
    }
    // Beyond the end cap.
    let ps = Pose::from_position(pc.transform_point(Vec3::new(0.0, 1.2, 0.0)));
    let m = manifold(&s, &ps, &c, &pc, 0.5).unwrap();
    // 0.7 from the segment's end, radii 0.25 + 0.25.
    assert!((m.points[0].separation - 0.2).abs() < TOL);
    let axis = pc.transform_vector(Vec3::Y);
    assert!((m.normal + axis).length() < TOL);
}

#[test]
fn box_on_box_through_gjk_epa() {
    let a = Shape::cuboid(Vec3::new(2.0, 0.5, 2.0));
    let b = Shape::cuboid(Vec3::splat(0.5));
    let pa = Pose::IDENTITY;
    let pb = Pose::new(Vec3::new(0.3, 0.97, -0.2), Quat::from_rotation_y(0.3));
    let m = manifold(&a, &pa, &b, &pb, 0.01).unwrap();
    assert_well_formed(&m);
    assert!((m.normal - Vec3::Y).length() < 1e-4, "{m:?}");
    assert!((min_separation(&m) + 0.03).abs() < 1e-5, "{m:?}");
    // Separated by 0.004: GJK, speculative.
    let pb = Pose::new(Vec3::new(0.3, 1.004, -0.2), Quat::from_rotation_y(0.3));
    let m = manifold(&a, &pa, &b, &pb, 0.01).unwrap();
    assert!((min_separation(&m) - 0.004).abs() < 1e-5, "{m:?}");
    assert!(manifold(&a, &pa, &b, &pb, 0.003).is_none());
    // Corner down, rotated about two axes: one point at the right depth.
    let q = Quat::from_rotation_x(0.6154797) * Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    let corner = 0.5 * 3f32.sqrt();
    let pb = Pose::new(Vec3::new(0.0, 0.5 + corner - 0.02, 0.0), q);
    let m = manifold(&a, &pa, &b, &pb, 0.0).unwrap();
    assert!((min_separation(&m) + 0.02).abs() < 1e-4, "{m:?}");
    assert!((m.normal - Vec3::Y).length() < 1e-3, "{m:?}");
}

#[test]
fn cylinders_side_by_side_through_epa() {
    // Parallel vertical cylinders whose axes are 0.55 apart: depth 0.05.
    let c = Shape::cylinder(0.5, 0.3);
    let pa = Pose::IDENTITY;
    let dir = Vec3::new(0.6, 0.0, 0.8);
    let pb = Pose::from_position(dir * 0.55);
    let m = manifold(&c, &pa, &c, &pb, 0.0).unwrap();
    assert_well_formed(&m);
    assert!((min_separation(&m) + 0.05).abs() < 1e-4, "{m:?}");
    assert!((m.normal - dir).length() < 1e-2, "{m:?}");
    // Apart by 0.1: GJK distance on a curved surface.
    let pb = Pose::from_position(dir * 0.7);
    let m = manifold(&c, &pa, &c, &pb, 0.2).unwrap();
    assert!((min_separation(&m) - 0.1).abs() < 1e-4, "{m:?}");
}

#[test]
fn cone_standing_on_box() {
    let bx = Shape::cuboid(Vec3::new(1.0, 0.5, 1.0));
    let cone = Shape::cone(0.4, 0.3);
    let pc = Pose::new(
        Vec3::new(0.1, 0.5 + 0.4 - 0.01, 0.0),
        Quat::from_rotation_y(0.2),
    );
    let m = manifold(&bx, &Pose::IDENTITY, &cone, &pc, 0.0).unwrap();
    assert_well_formed(&m);
    assert!((m.normal - Vec3::Y).length() < 1e-4, "{m:?}");
    assert!((min_separation(&m) + 0.01).abs() < 1e-5, "{m:?}");
}

#[test]
fn rounded_box_uses_its_margin() {
    let a = Shape::cuboid(Vec3::splat(0.5)).with_margin(0.1);
    let b = Shape::cuboid(Vec3::splat(0.5));
    let pb = Pose::from_position(Vec3::new(0.0, 1.08, 0.0));
    let m = manifold(&a, &Pose::IDENTITY, &b, &pb, 0.0).unwrap();
    assert!((min_separation(&m) + 0.02).abs() < 1e-5, "{m:?}");
    assert!((m.normal - Vec3::Y).length() < 1e-4);
}

/// (A, B) and (B, A): the same deepest separation and opposite normals.
///
/// Normals are compared by what they do rather than by angle: on curved
/// patches EPA's normal is good only to about √(2·tolerance/curvature), yet
/// every such normal gives the same overlap. So the flipped normal of one
/// order must separate the other order's pair as well as its own normal
/// does. Tolerance: EPA stops within 1e-5 × |A − B| (≤ 1.5e-5 here) of the
/// boundary in each order, so 3e-5.
#[test]
fn swapping_the_pair_flips_the_normal_and_keeps_the_depth() {
    let shapes = zoo();
    let poses = [
        Pose::new(
            Vec3::new(0.1, 0.2, -0.1),
            rot(Vec3::new(1.0, 0.3, 0.2), 0.4),
        ),
        Pose::new(
            Vec3::new(0.55, 0.3, 0.2),
            rot(Vec3::new(-0.2, 1.0, 0.7), 1.1),
        ),
    ];
    let overlap = |a: &Shape, b: &Shape, n: Vec3| {
        let sa = ShapeSupport {
            shape: a,
            pose: &poses[0],
        };
        let sb = ShapeSupport {
            shape: b,
            pose: &poses[1],
        };
        (sa.support(n) - sb.support(-n)).dot(n)
    };
    for (na, a) in &shapes {
        for (nb, b) in &shapes {
            let m = manifold(a, &poses[0], b, &poses[1], 0.1);
            let r = manifold(b, &poses[1], a, &poses[0], 0.1);
            match (m, r) {
                (Some(m), Some(r)) => {
                    assert_well_formed(&m);
                    assert_well_formed(&r);
                    let (sm, sr) = (min_separation(&m), min_separation(&r));
                    assert!((sm - sr).abs() < 3e-5, "{na}/{nb}: {sm} vs {sr}");
                    let own = overlap(a, b, m.normal);
                    let other = overlap(a, b, -r.normal);
                    assert!(
                        (own - other).abs() < 3e-5,
                        "{na}/{nb}: {:?} vs {:?}: overlaps {own} vs {other}",
                        m.normal,
                        r.normal
                    );
                }
                (None, None) => {}
                (m, r) => panic!("{na}/{nb}: {m:?} vs {r:?}"),
            }
        }
    }
}

/// Positions that are exact multiples of 2⁻¹⁰ stay exact at 10 km (the f32
/// spacing there is 2⁻¹⁰ m), and the queries run relative to one shape, so
/// the separations and normals must come out bit for bit the same; the
/// world-space points may differ by the rounding of the 10 km offset
/// (≤ 1 ulp = 0.98 mm).
#[test]
fn translation_to_ten_km_changes_nothing_but_point_rounding() {
    let far = Vec3::new(10_000.0, 250.0, -10_000.0);
    let shapes = zoo();
    let pa = Pose::new(
        Vec3::new(0.125, 0.25, 0.0),
        rot(Vec3::new(1.0, 0.3, 0.2), 0.4),
    );
    let pb = Pose::new(
        Vec3::new(0.625, 0.5, 0.25),
        rot(Vec3::new(-0.2, 1.0, 0.7), 1.1),
    );
    let shift = |p: &Pose| Pose::new(p.position + far, p.rotation);
    let ground = Shape::plane(Vec3::new(0.1, 1.0, 0.0), -0.25);
    for (na, a) in &shapes {
        for (nb, b) in shapes.iter().chain([("plane", ground.clone())].iter()) {
            let near = manifold(a, &pa, b, &pb, 0.1);
            let farm = manifold(a, &shift(&pa), b, &shift(&pb), 0.1);
            match (near, farm) {
                (Some(m), Some(f)) => {
                    assert_eq!(m.count, f.count, "{na}/{nb}");
                    assert_eq!(m.normal, f.normal, "{na}/{nb}");
                    for (p, q) in m.points().iter().zip(f.points()) {
                        assert_eq!(p.separation, q.separation, "{na}/{nb}");
                        assert!((p.point_a + far - q.point_a).abs().max_element() <= 9.8e-4);
                    }
                }
                (None, None) => {}
                (m, f) => panic!("{na}/{nb}: {m:?} vs {f:?}"),
            }
        }
    }
}

/// Arbitrary positions at 10 km round to the f32 grid (0.98 mm): each
/// coordinate of each pose moves by up to 0.49 mm, so the relative offset of
/// the pair moves by up to 0.98 mm per axis, 1.7 mm in length. Separations
/// are compared to that bound.
#[test]
fn translation_to_ten_km_with_rounded_inputs() {
    let far = Vec3::new(10_000.0, 250.0, -10_000.0);
    let a = Shape::cuboid(Vec3::new(0.5, 0.3, 0.4));
    let b = Shape::cylinder(0.4, 0.35);
    let pa = Pose::new(Vec3::new(0.1, 0.2, 0.3), rot(Vec3::new(1.0, 0.3, 0.2), 0.4));
    let pb = Pose::new(
        Vec3::new(0.6, 0.55, 0.2),
        rot(Vec3::new(-0.2, 1.0, 0.7), 1.1),
    );
    let m = manifold(&a, &pa, &b, &pb, 0.1).unwrap();
    let f = manifold(
        &a,
        &Pose::new(pa.position + far, pa.rotation),
        &b,
        &Pose::new(pb.position + far, pb.rotation),
        0.1,
    )
    .unwrap();
    assert!((min_separation(&m) - min_separation(&f)).abs() <= 1.7e-3);
    assert!((m.normal - f.normal).length() < 1e-2);
}

#[test]
fn coincident_centres_give_finite_manifolds() {
    let shapes = zoo();
    let pose = Pose::new(Vec3::new(1.0, 2.0, 3.0), Quat::IDENTITY);
    let turned = Pose::new(pose.position, rot(Vec3::new(0.3, 1.0, 0.1), 0.9));
    for (na, a) in &shapes {
        for (nb, b) in &shapes {
            for pb in [&pose, &turned] {
                let m = manifold(a, &pose, b, pb, 0.0)
                    .unwrap_or_else(|| panic!("{na}/{nb} coincident: no contact"));
                assert_well_formed(&m);
                assert!(min_separation(&m) < 0.0, "{na}/{nb}: {m:?}");
            }
        }
    }
    // Identical spheres and capsules: the cores coincide exactly.
    for s in [Shape::sphere(0.5), Shape::capsule(0.5, 0.2)] {
        let m = manifold(&s, &pose, &s, &pose, 0.0).unwrap();
        assert_well_formed(&m);
    }
}

#[test]
fn exactly_touching_shapes() {
    // Faces flush at y = 0.5 (all values exact in binary).
    let a = Shape::cuboid(Vec3::splat(0.5));
    let b = Shape::cuboid(Vec3::new(0.25, 0.25, 0.25));
    let pb = Pose::from_position(Vec3::new(0.125, 0.75, 0.0));
    let m = manifold(&a, &Pose::IDENTITY, &b, &pb, 0.0).unwrap();
    assert_well_formed(&m);
    assert!(min_separation(&m).abs() < 1e-6, "{m:?}");
    assert!((m.normal - Vec3::Y).length() < 1e-4, "{m:?}");
    // Touching spheres, cylinder on box, capsule on capsule end to end.
    let s = Shape::sphere(0.5);
    let m = manifold(&s, &Pose::IDENTITY, &s, &Pose::from_position(Vec3::X), 0.0).unwrap();
    assert!(m.points[0].separation.abs() < 1e-6);
    let c = Shape::cylinder(0.5, 0.25);
    let m = manifold(&a, &Pose::IDENTITY, &c, &Pose::from_position(Vec3::Y), 0.0).unwrap();
    assert_well_formed(&m);
    assert!(min_separation(&m).abs() < 1e-6, "{m:?}");
    let cap = Shape::capsule(0.5, 0.25);
    let m = manifold(
        &cap,
        &Pose::IDENTITY,
        &cap,
        &Pose::from_position(Vec3::Y * 1.5),
        0.0,
    )
    .unwrap();
    assert!(m.points[0].separation.abs() < 1e-6);
    assert!((m.normal - Vec3::Y).length() < 1e-6);
}

#[test]
fn thin_box_gives_finite_answers() {
    let thin = Shape::cuboid(Vec3::new(0.5, 0.5e-4, 0.5));
    let floor = Shape::cuboid(Vec3::new(2.0, 0.5, 2.0));
    let ground = Shape::plane(Vec3::Y, 0.5);
    let q = Quat::from_rotation_y(0.3);
    // Lying on the floor, 2e-5 deep.
    let pt = Pose::new(Vec3::new(0.0, 0.5 + 0.5e-4 - 2e-5, 0.0), q);
    for (name, other) in [("box", &floor), ("plane", &ground)] {
        let m =
            manifold(other, &Pose::IDENTITY, &thin, &pt, 0.0).unwrap_or_else(|| panic!("{name}"));
        assert_well_formed(&m);
        assert!((min_separation(&m) + 2e-5).abs() < 2e-6, "{name}: {m:?}");
        assert!((m.normal - Vec3::Y).length() < 1e-3, "{name}: {m:?}");
    }
    // Thin box against everything, overlapping and coincident.
    for (na, s) in zoo() {
        for pose in [
            Pose::new(Vec3::new(0.1, 0.05, 0.0), rot(Vec3::X, 0.3)),
            Pose::IDENTITY,
        ] {
            let m = manifold(&thin, &Pose::IDENTITY, &s, &pose, 0.0)
                .unwrap_or_else(|| panic!("thin/{na}"));
            assert_well_formed(&m);
            let r = manifold(&s, &pose, &thin, &Pose::IDENTITY, 0.0).unwrap();
            assert_well_formed(&r);
        }
    }
    // Two thin boxes crossing at right angles.
    let other = Pose::new(Vec3::ZERO, Quat::from_rotation_z(1.5707964));
    let m = manifold(&thin, &Pose::IDENTITY, &thin, &other, 0.0).unwrap();
    assert_well_formed(&m);
    assert!(min_separation(&m) < 0.0);
}

#[test]
fn pair_cache_keeps_the_normal() {
    let a = Shape::cylinder(0.5, 0.3);
    let b = Shape::cone(0.5, 0.3);
    let mut cache = PairCache::default();
    let pb = Pose::from_position(Vec3::new(0.5, 0.1, 0.0));
    let m = contact_manifold(&a, &Pose::IDENTITY, &b, &pb, 0.0, &mut cache).unwrap();
    assert_eq!(cache.normal, m.normal);
    // Warm-started, the same answer.
    let again = contact_manifold(&a, &Pose::IDENTITY, &b, &pb, 0.0, &mut cache).unwrap();
    assert!((min_separation(&m) - min_separation(&again)).abs() < 1e-5);
    // Planes never meet each other.
    let p = Shape::plane(Vec3::Y, 0.0);
    assert!(contact_manifold(&p, &Pose::IDENTITY, &p, &Pose::IDENTITY, 1.0, &mut cache).is_none());
}
