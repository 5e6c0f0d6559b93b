//! Physics tests for the impulse pipeline. Each would fail for a wrong solver.

mod common;

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

/// The hash covers cables: two worlds with a cable falling onto a sphere
/// hash alike every step, through the fall, the contact and the cable's
/// sleep; a world whose cable starts 1 µm higher hashes differently.
#[test]
fn determinism_same_hash_every_step_with_cables() {
    let scene = |y: f32| {
        let text = format!(
            r#"{{"world":{{"gravity":[0,-9.81,0]}},"bodies":[
            {{"kind":"static","shape":{{"type":"plane","normal":[0,1,0]}}}},
            {{"kind":"static","shape":{{"type":"sphere","radius":0.3}},"position":[0,0.3,0]}}],
            "cables":[{{"from":[-1,{y},0.05],"to":[1,{y},0.05],"segments":20,"damping":0.5}}]}}"#
        );
        World::from_scene(&Scene::from_json(&text).unwrap()).unwrap()
    };
    let (mut a, mut b) = (scene(1.0), scene(1.0));
    let c = scene(1.000001);
    assert_ne!(a.state_hash(), c.state_hash());
    for _ in 0..300 {
        a.step();
        b.step();
        assert_eq!(a.state_hash(), b.state_hash());
    }
    assert!(a.cables()[0].sleeping, "the cable came to rest and slept");
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
        r#"{"world":{"tick":18446744073709551615}}"#,
        r#"{"bodies":[{"id":18446744073709551615,"shape":{"type":"sphere","radius":1}}]}"#,
        r#"{"bodies":[{"id":9007199254740993,"shape":{"type":"sphere","radius":1}}]}"#,
        r#"{"cables":[{"id":9007199254740993,"from":[0,1,0],"to":[1,1,0],"segments":4}]}"#,
        r#"{"world":{"time":1e300}}"#,
        r#"{"bodies":[{"kind":"static","shape":{"type":"sphere","radius":1},"linear_velocity":[1,0,0]}]}"#,
        r#"{"bodies":[{"kind":"static","shape":{"type":"sphere","radius":1},"angular_velocity":[0,0,2]}]}"#,
    ] {
        let r = Scene::from_json(bad).and_then(|s| World::from_scene(&s).map(|_| ()));
        let err = r.expect_err(bad);
        assert!(!err.contains('\n'), "one-line error: {err}");
    }
    for (bad, what) in [
        (
            r#"{"bodies":[{"id":9007199254740993,"shape":{"type":"sphere","radius":1}}]}"#,
            "bodies[0]",
        ),
        (
            r#"{"cables":[{"id":9007199254740993,"from":[0,1,0],"to":[1,1,0],"segments":4}]}"#,
            "cables[0]",
        ),
    ] {
        let err = Scene::from_json(bad).unwrap_err();
        assert_eq!(
            err,
            format!("{what}: id must be at most 2^53 (9007199254740992)")
        );
    }
    // The largest id is 2^53, and no id passes it: with a body holding
    // it, nothing more can be added (the next id, 2^53 + 1, reads as 2^53
    // in JavaScript: two bodies with one id, a reviewer's case), and the
    // world is left as it was.
    let top = Scene::from_json(
        r#"{"bodies":[{"id":9007199254740992,"shape":{"type":"sphere","radius":1}}]}"#,
    )
    .unwrap();
    let mut w = World::from_scene(&top).unwrap();
    let ball = BodySpec::new(ShapeSpec::Sphere { radius: 1.0 }).position([5.0, 0.0, 0.0]);
    let spent = "limit: the world's ids are spent (the next would pass 2^53, 9007199254740992)";
    assert_eq!(w.add_body(&ball).unwrap_err(), spent);
    assert_eq!(
        w.add_bodies(&[ball.clone(), ball.clone()]).unwrap_err(),
        spent
    );
    let cable = arbiter::physics::cable::CableSpec::new([0.0, 3.0, 0.0], [1.0, 3.0, 0.0], 4);
    assert_eq!(w.add_cable(&cable).unwrap_err(), spent);
    assert_eq!(w.bodies().count(), 1);
    assert!(w.cables().is_empty());
    for (scene, what) in [
        (
            r#"{"bodies":[{"id":9007199254740992,"shape":{"type":"sphere","radius":1}},{"shape":{"type":"sphere","radius":1},"position":[5,0,0]}]}"#,
            "bodies[1]",
        ),
        (
            r#"{"bodies":[{"id":9007199254740992,"shape":{"type":"sphere","radius":1}}],"cables":[{"from":[0,3,0],"to":[1,3,0],"segments":4}]}"#,
            "cables[0]",
        ),
    ] {
        let err = World::from_scene(&Scene::from_json(scene).unwrap())
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err, format!("{what}: {spent}"));
    }
    let _ = Vec3::ZERO;
}

