//! Cables' own sleep (`world/cable_sleep.rs`): cables at rest fall asleep
//! and hold still, a world of sleeping cables skips the stage, and
//! whatever may reach a sleeping cable (a fast cable or a body moving at
//! it, the removal or moving of what holds it up) wakes it first.

mod common;

use arbiter::physics::{Vec3, World};
use common::{box_spec, lay_cable, lcg, on_floor, random_pile, sleep_steps};

/// Strikes the 2 kg slab `slab` (5 cm thick) down with 3 N·s (1.5 m/s)
/// and steps 1 s: the lowest its underside got (the bottom of its middle,
/// tilt allowed for).
fn strike_slab(w: &mut World, slab: u64) -> f32 {
    w.apply_impulse(slab, Vec3::new(0.0, -3.0, 0.0), None, None)
        .unwrap();
    let mut struck = f32::MAX;
    for _ in 0..60 {
        w.step();
        let b = w.body(slab).unwrap();
        let up = b.pose.rotation * Vec3::Y;
        struck = struck.min(b.pose.position.y - 0.025 * up.y.abs());
    }
    struck
}

/// [`sleep_steps`] over every cable (its particles: none moves or has a
/// velocity while it sleeps; every position stays finite).
fn cable_sleep_steps(w: &mut World, steps: usize, what: &str) -> Vec<(Option<usize>, usize)> {
    let n = w.cables().len();
    sleep_steps(w, n, steps, what, |w, k| {
        let c = &w.cables()[k];
        assert!(c.x.iter().all(|p| p.is_finite()), "{what}: NaN");
        (
            c.sleeping,
            c.v.iter().all(|v| *v == Vec3::ZERO),
            c.x.clone(),
        )
    })
}

/// Random piles of 2–12 crossing cables (40 segments, 2 m) dropped on the
/// floor, 12 seeds: every cable falls asleep within 10 s (the world's
/// 0.5 s of rest, judged by its particles' root mean square speed, none
/// faster than twice the sleep speed), none moves while asleep, none
/// wakes after 10 s, and at 11 s the pile sleeps whole and the cable
/// stage does nothing (no pairs, no contacts). Measured (printed): every
/// cable of every pile first sleeps by 1.9 s, the last wake at 1.3 s
/// (with friction between segments inside the passes: by 2.1 s in 11
/// piles, and one cable crept until 8.7 s). Before cables slept at all, a
/// pile's cables crept at a few mm/s and were solved every step.
#[test]
fn piles_of_cables_fall_asleep_and_hold_still() {
    let mut seed = 77u64;
    for case in 0..12 {
        let (mut w, _) = random_pile(&mut seed, 0.0);
        let what = format!("pile {case}");
        let steps = cable_sleep_steps(&mut w, 660, &what);
        let latest = steps.iter().filter_map(|s| s.0).max().unwrap_or(0);
        let last_wake = steps.iter().map(|s| s.1).max().unwrap_or(0);
        println!(
            "{what}: every cable first asleep by {:.2} s, last wake {:.2} s",
            latest as f32 / 60.0,
            last_wake as f32 / 60.0
        );
        for (k, &(first, last_wake)) in steps.iter().enumerate() {
            let first = first.unwrap_or_else(|| panic!("{what}: cable {k} never slept"));
            assert!(first < 600, "{what}: cable {k} first slept at step {first}");
            assert!(
                last_wake < 600,
                "{what}: cable {k} woke at step {last_wake}"
            );
        }
        assert!(w.cables().iter().all(|c| c.sleeping), "{what}");
        // The stage did not run (its clocks were never started).
        let s = w.cable_stats;
        assert_eq!((s.pairs, s.contacts, s.body_contacts), (0, 0, 0), "{what}");
        assert_eq!(
            (s.ms_pairs, s.ms_solve, s.ms_bodies),
            (0.0, 0.0, 0.0),
            "{what}"
        );
        assert_eq!(s.asleep, w.cables().len() as u64, "{what}");
    }
}

/// The distance between the centre lines of segments `a` and `b` (one
/// sampled in 1 mm steps or finer: enough for the touching test below).
fn segment_distance(a: [Vec3; 2], b: [Vec3; 2]) -> f32 {
    let n = 200;
    let d = b[1] - b[0];
    let mut best = f32::MAX;
    for i in 0..=n {
        let p = a[0].lerp(a[1], i as f32 / n as f32);
        let t = ((p - b[0]).dot(d) / d.length_squared().max(1e-12)).clamp(0.0, 1.0);
        best = best.min((p - (b[0] + d * t)).length());
    }
    best
}

