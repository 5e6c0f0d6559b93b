//! Sequential-impulse contact solver (projected Gauss–Seidel) with warm
//! starting, Coulomb friction, restitution and soft contacts.
//!
//! # Position correction: soft constraints with relaxation (why)
//!
//! Penetration is removed by a *soft* bias velocity (a spring–damper on the
//! separation, stiffness `contact_hertz`, damping ratio `damping_ratio`),
//! applied in the `solve` pass of every substep; positions are then
//! integrated, and a `relax` pass re-solves the same constraints without the
//! bias. The relax pass takes the push-out velocity back out of the bodies, so
//! correcting an overlap moves the bodies apart but never leaves them with the
//! velocity that did it: position correction adds no kinetic energy (the
//! property split impulses also have), while the spring–damper form stays
//! stable at any mass ratio and time step, unlike a Baumgarte factor, which
//! must be tuned against the step and over-shoots when it is too large.
//! Substepping (several velocity/position sub-iterations per step with one
//! narrow phase) gives stiff stacks at a fraction of the cost of more steps.
//!
//! # Combining materials
//!
//! Friction of a pair is the geometric mean √(μa·μb) (a zero-friction body
//! makes every contact frictionless); restitution is the larger of the two
//! (a bouncy ball bounces on any floor). Restitution applies only when the
//! approach speed exceeds `restitution_threshold`, so resting contacts do not
//! buzz.

use super::math::{orthonormal_basis, Mat3, Quat, Vec3};
use glam::{DMat3, DQuat, DVec3};

/// Solver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverSettings {
    /// Velocity/position substeps per step.
    pub substeps: u32,
    /// Contact stiffness (Hz), clamped to a quarter of the substep rate.
    pub contact_hertz: f32,
    /// Contact damping ratio (dimensionless; > 1 is over-damped).
    pub damping_ratio: f32,
    /// Largest speed (m/s) at which overlap is pushed out.
    pub max_push_speed: f32,
    /// Approach speed (m/s) below which restitution is ignored.
    pub restitution_threshold: f32,
    /// Fraction of last step's impulses used to warm start.
    pub warm_start: f32,
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            substeps: 4,
            contact_hertz: 30.0,
            damping_ratio: 10.0,
            max_push_speed: 3.0,
            restitution_threshold: 1.0,
            warm_start: 1.0,
        }
    }
}

/// A body as the solver sees it: velocities, the motion since the start of the
/// step, and inverse mass properties. Index 0 is the shared static body.
#[derive(Clone, Copy, Debug)]
pub struct SolverBody {
    pub v: Vec3,
    pub w: Vec3,
    /// Displacement of the centre of mass since the start of the step.
    pub dp: Vec3,
    /// Rotation since the start of the step.
    pub dq: Quat,
    /// Σ ω·h since the start of the step: the rotation, linearized, used to
    /// track separations inside the substeps.
    pub dtheta: Vec3,
    pub inv_mass: f32,
    pub inv_i: Mat3,
    /// Velocity change per second from gravity and forces.
    pub dv: Vec3,
    pub dw: Vec3,
    pub linear_damping: f32,
    pub angular_damping: f32,
}

impl SolverBody {
    pub const STATIC: SolverBody = SolverBody {
        v: Vec3::ZERO,
        w: Vec3::ZERO,
        dp: Vec3::ZERO,
        dq: Quat::IDENTITY,
        dtheta: Vec3::ZERO,
        inv_mass: 0.0,
        inv_i: Mat3::ZERO,
        dv: Vec3::ZERO,
        dw: Vec3::ZERO,
        linear_damping: 0.0,
        angular_damping: 0.0,
    };
}

/// What Euler's gyroscopic term needs of a body whose inertia is not the
/// same about every axis (`None` in [`solve`]'s list for the others, and
/// for kinematic and static bodies): its rotation at the start of the step
/// and its inertia in its own frame (in f64, as the turn works in it).
#[derive(Clone, Copy, Debug)]
pub struct Spin {
    rotation: Quat,
    inertia: DMat3,
    inv_inertia: DMat3,
    /// See [`MAX_SPREAD`].
    spread: f64,
}

