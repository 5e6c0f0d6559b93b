//! Extra passes for chains whose contacts the substep's passes left
//! unconverged.
//!
//! Each pass solves the chains and then the contacts, so a substep ends
//! with its contacts met and its chains as the contacts left them. Where a
//! contact pushes a particle across a taut chain (a cable dropped at 5 m/s
//! onto a line pinned at both ends), the chain's solve pulls the particle
//! back into the contact, the contact pushes it out again, and the other
//! cable gives way only its share each time: Gauss–Seidel between the two
//! converges slowly, and with the substep's four passes the line's
//! segments ended the substeps stretched by the contacts' last push (24%
//! for two equal 0.56 kg cables of 2 cm radius, 150% for a 3.3 kg thread on a
//! 0.56 kg line, whose strain energy then read 800 times the fall's; 64
//! passes bring both under 2.5%). So after the substep's passes, a chain
//! group whose links are off by more than [`STRAIN_TOLERANCE`] of their
//! length beyond what their compliance explains (the XPBD residual,
//! [`super::chains::ChainGroup::worst_residual`]), with the groups across
//! its contacts, takes more passes with their contacts, until its links
//! converge (at most [`STRAIN_PASSES`] per pass of the substep). Of 100
//! random drops of a cable onto a pinned line (the test
//! `cables_dropped_on_a_pinned_line_keep_their_length_and_add_no_energy`),
//! the median drop's worst link was 113% off before, 1.5% now. Groups that
//! touch a dynamic body stay out (a contact with one holds only the other
//! side); contacts between two segments of one cable of a collision radius
//! larger than its segments are held as they are (see
//! [`CableSystem::solve_strained_chains`]); and the passes are for a few
//! cables: at most
//! [`STRAIN_WORK`] particle solves a substep. Like the coupled bodies'
//! (`coupled.rs`), they run on one thread, in the regular passes' order.

use super::contacts::Contact;
use super::kernels::solve_pairs;
use super::{both, CableSystem};

/// A link off its length by more than this fraction of it (beyond its
/// compliance) after the substep's passes starts the extra passes, which
/// end once none of their groups' links is.
const STRAIN_TOLERANCE: f32 = 0.005;

/// Most extra passes over strained chains per pass of the substep.
const STRAIN_PASSES: u32 = 16;

/// The extra passes of a substep solve at most this many particles in all
/// (passes times the particles of their groups): as many passes as that
/// allows up to [`STRAIN_PASSES`] per pass of the substep, none when their
/// groups are more than that. They are for a few cables in a fight (a
/// cable dropped on a line); where most of a large heap is strained, the
/// work of all of it again, on one thread, is more than a step can take
/// (50,000 segments: 12 ms a step for two passes a substep).
const STRAIN_WORK: usize = 16_384;

