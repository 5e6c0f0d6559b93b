//! Incremental sweep-and-prune (SAP) broad phase.
//!
//! # Model
//!
//! Every proxy is an axis-aligned box registered under a caller-chosen key
//! (a small dense integer such as an arena index). [`BroadPhase::insert`],
//! [`BroadPhase::update`], [`BroadPhase::update_fat`] and
//! [`BroadPhase::remove`] only record changes; [`BroadPhase::update_pairs`]
//! applies them and brings the overlapping-pair set up to date. The pair set
//! ([`BroadPhase::pairs`]) and the changes of the last update
//! ([`BroadPhase::added`], [`BroadPhase::removed`]) are always sorted by
//! `(lower key, higher key)`, so the same sequence of calls gives the same
//! outputs. Two boxes form a pair exactly when [`Aabb::overlaps`] says so
//! (closed intervals: touching boxes overlap).
//!
//! # Algorithm
//!
//! For each *tracked* axis the broad phase keeps the list of box endpoints
//! (min and max) sorted by `(value, min-before-max, key)`, packed into one
//! `u64` per endpoint. With that order, "the min of A comes before the max of
//! B" is exactly `A.min <= B.max`, the test `Aabb::overlaps` uses. Each frame
//! the stored endpoint values are re-read from the boxes (one linear pass per
//! tracked axis, whether or not a box changed; an update with no change at
//! all since the last one returns at once) and the lists are re-sorted by
//! insertion sort starting from the previous frame's order: with frame
//! coherence endpoints move only a few places, so this is close to linear. Whenever the min of A moves left past the max
//! of B, A and B may have started overlapping on that axis; the full test on
//! the tracked axes then decides whether `(A, B)` joins the *candidate set*.
//! Insertion sort performs exactly one swap per pair of endpoints whose
//! relative order changed, so every pair that starts overlapping on a
//! tracked axis is seen. Candidates that stopped overlapping are not looked
//! up when endpoints separate (that would cost a hash lookup per swap);
//! instead one linear pass per frame over the candidates drops those that no
//! longer overlap on the tracked axes, and runs [`Aabb::overlaps`] on the
//! rest to produce the reported pairs and the added/removed lists.
//!
//! New proxies are not inserted one endpoint at a time: at `update_pairs`
//! their endpoints are sorted and merged into each list in one linear pass,
//! and one sweep along the best axis finds the candidates that involve a new
//! proxy (cost: list length plus the new proxies' overlaps on that axis).
//! Removed proxies are compacted out of the lists in the same linear pass
//! that refreshes endpoint values.
//!
//! # The weak case, and the design choice
//!
//! Classic three-axis SAP degrades when many bodies are spread along one
//! axis only (a row of crates, a long corridor of debris): on the other two
//! axes all intervals overlap, their endpoints are packed into two narrow
//! clusters, and a small jitter of each body moves its endpoints past O(n)
//! others, so each frame costs O(n²) swaps, although the pairs themselves
//! are few. The same happens to the vertical axis of a flat scene resting on
//! the ground.
//!
//! This implementation therefore sorts only a *subset* of the axes — the
//! ones that actually separate boxes — and treats the others as a filter:
//!
//! * Candidates are the pairs overlapping on all *tracked* axes; reported
//!   pairs are the candidates that also overlap on the untracked axes
//!   (checked every frame, which costs one pass over the candidates). With
//!   all three axes tracked this is the classic incremental SAP; with one
//!   axis it is single-axis SAP with an incrementally maintained
//!   overlap set.
//! * Which axes to track is decided from a cheap, outlier-robust estimate:
//!   every update samples a fixed number of proxy pairs (with a deterministic
//!   generator) and measures, per axis, the fraction `p` of pairs whose
//!   intervals overlap; the estimate is smoothed over frames (and replaced
//!   outright when a sample differs by more than sampling noise can explain). An axis with
//!   small `p` prunes well and its endpoints are spread out (few swaps per
//!   unit of motion); an axis with `p` near 1 prunes nothing and is exactly
//!   the axis whose endpoints are clustered. An untracked axis becomes
//!   tracked when `p <= 0.15`, a tracked one is dropped when `p > 0.30`
//!   (hysteresis, so noise does not cause churn), and at least one axis,
//!   the most selective one, is always tracked. Changing the tracked set
//!   re-sorts the lists from scratch and rebuilds the candidates with one
//!   sweep, which costs O(n log n + overlaps on the sweep axis) once.
//! * For a line of bodies along X, `p` is about 1 on Y and Z and about 2/n on
//!   X: only X is sorted, the candidates are the few X-neighbours, and an
//!   update is linear. A uniformly scattered cloud tracks all three axes and
//!   behaves like classic SAP (its per-frame cost does not grow with the
//!   number of pairs that persist). A flat scene drops the vertical axis.
//! * Safety net: if the insertion sort of an axis exceeds a swap budget of
//!   about `n log n` (teleports, a reset of the whole scene), it is abandoned
//!   for a full sort and the candidates are rebuilt by a sweep, so an update
//!   never costs much more than a from-scratch sort-and-sweep.
//!
//! Choosing axes by overlap fraction instead of by variance of box centres
//! keeps a single far-away body from making a degenerate axis look spread
//! out, and measures directly what matters (how much an axis prunes and how
//! clustered its endpoints are), in units of the boxes' own sizes.
//!
//! # Requirements on boxes
//!
//! Boxes must have `min <= max` on every axis and no NaN (checked with debug
//! assertions). Keys must be below 2³¹; storage grows to the largest key.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::aabb::Aabb;

