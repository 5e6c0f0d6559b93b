//! The broad phase's candidate limit: the axes it tracks to keep the
//! candidates within it (see [`BroadPhase::set_candidate_limit`]).

use super::BroadPhase;

impl BroadPhase {
    /// At most `limit` candidate pairs (pairs overlapping on the tracked
    /// axes; `None`: no limit). An update that meets it counts again from
    /// scratch with every axis tracked; one that would find more even then
    /// stops at the limit: its pairs are then incomplete and
    /// [`Self::overflowed`] is true until an update finds them all again
    /// (each update rebuilds them until one does). The memory of a sweep is
    /// bounded so, whatever the boxes. Set it before the first update:
    /// lowering it later does not drop candidates already kept.
    pub fn set_candidate_limit(&mut self, limit: Option<usize>) {
        self.candidate_limit = limit;
    }

    /// Whether the last update stopped at the candidate limit (its pairs
    /// are incomplete).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// With a candidate limit: while the candidates the tracked axes would
    /// let through are estimated past three quarters of the limit (scaled
    /// by the sampled overlap fractions from the last update's count, or
    /// from all pairs), tracks the most selective of the other axes too.
    /// Many large boxes overlap along every axis (19,000 fast spheres in a
    /// ball of 200 m: 18% on each), and one axis would then let about 32
    /// million candidates through for 1.5 million pairs. Not sooner: an
    /// unselective axis costs its insertion sort (a falling column of
    /// 20,000 boxes 10 wide, 3 million candidates along its one tracked
    /// axis, took 78 ms a step with a second one added at 3 million instead
    /// of 32 without). Axes added here, or after an update that met the
    /// limit ([`Self::track_all_axes`]), stay tracked while the estimate
    /// without them is past half the limit (each change of axes rebuilds
    /// the candidates). The estimate takes the axes as independent, which
    /// they need not be: when dropping them meets the limit, they are kept
    /// for 8 updates before the next try, then 16, and so on to 1,024 (a
    /// reviewer's column among boxes on a floor dropped and tracked them
    /// again at every update, 1.6 s each).
    pub(super) fn bound_candidates(&mut self, p: [f64; 3], next: &mut [bool; 3]) {
        let policy = *next;
        self.dropped = false;
        let Some(limit) = self.candidate_limit else {
            self.bounded = [false; 3];
            return;
        };
        // Scaled from the last update's candidates, exact for the axes
        // tracked then (a fraction sampled from 256 pairs is noisy when
        // small), or from all pairs.
        let n = self.len as f64;
        let fraction = |m: &[bool; 3]| {
            (0..3)
                .filter(|&a| m[a])
                .map(|a| p[a].max(1.0 / super::SAMPLE_PAIRS as f64))
                .product::<f64>()
        };
        let (base, base_mask) = if self.candidates.is_empty() {
            (n * (n - 1.0) / 2.0, [false; 3])
        } else {
            (self.candidates.len() as f64, self.tracked)
        };
        let estimate = |m: &[bool; 3]| base * fraction(m) / fraction(&base_mask);
        if self.bounded.iter().any(|&b| b) {
            if self.drop_wait > 0 || estimate(next) > limit as f64 / 2.0 {
                self.drop_wait = self.drop_wait.saturating_sub(1);
                for (t, &kept) in next.iter_mut().zip(&self.bounded) {
                    *t |= kept;
                }
            } else {
                self.dropped = true;
            }
        }
        while estimate(next) > 0.75 * limit as f64 {
            let Some(axis) = (0..3)
                .filter(|&a| !next[a])
                .min_by(|&a, &b| p[a].total_cmp(&p[b]))
            else {
                break;
            };
            next[axis] = true;
        }
        self.bounded = [0, 1, 2].map(|a| next[a] && !policy[a]);
    }

    /// Tracks every axis from now on (the lists of those not tracked built
    /// and sorted, fresh proxies merged in), as axes added to bound the
    /// candidates ([`Self::bound_candidates`] keeps them while needed).
    pub(super) fn track_all_axes(&mut self) {
        for axis in 0..3 {
            if self.tracked[axis] {
                continue;
            }
            self.build_list(axis);
            self.lists[axis].sort_unstable();
            if !self.fresh.is_empty() {
                self.merge_fresh(axis);
            }
            self.tracked[axis] = true;
            self.bounded[axis] = true;
        }
    }
}