impl CableSystem {
    /// The extra passes (see the module documentation).
    pub(super) fn solve_strained_chains(&mut self, inv_h2: f32, h: f32, iterations: u32) {
        // Groups that touch a dynamic body are left out (`left_out`): a
        // body's contacts solved again each pass would credit it with each
        // push (a box moved into a pile by an edit was thrown off at 15
        // m/s), and solved less often than the chains, the chains would
        // pull their particles into it.
        let mut left_out = vec![false; self.groups.len()];
        let table = &self.particle_group;
        let group_of = |i: usize| {
            table
                .get(i)
                .copied()
                .filter(|&g| g != u32::MAX)
                .map(|g| g as usize)
        };
        let segs = &self.segs;
        let seg_group = |seg: u32| group_of(segs[seg as usize].p as usize);
        for c in self.body_contacts.iter().filter(|c| c.dynamic) {
            if let Some(g) = seg_group(c.seg) {
                left_out[g] = true;
            }
        }
        // A contact between two segments of one cable whose collision
        // radius is larger than its segments are long is held as it is in
        // these passes (`crowded_self_contact`): an empirical cut-off.
        // Such a cable's pairs a few segments apart touch as soon as it
        // bends (those within its thickness while it lies straight are no
        // pairs), and driven towards meeting them by many passes within a
        // substep, one (61 segments of 1.1 cm, 3.4 cm in radius, thrown at
        // 16 m/s in a random scene) had links 509% long for a step and
        // 23,000 J of strain energy in a scene of 500 J. With its group
        // left out instead, the passes alone left such chains far off: a
        // cable of 54 segments of 3.7 cm, 3.9 cm in radius, pinned at one
        // end and thrown at 16 m/s partly away from the pin, ended its
        // first step with a link 211% long (the passes' errors 58%, 103%,
        // 55%, 25% in its first substep; 2.3% without its radius), and one
        // bent about its pin kept links up to 320% long for many steps (a
        // thread's: 21%). Holding every contact of its group too (other
        // cables' in it, and those with groups taking no part), it moved
        // through the passes as if nothing touched it: thrown through a
        // pinned line, the fail-safe froze 1,795 particles and the energy
        // rose by 5,400 J over 418 J.
        // (By halves of the groups, on two threads for large systems.)
        let (x, split) = (&self.x, self.group_split);
        let find = |range: std::ops::Range<usize>| -> Vec<usize> {
            range
                .filter(|&g| !left_out[g])
                .filter(|&g| self.groups[g].worst_residual(x, 0, inv_h2) > STRAIN_TOLERANCE)
                .collect()
        };
        let (mut strained, mut upper) = both(
            self.parallel(),
            || find(0..split),
            || find(split..self.groups.len()),
        );
        strained.append(&mut upper);
        let lanes = |g: &usize| {
            self.groups[*g]
                .lane_ranges()
                .map(|r| r.len())
                .sum::<usize>()
        };
        if strained.is_empty() || strained.iter().map(lanes).sum::<usize>() > STRAIN_WORK {
            return;
        }
        let mut is_strained = vec![false; self.groups.len()];
        for &g in &strained {
            is_strained[g] = true;
        }
        // The groups across their contacts with segments join them (but
        // for those left out).
        let mut local = is_strained.clone();
        for (_, _, _, ct) in self.selected_in_order() {
            let groups = ct.particles().map(group_of);
            if groups.iter().flatten().any(|&g| is_strained[g])
                && !groups.iter().any(|g| g.is_none_or(|g| left_out[g]))
            {
                for g in groups.into_iter().flatten() {
                    local[g] = true;
                }
            }
        }
        // Every contact of theirs, in the regular passes' order; one with a
        // group left out holds only their side (as against a fixed
        // segment). Without those, a layer of cables under one a box lay
        // on sprang up through it in the passes, and the box sank 9 mm
        // further into the heap; holding the groups across the strained
        // ones' contacts so too, the other cable never gave way in the
        // passes (of 40 random drops of a cable onto a line pinned at
        // both ends, 34 left a link over 5% off its length).
        let mut pairs: Vec<(usize, usize, usize)> = Vec::new();
        let mut edges: Vec<(Contact, usize, usize, usize)> = Vec::new();
        for (half, l, k, ct) in self.selected_in_order() {
            let groups = ct.particles().map(group_of);
            if !groups.iter().flatten().any(|&g| local[g]) {
                continue;
            }
            if self.crowded_self_contact(ct) {
                continue;
            }
            let out = groups.map(|g| g.is_none_or(|g| !local[g]));
            if !out.contains(&true) {
                pairs.push((half, l, k));
            } else if let Some(edge) = one_sided(ct, out, &self.w) {
                edges.push((edge, half, l, k));
            }
        }
        let is_local = local;
        let local: Vec<usize> = (0..is_local.len()).filter(|&g| is_local[g]).collect();
        // Their contacts with static and kinematic bodies.
        let bodies: Vec<usize> = (0..self.coupled_split)
            .filter(|&k| seg_group(self.body_contacts[k].seg).is_some_and(|g| is_local[g]))
            .collect();
        // At most [`STRAIN_WORK`] particle solves in all.
        let particles = local.iter().map(lanes).sum::<usize>().max(1);
        let passes = ((STRAIN_PASSES * iterations) as usize).min(STRAIN_WORK / particles);
        if passes == 0 {
            return;
        }
        let worst = |sys: &Self| {
            local
                .iter()
                .map(|&g| sys.groups[g].worst_residual(&sys.x, 0, inv_h2))
                .fold(0.0, f32::max)
        };
        // Until they converge. (The residual does not fall steadily: ended
        // where eight passes had not cut it by 1%, they left 6 of 40
        // random drops of a cable onto a pinned line with a link over 5%
        // off, against 2 without that rule. A cable pinched so that
        // nothing meets every constraint takes them to their limit.)
        for _ in 0..passes {
            self.local_pass(&local, &bodies, &pairs, inv_h2, h);
            for (edge, half, l, k) in &edges {
                let lambda = &mut self.selected[*half][*l].lambda[*k..*k + 1];
                solve_pairs(std::slice::from_ref(edge), lambda, &mut self.x, 0);
            }
            self.stats.strained_passes += 1;
            if worst(self) <= STRAIN_TOLERANCE {
                break;
            }
        }
    }

    /// Whether contact `ct` is between two segments of one cable whose
    /// collision radius is larger than its segments are long (see
    /// [`Self::solve_strained_chains`]).
    fn crowded_self_contact(&self, ct: &Contact) -> bool {
        // (A contact names each segment by its first particle, whose
        // second segment slot is that segment.)
        let seg = |p: u32| self.segs[self.part_segs[p as usize][1] as usize];
        let (a, b) = (seg(ct.pa), seg(ct.pb));
        a.cable == b.cable && self.props[a.cable as usize].radius > a.rest
    }
}

