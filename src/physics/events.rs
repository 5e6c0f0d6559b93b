//! Events pulled after a step: contact begin/end and bodies that moved.

use super::math::Vec3;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactEventKind {
    Begin,
    End,
}

/// A contact began or ended between bodies `a` and `b` (wire ids, a < b).
/// `point` and `normal` (from a to b) are those of the deepest point;
/// `impulse` is the total normal impulse of the step (0 for an end).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactEvent {
    pub kind: ContactEventKind,
    pub a: u64,
    pub b: u64,
    pub point: [f32; 3],
    pub normal: [f32; 3],
    pub impulse: f32,
}

impl ContactEvent {
    pub fn new(
        kind: ContactEventKind,
        a: u64,
        b: u64,
        point: Vec3,
        normal: Vec3,
        impulse: f32,
    ) -> Self {
        // Keep a < b on the wire; flip the normal with the order.
        let (a, b, normal) = if a <= b {
            (a, b, normal)
        } else {
            (b, a, -normal)
        };
        Self {
            kind,
            a,
            b,
            point: point.to_array(),
            normal: normal.to_array(),
            impulse,
        }
    }
}
