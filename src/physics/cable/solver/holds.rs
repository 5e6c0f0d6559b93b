//! The fail-safe's holds ([`CableSystem::hold_together`]): the particles
//! of a pair it stops move on together, by their mean displacement in the
//! substep, instead of standing where the substep began.
//!
//! A pair whose segments would cross (and whose impulses ran out) had its
//! four particles put back where the substep began: no crossing, but their
//! momentum gone, and the pull of their cables back onto them
//! ([`CableSystem::pull_onto_held`]) took their neighbours' too. Two threads
//! of 1 kg meeting at 20 m/s lost 55% of their momentum in one step, and
//! 18 of 24 such meetings (10–40 m/s, four angles) froze particles, one
//! losing all of it.
//!
//! Moved together, the four keep the places they had relative to each
//! other where the substep began, when the segments had not crossed: a
//! common translation cannot cross them, and the mass-weighted mean keeps
//! their momentum (and cannot raise their energy). Stopped pairs that share
//! a particle join one group, which moves as one. Only free cables move on:
//! a group with a particle of a cable that has a pinned (or sleeping)
//! particle, or one held back from a body, stands where the substep began,
//! as before (moved on, 3 of the 100 drops of cables on a pinned line broke
//! their bounds: links of up to 63%, and a strain energy up to 35 times a
//! drop's fall; `docs/cables.md`).

use super::{CableSystem, Vec3};
use std::collections::HashMap;

/// A group's members, their mass and `Σ mᵢ·dᵢ` (of the displacements they
/// had when first held), and whether it stands where the substep began.
#[derive(Debug, Default)]
struct Group {
    members: Vec<usize>,
    mass: f64,
    moment: glam::DVec3,
    still: bool,
}

impl Group {
    /// Its members' displacement in the substep.
    fn displacement(&self) -> Vec3 {
        if self.still || self.mass <= 0.0 {
            Vec3::ZERO
        } else {
            (self.moment / self.mass).as_vec3()
        }
    }
}

/// The groups of one verification ([`CableSystem::drain_and_pull`]): each
/// held particle's group.
#[derive(Debug, Default)]
pub(crate) struct HoldGroups {
    of: HashMap<usize, usize>,
    groups: Vec<Group>,
    /// Whether each cable looked at is free ([`cable_is_free`]).
    free_cables: HashMap<u32, bool>,
}

/// Whether particle `i`'s cable has no pinned (or sleeping) particle and
/// none held back from a body.
fn cable_is_free(sys: &CableSystem, i: usize, known: &mut HashMap<u32, bool>) -> bool {
    let Some(&seg) = sys.part_segs[i].iter().find(|&&s| s != u32::MAX) else {
        return false;
    };
    let cable = sys.segs[seg as usize].cable;
    if let Some(&free) = known.get(&cable) {
        return free;
    }
    let free = sys.cable_segments(i).is_some_and(|(a, b)| {
        let span = sys.segs[a].p as usize..sys.segs[b - 1].p as usize + 2;
        span.clone().all(|p| sys.w[p] > 0.0) && !sys.held.iter().any(|p| span.contains(p))
    });
    known.insert(cable, free);
    free
}

/// The most particles a group moving on together may have: a larger one
/// stands where the substep began (each stopped pair rewrites its whole
/// group, and two threads twisted together would make one of hundreds).
const MOST_MOVING: usize = 64;

impl HoldGroups {
    /// Whether the four particles are held in one group (they then keep
    /// their places relative to each other).
    pub(crate) fn rigid(&self, pts: &[(usize, f32, f32); 4]) -> bool {
        let g = self.of.get(&pts[0].0);
        g.is_some() && pts.iter().all(|&(i, _, _)| self.of.get(&i) == g)
    }

    /// Particle `i`'s group, a new one of its own if it has none.
    fn group_of(&mut self, sys: &CableSystem, i: usize) -> usize {
        if let Some(&g) = self.of.get(&i) {
            return g;
        }
        // A pinned particle, or one held back from a body before this
        // verification, stands where it is (its cable is not free); after
        // the substep's first tube extension every group does.
        let still =
            !sys.moving_holds || sys.is_held(i) || !cable_is_free(sys, i, &mut self.free_cables);
        let mass = if still { 0.0 } else { 1.0 / sys.w[i] as f64 };
        self.groups.push(Group {
            members: vec![i],
            mass,
            moment: (sys.x[i] - sys.prev[i]).as_dvec3() * mass,
            still,
        });
        self.of.insert(i, self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Joins groups `ids` into the largest of them, which it returns.
    fn join(&mut self, ids: &[usize]) -> usize {
        let into = *ids
            .iter()
            .max_by_key(|&&g| self.groups[g].members.len())
            .expect("a group");
        for &g in ids {
            if g == into {
                continue;
            }
            let other = std::mem::take(&mut self.groups[g]);
            for &i in &other.members {
                self.of.insert(i, into);
            }
            let t = &mut self.groups[into];
            t.members.extend(other.members);
            t.mass += other.mass;
            t.moment += other.moment;
            t.still |= other.still;
        }
        let t = &mut self.groups[into];
        t.still |= t.members.len() > MOST_MOVING;
        into
    }
}

impl CableSystem {
    /// The group of particle `i` stands where the substep began from now
    /// on (its members held there, bit for bit), and the pairs around them
    /// are queued again.
    pub(super) fn stand_still(
        &mut self,
        i: usize,
        h: f32,
        groups: &mut HoldGroups,
        frozen_list: &mut Vec<usize>,
    ) {
        let g = groups.of[&i];
        groups.groups[g].still = true;
        self.place(&groups.groups[g], h, frozen_list);
    }

    /// The fail-safe for the pair of `pts`: its four particles join one
    /// group with every group they are in, and each of its members moves
    /// to where the substep began plus the group's displacement, frozen
    /// (it counts as pinned until the verification ends). The newly frozen
    /// go to `frozen_list`; the pairs around every member are queued again.
    pub(super) fn hold_together(
        &mut self,
        pts: &[(usize, f32, f32); 4],
        h: f32,
        groups: &mut HoldGroups,
        frozen_list: &mut Vec<usize>,
    ) {
        let mut ids: Vec<usize> = Vec::with_capacity(4);
        for &(i, _, _) in pts {
            let g = groups.group_of(self, i);
            if !ids.contains(&g) {
                ids.push(g);
            }
        }
        let into = groups.join(&ids);
        self.place(&groups.groups[into], h, frozen_list);
    }

    /// Each member of `group` where the substep began plus the group's
    /// displacement, frozen (the newly frozen to `frozen_list`), and the
    /// pairs around it queued again.
    fn place(&mut self, group: &Group, h: f32, frozen_list: &mut Vec<usize>) {
        let (d, still) = (group.displacement(), group.still);
        for &i in &group.members {
            if self.w[i] == 0.0 {
                // (Pinned: it stays.)
            } else if still {
                // (A particle carried along with a body goes back too, the
                // body taking the momentum: `hold`.)
                if self.hold(i, h) {
                    frozen_list.push(i);
                    self.stats.frozen += 1;
                }
            } else {
                self.x[i] = self.prev[i] + d;
                if !self.frozen[i] {
                    self.frozen[i] = true;
                    self.held_since_look = true;
                    frozen_list.push(i);
                    self.stats.frozen += 1;
                }
            }
            self.enqueue_around(i);
        }
    }
}
