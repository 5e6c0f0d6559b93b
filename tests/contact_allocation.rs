//! The narrow phase runs every step for every touching pair: box–box and
//! hull contacts, support features and clipping must not touch the heap.

use arbiter::physics::collision::{box_box, polytope_contact, SatCache};
use arbiter::physics::math::{Pose, Quat, Vec3};
use arbiter::physics::shape::{ConvexHull, Cuboid};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(|c| c.get())
}

#[test]
fn contacts_do_not_allocate() {
    let ground = Cuboid {
        half_extents: Vec3::new(1.2, 0.5, 1.2),
    };
    let block = Cuboid {
        half_extents: Vec3::new(1.0, 0.5, 1.0),
    };
    let corners: Vec<Vec3> = (0..8).map(|i| block.vertex(i)).collect();
    let hull = ConvexHull::new(&corners).unwrap();
    let ground_pose = Pose::new(Vec3::ZERO, Quat::from_rotation_y(0.785));
    let poses = [
        Pose::from_position(Vec3::new(0.0, 0.99, 0.0)),
        Pose::new(Vec3::new(0.3, 1.2, 0.1), Quat::from_rotation_z(0.8)),
        Pose::new(Vec3::new(0.0, 1.9, 0.0), Quat::from_rotation_x(0.785)),
        Pose::from_position(Vec3::new(5.0, 0.0, 0.0)),
    ];
    let mut cache = SatCache::default();
    let before = allocations();
    let mut points = 0;
    for pose in &poses {
        for _ in 0..3 {
            points += box_box(&ground, &ground_pose, &block, pose, 0.02, &mut cache)
                .map_or(0, |m| m.count);
            points += polytope_contact(
                &ground,
                &ground_pose,
                &hull,
                pose,
                0.0,
                0.01,
                0.02,
                &mut cache,
            )
            .map_or(0, |m| m.count);
            points += hull.support_feature(pose, Vec3::Y).count;
            points += block.support_feature(pose, Vec3::new(1.0, 1.0, 0.0)).count;
        }
    }
    assert_eq!(allocations() - before, 0);
    assert!(points > 0);
}