/// Pairs sampled per update to estimate how selective each axis is.
const SAMPLE_PAIRS: usize = 256;
/// Smoothing factor of the per-axis overlap-fraction estimate.
const EMA_ALPHA: f64 = 0.25;
/// A new sample this far from the smoothed estimate replaces it (with 256
/// samples the noise is at most about 0.03).
const EMA_SNAP: f64 = 0.25;
/// An untracked axis is tracked once its overlap fraction drops to this.
const TRACK_ON: f64 = 0.15;
/// A tracked axis is dropped once its overlap fraction exceeds this.
const TRACK_OFF: f64 = 0.30;
/// When no axis is selective, the current single axis is kept unless
/// another one is better by more than this.
const KEEP_SLACK: f64 = 0.10;

/// Which axes the broad phase keeps sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AxisPolicy {
    /// Choose the tracked axes from the boxes' distribution (see the module
    /// documentation). The default.
    #[default]
    Adaptive,
    /// Always track exactly these axes (X, Y, Z). `[true; 3]` is classic
    /// three-axis SAP. An all-false mask is treated as X only.
    Fixed([bool; 3]),
}

/// Figures about the last [`BroadPhase::update_pairs`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BroadPhaseStats {
    /// Axes whose endpoint lists are kept sorted.
    pub tracked_axes: [bool; 3],
    /// Axis used to sweep for new proxies and rebuilds.
    pub sweep_axis: usize,
    /// Endpoint moves performed by the insertion sorts.
    pub swaps: u64,
    /// Whether the candidate set was rebuilt from scratch.
    pub rebuilt: bool,
    /// Pairs overlapping on all tracked axes (checked each frame).
    pub candidates: usize,
    /// Pairs overlapping on all axes.
    pub pairs: usize,
    /// Smoothed estimate of the fraction of proxy pairs overlapping per axis.
    pub overlap_fraction: [f32; 3],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No proxy under this key.
    Vacant,
    /// Inserted, endpoints not yet in the lists.
    Pending,
    /// During `update_pairs` only: a pending proxy being added.
    Fresh,
    /// In the lists.
    Live,
    /// Removed and inserted again since the last update: its endpoints are
    /// in the lists, but its previously reported pairs must be reported as
    /// removed (and added again if they still overlap).
    Replaced,
    /// Removed; endpoints still in the lists until the next update.
    Removed,
}

impl State {
    #[inline]
    fn present(self) -> bool {
        matches!(
            self,
            State::Pending | State::Fresh | State::Live | State::Replaced
        )
    }
}

#[derive(Clone, Copy, Debug)]
struct Proxy {
    aabb: Aabb,
    state: State,
}

/// One end of a box on one axis, packed into one sort key:
/// `ordered(value) << 32 | is_max << 31 | key`.
///
/// Integer order is: by value, then mins before maxes, then by key. So the
/// min of `a` precedes the max of `b` exactly when `a.min <= b.max` (the
/// closed-interval test of [`Aabb::overlaps`]), and the order is total, which
/// makes every sort deterministic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Endpoint(u64);

const MAX_BIT: u64 = 1 << 31;

impl Endpoint {
    #[inline]
    fn new(value: f32, key: u32, is_max: bool) -> Self {
        Endpoint((ordered_bits(value) as u64) << 32 | (is_max as u64) << 31 | key as u64)
    }
    /// The same endpoint with a new value.
    #[inline]
    fn with_value(self, value: f32) -> Self {
        Endpoint((ordered_bits(value) as u64) << 32 | (self.0 & 0xffff_ffff))
    }
    #[inline]
    fn key(self) -> u32 {
        (self.0 & (MAX_BIT - 1)) as u32
    }
    #[inline]
    fn is_max(self) -> bool {
        self.0 & MAX_BIT != 0
    }
}

