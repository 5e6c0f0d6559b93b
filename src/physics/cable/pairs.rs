//! Broad phase over cable segments: a hashed uniform grid, filled by a
//! counting sort, so finding the overlapping boxes of N segments costs
//! O(N + close pairs) with no per-cell allocation.
//!
//! Each box is entered in every cell it covers. Two boxes that overlap share
//! the cell holding the lower corner of their intersection (the
//! componentwise maximum of their lower corners), and the pair is reported
//! from that cell only, so every pair comes out once without a dedup pass.
//! Boxes covering more than [`MAX_CELLS_PER_AXIS`] cells along an axis (a
//! very long or very fast segment) stay out of the grid and are tested
//! against every box; they are rare, and the result stays exact.

use super::super::math::Vec3;

/// Boxes wider than this many cells along an axis are tested by brute force.
const MAX_CELLS_PER_AXIS: i32 = 4;

#[derive(Clone, Copy)]
struct Entry {
    cell: [i32; 3],
    item: u32,
}

/// Memory kept between calls.
#[derive(Default, Debug, Clone)]
pub(crate) struct Grid {
    counts: Vec<u32>,
    sorted: Vec<Entry>,
    staged: Vec<(u32, Entry)>,
    big: Vec<u32>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}:{}", self.cell, self.item)
    }
}

#[inline]
fn hash(c: [i32; 3]) -> u32 {
    (c[0] as u32).wrapping_mul(0x9E37_79B1)
        ^ (c[1] as u32).wrapping_mul(0x85EB_CA77)
        ^ (c[2] as u32).wrapping_mul(0xC2B2_AE3D)
}

#[inline]
fn overlap(a: &(Vec3, Vec3), b: &(Vec3, Vec3)) -> bool {
    a.0.cmple(b.1).all() && b.0.cmple(a.1).all()
}

impl Grid {
    /// Appends to `out` every pair `(i, j)`, `i < j`, of boxes that overlap
    /// (closed boxes) and for which `skip(i, j)` is false. The order is a
    /// function of the input alone (deterministic).
    pub(crate) fn pairs(
        &mut self,
        boxes: &[(Vec3, Vec3)],
        skip: impl Fn(u32, u32) -> bool,
        out: &mut Vec<(u32, u32)>,
    ) {
        if boxes.len() < 2 {
            return;
        }
        // Cell size: the mean box extent, so that a box covers a few cells.
        let mean = boxes
            .iter()
            .map(|(lo, hi)| (*hi - *lo).max_element() as f64)
            .sum::<f64>()
            / boxes.len() as f64;
        let cell = (mean as f32).max(1.0e-3);
        let inv = 1.0 / cell;
        let to_cell = |p: Vec3| {
            let c = (p * inv).floor();
            // Clamped so that far-away coordinates cannot overflow.
            let cl = |x: f32| x.clamp(-1.0e9, 1.0e9) as i32;
            [cl(c.x), cl(c.y), cl(c.z)]
        };
        self.staged.clear();
        self.big.clear();
        for (i, b) in boxes.iter().enumerate() {
            let (lo, hi) = (to_cell(b.0), to_cell(b.1));
            if (0..3).any(|k| hi[k] as i64 - lo[k] as i64 >= MAX_CELLS_PER_AXIS as i64) {
                self.big.push(i as u32);
                continue;
            }
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        let cell = [x, y, z];
                        self.staged.push((
                            hash(cell),
                            Entry {
                                cell,
                                item: i as u32,
                            },
                        ));
                    }
                }
            }
        }
        // Counting sort by bucket (table twice the entries, a power of two).
        let buckets = (self.staged.len() * 2).next_power_of_two().max(16);
        let mask = (buckets - 1) as u32;
        self.counts.clear();
        self.counts.resize(buckets + 1, 0);
        for (h, _) in &self.staged {
            self.counts[(h & mask) as usize + 1] += 1;
        }
        for k in 1..=buckets {
            self.counts[k] += self.counts[k - 1];
        }
        self.sorted.clear();
        self.sorted.resize(
            self.staged.len(),
            Entry {
                cell: [0; 3],
                item: 0,
            },
        );
        {
            let mut next = self.counts.clone();
            for (h, e) in &self.staged {
                let slot = &mut next[(h & mask) as usize];
                self.sorted[*slot as usize] = *e;
                *slot += 1;
            }
        }
        for k in 0..buckets {
            let bucket = &self.sorted[self.counts[k] as usize..self.counts[k + 1] as usize];
            for (x, ea) in bucket.iter().enumerate() {
                for eb in &bucket[x + 1..] {
                    if ea.cell != eb.cell {
                        continue; // another cell with the same hash
                    }
                    let (i, j) = if ea.item < eb.item {
                        (ea.item, eb.item)
                    } else {
                        (eb.item, ea.item)
                    };
                    let (bi, bj) = (&boxes[i as usize], &boxes[j as usize]);
                    if !overlap(bi, bj) || to_cell(bi.0.max(bj.0)) != ea.cell || skip(i, j) {
                        continue;
                    }
                    out.push((i, j));
                }
            }
        }
        // Boxes kept out of the grid: against everything.
        for &g in &self.big {
            let bg = &boxes[g as usize];
            for (i, b) in boxes.iter().enumerate() {
                let i = i as u32;
                if i == g || (self.big.contains(&i) && i < g) || !overlap(bg, b) {
                    continue;
                }
                let (a, c) = if i < g { (i, g) } else { (g, i) };
                if !skip(a, c) {
                    out.push((a, c));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(boxes: &[(Vec3, Vec3)]) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if overlap(&boxes[i], &boxes[j]) {
                    v.push((i as u32, j as u32));
                }
            }
        }
        v
    }

    /// A small deterministic generator (no dependency for one test).
    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32) / (1u64 << 24) as f32
    }

    #[test]
    fn grid_pairs_equal_brute_force_with_mixed_sizes_and_touching_boxes() {
        let mut seed = 7;
        for round in 0..20 {
            let mut boxes = Vec::new();
            for k in 0..300 {
                let p = Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * 5.0 - 2.5;
                // Mostly small boxes, some long ones, some degenerate (flat).
                let size = if k % 37 == 0 {
                    Vec3::new(4.0 * lcg(&mut seed), 0.1, 0.1)
                } else if k % 11 == 0 {
                    Vec3::new(0.2, 0.0, 0.2)
                } else {
                    Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * 0.3
                };
                // Snap some corners to a lattice so that boxes touch exactly.
                let p = if round % 2 == 0 {
                    (p * 10.0).round() / 10.0
                } else {
                    p
                };
                boxes.push((p, p + size));
            }
            let mut got = Vec::new();
            Grid::default().pairs(&boxes, |_, _| false, &mut got);
            let n = got.len();
            got.sort_unstable();
            got.dedup();
            assert_eq!(got.len(), n, "a pair was reported twice");
            assert_eq!(got, brute(&boxes), "round {round}");
        }
    }

    #[test]
    fn skipped_pairs_are_left_out() {
        let boxes: Vec<(Vec3, Vec3)> = (0..10)
            .map(|i| {
                let p = Vec3::new(i as f32 * 0.5, 0.0, 0.0);
                (p, p + Vec3::splat(1.0))
            })
            .collect();
        let mut got = Vec::new();
        Grid::default().pairs(&boxes, |i, j| j - i <= 1, &mut got);
        got.sort_unstable();
        let want: Vec<(u32, u32)> = brute(&boxes)
            .into_iter()
            .filter(|(i, j)| j - i > 1)
            .collect();
        assert_eq!(got, want);
    }
}
