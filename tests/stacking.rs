//! Stacks: they stand, they stay put, they sleep.

use arbiter::physics::{BodyKind, BodySpec, ShapeSpec, Vec3, World};

fn ground(w: &mut World) {
    w.add_body(
        &BodySpec::new(ShapeSpec::Plane {
            normal: [0.0, 1.0, 0.0],
            offset: 0.0,
        })
        .kind(BodyKind::Static),
    )
    .unwrap();
}

#[test]
fn stack_of_ten_boxes_stands_and_sleeps_within_three_seconds() {
    let mut w = World::default();
    ground(&mut w);
    let h = 0.5;
    let ids: Vec<u64> = (0..10)
        .map(|i| {
            w.add_body(
                &BodySpec::new(ShapeSpec::Box {
                    half_extents: [h, h, h],
                })
                .position([0.0, h + 2.0 * h * i as f32, 0.0]),
            )
            .unwrap()
        })
        .collect();
    let starts: Vec<Vec3> = ids
        .iter()
        .map(|&id| w.body(id).unwrap().pose.position)
        .collect();
    let mut asleep_at = None;
    for step in 0..180 {
        w.step();
        if asleep_at.is_none() && ids.iter().all(|&id| w.body(id).unwrap().sleeping) {
            asleep_at = Some(step);
        }
    }
    let asleep_at = asleep_at.expect("the stack is asleep within 3 s");
    for (i, &id) in ids.iter().enumerate() {
        let b = w.body(id).unwrap();
        let d = b.pose.position - starts[i];
        // The stack stays straight. Measured: the top box ends ~1.3 cm to
        // the side after settling (a 0.13% lean, from the order in which
        // Gauss–Seidel visits the contact points); a stack that slid or
        // toppled would be off by decimetres.
        let sideways = (d.x * d.x + d.z * d.z).sqrt();
        assert!(
            sideways < 0.02,
            "box {i} drifted {sideways} m sideways (asleep at step {asleep_at})"
        );
        // Soft contacts settle by about load·g/ω² per contact (ω = 2π·30 Hz):
        // 0.28 mm per supported box at the ground, twice that between two
        // free boxes, so the top of this stack settles by ~2.7 cm. A solver
        // that lost contact or let boxes sink through would be far outside.
        assert!(d.y <= 0.001 && d.y > -0.03, "box {i} settled by {} m", -d.y);
        assert!(b.sleeping);
    }
}

#[test]
fn pyramid_of_twenty_rows_stands_for_ten_seconds() {
    let mut w = World::default();
    ground(&mut w);
    let h = 0.5;
    let rows = 20;
    let mut top = 0;
    for row in 0..rows {
        let n = rows - row;
        for i in 0..n {
            let x = (i as f32 - (n as f32 - 1.0) / 2.0) * (2.0 * h + 0.02);
            top = w
                .add_body(
                    &BodySpec::new(ShapeSpec::Box {
                        half_extents: [h, h, h],
                    })
                    .position([x, h + 2.0 * h * row as f32, 0.0]),
                )
                .unwrap();
        }
    }
    assert_eq!(w.body_count(), 1 + 210);
    let start = w.body(top).unwrap().pose.position;
    for _ in 0..600 {
        w.step();
    }
    let end = w.body(top).unwrap().pose.position;
    assert!(
        (end - start).length() < 0.05,
        "top box moved {} m in 10 s",
        (end - start).length()
    );
    // Nothing fell over: every box is still upright and at its row height.
    for b in w.bodies().filter(|b| b.is_dynamic()) {
        assert!(b.pose.position.is_finite());
        let up = b.pose.rotation * Vec3::Y;
        assert!(
            up.y.abs() > 0.99 || up.x.abs() > 0.99 || up.z.abs() > 0.99,
            "box tipped: {up}"
        );
    }
}

#[test]
fn a_sleeping_stack_wakes_on_impulse_and_falls_when_its_support_is_removed() {
    let mut w = World::default();
    ground(&mut w);
    let h = 0.5;
    let ids: Vec<u64> = (0..3)
        .map(|i| {
            w.add_body(
                &BodySpec::new(ShapeSpec::Box {
                    half_extents: [h, h, h],
                })
                .position([0.0, 1.5 + 2.0 * h * i as f32, 0.0]),
            )
            .unwrap()
        })
        .collect();
    // A support under the stack, then the stack settles and sleeps.
    let support = w
        .add_body(
            &BodySpec::new(ShapeSpec::Box {
                half_extents: [h, h, h],
            })
            .position([0.0, 0.5, 0.0]),
        )
        .unwrap();
    for _ in 0..180 {
        w.step();
    }
    assert!(
        ids.iter().all(|&id| w.body(id).unwrap().sleeping),
        "the stack sleeps"
    );
    // An impulse on the top box wakes its whole island.
    w.apply_impulse(ids[2], Vec3::new(0.0, 1.0, 0.0), None, None)
        .unwrap();
    assert!(
        ids.iter().all(|&id| !w.body(id).unwrap().sleeping),
        "an impulse wakes the island"
    );
    for _ in 0..180 {
        w.step();
    }
    assert!(
        ids.iter().all(|&id| w.body(id).unwrap().sleeping),
        "asleep again"
    );
    let y0 = w.body(ids[0]).unwrap().pose.position.y;
    // Removing the support wakes what rested on it, and the stack falls.
    assert!(w.remove_body(support));
    assert!(
        !w.body(ids[0]).unwrap().sleeping,
        "removing the support wakes the stack"
    );
    for _ in 0..120 {
        w.step();
    }
    let y1 = w.body(ids[0]).unwrap().pose.position.y;
    assert!(
        (y0 - y1 - 1.0).abs() < 0.05,
        "the bottom box fell onto the ground: {y0} -> {y1}"
    );
}