/// Maps a non-NaN float to an integer with the same order (`-0.0` and `0.0`
/// map to the same integer, as they compare equal).
#[inline]
fn ordered_bits(v: f32) -> u32 {
    let b = (v + 0.0).to_bits(); // -0.0 + 0.0 == +0.0
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

#[derive(Clone, Copy, Debug)]
struct Candidate {
    a: u32,
    b: u32,
    /// Whether the pair is in the reported set (`BroadPhase::pairs`).
    reported: bool,
}

/// An interval open during a sweep.
#[derive(Clone, Copy, Debug)]
struct Active {
    key: u32,
    aabb: Aabb,
}

#[inline]
fn pair_key(lo: u32, hi: u32) -> u64 {
    (lo as u64) << 32 | hi as u64
}

/// Fixed (seedless) hasher for pair keys: a splitmix64 finaliser, so the map
/// behaves identically on every run.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

type PairMap = HashMap<u64, u32, BuildHasherDefault<PairHasher>>;

#[inline]
fn overlap_on(a: &Aabb, b: &Aabb, axis: usize) -> bool {
    a.min[axis] <= b.max[axis] && b.min[axis] <= a.max[axis]
}

#[inline]
fn overlap_masked(a: &Aabb, b: &Aabb, mask: [bool; 3]) -> bool {
    (!mask[0] || (a.min.x <= b.max.x && b.min.x <= a.max.x))
        && (!mask[1] || (a.min.y <= b.max.y && b.min.y <= a.max.y))
        && (!mask[2] || (a.min.z <= b.max.z && b.min.z <= a.max.z))
}

#[inline]
fn valid_box(b: &Aabb) -> bool {
    b.min.cmple(b.max).all()
}

/// Insertion-sort budget for a list of `n` endpoints: about the cost of a
/// full sort. Beyond it a full sort and rebuild is cheaper.
fn default_budget(n: usize) -> usize {
    let log = usize::BITS - n.max(2).leading_zeros();
    n * log as usize + 1024
}

/// Incremental sweep-and-prune broad phase. See the module documentation.
#[derive(Clone, Debug)]
pub struct BroadPhase {
    proxies: Vec<Proxy>,
    len: usize,
    pending: Vec<u32>,
    removed_keys: Vec<u32>,
    replaced_keys: Vec<u32>,
    lists: [Vec<Endpoint>; 3],
    tracked: [bool; 3],
    sweep_axis: usize,
    policy: AxisPolicy,
    overlap_ema: Option<[f64; 3]>,
    rng: u64,
    swap_budget: Option<usize>,
    /// At most this many candidates (`None`: no limit); see
    /// [`BroadPhase::set_candidate_limit`].
    candidate_limit: Option<usize>,
    /// The last update stopped at the candidate limit: its pairs are
    /// incomplete, and the next update rebuilds them.
    overflowed: bool,
    /// Axes tracked only to keep the candidates within the limit
    /// ([`BroadPhase::bound_candidates`]), whether this update dropped
    /// them, and how many updates to keep them before trying again after
    /// a drop that met the limit (doubling with each).
    bounded: [bool; 3],
    dropped: bool,
    drop_wait: u32,
    drop_backoff: u32,
    candidates: Vec<Candidate>,
    index: PairMap,
    pairs: Vec<(u32, u32)>,
    added: Vec<(u32, u32)>,
    removed: Vec<(u32, u32)>,
    stats: BroadPhaseStats,
    /// Whether anything changed since the last `update_pairs`.
    dirty: bool,
    // Scratch buffers, kept to avoid reallocating every frame.
    fresh: Vec<u32>,
    new_eps: Vec<Endpoint>,
    active_old: Vec<Active>,
    active_new: Vec<Active>,
    slot: Vec<u32>,
    merged: Vec<(u32, u32)>,
}

impl Default for BroadPhase {
    fn default() -> Self {
        Self::new()
    }
}

impl BroadPhase {
    pub fn new() -> Self {
        Self {
            proxies: Vec::new(),
            len: 0,
            pending: Vec::new(),
            removed_keys: Vec::new(),
            replaced_keys: Vec::new(),
            lists: [Vec::new(), Vec::new(), Vec::new()],
            tracked: [true, false, false],
            sweep_axis: 0,
            policy: AxisPolicy::Adaptive,
            overlap_ema: None,
            rng: 0x2545_F491_4F6C_DD1D,
            swap_budget: None,
            candidate_limit: None,
            overflowed: false,
            bounded: [false; 3],
            dropped: false,
            drop_wait: 0,
            drop_backoff: 0,
            candidates: Vec::new(),
            index: PairMap::default(),
            pairs: Vec::new(),
            added: Vec::new(),
            removed: Vec::new(),
            stats: BroadPhaseStats::default(),
            dirty: false,
            fresh: Vec::new(),
            new_eps: Vec::new(),
            active_old: Vec::new(),
            active_new: Vec::new(),
            slot: Vec::new(),
            merged: Vec::new(),
        }
    }

    /// A broad phase with the given axis policy.
    pub fn with_axis_policy(policy: AxisPolicy) -> Self {
        let mut bp = Self::new();
        bp.policy = policy;
        bp
    }

    /// Changes the axis policy; takes effect at the next `update_pairs`.
    pub fn set_axis_policy(&mut self, policy: AxisPolicy) {
        self.policy = policy;
        self.dirty = true;
    }

    pub fn axis_policy(&self) -> AxisPolicy {
        self.policy
    }

    /// Overrides the per-axis swap budget of the insertion sort (`None`: the
    /// default, about `n log n`; `Some(usize::MAX)` disables the fallback to
    /// a full sort and rebuild). For tests and benchmarks.
    #[doc(hidden)]
    pub fn set_swap_budget(&mut self, budget: Option<usize>) {
        self.swap_budget = budget;
    }

    /// Number of proxies (including ones inserted since the last update).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, key: u32) -> bool {
        self.proxies
            .get(key as usize)
            .is_some_and(|p| p.state.present())
    }

    /// The stored (possibly fat) box of `key`.
    pub fn aabb(&self, key: u32) -> Option<Aabb> {
        self.proxies
            .get(key as usize)
            .filter(|p| p.state.present())
            .map(|p| p.aabb)
    }

    /// Registers a proxy. Its pairs appear at the next `update_pairs`.
    ///
    /// # Panics
    /// If `key` is already present or `key >= 2³¹`.
    pub fn insert(&mut self, key: u32, aabb: Aabb) {
        assert!(key < 1 << 31, "BroadPhase::insert: key {key} too large");
        debug_assert!(valid_box(&aabb), "BroadPhase::insert: invalid box {aabb:?}");
        let k = key as usize;
        if k >= self.proxies.len() {
            self.proxies.resize(
                k + 1,
                Proxy {
                    aabb: Aabb::EMPTY,
                    state: State::Vacant,
                },
            );
        }
        let p = &mut self.proxies[k];
        match p.state {
            State::Vacant => {
                p.state = State::Pending;
                self.pending.push(key);
            }
            State::Removed => {
                p.state = State::Replaced;
                self.replaced_keys.push(key);
            }
            _ => panic!("BroadPhase::insert: key {key} already present"),
        }
        p.aabb = aabb;
        self.len += 1;
        self.dirty = true;
    }

    /// Unregisters a proxy; returns whether it was present. Its pairs are
    /// reported as removed at the next `update_pairs`.
    pub fn remove(&mut self, key: u32) -> bool {
        let Some(p) = self.proxies.get_mut(key as usize) else {
            return false;
        };
        match p.state {
            State::Pending => p.state = State::Vacant,
            State::Live | State::Replaced => {
                p.state = State::Removed;
                self.removed_keys.push(key);
            }
            _ => return false,
        }
        self.len -= 1;
        self.dirty = true;
        true
    }

    /// Sets the box of a proxy (the caller passes fat or swept boxes).
    ///
    /// # Panics
    /// If `key` is not present.
    pub fn update(&mut self, key: u32, aabb: Aabb) {
        debug_assert!(valid_box(&aabb), "BroadPhase::update: invalid box {aabb:?}");
        self.proxy_mut(key).aabb = aabb;
        self.dirty = true;
    }

    /// Fat-box update: when `tight` is not inside the stored box, or the
    /// stored box reaches beyond it on some side by more than `2 · margin`
    /// and half the tight box's largest extent (a spinning box's tight box
    /// breathes by less),
    /// stores `tight.expanded(margin)` and returns true; otherwise leaves the
    /// stored box unchanged and returns false. (Without the second test a
    /// fast body that slowed down kept the box of its fastest sweep, and
    /// its pairs, for as long as it stayed inside: 2,100 spheres swept 10 m
    /// at 60 Hz kept their 2.2 million pairs at 1,000 Hz.)
    ///
    /// # Panics
    /// If `key` is not present.
    pub fn update_fat(&mut self, key: u32, tight: Aabb, margin: f32) -> bool {
        debug_assert!(
            valid_box(&tight),
            "BroadPhase::update_fat: invalid box {tight:?}"
        );
        let p = self.proxy_mut(key);
        let slack = 2.0 * margin + 0.5 * (tight.max - tight.min).max_element();
        if p.aabb.contains(&tight) && tight.expanded(slack).contains(&p.aabb) {
            false
        } else {
            p.aabb = tight.expanded(margin);
            self.dirty = true;
            true
        }
    }

    fn proxy_mut(&mut self, key: u32) -> &mut Proxy {
        match self.proxies.get_mut(key as usize) {
            Some(p) if p.state.present() => p,
            _ => panic!("BroadPhase: unknown key {key}"),
        }
    }

    /// Overlapping pairs `(lower key, higher key)` as of the last
    /// `update_pairs`, in ascending order.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pairs.iter().copied()
    }

    /// Number of overlapping pairs as of the last `update_pairs`.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Pairs that started overlapping in the last `update_pairs`, ascending.
    pub fn added(&self) -> &[(u32, u32)] {
        &self.added
    }

    /// Pairs that stopped overlapping in the last `update_pairs` (or whose
    /// proxy was removed, or removed and re-inserted), ascending. A pair of a
    /// re-inserted proxy can be in both lists: handle `removed` first.
    pub fn removed(&self) -> &[(u32, u32)] {
        &self.removed
    }

    /// Figures about the last `update_pairs`.
    pub fn stats(&self) -> &BroadPhaseStats {
        &self.stats
    }

    /// Applies all insertions, removals and box changes since the last call
    /// and updates the pair set and the added/removed lists. Returns at once
    /// (with empty change lists) when nothing changed.
    pub fn update_pairs(&mut self) {
        self.added.clear();
        self.removed.clear();
        let incomplete = std::mem::take(&mut self.overflowed);
        if !self.dirty && !incomplete {
            self.stats.swaps = 0;
            self.stats.rebuilt = false;
            return;
        }
        self.dirty = false;

        // Pending proxies become fresh (the pending list may hold stale or
        // repeated keys after remove/insert sequences).
        self.fresh.clear();
        for &k in &self.pending {
            let p = &mut self.proxies[k as usize];
            if p.state == State::Pending {
                p.state = State::Fresh;
                self.fresh.push(k);
            }
        }
        self.pending.clear();

        let next = self.choose_axes();
        let mut rebuild = next != self.tracked || incomplete;

        // Refresh endpoint values and drop removed proxies (or build the
        // lists of newly tracked axes).
        for (axis, &track) in next.iter().enumerate() {
            if !track {
                self.lists[axis].clear();
            } else if self.tracked[axis] {
                self.refresh_list(axis);
            } else {
                self.build_list(axis);
            }
        }
        self.tracked = next;

        let mut swaps = 0u64;
        for (axis, &track) in next.iter().enumerate() {
            if !track {
                continue;
            }
            if rebuild {
                self.lists[axis].sort_unstable();
            } else if !self.insertion_sort(axis, &mut swaps) {
                rebuild = true;
            }
        }

        if !self.fresh.is_empty() {
            for (axis, &track) in next.iter().enumerate() {
                if track {
                    self.merge_fresh(axis);
                }
            }
        }

        if rebuild {
            self.rebuild_candidates();
        } else if !self.fresh.is_empty() {
            self.sweep(false);
        }
        if self.overflowed {
            if self.dropped {
                // The axes just dropped were still needed (the estimate
                // takes the axes as independent; a column among boxes
                // spread on a floor overlaps along x and z, apart along y):
                // the next try waits twice as long.
                self.drop_backoff = (2 * self.drop_backoff).clamp(8, 1024);
                self.drop_wait = self.drop_backoff;
            }
            rebuild = true;
            // Past the limit: counted again from scratch (an incremental
            // update also counts candidates that stopped overlapping, which
            // only the filter below drops), with every axis tracked.
            // (Until the filter, `removed` holds only what a rebuild found
            // gone: the one below finds it again.)
            self.removed.clear();
            self.track_all_axes();
            self.rebuild_candidates();
        } else if self.dropped {
            self.drop_backoff = 0;
        }

        self.filter_candidates();
        self.publish();

        // Settle proxy states.
        for &k in &self.fresh {
            self.proxies[k as usize].state = State::Live;
        }
        for &k in &self.replaced_keys {
            let p = &mut self.proxies[k as usize];
            if p.state == State::Replaced {
                p.state = State::Live;
            }
        }
        for &k in &self.removed_keys {
            let p = &mut self.proxies[k as usize];
            if p.state == State::Removed {
                p.state = State::Vacant;
            }
        }
        self.replaced_keys.clear();
        self.removed_keys.clear();

        let ema = self.overlap_ema.unwrap_or([1.0; 3]);
        self.stats = BroadPhaseStats {
            tracked_axes: self.tracked,
            sweep_axis: self.sweep_axis,
            swaps,
            rebuilt: rebuild,
            candidates: self.candidates.len(),
            pairs: self.pairs.len(),
            overlap_fraction: [ema[0] as f32, ema[1] as f32, ema[2] as f32],
        };
    }

    fn next_rand(&mut self) -> u64 {
        // xorshift64
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// Samples proxy pairs and updates the per-axis overlap-fraction estimate.
    fn sample_overlap(&mut self) {
        if self.len < 2 {
            return;
        }
        let n = self.proxies.len() as u64;
        let mut hits = [0u32; 3];
        let mut samples = 0u32;
        for _ in 0..SAMPLE_PAIRS * 8 {
            if samples as usize == SAMPLE_PAIRS {
                break;
            }
            let r = self.next_rand();
            let i = (((r & 0xffff_ffff) * n) >> 32) as usize;
            let j = (((r >> 32) * n) >> 32) as usize;
            if i == j {
                continue;
            }
            let (a, b) = (&self.proxies[i], &self.proxies[j]);
            if !a.state.present() || !b.state.present() {
                continue;
            }
            samples += 1;
            for (axis, h) in hits.iter_mut().enumerate() {
                *h += overlap_on(&a.aabb, &b.aabb, axis) as u32;
            }
        }
        if samples == 0 {
            return;
        }
        let est = hits.map(|h| h as f64 / samples as f64);
        // A population that is mostly new, or a jump far beyond sampling
        // noise (a changed layout), replaces the estimate instead of
        // smoothing it, so the axis choice follows at once.
        let reset = self.fresh.len() * 2 > self.len;
        self.overlap_ema = Some(match self.overlap_ema {
            Some(e) if !reset && (0..3).all(|a| (est[a] - e[a]).abs() <= EMA_SNAP) => {
                [0, 1, 2].map(|a| e[a] + (est[a] - e[a]) * EMA_ALPHA)
            }
            _ => est,
        });
    }

    /// Decides the tracked axes for this update and the sweep axis.
    fn choose_axes(&mut self) -> [bool; 3] {
        self.sample_overlap();
        let mut next = match self.policy {
            AxisPolicy::Fixed(mask) if mask.iter().any(|&m| m) => mask,
            AxisPolicy::Fixed(_) => [true, false, false],
            AxisPolicy::Adaptive => match self.overlap_ema {
                None => self.tracked,
                Some(p) => {
                    let mut next = [false; 3];
                    for axis in 0..3 {
                        let limit = if self.tracked[axis] {
                            TRACK_OFF
                        } else {
                            TRACK_ON
                        };
                        next[axis] = p[axis] <= limit;
                    }
                    if !next.iter().any(|&t| t) {
                        let best = argmin(p, [true; 3]);
                        let axis = if self.tracked.iter().any(|&t| t) {
                            let keep = argmin(p, self.tracked);
                            if p[keep] <= p[best] + KEEP_SLACK {
                                keep
                            } else {
                                best
                            }
                        } else {
                            best
                        };
                        next[axis] = true;
                    }
                    next
                }
            },
        };
        if let Some(p) = self.overlap_ema {
            self.bound_candidates(p, &mut next);
        }
        self.sweep_axis = argmin(self.overlap_ema.unwrap_or([1.0; 3]), next);
        next
    }

    /// Re-reads endpoint values from the boxes and drops removed proxies,
    /// keeping the previous order.
    fn refresh_list(&mut self, axis: usize) {
        let proxies = &self.proxies;
        let list = &mut self.lists[axis];
        let mut w = 0;
        for r in 0..list.len() {
            let ep = list[r];
            let p = &proxies[ep.key() as usize];
            if p.state == State::Removed {
                continue;
            }
            let value = if ep.is_max() {
                p.aabb.max[axis]
            } else {
                p.aabb.min[axis]
            };
            list[w] = ep.with_value(value);
            w += 1;
        }
        list.truncate(w);
    }

    /// Builds the (unsorted) list of a newly tracked axis from the proxies
    /// already in the other lists.
    fn build_list(&mut self, axis: usize) {
        let list = &mut self.lists[axis];
        list.clear();
        for (k, p) in self.proxies.iter().enumerate() {
            if matches!(p.state, State::Live | State::Replaced) {
                list.push(Endpoint::new(p.aabb.min[axis], k as u32, false));
                list.push(Endpoint::new(p.aabb.max[axis], k as u32, true));
            }
        }
    }

    /// Insertion sort from the previous order, noting pairs whose intervals
    /// may have started overlapping. Returns false (after fully sorting the
    /// list) when the swap budget was exceeded.
    fn insertion_sort(&mut self, axis: usize, swaps: &mut u64) -> bool {
        let mut list = std::mem::take(&mut self.lists[axis]);
        let n = list.len();
        let budget = self.swap_budget.unwrap_or_else(|| default_budget(n));
        let mut moved = 0usize;
        let mut ok = true;
        for i in 1..n {
            let e = list[i];
            if e >= list[i - 1] {
                continue;
            }
            let e_is_min = !e.is_max();
            let mut j = i;
            while j > 0 {
                let o = list[j - 1];
                if e >= o {
                    break;
                }
                if e_is_min && o.is_max() {
                    // e.min now <= o.max: the intervals may overlap.
                    self.overlap_begins(e.key(), o.key());
                }
                list[j] = o;
                j -= 1;
            }
            list[j] = e;
            moved += i - j;
            if moved > budget {
                ok = false;
                break;
            }
        }
        if !ok {
            list.sort_unstable();
        }
        *swaps += moved as u64;
        self.lists[axis] = list;
        ok
    }

    #[inline]
    fn overlap_begins(&mut self, a: u32, b: u32) {
        if a == b {
            return;
        }
        let (pa, pb) = (&self.proxies[a as usize], &self.proxies[b as usize]);
        if overlap_masked(&pa.aabb, &pb.aabb, self.tracked) {
            self.add_candidate(a, b, false);
        }
    }

    /// Adds `(a, b)` to the candidates if absent. With `from_rebuild`, the
    /// reported flag is taken from the current pair list.
    fn add_candidate(&mut self, a: u32, b: u32, from_rebuild: bool) {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let full = self
            .candidate_limit
            .is_some_and(|l| self.candidates.len() >= l);
        if let Entry::Vacant(v) = self.index.entry(pair_key(lo, hi)) {
            if full {
                self.overflowed = true;
                return;
            }
            v.insert(self.candidates.len() as u32);
            let reported = from_rebuild && self.pairs.binary_search(&(lo, hi)).is_ok();
            self.candidates.push(Candidate {
                a: lo,
                b: hi,
                reported,
            });
        }
    }

    /// Merges the endpoints of fresh proxies into a sorted list.
    fn merge_fresh(&mut self, axis: usize) {
        let mut new_eps = std::mem::take(&mut self.new_eps);
        new_eps.clear();
        for &k in &self.fresh {
            let b = &self.proxies[k as usize].aabb;
            new_eps.push(Endpoint::new(b.min[axis], k, false));
            new_eps.push(Endpoint::new(b.max[axis], k, true));
        }
        new_eps.sort_unstable();
        let list = &mut self.lists[axis];
        let old_len = list.len();
        let m = new_eps.len();
        list.resize(old_len + m, Endpoint(0));
        // Merge from the back so nothing is overwritten before it is read.
        let (mut i, mut j, mut w) = (old_len, m, old_len + m);
        while j > 0 {
            w -= 1;
            if i > 0 && new_eps[j - 1] < list[i - 1] {
                list[w] = list[i - 1];
                i -= 1;
            } else {
                list[w] = new_eps[j - 1];
                j -= 1;
            }
        }
        self.new_eps = new_eps;
    }

    /// Sweeps the sweep axis and adds as candidates the pairs overlapping on
    /// all tracked axes: all of them with `all`, else those involving a
    /// fresh proxy. Active entries carry a copy of their box so the inner
    /// loops read memory sequentially; the sweep axis itself needs no test
    /// (an active interval contains the current min).
    fn sweep(&mut self, all: bool) {
        let axis = self.sweep_axis;
        let mut mask = self.tracked;
        mask[axis] = false;
        let list = std::mem::take(&mut self.lists[axis]);
        let mut act_old = std::mem::take(&mut self.active_old);
        let mut act_new = std::mem::take(&mut self.active_new);
        let mut slot = std::mem::take(&mut self.slot);
        act_old.clear();
        act_new.clear();
        slot.clear();
        slot.resize(self.proxies.len(), u32::MAX);
        for &ep in &list {
            if self.overflowed {
                break;
            }
            let k = ep.key();
            let p = self.proxies[k as usize];
            let is_new = all || p.state == State::Fresh;
            if !ep.is_max() {
                for q in &act_new {
                    if overlap_masked(&p.aabb, &q.aabb, mask) {
                        self.add_candidate(k, q.key, all);
                    }
                }
                if is_new {
                    for q in &act_old {
                        if overlap_masked(&p.aabb, &q.aabb, mask) {
                            self.add_candidate(k, q.key, all);
                        }
                    }
                }
                let act = if is_new { &mut act_new } else { &mut act_old };
                slot[k as usize] = act.len() as u32;
                act.push(Active {
                    key: k,
                    aabb: p.aabb,
                });
            } else {
                let s = slot[k as usize];
                if s == u32::MAX {
                    continue; // inverted box (invalid input): never active
                }
                let act = if is_new { &mut act_new } else { &mut act_old };
                act.swap_remove(s as usize);
                if let Some(moved) = act.get(s as usize) {
                    slot[moved.key as usize] = s;
                }
                slot[k as usize] = u32::MAX;
            }
        }
        self.lists[axis] = list;
        self.active_old = act_old;
        self.active_new = act_new;
        self.slot = slot;
    }

    /// Recomputes the candidate set from scratch, keeping the reported flags
    /// of pairs already reported; reported pairs that are no longer
    /// candidates are recorded as removed.
    fn rebuild_candidates(&mut self) {
        self.overflowed = false;
        self.candidates.clear();
        self.index.clear();
        self.sweep(true);
        for &(a, b) in &self.pairs {
            if !self.index.contains_key(&pair_key(a, b)) {
                self.removed.push((a, b));
            }
        }
    }

    /// One pass over the candidates: drops those that no longer overlap on
    /// the tracked axes (or lost a proxy), and updates the reported flags,
    /// recording the changes.
    fn filter_candidates(&mut self) {
        let mut i = self.candidates.len();
        while i > 0 {
            i -= 1;
            let c = self.candidates[i];
            let pa = &self.proxies[c.a as usize];
            let pb = &self.proxies[c.b as usize];
            let mut reported = c.reported;
            if reported && (pa.state == State::Replaced || pb.state == State::Replaced) {
                self.removed.push((c.a, c.b));
                reported = false;
            }
            let alive = pa.state != State::Removed && pb.state != State::Removed;
            if !alive || !overlap_masked(&pa.aabb, &pb.aabb, self.tracked) {
                if reported {
                    self.removed.push((c.a, c.b));
                }
                self.index.remove(&pair_key(c.a, c.b));
                self.candidates.swap_remove(i);
                if let Some(m) = self.candidates.get(i) {
                    *self
                        .index
                        .get_mut(&pair_key(m.a, m.b))
                        .expect("candidate index out of sync") = i as u32;
                }
                continue;
            }
            let now = pa.aabb.overlaps(&pb.aabb);
            if now != reported {
                if now {
                    self.added.push((c.a, c.b));
                } else {
                    self.removed.push((c.a, c.b));
                }
            }
            self.candidates[i].reported = now;
        }
    }

    /// Sorts the change lists and applies them to the sorted pair list.
    fn publish(&mut self) {
        self.added.sort_unstable();
        self.removed.sort_unstable();
        if self.added.is_empty() && self.removed.is_empty() {
            return;
        }
        let mut merged = std::mem::take(&mut self.merged);
        merged.clear();
        merged.reserve(self.pairs.len() + self.added.len());
        let (mut r, mut a) = (0, 0);
        for &p in &self.pairs {
            if self.removed.get(r) == Some(&p) {
                r += 1;
                continue;
            }
            while a < self.added.len() && self.added[a] < p {
                merged.push(self.added[a]);
                a += 1;
            }
            debug_assert!(self.added.get(a) != Some(&p), "added pair already reported");
            merged.push(p);
        }
        merged.extend_from_slice(&self.added[a..]);
        debug_assert_eq!(r, self.removed.len(), "removed pair was not reported");
        self.merged = std::mem::replace(&mut self.pairs, merged);
    }
}

/// Index of the smallest `p[axis]` among `mask` (ties: lowest index; no axis
/// in the mask: 0).
fn argmin(p: [f64; 3], mask: [bool; 3]) -> usize {
    let mut best = None;
    for axis in 0..3 {
        if mask[axis] && best.is_none_or(|b: usize| p[axis] < p[b]) {
            best = Some(axis);
        }
    }
    best.unwrap_or(0)
}

mod limit;

#[cfg(test)]
mod tests;