/// Contact `ct` with the particles `out` (in the order of
/// [`Contact::particles`]) held where they are: the whole correction goes
/// to the others, by their weights and inverse masses (`w`, by particle;
/// `None`: they have none). The held particles count as without mass for
/// the depth ([`Contact::depth`]): a kept segment pinned at one end
/// against a held one would else have its free particle undo the pinned
/// corner's depth through the lever `1/s` (a contact at s = 0.01, 1 mm
/// deep, moved it 100 mm).
fn one_sided(ct: &Contact, out: [bool; 4], w: &[f32]) -> Option<Contact> {
    // Each share is `weightᵢ·wᵢ / Σ weight²·w`, so the sum of the kept ones'
    // `weightᵢ·shareᵢ` is the kept part of that sum.
    let weights = ct.weights();
    let kept: f32 = (0..4)
        .filter(|&m| !out[m])
        .map(|m| weights[m] * ct.share[m])
        .sum();
    if kept <= 1.0e-6 {
        return None;
    }
    let share = std::array::from_fn(|m| if out[m] { 0.0 } else { ct.share[m] / kept });
    // As the selection sets it: bits only when each segment has one.
    let ids = ct.particles();
    let mut fixed = (0..4).fold(0, |f, m| f | (((out[m] || w[ids[m]] == 0.0) as u32) << m));
    if fixed & 3 == 0 || fixed & 12 == 0 {
        fixed = 0;
    }
    Some(Contact {
        share,
        fixed,
        ..*ct
    })
}

#[cfg(test)]
mod tests {
    use super::super::kernels::solve_pairs;
    use super::*;
    use crate::physics::math::Vec3;

    /// Segment A from particle 0, 1 m along x from x = −0.5, and B from
    /// particle 2, 1 m along z at x = `at`, 1 cm above: their contact at
    /// `s` along A (where B crosses) and B's middle, 1.1 cm thick together
    /// (1 mm deep), the particles' inverse masses `w`.
    fn crossed(at: f32, s: f32, w: &[f32; 4]) -> (Vec<Vec3>, Contact) {
        let x = vec![
            Vec3::new(-0.5, 0.0, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(at, 0.01, -0.5),
            Vec3::new(at, 0.01, 0.5),
        ];
        let mut ct = Contact {
            pa: 0,
            pb: 2,
            n: Vec3::Y,
            thickness: 0.011,
            s,
            u: 0.5,
            share: [0.0; 4],
            fixed: 0,
        };
        let weights = ct.weights();
        let denom: f32 = (0..4).map(|m| weights[m] * weights[m] * w[m]).sum();
        ct.share = std::array::from_fn(|m| weights[m] * w[m] / denom);
        (x, ct)
    }

    /// Two crossed segments 1 mm too close (A from particle 0 along x, B
    /// from particle 2 along z, 1 cm above, 1.1 cm thick together): the
    /// contact solved whole moves both; held on B's side, it moves only
    /// A, by the whole depth, and B not at all.
    #[test]
    fn a_one_sided_contact_moves_only_the_side_it_keeps() {
        let w = [1.0, 3.0, 2.0, 0.5];
        let (x0, ct) = crossed(0.2, 0.7, &w);
        let depth = |x: &[Vec3]| ct.depth(x, 0);
        assert!((depth(&x0) - 0.001).abs() < 1.0e-6);

        let mut whole = x0.clone();
        solve_pairs(&[ct], &mut [0.0], &mut whole, 0);
        assert!(depth(&whole) < 1.0e-6, "whole: {}", depth(&whole));
        assert!((0..4).all(|m| whole[m] != x0[m]), "each particle moves");

        let edge = one_sided(&ct, [false, false, true, true], &w).unwrap();
        let mut held = x0.clone();
        solve_pairs(&[edge], &mut [0.0], &mut held, 0);
        assert!(depth(&held) < 1.0e-6, "one-sided: {}", depth(&held));
        assert_eq!((held[2], held[3]), (x0[2], x0[3]), "B stays");
        assert!(held[0].y < 0.0 && held[1].y < 0.0, "A moves away");
        // With neither kept particle able to move, there is nothing to do.
        let w0 = Contact {
            share: [0.0, 0.0, ct.share[2], ct.share[3]],
            ..ct
        };
        assert!(one_sided(&w0, [false, false, true, true], &w).is_none());
    }

    /// A segment pinned at its first particle, its contact with a held one
    /// 1% of the way from the pin and 1 mm deep: held, the other segment
    /// counts as a fixed one, so the free particle comes out by its own
    /// depth (1 mm), not by the pinned corner's through the lever 1/s (it
    /// moved 100 mm when the held particles still counted as free).
    #[test]
    fn a_one_sided_contact_next_to_a_pin_moves_the_free_particle_by_its_own_depth() {
        let w = [0.0, 1.0, 1.0, 1.0];
        let (x0, ct) = crossed(-0.49, 0.01, &w);
        let edge = one_sided(&ct, [false, false, true, true], &w).unwrap();
        let mut x = x0.clone();
        solve_pairs(&[edge], &mut [0.0], &mut x, 0);
        assert_eq!((x[0], x[2], x[3]), (x0[0], x0[2], x0[3]));
        let moved = (x0[1] - x[1]).length();
        assert!(
            (moved - 0.001).abs() < 1.0e-4,
            "the free particle moved {moved} m"
        );
    }
}
