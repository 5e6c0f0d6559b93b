//! What a world refuses besides bad values: cables and bodies spawned so
//! far into each other that the step would have to handle a number of
//! pairs quadratic in them. The count goes through the cables' grid
//! ([`count_overlaps_with`]) and stops past the limit.

use super::World;
use crate::physics::cable::pairs::{count_overlaps_with, overlap};
use crate::physics::cable::{Cable, MAX_OVERLAPS};
use crate::physics::math::Vec3;

/// Slack (m) of a segment's box when a cable's overlaps are counted
/// ([`World::new_cable_overlaps`]): a particle's tube's least.
const SPAWN_MARGIN: f32 = 0.005;

/// Most pairs of bodies, one of them dynamic, whose boxes (with the
/// broad phase's margin) overlap, that a world may have when a body joins:
/// the pairs of the last step's broad phase (any two boxes) and those of
/// the bodies added since. 20,000 boxes (a world's most by default) in a tight lattice make
/// about 260,000; 1,000 spheres spawned at one point, 500,000, and their
/// first step took 1 s and 390 MB; 3,000 took 17.5 s and 3.4 GB, and
/// 20,000 would exhaust the memory and take the server down.
pub const MAX_BODY_OVERLAPS: u64 = 500_000;

impl World {
    /// The overlapping pairs of segment boxes the cables from `first` on
    /// (the newest) bring, with each other and the others, or an error
    /// when the world's would then pass [`MAX_OVERLAPS`] (those of the
    /// last step and of the cables added since counted as they were then).
    /// A box is the segment's with its collision radius and
    /// [`SPAWN_MARGIN`].
    pub(super) fn new_cable_overlaps(&self, first: usize) -> Result<u64, String> {
        let seg_box = |c: &Cable, k: usize| {
            let r = Vec3::splat(c.collision_radius() + SPAWN_MARGIN);
            let (a, b) = (c.x[k], c.x[k + 1]);
            (a.min(b) - r, a.max(b) + r)
        };
        let boxes_of = |ci: usize| {
            let c = &self.cables[ci];
            (0..c.segments()).map(move |k| (seg_box(c, k), (ci, k)))
        };
        let (old, new) = (0..first, first..self.cables.len());
        let Some(region) = new
            .clone()
            .flat_map(boxes_of)
            .map(|(b, _)| b)
            .reduce(|(lo, hi), b| (lo.min(b.0), hi.max(b.1)))
        else {
            return Ok(0);
        };
        // The others' segments within the new ones' reach, then the new
        // ones'; with each box, its cable and segment.
        let (mut boxes, mut owner) = (Vec::new(), Vec::new());
        for (b, o) in old.flat_map(boxes_of).filter(|(b, _)| overlap(b, &region)) {
            boxes.push(b);
            owner.push(o);
        }
        let fresh = boxes.len();
        for (b, o) in new.flat_map(boxes_of) {
            boxes.push(b);
            owner.push(o);
        }
        // Segments that share a particle are no pair.
        let skip =
            |j: usize, k: usize| owner[j].0 == owner[k].0 && owner[j].1.abs_diff(owner[k].1) <= 1;
        let before = self.cable_stats.pairs + self.spawned_overlaps;
        let limit = MAX_OVERLAPS.saturating_sub(before);
        let count = count_overlaps_with(&boxes, fresh, skip, limit);
        if count > limit {
            return Err(format!(
                "limit: the new cable segments would overlap in more than {limit} pairs (with each other and the world's cables, which overlap in about {before}); a world's cables may overlap in at most {MAX_OVERLAPS} pairs: cables spawned into each other"
            ));
        }
        Ok(count)
    }

    /// The pairs of overlapping boxes, one of them dynamic, that the bodies
    /// of `new` (slots, just inserted) bring, with each other and the
    /// world's bodies, or an error when the world's would then pass
    /// [`MAX_BODY_OVERLAPS`] (those of the last step's broad phase and of
    /// the bodies added since counted as they were then). Planes are not
    /// counted: a body has at most one pair with each.
    /// The last step's broad-phase pairs with a dynamic body (counted once
    /// a step, at the first body added after it).
    fn body_pairs_of_last_step(&mut self) -> u64 {
        if let Some((tick, n)) = self.last_body_pairs {
            if tick == self.tick {
                return n;
            }
        }
        let dynamic = |i: u32| self.bodies.by_index(i).is_some_and(|b| b.is_dynamic());
        let n = self
            .broad
            .pairs()
            .filter(|&(a, b)| dynamic(a) || dynamic(b))
            .count() as u64;
        self.last_body_pairs = Some((self.tick, n));
        n
    }

    pub(super) fn new_body_overlaps(&mut self, new: &[u32]) -> Result<u64, String> {
        let boxed: Vec<(u32, (Vec3, Vec3))> = new
            .iter()
            .filter_map(|&i| self.broad.aabb(i).map(|b| (i, (b.min, b.max))))
            .collect();
        self.body_overlaps(&boxed)
    }

    /// [`Self::new_body_overlaps`] of bodies (slots) with the boxes given
    /// (a body about to be moved: where it will be).
    pub(super) fn body_overlaps(&mut self, new: &[(u32, (Vec3, Vec3))]) -> Result<u64, String> {
        let before = self.body_pairs_of_last_step() + self.spawned_body_overlaps;
        let dynamic = |i: u32| self.bodies.by_index(i).is_some_and(|b| b.is_dynamic());
        let Some(region) = new
            .iter()
            .map(|&(_, b)| b)
            .reduce(|(lo, hi), b| (lo.min(b.0), hi.max(b.1)))
        else {
            return Ok(0);
        };
        let mut sorted: Vec<u32> = new.iter().map(|&(i, _)| i).collect();
        sorted.sort_unstable();
        let is_new = |i: u32| sorted.binary_search(&i).is_ok();
        // The others within the new ones' reach, then the new ones; with
        // each box, its body's slot.
        let (mut boxes, mut owner) = (Vec::new(), Vec::new());
        for (h, _) in self.bodies.iter() {
            if is_new(h.index) {
                continue;
            }
            let b = self.broad.aabb(h.index).map(|b| (b.min, b.max));
            if let Some(b) = b.filter(|b| overlap(b, &region)) {
                boxes.push(b);
                owner.push(h.index);
            }
        }
        let fresh = boxes.len();
        for &(i, b) in new {
            boxes.push(b);
            owner.push(i);
        }
        let skip = |j: usize, k: usize| !dynamic(owner[j]) && !dynamic(owner[k]);
        let limit = MAX_BODY_OVERLAPS.saturating_sub(before);
        let count = count_overlaps_with(&boxes, fresh, skip, limit);
        if count > limit {
            return Err(format!(
                "limit: the new bodies would overlap in more than {limit} pairs (with each other and the world's bodies, which overlap in about {before}); a world's bodies may overlap in at most {MAX_BODY_OVERLAPS} pairs: bodies spawned into each other"
            ));
        }
        Ok(count)
    }
}
