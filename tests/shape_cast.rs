//! Shape casts (GJK ray cast) and time of impact (conservative advancement)
//! against analytic answers and brute-force sampling.

use arbiter::physics::collision::gjk::{gjk, CoreSupport, GjkResult};
use arbiter::physics::collision::{shape_cast, time_of_impact, Sweep, Toi, ToiSettings};
use arbiter::physics::math::{Pose, Quat, Vec3};
use arbiter::physics::shape::Shape;

#[test]
fn sphere_cast_against_sphere_matches_the_analytic_time() {
    let a = Shape::sphere(0.5);
    let b = Shape::sphere(0.5);
    let hit = shape_cast(
        &a,
        &Pose::IDENTITY,
        Vec3::new(10.0, 0.0, 0.0),
        &b,
        &Pose::from_position(Vec3::new(5.0, 0.0, 0.0)),
        1e-5,
    )
    .expect("hit");
    // Surfaces meet after 4 m of 10.
    assert!((hit.toi - 0.4).abs() < 1e-4, "toi {}", hit.toi);
    assert!(
        (hit.normal - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-3,
        "normal {}",
        hit.normal
    );
    assert!(
        (hit.point - Vec3::new(4.5, 0.0, 0.0)).length() < 1e-3,
        "point {}",
        hit.point
    );
}

#[test]
fn box_cast_misses_when_the_path_passes_beside_and_hits_at_an_angle() {
    let a = Shape::cuboid(Vec3::splat(0.5));
    let b = Shape::cuboid(Vec3::new(0.5, 2.0, 2.0));
    let wall = Pose::from_position(Vec3::new(5.0, 0.0, 0.0));
    // Beside: the box passes 3 m above the wall's top (y = 2).
    assert!(shape_cast(
        &a,
        &Pose::from_position(Vec3::new(0.0, 3.0, 0.0)),
        Vec3::new(10.0, 0.0, 0.0),
        &b,
        &wall,
        1e-5
    )
    .is_none());
    // A 45°-rotated cube (half-diagonal 0.707) meets the wall face at x = 4.5.
    let rot = Pose::new(
        Vec3::ZERO,
        Quat::from_rotation_y(std::f32::consts::FRAC_PI_4),
    );
    let hit = shape_cast(&a, &rot, Vec3::new(10.0, 0.0, 0.0), &b, &wall, 1e-5).expect("hit");
    let expected = (4.5 - 0.5f32.hypot(0.5)) / 10.0;
    assert!(
        (hit.toi - expected).abs() < 1e-4,
        "toi {} expected {expected}",
        hit.toi
    );
    assert!((hit.normal - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-3);
}

#[test]
fn overlapping_shapes_cast_at_time_zero_and_tolerance_bounds_the_error() {
    let a = Shape::sphere(1.0);
    let b = Shape::capsule(0.5, 0.5);
    let hit = shape_cast(
        &a,
        &Pose::IDENTITY,
        Vec3::new(1.0, 0.0, 0.0),
        &b,
        &Pose::from_position(Vec3::new(1.0, 0.0, 0.0)),
        1e-4,
    )
    .expect("overlap is a hit");
    assert_eq!(hit.toi, 0.0);
    // A coarse tolerance answers early by at most about the tolerance.
    let c = Shape::sphere(0.5);
    for tol in [1e-2f32, 1e-3, 1e-4] {
        let h = shape_cast(
            &c,
            &Pose::IDENTITY,
            Vec3::new(10.0, 0.0, 0.0),
            &c,
            &Pose::from_position(Vec3::new(5.0, 0.0, 0.0)),
            tol,
        )
        .unwrap();
        let err = (h.toi - 0.4).abs() * 10.0;
        assert!(err <= 2.0 * tol, "tolerance {tol}: error {err} m");
    }
}

fn distance(a: &Shape, pa: &Pose, b: &Shape, pb: &Pose) -> f32 {
    match gjk(
        &CoreSupport { shape: a, pose: pa },
        &CoreSupport { shape: b, pose: pb },
        pb.position - pa.position,
        f32::INFINITY,
    ) {
        GjkResult::Separated { distance, .. } => distance - a.radius() - b.radius(),
        _ => 0.0,
    }
}

#[test]
fn conservative_advancement_never_reports_later_than_the_first_contact() {
    // A spinning, translating plank against a static box; the true first
    // contact is found by dense sampling.
    let plank = Shape::cuboid(Vec3::new(1.0, 0.05, 0.05));
    let wall = Shape::cuboid(Vec3::new(0.05, 3.0, 3.0));
    let wall_pose = Pose::from_position(Vec3::new(2.0, 0.0, 0.0));
    let settings = ToiSettings {
        target: 0.0,
        tolerance: 1e-3,
        max_iterations: 200,
    };
    for k in 0..20 {
        let sweep = Sweep {
            com: Vec3::new(-0.5, 0.0, 0.0),
            rotation: Quat::from_rotation_y(0.3 * k as f32),
            local_center: Vec3::ZERO,
            dx: Vec3::new(2.0, 0.0, 0.0),
            dtheta: Vec3::new(0.0, 2.0, 0.0),
        };
        let fixed = Sweep::fixed(wall_pose);
        let toi = time_of_impact(&plank, &sweep, 1.01, &wall, &fixed, 0.0, 0.0, &settings);
        let mut truth = None;
        for i in 0..=20_000 {
            let t = i as f32 / 20_000.0;
            if distance(&plank, &sweep.pose_at(t), &wall, &wall_pose) <= 0.0 {
                truth = Some(t);
                break;
            }
        }
        match (toi, truth) {
            (Toi::Hit { t, .. }, Some(tt)) => {
                assert!(
                    t <= tt + 1e-4,
                    "case {k}: reported {t} after the first contact {tt}"
                );
                let d = distance(&plank, &sweep.pose_at(t), &wall, &wall_pose);
                assert!(d <= 2e-3, "case {k}: {d} m apart at the reported time");
            }
            (Toi::Miss, None) => {}
            other => panic!("case {k}: {other:?}"),
        }
    }
}