/// A static plane tilted by `deg` about Z through the origin.
fn slope_world(deg: f32) -> (World, Vec3) {
    let th = deg.to_radians();
    let n = Vec3::new(-th.sin(), th.cos(), 0.0);
    let mut w = World::default();
    w.add_body(
        &BodySpec::new(ShapeSpec::Plane {
            normal: n.to_array(),
            offset: 0.0,
        })
        .kind(BodyKind::Static)
        .friction(0.5),
    )
    .unwrap();
    (w, n)
}

fn box_on_slope(w: &mut World, n: Vec3, deg: f32) -> u64 {
    let q = arbiter::physics::Quat::from_rotation_z(deg.to_radians());
    let h = 0.25;
    w.add_body(
        &BodySpec::new(ShapeSpec::Box {
            half_extents: [h, h, h],
        })
        .position((n * h).to_array())
        .rotation(q)
        .friction(0.5),
    )
    .unwrap()
}

#[test]
fn box_holds_on_20_degree_slope_with_friction_half() {
    let (mut w, n) = slope_world(20.0);
    let id = box_on_slope(&mut w, n, 20.0);
    for _ in 0..30 {
        w.step();
    }
    let start = w.body(id).unwrap().pose.position;
    for _ in 0..120 {
        w.step();
    }
    let moved = (w.body(id).unwrap().pose.position - start).length();
    assert!(
        moved < 0.01,
        "box crept {moved} m in 2 s on a 20° slope with μ=0.5"
    );
}

#[test]
fn box_slides_on_35_degree_slope_with_textbook_acceleration() {
    let deg: f32 = 35.0;
    let (mut w, n) = slope_world(deg);
    let id = box_on_slope(&mut w, n, deg);
    for _ in 0..10 {
        w.step();
    }
    let th = deg.to_radians();
    let down = Vec3::new(-th.cos(), -th.sin(), 0.0);
    let v0 = w.body(id).unwrap().linear_velocity.dot(down);
    let steps = 60;
    for _ in 0..steps {
        w.step();
    }
    let v1 = w.body(id).unwrap().linear_velocity.dot(down);
    let a = (v1 - v0) / (steps as f32 / 60.0);
    let expected = 9.81 * (th.sin() - 0.5 * th.cos());
    assert!(
        (a - expected).abs() <= 0.1 * expected,
        "acceleration {a} m/s², expected {expected} ±10%"
    );
}

#[test]
fn spinning_box_on_ground_comes_to_rest_and_sleeps() {
    let mut w = plane_world();
    let id = w
        .add_body(
            &BodySpec::new(ShapeSpec::Box {
                half_extents: [0.5, 0.25, 0.5],
            })
            .position([0.0, 0.25, 0.0])
            .angular_velocity([0.0, 10.0, 0.0]),
        )
        .unwrap();
    for _ in 0..600 {
        w.step();
        let b = w.body(id).unwrap();
        assert!(b.pose.position.is_finite() && b.angular_velocity.is_finite());
    }
    let b = w.body(id).unwrap();
    assert!(
        b.angular_velocity.length() < 1e-3,
        "still spinning at {}",
        b.angular_velocity
    );
    assert!(b.sleeping, "a box at rest falls asleep");
    assert!(
        (b.pose.position.y - 0.25).abs() < 0.005,
        "rests on its face: y={}",
        b.pose.position.y
    );
}

fn two_spheres(m1: f32, m2: f32, v1: f32, v2: f32) -> (World, u64, u64) {
    let mut w = World::new(arbiter::physics::WorldSettings {
        gravity: Vec3::ZERO,
        ..Default::default()
    });
    let r = 0.5;
    let a = w
        .add_body(
            &BodySpec::new(ShapeSpec::Sphere { radius: r })
                .position([-2.0, 0.0, 0.0])
                .linear_velocity([v1, 0.0, 0.0])
                .mass(m1)
                .restitution(1.0),
        )
        .unwrap();
    let b = w
        .add_body(
            &BodySpec::new(ShapeSpec::Sphere { radius: r })
                .position([2.0, 0.0, 0.0])
                .linear_velocity([v2, 0.0, 0.0])
                .mass(m2)
                .restitution(1.0),
        )
        .unwrap();
    (w, a, b)
}

#[test]
fn elastic_head_on_masses_one_and_three_give_textbook_velocities() {
    let (m1, m2, u1, u2) = (1.0f32, 3.0f32, 4.0f32, -2.0f32);
    let (mut w, a, b) = two_spheres(m1, m2, u1, u2);
    let p0 = m1 * u1 + m2 * u2;
    let e0 = 0.5 * m1 * u1 * u1 + 0.5 * m2 * u2 * u2;
    for _ in 0..120 {
        w.step();
    }
    let (va, vb) = (
        w.body(a).unwrap().linear_velocity,
        w.body(b).unwrap().linear_velocity,
    );
    let v1 = ((m1 - m2) * u1 + 2.0 * m2 * u2) / (m1 + m2);
    let v2 = ((m2 - m1) * u2 + 2.0 * m1 * u1) / (m1 + m2);
    assert!(
        (va.x - v1).abs() < 0.02 * v1.abs().max(1.0),
        "v1 {} expected {v1}",
        va.x
    );
    assert!(
        (vb.x - v2).abs() < 0.02 * v2.abs().max(1.0),
        "v2 {} expected {v2}",
        vb.x
    );
    let p1 = m1 * va.x + m2 * vb.x;
    assert!(
        (p1 - p0).abs() <= 1e-4 * p0.abs().max(m1 * u1.abs()),
        "momentum {p0} -> {p1}"
    );
    let e1 = 0.5 * m1 * va.length_squared() + 0.5 * m2 * vb.length_squared();
    assert!((e1 - e0).abs() <= 0.01 * e0, "energy {e0} -> {e1}");
}

