//! Loading the cables into the stage and storing them back: the flat
//! arrays, which sleeping cables keep the last build's tubes, boxes and
//! filter records (`keep_sleepers`), the lanes and the halves the work is
//! split into (`balance`).

use super::super::Cable;
use super::{
    chains, CableStats, CableSystem, ChainGroup, Props, Seg, LANES, LANE_SEGMENTS, PARALLEL_FROM,
};

/// What a sleeping cable's tubes, boxes and filter records depend on
/// besides its positions: where its particles and segments are, its
/// radius and segment length. The same, with bitwise the same positions
/// and asleep both times, the last build's values stand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Kept {
    base: usize,
    seg_base: usize,
    len: usize,
    radius: u32,
    rest: u32,
}

/// Appends `from..to` to ascending ranges, merged with the last if they
/// meet.
fn push_run(runs: &mut Vec<(usize, usize)>, from: usize, to: usize) {
    match runs.last_mut() {
        Some(run) if run.1 == from => run.1 = to,
        _ if from < to => runs.push((from, to)),
        _ => {}
    }
}

impl CableSystem {
    /// Copies the cables in (positions, velocities, masses, segments).
    pub(crate) fn load(&mut self, cables: &[Cable]) {
        self.awake = cables
            .iter()
            .filter(|c| !c.sleeping)
            .map(|c| c.x.len())
            .sum();
        self.keep_sleepers(cables);
        self.x.clear();
        self.v.clear();
        self.w.clear();
        self.segs.clear();
        self.props.clear();
        for (ci, c) in cables.iter().enumerate() {
            let base = self.x.len() as u32;
            self.x.extend_from_slice(&c.x);
            self.v.extend_from_slice(&c.v);
            if c.sleeping {
                // Held like pins (its velocities are zero).
                self.w.resize(self.x.len(), 0.0);
            } else {
                self.w.extend_from_slice(&c.w);
            }
            let compliance = 1.0 / c.spec.stiffness;
            for s in 0..c.segments() as u32 {
                self.segs.push(Seg {
                    p: base + s,
                    cable: ci as u32,
                    rest: c.rest,
                    compliance,
                });
            }
            self.props.push(Props {
                radius: c.collision_radius(),
                restitution: c.spec.restitution,
                friction: c.spec.friction,
                damping: c.spec.damping,
            });
        }
        // Lanes: cut at the cable boundary nearest each share. A sleeping
        // cable is in none (nothing of it is solved).
        self.lanes.clear();
        let awake: usize = cables
            .iter()
            .filter(|c| !c.sleeping)
            .map(|c| c.segments())
            .sum();
        let share = awake.div_ceil(LANES).clamp(1, LANE_SEGMENTS);
        let (mut start, mut lane_start) = (0, 0);
        for c in cables {
            let end = start + c.segments();
            if c.sleeping {
                if lane_start < start {
                    self.lanes.push((lane_start, start));
                }
                lane_start = end;
            } else if end - lane_start >= share {
                self.lanes.push((lane_start, end));
                lane_start = end;
            }
            start = end;
        }
        if lane_start < start {
            self.lanes.push((lane_start, start));
        }
        let n = self.x.len();
        if self.last_dev.len() != n {
            self.last_dev.clear();
            self.last_dev.resize(n, 0.0);
        }
        self.part_segs.clear();
        self.part_segs.resize(n, [u32::MAX; 2]);
        for (k, s) in self.segs.iter().enumerate() {
            self.part_segs[s.p as usize][1] = k as u32;
            self.part_segs[s.p as usize + 1][0] = k as u32;
        }
        self.awake_runs.clear();
        self.awake_segs.clear();
        let (mut base, mut seg_base) = (0, 0);
        for c in cables {
            let (end, seg_end) = (base + c.x.len(), seg_base + c.segments());
            if !c.sleeping {
                push_run(&mut self.awake_runs, base, end);
                push_run(&mut self.awake_segs, seg_base, seg_end);
            }
            (base, seg_base) = (end, seg_end);
        }
        // Every particle's substep start (the substeps copy only the awake
        // ones again).
        self.prev.clear();
        self.prev.extend_from_slice(&self.x);
        self.v_start.clear();
        self.v_start.extend_from_slice(&self.v);
        self.frozen.clear();
        self.frozen.resize(n, false);
        // Halves of about equal segments (lanes may differ in length: a
        // long cable is a lane of its own), until the step's work is known
        // ([`Self::balance`], which also builds the groups).
        let middle = self.segs.len() / 2;
        self.set_split(self.lanes.partition_point(|&(a, b)| (a + b) / 2 < middle));
        self.stats = CableStats::default();
        self.body_contacts.clear();
        self.body_split = 0;
        self.coupled_split = 0;
        self.coupled.clear();
        self.coupled_of.clear();
        self.retired.clear();
        self.start.clear();
        self.start.extend_from_slice(&self.x);
    }

