//! Small math layer over glam: the rigid transform (`Pose`) every query takes.

pub use glam::{Mat3, Quat, Vec3};

/// A rigid transform: rotate by `rotation`, then translate by `position`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    pub position: Vec3,
    pub rotation: Quat,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    pub const IDENTITY: Pose = Pose {
        position: Vec3::ZERO,
        rotation: Quat::IDENTITY,
    };

    pub fn new(position: Vec3, rotation: Quat) -> Self {
        Self { position, rotation }
    }

    pub fn from_position(position: Vec3) -> Self {
        Self {
            position,
            rotation: Quat::IDENTITY,
        }
    }

    #[inline]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.rotation * p + self.position
    }

    #[inline]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation * v
    }

    #[inline]
    pub fn inverse_transform_point(&self, p: Vec3) -> Vec3 {
        self.rotation.inverse() * (p - self.position)
    }

    #[inline]
    pub fn inverse_transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation.inverse() * v
    }

    pub fn inverse(&self) -> Pose {
        let inv = self.rotation.inverse();
        Pose {
            position: inv * -self.position,
            rotation: inv,
        }
    }

    /// `self * other`: apply `other` first, then `self`.
    pub fn mul(&self, other: &Pose) -> Pose {
        Pose {
            position: self.transform_point(other.position),
            rotation: (self.rotation * other.rotation).normalize(),
        }
    }
}

/// Two unit vectors orthogonal to `n` and to each other (n, t1, t2 right-handed).
/// Branch-free construction (Duff et al. 2017), continuous except at one point.
pub fn orthonormal_basis(n: Vec3) -> (Vec3, Vec3) {
    let sign = 1.0f32.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    let t1 = Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let t2 = Vec3::new(b, sign + n.y * n.y * a, -n.y);
    (t1, t2)
}

/// A small deterministic generator in [0, 1) for the crate's tests (no
/// dependency for it).
#[cfg(test)]
pub(crate) fn lcg(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 40) as f32) / (1u64 << 24) as f32
}

/// `q` as a unit quaternion: as it is when its length is 1 to within f32
/// rounding (a few units in the last place, as the engine leaves its
/// rotations), else normalized. Normalizing a rotation that is already one
/// changes its last bits, so a snapshot loaded back (and saved again)
/// turned each rotation slightly, never settling, and the two runs parted
/// by metres in 300 steps of a pile (a reviewer's case).
pub fn unit_quat(q: Quat) -> Quat {
    if (q.length_squared() - 1.0).abs() <= 1.0e-6 {
        q
    } else {
        q.normalize()
    }
}