/// Four random piles (another seed), asleep, with a cable dropped across
/// each from 1 m (it
/// lands at 4.4 m/s) and the stage's brute-force audit on from the drop:
/// the cables it lands on wake before it reaches them (a sleeping cable is
/// held like a pin, and one met asleep would stop the falling one dead):
/// no segment of it with a particle faster than four times the sleep
/// speed as a step begins ends that step touching (within 1 mm) a cable
/// asleep all through the step. No two centre lines ever touch, no pair
/// the broad phase left out comes within touching distance, and
/// everything sleeps again within 7 s of the drop. With the sweep of fast segments
/// against the sleepers taken out, the touching check fails.
#[test]
fn a_cable_dropped_on_a_sleeping_pile_wakes_it_and_never_crosses_it() {
    let mut seed = 5u64;
    for case in 0..4 {
        let (mut w, top) = random_pile(&mut seed, 0.0);
        let what = format!("pile {case}");
        cable_sleep_steps(&mut w, 540, &what);
        assert!(w.cables().iter().all(|c| c.sleeping), "{what}");
        let pile: Vec<Vec<Vec3>> = w.cables().iter().map(|c| c.x.clone()).collect();
        let angle = std::f32::consts::PI * lcg(&mut seed);
        let (c, s) = (angle.cos(), angle.sin());
        let dropped = lay_cable(&mut w, [-c, top + 1.0, -s], [c, top + 1.0, s]);
        w.settings.cable_audit = true;
        let mut woke = false;
        let fast = 4.0 * w.settings.sleep.speed_threshold;
        for step in 0..120 {
            let asleep_before: Vec<bool> = w.cables().iter().map(|c| c.sleeping).collect();
            let d = w.cable(dropped).unwrap();
            let fast_segs: Vec<usize> = (0..d.segments())
                .filter(|&i| d.v[i].length() > fast || d.v[i + 1].length() > fast)
                .collect();
            w.step();
            let d = w.cable(dropped).unwrap();
            for (k, c) in w.cables().iter().enumerate() {
                if !(c.sleeping && asleep_before[k]) {
                    continue;
                }
                let touch = d.spec.radius.max(1e-3) + c.spec.radius.max(1e-3) + 1.0e-3;
                for &i in &fast_segs {
                    for j in 0..c.segments() {
                        let gap = segment_distance([d.x[i], d.x[i + 1]], [c.x[j], c.x[j + 1]]);
                        assert!(
                            gap > touch,
                            "{what}: step {step}, a fast segment ends touching sleeping cable {k} ({gap} m)"
                        );
                    }
                }
            }
            let st = w.cable_stats;
            assert_eq!(st.audit_crossings, 0, "{what}: crossing at step {step}");
            assert_eq!(st.audit_missed, 0, "{what}: missed pair at step {step}");
            woke |= w.cables().iter().any(|c| c.id != dropped && !c.sleeping);
        }
        assert!(woke, "{what}: the landing woke nothing");
        let moved = w
            .cables()
            .iter()
            .zip(&pile)
            .any(|(c, x)| c.x.iter().zip(x).any(|(a, b)| (*a - *b).length() > 1.0e-3));
        assert!(moved, "{what}: the pile took nothing of the landing");
        w.settings.cable_audit = false;
        cable_sleep_steps(&mut w, 300, &what);
        assert!(
            w.cables().iter().all(|c| c.sleeping),
            "{what}: not all asleep again 7 s after the drop"
        );
    }
}