#[test]
fn deep_start_never_produces_nan() {
    let mut w = plane_world();
    let mut ids = Vec::new();
    // Spheres started deep inside the plane and inside each other.
    for i in 0..10 {
        ids.push(
            w.add_body(&BodySpec::new(ShapeSpec::Sphere { radius: 0.5 }).position([
                0.01 * i as f32,
                -0.4,
                0.0,
            ]))
            .unwrap(),
        );
    }
    for _ in 0..300 {
        w.step();
        for &id in &ids {
            let b = w.body(id).unwrap();
            assert!(
                b.pose.position.is_finite()
                    && b.linear_velocity.is_finite()
                    && b.pose.rotation.is_finite()
            );
        }
    }
    for &id in &ids {
        assert!(
            w.body(id).unwrap().pose.position.y > 0.3,
            "pushed out of the plane"
        );
    }
}

/// The world ends where a scene's coordinates do (±10⁵ m) and speeds where
/// a scene's do (10⁴ m/s, 10⁴ rad/s), so that every snapshot loads back: a
/// ball falling with nothing under it stops at the bound, a body struck by
/// a huge impulse far from its centre turns no faster than the cap, and a
/// cable falling past the bound stops whole. (A ball falling for 143 s, or
/// turned at 2.6·10¹² rad/s by an impulse of 10⁹ N·s, left a snapshot that
/// did not load back.)
#[test]
fn the_world_ends_where_a_scene_does_and_snapshots_load_back() {
    let mut w = World::default();
    let ball = |y: f32, vy: f32| {
        BodySpec::new(ShapeSpec::Sphere { radius: 0.5 })
            .position([0.0, y, 0.0])
            .linear_velocity([0.0, vy, 0.0])
    };
    let falling = w.add_body(&ball(-99_990.0, -1.0e4)).unwrap();
    let struck = w.add_body(&ball(0.0, 0.0)).unwrap();
    w.apply_impulse(
        struck,
        Vec3::new(1.0e9, 1.0e9, 1.0e9),
        Some(Vec3::new(0.5, -0.5, 0.0)),
        None,
    )
    .unwrap();
    let mut spec = arbiter::physics::cable::CableSpec::new(
        [-1.0, -99_990.0, 50.0],
        [1.0, -99_990.0, 50.0],
        10,
    );
    spec.linear_velocity = [0.0, -1.0e4, 0.0];
    let cable = w.add_cable(&spec).unwrap();
    // Before any step (a paused world): the impulse's speed is capped too.
    let text = serde_json::to_string(&w.snapshot()).unwrap();
    Scene::from_json(&text).expect("the snapshot before a step loads back");
    for _ in 0..3 {
        w.step();
        let text = serde_json::to_string(&w.snapshot()).unwrap();
        Scene::from_json(&text).expect("the snapshot loads back");
    }
    let b = w.body(falling).unwrap();
    assert_eq!(b.pose.position.y, -1.0e5, "stopped at the bound");
    assert_eq!(b.linear_velocity, Vec3::ZERO);
    let b = w.body(struck).unwrap();
    assert!(
        b.linear_velocity.length() <= 1.0e4 * 1.0001,
        "{}",
        b.linear_velocity
    );
    assert!(
        b.angular_velocity.length() <= 1.0e4 * 1.0001,
        "{}",
        b.angular_velocity
    );
    let c = w.cable(cable).unwrap();
    assert!(c.x.iter().all(|p| p.y >= -1.0e5), "inside the bound");
    assert!(c.x.iter().any(|p| p.y == -1.0e5), "stopped at the bound");
}

/// The fastest of 80 bodies of `shape` spawned at one point, without
/// gravity, over 1 s; and that they end apart (centres at least `apart`).
fn pile_at_one_point(shape: ShapeSpec, apart: f32) -> f32 {
    let mut w = World::default();
    w.settings.gravity = Vec3::ZERO;
    let ids: Vec<u64> = (0..80)
        .map(|_| w.add_body(&BodySpec::new(shape.clone())).unwrap())
        .collect();
    let mut top = 0.0f32;
    for _ in 0..60 {
        w.step();
        for &id in &ids {
            top = top.max(w.body(id).unwrap().linear_velocity.length());
        }
    }
    for &a in &ids {
        for &b in ids.iter().filter(|&&b| b > a) {
            let d = w.body(a).unwrap().pose.position - w.body(b).unwrap().pose.position;
            assert!(d.length() > apart, "{a} and {b} still {} apart", d.length());
        }
    }
    top
}