impl Spin {
    /// The spin data of a body with this local inertia, or `None` where
    /// its inertia is the same about every axis (a sphere, a cube: the
    /// term is zero).
    pub fn new(rotation: Quat, inertia: Mat3, inv_inertia: Mat3) -> Option<Spin> {
        let d = Vec3::new(inertia.x_axis.x, inertia.y_axis.y, inertia.z_axis.z);
        let off = Vec3::new(inertia.y_axis.x, inertia.z_axis.x, inertia.z_axis.y).abs();
        let tol = 1.0e-4 * d.max_element();
        if off.max_element() <= tol && d.max_element() - d.min_element() <= tol {
            return None;
        }
        // How far apart its largest and least moments are (at least their
        // ratio, at most three times it).
        let (inertia, inv_inertia) = (inertia.as_dmat3(), inv_inertia.as_dmat3());
        let frobenius = |m: DMat3| m.to_cols_array().iter().map(|x| x * x).sum::<f64>().sqrt();
        let spread = frobenius(inertia) * frobenius(inv_inertia);
        if spread.is_nan() || spread > MAX_SPREAD {
            return None;
        }
        Some(Spin {
            rotation,
            inertia,
            inv_inertia,
            spread,
        })
    }
}

/// The most spread inertia ([`Spin::new`]: the product of the inertia's
/// and its inverse's Frobenius norms, at least the ratio of the largest
/// and least moments) that gets the gyroscopic term. Mapping a momentum to
/// an angular velocity multiplies an error in the body's rotation by that
/// ratio: a rod 2 m long and 2 cm thick (5,000) spun at 50 rad/s across
/// itself took a spin of 3,213 rad/s about its length in one step, lost
/// 60% of its momentum, and tossed spinning onto a floor gained 4,000 J (a
/// reviewer's cases); 2 × 0.1 × 0.1 m (200), 196 rad/s. Such bodies keep
/// their angular velocity, as all did before.
const MAX_SPREAD: f64 = 64.0;

/// Per-point impulses carried between steps (matched by feature id).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PointImpulse {
    pub normal: f32,
    /// Friction impulse in world space (re-projected on each step's basis).
    pub tangent: Vec3,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct ConstraintPoint {
    /// Anchors from each centre of mass at the start of the step.
    pub ra: Vec3,
    pub rb: Vec3,
    /// Separation at the start of the step.
    pub separation: f32,
    pub normal_mass: f32,
    pub tangent_mass: [f32; 2],
    pub normal_impulse: f32,
    pub tangent_impulse: [f32; 2],
    /// Largest normal impulse of any substep (restitution needs contact).
    pub max_normal_impulse: f32,
    /// Sum of the normal impulses applied during the step (for events).
    pub total_normal_impulse: f32,
    /// Normal relative velocity before solving (for restitution).
    pub relative_velocity: f32,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct ContactConstraint {
    pub a: u32,
    pub b: u32,
    pub normal: Vec3,
    pub tangents: [Vec3; 2],
    pub friction: f32,
    pub restitution: f32,
    pub points: [ConstraintPoint; 4],
    pub count: usize,
}

impl ContactConstraint {
    /// Builds the constraint from manifold data: per point the world points
    /// on A's and on B's surface, the separation and the warm-start impulses.
    /// Each body's anchor is its own surface point, so a speculative point
    /// far from both bodies never puts a lever arm outside a body (a shared
    /// midpoint would, and the rotation of such an anchor wrecks the
    /// separation tracked inside the substeps).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        a: u32,
        b: u32,
        ba: &SolverBody,
        bb: &SolverBody,
        com_a: Vec3,
        com_b: Vec3,
        normal: Vec3,
        points: &[(Vec3, Vec3, f32, PointImpulse)],
        friction: f32,
        restitution: f32,
    ) -> Self {
        // Friction directions: the first follows the sliding velocity, so
        // the Coulomb impulse opposes sliding even though the two directions
        // are solved one after the other with different effective masses
        // (with a fixed basis the clamped impulse drifts sideways and the
        // sliding friction comes out a few percent weak).
        let tangents = {
            let mut vt = Vec3::ZERO;
            for &(pa, pb, _, _) in points {
                vt += (bb.v + bb.w.cross(pb - com_b)) - (ba.v + ba.w.cross(pa - com_a));
            }
            vt -= normal * vt.dot(normal);
            let len = vt.length();
            if len > 1.0e-3 * points.len() as f32 {
                let t1 = vt / len;
                [t1, normal.cross(t1)]
            } else {
                let (t1, t2) = orthonormal_basis(normal);
                [t1, t2]
            }
        };
        let mut c = ContactConstraint {
            a,
            b,
            normal,
            tangents,
            friction,
            restitution,
            count: points.len().min(4),
            ..Default::default()
        };
        let k = |r_a: Vec3, r_b: Vec3, d: Vec3| {
            let rna = r_a.cross(d);
            let rnb = r_b.cross(d);
            let k = ba.inv_mass + bb.inv_mass + rna.dot(ba.inv_i * rna) + rnb.dot(bb.inv_i * rnb);
            if k > 0.0 {
                1.0 / k
            } else {
                0.0
            }
        };
        for (i, &(pa, pb, sep, imp)) in points.iter().take(4).enumerate() {
            let ra = pa - com_a;
            let rb = pb - com_b;
            let vrel = (bb.v + bb.w.cross(rb)) - (ba.v + ba.w.cross(ra));
            c.points[i] = ConstraintPoint {
                ra,
                rb,
                separation: sep,
                normal_mass: k(ra, rb, normal),
                tangent_mass: [k(ra, rb, tangents[0]), k(ra, rb, tangents[1])],
                normal_impulse: imp.normal,
                tangent_impulse: [imp.tangent.dot(tangents[0]), imp.tangent.dot(tangents[1])],
                max_normal_impulse: 0.0,
                total_normal_impulse: 0.0,
                relative_velocity: vrel.dot(normal),
            };
        }
        c
    }
}

