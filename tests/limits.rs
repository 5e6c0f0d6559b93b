//! Cables and bodies spawned into each other: the overlapping pairs a
//! world's cables may have (`cable::MAX_OVERLAPS`) and its bodies
//! (`MAX_BODY_OVERLAPS`) are bounded, so that nothing spawned can make a
//! step handle a number of pairs quadratic in it.

mod common;
#[path = "common/http.rs"]
mod http_client;

use arbiter::physics::cable::{CableSpec, MAX_OVERLAPS};
use arbiter::physics::{
    BodyKind, BodySpec, Scene, ShapeSpec, Vec3, World, MAX_BODY_OVERLAPS, MAX_STEP_BODY_PAIRS,
};
use http_client::{json_req, new_world, pause, start};
use serde_json::{json, Value};

/// Cables that would overlap in billions of pairs (100,000 segments wound
/// into a millimetre, or 1 m long with a 10 m radius) are refused with a
/// one-line error, at once; before, the first made the process run out of
/// memory in its first step. A world that refused one steps on, and a
/// cable of the same size laid out straight is accepted.
#[test]
fn cables_that_would_overlap_in_billions_of_pairs_are_refused() {
    let mut w = common::on_floor(10.0);
    let mut fine = CableSpec::new([-1.0, 1.0, 0.0], [1.0, 1.0, 0.0], 20);
    fine.radius = 0.01;
    let id = w.add_cable(&fine).unwrap();
    let wound = CableSpec::new([0.0, 2.0, 0.0], [0.0, 2.0, 1.0e-3], 100_000);
    let mut thick = CableSpec::new([0.0, 2.0, 0.0], [1.0, 2.0, 0.0], 100_000);
    thick.radius = 10.0;
    for spec in [wound, thick] {
        let err = w.add_cable(&spec).unwrap_err();
        assert!(
            err.starts_with("limit: ") && err.contains(&MAX_OVERLAPS.to_string()),
            "{err}"
        );
        assert!(!err.contains('\n'), "one line: {err}");
    }
    assert_eq!(w.cables().len(), 1, "nothing of the refused cables stays");
    for _ in 0..30 {
        w.step();
    }
    assert!(w.cable(id).unwrap().x.iter().all(|p| p.is_finite()));
    // 100,000 segments of 1 cm laid out straight overlap only their
    // neighbours': accepted.
    let long = CableSpec::new([-500.0, 3.0, 5.0], [500.0, 3.0, 5.0], 100_000);
    w.add_cable(&long).unwrap();
}

/// Cables of 100 segments 0.1 mm long spawned one on another at the same
/// place (every segment's box overlaps every other's): each brings its
/// pairs with every one before it, and the world refuses them once the
/// pairs would pass the limit, counting those of the cables added since
/// the last step. Cables spawned apart are not refused.
#[test]
fn cables_spawned_one_on_another_are_refused_past_the_limit() {
    let mut w = World::default();
    let spec = CableSpec::new([0.0, 1.0, 0.0], [0.01, 1.0, 0.0], 100);
    let mut accepted = 0u64;
    let err = loop {
        match w.add_cable(&spec) {
            Ok(_) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted < 1000, "never refused");
    };
    assert!(err.starts_with("limit: "), "{err}");
    // The pairs of k such cables: each one's own (but neighbours), and
    // 100 · 100 with each other one.
    let pairs = |k: u64| k * (100 * 99 / 2 - 99) + 10_000 * k * (k - 1) / 2;
    assert!(
        pairs(accepted) <= MAX_OVERLAPS && pairs(accepted + 1) > MAX_OVERLAPS,
        "{accepted} accepted, {} pairs, {} with one more",
        pairs(accepted),
        pairs(accepted + 1)
    );
    // Apart, at 1 m from each other, none is refused.
    let mut apart = World::default();
    for k in 0..200 {
        let y = 1.0 + k as f32;
        apart
            .add_cable(&CableSpec::new([0.0, y, 0.0], [0.5, y, 0.0], 100))
            .unwrap();
    }
}