/// 80 spheres spawned at one point, without gravity, are pushed apart
/// without being flung: none moves faster than 8 m/s over 1 s (6.2
/// measured; the push-out is capped at 3 m/s a contact, and a sphere is
/// pushed by dozens). Two things flung them at 50 m/s: every pair's
/// manifold fell back to one normal (+y) while their centres coincided,
/// pushing them all apart along one line; and the next step carried each
/// pair's impulse over to a normal from the centres, far from the one it
/// was found along. Now each pair falls back to a direction of its own,
/// and impulses are carried only to a normal within about 11° of theirs.
#[test]
fn spheres_spawned_at_one_point_are_pushed_apart_not_flung() {
    let top = pile_at_one_point(ShapeSpec::Sphere { radius: 0.5 }, 0.95);
    assert!(top < 8.0, "a sphere left at {top} m/s");
}

/// 80 unit boxes spawned at one point, without gravity: none moves faster
/// than 12 m/s over 1 s (9.5 measured). Two identical boxes at one point
/// tie on all six face axes, and every pair took the first, so they were
/// pushed apart along one line and the outer ones left at 31 m/s; a tie now
/// goes to the face nearest the pair's own direction.
#[test]
fn boxes_spawned_at_one_point_are_pushed_apart_not_flung() {
    let half_extents = [0.5; 3];
    let top = pile_at_one_point(ShapeSpec::Box { half_extents }, 0.95);
    assert!(top < 12.0, "a box left at {top} m/s");
}

/// Thin plates (2–22 mm thick, 10–110 cm wide) and spheres (2–62 cm radius)
/// spawned into each other at random (the sphere's centre anywhere within
/// the plate's extent and a radius of it, turned at random), without
/// gravity: after 4 s no pair is 1 mm deep (0.13 mm at most measured), and
/// all but a few (pushed apart with some speed, drifting) are asleep. The
/// soft contacts push an overlap out by
/// position, the bodies' velocities staying near zero, and they fell
/// asleep after the sleep time still being pushed: 233 of these 400 pairs
/// slept more than 1 mm deep, 36 more than 5 mm, one 2.4 cm. A body now
/// rests by the larger of its speed and how far it moved in the step.
#[test]
fn plates_and_spheres_spawned_into_each_other_are_pushed_apart_before_they_sleep() {
    use arbiter::physics::Quat;
    let mut seed = 5u64;
    let mut rnd = move || common::lcg(&mut seed);
    let (mut failures, mut asleep) = (Vec::new(), 0);
    for pair in 0..400 {
        let mut w = World::default();
        w.settings.gravity = Vec3::ZERO;
        let h = Vec3::new(0.05 + 0.5 * rnd(), 0.001 + 0.01 * rnd(), 0.05 + 0.5 * rnd());
        let r = 0.02 + 0.6 * rnd();
        let axis = Vec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5).normalize();
        let rot = Quat::from_axis_angle(axis, 3.0 * rnd());
        let local = (Vec3::new(rnd(), rnd(), rnd()) * 2.0 - 1.0) * (h + Vec3::new(0.0, r, 0.0));
        let plate = BodySpec::new(ShapeSpec::Box {
            half_extents: h.to_array(),
        })
        .rotation(rot);
        let a = w.add_body(&plate).unwrap();
        let ball =
            BodySpec::new(ShapeSpec::Sphere { radius: r }).position((rot * local).to_array());
        let b = w.add_body(&ball).unwrap();
        for _ in 0..240 {
            w.step();
        }
        let (pa, pb) = (w.body(a).unwrap(), w.body(b).unwrap());
        // The sphere's centre's distance outside the plate (negative inside).
        let q = (pa.pose.rotation.inverse() * (pb.pose.position - pa.pose.position)).abs() - h;
        let outside = q.max(Vec3::ZERO).length() + q.max_element().min(0.0);
        let depth = r - outside;
        asleep += (pa.sleeping && pb.sleeping) as usize;
        if depth > 1.0e-3 {
            failures.push((pair, depth, pa.sleeping, pb.sleeping));
        }
    }
    assert!(
        failures.is_empty(),
        "{} pairs: {failures:?}",
        failures.len()
    );
    // (The rest were pushed apart with some speed, and drift.)
    assert!(asleep > 360, "only {asleep} pairs asleep");
}

