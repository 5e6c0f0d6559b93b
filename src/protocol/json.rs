//! The JSON stream format (`?format=json`, the default): each message is one
//! text frame, the [`ServerMessage`] serialized as DESIGN.md shows.
//!
//! [`JsonEncoder`] applies the same delta rule as the binary encoder: it
//! remembers the state last sent per body id (exact f32 values) and a tick
//! carries only the bodies whose state differs from it. Values are never
//! quantized, so a JSON tick carries every change, however small.

use super::{Body, BodyState, CableState, ServerMessage, WorldInfo};
use crate::physics::events::ContactEvent;
use std::collections::HashMap;

/// One message as JSON text (stateless).
pub fn encode_json(msg: &ServerMessage) -> String {
    // Serializing these types cannot fail: no maps with non-string keys,
    // no failing Serialize impls. Non-finite floats become null.
    serde_json::to_string(msg).expect("ServerMessage serializes")
}

/// Parses one JSON message (what a Rust client of the JSON stream uses).
pub fn decode_json(text: &str) -> Result<ServerMessage, serde_json::Error> {
    serde_json::from_str(text)
}

/// Encodes the JSON frames of one subscriber group; see the module docs.
#[derive(Default)]
pub struct JsonEncoder {
    last: HashMap<u64, BodyState>,
    scratch: Vec<BodyState>,
}

/// The state a spec carries, as a tick would send it.
fn spec_state(id: u64, b: &Body) -> BodyState {
    BodyState {
        id,
        p: b.position,
        q: b.rotation,
        v: b.linear_velocity,
        w: b.angular_velocity,
    }
}

/// Bit-exact equality (so a NaN equals itself and 0.0 differs from −0.0).
fn same(a: &BodyState, b: &BodyState) -> bool {
    let bits = |s: &BodyState| {
        let mut out = [0u32; 13];
        for (o, x) in out
            .iter_mut()
            .zip(s.p.iter().chain(&s.q).chain(&s.v).chain(&s.w))
        {
            *o = x.to_bits();
        }
        out
    };
    bits(a) == bits(b)
}