/// Cables spawned moving are counted where a step takes them: 10,000
/// segments of 1 cm thrown along themselves at 10 km/s (each segment's
/// box over a step is 167 m long), or aimed at their middle, are refused
/// (the first made a step list 27.8 million pairs in 3.3 GB; at 100,000
/// segments it ran out of memory); the same cable at 10 m/s is accepted.
#[test]
fn fast_cables_are_counted_where_the_step_takes_them() {
    let mut w = World::default();
    let mut thrown = CableSpec::new([0.0, 1.0, 0.0], [100.0, 1.0, 0.0], 10_000);
    thrown.linear_velocity = [1.0e4, 0.0, 0.0];
    let err = w.add_cable(&thrown).unwrap_err();
    assert!(err.starts_with("limit: "), "{err}");
    let mut converging = CableSpec::new([0.0, 1.0, 0.0], [10.0, 1.0, 0.0], 10_000);
    converging.velocities = Some(
        (0..=10_000)
            .map(|i| [(5.0 - i as f32 * 1.0e-3) * 60.0, 0.0, 0.0])
            .collect(),
    );
    let err = w.add_cable(&converging).unwrap_err();
    assert!(err.starts_with("limit: "), "{err}");
    thrown.linear_velocity = [10.0, 0.0, 0.0];
    w.add_cable(&thrown).unwrap();
    // At 4 km/s it fits a 1,000 Hz world, which may not then slow to 60.
    let mut quick = World::default();
    quick.set_tick_hz(1000.0).unwrap();
    thrown.linear_velocity = [4.0e3, 0.0, 0.0];
    quick.add_cable(&thrown).unwrap();
    assert!(quick.set_tick_hz(60.0).unwrap_err().starts_with("limit: "));
}

/// A stronger gravity lengthens the cables' sweeps over a step: 20
/// hanging cables of 1,000 segments of 1 mm, 5 cm apart, fit at 9.81
/// m/s², but gravity of 1,000 m/s² (the most a PATCH allows) would put
/// them past the limit and is refused, changing nothing; 20 m/s² is not.
#[test]
fn a_stronger_gravity_is_refused_past_the_limit() {
    let mut w = World::default();
    for k in 0..20 {
        let x = k as f32 * 0.05;
        let mut c = CableSpec::new([x, 2.0, 0.0], [x, 1.0, 0.0], 1000);
        c.pinned = vec![0];
        w.add_cable(&c).unwrap();
    }
    let strong = arbiter::physics::Vec3::new(0.0, -1000.0, 0.0);
    assert!(w.set_gravity(strong).unwrap_err().starts_with("limit: "));
    assert_eq!(w.settings.gravity.y, -9.81);
    w.set_gravity(arbiter::physics::Vec3::new(0.0, -20.0, 0.0))
        .unwrap();
}

fn sphere_at(p: [f32; 3]) -> BodySpec {
    BodySpec::new(ShapeSpec::Sphere { radius: 0.5 }).position(p)
}

/// Spheres spawned at one point: 1,000 make 499,500 overlapping pairs, and
/// the next is refused (3,000 took 17.5 s and 3.4 GB for their first step;
/// 20,000, a world's most, would exhaust the memory). A batch is all or
/// none, and the bodies added after it keep their order. Static bodies
/// count too (the broad phase lists their pairs: 8,000 at one point took
/// 2.3 GB), and so do planes, each with every other body.
#[test]
fn bodies_spawned_at_one_point_are_refused_past_the_limit() {
    let mut w = World::default();
    // A refused batch first: nothing of it stays, and what comes next is
    // listed in order.
    let at = sphere_at([0.0, 1.0, 0.0]);
    let err = w.add_bodies(&vec![at.clone(); 1001]).unwrap_err();
    assert!(err.starts_with("limit: ") && !err.contains('\n'), "{err}");
    assert_eq!(w.body_count(), 0);
    let ids = w.add_bodies(&vec![at.clone(); 1000]).unwrap();
    const { assert!(1000 * 999 / 2 <= MAX_BODY_OVERLAPS && 1001 * 1000 / 2 > MAX_BODY_OVERLAPS) };
    let listed: Vec<u64> = w.bodies().map(|b| b.id).collect();
    assert_eq!(listed, ids, "in order");
    assert!(w.add_body(&at).unwrap_err().starts_with("limit: "));
    let far = sphere_at([100.0, 1.0, 0.0]);
    assert!(w.add_bodies(&[far.clone(), at.clone()]).is_err());
    assert_eq!(w.body_count(), 1000);
    assert_eq!(w.add_body(&far).unwrap(), ids[999] + 1, "ids stay dense");

    let wall = BodySpec::new(ShapeSpec::Box {
        half_extents: [1.0, 1.0, 1.0],
    })
    .kind(BodyKind::Static);
    let mut statics = World::default();
    statics.add_bodies(&vec![wall.clone(); 1000]).unwrap();
    statics.step();
    assert!(statics.add_body(&wall).unwrap_err().starts_with("limit: "));

    let plane = BodySpec::new(ShapeSpec::Plane {
        normal: [0.0, 1.0, 0.0],
        offset: 0.0,
    })
    .kind(BodyKind::Static);
    let mut planes = World::default();
    let apart: Vec<BodySpec> = (0..1000)
        .map(|k| sphere_at([k as f32 * 2.0, 0.5, 0.0]))
        .collect();
    planes.add_bodies(&apart).unwrap();
    planes.add_bodies(&vec![plane; 500]).unwrap();
    let err = planes.add_bodies(&apart[..1]).unwrap_err();
    assert!(err.starts_with("limit: "), "{err}");
}

