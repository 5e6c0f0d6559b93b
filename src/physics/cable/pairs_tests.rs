//! Tests of the segment grid (`pairs.rs`).

use super::super::lcg;
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
        let mut grid = Grid::default();
        grid.pairs(&boxes, |_, _| false, round % 3 == 0, &mut got);
        assert!(
            got.windows(2).all(|w| w[0].0 <= w[1].0),
            "pairs come out grouped by their first box, ascending"
        );
        let n = got.len();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), n, "a pair was reported twice");
        assert_eq!(got, brute(&boxes), "round {round}");
        // The bound from the buckets alone covers them.
        let bound = Grid::default().pair_bound(&boxes, round % 3 == 0);
        assert!(
            bound >= n as u64,
            "round {round}: bound {bound} < {n} pairs"
        );
        // Counted without a list: the same pairs, on one thread or two,
        // with a skip; and the incremental count agrees.
        let skip = |a: u32, b: u32| (a + b).is_multiple_of(4);
        let kept = got.iter().filter(|&&(a, b)| !skip(a, b)).count();
        for par in [false, true] {
            let mut counter = Grid::default();
            assert_eq!(counter.count_pairs(&boxes, skip, par, usize::MAX), kept);
        }
        let skip_usize = |a: usize, b: usize| skip(a as u32, b as u32);
        assert_eq!(
            count_overlaps_with(&boxes, 0, skip_usize, u64::MAX),
            kept as u64
        );
        assert_eq!(
            count_overlaps_with(&boxes, 1, skip_usize, u64::MAX),
            kept as u64
        );
        // Queries: every overlapping box, once, unless skipped.
        for (k, q) in boxes.iter().enumerate().step_by(7) {
            assert_query(
                &grid,
                &boxes,
                q,
                |j| (j + k as u32).is_multiple_of(5),
                round,
            );
        }
        // A query spanning too many cells.
        let wide = (Vec3::splat(-3.0), Vec3::splat(3.0));
        assert_query(&grid, &boxes, &wide, |j| j.is_multiple_of(3), round);
        // Queries reaching out of the boxes' bounds (partly, from far
        // off, or wholly outside them).
        for q in [
            (Vec3::new(2.0, -4.0, 0.0), Vec3::new(3.5, 0.0, 0.5)),
            (Vec3::new(-50.0, 0.0, 0.0), Vec3::new(-2.3, 0.3, 0.3)),
            (Vec3::new(-0.5, -0.5, -40.0), Vec3::new(0.0, 0.0, 40.0)),
            (Vec3::splat(10.0), Vec3::splat(11.0)),
        ] {
            assert_query(&grid, &boxes, &q, |_| false, round);
        }
    }
}

/// A dense table: a query reaching far out of its bounds from a corner
/// reads the few cells within them and names exactly the boxes it
/// overlaps (not every box, as a query that wide would be given
/// without the bounds).
#[test]
fn a_query_far_out_of_a_dense_table_reads_only_its_cells() {
    let mut seed = 5;
    let boxes: Vec<(Vec3, Vec3)> = (0..2000)
        .map(|_| {
            let p = Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * 2.0;
            (p, p + Vec3::splat(0.2))
        })
        .collect();
    let mut grid = Grid::default();
    grid.build(&boxes, false);
    assert!(matches!(grid.table, Table::Dense { .. }));
    let corner = (Vec3::splat(1.9), Vec3::splat(60.0));
    let mut found = Vec::new();
    grid.query(&corner, |_| false, &mut found);
    found.sort_unstable();
    let want: Vec<u32> = (0..boxes.len() as u32)
        .filter(|&j| overlap(&corner, &boxes[j as usize]))
        .collect();
    assert!(!want.is_empty() && want.len() < 100, "{}", want.len());
    assert_eq!(found, want);
}

/// `query` names every box `q` overlaps and `skip` does not, once, and
/// no other box but those kept out of the grid (every box when `q` is
/// too wide for it).
fn assert_query(
    grid: &Grid,
    boxes: &[(Vec3, Vec3)],
    q: &(Vec3, Vec3),
    skip: impl Fn(u32) -> bool,
    round: usize,
) {
    let mut found = Vec::new();
    grid.query(q, &skip, &mut found);
    let n = found.len();
    found.sort_unstable();
    found.dedup();
    assert_eq!(found.len(), n, "round {round}: a box was named twice");
    let want: Vec<u32> = (0..boxes.len() as u32)
        .filter(|&j| overlap(q, &boxes[j as usize]) && !skip(j))
        .collect();
    let extra: Vec<u32> = found
        .iter()
        .copied()
        .filter(|j| want.binary_search(j).is_err())
        .collect();
    let wide = (q.1 - q.0).max_element() * grid.inv >= 2.0 * MAX_CELLS_PER_AXIS as f32 - 1.0;
    assert!(
        extra
            .iter()
            .all(|&j| !skip(j) && (wide || grid.is_big[j as usize])),
        "round {round}: query {q:?} named {extra:?}"
    );
    assert_eq!(
        found.len() - extra.len(),
        want.len(),
        "round {round}: query {q:?}"
    );
}