impl ContactConstraint {
    /// Point `i`'s impulses for the contact cache (friction in world space).
    pub fn point_impulse(&self, i: usize) -> PointImpulse {
        let p = &self.points[i];
        PointImpulse {
            normal: p.normal_impulse,
            tangent: self.tangents[0] * p.tangent_impulse[0]
                + self.tangents[1] * p.tangent_impulse[1],
        }
    }
}

/// Applies an impulse `imp` at anchors `ra` (on A, negatively) and `rb` (on B).
#[inline(always)]
fn apply(ba: &mut SolverBody, bb: &mut SolverBody, ra: Vec3, rb: Vec3, imp: Vec3) {
    ba.v -= imp * ba.inv_mass;
    ba.w -= ba.inv_i * ra.cross(imp);
    bb.v += imp * bb.inv_mass;
    bb.w += bb.inv_i * rb.cross(imp);
}

/// Soft-constraint coefficients for a stiffness and damping ratio at step h.
#[derive(Clone, Copy, Debug)]
struct Softness {
    bias_rate: f32,
    mass_scale: f32,
    impulse_scale: f32,
}

fn softness(hertz: f32, zeta: f32, h: f32) -> Softness {
    if hertz == 0.0 {
        return Softness {
            bias_rate: 0.0,
            mass_scale: 1.0,
            impulse_scale: 0.0,
        };
    }
    let omega = 2.0 * std::f32::consts::PI * hertz;
    let a1 = 2.0 * zeta + h * omega;
    let a2 = h * omega * a1;
    let a3 = 1.0 / (1.0 + a2);
    Softness {
        bias_rate: omega / a1,
        mass_scale: a2 * a3,
        impulse_scale: a3,
    }
}

/// Runs the whole velocity/position solve for one step of length `dt`:
/// for each substep integrate velocities, warm start, solve with bias,
/// integrate positions, relax; then restitution. Bodies end with their new
/// velocities and the motion `dp`/`dq` of the step.
pub fn solve(
    bodies: &mut [SolverBody],
    constraints: &mut [ContactConstraint],
    dt: f32,
    s: &SolverSettings,
    spins: &[Option<Spin>],
) {
    let n = s.substeps.max(1);
    let h = dt / n as f32;
    let inv_h = 1.0 / h;
    let soft = softness(s.contact_hertz.min(0.25 / h), s.damping_ratio, h);
    for c in constraints.iter_mut() {
        for p in &mut c.points[..c.count] {
            p.normal_impulse *= s.warm_start;
            p.tangent_impulse[0] *= s.warm_start;
            p.tangent_impulse[1] *= s.warm_start;
        }
    }
    // (No scratch and no pass after the relax where no body spins.)
    let spinning = spins.iter().any(Option::is_some);
    let mut turned_from = vec![Quat::IDENTITY; if spinning { bodies.len() } else { 0 }];
    for i in 0..n {
        integrate_velocities(bodies, h);
        warm_start(bodies, constraints);
        // Gauss–Seidel favours the constraints solved last; alternating the
        // order between passes keeps stacks from drifting to one side. Within
        // a manifold the alternate passes begin at the point half way round
        // it (the opposite corner of a clipped face of up to four points; a
        // reduced manifold's points are in order of depth and spread, not
        // round the face, and there it is another point): begun at the
        // first point each time, a stack of ten boxes settled leaning 1.3
        // cm towards it, and 2.3 cm with recycled contacts
        // (`world/narrow.rs`); begun at the last (the order reversed), the
        // lean along one side stayed.
        let reverse = i % 2 == 1;
        solve_contacts(bodies, constraints, inv_h, soft, s, true, reverse);
        integrate_positions(bodies, spins, &mut turned_from, h);
        solve_contacts(bodies, constraints, inv_h, soft, s, false, !reverse);
        if spinning {
            carry_spins(bodies, spins, &turned_from);
        }
        for c in constraints.iter_mut() {
            for p in &mut c.points[..c.count] {
                p.total_normal_impulse += p.normal_impulse;
            }
        }
    }
    apply_restitution(bodies, constraints, s.restitution_threshold);
}