/// What the last test must not cost: bodies at rest under load, however
/// deep their contacts settle, fall asleep. Boxes of 30 and 100 kg on a
/// 1 kg box on the floor (the soft contacts hold them about 0.28 mm deep a
/// kilogram of load: 8 and 28 mm), and a box pinched 2 cm deep between the
/// floor and a still kinematic lid, sleep within 2 s. (Keeping bodies with
/// a contact over 1 cm deep awake, tried first, kept the 100 kg stack and,
/// by review, the pinched box awake for good.)
#[test]
fn bodies_resting_deep_under_load_fall_asleep() {
    let cube = |h: f32| ShapeSpec::Box {
        half_extents: [h; 3],
    };
    let mut cases = Vec::new();
    for mass in [30.0, 100.0] {
        let mut w = plane_world();
        let light = BodySpec::new(cube(0.25))
            .mass(1.0)
            .position([0.0, 0.25, 0.0]);
        let heavy = BodySpec::new(cube(0.25))
            .mass(mass)
            .position([0.0, 0.75, 0.0]);
        let ids = vec![w.add_body(&light).unwrap(), w.add_body(&heavy).unwrap()];
        cases.push((format!("{mass} kg on 1 kg"), w, ids));
    }
    let mut w = plane_world();
    let boxed = BodySpec::new(cube(0.25)).position([0.0, 0.25, 0.0]);
    let id = w.add_body(&boxed).unwrap();
    let lid = BodySpec::new(ShapeSpec::Box {
        half_extents: [1.0, 0.1, 1.0],
    })
    .kind(BodyKind::Kinematic)
    .position([0.0, 0.58, 0.0]);
    w.add_body(&lid).unwrap();
    cases.push(("pinched under a lid".to_string(), w, vec![id]));
    for (what, mut w, ids) in cases {
        let mut asleep_at = None;
        for step in 0..120 {
            w.step();
            if asleep_at.is_none() && ids.iter().all(|&id| w.body(id).unwrap().sleeping) {
                asleep_at = Some(step);
            }
        }
        assert!(asleep_at.is_some(), "{what}: awake after 2 s");
    }
}

/// A snapshot loads back as itself: saved again at once it is the same
/// text, and the world it loads steps on as the world loaded from the
/// first. Loading normalized every rotation, which changed the last bits
/// of rotations the engine had already normalized: each save and load
/// turned them a little, and two runs from one pile's snapshot parted by
/// 3.6 m in 300 steps (a reviewer's case).
#[test]
fn a_snapshot_loads_back_as_itself() {
    let demo = Scene::from_json(include_str!("../scenes/demo.json")).unwrap();
    let mut w = World::from_scene(&demo).unwrap();
    for _ in 0..137 {
        w.step();
    }
    let text = |w: &World| serde_json::to_string(&w.snapshot()).unwrap();
    let load = |t: &str| World::from_scene(&Scene::from_json(t).unwrap()).unwrap();
    let first = text(&w);
    let mut a = load(&first);
    let second = text(&a);
    assert_eq!(first, second);
    let mut b = load(&second);
    for _ in 0..300 {
        a.step();
        b.step();
    }
    assert_eq!(a.state_hash(), b.state_hash());
    // (A rotation given by hand, off unit length, is still normalized.)
    let tilted = Scene::from_json(
        r#"{"bodies":[{"shape":{"type":"box","half_extents":[1,1,1]},"rotation":[0,0.7071,0,0.7071]}]}"#,
    )
    .unwrap();
    let q = World::from_scene(&tilted)
        .unwrap()
        .body(1)
        .unwrap()
        .pose
        .rotation;
    assert!((q.length() - 1.0).abs() < 1.0e-6, "{q}");
}

/// Flat faces bounce as a sphere does: an upright cylinder, a box and a
/// hull cube dropped 2 m flat onto a plane rise to e² of the drop (within
/// the sphere's own few percent: restitution takes the approach speed at
/// the step's start) and do not spin. One pass of restitution over a
/// face's four points left the cylinder at 1.25 times its drop with
/// restitution 1 (more energy than it fell with) and spinning at 7.8
/// rad/s; boxes picked up 3–6 rad/s (a reviewer's cases).
#[test]
fn flat_faces_bounce_as_a_sphere_does() {
    let cube: Vec<[f32; 3]> = (0..8)
        .map(|k| [k & 1, k >> 1 & 1, k >> 2 & 1].map(|b| b as f32 - 0.5))
        .collect();
    let shapes = [
        (
            ShapeSpec::Cylinder {
                half_height: 0.25,
                radius: 0.25,
            },
            0.25,
        ),
        (
            ShapeSpec::Box {
                half_extents: [0.5, 0.5, 0.5],
            },
            0.5,
        ),
        (ShapeSpec::ConvexHull { points: cube }, 0.5),
    ];
    for (shape, half) in shapes {
        for e in [1.0f32, 0.8, 0.5] {
            let mut w = plane_world();
            let mut spec = BodySpec::new(shape.clone())
                .position([0.0, half + 2.0, 0.0])
                .restitution(e);
            spec.angular_damping = 0.0;
            let id = w.add_body(&spec).unwrap();
            let (mut bounced, mut apex, mut spin) = (false, 0.0f32, 0.0f32);
            for _ in 0..240 {
                w.step();
                let b = w.body(id).unwrap();
                spin = spin.max(b.angular_velocity.length());
                if b.linear_velocity.y > 0.5 {
                    bounced = true;
                }
                if bounced {
                    apex = apex.max(b.pose.position.y - half);
                    if b.linear_velocity.y < -0.1 {
                        break;
                    }
                }
            }
            let rise = apex / 2.0;
            assert!(
                rise <= e * e + 0.01 && rise >= e * e - 0.05,
                "{shape:?}, e {e}: rose to {rise} of the drop"
            );
            assert!(spin < 0.5, "{shape:?}, e {e}: spin {spin} rad/s");
        }
    }
}