/// A cable asleep on the floor and a 2 kg slab dropped on it from 0.5 m
/// (30 × 5 × 30 cm, landing at 2.9 m/s): the slab's motion wakes the cable
/// before the slab reaches it, so the slab lands on the cable as on an
/// awake one (its underside dents to 27 mm over the 40 mm thick cable in
/// the impact's step either way, never reaching the cable's centre line)
/// and comes to rest on it (underside within 1 mm of the cable's top)
/// instead of sinking through it; then both sleep (with the cable never
/// asleep, the slab never slept in 8 s). The slab, asleep on the sleeping
/// cable, is then struck down (3 N·s, 1.5 m/s): the support the cable gave
/// it is kept while they sleep, so it stops on the cable (its underside
/// stays within 1 mm of the cable's top; without the kept support it sank
/// to 14 mm over the floor, the cable's centre line 6 mm inside it), even
/// after a cable was added and another body moved elsewhere (which cleared
/// every support); and once it has landed the supports never pile up (16
/// of them; they were taken again every step for the sleeping slab as well
/// as kept: with its cable awake, they grew by a copy a step).
/// Removing the block a second sleeping cable is draped over wakes that
/// cable, and it falls; lifting the slab off (a body edit) wakes the cable
/// it lay on.
#[test]
fn bodies_moving_at_removed_from_or_moved_off_sleeping_cables_wake_them() {
    let mut w = on_floor(3.0);
    let r = 0.02;
    let mut spec = arbiter::physics::cable::CableSpec::new([-1.0, r, 0.0], [1.0, r, 0.0], 40);
    spec.radius = r;
    spec.damping = 0.5;
    let lying = w.add_cable(&spec).unwrap();
    let block = w
        .add_body(
            &box_spec([0.2, 0.2, 0.2], [0.0, 0.2, 1.5], 1.0)
                .kind(arbiter::physics::BodyKind::Static),
        )
        .unwrap();
    let draped = lay_cable(&mut w, [-0.6, 0.45, 1.5], [0.6, 0.45, 1.5]);
    let far = w
        .add_body(&box_spec([0.1, 0.1, 0.1], [-2.5, 0.1, -2.5], 1.0))
        .unwrap();
    cable_sleep_steps(&mut w, 240, "settling");
    assert!(
        w.cables().iter().all(|c| c.sleeping),
        "settled cables sleep"
    );
    let slab = w
        .add_body(&box_spec([0.15, 0.025, 0.15], [0.0, 0.5, 0.0], 2.0))
        .unwrap();
    let (mut dent, mut rest, mut supports) = (f32::MAX, f32::MAX, 0);
    for step in 0..180 {
        w.step();
        if step >= 30 {
            supports = supports.max(w.cable_support_count());
        }
        let b = w.body(slab).unwrap();
        // The slab's underside over the cable (it lies across x = 0).
        let up = b.pose.rotation * Vec3::Y;
        let under = b.pose.position.y - 0.025 * up.y.abs();
        if step < 30 {
            dent = dent.min(under);
        } else {
            rest = rest.min(under);
        }
    }
    let cable = w.cable(lying).unwrap();
    assert!(dent > r, "the slab sank to {dent} m over a {r} m cable");
    assert!(
        rest > 2.0 * r - 1.0e-3,
        "the slab rests at {rest} m over a {r} m cable"
    );
    assert!(
        cable.x.iter().all(|p| p.y > 0.5 * r && p.y < 3.0 * r),
        "the cable stays on the floor under the slab"
    );
    for _ in 0..300 {
        w.step();
        supports = supports.max(w.cable_support_count());
    }
    assert!(
        w.body(slab).unwrap().sleeping,
        "the slab sleeps on the cable"
    );
    assert!(
        (1..=16).contains(&supports),
        "{supports} supports held the slab up"
    );
    // Edits elsewhere (a cable added, another body moved) keep the
    // sleeping slab's support.
    lay_cable(&mut w, [2.0, 0.02, -2.5], [2.8, 0.02, -2.5]);
    w.edit_body(far, Some(Vec3::new(-2.5, 0.1, -2.0)), None, None, None)
        .unwrap();
    w.step();
    assert!(
        w.cable(lying).unwrap().sleeping,
        "the cable sleeps under it"
    );
    let struck = strike_slab(&mut w, slab);
    assert!(
        struck > 2.0 * r - 1.0e-3,
        "struck, the slab sank to {struck} m over a {r} m cable"
    );
    // The block under the draped cable goes: the cable falls to the floor.
    let before = w.cable(draped).unwrap().x.clone();
    assert!(w.remove_body(block));
    for _ in 0..60 {
        w.step();
    }
    let after = &w.cable(draped).unwrap().x;
    let mid = before.len() / 2;
    assert!(
        after[mid].y < before[mid].y - 0.3,
        "the draped cable fell from {} to {}",
        before[mid].y,
        after[mid].y
    );
    // The slab is lifted off: the cable under it, asleep again, wakes (and
    // lies still, unloaded, but solved again).
    for _ in 0..300 {
        if w.cable(lying).unwrap().sleeping {
            break;
        }
        w.step();
    }
    assert!(w.cable(lying).unwrap().sleeping, "the cable sleeps again");
    w.edit_body(slab, Some(Vec3::new(2.0, 0.5, 2.0)), None, None, None)
        .unwrap();
    assert!(
        !w.cable(lying).unwrap().sleeping,
        "moving the slab off wakes it"
    );
}