fn integrate_velocities(bodies: &mut [SolverBody], h: f32) {
    for b in bodies.iter_mut().skip(1) {
        if b.inv_mass == 0.0 {
            continue;
        }
        // Implicit damping: stable for any damping coefficient.
        b.v = (b.v + b.dv * h) / (1.0 + h * b.linear_damping);
        b.w = (b.w + b.dw * h) / (1.0 + h * b.angular_damping);
    }
}

/// Integrates the positions over a substep. A body with [`Spin`] data
/// turns by the mean of its angular velocity over the substep as its
/// angular momentum carries it ([`free_turn`]); its rotation before the
/// turn goes to `turned_from`, for [`carry_momentum`] after the relax pass.
fn integrate_positions(
    bodies: &mut [SolverBody],
    spins: &[Option<Spin>],
    turned_from: &mut [Quat],
    h: f32,
) {
    for (i, b) in bodies.iter_mut().enumerate().skip(1) {
        b.dp += b.v * h;
        let spin = spins.get(i).copied().flatten();
        if spin.is_some() {
            turned_from[i] = b.dq;
        }
        let w = b.w;
        if w == Vec3::ZERO {
            continue;
        }
        if let Some(spin) = &spin {
            let turn = w.length() * h;
            if turn > LEAST_TURN && turn <= MOST_TURN {
                let (dq, w_mid) = free_turn(b.dq, w, spin, h);
                b.dq = dq;
                b.dtheta += w_mid * h;
                continue;
            }
        }
        b.dtheta += w * h;
        let dq = Quat::from_xyzw(w.x, w.y, w.z, 0.0) * b.dq;
        b.dq =
            Quat::from_vec4(glam::Vec4::from(b.dq) + glam::Vec4::from(dq) * (0.5 * h)).normalize();
        if spin.is_some() {
            // (Too small a turn to change the angular velocity: not carried.)
            turned_from[i] = b.dq;
        }
    }
}

/// A substep's turn (rad) above which a body with [`Spin`] data turns as
/// the others do, without the gyroscopic term (60 rad/s at 60 Hz and four
/// substeps). The contacts' impulses go through the inverse inertia of the
/// step's start, which a body turning faster has left far behind; carried
/// through its turn with its own inertia, such an impulse's error grew:
/// bars 2 m long and 0.3–0.5 m thick tossed at 500 rad/s onto a floor left
/// it at 86–157 m/s and rose 600–1,000 m (as before the term: 47–48 m/s,
/// 76–87 m), a reviewer's case.
const MOST_TURN: f32 = 0.25;

/// A substep's turn (rad) below which a body with [`Spin`] data turns as
/// the others do and its angular velocity is not carried through the turn:
/// the gyroscopic change is of the order of the turn squared (10⁻⁸ of the
/// spin), and resting bodies, which turn by far less, skip its cost.
const LEAST_TURN: f32 = 1.0e-4;

/// After a substep's relax pass: each turned body with [`Spin`] data keeps
/// its angular momentum through the turn ([`carry_momentum`]).
fn carry_spins(bodies: &mut [SolverBody], spins: &[Option<Spin>], turned_from: &[Quat]) {
    for (i, b) in bodies.iter_mut().enumerate().skip(1) {
        if let (Some(Some(spin)), Some(&from)) = (spins.get(i), turned_from.get(i)) {
            if from != b.dq {
                b.w = carry_momentum(b.w, from, b.dq, spin);
            }
        }
    }
}