/// A box landing flat, with nothing to turn it, does not turn or slide:
/// dropped from 1 m with restitution 0, and thrown down at 500 m/s. The
/// contact solve took a face's four points one after another, each taking
/// the impact in turn: the dropped box spun at 0.43 rad/s and slid at 0.2
/// m/s, and the thrown one left at 21 m/s sideways, spinning at 80 rad/s
/// (a reviewer's cases). A landing face now takes its points together.
#[test]
fn a_box_landing_flat_neither_turns_nor_slides() {
    for (half, height, speed, spin_most, slide_most) in [
        (0.5f32, 1.0f32, 0.0f32, 0.15f32, 0.06f32),
        (0.1, 0.5, 500.0, 0.5, 0.5),
    ] {
        let mut w = plane_world();
        let id = w
            .add_body(
                &BodySpec::new(ShapeSpec::Box {
                    half_extents: [half; 3],
                })
                .position([0.0, half + height, 0.0])
                .linear_velocity([0.0, -speed, 0.0]),
            )
            .unwrap();
        let (mut spin, mut slide) = (0.0f32, 0.0f32);
        for _ in 0..200 {
            w.step();
            let b = w.body(id).unwrap();
            spin = spin.max(b.angular_velocity.length());
            slide = slide.max(Vec3::new(b.linear_velocity.x, 0.0, b.linear_velocity.z).length());
        }
        let b = w.body(id).unwrap();
        assert!(spin < spin_most, "{speed} m/s: spin {spin} rad/s");
        assert!(slide < slide_most, "{speed} m/s: slid at {slide} m/s");
        assert!(
            (b.pose.position.y - half).abs() < 0.01,
            "{speed} m/s: rests at {}",
            b.pose.position.y
        );
    }
}

/// A box of 1 × 0.2 × 0.5 m (its inertia least about x, most about y, in
/// between about z) spun at `w` (rad/s, world axes) with no gravity and no
/// damping: its angular momentum `R·I·Rᵀ·ω` and rotational energy after
/// each step, and its angular velocity in its own frame.
fn free_spin(w: [f32; 3], steps: usize) -> Vec<(Vec3, f32, Vec3)> {
    let mut world = World::default();
    world.settings.gravity = Vec3::ZERO;
    let mut spec = BodySpec::new(ShapeSpec::Box {
        half_extents: [0.5, 0.1, 0.25],
    });
    spec.angular_velocity = w;
    spec.angular_damping = 0.0;
    let id = world.add_body(&spec).unwrap();
    let mut out = Vec::new();
    for _ in 0..=steps {
        let b = world.body(id).unwrap();
        let q = b.pose.rotation.as_dquat();
        let w = b.angular_velocity.as_dvec3();
        let inertia = glam::DMat3::from_cols_array(&b.inertia_local.to_cols_array().map(f64::from));
        let local = q.conjugate() * w;
        let l = q * (inertia * local);
        out.push((l.as_vec3(), (0.5 * w.dot(l)) as f32, local.as_vec3()));
        world.step();
    }
    out
}

/// Euler's gyroscopic term: a free body keeps its angular momentum, not its
/// angular velocity. Without it (as before 2026-11-26) the box below spun
/// about a skew axis turned rigidly about that axis, its momentum 84% off
/// within a turn, and spun about its middle axis it never flipped.
#[test]
fn a_free_body_keeps_its_angular_momentum_and_flips_about_its_middle_axis() {
    // Spun about a skew axis: the angular velocity wanders, the momentum
    // and the energy stay.
    for (w, secs, l_most, e_least) in [
        ([1.0f32, 1.0, 1.0], 10.0f32, 0.002f32, 0.999f32),
        ([20.0, 20.0, 20.0], 4.0, 0.005, 0.99),
    ] {
        let run = free_spin(w, (secs * 60.0) as usize);
        let (l0, e0, w0) = run[0];
        let mut turned = 0.0f32;
        for (step, &(l, e, local)) in run.iter().enumerate() {
            let off = (l - l0).length() / l0.length();
            assert!(off <= l_most, "{w:?}: momentum {off} off at step {step}");
            assert!(
                e <= e0 * 1.001,
                "{w:?}: energy rose to {} at step {step}",
                e / e0
            );
            assert!(
                e >= e0 * e_least,
                "{w:?}: energy fell to {} at step {step}",
                e / e0
            );
            turned = turned.max((local - w0).length() / w0.length());
        }
        // (The body's own angular velocity moves: it precesses.)
        assert!(
            turned > 0.5,
            "{w:?}: its angular velocity moved only {turned}"
        );
    }
    // About its middle axis, a little off, it flips (the tennis racket);
    // about its least and its greatest axis it stays.
    for (axis, flips) in [(2usize, true), (0, false), (1, false)] {
        let mut w = [0.01f32; 3];
        w[axis] = 3.0;
        let run = free_spin(w, 600);
        let least = run.iter().map(|r| r.2[axis]).fold(f32::INFINITY, f32::min);
        if flips {
            assert!(least < -2.9, "about axis {axis}: never flipped ({least})");
        } else {
            assert!(least > 2.99, "about axis {axis}: wandered to {least}");
        }
    }
}