/// Cables crossing on a block, asleep: removing the lower cable wakes the
/// one resting on it, which falls onto the block (its middle drops by
/// over 15 mm, up to the lower cable's 40 mm thickness); a static box added through a third
/// sleeping cable wakes it. Three level layers of crossing cables asleep
/// on a slab: removing the slab wakes them all, the upper layers (beyond
/// the slab's reach) through the layers under them, and all fall to the
/// floor. Without the chained wake the upper layers stay asleep when the
/// slab goes (they would wake only as the layers under them fall away).
#[test]
fn removing_or_adding_what_holds_sleeping_cables_wakes_them() {
    let mut w = on_floor(3.0);
    let fixed = |spec: arbiter::physics::BodySpec| spec.kind(arbiter::physics::BodyKind::Static);
    w.add_body(&fixed(box_spec([1.5, 0.25, 1.5], [0.0, 0.25, 0.0], 1.0)))
        .unwrap();
    let lower = lay_cable(&mut w, [-1.0, 0.51, 0.0], [1.0, 0.51, 0.0]);
    let upper = lay_cable(&mut w, [0.0, 0.53, -1.0], [0.0, 0.53, 1.0]);
    let aside = lay_cable(&mut w, [-1.0, 0.51, 1.2], [1.0, 0.51, 1.2]);
    cable_sleep_steps(&mut w, 300, "crossed");
    assert!(
        w.cables().iter().all(|c| c.sleeping),
        "crossed cables sleep"
    );
    let mid = |w: &World, id: u64| {
        let c = w.cable(id).unwrap();
        c.x[c.x.len() / 2]
    };
    let upper_before = mid(&w, upper);
    assert!(w.remove_cable(lower));
    assert!(!w.cable(upper).unwrap().sleeping, "the upper cable wakes");
    for _ in 0..60 {
        w.step();
    }
    let drop = upper_before.y - mid(&w, upper).y;
    assert!(drop > 0.015, "the upper cable's middle fell {drop} m");
    assert!(w.cable(aside).unwrap().sleeping, "the one aside sleeps on");
    w.add_body(&fixed(box_spec([0.1, 0.1, 0.1], [0.0, 0.55, 1.2], 1.0)))
        .unwrap();
    assert!(
        !w.cable(aside).unwrap().sleeping,
        "a box added through it wakes it"
    );

    let mut w = on_floor(3.0);
    let slab = w
        .add_body(&fixed(box_spec([0.7, 0.05, 0.7], [0.0, 0.45, 0.0], 1.0)))
        .unwrap();
    let mut layers = Vec::new();
    for layer in 0..3 {
        let y = 0.52 + 0.04 * layer as f32;
        for k in 0..8 {
            let across = -0.35 + 0.1 * k as f32;
            let (from, to) = if layer % 2 == 0 {
                ([-0.5, y, across], [0.5, y, across])
            } else {
                ([across, y, -0.5], [across, y, 0.5])
            };
            layers.push((layer, lay_cable(&mut w, from, to)));
        }
    }
    cable_sleep_steps(&mut w, 300, "layers");
    assert!(w.cables().iter().all(|c| c.sleeping), "the layers sleep");
    let before: Vec<f32> = layers.iter().map(|&(_, id)| mid(&w, id).y).collect();
    assert!(w.remove_body(slab));
    assert!(w.cables().iter().all(|c| !c.sleeping), "every layer wakes");
    for _ in 0..60 {
        w.step();
    }
    for (&(layer, id), y) in layers.iter().zip(before) {
        let drop = y - mid(&w, id).y;
        assert!(drop > 0.3, "a cable of layer {layer} fell {drop} m");
    }
}

