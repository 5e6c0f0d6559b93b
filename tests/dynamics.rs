//! Physics tests for the impulse pipeline. Each would fail for a wrong solver.

use arbiter::physics::{BodyKind, BodySpec, Scene, ShapeSpec, Vec3, World};

fn plane_world() -> World {
    let mut w = World::default();
    w.add_body(
        &BodySpec::new(ShapeSpec::Plane {
            normal: [0.0, 1.0, 0.0],
            offset: 0.0,
        })
        .kind(BodyKind::Static),
    )
    .unwrap();
    w
}

#[test]
fn sphere_rebounds_to_quarter_height_with_restitution_half() {
    let mut w = plane_world();
    let r = 0.1;
    let id = w
        .add_body(
            &BodySpec::new(ShapeSpec::Sphere { radius: r })
                .position([0.0, 1.0 + r, 0.0])
                .restitution(0.5),
        )
        .unwrap();
    // Fall (~0.45 s), bounce, then track the apex of the first rebound.
    let mut bounced = false;
    let mut apex: f32 = 0.0;
    for _ in 0..120 {
        w.step();
        let b = w.body(id).unwrap();
        let h = b.pose.position.y - r;
        if b.linear_velocity.y > 0.5 {
            bounced = true;
        }
        if bounced {
            apex = apex.max(h);
            if b.linear_velocity.y < -0.1 {
                break;
            }
        }
    }
    assert!(bounced, "the sphere never bounced");
    assert!(
        (apex - 0.25).abs() <= 0.025,
        "rebound apex {apex} m, expected 0.25 m ±10%"
    );
}

#[test]
fn determinism_same_hash_every_step() {
    let text = r#"{"world":{"gravity":[0,-9.81,0]},"bodies":[
        {"kind":"static","shape":{"type":"plane","normal":[0,1,0]}},
        {"shape":{"type":"sphere","radius":0.5},"position":[0,2,0],"restitution":0.3},
        {"shape":{"type":"sphere","radius":0.5},"position":[0.2,4,0.1]}]}"#;
    let scene = Scene::from_json(text).unwrap();
    let mut a = World::from_scene(&scene).unwrap();
    let mut b = World::from_scene(&scene).unwrap();
    for _ in 0..300 {
        a.step();
        b.step();
        assert_eq!(a.state_hash(), b.state_hash());
    }
    assert!(
        a.body(2).unwrap().pose.position.y < 1.9,
        "the sphere should have fallen"
    );
}

#[test]
fn bodies_get_ids_in_file_order_and_bad_scenes_fail() {
    let scene = Scene::from_json(
        r#"{"bodies":[{"kind":"static","shape":{"type":"plane","normal":[0,1,0]}},{"shape":{"type":"sphere","radius":1}}]}"#,
    )
    .unwrap();
    let w = World::from_scene(&scene).unwrap();
    assert!(w.body(1).unwrap().shape.is_plane());
    assert!(w.body(2).is_some());
    for bad in [
        r#"{"bodies":[{"shape":{"type":"plane","normal":[0,1,0]}}]}"#,
        r#"{"bodies":[{"shape":{"type":"sphere","radius":-1}}]}"#,
        r#"{"bodies":[{"shape":{"type":"blob"}}]}"#,
        r#"{"bodies":[{"shape":{"type":"sphere","radius":1},"position":[0,1e39,0]}]}"#,
        r#"{"bodies":[{"shape":{"type":"box","half_extents":[1,0,1]}}]}"#,
        r#"{"bodies":[{"shape":{"type":"convex_hull","points":[[0,0,0],[1,0,0],[0,1,0],[1,1,0]]}}]}"#,
        r#"{"bodies": ["#,
        r#"{"world":{"tick_hz":0}}"#,
    ] {
        let r = Scene::from_json(bad).and_then(|s| World::from_scene(&s).map(|_| ()));
        let err = r.expect_err(bad);
        assert!(!err.contains('\n'), "one-line error: {err}");
    }
    let _ = Vec3::ZERO;
}
