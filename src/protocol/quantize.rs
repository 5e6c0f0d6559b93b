//! Quantization of body states for the binary stream, and the predictions
//! that the delta coding of [`super::binary`] is relative to.
//!
//! Everything the encoder and the decoder must agree on bit for bit lives
//! here: the integer state of a body ([`QState`]), the smallest-three
//! rotation code ([`QRot`]) and the two predictors ([`predict_position`],
//! [`predict_rotation`]). The predictors use only IEEE-754 f64 `+ - * /`,
//! `sqrt` and `floor`, in the order written in proto/binary.md, so a
//! JavaScript or Python decoder computes exactly the same integers.
//!
//! Scales (proto/binary.md, "Quantization"):
//! - position: 1/1024 m per unit (error ≤ 0.49 mm), i32, ±2 097 151 m
//! - linear velocity: 1/128 m/s per unit (error ≤ 3.9 mm/s), i32
//! - angular velocity: 1/128 rad/s per unit (error ≤ 3.9 mrad/s), i32
//! - rotation: smallest three, 3 × 15-bit components (angular error
//!   ≤ [`ROTATION_MAX_ERROR`] rad)
//! - contact normals: octahedral, 2 × i16
//!
//! Values outside a range clamp to its ends; NaN quantizes to 0 (for a
//! rotation: to the identity).

use super::BodyState;

/// Position units per metre.
pub const POSITION_SCALE: f64 = 1024.0;
/// Velocity units per m/s (linear) and per rad/s (angular).
pub const VELOCITY_SCALE: f64 = 128.0;
/// Position units travelled in one second at one velocity unit
/// (`POSITION_SCALE / VELOCITY_SCALE`).
pub const POSITION_PER_VELOCITY: f64 = POSITION_SCALE / VELOCITY_SCALE;
/// Largest magnitude of a quantized position or velocity (i32, symmetric).
pub const INT_MAX: i32 = i32::MAX;

/// Bits of each of the three smallest rotation components.
pub const ROTATION_BITS: u32 = 15;
/// Largest magnitude of a rotation component: 2^14 − 1.
pub const ROTATION_MAX: i32 = (1 << (ROTATION_BITS - 1)) - 1;
/// Rotation units per unit of quaternion component: a component in
/// [−1/√2, 1/√2] maps onto [−ROTATION_MAX, ROTATION_MAX].
pub const ROTATION_SCALE: f64 = ROTATION_MAX as f64 * std::f64::consts::SQRT_2;
/// Bound on the angle (rad) between a unit quaternion and its smallest-three
/// reconstruction. Each kept component is off by at most e = 1/(2S), so the
/// three by √3·e; the rebuilt largest one (≥ 1/2, so its derivative is at
/// most √3 in the others) by at most 3e. The reconstruction is unit, so the
/// two quaternions are |Δq| ≤ √12·e = √3/S apart and the angle between the
/// rotations, 4·asin(|Δq|/2), is ≤ 2√3/S to first order: ≈ 1.5e-4 rad
/// (0.0086°), 0.15 mm at 1 m from the centre.
pub const ROTATION_MAX_ERROR: f64 = 2.0 * 1.732_050_807_568_877_2 / ROTATION_SCALE;

/// The longest frame interval (s) a prediction extrapolates over.
pub const MAX_PREDICTION_DT: f64 = 60.0;

/// A rotation in smallest-three form: `index` (0..=3, in x, y, z, w order) of
/// the component of largest magnitude, dropped and made non-negative, and
/// the other three in order, each in ±[`ROTATION_MAX`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QRot {
    pub index: u8,
    pub c: [i32; 3],
}

impl QRot {
    pub const IDENTITY: QRot = QRot {
        index: 3,
        c: [0, 0, 0],
    };