/// Planes reach sleeping cables only where they are: cables asleep on a
/// floor stay asleep when a plane is added, moved or removed a metre below
/// them or with its solid side a metre and more above them (a plane's box
/// is unbounded: each of these woke every sleeping cable), and wake when
/// one is added or removed along the floor they rest on, is added with one
/// of them inside it (only that one), or is moved by an edit to where they
/// lie or away from under them; a plane's margin (its rounding) counts.
#[test]
fn planes_wake_only_the_sleeping_cables_they_reach() {
    let mut w = on_floor(3.0);
    let ids: Vec<u64> = (0..4)
        .map(|k| {
            let z = -0.6 + 0.4 * k as f32;
            lay_cable(&mut w, [-1.0, 0.011, z], [1.0, 0.011, z])
        })
        .collect();
    cable_sleep_steps(&mut w, 300, "on the floor");
    let asleep = |w: &World| ids.iter().all(|&id| w.cable(id).unwrap().sleeping);
    assert!(asleep(&w), "the cables sleep");
    let plane = |normal: [f32; 3], offset: f32| {
        arbiter::physics::BodySpec::new(arbiter::physics::ShapeSpec::Plane { normal, offset })
            .kind(arbiter::physics::BodyKind::Static)
    };
    // Below (solid under y = -1), and above (solid over y = 1).
    let below = w.add_body(&plane([0.0, 1.0, 0.0], -1.0)).unwrap();
    let above = w.add_body(&plane([0.0, -1.0, 0.0], -1.0)).unwrap();
    assert!(asleep(&w), "planes a metre away wake nothing");
    w.edit_body(below, Some(Vec3::new(0.0, -0.5, 0.0)), None, None, None)
        .unwrap();
    w.edit_body(above, Some(Vec3::new(2.0, 0.5, 0.0)), None, None, None)
        .unwrap();
    assert!(asleep(&w), "planes moved but still away wake nothing");
    assert!(w.remove_body(below) && w.remove_body(above));
    assert!(asleep(&w), "planes removed from afar wake nothing");
    for _ in 0..30 {
        w.step();
    }
    assert!(asleep(&w), "and the cables sleep on");
    // Along the floor's top: within reach of every cable.
    let floor = w.add_body(&plane([0.0, 1.0, 0.0], 0.0)).unwrap();
    assert!(
        ids.iter().all(|&id| !w.cable(id).unwrap().sleeping),
        "a plane along the floor they lie on wakes them"
    );
    cable_sleep_steps(&mut w, 300, "on the floor and the plane");
    assert!(asleep(&w), "they sleep again");
    assert!(w.remove_body(floor));
    assert!(
        ids.iter().all(|&id| !w.cable(id).unwrap().sleeping),
        "removing the plane they lie on wakes them"
    );
    cable_sleep_steps(&mut w, 300, "on the floor again");
    assert!(asleep(&w), "they sleep again");
    // Upright, its solid side beyond z = -0.3: only the cable at z = -0.6
    // lies in it (the one at -0.2 is 10 cm off).
    let upright = w.add_body(&plane([0.0, 0.0, 1.0], -0.3)).unwrap();
    let woken = |w: &World| -> Vec<bool> {
        ids.iter()
            .map(|&id| !w.cable(id).unwrap().sleeping)
            .collect()
    };
    assert_eq!(
        woken(&w),
        [true, false, false, false],
        "the plane wakes what it holds"
    );
    assert!(w.remove_body(upright));
    cable_sleep_steps(&mut w, 300, "after the upright plane");
    assert!(asleep(&w), "they sleep again");
    // Its pose counts: a plane added a metre below and lifted to the
    // floor's top by an edit wakes them; one along the floor moved a metre
    // down by an edit wakes them too (what held them moved away).
    let below = w.add_body(&plane([0.0, 1.0, 0.0], -1.0)).unwrap();
    assert!(asleep(&w), "a metre below");
    w.edit_body(below, Some(Vec3::new(0.0, 1.0, 0.0)), None, None, None)
        .unwrap();
    assert_eq!(woken(&w), [true; 4], "lifted to the floor's top");
    cable_sleep_steps(&mut w, 300, "on the lifted plane");
    assert!(asleep(&w), "they sleep again");
    w.edit_body(below, Some(Vec3::ZERO), None, None, None)
        .unwrap();
    assert_eq!(woken(&w), [true; 4], "the plane under them moved away");
    cable_sleep_steps(&mut w, 300, "on the floor, the plane away");
    assert!(asleep(&w), "they sleep again");
    // Its margin counts: a plane 5 cm under the floor's top rounded by 6
    // cm reaches them.
    let mut rounded = plane([0.0, 1.0, 0.0], -0.05);
    rounded.margin = 0.06;
    w.add_body(&rounded).unwrap();
    assert_eq!(woken(&w), [true; 4], "a rounded plane reaching them");
}

/// With sleep switched off, sleeping cables wake and cables never sleep.
#[test]
fn cables_do_not_sleep_with_sleep_switched_off() {
    let mut seed = 77u64;
    let (mut w, _) = random_pile(&mut seed, 0.0);
    cable_sleep_steps(&mut w, 300, "sleep on");
    assert!(w.cables().iter().all(|c| c.sleeping));
    w.settings.sleep.enabled = false;
    let steps = cable_sleep_steps(&mut w, 360, "sleep off");
    assert!(w.cables().iter().all(|c| !c.sleeping));
    assert!(steps.iter().all(|s| s.0.is_none()));
}

/// A snapshot loads back with each cable's particle velocities and sleep:
/// a cable spawned moving down at 20 m/s and stopped by the floor, one
/// lying asleep, and one in flight (spawned at 3 m/s sideways, falling for
/// 5 steps since) load back with the same positions, velocities and
/// sleep, and step on as the original does (within 1 mm over half a
/// second). Before, a snapshot kept only positions: each cable loaded back
/// with the velocity it was spawned with, the first shot into the floor
/// again at 20 m/s, the one in flight without the speed it had gained.
#[test]
fn snapshots_keep_cable_velocities_and_sleep() {
    let mut w = on_floor(3.0);
    let mut spec = arbiter::physics::cable::CableSpec::new([-1.0, 0.5, 0.0], [1.0, 0.5, 0.0], 40);
    spec.linear_velocity = [0.0, -20.0, 0.0];
    w.add_cable(&spec).unwrap();
    lay_cable(&mut w, [-1.0, 0.02, 1.0], [1.0, 0.02, 1.0]);
    for _ in 0..90 {
        w.step();
    }
    let mut spec = arbiter::physics::cable::CableSpec::new([-1.0, 2.0, -1.0], [1.0, 2.0, -1.0], 40);
    spec.linear_velocity = [3.0, 0.0, 0.0];
    w.add_cable(&spec).unwrap();
    for _ in 0..5 {
        w.step();
    }
    assert!(w.cables().iter().any(|c| c.sleeping), "one sleeps");
    assert!(
        w.cables().iter().any(|c| c.v.iter().any(|v| v.y < -0.5)),
        "one is falling"
    );
    let snap = w.snapshot();
    let mut back = World::from_scene(&snap).unwrap();
    for (a, b) in w.cables().iter().zip(back.cables()) {
        assert_eq!((a.id, a.sleeping), (b.id, b.sleeping));
        assert!(
            a.x == b.x && a.v == b.v,
            "cable {} loads back as it was",
            a.id
        );
    }
    for _ in 0..30 {
        w.step();
        back.step();
    }
    for (a, b) in w.cables().iter().zip(back.cables()) {
        let off =
            a.x.iter()
                .zip(&b.x)
                .map(|(p, q)| (*p - *q).length())
                .fold(0.0, f32::max);
        assert!(off < 1.0e-3, "cable {} is {off} m off after 30 steps", a.id);
    }
}

