//! Islands and sleeping. Islands are rebuilt every step with a union–find
//! over touching contacts between non-static bodies (static bodies never join
//! islands: they do not carry motion from one body to another). An island
//! whose bodies have all been slow for `time_to_sleep` falls asleep as a
//! whole; a sleeping body touched by an awake one wakes its whole island.

/// Sleep settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SleepSettings {
    pub enabled: bool,
    /// Speed (m/s) under which a body counts as resting; the angular speed
    /// counts as |ω|·(bounding radius).
    pub speed_threshold: f32,
    /// Seconds an island must rest before it sleeps.
    pub time_to_sleep: f32,
}

impl Default for SleepSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            speed_threshold: 0.05,
            time_to_sleep: 0.5,
        }
    }
}

/// Union–find over dense indices with path halving and union by size.
#[derive(Clone, Debug, Default)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    pub fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = self.parent[x as usize];
        }
        x
    }

    pub fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return;
        }
        let (big, small) = if self.size[ra as usize] >= self.size[rb as usize] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_find_groups() {
        let mut uf = UnionFind::new(6);
        uf.union(0, 1);
        uf.union(2, 3);
        uf.union(1, 3);
        assert_eq!(uf.find(0), uf.find(2));
        assert_ne!(uf.find(0), uf.find(4));
        assert_ne!(uf.find(4), uf.find(5));
    }
}