/// Fixed-point rounds of [`free_turn`]'s trapezoidal turn.
const TURN_ROUNDS: usize = 3;
/// The most a body turns (rad) in one piece of [`free_turn`]...
const MAX_TURN: f64 = 0.05;
/// ...and the most pieces it takes a substep.
const MAX_PIECES: f64 = 64.0;

/// A substep `h` of free rotation of a body whose inertia differs between
/// axes, from its rotation since the step's start `dq` and angular
/// velocity `w`: the new `dq` and the mean angular velocity over the
/// substep. No torque acts on the way, so the angular momentum `L =
/// R·I·Rᵀ·ω` stays what it was, and the angular velocity at each rotation
/// `R` is `R·I⁻¹·Rᵀ·L`: the body turns by the mean of its angular velocity
/// at the start and at the end (the trapezoidal rule on the rotation,
/// implicit: a few fixed-point rounds, in pieces of at most [`MAX_TURN`]
/// and of a quarter of the inverse spread, at most [`MAX_PIECES`] a
/// substep), which keeps its energy `½·ω·L` from drifting: turning by the
/// start's angular velocity alone, a box spun at 20 rad/s about a skew axis
/// lost 47% of its momentum to the energy clamp of [`carry_momentum`] in 4
/// s (0.12% now, 0.25% of its energy).
fn free_turn(dq: Quat, w: Vec3, spin: &Spin, h: f32) -> (Quat, Vec3) {
    let (q0, rotation) = (dq.as_dquat(), spin.rotation.as_dquat());
    let (inertia, inv_inertia) = (spin.inertia, spin.inv_inertia);
    let w0 = w.as_dvec3();
    // (A piece's turn times the spread of the inertia bounds how much an
    // error in the end's angular velocity grows in a fixed-point round.)
    let most = MAX_TURN.min(0.25 / spin.spread);
    let pieces = ((w0.length() * f64::from(h)) / most)
        .ceil()
        .clamp(1.0, MAX_PIECES);
    let piece = f64::from(h) / pieces;
    let from = q0 * rotation;
    let l = from * (inertia * (from.conjugate() * w0));
    let (mut q, mut w_now, mut turned_by) = (q0, w0, DVec3::ZERO);
    for _ in 0..pieces as usize {
        let (mut next, mut w_mid, mut moved) = (q, w_now, f64::INFINITY);
        for _ in 0..TURN_ROUNDS {
            next = (DQuat::from_scaled_axis(w_mid * piece) * q).normalize();
            let to = next * rotation;
            let w_end = to * (inv_inertia * (to.conjugate() * l));
            let mean = 0.5 * (w_now + w_end);
            let change = (mean - w_mid).length();
            if change > moved {
                // Not converging: the start's angular velocity, explicitly.
                w_mid = w_now;
                next = (DQuat::from_scaled_axis(w_mid * piece) * q).normalize();
                break;
            }
            (w_mid, moved) = (mean, change);
        }
        turned_by += w_mid * piece;
        let to = next * rotation;
        w_now = to * (inv_inertia * (to.conjugate() * l));
        q = next;
    }
    let (q, w_mid) = (
        q.as_quat().normalize(),
        (turned_by / f64::from(h)).as_vec3(),
    );
    if q.is_finite() && w_mid.is_finite() {
        (q, w_mid)
    } else {
        ((Quat::from_scaled_axis(w * h) * dq).normalize(), w)
    }
}

