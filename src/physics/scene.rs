//! The scene file format (also the snapshot format) and its validation.
//!
//! These are the specs a user writes; [`crate::physics::world::World`] turns
//! them into bodies. Every field but `shape` has a default. Validation returns
//! a one-line message naming the offending field, never panics.

use super::math::{Quat, Vec3};
use super::shape::Shape;
use serde::{Deserialize, Serialize};

/// Largest coordinate accepted anywhere (metres): beyond it f32 positions lose
/// centimetre precision.
pub const MAX_COORD: f32 = 1.0e5;
/// The largest tick a scene may start at (2⁵³: exact as a double).
pub const MAX_TICK: u64 = 1 << 53;

/// The largest id a scene may give a body or a cable (2⁵³: exact as a
/// double, as JavaScript clients read it; the next id is one more).
pub const MAX_ID: u64 = 1 << 53;
/// The largest time (s) a scene may start at (about 30 million years).
pub const MAX_TIME: f64 = 1.0e15;
/// Largest speed accepted (m/s).
pub const MAX_SPEED: f32 = 1.0e4;
/// Largest angular speed accepted (rad/s).
pub const MAX_ANGULAR_SPEED: f32 = 1.0e4;
/// Largest impulse (N·s) and angular impulse (N·m·s) accepted on each axis:
/// one that would take a body past [`MAX_SPEED`] or [`MAX_ANGULAR_SPEED`]
/// is applied, and the body slowed to those speeds.
pub const MAX_IMPULSE: f32 = 1.0e9;
/// Largest mass (kg) and density (kg/m³) a body's spec may give.
pub const MAX_MASS: f32 = 1.0e9;
pub const MAX_DENSITY: f32 = 1.0e6;
/// Largest size of a shape dimension (m) and smallest.
pub const MAX_SIZE: f32 = 1.0e4;
pub const MIN_SIZE: f32 = 1.0e-3;
/// Largest number of convex hull points accepted.
pub const MAX_HULL_POINTS: usize = 1024;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    #[serde(default)]
    pub world: WorldSpec,
    #[serde(default)]
    pub bodies: Vec<BodySpec>,
    #[serde(default)]
    pub cables: Vec<super::cable::CableSpec>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default = "default_tick_hz")]
    pub tick_hz: f64,
    #[serde(default = "default_gravity")]
    pub gravity: [f32; 3],
    /// Present in snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<f64>,
}

fn default_name() -> String {
    "world".into()
}
fn default_tick_hz() -> f64 {
    60.0
}
fn default_gravity() -> [f32; 3] {
    [0.0, -9.81, 0.0]
}