    /// Quantizes a quaternion [x, y, z, w] (normalized here first; a zero or
    /// non-finite one becomes the identity).
    pub fn from_f64(q: [f64; 4]) -> QRot {
        let n = (((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3]).sqrt();
        if !n.is_finite() || n <= 0.0 {
            return QRot::IDENTITY;
        }
        let q = [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
        let mut index = 0;
        for k in 1..4 {
            if q[k].abs() > q[index].abs() {
                index = k;
            }
        }
        let sign = if q[index] < 0.0 { -1.0 } else { 1.0 };
        let mut c = [0i32; 3];
        let mut j = 0;
        for (k, &x) in q.iter().enumerate() {
            if k != index {
                c[j] = round_clamp(sign * x * ROTATION_SCALE, ROTATION_MAX);
                j += 1;
            }
        }
        QRot {
            index: index as u8,
            c,
        }
    }

    pub fn from_f32(q: [f32; 4]) -> QRot {
        QRot::from_f64(q.map(f64::from))
    }

    /// The quaternion [x, y, z, w] before normalization: the three
    /// components divided by the scale and the dropped one rebuilt as
    /// √(max(0, 1 − a² − b² − c²)). Exactly as proto/binary.md spells it.
    pub fn to_f64_raw(self) -> [f64; 4] {
        let a = self.c.map(|x| x as f64 / ROTATION_SCALE);
        let s = (a[0] * a[0] + a[1] * a[1]) + a[2] * a[2];
        let d = if s < 1.0 { (1.0 - s).sqrt() } else { 0.0 };
        let mut q = [0.0; 4];
        let mut j = 0;
        for (k, x) in q.iter_mut().enumerate() {
            if k == self.index as usize {
                *x = d;
            } else {
                *x = a[j];
                j += 1;
            }
        }
        q
    }

    /// The unit quaternion [x, y, z, w] for display and for clients.
    pub fn to_f32(self) -> [f32; 4] {
        let q = self.to_f64_raw();
        let n = (((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3]).sqrt();
        if n > 0.0 {
            q.map(|x| (x / n) as f32)
        } else {
            [0.0, 0.0, 0.0, 1.0]
        }
    }

    /// Whether every component is within ±[`ROTATION_MAX`] and the index is
    /// 0..=3 (what a decoder accepts).
    pub fn is_valid(self) -> bool {
        self.index < 4 && self.c.iter().all(|c| c.abs() <= ROTATION_MAX)
    }

    /// Packed into the low 47 bits of a u64: index in bits 0–1, then each
    /// component plus [`ROTATION_MAX`] in 15 bits (bits 2–16, 17–31, 32–46).
    pub fn pack(self) -> u64 {
        let mut v = self.index as u64 & 3;
        for (k, c) in self.c.iter().enumerate() {
            let u = (c.clamp(&-ROTATION_MAX, &ROTATION_MAX) + ROTATION_MAX) as u64;
            v |= u << (2 + ROTATION_BITS * k as u32);
        }
        v
    }

    /// Inverse of [`QRot::pack`]; None for bits above 46 or a component
    /// offset of 2^15 − 1 (out of range).
    pub fn unpack(v: u64) -> Option<QRot> {
        if v >> (2 + 3 * ROTATION_BITS) != 0 {
            return None;
        }
        let mask = (1u64 << ROTATION_BITS) - 1;
        let mut c = [0i32; 3];
        for (k, x) in c.iter_mut().enumerate() {
            let u = ((v >> (2 + ROTATION_BITS * k as u32)) & mask) as i32;
            *x = u - ROTATION_MAX;
        }
        let r = QRot {
            index: (v & 3) as u8,
            c,
        };
        r.is_valid().then_some(r)
    }
}

/// The quantized state of a body: what the encoder remembers as last sent,
/// and what the decoder holds. The zero value (everything 0, rotation index 0)
/// is the implied baseline of a body id the baseline does not know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QState {
    pub p: [i32; 3],
    pub q: QRot,
    pub v: [i32; 3],
    pub w: [i32; 3],
}

impl QState {
    pub fn from_parts(p: [f32; 3], q: [f32; 4], v: [f32; 3], w: [f32; 3]) -> QState {
        QState {
            p: quantize3(p, POSITION_SCALE),
            q: QRot::from_f32(q),
            v: quantize3(v, VELOCITY_SCALE),
            w: quantize3(w, VELOCITY_SCALE),
        }
    }

    pub fn of(s: &BodyState) -> QState {
        QState::from_parts(s.p, s.q, s.v, s.w)
    }

    /// The dequantized state of body `id`.
    pub fn to_state(&self, id: u64) -> BodyState {
        BodyState {
            id,
            p: dequantize3(self.p, POSITION_SCALE),
            q: self.q.to_f32(),
            v: dequantize3(self.v, VELOCITY_SCALE),
            w: dequantize3(self.w, VELOCITY_SCALE),
        }
    }
}

/// `floor(x + 0.5)` clamped to ±`max`; NaN gives 0.
pub fn round_clamp(x: f64, max: i32) -> i32 {
    if x.is_nan() {
        return 0;
    }
    (x + 0.5).floor().clamp(-(max as f64), max as f64) as i32
}

/// Quantizes a value at `scale` units per unit into an i32, clamping to
/// ±[`INT_MAX`].
pub fn quantize(x: f32, scale: f64) -> i32 {
    round_clamp(x as f64 * scale, INT_MAX)
}

pub fn quantize3(v: [f32; 3], scale: f64) -> [i32; 3] {
    v.map(|x| quantize(x, scale))
}

pub fn dequantize(x: i32, scale: f64) -> f32 {
    (x as f64 / scale) as f32
}

pub fn dequantize3(v: [i32; 3], scale: f64) -> [f32; 3] {
    v.map(|x| dequantize(x, scale))
}

/// The interval a prediction extrapolates over: `time − previous_time`,
/// 0 when that is not positive (or NaN), at most [`MAX_PREDICTION_DT`].
pub fn prediction_dt(time: f64, previous_time: f64) -> f64 {
    let dt = time - previous_time;
    if dt > 0.0 {
        dt.min(MAX_PREDICTION_DT)
    } else {
        0.0
    }
}

/// Where a body at `p` moving at (the new) velocity `v` is after `dt`:
/// `p + floor(v · (dt · 8) + 0.5)` per axis, clamped to ±[`INT_MAX`].
pub fn predict_position(p: [i32; 3], v: [i32; 3], dt: f64) -> [i32; 3] {
    let f = dt * POSITION_PER_VELOCITY;
    let mut out = p;
    for k in 0..3 {
        let d = (v[k] as f64 * f + 0.5).floor();
        let x = p[k] as f64 + d;
        out[k] = x.clamp(-(INT_MAX as f64), INT_MAX as f64) as i32;
    }
    out
}

/// The rotation `q` turned by the (new) angular velocity `w` over `dt`, one
/// explicit step of dq/dt = ½ (ω, 0) ⊗ q, then normalized and quantized.
/// With ω = 0 or dt = 0 it is `q` itself (no round trip through floats).
pub fn predict_rotation(q: QRot, w: [i32; 3], dt: f64) -> QRot {
    if w == [0, 0, 0] || dt == 0.0 {
        return q;
    }
    let [qx, qy, qz, qw] = q.to_f64_raw();
    let [wx, wy, wz] = w.map(|x| x as f64 / VELOCITY_SCALE);
    let h = 0.5 * dt;
    let dx = (wx * qw + wy * qz) - wz * qy;
    let dy = (wy * qw + wz * qx) - wx * qz;
    let dz = (wz * qw + wx * qy) - wy * qx;
    let dw = -((wx * qx + wy * qy) + wz * qz);
    QRot::from_f64([qx + h * dx, qy + h * dy, qz + h * dz, qw + h * dw])
}

/// Zigzag: 0, −1, 1, −2, … → 0, 1, 2, 3, …
pub fn zigzag32(x: i32) -> u32 {
    ((x << 1) ^ (x >> 31)) as u32
}

pub fn unzigzag32(u: u32) -> i32 {
    ((u >> 1) as i32) ^ -((u & 1) as i32)
}

pub fn zigzag64(x: i64) -> u64 {
    ((x << 1) ^ (x >> 63)) as u64
}

pub fn unzigzag64(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Octahedral code of a direction: 2 × i16 in ±32767. A zero or non-finite
/// vector codes as (0, 0), which decodes to +Z.
pub fn encode_normal(n: [f32; 3]) -> [i16; 2] {
    let [x, y, z] = n.map(f64::from);
    let l1 = x.abs() + y.abs() + z.abs();
    if !l1.is_finite() || l1 <= 0.0 {
        return [0, 0];
    }
    let (mut u, mut v) = (x / l1, y / l1);
    if z < 0.0 {
        let (ou, ov) = (u, v);
        u = (1.0 - ov.abs()) * sign(ou);
        v = (1.0 - ou.abs()) * sign(ov);
    }
    [
        round_clamp(u * 32767.0, 32767) as i16,
        round_clamp(v * 32767.0, 32767) as i16,
    ]
}

pub fn decode_normal(e: [i16; 2]) -> [f32; 3] {
    let mut x = (e[0] as f64 / 32767.0).clamp(-1.0, 1.0);
    let mut y = (e[1] as f64 / 32767.0).clamp(-1.0, 1.0);
    let z = 1.0 - x.abs() - y.abs();
    if z < 0.0 {
        let (ox, oy) = (x, y);
        x = (1.0 - oy.abs()) * sign(ox);
        y = (1.0 - ox.abs()) * sign(oy);
    }
    let n = (x * x + y * y + z * z).sqrt();
    [(x / n) as f32, (y / n) as f32, (z / n) as f32]
}

fn sign(x: f64) -> f64 {
    if x < 0.0 {
        -1.0
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips_and_orders_small_magnitudes_first() {
        for x in [0, -1, 1, -2, 2, i32::MIN, i32::MAX, 12345, -98765] {
            assert_eq!(unzigzag32(zigzag32(x)), x);
        }
        assert_eq!([0, -1, 1, -2].map(zigzag32), [0, 1, 2, 3]);
        for x in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag64(zigzag64(x)), x);
        }
    }

    #[test]
    fn rotation_pack_round_trips_and_rejects_out_of_range() {
        let r = QRot {
            index: 2,
            c: [-ROTATION_MAX, 0, ROTATION_MAX],
        };
        assert_eq!(QRot::unpack(r.pack()), Some(r));
        // Component offset 2^15 − 1 decodes to ROTATION_MAX + 1: rejected.
        assert_eq!(QRot::unpack(0x7fff << 2), None);
        assert_eq!(QRot::unpack(1 << 47), None);
    }

    #[test]
    fn identity_and_axis_rotations_are_exact() {
        assert_eq!(QRot::from_f32([0.0, 0.0, 0.0, 1.0]), QRot::IDENTITY);
        assert_eq!(QRot::IDENTITY.to_f32(), [0.0, 0.0, 0.0, 1.0]);
        // q and −q are the same rotation and the same code.
        assert_eq!(
            QRot::from_f32([0.0, -1.0, 0.0, 0.0]),
            QRot::from_f32([0.0, 1.0, 0.0, 0.0])
        );
        assert_eq!(QRot::from_f32([0.0; 4]), QRot::IDENTITY);
        assert_eq!(QRot::from_f32([f32::NAN, 0.0, 0.0, 1.0]), QRot::IDENTITY);
    }

    #[test]
    fn quantize_clamps_and_maps_nan_to_zero() {
        assert_eq!(quantize(f32::NAN, POSITION_SCALE), 0);
        assert_eq!(quantize(f32::INFINITY, POSITION_SCALE), INT_MAX);
        assert_eq!(quantize(f32::NEG_INFINITY, POSITION_SCALE), -INT_MAX);
        assert_eq!(quantize(-1.0, POSITION_SCALE), -1024);
        assert_eq!(quantize(0.5 / 1024.0, POSITION_SCALE), 1);
        assert_eq!(quantize(-0.5 / 1024.0, POSITION_SCALE), 0);
    }

    #[test]
    fn position_prediction_follows_velocity_and_clamps() {
        // 1 m/s for 1/64 s = 16 units.
        assert_eq!(
            predict_position([0, 5, -5], [128, 0, -128], 1.0 / 64.0),
            [16, 5, -21]
        );
        assert_eq!(
            predict_position([INT_MAX; 3], [INT_MAX; 3], 60.0),
            [INT_MAX; 3]
        );
        assert_eq!(prediction_dt(1.0, 2.0), 0.0);
        assert_eq!(prediction_dt(f64::NAN, 0.0), 0.0);
        assert_eq!(prediction_dt(1e9, 0.0), MAX_PREDICTION_DT);
    }

    #[test]
    fn rotation_prediction_turns_about_the_angular_velocity() {
        // 1 rad/s about +Y for 10 ms: about 0.01 rad about +Y.
        let q = predict_rotation(QRot::IDENTITY, [0, 128, 0], 0.01);
        let [x, y, z, w] = q.to_f32();
        let angle = 2.0 * (y as f64).atan2(w as f64);
        assert!((angle - 0.01).abs() < 1e-4, "{angle}");
        assert!(x.abs() < 1e-4 && z.abs() < 1e-4);
        assert_eq!(predict_rotation(q, [0, 0, 0], 0.01), q);
    }

    #[test]
    fn normals_round_trip_in_all_octants() {
        for n in [
            [0.0, 1.0, 0.0],
            [0.0, 0.0, -1.0],
            [0.6, -0.8, 0.0],
            [-0.48, 0.6, -0.64],
            [0.577, 0.577, 0.577],
        ] {
            let d = decode_normal(encode_normal(n));
            let dot: f32 = (0..3).map(|k| d[k] * n[k]).sum();
            let len: f32 = n.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!(dot / len > 1.0 - 1e-7, "{n:?} -> {d:?}");
        }
        assert_eq!(decode_normal([0, 0]), [0.0, 0.0, 1.0]);
    }
}
