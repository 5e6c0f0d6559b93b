//! The contacts of a substep: which pairs are solved in it, with what
//! direction and points (the segments' closest points at its start, kept
//! between nearly parallel segments), laid out for the passes.

use super::kernels::{closest_direction, moves_anything, pair_gap, pair_points};
use super::{both, CableSystem, Pair, Vec3, ACTIVE_SLACK};

/// How much nearer (m) the closest points of a substep's start must be
/// than those a contact kept for it to move to them: for (nearly) parallel
/// segments, lying side by side, the closest points jump from one end of
/// the overlap to the other at the least change, and a contact moved with
/// them pushed a particle back and forth every substep (a cable squeezed
/// between two others on a floor never slept).
const CONTACT_HYSTERESIS: f32 = 1.0e-4;
/// Segments at a smaller sin² of their angle are (nearly) parallel; only
/// those keep their contact's coordinates ([`CONTACT_HYSTERESIS`]): the
/// closest points of crossing segments are unique, and a kept point that
/// lagged behind a rod sliding across a rail tilted the contact's normal
/// forwards (it slid 6% too far).
const PARALLEL: f32 = 0.01;
/// Pairs per block of the selection's work counts
/// ([`CableSystem::select_active`]; fewer in tests, whose systems are small).
const SELECT_BLOCK: usize = if cfg!(test) { 16 } else { 256 };

/// A pair solved in the current substep, with what its passes read laid
/// out in one cache line: the particles, the contact coordinates along A
/// and B (the weights of `B(u) − A(s)`), and each particle's share of a
/// correction (`sgn·wᵢ·(1/mᵢ) / Σ wᵢ²/mᵢ`). What the passes write (the
/// correction applied) and what only the substep's end reads (friction,
/// restitution) are kept apart ([`Contacts`]), so that a pass reads a line
/// per contact and writes none of them.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct Contact {
    /// The first particles of A and B.
    pub(super) pa: u32,
    pub(super) pb: u32,
    pub(super) n: Vec3,
    pub(super) thickness: f32,
    pub(super) s: f32,
    pub(super) u: f32,
    pub(super) share: [f32; 4],
    /// Bit `k` set for particle `k` (in the order of `share`) without mass,
    /// when each segment has one (else 0): see [`Contact::depth`].
    pub(super) fixed: u32,
}

impl Contact {
    /// How deep the segments are along `n` (0 when apart), in `x` (which
    /// holds particles `x0..`). The gap `n·(B(u) − A(s))` is the sum of
    /// its corners' gaps, between each end of A and each end of B, weighted
    /// by `(1 − s or s)·(1 − u or u)`. A corner between two particles
    /// without mass (pinned, or loaded as pinned while their cable sleeps)
    /// counts only while it is open: its depth is no moving particle's to
    /// undo. Taken whole, a contact a fraction `s` of a segment from its
    /// pin, against a pinned cable the pin itself was 1 mm into, moved the
    /// free particle 1 mm/s a pass, and threw a cable pinned at one end at
    /// up to 458 m/s (s = 10⁻⁴; 13 m/s at s = 0.01). As the body contacts'
    /// pinned end (`kernels::body_gap`).
    #[inline]
    pub(super) fn depth(&self, x: &[Vec3], x0: usize) -> f32 {
        if self.fixed == 0 {
            return (self.thickness - self.n.dot(self.gap(x, x0))).max(0.0);
        }
        let along = self.particles().map(|i| self.n.dot(x[i - x0]));
        let (fa, fb) = ([1.0 - self.s, self.s], [1.0 - self.u, self.u]);
        let mut gap = 0.0;
        for a in 0..2 {
            for b in 0..2 {
                let mut corner = along[2 + b] - along[a] - self.thickness;
                if self.fixed & (1 << a) != 0 && self.fixed & (1 << (2 + b)) != 0 {
                    corner = corner.max(0.0);
                }
                gap += fa[a] * fb[b] * corner;
            }
        }
        (-gap).max(0.0)
    }

    /// `B(u) − A(s)` over `x` (which holds particles `x0..`): of the
    /// positions, the gap; of velocities, how fast it changes.
    #[inline]
    pub(super) fn gap(&self, x: &[Vec3], x0: usize) -> Vec3 {
        let (ids, weight) = (self.particles(), self.weights());
        (0..4).fold(Vec3::ZERO, |g, m| g + x[ids[m] - x0] * weight[m])
    }

    /// The four particles, in the order of `weights` and `share`.
    #[inline]
    pub(super) fn particles(&self) -> [usize; 4] {
        let (a, b) = (self.pa as usize, self.pb as usize);
        [a, a + 1, b, b + 1]
    }

