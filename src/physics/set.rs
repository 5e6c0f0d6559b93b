//! Bodies in a generational arena. A [`BodyHandle`] is an index plus a
//! generation: a removed handle is detected, never confused with a new body.

use super::body::Body;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyHandle {
    pub index: u32,
    pub generation: u32,
}

#[derive(Clone, Debug, Default)]
struct Slot {
    generation: u32,
    body: Option<Body>,
}

#[derive(Clone, Debug, Default)]
pub struct BodySet {
    slots: Vec<Slot>,
    free: Vec<u32>,
    len: usize,
}

impl BodySet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// One past the largest slot index in use (for dense side tables).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub fn insert(&mut self, body: Body) -> BodyHandle {
        self.len += 1;
        // Reuse the lowest free slot last freed (LIFO) — deterministic.
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.body = Some(body);
            BodyHandle {
                index,
                generation: slot.generation,
            }
        } else {
            self.slots.push(Slot {
                generation: 1,
                body: Some(body),
            });
            BodyHandle {
                index: self.slots.len() as u32 - 1,
                generation: 1,
            }
        }
    }

    pub fn remove(&mut self, h: BodyHandle) -> Option<Body> {
        let slot = self.slots.get_mut(h.index as usize)?;
        if slot.generation != h.generation {
            return None;
        }
        let body = slot.body.take()?;
        slot.generation = slot.generation.wrapping_add(1).max(1);
        self.free.push(h.index);
        self.len -= 1;
        Some(body)
    }

    pub fn get(&self, h: BodyHandle) -> Option<&Body> {
        let slot = self.slots.get(h.index as usize)?;
        (slot.generation == h.generation)
            .then_some(slot.body.as_ref())
            .flatten()
    }

    pub fn get_mut(&mut self, h: BodyHandle) -> Option<&mut Body> {
        let slot = self.slots.get_mut(h.index as usize)?;
        if slot.generation != h.generation {
            return None;
        }
        slot.body.as_mut()
    }

    /// By slot index, ignoring generations (for the engine's inner loops).
    #[inline]
    pub fn by_index(&self, index: u32) -> Option<&Body> {
        self.slots.get(index as usize)?.body.as_ref()
    }

    #[inline]
    pub fn by_index_mut(&mut self, index: u32) -> Option<&mut Body> {
        self.slots.get_mut(index as usize)?.body.as_mut()
    }

    pub fn handle_of(&self, index: u32) -> Option<BodyHandle> {
        let slot = self.slots.get(index as usize)?;
        slot.body.as_ref().map(|_| BodyHandle {
            index,
            generation: slot.generation,
        })
    }

    /// Bodies in slot order (deterministic).
    pub fn iter(&self) -> impl Iterator<Item = (BodyHandle, &Body)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.body.as_ref().map(|b| {
                (
                    BodyHandle {
                        index: i as u32,
                        generation: s.generation,
                    },
                    b,
                )
            })
        })
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (BodyHandle, &mut Body)> {
        self.slots.iter_mut().enumerate().filter_map(|(i, s)| {
            let generation = s.generation;
            s.body.as_mut().map(|b| {
                (
                    BodyHandle {
                        index: i as u32,
                        generation,
                    },
                    b,
                )
            })
        })
    }
}