/// Euler's gyroscopic term: the angular velocity of a body that has turned
/// from `from` to `to` (its rotations since the step's start) with angular
/// velocity `w` and kept its angular
/// momentum `L = R·I·Rᵀ·ω` (the contacts' and forces' torques are applied
/// apart, as impulses). A body spun about a skew axis then precesses, and
/// one spun about its middle axis flips (the tennis racket), as a rigid
/// body does; without the term a free body kept its angular velocity, not
/// its momentum (a box spun about a skew axis turned rigidly about it, its
/// momentum 84% off within a turn). The inertia is the body's own, in its
/// frame (inverting the world inverse inertia lost precision for slender
/// bodies), and the energy `½·ω·L` is kept from rising (the new `ω` is
/// scaled down if it would): an implicit Newton step of the world-frame
/// equation, tried before, gained energy above about 150 rad/s and damped
/// spins of 20 rad/s by a quarter a second. It is applied after the relax
/// pass, to the angular velocity the contacts leave, not to the one the
/// turn was made with, which holds the push-out's: carried through the
/// turn, the push-out's spin came out of the relax pass crossed with the
/// body's own, and thin plates pushed out of spheres were left spinning
/// (114 of 400 pairs awake after 4 s, against under 40).
fn carry_momentum(w: Vec3, from: Quat, to: Quat, spin: &Spin) -> Vec3 {
    let (from, to) = (
        (from * spin.rotation).as_dquat(),
        (to * spin.rotation).as_dquat(),
    );
    let w0 = w.as_dvec3();
    let l = from * (spin.inertia * (from.conjugate() * w0));
    let mut next = to * (spin.inv_inertia * (to.conjugate() * l));
    let (before, after) = (w0.dot(l), next.dot(l));
    if after > before && after > 0.0 {
        next *= (before.max(0.0) / after).sqrt();
    }
    let next = next.as_vec3();
    if next.is_finite() {
        next
    } else {
        w
    }
}

#[inline]
fn pair_mut(bodies: &mut [SolverBody], a: u32, b: u32) -> (SolverBody, SolverBody) {
    (bodies[a as usize], bodies[b as usize])
}

#[inline]
fn store(bodies: &mut [SolverBody], a: u32, b: u32, ba: SolverBody, bb: SolverBody) {
    // Index 0 is the shared static body: never written.
    if a != 0 {
        bodies[a as usize] = ba;
    }
    if b != 0 {
        bodies[b as usize] = bb;
    }
}

fn warm_start(bodies: &mut [SolverBody], constraints: &[ContactConstraint]) {
    for c in constraints {
        let (mut ba, mut bb) = pair_mut(bodies, c.a, c.b);
        for p in &c.points[..c.count] {
            let imp = c.normal * p.normal_impulse
                + c.tangents[0] * p.tangent_impulse[0]
                + c.tangents[1] * p.tangent_impulse[1];
            apply(&mut ba, &mut bb, p.ra, p.rb, imp);
        }
        store(bodies, c.a, c.b, ba, bb);
    }
}

fn solve_contacts(
    bodies: &mut [SolverBody],
    constraints: &mut [ContactConstraint],
    inv_h: f32,
    soft: Softness,
    settings: &SolverSettings,
    use_bias: bool,
    reverse: bool,
) {
    let (max_push, impact_speed) = (settings.max_push_speed, settings.restitution_threshold);
    let len = constraints.len();
    for k in 0..len {
        let c = &mut constraints[if reverse { len - 1 - k } else { k }];
        let (mut ba, mut bb) = pair_mut(bodies, c.a, c.b);
        let n = c.normal;
        // Normal (non-penetration) first, then friction bounded by it.
        // A face landing (two points or more, approaching faster than
        // `impact_speed` as the step began) takes its points together in
        // four rounds: in one, each took the impact in turn and left it
        // unbalanced (a unit box dropped flat from 1 m, restitution 0, spun
        // at 0.43 rad/s and slid at 0.2 m/s; a box at 500 m/s left at 21
        // m/s sideways). Resting contacts keep one round (four for all made
        // the 820-box pyramid's step 60% dearer).
        let landing = c.count > 1
            && c.points[..c.count]
                .iter()
                .any(|p| p.relative_velocity < -impact_speed);
        // The j-th point of the pass (no division in the loop).
        let count = c.count;
        let first = if reverse { count / 2 } else { 0 };
        let at = |j: usize| {
            let k = first + j;
            if k >= count {
                k - count
            } else {
                k
            }
        };
        for _ in 0..if landing { 4 } else { 1 } {
            for j in 0..count {
                let p = &mut c.points[at(j)];
                // Current separation from each anchor's motion since the start
                // of the step, with the rotation linearized (θ × r): exact for a
                // spinning sphere whose anchor lies along the normal, where
                // rotating the anchor itself would swing it to the far side.
                let d = (bb.dp + bb.dtheta.cross(p.rb)) - (ba.dp + ba.dtheta.cross(p.ra));
                let sep = d.dot(n) + p.separation;
                let (bias, mass_scale, impulse_scale) = if sep > 0.0 {
                    // Speculative: allow the approach up to contact, no further.
                    (sep * inv_h, 1.0, 0.0)
                } else if use_bias {
                    (
                        (soft.bias_rate * sep).max(-max_push),
                        soft.mass_scale,
                        soft.impulse_scale,
                    )
                } else {
                    (0.0, 1.0, 0.0)
                };
                let vrel = (bb.v + bb.w.cross(p.rb)) - (ba.v + ba.w.cross(p.ra));
                let vn = vrel.dot(n);
                let lambda =
                    -p.normal_mass * mass_scale * (vn + bias) - impulse_scale * p.normal_impulse;
                let new = (p.normal_impulse + lambda).max(0.0);
                let lambda = new - p.normal_impulse;
                p.normal_impulse = new;
                p.max_normal_impulse = p.max_normal_impulse.max(new);
                let imp = n * lambda;
                apply(&mut ba, &mut bb, p.ra, p.rb, imp);
            }
        }
        // Friction: per point, the tangent impulse stays inside the Coulomb
        // cone |λt| ≤ μ·λn (projected onto the disc, not a box).
        for j in 0..count {
            let p = &mut c.points[at(j)];
            let vrel = (bb.v + bb.w.cross(p.rb)) - (ba.v + ba.w.cross(p.ra));
            let old = p.tangent_impulse;
            let mut t = [
                old[0] - p.tangent_mass[0] * vrel.dot(c.tangents[0]),
                old[1] - p.tangent_mass[1] * vrel.dot(c.tangents[1]),
            ];
            let max_f = c.friction * p.normal_impulse;
            let len2 = t[0] * t[0] + t[1] * t[1];
            if len2 > max_f * max_f {
                let s = if len2 > 0.0 { max_f / len2.sqrt() } else { 0.0 };
                t = [t[0] * s, t[1] * s];
            }
            p.tangent_impulse = t;
            let imp = c.tangents[0] * (t[0] - old[0]) + c.tangents[1] * (t[1] - old[1]);
            apply(&mut ba, &mut bb, p.ra, p.rb, imp);
        }
        store(bodies, c.a, c.b, ba, bb);
    }
}