/// A box falls asleep on a cable (which sleeps half a second later), while
/// elsewhere a box rides a cable on a kinematic platform moving at 0.3 m/s
/// (so that the stage takes supports every step): the sleeping box's
/// supports are kept as they were, not taken again as well, so their
/// number stays what it was as the box fell asleep. (They were taken again
/// and kept every step, and grew by a copy a step.)
#[test]
fn a_sleeping_body_keeps_its_supports_once() {
    let mut w = on_floor(3.0);
    let mut spec = arbiter::physics::cable::CableSpec::new([-1.0, 0.02, 0.0], [1.0, 0.02, 0.0], 40);
    spec.damping = 0.5;
    let lying = w.add_cable(&spec).unwrap();
    let slab = w
        .add_body(&box_spec([0.15, 0.025, 0.15], [0.0, 0.1, 0.0], 2.0))
        .unwrap();
    w.add_body(
        &box_spec([0.6, 0.05, 0.6], [-1.5, 0.3, -2.0], 1.0)
            .kind(arbiter::physics::BodyKind::Kinematic)
            .linear_velocity([0.3, 0.0, 0.0]),
    )
    .unwrap();
    lay_cable(&mut w, [-2.0, 0.37, -2.0], [-1.0, 0.37, -2.0]);
    let rider = w
        .add_body(&box_spec([0.1, 0.05, 0.1], [-1.5, 0.45, -2.0], 1.0))
        .unwrap();
    let mut at_sleep = None;
    let mut checked = 0;
    for step in 0..300 {
        w.step();
        let (b, c) = (w.body(slab).unwrap(), w.cable(lying).unwrap());
        match (b.sleeping, c.sleeping, at_sleep) {
            (true, false, None) => at_sleep = Some(w.cable_support_count()),
            (true, false, Some(n)) => {
                assert_eq!(w.cable_support_count(), n, "step {step}");
                checked += 1;
            }
            _ => {}
        }
    }
    assert!(!w.body(rider).unwrap().sleeping, "the rider stays awake");
    assert!(
        checked >= 20,
        "the box slept before its cable for {checked} steps"
    );
}

/// A 2 kg slab asleep on a sleeping cable, saved in a snapshot and loaded
/// back (supports are not in snapshots: the cable against the slab loads
/// awake, takes them again, and sleeps again), then struck down at
/// 1.5 m/s: it stops on the cable (its underside within 1 mm of the
/// cable's top) in the loaded world as in the original.
#[test]
fn a_sleeping_slab_loaded_from_a_snapshot_still_rests_on_its_cable() {
    let mut w = on_floor(3.0);
    let r = 0.02;
    lay_cable(&mut w, [-1.0, r, 0.0], [1.0, r, 0.0]);
    let slab = w
        .add_body(&box_spec([0.15, 0.025, 0.15], [0.0, 0.1, 0.0], 2.0))
        .unwrap();
    for _ in 0..300 {
        w.step();
    }
    assert!(w.body(slab).unwrap().sleeping && w.cables()[0].sleeping);
    let mut back = World::from_scene(&w.snapshot()).unwrap();
    assert!(!back.cables()[0].sleeping, "the cable loads awake");
    for world in [&mut w, &mut back] {
        for _ in 0..60 {
            world.step();
        }
        assert!(world.body(slab).unwrap().sleeping, "the slab sleeps on");
        assert!(world.cables()[0].sleeping, "the cable sleeps again");
        let struck = strike_slab(world, slab);
        assert!(
            struck > 2.0 * r - 1.0e-3,
            "struck, the slab sank to {struck} m over a {r} m cable"
        );
    }
}