/// A body whose moments of inertia pass about 7·10¹² kg·m² (their product
/// past single precision) turns as its inertia says: its inverse inertia
/// came out zero (a cube of 100 m half extents at the default density,
/// 5.3·10¹³ kg·m², never turned) or NaN (a cube of 10⁴ m, refused as "the
/// body's inertia is singular", though inside the sizes a shape may have).
/// One too light for its shape (a hull of 0.1 mm edges, 10⁻⁹ kg) is
/// refused, told the least mass its shape takes: that mass is a body, 10%
/// less is not.
#[test]
fn heavy_bodies_turn_as_their_inertia_says_and_too_light_ones_are_told_why() {
    for h in [1.0f32, 100.0, 1.0e4] {
        let mut w = World::default();
        let id = w
            .add_body(&BodySpec::new(ShapeSpec::Box {
                half_extents: [h; 3],
            }))
            .unwrap();
        // A cube's moment: m (2h)² / 6.
        let b = w.body(id).unwrap();
        let moment = b.mass as f64 * (2.0 * h as f64).powi(2) / 6.0;
        assert!((b.inertia_local.y_axis.y as f64 / moment - 1.0).abs() < 1e-5);
        // 1 rad/s, or as near as an angular impulse of at most 10⁹ N·m·s
        // takes it.
        let turn = moment.min(1.0e9);
        w.apply_impulse(id, Vec3::ZERO, None, Some(Vec3::new(0.0, turn as f32, 0.0)))
            .unwrap();
        for step in 0..3 {
            let spin = w.body(id).unwrap().angular_velocity;
            let want = turn / moment;
            assert!(
                (spin.y as f64 / want - 1.0).abs() < 1e-2 && spin.x == 0.0 && spin.z == 0.0,
                "h {h}, step {step}: {spin} against {want}"
            );
            w.step();
        }
        assert!(w.body(id).unwrap().pose.position.is_finite());
    }
    let e = 1.0e-4;
    let points: Vec<[f32; 3]> = (0..8)
        .map(|k| {
            let bit = |i: u32| if k & (1 << i) != 0 { e } else { 0.0 };
            [bit(0), bit(1), bit(2)]
        })
        .collect();
    let hull = BodySpec::new(ShapeSpec::ConvexHull { points });
    let mut w = World::default();
    let err = w.add_body(&hull).unwrap_err();
    assert!(
        err.starts_with("the body's inertia is out of the engine's range")
            && err.contains("too small for single precision to invert"),
        "{err}"
    );
    let least: f32 = err
        .split("a mass of at least ")
        .nth(1)
        .and_then(|r| r.split_once(" kg"))
        .map(|(m, _)| m.parse().unwrap())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(w.add_body(&hull.clone().mass(least)).is_ok(), "{least}");
    let err = w.add_body(&hull.mass(least / 1.1)).unwrap_err();
    assert!(err.contains("too small"), "{err}");
}

/// A body asleep is woken before the solve when an active body can reach it
/// within the step, not only once they touch: woken a step late, it was
/// solved as immovable when a ball rolled into it (the ball stopped dead,
/// the box never moved), a black-box reviewer's case. Here, without
/// gravity, a sphere falls asleep at rest, then another (elastic, equal
/// mass) strikes it head-on at 4 m/s (and at 10 m/s, 1/10 of the mass):
/// the momentum is the same after the hit, and the struck one takes it as
/// an elastic hit gives it.
#[test]
fn a_sleeping_body_struck_by_an_awake_one_takes_its_momentum() {
    for (m1, v1) in [(1.0f32, 4.0f32), (10.0, 10.0)] {
        let (mut w, a, b) = two_spheres(m1, 1.0, 0.0, 0.0);
        for _ in 0..60 {
            w.step();
        }
        assert!(w.body(a).unwrap().sleeping && w.body(b).unwrap().sleeping);
        w.edit_body(a, None, None, Some(Vec3::new(v1, 0.0, 0.0)), None)
            .unwrap();
        // 3 m apart: the hit within 60 steps.
        for _ in 0..60 {
            w.step();
        }
        let (va, vb) = (
            w.body(a).unwrap().linear_velocity,
            w.body(b).unwrap().linear_velocity,
        );
        let p = m1 * va.x + vb.x;
        assert!(
            (p - m1 * v1).abs() < 1e-3 * m1 * v1,
            "m1 {m1}: momentum {p} after, {} before",
            m1 * v1
        );
        // Elastic: the struck sphere leaves at 2·m1/(m1 + 1)·v1.
        let expected = 2.0 * m1 / (m1 + 1.0) * v1;
        assert!(
            (vb.x - expected).abs() < 0.02 * expected,
            "m1 {m1}: struck sphere at {} m/s, {expected} expected",
            vb.x
        );
    }
}

