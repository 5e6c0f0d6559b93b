//! Cables in the binary stream (proto/binary.md, **cables**): quantized
//! points as key frames or residuals against the group's last two frames,
//! and the JSON ticks' cables, through the public API only.

use arbiter::protocol::json::decode_json;
use arbiter::protocol::quantize::POSITION_SCALE;
use arbiter::protocol::{
    BinaryDecoder, BinaryEncoder, JsonEncoder, ServerMessage, StepMs, WorldInfo,
};

const POS_HALF: f32 = 0.5 / POSITION_SCALE as f32;

/// A world's info for hellos (its fields do not matter to cables).
fn world() -> WorldInfo {
    WorldInfo {
        id: "w".into(),
        name: "cables".into(),
        tick_hz: 60.0,
        gravity: [0.0, -9.81, 0.0],
        paused: false,
        tick: 0,
        time: 0.0,
        body_count: 0,
        step_ms: StepMs::default(),
        fault: None,
    }
}

/// The cables a tick frame carries, decoded.
fn tick_cables(m: ServerMessage) -> Vec<arbiter::protocol::CableState> {
    match m {
        ServerMessage::Tick { cables, .. } => cables,
        other => panic!("not a tick: {other:?}"),
    }
}

/// A cable's points as the binary stream carries them (quantized).
fn quantized_cable(c: &arbiter::protocol::CableState) -> arbiter::protocol::CableState {
    use arbiter::protocol::quantize::{dequantize3, quantize3};
    arbiter::protocol::CableState {
        id: c.id,
        points: c
            .points
            .iter()
            .map(|p| dequantize3(quantize3(*p, POSITION_SCALE), POSITION_SCALE))
            .collect(),
    }
}

/// Bytes of a tick frame's cables section: the frame less the same tick
/// encoded without cables.
fn cable_bytes(frame: &[u8], tick: u64, time: f64) -> usize {
    frame.len()
        - BinaryEncoder::new()
            .encode_tick(tick, time, &[], &[], &[], &[])
            .len()
}

#[test]
fn cables_round_trip_in_binary_and_json_ticks() {
    use arbiter::protocol::CableState;
    let cables = vec![
        CableState {
            id: 9,
            points: vec![[0.0, 1.0, 2.0], [-3.5, 1e-3, 7.25], [1e6, -2e6, 0.3]],
        },
        CableState {
            id: 12,
            points: vec![[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]],
        },
    ];
    let mut enc = BinaryEncoder::new();
    let frame = enc.encode_tick_with_cables(5, 0.1, &[], &[], &[], &[], &cables);
    let mut dec = BinaryDecoder::new();
    let got = tick_cables(dec.decode(&frame).unwrap());
    assert_eq!(got, cables.iter().map(quantized_cable).collect::<Vec<_>>());
    for (g, c) in got.iter().zip(&cables) {
        for (a, b) in g.points.iter().zip(&c.points) {
            for k in 0..3 {
                assert!((a[k] - b[k]).abs() <= POS_HALF * (1.0 + 1e-6) || b[k].abs() > 1e5);
            }
        }
    }
    // Truncated or padded cable sections are errors, never panics, and
    // leave the decoder as it was (the next frame's residuals still decode).
    let moved: Vec<CableState> = cables
        .iter()
        .map(|c| CableState {
            id: c.id,
            points: c.points.iter().map(|p| [p[0] + 0.01, p[1], p[2]]).collect(),
        })
        .collect();
    let next = enc.encode_tick_with_cables(6, 0.2, &[], &[], &[], &[], &moved);
    for cut in 1..next.len() {
        assert!(dec.decode(&next[..cut]).is_err(), "cut at {cut}");
        assert!(BinaryDecoder::new()
            .decode(&frame[..cut.min(frame.len() - 1)])
            .is_err());
    }
    let mut longer = next.clone();
    longer.push(0);
    assert!(dec.decode(&longer).is_err());
    assert_eq!(
        tick_cables(dec.decode(&next).unwrap()),
        moved.iter().map(quantized_cable).collect::<Vec<_>>()
    );
    // Residuals for a cable the decoder never had a key frame of: an error.
    assert!(BinaryDecoder::new().decode(&next).is_err());
    // A key frame of fewer than two points (no cable has one): an error.
    for points in [vec![], vec![[0.0, 1.0, 0.0]]] {
        let one = [CableState { id: 3, points }];
        let frame = BinaryEncoder::new().encode_tick_with_cables(1, 0.1, &[], &[], &[], &[], &one);
        assert!(BinaryDecoder::new().decode(&frame).is_err());
    }
    let mut json = JsonEncoder::new();
    let text = json.encode_tick_with_cables(5, 0.1, &[], &[], &[], &[], &cables);
    assert_eq!(tick_cables(decode_json(&text).unwrap()), cables);
}

