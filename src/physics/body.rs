//! Rigid bodies.

use super::math::{Mat3, Pose, Quat, Vec3};
use super::scene::{BodyKind, BodySpec, ShapeSpec, MAX_DENSITY, MAX_MASS};
use super::shape::{MassProperties, Shape};

/// Default density (kg/m³) when a spec gives neither density nor mass.
pub const DEFAULT_DENSITY: f32 = 1000.0;

/// A rigid body. `pose` is the pose of the shape's local frame (what scenes
/// specify); dynamics run on the centre of mass `com`.
#[derive(Clone, Debug)]
pub struct Body {
    /// The wire id: counted per world, never reused.
    pub id: u64,
    pub kind: BodyKind,
    pub shape: Shape,
    /// The spec's shape, kept for snapshots.
    pub shape_spec: ShapeSpec,
    pub pose: Pose,
    /// Centre of mass in the shape's local frame.
    pub local_center: Vec3,
    /// Centre of mass in world space.
    pub com: Vec3,
    pub linear_velocity: Vec3,
    pub angular_velocity: Vec3,
    pub mass: f32,
    pub inv_mass: f32,
    /// Inertia about the centre of mass, local frame (as the shape's mass
    /// properties gave it, not inverted back from the inverse).
    pub inertia_local: Mat3,
    /// Inverse inertia about the centre of mass, local frame.
    pub inv_inertia_local: Mat3,
    /// Inverse inertia in world space (R·I⁻¹·Rᵀ), refreshed after rotation.
    pub inv_inertia_world: Mat3,
    pub friction: f32,
    pub restitution: f32,
    pub linear_damping: f32,
    pub angular_damping: f32,
    pub ccd: bool,
    pub label: Option<String>,
    /// Density the spec gave (kept for snapshots).
    pub density: Option<f32>,
    pub spec_mass: Option<f32>,
    pub sleeping: bool,
    /// Seconds this body has been below the sleep thresholds.
    pub sleep_time: f32,
    /// Island the body slept with (valid while sleeping).
    pub island: u32,
    /// Largest distance from the centre of mass to the surface.
    pub bounding_radius: f32,
    /// Force and torque accumulated for the next step (cleared after it).
    pub force: Vec3,
    pub torque: Vec3,
}

/// The inverse of a dynamic body's inertia (local frame), or `None` when
/// single precision cannot hold it: moments too small for its shape (their
/// product under f32's range; a hull of 0.1 mm edges at the default
/// density).
///
/// Computed in single precision where the inertia's determinant is a finite
/// f32, as it always was; where the product of the moments passes f32's
/// range (moments past about 7·10¹² kg·m²: a cube of 66 m half extents at
/// the default density), in double precision. The single-precision inverse
/// of such an inertia came out zero (a body that never turned) or NaN (the
/// body refused as "singular": a box of 10⁴ m half extents, inside the
/// sizes a shape may have).
fn inverse_inertia(inertia: Mat3) -> Option<Mat3> {
    let det = inertia.determinant();
    if det.is_finite() {
        let inv = inertia.inverse();
        return (det != 0.0 && inv.is_finite()).then_some(inv);
    }
    let inv = inertia.as_dmat3().inverse().as_mat3();
    (inv.is_finite() && inv != Mat3::ZERO).then_some(inv)
}

/// The error of a dynamic body whose inertia [`inverse_inertia`] cannot
/// invert: its mass is too small for its shape (the product of its moments
/// under f32's range). It was "the body's inertia is singular"; it names
/// the moments, the least mass its shape takes (the inertia scales with
/// the mass) and the density that gives it.
fn inertia_out_of_range(shape: &Shape, mp: MassProperties, spec: &BodySpec) -> String {
    use glam::DMat3;
    let moments = [
        mp.inertia.x_axis.x,
        mp.inertia.y_axis.y,
        mp.inertia.z_axis.z,
    ];
    let given = match spec.mass {
        Some(_) => "its `mass`".to_string(),
        None => format!(
            "its density of {} kg/m³ over its shape",
            spec.density.unwrap_or(DEFAULT_DENSITY)
        ),
    };
    let head = format!(
        "the body's inertia is out of the engine's range: a mass of {:.3e} kg ({given}) gives \
         it moments of inertia of [{:.3e}, {:.3e}, {:.3e}] kg·m², too small for single \
         precision to invert",
        mp.mass, moments[0], moments[1], moments[2]
    );
    // The inertia per kilogram, from the shape at unit density (its
    // volume the mass).
    let unit = shape.mass_properties(1.0);
    let volume = unit.mass as f64;
    let per_kg: DMat3 = unit.inertia.as_dmat3() * (1.0 / volume);
    let takes = |m: f64| inverse_inertia((per_kg * m).as_mat3()).is_some();
    // A mass it takes: one that makes its largest moment 1 kg·m².
    let largest = per_kg.x_axis.x.max(per_kg.y_axis.y).max(per_kg.z_axis.z);
    let reference = 1.0 / largest;
    if !(volume > 0.0 && volume.is_finite() && reference.is_finite() && takes(reference)) {
        return format!("{head}; no mass makes this shape usable");
    }
    // The least mass it takes, by bisection over log(mass) (the inertia
    // scales with the mass), then 2% up.
    let (mut inside, mut outside) = (reference, f64::from(f32::MIN_POSITIVE) * 1e-7);
    for _ in 0..100 {
        let mid = (inside * outside).sqrt();
        if takes(mid) {
            inside = mid;
        } else {
            outside = mid;
        }
    }
    let least = inside * 1.02;
    if least > f64::from(MAX_MASS) {
        return format!(
            "{head}; this shape takes no mass of at most {MAX_MASS:e} kg: make it larger"
        );
    }
    let mut out = format!("{head}; this shape takes a mass of at least {least:.2e} kg (`mass`");
    let density = least / volume;
    if density <= f64::from(MAX_DENSITY) {
        out += &format!(", or a `density` of at least {density:.2e} kg/m³");
    }
    out.push(')');
    out
}