/// Boxes in clusters far apart: a hashed table, where a bucket holds
/// several cells (and a box twice; with a few buckets, many), on one
/// thread and on two.
#[test]
fn hashed_grid_pairs_equal_brute_force() {
    let mut seed = 11;
    let mut boxes = Vec::new();
    for k in 0..1000 {
        let cluster = Vec3::new((k % 5) as f32 * 400.0, (k % 3) as f32 * -300.0, 0.0);
        let p = cluster + Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * 3.0;
        let size = Vec3::new(lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)) * 0.6;
        boxes.push((p, p + size));
    }
    for (par, cap) in [(false, 0), (true, 0), (false, 64), (true, 16)] {
        let mut grid = Grid {
            hash_cap: cap,
            ..Grid::default()
        };
        let mut got = Vec::new();
        grid.pairs(&boxes, |_, _| false, par, &mut got);
        assert!(matches!(grid.table, Table::Hashed { .. }));
        let n = got.len();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), n, "a pair was reported twice");
        assert_eq!(got, brute(&boxes));
        let mut counter = Grid {
            hash_cap: cap,
            ..Grid::default()
        };
        assert_eq!(
            counter.count_pairs(&boxes, |_, _| false, par, usize::MAX),
            n
        );
        let bound = counter.pair_bound(&boxes, par);
        assert!(bound >= n as u64, "cap {cap}: bound {bound} < {n} pairs");
        for (k, q) in boxes.iter().enumerate().step_by(13) {
            assert_query(&grid, &boxes, q, |j| (j + k as u32).is_multiple_of(4), cap);
        }
    }
}

/// The bound on the pairs is the pairs of each bucket's entries, and
/// those of a box too big for the grid with every other: boxes apart in
/// cells of their own, none; boxes within one cell, every two of them
/// (though only some overlap); one long box across the rest, one more
/// for each of them.
#[test]
fn the_pair_bound_counts_each_buckets_entries_pairs() {
    for par in [false, true] {
        // Boxes of size 1 at least 2 apart: each alone in its cells.
        let apart: Vec<(Vec3, Vec3)> = (0..50)
            .map(|k| {
                let p = Vec3::new((k % 5) as f32, (k / 5 % 5) as f32, (k / 25) as f32) * 3.0;
                (p, p + Vec3::ONE)
            })
            .collect();
        assert_eq!(Grid::default().pair_bound(&apart, par), 0);
        // 40 small boxes inside one cell (the mean box, 1.2, is set by
        // a box too big for the grid beside them): 40·39/2 of them,
        // and the big one with each of the 40.
        let mut crowd: Vec<(Vec3, Vec3)> = (0..40)
            .map(|k| {
                let p = Vec3::splat(0.1 + 0.01 * k as f32);
                (p, p + Vec3::splat(0.3))
            })
            .collect();
        crowd.push((Vec3::splat(0.05), Vec3::splat(0.05 + 38.0)));
        let exact = brute(&crowd).len() as u64;
        let bound = Grid::default().pair_bound(&crowd, par);
        assert_eq!(bound, 40 * 39 / 2 + 40, "{exact} pairs");
        assert!(bound >= exact);
        // The same cell-mates, not overlapping (30 tiny boxes along a
        // diagonal of the cell): still every two of them.
        let mut thin: Vec<(Vec3, Vec3)> = (0..30)
            .map(|k| {
                let p = Vec3::splat(0.1 + 0.02 * k as f32);
                (p, p + Vec3::splat(0.001))
            })
            .collect();
        thin.push((
            Vec3::new(5.0, 5.0, 5.0),
            Vec3::new(5.0, 5.0, 5.0) + 30.0 * Vec3::ONE,
        ));
        // (The mean box is about 1: 30 boxes of 0.001 and one of 30.)
        assert_eq!(brute(&thin).len(), 0);
        assert_eq!(Grid::default().pair_bound(&thin, par), 30 * 29 / 2 + 30);
    }
}

/// The two-thread counting sort equals a stable sort, with one key per
/// item and with two (an item under both), keys spread or crowded.
#[test]
fn group_by_key_is_a_stable_sort() {
    let mut seed = 3;
    for (n_items, n_keys) in [(0, 0), (0, 5), (1, 1), (7, 2), (500, 40), (3000, 2999)] {
        let items: Vec<[u32; 2]> = (0..n_items)
            .map(|_| [0, 1].map(|_| (lcg(&mut seed) * n_keys as f32) as u32))
            .collect();
        for par in [false, true] {
            let (mut start, mut out) = (vec![7; 3], vec![(9, 9); 11]);
            group_by_key(
                &items,
                n_keys,
                |&[a, _]| [a],
                |k, _| (k, 0),
                par,
                &mut start,
                &mut out,
            );
            let mut want: Vec<usize> = (0..n_items).collect();
            want.sort_by_key(|&k| items[k][0]);
            assert_eq!(out.iter().map(|&(k, _)| k).collect::<Vec<_>>(), want);
            assert_eq!(start.len(), n_keys + 1);
            for key in 0..n_keys {
                let run = &out[start[key] as usize..start[key + 1] as usize];
                assert!(run.iter().all(|&(k, _)| items[k][0] == key as u32));
            }
            let mut both_keys = Vec::new();
            group_by_key(
                &items,
                n_keys,
                |&k| k,
                |k, _| k,
                par,
                &mut start,
                &mut both_keys,
            );
            let mut want: Vec<(u32, usize)> = (0..n_items)
                .flat_map(|k| items[k].map(|key| (key, k)))
                .collect();
            want.sort();
            assert_eq!(both_keys, want.iter().map(|&(_, k)| k).collect::<Vec<_>>());
        }
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
    Grid::default().pairs(&boxes, |i, j| j - i <= 1, false, &mut got);
    got.sort_unstable();
    let want: Vec<(u32, u32)> = brute(&boxes)
        .into_iter()
        .filter(|(i, j)| j - i > 1)
        .collect();
    assert_eq!(got, want);
}