    /// The weights of the four particles in `B(u) − A(s)`.
    #[inline]
    pub(super) fn weights(&self) -> [f32; 4] {
        [-(1.0 - self.s), -self.s, 1.0 - self.u, self.u]
    }
}

/// Contacts of a substep, with the correction each applied (`lambda`, > 0:
/// it pushed), its restitution and its friction.
#[derive(Clone, Debug, Default)]
pub(super) struct Contacts {
    pub(super) list: Vec<Contact>,
    pub(super) lambda: Vec<f32>,
    pub(super) e: Vec<f32>,
    pub(super) mu: Vec<f32>,
}

impl Contacts {
    pub(super) fn clear(&mut self) {
        self.list.clear();
        self.lambda.clear();
        self.e.clear();
        self.mu.clear();
    }

    pub(super) fn push(&mut self, c: Contact, e: f32, mu: f32) {
        self.list.push(c);
        self.lambda.push(0.0);
        self.e.push(e);
        self.mu.push(mu);
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.list.len()
    }
}

/// A selected pair's contact at the substep's start (`prev`): the
/// direction from A's point to B's and the points' coordinates along A and
/// B. Those the contact kept (`cs`, `cu`) while they are no more than
/// [`CONTACT_HYSTERESIS`] farther apart than the closest points, else the
/// closest points (which it keeps from then on); the pair's plane when the
/// segments (nearly) touch.
fn contact_direction(p: &mut Pair, prev: &[Vec3]) -> (Vec3, f32, f32) {
    let (a, b) = (p.pa as usize, p.pb as usize);
    let q = [prev[a], prev[a + 1], prev[b], prev[b + 1]];
    let Some((n, s, u)) = closest_direction(q[0], q[1], q[2], q[3]) else {
        return (p.n, p.s, p.u);
    };
    let (e1, e2) = (q[1] - q[0], q[3] - q[2]);
    let parallel =
        e1.cross(e2).length_squared() < PARALLEL * e1.length_squared() * e2.length_squared();
    if parallel {
        let gap = |s: f32, u: f32| q[2].lerp(q[3], u) - q[0].lerp(q[1], s);
        let kept = gap(p.cs, p.cu);
        let d = kept.length();
        if d > 1.0e-6 && d <= gap(s, u).length() + CONTACT_HYSTERESIS {
            // Across the segments where they lie side by side: where B
            // slid along A since the points were kept, the line between
            // them leans along the segments and would push B on along
            // them. Not where they lie end to end (in line, their gap is
            // along them): the hysteresis leaves a lean of at most about
            // √(2·d·0.1 mm), under a third of `d` for any cable's
            // thickness.
            let across = kept - e1 * (kept.dot(e1) / e1.length_squared());
            let len = across.length();
            let n = if len > 0.9 * d {
                across / len
            } else {
                kept / d
            };
            return (n, p.cs, p.cu);
        }
    }
    (p.cs, p.cu) = (s, u);
    (n, s, u)
}

