//! Contacts between pairs of bodies: the manifold, the impulses carried from
//! frame to frame (the contact cache, matched by feature id), and the state
//! needed for begin/end events.

use super::collision::{FeatureId, Manifold, PairCache};
use super::math::{Quat, Vec3};
use super::solver::PointImpulse;
use std::collections::HashMap;

/// Separation (m) under which a point counts as touching (for events and
/// islands); points farther apart are speculative. Above where continuous
/// collision stops an impact (its target distance and tolerance, 6 mm by
/// default): at 5 mm a box stopped there ended its contact the next step
/// and began it again the step after, as it fell the last millimetres.
pub const TOUCH_SLOP: f32 = 0.0075;

#[derive(Clone, Debug, Default)]
pub struct Contact {
    /// Slot indices of the two bodies, `a < b`.
    pub a: u32,
    pub b: u32,
    pub manifold: Manifold,
    /// Warm-start impulses, one per manifold point.
    pub impulses: [PointImpulse; 4],
    /// Normal impulse applied during the last step, per point.
    pub total_impulse: [f32; 4],
    pub cache: PairCache,
    pub friction: f32,
    pub restitution: f32,
    pub touching: bool,
    pub was_touching: bool,
    /// Set when the narrow phase ran this step.
    pub updated: bool,
    /// Set when the pair was still reported by the broad phase this step.
    pub alive: bool,
    /// The last measured touching manifold, kept for recycling (boxed: it
    /// is larger than the rest of the contact, and most contacts have
    /// none).
    pub frozen: Option<Box<Frozen>>,
    /// Set when the manifold was rebuilt from [`Contact::frozen`] instead
    /// of measured, the last step the narrow phase looked at the pair (a
    /// pair whose bodies both sleep keeps the flag it fell asleep with):
    /// the solver then takes its normal and lever arms as they were
    /// measured.
    pub recycled: bool,
}

/// A touching manifold as the narrow phase measured it, with the poses it
/// was measured at. While the pair barely moves (`world/narrow.rs`,
/// `recycled`), each step's manifold is rebuilt from its points, carried
/// on each body, instead of measured again, and the solver keeps its world
/// normal and lever arms: taken from each step's poses, the arms turn with
/// a tilting body and the heavy warm-started impulses of a tall stack then
/// push it further over (its lean grows).
#[derive(Clone, Copy, Debug, Default)]
pub struct Frozen {
    /// The normal in world space.
    pub normal: Vec3,
    /// A's and B's rotations.
    pub rotations: [Quat; 2],
    pub points: [FrozenPoint; 4],
    pub count: usize,
}

/// One point of a [`Frozen`] manifold.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrozenPoint {
    pub id: FeatureId,
    /// From A's and from B's centre of mass to its point on each, in world
    /// space.
    pub arms: [Vec3; 2],
    /// Its point on A in A's frame and on B in B's.
    pub local: [Vec3; 2],
}

impl Contact {
    /// Installs a new manifold, carrying each point's impulses over from the
    /// old point with the same feature id (the rest start at zero).
    pub fn set_manifold(&mut self, m: Manifold) {
        let mut carried = [PointImpulse::default(); 4];
        // Impulses found along a normal more than ~11° away are another
        // contact's: carried over, they pushed 80 spheres spawned at one
        // point (their first step's normals a fallback each, the next
        // step's from their centres) apart at 50 m/s in one step, where
        // the push-out is capped at 3 m/s.
        if self.manifold.normal.dot(m.normal) >= MIN_CARRY_COS {
            for (i, p) in m.points().iter().enumerate() {
                if let Some(j) = find(&self.manifold, p.id) {
                    carried[i] = self.impulses[j];
                }
            }
        }
        self.manifold = m;
        self.impulses = carried;
        self.touching = m.points().iter().any(|p| p.separation < TOUCH_SLOP);
    }

    /// Total normal impulse of the last step over all points.
    pub fn normal_impulse(&self) -> f32 {
        self.total_impulse[..self.manifold.count].iter().sum()
    }
}

/// Warm-start impulses are carried to a new manifold only while its
/// normal is within about 11° of the last one.
const MIN_CARRY_COS: f32 = 0.98;

/// A unit direction of its own for each pair of slots, spread over the
/// sphere: a new pair's cached normal, the one its manifold falls back to
/// while no direction separates the two (centres that coincide). With one
/// fallback for every pair (+y), 80 spheres spawned at one point were
/// pushed apart along one line, each pair at the push speed, and the outer
/// ones left at up to 59 m/s.
fn pair_direction(a: u32, b: u32) -> Vec3 {
    let h = (u64::from(a) << 32 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let h = h ^ (h >> 29);
    let (u, v) = (
        (h >> 40) as f32 / (1u64 << 24) as f32,
        ((h >> 16) & 0xFF_FFFF) as f32 / (1u64 << 24) as f32,
    );
    let z = 1.0 - 2.0 * u;
    let r = (1.0 - z * z).max(0.0).sqrt();
    let phi = std::f32::consts::TAU * v;
    Vec3::new(r * phi.cos(), z, r * phi.sin())
}

fn find(m: &Manifold, id: FeatureId) -> Option<usize> {
    m.points().iter().position(|p| p.id == id)
}

/// All contacts, stored densely in a deterministic order with a pair index.
#[derive(Clone, Debug, Default)]
pub struct ContactSet {
    pub contacts: Vec<Contact>,
    index: HashMap<(u32, u32), usize>,
}

impl ContactSet {
    pub fn len(&self) -> usize {
        self.contacts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }

    pub fn get(&self, a: u32, b: u32) -> Option<&Contact> {
        let key = (a.min(b), a.max(b));
        self.index.get(&key).map(|&i| &self.contacts[i])
    }

    /// The contact of a pair, created when missing.
    pub fn entry(&mut self, a: u32, b: u32, friction: f32, restitution: f32) -> &mut Contact {
        let key = (a.min(b), a.max(b));
        let i = *self.index.entry(key).or_insert_with(|| {
            self.contacts.push(Contact {
                a: key.0,
                b: key.1,
                friction,
                restitution,
                cache: PairCache {
                    normal: pair_direction(key.0, key.1),
                    ..Default::default()
                },
                ..Default::default()
            });
            self.contacts.len() - 1
        });
        &mut self.contacts[i]
    }

    /// Removes every contact for which `keep` is false, in a stable order,
    /// returning the removed ones.
    pub fn retain(&mut self, mut keep: impl FnMut(&Contact) -> bool) -> Vec<Contact> {
        let mut removed = Vec::new();
        let mut kept = Vec::with_capacity(self.contacts.len());
        for c in self.contacts.drain(..) {
            if keep(&c) {
                kept.push(c);
            } else {
                removed.push(c);
            }
        }
        self.contacts = kept;
        if !removed.is_empty() {
            self.index.clear();
            for (i, c) in self.contacts.iter().enumerate() {
                self.index.insert((c.a, c.b), i);
            }
        }
        removed
    }
}