/// Equal elastic spheres, frictionless, without gravity: one at `v` m/s
/// strikes the other `b` (a fraction of their summed radii) off centre. The
/// struck one leaves along the line of centres at the impact, at asin(b) to
/// the line of flight, at v·√(1 − b²); the striker at v·b. The speculative
/// contact's normal used to be taken a step before the impact (from the
/// centres then): at 8 m/s and b = 0.9 the struck ball left at 56° instead
/// of 64°, at 50 m/s at 34° (a black-box reviewer's cases). Within a degree
/// and 2% of the speed now.
#[test]
fn glancing_hits_leave_along_the_line_of_centres_at_the_impact() {
    for v in [2.0f32, 8.0, 20.0, 50.0] {
        for b in [0.3f32, 0.6, 0.9] {
            // (Restitution needs an approach along the normal over the
            // threshold, 1 m/s.)
            if v * (1.0 - b * b).sqrt() < 1.5 {
                continue;
            }
            let mut w = World::new(arbiter::physics::WorldSettings {
                gravity: Vec3::ZERO,
                ..Default::default()
            });
            let ball = |p: [f32; 3], vel: [f32; 3]| {
                BodySpec::new(ShapeSpec::Sphere { radius: 0.5 })
                    .position(p)
                    .linear_velocity(vel)
                    .mass(1.0)
                    .restitution(1.0)
                    .friction(0.0)
            };
            let striker = w.add_body(&ball([-3.0, 0.0, 0.0], [v, 0.0, 0.0])).unwrap();
            let struck = w.add_body(&ball([0.0, b, 0.0], [0.0, 0.0, 0.0])).unwrap();
            for _ in 0..(60.0 * 6.0 / v) as usize + 30 {
                w.step();
            }
            let (v1, v2) = (
                w.body(striker).unwrap().linear_velocity,
                w.body(struck).unwrap().linear_velocity,
            );
            let angle = v2.y.atan2(v2.x).to_degrees();
            let exact = b.asin().to_degrees();
            assert!(
                (angle - exact).abs() < 1.0,
                "v {v}, b {b}: struck ball leaves at {angle}°, {exact}° exact"
            );
            let (s2, s1) = (v * (1.0 - b * b).sqrt(), v * b);
            assert!(
                (v2.length() - s2).abs() < 0.02 * v && (v1.length() - s1).abs() < 0.02 * v,
                "v {v}, b {b}: speeds {} and {}, {s1} and {s2} exact",
                v1.length(),
                v2.length()
            );
        }
    }
}

/// Spheres that pass each other 5 cm apart, fast: no contact begins, and
/// neither velocity changes; a sleeping sphere flown past stays asleep.
/// (The aimed speculative manifold, taken past a near miss's closest
/// approach and moved back along a normal that opened, read as an overlap
/// of pairs that never touch: a review's model of it.)
#[test]
fn spheres_passing_close_neither_touch_nor_wake() {
    for (r, v) in [(0.1f32, 10.0f32), (0.1, 20.0), (0.5, 40.0)] {
        for sleeping in [false, true] {
            let mut w = World::new(arbiter::physics::WorldSettings {
                gravity: Vec3::ZERO,
                ..Default::default()
            });
            let ball = |p: [f32; 3]| BodySpec::new(ShapeSpec::Sphere { radius: r }).position(p);
            let still = w.add_body(&ball([0.0, 2.0 * r + 0.05, 0.0])).unwrap();
            if sleeping {
                for _ in 0..40 {
                    w.step();
                }
                assert!(w.body(still).unwrap().sleeping);
            }
            // Far enough back to pass at every phase of a step.
            let start = -(v / 60.0) * 20.0 - 1.0;
            let fast = w
                .add_body(&ball([start, 0.0, 0.0]).linear_velocity([v, 0.0, 0.0]))
                .unwrap();
            for step in 0..40 {
                w.step();
                assert!(
                    w.contact_events().is_empty(),
                    "r {r}, v {v}, step {step}: {:?}",
                    w.contact_events()
                );
            }
            let (f, s) = (w.body(fast).unwrap(), w.body(still).unwrap());
            assert!(f.pose.position.x > 1.0, "r {r}, v {v}: not past");
            assert!(
                (f.linear_velocity - Vec3::new(v, 0.0, 0.0)).length() < 1e-4
                    && s.linear_velocity.length() < 1e-4,
                "r {r}, v {v}: {:?} and {:?}",
                f.linear_velocity,
                s.linear_velocity
            );
            if sleeping {
                assert!(s.sleeping, "r {r}, v {v}: woken");
            }
        }
    }
}