    /// Which cables' tubes, boxes and filter records the next build
    /// computes ([`Self::fresh`]): not those of a cable asleep at the last
    /// load (the stage's last run) and now, with the same place, radius,
    /// segment length and bitwise the same positions as that load's, if a
    /// build followed it. A sleeping cable's particles are loaded as pins
    /// (no mass, no velocity): their tubes are their positions with no
    /// velocity, slack or reach, from time 0 whenever the build; their
    /// boxes and records add only the radius and the link (particle,
    /// cable index, segment length); and nothing but a build writes them.
    /// The positions are compared with those loaded (`start`), not those
    /// the stage ended with: an impulse's zero share may still turn a
    /// −0.0 coordinate into +0.0. Called before the cables are copied in.
    fn keep_sleepers(&mut self, cables: &[Cable]) {
        let built = std::mem::replace(&mut self.built_since_load, false);
        #[cfg(test)]
        let built = built && !self.keep_off;
        self.kept = 0;
        let old = std::mem::take(&mut self.kept_keys);
        self.fresh.clear();
        self.fresh_segs.clear();
        let (mut base, mut seg_base) = (0, 0);
        for (ci, c) in cables.iter().enumerate() {
            let (len, segs) = (c.x.len(), c.segments());
            let key = c.sleeping.then_some(Kept {
                base,
                seg_base,
                len,
                radius: c.collision_radius().to_bits(),
                rest: c.rest.to_bits(),
            });
            let same_x = || {
                self.start.get(base..base + len).is_some_and(|old| {
                    old.iter().zip(&c.x).all(|(a, b)| {
                        a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits)
                    })
                })
            };
            let keep = built && key.is_some() && old.get(ci) == Some(&key) && same_x();
            if keep {
                self.kept += len;
            } else {
                push_run(&mut self.fresh, base, base + len);
                push_run(&mut self.fresh_segs, seg_base, seg_base + segs);
            }
            self.kept_keys.push(key);
            base += len;
            seg_base += segs;
        }
    }

    /// The halves: lanes below `lane_split` (at least one, if any) and the
    /// rest.
    fn set_split(&mut self, lane_split: usize) {
        self.lane_split = lane_split.max(1).min(self.lanes.len());
        self.split_seg = self
            .lanes
            .get(self.lane_split)
            .map_or(self.segs.len(), |l| l.0);
        self.split = self
            .segs
            .get(self.split_seg)
            .map_or(self.x.len(), |s| s.p as usize);
    }

    /// Moves the halves' boundary (a lane boundary) so that each half has
    /// about half the work of a pass, then builds each half's groups. Cables
    /// that rest in a heap have far more contacts than those still falling
    /// onto it: halves of equal segments left one thread with three times
    /// the other's work in the bench's heap. A particle's chain solve, a
    /// contact and a body contact take about 14, 25 and 25 ns: the work
    /// counts 2 per particle, 2 per end of each contact of the last step's
    /// last substep (of the pairs of this step when the cables changed
    /// since: 1 per end, about half are solved) and 4 per body contact.
    /// Called once a step, once the step's pairs and body contacts are
    /// known; the result is the same on any number of threads.
    pub(crate) fn balance(&mut self) {
        let n = self.x.len();
        if n >= PARALLEL_FROM && self.lanes.len() >= 2 {
            let before = self.lane_split;
            self.set_split(self.lane_split_by_work());
            if self.lane_split != before {
                self.sort_body_contacts();
            }
        }
        // Within each half, lanes of about equal length side by side (the
        // shorter lanes of a group are padded to the longest).
        let (mut lo, mut hi) = (
            self.lanes[..self.lane_split].to_vec(),
            self.lanes[self.lane_split..].to_vec(),
        );
        lo.sort_by_key(|&(a, b)| b - a);
        hi.sort_by_key(|&(a, b)| b - a);
        let (segs, props, w, part_segs) = (&self.segs, &self.props, &self.w, &self.part_segs);
        let group = |l: &[(usize, usize)]| ChainGroup::new(l, segs, props, w, part_segs);
        self.groups = lo.chunks(chains::GROUP).map(group).collect();
        self.group_split = self.groups.len();
        self.groups.extend(hi.chunks(chains::GROUP).map(group));
        self.particle_group.clear();
        self.particle_group.resize(n, u32::MAX);
        for (k, g) in self.groups.iter().enumerate() {
            for r in g.lane_ranges() {
                self.particle_group[r].fill(k as u32);
            }
        }
    }

    /// The lane where the estimated work of [`Self::balance`] halves.
    fn lane_split_by_work(&self) -> usize {
        let n = self.x.len();
        let mut work = vec![2u64; n];
        if self.last_layout == (n, self.segs.len()) {
            for c in self.selected.iter().flatten().flat_map(|l| &l.list) {
                work[c.pa as usize] += 2;
                work[c.pb as usize] += 2;
            }
        } else {
            for p in &self.pairs {
                work[p.pa as usize] += 1;
                work[p.pb as usize] += 1;
            }
        }
        for c in &self.body_contacts {
            work[self.segs[c.seg as usize].p as usize] += 4;
        }
        let segs = &self.segs;
        let lane_work: Vec<u64> = self
            .lanes
            .iter()
            .map(|&(a, b)| {
                work[segs[a].p as usize..segs[b - 1].p as usize + 2]
                    .iter()
                    .sum()
            })
            .collect();
        let total: u64 = lane_work.iter().sum();
        let mut acc = 0;
        for (k, &w) in lane_work.iter().enumerate() {
            // The lane goes below if most of it lies below the middle.
            if 2 * acc + w > total {
                return k;
            }
            acc += w;
        }
        lane_work.len()
    }

    /// Copies positions and velocities back (and remembers how far each
    /// particle strayed from its free flight).
    pub(crate) fn store(&mut self, cables: &mut [Cable]) {
        self.last_layout = (self.x.len(), self.segs.len());
        for i in 0..self.x.len() {
            self.last_dev[i] = (self.x[i] - self.pred_end[i]).length();
        }
        let mut k = 0;
        for c in cables {
            let n = c.x.len();
            c.x.copy_from_slice(&self.x[k..k + n]);
            c.v.copy_from_slice(&self.v[k..k + n]);
            k += n;
        }
    }
}