/// A 50 kg pallet on the floor with two crossed layers of cables on it, a
/// slab asleep on top, and (so that the cable stage keeps running) a box
/// riding a cable on a moving kinematic platform elsewhere. The slab's
/// supports go through two layers of cables to the pallet; asleep, it
/// keeps them (or, with none kept, takes them again), and struck down at
/// 1 m/s it stops on the heap (within 5 mm of where it rested).
#[test]
fn a_sleeping_slab_on_cables_over_a_pallet_keeps_its_supports() {
    let mut w = on_floor(3.0);
    w.add_body(&box_spec([0.5, 0.05, 0.5], [0.0, 0.05, 0.0], 50.0))
        .unwrap();
    for layer in 0..2 {
        let y = 0.12 + 0.04 * layer as f32;
        for k in 0..6 {
            let across = -0.25 + 0.1 * k as f32;
            let (from, to) = if layer == 0 {
                ([-0.45, y, across], [0.45, y, across])
            } else {
                ([across, y, -0.45], [across, y, 0.45])
            };
            lay_cable(&mut w, from, to);
        }
    }
    let slab = w
        .add_body(&box_spec([0.15, 0.025, 0.15], [0.0, 0.22, 0.0], 2.0))
        .unwrap();
    w.add_body(
        &box_spec([0.6, 0.05, 0.6], [-1.5, 0.3, -2.0], 1.0)
            .kind(arbiter::physics::BodyKind::Kinematic)
            .linear_velocity([0.2, 0.0, 0.0]),
    )
    .unwrap();
    lay_cable(&mut w, [-2.0, 0.37, -2.0], [-1.0, 0.37, -2.0]);
    w.add_body(&box_spec([0.1, 0.05, 0.1], [-1.5, 0.45, -2.0], 1.0))
        .unwrap();
    for _ in 0..420 {
        w.step();
    }
    assert!(w.body(slab).unwrap().sleeping, "the slab sleeps");
    assert!(w.cable_stats.pairs > 0, "the stage still runs");
    let rest = w.body(slab).unwrap().pose.position.y;
    w.apply_impulse(slab, Vec3::new(0.0, -2.0, 0.0), None, None)
        .unwrap();
    let mut low = f32::MAX;
    for _ in 0..60 {
        w.step();
        low = low.min(w.body(slab).unwrap().pose.position.y);
    }
    assert!(
        rest - low < 5.0e-3,
        "struck, the slab sank {} m",
        rest - low
    );
}

/// Random piles (a free slab under some) with a box dropped on
/// each, 10 seeds, 6 s each, and every half second an edit drawn at
/// random: a cable removed or added above the pile, a body removed, moved
/// by an edit or struck, or a box added. Every 12th step the stage's
/// brute-force audit runs: no two centre lines ever touch and no pair left
/// out comes within touching distance; every position stays finite, the
/// cables' within the scene; nothing panics. Cables fall asleep and wake
/// throughout: 158 times and 129 times over the 10 cases (the test
/// requires more than 20 and 10).
#[test]
fn random_edits_among_sleeping_cables_never_cross_or_break() {
    let (mut slept, mut woke) = (0, 0);
    for case in 0..10u64 {
        let mut seed = 1000 + case;
        let (mut w, top) = random_pile(&mut seed, 0.5);
        w.add_body(&box_spec([0.15, 0.1, 0.15], [0.1, top + 0.3, -0.1], 3.0))
            .unwrap();
        let what = format!("case {case}");
        for step in 0..360 {
            if step % 30 == 29 {
                let dynamic: Vec<u64> = w
                    .bodies()
                    .filter(|b| b.is_dynamic())
                    .map(|b| b.id)
                    .collect();
                let cables: Vec<u64> = w.cables().iter().map(|c| c.id).collect();
                let pick =
                    |ids: &[u64], seed: &mut u64| ids[(lcg(seed) * ids.len() as f32) as usize];
                match (lcg(&mut seed) * 6.0) as u32 {
                    0 if cables.len() > 1 => {
                        let id = pick(&cables, &mut seed);
                        assert!(w.remove_cable(id));
                    }
                    1 => {
                        let a = std::f32::consts::PI * lcg(&mut seed);
                        let (c, s) = (a.cos(), a.sin());
                        lay_cable(&mut w, [-c, top + 0.3, -s], [c, top + 0.3, s]);
                    }
                    2 if !dynamic.is_empty() => {
                        let id = pick(&dynamic, &mut seed);
                        assert!(w.remove_body(id));
                    }
                    3 if !dynamic.is_empty() => {
                        let id = pick(&dynamic, &mut seed);
                        let p = w.body(id).unwrap().pose.position + Vec3::new(0.1, 0.0, 0.0);
                        w.edit_body(id, Some(p), None, None, None).unwrap();
                    }
                    4 if !dynamic.is_empty() => {
                        let id = pick(&dynamic, &mut seed);
                        w.apply_impulse(id, Vec3::new(0.0, -1.0, 0.0), None, None)
                            .unwrap();
                    }
                    _ => {
                        w.add_body(&box_spec([0.1, 0.1, 0.1], [0.0, top + 0.4, 0.0], 1.0))
                            .unwrap();
                    }
                }
            }
            let before: Vec<bool> = w.cables().iter().map(|c| c.sleeping).collect();
            let ids: Vec<u64> = w.cables().iter().map(|c| c.id).collect();
            w.settings.cable_audit = step % 12 == 0;
            w.step();
            let s = w.cable_stats;
            assert_eq!(s.audit_crossings, 0, "{what}: crossing at step {step}");
            assert_eq!(s.audit_missed, 0, "{what}: missed pair at step {step}");
            for (k, c) in w.cables().iter().enumerate() {
                assert!(
                    c.x.iter().all(|p| p.is_finite() && p.length() < 20.0),
                    "{what}: step {step}: cable {} left the scene",
                    c.id
                );
                if ids.get(k) == Some(&c.id) {
                    slept += (!before[k] && c.sleeping) as u32;
                    woke += (before[k] && !c.sleeping) as u32;
                }
            }
            for b in w.bodies() {
                assert!(b.pose.position.is_finite(), "{what}: step {step}: a body");
            }
        }
    }
    assert!(slept > 20 && woke > 10, "{slept} sleeps, {woke} wakes");
}

