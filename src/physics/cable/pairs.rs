//! Broad phase over cable segments: a uniform grid, filled by a counting
//! sort, so finding the overlapping boxes of N segments costs O(N + close
//! pairs) with no per-cell allocation. The cells are a dense array over the
//! boxes' bounds when that is small (neighbouring cells then sit side by
//! side in memory), and hashed into a table otherwise (boxes spread far
//! apart).
//!
//! Each box is entered, with its bounds, in every cell it covers. The
//! buckets are read one after another, each one's entries against each
//! other (memory in order; reading them box by box instead missed the cache
//! at every bucket and took twice as long). Two boxes that overlap share the
//! cell holding the lower corner of their intersection (the componentwise
//! maximum of their lower corners), and the pair is reported from that
//! cell only (the one where, along every axis, one of the two starts: an
//! entry carries those three bits, so the test is one mask), so every pair
//! comes out once without a dedup pass. Large builds run on two threads:
//! the boxes' cells and counts by halves of the boxes, the fill by halves
//! of the table, the buckets' pairs by halves of the entries. A
//! counting sort then groups the pairs by their first box, in index order
//! (the solver then walks memory in order). Boxes covering more than
//! [`MAX_CELLS_PER_AXIS`] cells along an axis (a very long or very fast
//! segment) stay out of the grid and are tested against every box; they are
//! rare, and the result stays exact. The grid is kept after a build so that
//! a box can be queried against it ([`Grid::query`]).

use super::super::math::Vec3;
use super::both;

/// Boxes wider than this many cells along an axis are tested by brute force.
const MAX_CELLS_PER_AXIS: i32 = 4;

/// A box in a bucket, with its bounds (so that a query reads the bucket
/// alone), and along which axes the box starts in the bucket's cell (bit
/// `k` for axis `k`): two boxes that overlap report their pair from the
/// one cell where, along every axis, one of them starts (see
/// [`Grid::bucket_pairs`]).
#[derive(Clone, Copy, Default)]
struct Entry {
    lo: Vec3,
    hi: Vec3,
    item: u32,
    starts: u32,
}

/// Where the bucket scan puts the pairs it finds: a list, or a count.
trait PairSink {
    fn add(&mut self, a: u32, b: u32);
    fn count(&self) -> usize;
}

impl PairSink for Vec<(u32, u32)> {
    #[inline]
    fn add(&mut self, a: u32, b: u32) {
        self.push((a, b));
    }
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
}

/// A [`PairSink`] that only counts.
struct Count(usize);

impl PairSink for Count {
    #[inline]
    fn add(&mut self, _: u32, _: u32) {
        self.0 += 1;
    }
    #[inline]
    fn count(&self) -> usize {
        self.0
    }
}

/// Memory kept between calls, and the last build.
#[derive(Default, Debug, Clone)]
pub(crate) struct Grid {
    /// Start of each bucket in `sorted` (one more than the buckets).
    counts: Vec<u32>,
    /// The upper half's counts while they are taken on another thread, then
    /// where each bucket is filled.
    scratch: Vec<u32>,
    sorted: Vec<Entry>,
    /// The cell of each entry of `sorted` (only with a hashed table, where
    /// a bucket may hold several cells).
    cells: Vec<[i32; 3]>,
    /// Each box's cells, lowest and highest (big boxes: none).
    ranges: Vec<[[i32; 3]; 2]>,
    /// Boxes kept out of the grid, ascending.
    big: Vec<u32>,
    is_big: Vec<bool>,
    items: usize,
    inv: f32,
    /// Scratch of [`Self::pairs`]: pairs as found, and their order.
    found: Vec<(u32, u32)>,
    found_upper: Vec<(u32, u32)>,
    by_first: Vec<u32>,
    table: Table,
    /// At most this many buckets in a hash table (0: no limit); tests set
    /// it to make buckets share cells.
    hash_cap: usize,
    /// At most about this many pairs from [`Self::pairs`] (`None`: no
    /// limit); past it the search stops and lists none ([`Self::overflowed`]).
    pub(crate) limit: Option<usize>,
    /// Whether the last [`Self::pairs`] stopped at the limit.
    overflowed: bool,
}