/// Gravity's fall over a step counts in a body's sweep: a column of 1,100
/// spheres (20 cm, 1 m apart) in a world stepped at 1 Hz without gravity
/// may not take a gravity of 1,000 m/s² (each would fall 1 km in a step,
/// through the whole column: 604,000 pairs, and steps of 0.4–0.7 s), and
/// is not disturbed by the refusal; the same column is refused past the
/// limit when spawned into a world with that gravity already; 20 m/s²
/// (a fall of 20 m a step) is taken. Static bodies do not fall.
#[test]
fn gravity_that_sweeps_bodies_into_each_other_is_refused() {
    let column: Vec<BodySpec> = (0..1100)
        .map(|k| BodySpec::new(ShapeSpec::Sphere { radius: 0.1 }).position([0.0, k as f32, 0.0]))
        .collect();
    let slow = |g: f32| {
        let mut w = World::default();
        w.set_tick_hz(1.0).unwrap();
        w.set_gravity(arbiter::physics::Vec3::new(0.0, g, 0.0))
            .unwrap();
        w
    };
    let mut w = slow(0.0);
    w.add_bodies(&column[..550]).unwrap();
    w.add_bodies(&column[550..]).unwrap();
    let strong = arbiter::physics::Vec3::new(0.0, -1000.0, 0.0);
    let err = w.set_gravity(strong).unwrap_err();
    assert!(err.starts_with("limit: ") && !err.contains('\n'), "{err}");
    assert_eq!(w.settings.gravity.y, 0.0);
    assert_eq!(w.body_count(), 1100);
    w.set_gravity(arbiter::physics::Vec3::new(0.0, -20.0, 0.0))
        .unwrap();

    let mut falling = slow(-1000.0);
    let err = match falling.add_bodies(&column[..550]) {
        Ok(_) => falling.add_bodies(&column[550..]).unwrap_err(),
        Err(e) => e,
    };
    assert!(err.starts_with("limit: "), "{err}");

    let mut statics = slow(-1000.0);
    let walls: Vec<BodySpec> = column
        .iter()
        .map(|b| b.clone().kind(BodyKind::Static))
        .collect();
    statics.add_bodies(&walls[..550]).unwrap();
    statics.add_bodies(&walls[550..]).unwrap();
}