impl CableSystem {
    /// The substep's contacts between segments with where they are in
    /// `selected` (part of the pair list, list, index), in the order a
    /// regular pass solves them: each side's own lists (0, then 1), then
    /// the lists across, each over both parts of the pair list.
    pub(super) fn selected_in_order(
        &self,
    ) -> impl Iterator<Item = (usize, usize, usize, &Contact)> + '_ {
        (0..3).flat_map(move |l| {
            (0..2).flat_map(move |half| {
                let list = &self.selected[half][l].list;
                list.iter().enumerate().map(move |(k, ct)| (half, l, k, ct))
            })
        })
    }

    /// Contacts to solve: pairs within a slack of touching once predicted
    /// (the passes move particles by corrections only; one that closes in
    /// later is solved next substep, and crossing is ruled out by the
    /// verification whatever the solve does), sorted into the halves. A
    /// contact's direction and points are those of the segments' closest
    /// points at the substep's start ([`contact_direction`]; kept from an
    /// earlier substep between nearly parallel segments), not the pair's
    /// plane: that may be of
    /// the step's start, and through the end of a segment that a cable
    /// slides onto it leans back towards the cable and holds it back (a
    /// ghost contact at the joint). The plane is still what the
    /// verification proves with.
    ///
    /// The pair list is cut where the work of the last selection halves
    /// (a pair, and two more for each one selected; counted by blocks of
    /// [`SELECT_BLOCK`] pairs), not at its middle: the pairs of the
    /// cables that landed first, low in the list, are selected about twice
    /// as often as the rest in the 50,000-segment heap. The contacts are
    /// solved in pair order within each side wherever the cut falls.
    /// Returns where the list was cut (pairs in the lower part).
    pub(super) fn select_active(&mut self, par: bool) -> usize {
        let n = self.pairs.len();
        let blocks = &mut self.select_blocks;
        blocks.resize(n.div_ceil(SELECT_BLOCK), 0);
        let work = |b: usize, sel: u32| SELECT_BLOCK.min(n - b * SELECT_BLOCK) + 2 * sel as usize;
        let total: usize = blocks.iter().enumerate().map(|(b, &c)| work(b, c)).sum();
        let (mut acc, mut cut) = (0, blocks.len());
        for (b, &c) in blocks.iter().enumerate() {
            if 2 * acc >= total {
                cut = b;
                break;
            }
            acc += work(b, c);
        }
        let half = (cut * SELECT_BLOCK).min(n);
        let (x, split) = (&self.x, self.split);
        let (w, prev) = (&self.w, &self.prev);
        let select = |list: &mut [Pair], out: &mut [Contacts; 3], counts: &mut [u32]| {
            out.iter_mut().for_each(Contacts::clear);
            counts.iter_mut().for_each(|c| *c = 0);
            for (k, p) in list.iter_mut().enumerate() {
                if p.thickness <= 0.0 {
                    continue;
                }
                let pts = pair_points(p);
                let c = p.n.dot(pair_gap(&pts, x, 0)) - p.thickness;
                if c < ACTIVE_SLACK {
                    let (n, s, u) = contact_direction(p, prev);
                    let pts = pair_points(&Pair { s, u, ..*p });
                    let denom: f32 = pts.iter().map(|&(i, wg, _)| wg * wg * w[i]).sum();
                    if !moves_anything(denom) {
                        continue;
                    }
                    counts[k / SELECT_BLOCK] += 1;
                    let (lo, hi) = (pts[0].0.min(pts[2].0), pts[1].0.max(pts[3].0));
                    let side = if hi < split {
                        0
                    } else if lo >= split {
                        1
                    } else {
                        2
                    };
                    // (A loop: `pts.map` with its division was 4% of the
                    // 10,000-segment bench.)
                    let (inv, mut share) = (1.0 / denom, [0.0f32; 4]);
                    for (sh, &(i, wg, sgn)) in share.iter_mut().zip(&pts) {
                        *sh = sgn * wg * w[i] * inv;
                    }
                    let mut fixed = 0;
                    for (k, &(i, _, _)) in pts.iter().enumerate() {
                        fixed |= ((w[i] == 0.0) as u32) << k;
                    }
                    if fixed & 3 == 0 || fixed & 12 == 0 {
                        fixed = 0;
                    }
                    let contact = Contact {
                        pa: pts[0].0 as u32,
                        pb: pts[2].0 as u32,
                        n,
                        thickness: p.thickness,
                        s,
                        u,
                        share,
                        fixed,
                    };
                    out[side].push(contact, p.e, p.mu);
                }
            }
        };
        let [sel0, sel1] = &mut self.selected;
        let (lower, upper) = self.pairs.split_at_mut(half);
        let (c_lo, c_hi) = blocks.split_at_mut(cut);
        both(
            par,
            || select(lower, sel0, c_lo),
            || select(upper, sel1, c_hi),
        );
        half
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cable::{Cable, CableSpec};

    /// A mat of crossing cables, every other one across, pressed 1 mm
    /// into each other (contacts within each half of the cables and
    /// across): the selection cuts the pair list where the last
    /// selection's work halves (at the middle with nothing counted, right
    /// after the first block when that block had every selection), and a
    /// substep ends with bitwise the same positions and velocities
    /// wherever the cut falls, with each side's contacts the same, in the
    /// same order.
    #[test]
    fn the_selection_cuts_where_its_work_halves_and_its_contacts_do_not_depend_on_it() {
        let mut cables = Vec::new();
        for k in 0..20u64 {
            let c = -1.0 + (k / 2) as f32 * 0.2;
            // Crossing 2 cm from a particle of each (not at one: contacts
            // of neighbouring segments then differ).
            let (from, to) = if k % 2 == 0 {
                ([-1.0, 0.0, c + 0.02], [1.0, 0.0, c + 0.02])
            } else {
                ([c + 0.12, 0.039, -1.0], [c + 0.12, 0.039, 1.0])
            };
            let mut spec = CableSpec::new(from, to, 20);
            spec.radius = 0.02;
            cables.push(Cable::from_spec(&spec, k).unwrap());
        }
        let (h, g) = (1.0 / 240.0, Vec3::new(0.0, -9.81, 0.0));
        let mut sys = CableSystem::default();
        sys.load(&cables);
        sys.begin(1.0 / 60.0, h, g);
        sys.balance();
        let start = sys.clone();
        let n = sys.pairs.len();
        assert!(n > 8 * SELECT_BLOCK, "{n} pairs");
        // Each side's contacts: particles, coordinates, normal, shares.
        type Sides = Vec<Vec<(u32, u32, f32, f32, Vec3, [f32; 4])>>;
        let contacts = |sys: &CableSystem| -> Sides {
            (0..3)
                .map(|side| {
                    sys.selected
                        .iter()
                        .flat_map(|half| &half[side].list)
                        .map(|c| (c.pa, c.pb, c.s, c.u, c.n, c.share))
                        .collect()
                })
                .collect()
        };
        // Nothing counted: the first block boundary at or past the middle.
        sys.prev = sys.x.clone();
        let middle = sys.select_active(false);
        assert_eq!(middle, n.div_ceil(2).div_ceil(SELECT_BLOCK) * SELECT_BLOCK);
        let even = contacts(&sys);
        for (side, list) in even.iter().enumerate() {
            assert!(list.len() > 10, "side {side}: {} contacts", list.len());
        }
        // Every selection counted in the first block: the cut right after it.
        sys.select_blocks.iter_mut().for_each(|c| *c = 0);
        sys.select_blocks[0] = n as u32;
        assert_eq!(sys.select_active(false), SELECT_BLOCK);
        let below: usize = sys.selected[0].iter().map(Contacts::len).sum();
        let above: usize = sys.selected[1].iter().map(Contacts::len).sum();
        assert!(
            below > 0 && above > 0,
            "{below} below the cut, {above} above"
        );
        // A whole substep with each cut (and the selection on two threads):
        // the same contacts, positions and velocities.
        let mut ends = Vec::new();
        let blocks = n.div_ceil(SELECT_BLOCK);
        for heavy in std::iter::once(None).chain((0..blocks).map(Some)) {
            let mut sys = start.clone();
            sys.select_blocks = vec![0; blocks];
            if let Some(b) = heavy {
                sys.select_blocks[b] = n as u32;
            }
            sys.solve_substep(h, g, 4);
            let selected = contacts(&sys);
            sys.finish_substep(h, false);
            ends.push((selected, sys.x.clone(), sys.v.clone()));
        }
        sys.select_blocks.iter_mut().for_each(|c| *c = 0);
        sys.select_active(true);
        assert_eq!(contacts(&sys), even);
        assert!(ends[0].0[0].len() > 10, "the substep solves contacts");
        for (k, end) in ends.iter().enumerate().skip(1) {
            assert!(*end == ends[0], "cut {k} gives another substep");
        }
    }

    /// A cable pinned at its first particle, touching a cable pinned at
    /// both ends 1e-21 of its length from its pin: the contact moves so
    /// little (Σ wᵢ²/mᵢ ≈ 1e-41, whose inverse overflows f32) that it is
    /// not solved, instead of giving the particles infinite and NaN
    /// shares (0·∞ for a pinned one) that turned their positions to NaN.
    #[test]
    fn a_contact_too_near_a_pin_to_move_anything_is_not_solved() {
        let x = 2.0e-22;
        let mut a = CableSpec::new([0.0, 0.0, 0.0], [0.2, 0.0, 0.0], 1);
        a.pinned = vec![0];
        let mut b = CableSpec::new([x, 0.03, -0.1], [x, 0.03, 0.1], 1);
        b.pinned = vec![0, 1];
        let cables = [a, b].map(|mut spec| {
            spec.radius = 0.02;
            spec
        });
        let cables: Vec<Cable> = (0..2)
            .map(|k| Cable::from_spec(&cables[k], k as u64).unwrap())
            .collect();
        let (h, g) = (1.0 / 240.0, Vec3::ZERO);
        let mut sys = CableSystem::default();
        sys.load(&cables);
        sys.begin(1.0 / 60.0, h, g);
        assert_eq!(sys.pairs.len(), 1, "the cables touch");
        sys.prev = sys.x.clone();
        let (_, s, _) = contact_direction(&mut sys.pairs[0].clone(), &sys.prev);
        assert!(s > 0.0 && s < 1.0e-20, "the contact is at s = {s}");
        sys.select_active(false);
        let selected: usize = sys.selected.iter().flatten().map(Contacts::len).sum();
        assert_eq!(selected, 0);
        for _ in 0..4 {
            sys.solve_substep(h, g, 4);
            sys.finish_substep(h, false);
        }
        assert!(
            sys.x.iter().chain(&sys.v).all(|q| q.is_finite()),
            "{:?} {:?}",
            sys.x,
            sys.v
        );
    }

    /// Two parallel segments side by side (a cable lying along another),
    /// jostled by a few µm at each substep: their closest points jump
    /// between the ends of the overlap, but the contact keeps its points
    /// (within the hysteresis of each other's distance), and its normal
    /// stays across the segments when one slides along the other (along
    /// them for segments end to end); a rod crossing a rail takes the
    /// closest points whenever they move, however little.
    #[test]
    fn a_contact_between_parallel_segments_keeps_its_points() {
        let mut cables = Vec::new();
        for (k, (from, to)) in [
            ([0.0, 0.0, 0.0], [0.2, 0.0, 0.0]),
            ([0.05, 0.0, 0.039], [0.25, 0.0, 0.039]),
        ]
        .into_iter()
        .enumerate()
        {
            let mut spec = CableSpec::new(from, to, 1);
            spec.radius = 0.02;
            cables.push(Cable::from_spec(&spec, k as u64).unwrap());
        }
        let mut sys = CableSystem::default();
        sys.load(&cables);
        sys.begin(1.0 / 60.0, 1.0 / 240.0, Vec3::ZERO);
        assert_eq!(sys.pairs.len(), 1);
        use crate::physics::cable::lcg;
        let mut seed = 3;
        let (mut jumps, mut moves) = (0, 0);
        let mut last: Option<(f32, f32)> = None;
        for _ in 0..200 {
            let mut prev = sys.x.clone();
            for p in &mut prev {
                *p += (Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) - 0.5) * 4e-6;
            }
            let q = [prev[0], prev[1], prev[2], prev[3]];
            let (_, s, u) = closest_direction(q[0], q[1], q[2], q[3]).unwrap();
            if last.is_some_and(|(ls, lu)| (ls - s).abs() + (lu - u).abs() > 0.1) {
                jumps += 1;
            }
            last = Some((s, u));
            let kept = (sys.pairs[0].cs, sys.pairs[0].cu);
            let (n, cs, cu) = contact_direction(&mut sys.pairs[0], &prev);
            if (cs, cu) != kept {
                moves += 1;
            }
            assert!(n.z > 0.999, "the normal stays across: {n}");
        }
        assert!(jumps > 20, "the closest points jump: {jumps}");
        assert!(moves <= 1, "the contact's points moved {moves} times");
        // B slid 2 mm along A since the points were kept: the normal is
        // still across the segments, not along the line between the kept
        // points (which leans 3° along them).
        let mut slid = sys.x.clone();
        slid[2].x += 0.002;
        slid[3].x += 0.002;
        let (n, _, _) = contact_direction(&mut sys.pairs[0], &slid);
        assert!(n.x.abs() < 1e-3, "the normal leans along the segments: {n}");
        // In line, end to end, 3 cm apart (nearer than their 4 cm), B 2 mm
        // off A's line: the gap, and the normal, are along them.
        let mut inline = sys.pairs[0];
        let x = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.2, 0.0, 0.0),
            Vec3::new(0.23, 0.002, 0.0),
            Vec3::new(0.43, 0.003, 0.0),
        ];
        (inline.pa, inline.pb, inline.cs, inline.cu) = (0, 2, 1.0, 0.0);
        let (n, s, u) = contact_direction(&mut inline, &x);
        assert!(n.x > 0.99 && s == 1.0 && u == 0.0, "in line: {n}, {s}, {u}");
        // Crossing: a rod across a rail, 1 mm further along at each look.
        let mut rod = sys.pairs[0];
        for k in 0..10 {
            let x = [
                Vec3::new(0.1, 0.04, -0.5) + Vec3::X * 1e-3 * k as f32,
                Vec3::new(0.1, 0.04, 0.5) + Vec3::X * 1e-3 * k as f32,
                Vec3::new(-1.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
            ];
            rod.pa = 0;
            rod.pb = 2;
            let (n, s, u) = contact_direction(&mut rod, &x);
            assert!(
                (u - (1.1 + 1e-3 * k as f32) / 2.0).abs() < 1e-5,
                "{k}: u {u}"
            );
            assert!((s - 0.5).abs() < 1e-5 && n.y < -0.999, "{k}: s {s}, n {n}");
        }
    }
}