/// A cable falling and swinging from a pin, streamed frame by frame: every
/// frame decodes to its quantized points; after the first (a key frame),
/// residuals against the prediction from the last two frames cost a small
/// fraction of the points as `f32`s; a subscriber joining from a hello gets
/// a key frame (the encoder forgot its cables) and then follows the group;
/// a removed cable leaves both baselines (and is sent again as a key frame).
#[test]
fn a_moving_cable_costs_a_fraction_of_its_points_and_joiners_follow_it() {
    use arbiter::physics::cable::CableSpec;
    use arbiter::physics::World;
    let mut w = World::default();
    let mut spec = CableSpec::new([-1.0, 3.0, 0.0], [1.0, 3.0, 0.0], 40);
    spec.pinned = vec![0];
    let id = w.add_cable(&spec).unwrap();
    let mut enc = BinaryEncoder::new();
    let mut early = BinaryDecoder::new();
    early.decode(&enc.encode_hello(&world(), &[])).unwrap();
    let mut late = BinaryDecoder::new();
    let raw = 41 * 12;
    let (mut key_bytes, mut delta_bytes, mut deltas) = (0, 0, 0);
    for tick in 1..=120u64 {
        w.step();
        let time = tick as f64 / 60.0;
        if tick == 60 {
            late.decode(&enc.encode_join_hello(&world(), &[])).unwrap();
            enc.forget_cables();
        }
        let state = w.cable(id).unwrap().state();
        let frame = enc.encode_tick_with_cables(
            tick,
            time,
            &[],
            &[],
            &[],
            &[],
            std::slice::from_ref(&state),
        );
        let want = vec![quantized_cable(&state)];
        assert_eq!(
            tick_cables(early.decode(&frame).unwrap()),
            want,
            "tick {tick}"
        );
        if tick >= 60 {
            assert_eq!(
                tick_cables(late.decode(&frame).unwrap()),
                want,
                "tick {tick}"
            );
        }
        let bytes = cable_bytes(&frame, tick, time);
        if tick == 1 || tick == 60 {
            key_bytes += bytes;
        } else {
            delta_bytes += bytes;
            deltas += 1;
        }
    }
    let per_delta = delta_bytes as f64 / deltas as f64;
    let per_key = key_bytes as f64 / 2.0;
    println!("41 points: {raw} bytes as f32s, key frames {per_key:.0} bytes, residual frames {per_delta:.1} bytes on average");
    assert!(per_key < raw as f64 * 0.6, "a key frame: {per_key} bytes");
    assert!(
        per_delta < raw as f64 * 0.12,
        "residual frames: {per_delta} bytes"
    );
    // Removed: both forget it. A residual frame for it (from an encoder
    // that was not told) no longer decodes.
    let mut stale = BinaryEncoder::new();
    let state = w.cable(id).unwrap().state();
    let mut fresh = BinaryDecoder::new();
    fresh
        .decode(&stale.encode_tick_with_cables(
            1,
            0.0,
            &[],
            &[],
            &[],
            &[],
            std::slice::from_ref(&state),
        ))
        .unwrap();
    let residuals =
        stale.encode_tick_with_cables(2, 0.1, &[], &[], &[], &[], std::slice::from_ref(&state));
    let frame = enc.encode_tick_with_cables(121, 121.0 / 60.0, &[], &[], &[], &[id], &[]);
    early.decode(&frame).unwrap();
    fresh.decode(&frame).unwrap();
    assert!(
        fresh.decode(&residuals).is_err(),
        "the removed cable's baseline is gone"
    );
    let state = w.cable(id).unwrap().state();
    let frame = enc.encode_tick_with_cables(122, 122.0 / 60.0, &[], &[], &[], &[], &[state]);
    // Sent again as a key frame: a decoder that knows nothing decodes it.
    let want = tick_cables(BinaryDecoder::new().decode(&frame).unwrap());
    assert_eq!(tick_cables(early.decode(&frame).unwrap()), want);
}