impl Body {
    /// Builds a body from a spec; `id` is the wire id. Errors are one line.
    pub fn from_spec(spec: &BodySpec, id: u64) -> Result<Body, String> {
        let shape = spec.validate()?;
        let rotation = super::math::unit_quat(Quat::from_array(spec.rotation));
        let pose = Pose::new(Vec3::from_array(spec.position), rotation);
        let (mass, local_center, inv_mass, inertia_local, inv_inertia_local) = match spec.kind {
            BodyKind::Dynamic => {
                let density = spec.density.unwrap_or(DEFAULT_DENSITY);
                let mut mp = shape.mass_properties(density);
                if let Some(m) = spec.mass {
                    mp = mp.with_mass(m);
                }
                if !(mp.mass.is_finite() && mp.mass > 0.0) {
                    return Err("the body's mass must be positive and finite".into());
                }
                let Some(inv_i) = inverse_inertia(mp.inertia) else {
                    return Err(inertia_out_of_range(&shape, mp, spec));
                };
                (mp.mass, mp.local_center, 1.0 / mp.mass, mp.inertia, inv_i)
            }
            _ => (0.0, Vec3::ZERO, 0.0, Mat3::ZERO, Mat3::ZERO),
        };
        let bounding_radius = if shape.is_plane() {
            f32::INFINITY
        } else {
            shape.bounding_radius() + local_center.length()
        };
        let mut body = Body {
            id,
            kind: spec.kind,
            shape,
            shape_spec: spec.shape.clone(),
            pose,
            local_center,
            com: pose.transform_point(local_center),
            linear_velocity: Vec3::from_array(spec.linear_velocity),
            angular_velocity: Vec3::from_array(spec.angular_velocity),
            mass,
            inv_mass,
            inertia_local,
            inv_inertia_local,
            inv_inertia_world: Mat3::ZERO,
            friction: spec.friction,
            restitution: spec.restitution,
            linear_damping: spec.linear_damping,
            angular_damping: spec.angular_damping,
            ccd: spec.ccd,
            label: spec.label.clone(),
            density: spec.density,
            spec_mass: spec.mass,
            sleeping: false,
            sleep_time: 0.0,
            island: 0,
            bounding_radius,
            force: Vec3::ZERO,
            torque: Vec3::ZERO,
        };
        if spec.kind == BodyKind::Static {
            body.linear_velocity = Vec3::ZERO;
            body.angular_velocity = Vec3::ZERO;
        }
        body.update_inertia();
        Ok(body)
    }

    pub fn is_dynamic(&self) -> bool {
        self.kind == BodyKind::Dynamic
    }
    pub fn is_static(&self) -> bool {
        self.kind == BodyKind::Static
    }

    /// Recomputes the world inverse inertia from the current rotation.
    pub fn update_inertia(&mut self) {
        if self.inv_mass > 0.0 {
            let r = Mat3::from_quat(self.pose.rotation);
            self.inv_inertia_world = r * self.inv_inertia_local * r.transpose();
        }
    }

    /// Sets the pose from the centre of mass and rotation.
    pub fn set_com_pose(&mut self, com: Vec3, rotation: Quat) {
        self.com = com;
        self.pose.rotation = rotation;
        self.pose.position = com - rotation * self.local_center;
    }

    /// Sets the pose of the shape frame and moves the centre of mass with it.
    pub fn set_pose(&mut self, pose: Pose) {
        self.pose = pose;
        self.com = pose.transform_point(self.local_center);
        self.update_inertia();
    }

    /// Velocity of the material point at world position `p`.
    pub fn velocity_at(&self, p: Vec3) -> Vec3 {
        self.linear_velocity + self.angular_velocity.cross(p - self.com)
    }

    /// Applies an impulse at a world point (at the centre of mass if None).
    pub fn apply_impulse(&mut self, impulse: Vec3, point: Option<Vec3>) {
        if self.inv_mass == 0.0 {
            return;
        }
        self.linear_velocity += impulse * self.inv_mass;
        if let Some(p) = point {
            self.angular_velocity += self.inv_inertia_world * (p - self.com).cross(impulse);
        }
    }

    pub fn apply_angular_impulse(&mut self, l: Vec3) {
        if self.inv_mass == 0.0 {
            return;
        }
        self.angular_velocity += self.inv_inertia_world * l;
    }

    /// Kinetic energy (J).
    pub fn kinetic_energy(&self) -> f32 {
        if self.inv_mass == 0.0 {
            return 0.0;
        }
        let r = Mat3::from_quat(self.pose.rotation);
        let i_world = r * self.inertia_local * r.transpose();
        0.5 * self.mass * self.linear_velocity.length_squared()
            + 0.5 * self.angular_velocity.dot(i_world * self.angular_velocity)
    }

    /// The spec that recreates this body in its current state (snapshots).
    pub fn to_spec(&self) -> BodySpec {
        BodySpec {
            id: Some(self.id),
            kind: self.kind,
            shape: self.shape_spec.clone(),
            position: self.pose.position.to_array(),
            rotation: self.pose.rotation.to_array(),
            linear_velocity: self.linear_velocity.to_array(),
            angular_velocity: self.angular_velocity.to_array(),
            density: self.density,
            mass: self.spec_mass,
            friction: self.friction,
            restitution: self.restitution,
            linear_damping: self.linear_damping,
            angular_damping: self.angular_damping,
            margin: self.shape.margin,
            ccd: self.ccd,
            label: self.label.clone(),
            sleeping: Some(self.sleeping),
        }
    }
}
