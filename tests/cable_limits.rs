//! Cables spawned into each other: the overlapping segment pairs a world's
//! cables may have are bounded (`cable::MAX_OVERLAPS`), so that no cable
//! can make the step's broad phase list a number of pairs quadratic in its
//! segments.

mod common;

use arbiter::physics::cable::{CableSpec, MAX_OVERLAPS};
use arbiter::physics::World;

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