/// Most passes of [`apply_restitution`] over the contacts. One pass took a
/// manifold's points one after the other, each to its own target, and a
/// flat face landing on its four points was left unbalanced: an upright
/// cylinder dropped with restitution 1 left at 1.10 times its landing speed
/// (rising to 1.25 times its drop) spinning at 7.8 rad/s, and boxes and
/// cylinders picked up 3–18 rad/s from symmetric landings (a reviewer's
/// cases). The passes go on until no impulse changes by more than
/// [`RESTITUTION_TOLERANCE`] of the largest: stopped at a fixed eight, the
/// points' impulses can be caught mid-swing (a review's model of a box
/// landing flat and tilting gained 5% of its energy at eight passes, none
/// converged). Converged, a flat face lands as a sphere does (0.974 of the
/// approach speed, the rest the step's gravity) with under 0.4 rad/s.
const RESTITUTION_PASSES: usize = 64;

/// See [`RESTITUTION_PASSES`].
const RESTITUTION_TOLERANCE: f32 = 1.0e-4;

fn apply_restitution(
    bodies: &mut [SolverBody],
    constraints: &mut [ContactConstraint],
    threshold: f32,
) {
    for _ in 0..RESTITUTION_PASSES {
        let (mut change, mut most) = (0.0f32, 0.0f32);
        for c in constraints.iter_mut() {
            if c.restitution == 0.0 {
                continue;
            }
            let (mut ba, mut bb) = pair_mut(bodies, c.a, c.b);
            let n = c.normal;
            for p in &mut c.points[..c.count] {
                if p.relative_velocity > -threshold || p.max_normal_impulse == 0.0 {
                    continue;
                }
                let vrel = (bb.v + bb.w.cross(p.rb)) - (ba.v + ba.w.cross(p.ra));
                let vn = vrel.dot(n);
                let lambda = -p.normal_mass * (vn + c.restitution * p.relative_velocity);
                let new = (p.normal_impulse + lambda).max(0.0);
                let lambda = new - p.normal_impulse;
                p.normal_impulse = new;
                p.total_normal_impulse += lambda;
                change = change.max(lambda.abs());
                most = most.max(new);
                let imp = n * lambda;
                apply(&mut ba, &mut bb, p.ra, p.rb, imp);
            }
            store(bodies, c.a, c.b, ba, bb);
        }
        if change <= RESTITUTION_TOLERANCE * most {
            break;
        }
    }
}