/// Bodies spawned apart but fast are counted where the next step takes
/// them: 2,000 spheres of 5 cm, 12 cm apart in a row, thrown along it at
/// 10 km/s (the step's swept boxes made 1.8 million contacts, 2.4 s and
/// 1.25 GB) are refused; at 1 m/s they are accepted. An edit that gives
/// one body such a speed counts likewise.
#[test]
fn fast_bodies_are_counted_where_the_step_takes_them() {
    let row = |speed: f32| -> Vec<BodySpec> {
        (0..2000)
            .map(|k| {
                BodySpec::new(ShapeSpec::Sphere { radius: 0.05 })
                    .position([k as f32 * 0.12, 1.0, 0.0])
                    .linear_velocity([speed, 0.0, 0.0])
            })
            .collect()
    };
    let mut w = World::default();
    assert!(w
        .add_bodies(&row(1.0e4))
        .unwrap_err()
        .starts_with("limit: "));
    let ids = w.add_bodies(&row(1.0)).unwrap();
    let fast = arbiter::physics::Vec3::new(1.0e4, 0.0, 0.0);
    // One body swept through 1,400 others at a time: about 350 edits in.
    let refused = ids
        .iter()
        .position(|&id| w.edit_body(id, None, None, Some(fast), None).is_err());
    assert!(refused.is_some(), "some edit refused");
    // At 1,000 Hz the fast row fits; slowing the world to 60 Hz afterwards
    // is refused (a step then made 1.8 million contacts in 2.85 s), and
    // the world keeps its rate.
    let mut quick = World::default();
    quick.set_tick_hz(1000.0).unwrap();
    quick.add_bodies(&row(1.0e4)).unwrap();
    let err = quick.set_tick_hz(60.0).unwrap_err();
    assert!(err.starts_with("limit: "), "{err}");
    assert_eq!(quick.tick_hz, 1000.0);
    quick.set_tick_hz(500.0).unwrap();
}

/// Spheres spawned apart and then moved to one point, one edit at a time:
/// the edit that would pass the limit is refused and leaves the body where
/// it was; before and after a step.
#[test]
fn bodies_moved_into_each_other_are_refused_past_the_limit() {
    let mut w = World::default();
    let specs: Vec<BodySpec> = (0..1100)
        .map(|k| sphere_at([(k % 40) as f32 * 2.0, 1.0 + (k / 40) as f32 * 2.0, 0.0]))
        .collect();
    let ids = w.add_bodies(&specs).unwrap();
    let to = arbiter::physics::Vec3::new(0.0, -50.0, 0.0);
    let mut moved = 0;
    let err = loop {
        match w.edit_body(ids[moved], Some(to), None, None, None) {
            Ok(()) => moved += 1,
            Err(e) => break e,
        }
        if moved == 500 {
            w.step();
        }
    };
    assert!(err.starts_with("limit: "), "{err}");
    assert!((999..=1000).contains(&moved), "{moved} moved");
    let b = w.body(ids[moved]).unwrap();
    assert!(
        b.pose.position.y > 0.0,
        "the refused edit left it: {:?}",
        b.pose.position
    );
}

/// A scene of 1,001 spheres at one point does not load: one line, naming
/// the bodies.
#[test]
fn a_scene_of_bodies_at_one_point_is_refused() {
    let scene = Scene {
        world: Default::default(),
        bodies: vec![sphere_at([0.0, 1.0, 0.0]); 1001],
        cables: Vec::new(),
    };
    let err = World::from_scene(&scene).err().expect("refused");
    assert!(err.starts_with("bodies: limit: "), "{err}");
}

/// Over REST, in a paused world: a batch that would pass the limit gets
/// 409 `limit_reached` with the error shape, and none of it stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_past_the_limit_gets_409_and_leaves_nothing() {
    let srv = start().await;
    let id = new_world(
        srv.addr,
        json!({"scene": {"world": {"name": "t", "tick_hz": 60}}}),
    )
    .await;
    assert_eq!(pause(srv.addr, &id).await.0, 200);
    let bodies = format!("/v1/worlds/{id}/bodies");
    let sphere = json!({"shape": {"type": "sphere", "radius": 0.5}, "position": [0, 1, 0]});
    let batch = |n: usize| Some(json!({"bodies": Value::Array(vec![sphere.clone(); n])}));
    let (st, v) = json_req(srv.addr, "POST", &bodies, batch(1000)).await;
    assert_eq!(st, 201, "{v}");
    let (st, v) = json_req(srv.addr, "POST", &bodies, batch(2)).await;
    assert_eq!(st, 409, "{v}");
    assert_eq!(v["error"]["code"], "limit_reached", "{v}");
    let (_, w) = json_req(srv.addr, "GET", &format!("/v1/worlds/{id}"), None).await;
    assert_eq!(w["body_count"], 1000, "{w}");
}