/// Where a cell's entries are: a dense box of cells, or a hash table.
#[derive(Default, Debug, Clone, Copy)]
enum Table {
    Dense {
        origin: [i32; 3],
        dims: [i32; 3],
    },
    #[default]
    Empty,
    Hashed {
        mask: u32,
    },
}

/// The slot of a cell inside a dense table's bounds (x fastest).
#[inline]
fn dense_slot(origin: [i32; 3], dims: [i32; 3], c: [i32; 3]) -> usize {
    ((c[0] - origin[0]) + dims[0] * ((c[1] - origin[1]) + dims[1] * (c[2] - origin[2]))) as usize
}

impl Table {
    /// The slot of a cell (`None`: a cell outside a dense table's bounds,
    /// which holds nothing).
    #[inline]
    fn slot(self, cell: [i32; 3]) -> Option<usize> {
        match self {
            Table::Dense { origin, dims } => {
                let r = [0, 1, 2].map(|k| cell[k] as i64 - origin[k] as i64);
                if (0..3).any(|k| r[k] < 0 || r[k] >= dims[k] as i64) {
                    return None;
                }
                Some(dense_slot(origin, dims, cell))
            }
            Table::Hashed { mask } => Some((hash(cell) & mask) as usize),
            Table::Empty => None,
        }
    }

    /// Calls `f(slot, cell, starts)` for every cell of `range` (a box's
    /// cells, all inside a dense table's bounds), in order.
    #[inline]
    fn cells_of(self, range: &[[i32; 3]; 2], mut f: impl FnMut(usize, [i32; 3], u32)) {
        let [lo, hi] = *range;
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let starts = (x == lo[0]) as u32
                        | ((y == lo[1]) as u32) << 1
                        | ((z == lo[2]) as u32) << 2;
                    let cell = [x, y, z];
                    let slot = match self {
                        Table::Dense { origin, dims } => dense_slot(origin, dims, cell),
                        Table::Hashed { mask } => (hash(cell) & mask) as usize,
                        Table::Empty => continue,
                    };
                    f(slot, cell, starts);
                }
            }
        }
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.item)
    }
}

#[inline]
fn hash(c: [i32; 3]) -> u32 {
    (c[0] as u32).wrapping_mul(0x9E37_79B1)
        ^ (c[1] as u32).wrapping_mul(0x85EB_CA77)
        ^ (c[2] as u32).wrapping_mul(0xC2B2_AE3D)
}

/// Pairs of overlapping boxes with at least one of them from `fresh` on,
/// each once, but those `skip` names; counting stops once past `limit`.
pub(crate) fn count_overlaps_with(
    boxes: &[(Vec3, Vec3)],
    fresh: usize,
    skip: impl Fn(usize, usize) -> bool + Sync,
    limit: u64,
) -> u64 {
    let mut grid = Grid::default();
    if fresh == 0 {
        // Every pair: the buckets' scan, on two threads for many boxes (a
        // query for each box took 20–50 ms for the 50,000 segments of the
        // cables bench's heap).
        let limit = limit.min(usize::MAX as u64) as usize;
        let par = boxes.len() >= 4096;
        return grid.count_pairs(boxes, |a, b| skip(a as usize, b as usize), par, limit) as u64;
    }
    grid.build(boxes, false);
    let (mut found, mut count) = (Vec::new(), 0u64);
    for k in fresh..boxes.len() {
        found.clear();
        // (Two fresh boxes are counted from the earlier one.)
        grid.query(
            &boxes[k],
            |j| (fresh..=k).contains(&(j as usize)),
            &mut found,
        );
        count += found
            .iter()
            .filter(|&&j| !skip(j as usize, k) && overlap(&boxes[j as usize], &boxes[k]))
            .count() as u64;
        if count > limit {
            break;
        }
    }
    count
}

#[inline]
pub(crate) fn overlap(a: &(Vec3, Vec3), b: &(Vec3, Vec3)) -> bool {
    a.0.cmple(b.1).all() && b.0.cmple(a.1).all()
}