impl Default for WorldSpec {
    fn default() -> Self {
        Self {
            name: default_name(),
            tick_hz: default_tick_hz(),
            gravity: default_gravity(),
            tick: None,
            time: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BodyKind {
    #[default]
    Dynamic,
    Static,
    Kinematic,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ShapeSpec {
    Sphere {
        radius: f32,
    },
    Box {
        half_extents: [f32; 3],
    },
    Capsule {
        half_height: f32,
        radius: f32,
    },
    Cylinder {
        half_height: f32,
        radius: f32,
    },
    Cone {
        half_height: f32,
        radius: f32,
    },
    ConvexHull {
        points: Vec<[f32; 3]>,
    },
    Plane {
        normal: [f32; 3],
        #[serde(default)]
        offset: f32,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Set in snapshots; ignored when spawning (the world assigns ids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    #[serde(default)]
    pub kind: BodyKind,
    pub shape: ShapeSpec,
    #[serde(default)]
    pub position: [f32; 3],
    #[serde(default = "identity_rotation")]
    pub rotation: [f32; 4],
    #[serde(default)]
    pub linear_velocity: [f32; 3],
    #[serde(default)]
    pub angular_velocity: [f32; 3],
    /// kg/m³; default 1000 (water). Ignored when `mass` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f32>,
    #[serde(default = "default_friction")]
    pub friction: f32,
    #[serde(default)]
    pub restitution: f32,
    #[serde(default)]
    pub linear_damping: f32,
    #[serde(default = "default_angular_damping")]
    pub angular_damping: f32,
    /// Rounding radius added around the shape (m).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub margin: f32,
    #[serde(default)]
    pub ccd: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Set in snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sleeping: Option<bool>,
}

fn identity_rotation() -> [f32; 4] {
    [0.0, 0.0, 0.0, 1.0]
}
fn default_friction() -> f32 {
    0.5
}
fn default_angular_damping() -> f32 {
    0.05
}
fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

impl BodySpec {
    /// A dynamic body of the given shape at the origin with every default.
    pub fn new(shape: ShapeSpec) -> Self {
        Self {
            id: None,
            kind: BodyKind::Dynamic,
            shape,
            position: [0.0; 3],
            rotation: identity_rotation(),
            linear_velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            density: None,
            mass: None,
            friction: default_friction(),
            restitution: 0.0,
            linear_damping: 0.0,
            angular_damping: default_angular_damping(),
            margin: 0.0,
            ccd: false,
            label: None,
            sleeping: None,
        }
    }
    pub fn kind(mut self, kind: BodyKind) -> Self {
        self.kind = kind;
        self
    }
    pub fn position(mut self, p: [f32; 3]) -> Self {
        self.position = p;
        self
    }
    pub fn rotation(mut self, q: Quat) -> Self {
        self.rotation = q.to_array();
        self
    }
    pub fn linear_velocity(mut self, v: [f32; 3]) -> Self {
        self.linear_velocity = v;
        self
    }
    pub fn angular_velocity(mut self, w: [f32; 3]) -> Self {
        self.angular_velocity = w;
        self
    }
    pub fn friction(mut self, f: f32) -> Self {
        self.friction = f;
        self
    }
    pub fn restitution(mut self, e: f32) -> Self {
        self.restitution = e;
        self
    }
    pub fn density(mut self, d: f32) -> Self {
        self.density = Some(d);
        self
    }
    pub fn mass(mut self, m: f32) -> Self {
        self.mass = Some(m);
        self
    }
    pub fn ccd(mut self, on: bool) -> Self {
        self.ccd = on;
        self
    }

    /// Checks every number and builds the shape. The error is one line.
    pub fn validate(&self) -> Result<Shape, String> {
        check_vec("position", self.position, MAX_COORD)?;
        check_vec("linear_velocity", self.linear_velocity, MAX_SPEED)?;
        check_vec("angular_velocity", self.angular_velocity, MAX_ANGULAR_SPEED)?;
        check_rotation(Quat::from_array(self.rotation))?;
        if let Some(d) = self.density {
            check_positive("density", d, MAX_DENSITY)?;
        }
        if let Some(m) = self.mass {
            check_positive("mass", m, MAX_MASS)?;
        }
        check_range("friction", self.friction, 0.0, 10.0)?;
        check_range("restitution", self.restitution, 0.0, 1.0)?;
        check_range("linear_damping", self.linear_damping, 0.0, 1.0e3)?;
        check_range("angular_damping", self.angular_damping, 0.0, 1.0e3)?;
        check_range("margin", self.margin, 0.0, MAX_SIZE)?;
        if let Some(label) = &self.label {
            if label.len() > 256 {
                return Err("label must be at most 256 bytes".into());
            }
        }
        // (As an edit refuses it; it was kept as zero.)
        if self.kind == BodyKind::Static
            && (self.linear_velocity != [0.0; 3] || self.angular_velocity != [0.0; 3])
        {
            return Err("a static body has no velocity; make it kinematic".into());
        }
        let shape = self.shape.build()?.with_margin(self.margin);
        if shape.is_plane() && self.kind != BodyKind::Static {
            return Err("a plane can only be a static body".into());
        }
        Ok(shape)
    }
}

impl ShapeSpec {
    /// The engine shape, or a one-line error.
    pub fn build(&self) -> Result<Shape, String> {
        let size = |name: &str, v: f32| check_range(name, v, MIN_SIZE, MAX_SIZE);
        Ok(match self {
            ShapeSpec::Sphere { radius } => {
                size("radius", *radius)?;
                Shape::sphere(*radius)
            }
            ShapeSpec::Box { half_extents } => {
                for (i, h) in half_extents.iter().enumerate() {
                    size(
                        ["half_extents[0]", "half_extents[1]", "half_extents[2]"][i],
                        *h,
                    )?;
                }
                Shape::cuboid(Vec3::from_array(*half_extents))
            }
            ShapeSpec::Capsule {
                half_height,
                radius,
            } => {
                size("half_height", *half_height)?;
                size("radius", *radius)?;
                Shape::capsule(*half_height, *radius)
            }
            ShapeSpec::Cylinder {
                half_height,
                radius,
            } => {
                size("half_height", *half_height)?;
                size("radius", *radius)?;
                Shape::cylinder(*half_height, *radius)
            }
            ShapeSpec::Cone {
                half_height,
                radius,
            } => {
                size("half_height", *half_height)?;
                size("radius", *radius)?;
                Shape::cone(*half_height, *radius)
            }
            ShapeSpec::ConvexHull { points } => {
                if points.len() > MAX_HULL_POINTS {
                    return Err(format!(
                        "convex_hull accepts at most {MAX_HULL_POINTS} points, got {}",
                        points.len()
                    ));
                }
                for p in points {
                    check_vec("convex_hull point", *p, MAX_SIZE)?;
                }
                let pts: Vec<Vec3> = points.iter().map(|p| Vec3::from_array(*p)).collect();
                Shape::convex_hull(&pts).map_err(|e| e.to_string())?
            }
            ShapeSpec::Plane { normal, offset } => {
                check_vec("plane normal", *normal, f32::MAX)?;
                check_range("plane offset", *offset, -MAX_COORD, MAX_COORD)?;
                if Vec3::from_array(*normal).length() < 1e-6 {
                    return Err("plane normal must be non-zero".into());
                }
                Shape::plane(Vec3::from_array(*normal), *offset)
            }
        })
    }
}

/// Checks a vector given by a client: each component finite and within
/// ±`max_abs`. The one rule (and message) of a scene, a spawn, an edit and
/// an impulse, over REST and the stream alike.
pub fn check_vec(name: &str, v: [f32; 3], max_abs: f32) -> Result<(), String> {
    for x in v {
        if !x.is_finite() {
            return Err(format!("{name} must be finite, got {v:?}"));
        }
        if x.abs() > max_abs {
            return Err(format!(
                "{name} is out of range (|x| ≤ {max_abs}), got {v:?}"
            ));
        }
    }
    Ok(())
}

/// Checks a rotation given by a client (normalized where it is used).
pub fn check_rotation(q: Quat) -> Result<(), String> {
    if !q.is_finite() || q.length() < 1e-6 {
        return Err("rotation must be a finite non-zero quaternion [x, y, z, w]".into());
    }
    Ok(())
}

fn check_range(name: &str, x: f32, lo: f32, hi: f32) -> Result<(), String> {
    if x.is_finite() && x >= lo && x <= hi {
        Ok(())
    } else {
        Err(format!("{name} must be in [{lo}, {hi}], got {x}"))
    }
}

fn check_positive(name: &str, x: f32, hi: f32) -> Result<(), String> {
    if x.is_finite() && x > 0.0 && x <= hi {
        Ok(())
    } else {
        Err(format!("{name} must be positive and at most {hi}, got {x}"))
    }
}

/// Checks that what a scene or request holds as objects is one: a
/// `scene`, a `world` or a `shape`, and each of `bodies` and `cables`
/// (serde reads a struct from an array of its fields in order too:
/// `{"scene": []}` made an empty world).
pub fn objects_where_expected(v: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (key, item) in map {
                match (key.as_str(), item) {
                    ("scene" | "world" | "shape", Value::Object(_)) => {}
                    ("scene" | "world" | "shape", _) => {
                        return Err(format!("{key} must be an object"));
                    }
                    ("bodies" | "cables", Value::Array(items))
                        if items.iter().any(|i| !i.is_object()) =>
                    {
                        return Err(format!("each of {key} must be an object"));
                    }
                    _ => {}
                }
                objects_where_expected(item)?;
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(objects_where_expected),
        _ => Ok(()),
    }
}

impl Scene {
    /// Parses and checks a scene; errors are one line.
    pub fn from_json(text: &str) -> Result<Scene, String> {
        let scene: Scene =
            serde_json::from_str(text).map_err(|e| format!("invalid scene JSON: {e}"))?;
        // (serde also reads a struct from an array of its fields: `[]` was
        // an empty scene.)
        if !text.trim_start().starts_with('{') {
            return Err("invalid scene JSON: a scene is an object".into());
        }
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("invalid scene JSON: {e}"))?;
        objects_where_expected(&value).map_err(|e| format!("invalid scene JSON: {e}"))?;
        scene.validate()?;
        Ok(scene)
    }

    pub fn validate(&self) -> Result<(), String> {
        let w = &self.world;
        // (Ticks past 2⁵³ are not exact in JSON readers that take numbers
        // as doubles, and the counter wrapped at 2⁶⁴.)
        if w.tick.is_some_and(|t| t > MAX_TICK) {
            return Err(format!("world.tick must be at most 2^53 ({MAX_TICK})"));
        }
        if w.time
            .is_some_and(|t| !(t.is_finite() && (0.0..=MAX_TIME).contains(&t)))
        {
            return Err(format!("world.time must be in [0, {MAX_TIME:e}] s"));
        }
        if !(w.tick_hz.is_finite() && (1.0..=1000.0).contains(&w.tick_hz)) {
            return Err(format!(
                "world.tick_hz must be in [1, 1000], got {}",
                w.tick_hz
            ));
        }
        check_vec("world.gravity", w.gravity, 1.0e3)?;
        if w.name.len() > 128 {
            return Err("world.name must be at most 128 bytes".into());
        }
        // (Ids past 2⁵³ are not exact in JSON readers that take numbers as
        // doubles, and u64::MAX made the next id wrap round to 1.)
        let too_big = |id: Option<u64>| id.is_some_and(|id| id > MAX_ID);
        for (i, b) in self.bodies.iter().enumerate() {
            if too_big(b.id) {
                return Err(format!("bodies[{i}]: id must be at most 2^53 ({MAX_ID})"));
            }
            b.validate().map_err(|e| format!("bodies[{i}]: {e}"))?;
        }
        for (i, c) in self.cables.iter().enumerate() {
            if too_big(c.id) {
                return Err(format!("cables[{i}]: id must be at most 2^53 ({MAX_ID})"));
            }
            c.validate().map_err(|e| format!("cables[{i}]: {e}"))?;
        }
        Ok(())
    }
}