impl JsonEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn baseline_len(&self) -> usize {
        self.last.len()
    }

    /// A hello with the full state; the baseline becomes that state.
    pub fn encode_hello(&mut self, world: &WorldInfo, bodies: &[Body]) -> String {
        self.last.clear();
        for b in bodies {
            if let Some(id) = b.id {
                self.last.insert(id, spec_state(id, b));
            }
        }
        encode_json(&ServerMessage::Hello {
            world: world.clone(),
            bodies: bodies.to_vec(),
            cables: Vec::new(),
        })
    }

    /// A hello for a subscriber joining this group, leaving the baseline
    /// alone: bodies are sent in the state the group last received, so the
    /// group's next tick brings the newcomer up to date like everyone else.
    pub fn encode_join_hello(&self, world: &WorldInfo, bodies: &[Body]) -> String {
        self.encode_join_hello_with_cables(world, bodies, &[])
    }

    /// [`Self::encode_join_hello`] carrying the cables' states too.
    pub fn encode_join_hello_with_cables(
        &self,
        world: &WorldInfo,
        bodies: &[Body],
        cables: &[CableState],
    ) -> String {
        let bodies = bodies
            .iter()
            .map(|b| {
                let mut b = b.clone();
                if let Some(s) = b.id.and_then(|id| self.last.get(&id)) {
                    b.position = s.p;
                    b.rotation = s.q;
                    b.linear_velocity = s.v;
                    b.angular_velocity = s.w;
                }
                b
            })
            .collect();
        encode_json(&ServerMessage::Hello {
            world: world.clone(),
            bodies,
            cables: cables.to_vec(),
        })
    }

    /// A tick carrying only the bodies of `states` whose state differs from
    /// the last one sent (by ascending id; for a repeated id the last wins;
    /// ids in `removed` are skipped). Before the comparison `spawned` enter
    /// the baseline and then `removed` leave it.
    pub fn encode_tick(
        &mut self,
        tick: u64,
        time: f64,
        states: &[BodyState],
        contacts: &[ContactEvent],
        spawned: &[Body],
        removed: &[u64],
    ) -> String {
        self.encode_tick_with_cables(tick, time, states, contacts, spawned, removed, &[])
    }

    /// [`Self::encode_tick`] carrying the cables' states too.
    #[allow(clippy::too_many_arguments)]
    pub fn encode_tick_with_cables(
        &mut self,
        tick: u64,
        time: f64,
        states: &[BodyState],
        contacts: &[ContactEvent],
        spawned: &[Body],
        removed: &[u64],
        cables: &[CableState],
    ) -> String {
        for b in spawned {
            if let Some(id) = b.id {
                self.last.insert(id, spec_state(id, b));
            }
        }
        let mut removed = removed.to_vec();
        removed.sort_unstable();
        removed.dedup();
        for id in &removed {
            self.last.remove(id);
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(states);
        self.scratch.sort_by_key(|s| s.id);
        let mut bodies = Vec::new();
        for (i, s) in self.scratch.iter().enumerate() {
            if self.scratch.get(i + 1).is_some_and(|n| n.id == s.id)
                || removed.binary_search(&s.id).is_ok()
            {
                continue;
            }
            if self.last.get(&s.id).is_some_and(|l| same(l, s)) {
                continue;
            }
            self.last.insert(s.id, *s);
            bodies.push(*s);
        }
        encode_json(&ServerMessage::Tick {
            tick,
            time,
            bodies,
            contacts: contacts.to_vec(),
            spawned: spawned.to_vec(),
            removed,
            cables: cables.to_vec(),
        })
    }

    pub fn encode_ack(seq: u64) -> String {
        encode_json(&ServerMessage::Ack { seq })
    }

    pub fn encode_error(seq: Option<u64>, code: &str, message: &str) -> String {
        encode_json(&ServerMessage::Error {
            seq,
            code: code.into(),
            message: message.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(id: u64, x: f32) -> BodyState {
        BodyState {
            id,
            p: [x, 0.0, 0.0],
            q: [0.0, 0.0, 0.0, 1.0],
            v: [0.0; 3],
            w: [0.0; 3],
        }
    }

    #[test]
    fn json_ticks_carry_only_changed_bodies() {
        let mut e = JsonEncoder::new();
        let first = e.encode_tick(1, 0.1, &[state(2, 1.0), state(1, 1.0)], &[], &[], &[]);
        let msg = decode_json(&first).unwrap();
        let ServerMessage::Tick { bodies, .. } = msg else {
            panic!()
        };
        assert_eq!(bodies.iter().map(|b| b.id).collect::<Vec<_>>(), [1, 2]);
        let second = e.encode_tick(2, 0.2, &[state(1, 1.0), state(2, 1.5)], &[], &[], &[]);
        let ServerMessage::Tick { bodies, .. } = decode_json(&second).unwrap() else {
            panic!()
        };
        assert_eq!(bodies, [state(2, 1.5)]);
        let third = e.encode_tick(3, 0.3, &[state(1, 1.0), state(2, 1.5)], &[], &[], &[2]);
        assert!(third.contains("\"bodies\":[]"), "{third}");
        assert_eq!(e.baseline_len(), 1);
    }

    #[test]
    fn json_error_without_seq_omits_it_and_parses_back() {
        let text = JsonEncoder::encode_error(None, "not_found", "no body 7");
        assert_eq!(
            text,
            r#"{"type":"error","code":"not_found","message":"no body 7"}"#
        );
        assert_eq!(
            decode_json(&text).unwrap(),
            ServerMessage::Error {
                seq: None,
                code: "not_found".into(),
                message: "no body 7".into()
            }
        );
        assert_eq!(JsonEncoder::encode_ack(4), r#"{"type":"ack","seq":4}"#);
    }
}