/// A heap of 100 cables (5 crossed layers of 20 cables of 50 segments, 10 m
/// long, in a 12 m box) dropped from 1–1.6 m comes to rest and sleeps
/// whole within 6 s (measured: 5.2 s at friction 0.5, 5.7 s at 1.0; sleep
/// judges each particle by its velocity and its displacement over the
/// step, so a heap creeping faster than the sleep speed stays awake).
/// Friction between segments acts on the substep's velocities and only
/// takes sliding away; solved inside the passes (before), it fought the
/// chains' solve and the heap crept, the faster the more friction it had:
/// it did not sleep whole in 7 s.
#[test]
fn a_heap_of_cables_comes_to_rest_and_sleeps_whatever_its_friction() {
    for mu in [0.5, 1.0] {
        let mut w = common::heap::cable_heap(100, Some(mu));
        let mut slept = None;
        for step in 1..=7 * 60 {
            w.step();
            let asleep = w.cables().iter().filter(|c| c.sleeping).count();
            match slept {
                None if asleep == 100 => slept = Some(step),
                Some(at) => {
                    assert_eq!(
                        asleep,
                        100,
                        "μ {mu}: a cable woke {} steps after",
                        step - at
                    );
                    if step >= at + 60 {
                        break;
                    }
                }
                None => {}
            }
        }
        let at = slept.unwrap_or_else(|| panic!("μ {mu}: the heap never slept whole in 7 s"));
        println!("μ {mu}: every cable asleep at {:.2} s", at as f32 / 60.0);
        assert!(
            at <= 6 * 60,
            "μ {mu}: the heap slept whole only at {} s",
            at / 60
        );
        assert!(w
            .cables()
            .iter()
            .flat_map(|c| &c.x)
            .all(|p| p.is_finite() && p.y > 0.0));
        // The contacts held: no two cables (4 cm thick) overlap by more
        // than 1 mm (the deepest is 0.2-0.35 mm).
        let deepest = common::deepest_overlap(&w, 0.02);
        println!("μ {mu}: deepest overlap {deepest}");
        assert!(deepest < 1.0e-3, "μ {mu}: cables overlap by {deepest} m");
    }
}

/// A world stepped at 1 Hz (a step twice the sleep time): a cable asleep on
/// the floor, woken in a step by a kinematic box coming down 5 cm to 2 cm
/// above it (within what the sweep of a moving body wakes), rests through the step and is asleep again at its end;
/// `World::moved_cables` still lists it (streams send the cables it lists,
/// and a cable asleep before and after a step could otherwise be left out
/// though the step moved it), and lists none in a step where all sleep.
#[test]
fn a_cable_woken_and_asleep_again_within_one_long_step_is_listed_as_moved() {
    use arbiter::physics::{BodyKind, BodySpec, ShapeSpec};
    let mut w = on_floor(3.0);
    w.settings.dt = 1.0;
    let id = lay_cable(&mut w, [-1.0, 0.02, 0.0], [1.0, 0.02, 0.0]);
    w.step();
    assert_eq!(w.moved_cables(), [id], "awake in its first step");
    for _ in 0..2 {
        w.step();
    }
    assert!(w.cable(id).unwrap().sleeping, "asleep on the floor");
    w.step();
    assert!(w.moved_cables().is_empty(), "{:?}", w.moved_cables());
    // Its bottom 7 cm above the cable's top, coming down 5 cm in the step.
    let lid = BodySpec::new(ShapeSpec::Box {
        half_extents: [0.2, 0.1, 0.2],
    })
    .kind(BodyKind::Kinematic)
    .position([0.0, 0.04 + 0.07 + 0.1, 0.0])
    .linear_velocity([0.0, -0.05, 0.0]);
    w.add_body(&lid).unwrap();
    assert!(w.cable(id).unwrap().sleeping, "the box is still far");
    w.step();
    assert!(
        w.cable(id).unwrap().sleeping,
        "asleep again at the step's end"
    );
    assert_eq!(w.moved_cables(), [id], "woken in the step");
}