/// 2,100 spheres of 25 cm spawned on a sphere of 30 m, apart (accepted),
/// thrown at its centre at 600 m/s: 10 m a step, so that the third step's
/// swept boxes all hold the centre, 2,203,950 pairs, past the
/// 1,000,000 a step may handle (before, the pairs of bodies meeting so
/// grew the step's memory without bound: 20,000 would have taken the
/// server down). That step is not taken (the tick stays, nothing moves)
/// and the world reports a one-line fault, each step again while it
/// lasts; with most of the spheres removed, the world steps on.
#[test]
fn bodies_that_meet_at_speed_stop_the_step_with_a_fault() {
    let mut w = World::default();
    w.settings.gravity = Vec3::ZERO;
    let ids = w.add_bodies(&common::converging_spheres(2100)).unwrap();
    const { assert!(2100 * 2099 / 2 > MAX_STEP_BODY_PAIRS) };
    let positions = |w: &World| -> Vec<Vec3> { w.bodies().map(|b| b.pose.position).collect() };
    for _ in 0..2 {
        w.step();
        assert_eq!(w.fault(), None);
    }
    assert_eq!(w.tick(), 2);
    let before = positions(&w);
    let r = before[0].length();
    assert!((r - 10.0).abs() < 0.5, "10 m from the centre: {r}");
    for _ in 0..2 {
        w.step();
        let fault = w.fault().expect("a fault");
        assert!(
            fault.starts_with("limit: ") && !fault.contains('\n'),
            "{fault}"
        );
        assert!(fault.contains(&MAX_STEP_BODY_PAIRS.to_string()), "{fault}");
        assert_eq!(w.tick(), 2, "the step was not taken");
        assert_eq!(positions(&w), before, "nothing moved");
        assert!(w.moved_bodies().is_empty() && w.contact_events().is_empty());
    }
    // 200 left: 19,900 pairs at most. The step is taken.
    for &id in &ids[200..] {
        assert!(w.remove_body(id));
    }
    w.step();
    assert_eq!(w.fault(), None);
    assert_eq!(w.tick(), 3);
    assert!(w.bodies().all(|b| b.pose.position.is_finite()));
    let moved = w
        .bodies()
        .zip(&before)
        .filter(|(b, p)| b.pose.position != **p);
    assert_eq!(moved.count(), 200);
}