/// Which of up to eight entries (bit `l` for `chunk[l]`) overlap box `a`
/// and start along every axis in `need`. Every comparison is evaluated, as
/// integers, with no branch per entry: which ones pass is not predictable,
/// and a chain of branches that the processor guesses wrong half the time
/// took twice as long as the tests (the buckets of a settled 50,000-segment
/// heap: 17–20 ms a step against 9–11).
#[inline]
fn overlap_mask(a: &(Vec3, Vec3), need: u32, chunk: &[Entry]) -> u32 {
    let mut mask = 0u32;
    for (l, e) in chunk.iter().enumerate() {
        let hit = (e.starts & need == need) as u32
            & (a.0.x <= e.hi.x) as u32
            & (e.lo.x <= a.1.x) as u32
            & (a.0.y <= e.hi.y) as u32
            & (e.lo.y <= a.1.y) as u32
            & (a.0.z <= e.hi.z) as u32
            & (e.lo.z <= a.1.z) as u32;
        mask |= hit << l;
    }
    mask
}

/// `floor` without a libm call (coordinates are clamped to ±1e9 first).
#[inline]
fn floor_i32(x: f32) -> i32 {
    let x = x.clamp(-1.0e9, 1.0e9);
    let i = x as i32;
    if (i as f32) > x {
        i - 1
    } else {
        i
    }
}

/// The cells of each box (`ranges`, `is_big` alongside `boxes`), and the
/// bounds and number of the cells of those that go in the grid.
fn cell_ranges(
    inv: f32,
    boxes: &[(Vec3, Vec3)],
    ranges: &mut [[[i32; 3]; 2]],
    is_big: &mut [bool],
) -> ([i32; 3], [i32; 3], usize) {
    let (mut c_lo, mut c_hi, mut cells) = ([i32::MAX; 3], [i32::MIN; 3], 0);
    for (k, b) in boxes.iter().enumerate() {
        let (lo, hi) = (to_cell(inv, b.0), to_cell(inv, b.1));
        let big = (0..3).any(|k| hi[k] as i64 - lo[k] as i64 >= MAX_CELLS_PER_AXIS as i64);
        is_big[k] = big;
        if big {
            // No cells (an empty range).
            ranges[k] = [[1, 0, 0], [0, 0, 0]];
            continue;
        }
        ranges[k] = [lo, hi];
        for a in 0..3 {
            c_lo[a] = c_lo[a].min(lo[a]);
            c_hi[a] = c_hi[a].max(hi[a]);
        }
        cells += ((hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1)) as usize;
    }
    (c_lo, c_hi, cells)
}

/// A stable counting sort by key, on two threads when `par`: each of
/// `items`, in order, puts `value(k, item)` under each of its `keys`
/// (below `n_keys`). Afterwards `start[key]..start[key + 1]` is where that
/// key's values are in `out`, in item order. Each thread reads every item
/// and writes the keys of its half of the key range, so the result does
/// not depend on the threads.
pub(crate) fn group_by_key<T: Sync, V: Copy + Default + Send, const K: usize>(
    items: &[T],
    n_keys: usize,
    keys: impl Fn(&T) -> [u32; K] + Sync,
    value: impl Fn(usize, &T) -> V + Sync,
    par: bool,
    start: &mut Vec<u32>,
    out: &mut Vec<V>,
) {
    let mid = n_keys / 2;
    start.clear();
    start.resize(n_keys + 1, 0);
    // Counts, shifted by one: keys below `mid` in `lo`, the rest in `hi`.
    {
        let (lo, hi) = start.split_at_mut(mid + 1);
        let count = |lo_key: usize, counts: &mut [u32], shift: usize| {
            for item in items {
                for key in keys(item) {
                    let key = key as usize;
                    if key >= lo_key && key < lo_key + counts.len() - shift {
                        counts[key - lo_key + shift] += 1;
                    }
                }
            }
        };
        both(par, || count(0, lo, 1), || count(mid, hi, 0));
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    let total = start[n_keys] as usize;
    // Every slot is written once.
    resize_unset(out, total);
    let mut next = std::mem::take(start);
    {
        let at = next[mid] as usize;
        let (o0, o1) = out.split_at_mut(at);
        let (n0, n1) = next.split_at_mut(mid);
        let fill = |lo_key: usize, next: &mut [u32], out: &mut [V], base: usize| {
            for (k, item) in items.iter().enumerate() {
                for key in keys(item) {
                    let key = key as usize;
                    if key >= lo_key && key < lo_key + next.len() {
                        let slot = &mut next[key - lo_key];
                        out[*slot as usize - base] = value(k, item);
                        *slot += 1;
                    }
                }
            }
        };
        both(
            par,
            || fill(0, n0, o0, 0),
            || fill(mid, &mut n1[..n_keys - mid], o1, at),
        );
    }
    // `next` now holds each key's end: the next key's start.
    start.clear();
    start.push(0);
    start.extend_from_slice(&next[..n_keys]);
}

/// Sets the length of `v` to `n`, leaving the kept elements as they were
/// (the caller writes every one).
fn resize_unset<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() >= n {
        v.truncate(n);
    } else {
        v.resize(n, T::default());
    }
}

