//! Cables stepped on threads: the stage's halves on two threads give the
//! same result as on one, and large worlds stepped at once (on threads of
//! their own, or as jobs of one pool) all finish as they would alone.

mod common;

use arbiter::physics::cable::CableSpec;
use arbiter::physics::{Vec3, World};
use common::on_floor;

/// 100 cables of 50 segments in crossed layers above a floor: enough for
/// the solver's two halves to run on two threads.
fn large_heap() -> World {
    let mut w = on_floor(4.0);
    for k in 0..100 {
        let (layer, row) = (k / 10, k % 10);
        let y = 0.5 + layer as f32 * 0.1;
        let z = -3.0 + row as f32 * 0.6;
        let (from, to) = if layer % 2 == 0 {
            ([-3.0, y, z], [3.0, y, z])
        } else {
            ([z, y, -3.0], [z, y, 3.0])
        };
        let mut spec = CableSpec::new(from, to, 50);
        spec.radius = 0.02;
        w.add_cable(&spec).unwrap();
    }
    w
}

/// A heap large enough for the solver's two halves to run on two threads
/// steps bit for bit the same in a one-thread pool and a two-thread pool.
#[test]
fn a_large_heap_steps_the_same_on_one_thread_and_on_two() {
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let (one, two) = (pool(1), pool(2));
    let (mut a, mut b) = (large_heap(), large_heap());
    let mut touched = 0;
    for step in 0..40 {
        one.install(|| a.step());
        two.install(|| b.step());
        touched += a.cable_stats.contacts;
        for (ca, cb) in a.cables().iter().zip(b.cables()) {
            assert!(
                ca.x == cb.x && ca.v == cb.v,
                "step {step}: the results differ"
            );
        }
    }
    // The cables met each other (the contacts across the halves ran).
    assert!(touched > 1000, "only {touched} contacts");
}

/// Positions of every cable of a world.
fn positions(w: &World) -> Vec<Vec3> {
    w.cables().iter().flat_map(|c| c.x.clone()).collect()
}

/// Every world's positions equal those of [`large_heap`] stepped `steps`
/// times alone.
fn assert_as_alone(results: &[Vec<Vec3>], steps: usize) {
    let mut alone = large_heap();
    for _ in 0..steps {
        alone.step();
    }
    let expected = positions(&alone);
    for (k, x) in results.iter().enumerate() {
        assert!(
            *x == expected,
            "world {k} differs from the one stepped alone"
        );
    }
}

/// Runs `f` on a thread of its own and waits at most `secs` for it (a
/// deadlock fails the test instead of hanging the suite); its panic is the
/// test's.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(v) => v,
        // The sender went without a value: the thread panicked.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread sends before it ends"),
        },
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("still running after {secs} s"),
    }
}

/// Worlds tick on threads of their own: four large heaps stepped at once
/// (sharing the process's thread pool, where one large cable stage at a
/// time has a helper task on another pool thread) all finish, the same as
/// one alone.
#[test]
fn large_heaps_stepped_at_once_on_four_threads_all_finish() {
    let results = within(300, || {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    let mut w = large_heap();
                    for _ in 0..20 {
                        w.step();
                    }
                    positions(&w)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a world's thread"))
            .collect::<Vec<_>>()
    });
    assert_as_alone(&results, 20);
}

/// Large worlds stepped as jobs of one pool (a game backend stepping its
/// worlds with rayon): while one stage's helper runs other jobs, those
/// jobs' stages run without one rather than wait for it, so nothing
/// deadlocks, and every world ends as it would alone. (With stages that
/// waited for their turn at a helper, this hung in 2 of 4 runs: a helper
/// ran another world's step, which waited for the helper's own stage.)
#[test]
fn large_heaps_stepped_as_jobs_of_one_pool_all_finish() {
    use rayon::prelude::*;
    let results = within(300, || {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut worlds: Vec<World> = (0..12).map(|_| large_heap()).collect();
        pool.install(|| {
            worlds.par_iter_mut().for_each(|w| {
                for _ in 0..10 {
                    w.step();
                }
            })
        });
        worlds.iter().map(positions).collect::<Vec<_>>()
    });
    assert_as_alone(&results, 10);
}