/// Over the server: the same spheres in a paused world. `POST /step` stops
/// at the step that would pass the limit, with 409 `limit_reached` and the
/// fault; the world shows it (`fault`, still paused, the tick where it
/// stopped). Resumed, the world tries the step again, pauses itself again,
/// and its JSON subscribers get an `error` message with the fault. At a
/// faster rate (shorter sweeps) a manual step goes through and clears the
/// fault. Another world ticks on throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_past_the_limit_pauses_the_world_and_tells_its_subscribers() {
    let srv = start().await;
    let scene = json!({"scene": {"world": {"name": "t", "tick_hz": 60, "gravity": [0, 0, 0]}}});
    let id = new_world(srv.addr, scene.clone()).await;
    let other = new_world(srv.addr, scene).await;
    assert_eq!(pause(srv.addr, &id).await.0, 200);
    let bodies = format!("/v1/worlds/{id}/bodies");
    let specs = serde_json::to_value(common::converging_spheres(2100)).unwrap();
    for part in specs.as_array().unwrap().chunks(700) {
        let batch = json!({ "bodies": part });
        let (st, v) = json_req(srv.addr, "POST", &bodies, Some(batch)).await;
        assert_eq!(st, 201, "{v}");
    }
    let world = format!("/v1/worlds/{id}");
    let (_, w) = json_req(srv.addr, "GET", &world, None).await;
    let tick = w["tick"].as_u64().unwrap() + 2;
    let step = format!("{world}/step");
    let (st, v) = json_req(srv.addr, "POST", &step, Some(json!({"steps": 5}))).await;
    assert_eq!(st, 409, "{v}");
    assert_eq!(v["error"]["code"], "limit_reached", "{v}");
    let (_, w) = json_req(srv.addr, "GET", &world, None).await;
    assert_eq!(
        (w["paused"].clone(), w["tick"].clone()),
        (json!(true), json!(tick)),
        "{w}"
    );
    let fault = w["fault"].as_str().unwrap().to_string();
    assert!(fault.starts_with("limit: "), "{fault}");
    assert_eq!(v["error"]["message"], fault.as_str());

    let url = format!("ws://{}/v1/worlds/{id}/stream", srv.addr);
    let mut ws = tokio_tungstenite::connect_async(url).await.unwrap().0;
    assert_eq!(next(&mut ws).await["type"], "hello");
    let (st, v) = json_req(srv.addr, "PATCH", &world, Some(json!({"paused": false}))).await;
    assert_eq!(st, 200, "{v}");
    assert!(v.get("fault").is_none(), "cleared on resume: {v}");
    let m = next(&mut ws).await;
    assert_eq!(
        (m["type"].clone(), m["code"].clone()),
        (json!("error"), json!("limit_reached")),
        "{m}"
    );
    assert!(m["message"].as_str().unwrap().starts_with("limit: "), "{m}");
    let (_, w) = json_req(srv.addr, "GET", &world, None).await;
    assert_eq!(
        (w["paused"].clone(), w["tick"].clone()),
        (json!(true), json!(tick)),
        "{w}"
    );
    assert!(w["fault"].is_string(), "{w}");
    let (st, v) = json_req(srv.addr, "PATCH", &world, Some(json!({"tick_hz": 1000}))).await;
    assert_eq!(st, 200, "{v}");
    let (st, v) = json_req(srv.addr, "POST", &step, Some(json!({"steps": 1}))).await;
    assert_eq!((st, v["tick"].as_u64()), (200, Some(tick + 1)), "{v}");
    let (_, w) = json_req(srv.addr, "GET", &world, None).await;
    assert!(w.get("fault").is_none(), "{w}");
    let (_, o) = json_req(srv.addr, "GET", &format!("/v1/worlds/{other}"), None).await;
    assert!(
        o["tick"].as_u64().unwrap() > 0 && o["fault"].is_null(),
        "{o}"
    );
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text message of a JSON stream.
async fn next(ws: &mut Ws) -> Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    let msg = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next())
        .await
        .expect("a message within 10 s");
    match msg {
        Some(Ok(Message::Text(t))) => serde_json::from_str(t.as_str()).unwrap(),
        other => panic!("not a text message: {other:?}"),
    }
}

/// A cable through 1,000 static spheres of 5 m spawned at one place (the
/// most the bodies' limit lets in): each of its 5,000 segments touches
/// every sphere, 5 million contacts, past the 2,000,000 a step may list.
/// The cable stage stops with a fault and keeps nothing (the cable stands
/// as it was); the tick advances. The same cable beside the spheres steps.
#[test]
fn a_cable_through_many_bodies_at_one_place_stops_the_cable_stage() {
    use arbiter::physics::cable::MAX_STEP_BODY_CONTACTS;
    let mut w = World::default();
    w.settings.gravity = Vec3::ZERO;
    let ball = BodySpec::new(ShapeSpec::Sphere { radius: 5.0 }).kind(BodyKind::Static);
    w.add_bodies(&vec![ball; 1000]).unwrap();
    let mut through = CableSpec::new([-4.0, 0.0, 0.0], [4.0, 0.0, 0.0], 5000);
    through.radius = 0.01;
    through.linear_velocity = [0.0, 1.0, 0.0];
    let id = w.add_cable(&through).unwrap();
    const { assert!(5000 * 1000 > MAX_STEP_BODY_CONTACTS) };
    let before = w.cable(id).unwrap().clone();
    w.step();
    let fault = w.fault().expect("a fault");
    assert!(
        fault.starts_with("limit: ") && fault.contains("touch bodies"),
        "{fault}"
    );
    assert_eq!(w.tick(), 1);
    let after = w.cable(id).unwrap();
    assert_eq!(
        (&after.x, &after.v),
        (&before.x, &before.v),
        "the cable stands"
    );
    // Beside them (2 m clear), it moves.
    assert!(w.remove_cable(id));
    let mut beside = through.clone();
    (beside.from, beside.to) = ([-4.0, 7.0, 0.0], [4.0, 7.0, 0.0]);
    let id = w.add_cable(&beside).unwrap();
    w.step();
    assert_eq!(w.fault(), None);
    assert!(w.cable(id).unwrap().x[2500].y > 7.0);
}