#[inline]
fn to_cell(inv: f32, p: Vec3) -> [i32; 3] {
    let c = p * inv;
    [floor_i32(c.x), floor_i32(c.y), floor_i32(c.z)]
}

impl Grid {
    #[inline]
    fn to_cell(&self, p: Vec3) -> [i32; 3] {
        to_cell(self.inv, p)
    }

    /// Enters every box in the cells it covers (cell size: the mean box
    /// extent, so that a box covers a few cells), by a counting sort on the
    /// cells' slots, stable (each bucket in box order). With `par`, the
    /// boxes' cells and the counts are taken for the two halves of the
    /// boxes on two threads, and the buckets are filled by two threads
    /// each reading every box and writing the buckets of its half of the
    /// table: the result is the same either way.
    pub(crate) fn build(&mut self, boxes: &[(Vec3, Vec3)], par: bool) {
        self.build_with(boxes, par, true);
    }

    /// [`Self::build`]; without `fill`, only the buckets' sizes are taken
    /// (`counts`: the boxes are entered in none).
    fn build_with(&mut self, boxes: &[(Vec3, Vec3)], par: bool, fill: bool) {
        self.items = boxes.len();
        let mean = boxes
            .iter()
            .map(|(lo, hi)| (*hi - *lo).max_element() as f64)
            .sum::<f64>()
            / boxes.len().max(1) as f64;
        self.inv = 1.0 / (mean as f32).max(1.0e-3);
        let inv = self.inv;
        self.ranges.resize(boxes.len(), [[0; 3]; 2]);
        self.is_big.resize(boxes.len(), false);
        let half = boxes.len() / 2;
        let ((lo0, hi0, n0), (lo1, hi1, n1)) = {
            let (r0, r1) = self.ranges.split_at_mut(half);
            let (b0, b1) = self.is_big.split_at_mut(half);
            both(
                par,
                || cell_ranges(inv, &boxes[..half], r0, b0),
                || cell_ranges(inv, &boxes[half..], r1, b1),
            )
        };
        self.big.clear();
        self.big.extend(
            self.is_big
                .iter()
                .enumerate()
                .filter(|(_, &b)| b)
                .map(|(k, _)| k as u32),
        );
        self.table = Table::Empty;
        self.cells.clear();
        let total = n0 + n1;
        if total == 0 {
            self.counts.clear();
            self.sorted.clear();
            return;
        }
        let c_lo = [0, 1, 2].map(|k| lo0[k].min(lo1[k]));
        let c_hi = [0, 1, 2].map(|k| hi0[k].max(hi1[k]));
        // Dense while the bounds hold at most a few cells per entry; else a
        // hash table twice the entries (a power of two).
        let dims = [0, 1, 2].map(|k| c_hi[k] as i64 - c_lo[k] as i64 + 1);
        let cells = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]);
        let buckets = if cells <= (4 * total as i64).max(4096) {
            self.table = Table::Dense {
                origin: c_lo,
                dims: dims.map(|d| d as i32),
            };
            cells as usize
        } else {
            let mut buckets = (total * 2).next_power_of_two().max(16);
            if self.hash_cap > 0 {
                buckets = buckets.min(self.hash_cap.next_power_of_two());
            }
            self.table = Table::Hashed {
                mask: (buckets - 1) as u32,
            };
            buckets
        };
        let table = self.table;
        // Counts of each slot, shifted by one (the halves' counts summed).
        let count = |ranges: &[[[i32; 3]; 2]], counts: &mut Vec<u32>| {
            counts.clear();
            counts.resize(buckets + 1, 0);
            for r in ranges {
                table.cells_of(r, |slot, _, _| counts[slot + 1] += 1);
            }
        };
        {
            let (r0, r1) = self.ranges.split_at(half);
            let (c0, c1) = (&mut self.counts, &mut self.scratch);
            both(par, || count(r0, c0), || count(r1, c1));
        }
        for k in 1..=buckets {
            self.counts[k] += self.scratch[k] + self.counts[k - 1];
        }
        if !fill {
            self.sorted.clear();
            return;
        }
        // Fill: slots below `mid` on one thread, the rest on the other.
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.counts[..buckets]);
        let mid = if par {
            self.counts
                .partition_point(|&c| (c as usize) < total / 2)
                .min(buckets)
        } else {
            buckets
        };
        // The fill writes every entry: only a longer table is initialised.
        resize_unset(&mut self.sorted, total);
        let hashed = matches!(table, Table::Hashed { .. });
        if hashed {
            self.cells.resize(total, [0; 3]);
        }
        let at = self.counts[mid] as usize;
        let (s0, s1) = self.sorted.split_at_mut(at);
        let (f0, f1) = self.scratch.split_at_mut(mid);
        let (k0, k1) = self.cells.split_at_mut(if hashed { at } else { 0 });
        let ranges = &self.ranges;
        let fill = |slots: std::ops::Range<usize>,
                    sorted: &mut [Entry],
                    cells: &mut [[i32; 3]],
                    next: &mut [u32],
                    base: usize| {
            for (item, r) in ranges.iter().enumerate() {
                let (lo, hi) = boxes[item];
                table.cells_of(r, |slot, cell, starts| {
                    if slots.contains(&slot) {
                        let k = &mut next[slot - slots.start];
                        let pos = *k as usize - base;
                        sorted[pos] = Entry {
                            lo,
                            hi,
                            item: item as u32,
                            starts,
                        };
                        if hashed {
                            cells[pos] = cell;
                        }
                        *k += 1;
                    }
                });
            }
        };
        both(
            par,
            || fill(0..mid, s0, k0, f0, 0),
            || fill(mid..buckets, s1, k1, f1, at),
        );
    }

    /// Builds the grid over `boxes` and sets `out` to every pair `(i, j)`,
    /// `i < j`, of boxes that overlap (closed boxes) and for which
    /// `skip(i, j)` is false, grouped by `i` ascending. The order is a
    /// function of the input alone (deterministic); with `par`, the build,
    /// the buckets' pairs and the grouping run on two threads. With a
    /// [`Self::limit`] that more pairs pass, `out` is left empty and
    /// [`Self::overflowed`] says so.
    pub(crate) fn pairs(
        &mut self,
        boxes: &[(Vec3, Vec3)],
        skip: impl Fn(u32, u32) -> bool + Sync,
        par: bool,
        out: &mut Vec<(u32, u32)>,
    ) {
        // Built even for fewer than two boxes: the grid answers the tube
        // extensions' queries until the next build, and must not name the
        // boxes of an earlier one.
        self.build(boxes, par);
        out.clear();
        self.overflowed = false;
        if boxes.len() < 2 {
            return;
        }
        let limit = self.limit.unwrap_or(usize::MAX);
        let mut found = std::mem::take(&mut self.found);
        let mut upper = std::mem::take(&mut self.found_upper);
        found.clear();
        upper.clear();
        self.scan_halves(&skip, par, limit, &mut found, &mut upper);
        found.append(&mut upper);
        self.big_pairs(boxes, &skip, limit, &mut found);
        if found.len() > limit {
            self.overflowed = true;
            found.clear();
            upper.clear();
            self.found = found;
            self.found_upper = upper;
            return;
        }
        // Grouped by first box (a counting sort, stable: a function of the
        // input alone).
        group_by_key(
            &found,
            boxes.len(),
            |&(a, _)| [a],
            |_, &pair| pair,
            par,
            &mut self.by_first,
            out,
        );
        found.clear();
        self.found = found;
        self.found_upper = upper;
    }

    /// The number of pairs [`Self::pairs`] would list, without listing
    /// them: up to past `limit` (then the count stops there).
    pub(crate) fn count_pairs(
        &mut self,
        boxes: &[(Vec3, Vec3)],
        skip: impl Fn(u32, u32) -> bool + Sync,
        par: bool,
        limit: usize,
    ) -> usize {
        self.build(boxes, par);
        if boxes.len() < 2 {
            return 0;
        }
        let (mut lo, mut hi) = (Count(0), Count(0));
        self.scan_halves(&skip, par, limit, &mut lo, &mut hi);
        let mut count = Count(lo.0 + hi.0);
        self.big_pairs(boxes, &skip, limit, &mut count);
        count.0
    }

    /// A bound on the pairs [`Self::pairs`] would list (with any `skip`),
    /// from the buckets' sizes alone, with no box tested against another
    /// and none entered: two boxes that overlap share a cell, so each pair
    /// is among those of some bucket's entries (`d·(d − 1)/2` for `d`
    /// entries); and a box kept out of the grid may pair with every other.
    /// (Counting only the pairs of entries that would report from their
    /// bucket, by the axes they start along, halved the bound for the
    /// cables bench's heap but doubled the time: the buckets must be
    /// filled.) The grid holds no box afterwards.
    pub(crate) fn pair_bound(&mut self, boxes: &[(Vec3, Vec3)], par: bool) -> u64 {
        self.build_with(boxes, par, false);
        let shared: u64 = self
            .counts
            .windows(2)
            .map(|w| {
                let d = (w[1] - w[0]) as u64;
                d * d.saturating_sub(1) / 2
            })
            .sum();
        let bound = shared + self.big.len() as u64 * boxes.len().saturating_sub(1) as u64;
        self.table = Table::Empty;
        self.counts.clear();
        self.big.clear();
        self.items = 0;
        bound
    }

    /// The buckets' pairs ([`Self::bucket_pairs`]) in two halves of about
    /// equal entries, into `lo` and `hi` (side by side with `par`).
    fn scan_halves<S: PairSink + Send>(
        &self,
        skip: &(impl Fn(u32, u32) -> bool + Sync),
        par: bool,
        limit: usize,
        lo: &mut S,
        hi: &mut S,
    ) {
        let buckets = self.counts.len().saturating_sub(1);
        let total = self.sorted.len();
        let mid = self
            .counts
            .partition_point(|&c| (c as usize) < total / 2)
            .min(buckets);
        both(
            par,
            || self.bucket_pairs(0..mid, skip, limit, lo),
            || self.bucket_pairs(mid..buckets, skip, limit, hi),
        );
    }

    /// The pairs of the boxes kept out of the grid ([`Self::pairs`]), each
    /// against every box (a pair of two such boxes once, from the lower).
    fn big_pairs(
        &self,
        boxes: &[(Vec3, Vec3)],
        skip: &impl Fn(u32, u32) -> bool,
        limit: usize,
        out: &mut impl PairSink,
    ) {
        for &g in &self.big {
            if out.count() > limit {
                break;
            }
            let bg = &boxes[g as usize];
            for (j, bj) in boxes.iter().enumerate() {
                let j = j as u32;
                if j == g || (j < g && self.is_big[j as usize]) || !overlap(bg, bj) {
                    continue;
                }
                let (a, b) = (g.min(j), g.max(j));
                if !skip(a, b) {
                    out.add(a, b);
                }
            }
        }
    }

    /// The pairs of [`Self::pairs`] within the grid, from the buckets
    /// `range`: each bucket's entries against each other (memory read in
    /// order). Two overlapping boxes share every cell from the one holding
    /// the lower corner of their intersection (the componentwise maximum
    /// of their lower corners: along each axis, where one of them starts)
    /// up to their upper corners, and the pair is reported from that cell
    /// alone: the one where, along every axis, at least one of the two
    /// starts (their `starts` bits together make all three). In a hashed
    /// table, where a bucket may hold several cells (and a box twice), the
    /// two entries must also be of the same cell.
    fn bucket_pairs(
        &self,
        range: std::ops::Range<usize>,
        skip: &(impl Fn(u32, u32) -> bool + Sync),
        limit: usize,
        out: &mut impl PairSink,
    ) {
        let hashed = matches!(self.table, Table::Hashed { .. });
        for k in range {
            let (from, to) = (self.counts[k] as usize, self.counts[k + 1] as usize);
            let bucket = &self.sorted[from..to];
            // The axes along which some entry starts in this bucket: an
            // entry that needs another axis has no pair reported here (boxes
            // piled on one another start in one cell of the eight they cover,
            // and the other seven buckets held 100,000 entries each without
            // a pair, which no limit stopped: 23 s to count a cable wound
            // into a millimetre).
            let any = bucket.iter().fold(0, |a, e| a | e.starts);
            for (m, ea) in bucket.iter().enumerate() {
                // (Past the limit by at most a bucket's entries.)
                if out.count() > limit {
                    return;
                }
                let need = 7 & !ea.starts;
                if need & !any != 0 {
                    continue;
                }
                let a = (ea.lo, ea.hi);
                for (c, chunk) in bucket[m + 1..].chunks(8).enumerate() {
                    let mut mask = overlap_mask(&a, need, chunk);
                    while mask != 0 {
                        let l = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        let (j, eb) = (8 * c + l, &chunk[l]);
                        if (!hashed || self.cells[from + m] == self.cells[from + m + 1 + j])
                            && !skip(ea.item, eb.item)
                        {
                            out.add(ea.item, eb.item);
                        }
                    }
                }
            }
        }
    }

    /// Whether the last [`Self::pairs`] found more pairs than its limit
    /// (and listed none).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Appends to `out`, once each, every box of the last build that
    /// overlaps `b` as it was built (with any box too big for the grid),
    /// unless `skip` says otherwise. A box is reported from one cell only,
    /// as [`Self::bucket_pairs`] does: the one where, along every axis, it
    /// or `b` starts. In a dense table, only the cells of `b` within its
    /// bounds are read (the others hold nothing; the cell where two boxes'
    /// intersection starts is inside them). Every box (the caller tests
    /// them) when `b` spans too many cells.
    pub(crate) fn query(&self, b: &(Vec3, Vec3), skip: impl Fn(u32) -> bool, out: &mut Vec<u32>) {
        let (mut lo, mut hi) = (self.to_cell(b.0), self.to_cell(b.1));
        if let Table::Dense { origin, dims } = self.table {
            for k in 0..3 {
                lo[k] = lo[k].max(origin[k]);
                hi[k] = hi[k].min(origin[k] + dims[k] - 1);
            }
        }
        if (0..3).any(|k| hi[k] < lo[k]) {
            out.extend(self.big.iter().copied().filter(|&g| !skip(g)));
            return;
        }
        if (0..3).any(|k| hi[k] as i64 - lo[k] as i64 >= 2 * MAX_CELLS_PER_AXIS as i64) {
            out.extend((0..self.items as u32).filter(|&i| !skip(i)));
            return;
        }
        let hashed = matches!(self.table, Table::Hashed { .. });
        for x in lo[0]..=hi[0] {
            for y in lo[1]..=hi[1] {
                for z in lo[2]..=hi[2] {
                    let cell = [x, y, z];
                    let Some(k) = self.table.slot(cell) else {
                        continue;
                    };
                    let starts = (x == lo[0]) as u32
                        | ((y == lo[1]) as u32) << 1
                        | ((z == lo[2]) as u32) << 2;
                    let need = 7 & !starts;
                    let (from, to) = (self.counts[k] as usize, self.counts[k + 1] as usize);
                    for (c, chunk) in self.sorted[from..to].chunks(8).enumerate() {
                        let mut mask = overlap_mask(b, need, chunk);
                        while mask != 0 {
                            let l = mask.trailing_zeros() as usize;
                            mask &= mask - 1;
                            let e = &chunk[l];
                            if (!hashed || self.cells[from + 8 * c + l] == cell) && !skip(e.item) {
                                out.push(e.item);
                            }
                        }
                    }
                }
            }
        }
        out.extend(self.big.iter().copied().filter(|&g| !skip(g)));
    }
}

#[cfg(test)]
#[path = "pairs_tests.rs"]
mod tests;
