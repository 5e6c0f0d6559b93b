//! TEMPORARY brute-force broad phase with the sweep-and-prune API; replaced
//! by the incremental SAP branch.

use super::aabb::Aabb;
use std::collections::BTreeMap;

#[derive(Default)]
pub struct BroadPhase {
    boxes: BTreeMap<u32, Aabb>,
    pairs: Vec<(u32, u32)>,
}

impl BroadPhase {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn insert(&mut self, key: u32, aabb: Aabb) {
        self.boxes.insert(key, aabb);
    }
    pub fn remove(&mut self, key: u32) {
        self.boxes.remove(&key);
    }
    pub fn contains(&self, key: u32) -> bool {
        self.boxes.contains_key(&key)
    }
    pub fn update(&mut self, key: u32, aabb: Aabb) {
        self.boxes.insert(key, aabb);
    }
    pub fn update_fat(&mut self, key: u32, tight: Aabb, margin: f32) -> bool {
        let cur = self.boxes[&key];
        if cur.contains(&tight) {
            return false;
        }
        self.boxes.insert(key, tight.expanded(margin));
        true
    }
    pub fn update_pairs(&mut self) {
        self.pairs.clear();
        let v: Vec<_> = self.boxes.iter().collect();
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                if v[i].1.overlaps(v[j].1) {
                    self.pairs.push((*v[i].0, *v[j].0));
                }
            }
        }
    }
    pub fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pairs.iter().copied()
    }
}
