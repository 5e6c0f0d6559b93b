//! Cables: chains of particles joined by stiff segments, colliding with
//! bodies and with each other (and themselves) without ever crossing.
//!
//! # Integrator: XPBD distance constraints, substepped (why)
//!
//! A cable must keep its length within 1% while hanging, which needs
//! segment stiffnesses far beyond what explicit springs integrate stably at
//! a game tick. Extended position-based dynamics solves each segment as a
//! compliant distance constraint (compliance = 1 / stiffness) directly on
//! positions: it is unconditionally stable, its stiffness does not depend on
//! the iteration count. Each pass solves every cable's chain of constraints
//! at once (the system is tridiagonal along a chain: one elimination and one
//! back substitution, `solver/chains.rs`) rather than one segment after
//! another, so with 4 substeps × 4 passes per tick a 50-segment cable swung
//! down from the horizontal stays within 0.05% of its rest length
//! (Gauss–Seidel sweeps at 8 × 4 left it 1.05% long). A substep's first
//! pass is made implicit in a taut chain's tension across its links (the
//! pull applied along the pass's start directions overshot a zigzag, and a
//! rope pulled 0.1% taut zigzagged for good). Velocities are
//! the position change of each substep; segment damping acts (implicitly) on
//! the relative velocity along each segment. A solve is exact only along
//! the links as its pass begins, so a step whose cables' particles move
//! apart fast takes more substeps ([`swing_substeps`]): a pinned thread
//! thrown sideways at 30–70 m/s stretched to 1.3–4.3 times its length in 4.
//!
//! # One step ([`solver::CableSystem`], driven by `world/cables.rs`)
//!
//! All cables of a world are one particle system on flat arrays.
//!
//! 1. **Tubes and pairs, once per step.** Each particle gets a *tube*: its
//!    free flight for the step (the chord of the parabola from its position
//!    and velocity) and a slack: 5 mm, plus 10% of the predicted
//!    displacement, plus 1.5× how far it ended from its prediction in the
//!    last step (particles in contact keep being pushed), plus the chord's
//!    own error. While a particle stays within its slack of that path at
//!    every substep's end, its motion in between stays within it too (both
//!    are linear there). Segment boxes around the tubes go into a grid
//!    ([`pairs`]); a candidate pair is kept unless the plane of its closest
//!    points leaves more than the touching distance plus both slacks at the
//!    tubes' start *and* end: the gap along a fixed direction,
//!    `min n·bⱼ(t) − max n·aᵢ(t)`, is concave in time for linear paths, so
//!    it then does so throughout. Cables falling together thus make no
//!    pairs, however fast they fall. The filter judges eight candidates
//!    at a time as f32 vectors (`solver/filter.rs`), positions taken
//!    relative to the pair, and drops a pair only with a margin above a
//!    bound of the rounding; segments too close for an f32 direction to be
//!    sure go to the f64 judge. Neighbours on a cable, which share a
//!    particle, are never a pair. Each pair starts with its closest points:
//!    the contact coordinates `s`, `u` and the unit direction `n` from A to
//!    B, which is a *separating plane* of the two segments.
//! 2. **Body contacts, once per step.** Each segment whose box reaches a body
//!    is a capsule against it (the world's manifold routine, speculative out
//!    to the tube's farthest point): its nearest points become constraints
//!    at their `s` along the segment, and each end that can reach the body by
//!    itself gets a sphere contact too (unless a nearest point is already
//!    at that end). With one end pinned, a contact's depth is each end's
//!    own, the pin's taken as none (near the pin, the free particle would
//!    undo it through a lever of 1/s). These planes are taken once a step,
//!    so a segment that crosses a box's edge within the step could cut its
//!    corner (1–4 cm of a static box in random scenes, up to 10 cm of a
//!    free box cables were thrown across): after each verification
//!    (step 4), a segment whose centre line now meets a body it has a
//!    contact with (a ray cast along it, after a plane test that settles
//!    the common case) has both particles held where the substep began,
//!    and the pairs around them are verified again. This is checked at the
//!    substeps' ends, not a sweep: a body thinner than a substep's motion
//!    is kept from being passed through by the contacts' speculative reach
//!    (as far as the segment can move in the step).
//!
//!    Bodies are stepped before the cables. A body that moved in the step
//!    moves again through the cable stage, linearly from its start pose to
//!    its end pose: its contacts are taken at its pose when the segments'
//!    base positions were (reaching as far as both can move), each carries
//!    its body point's displacement over the step, and each substep's
//!    plane is where that point is at the substep's end (friction and
//!    restitution act relative to it). A ball thrown at a rope thus pushes
//!    the rope ahead of it, rather than finding the rope deep inside itself
//!    and pushing it out of the far side. A segment held back from a moving
//!    body is held where it was relative to the body, and a dynamic body
//!    gets the momentum the held particles lose, `m·(x − x_held)/h` each.
//!    Where a segment is pinched by a dynamic body (pinned, or held from
//!    its other side by another body or by a cable a body or pin holds
//!    up), the stage, which moves the body as if it had no give, would
//!    push the segment out of the body and have it pushed back in every
//!    pass, crediting the body with each push (a box dropped onto cables
//!    on the floor was thrown off at 48 m/s): such a body's impulses are
//!    scaled down so that it leaves no faster than restitution or the
//!    touching cables' own speed allow, and the contact becomes a contact
//!    of the next step's rigid solve (with the body under the cables, or
//!    with the cable as a fixed point; `world/cable_supports.rs`, `CableSupport`),
//!    so the body rests on the cable instead of sinking in and being
//!    pushed out.
//!    A dynamic body whose segments nothing holds from their other side
//!    (awake; a segment's own pin does not count) is *coupled*
//!    (`solver/coupled.rs`): it moves beyond its path by what its contacts
//!    give it within the stage, each correction shared between the
//!    segment's particles and the body by their inverse masses along it
//!    (`Σ f²wᵢ` against `1/M + (r×d)·I⁻¹(r×d)`, the normal and the friction
//!    part each along its own), its contacts' planes moving with it; after
//!    the stage it takes that displacement and rotation, and its velocity
//!    the impulses, whose sum is the velocity it gained. Taking the
//!    impulses only after the stage, a ball thrown at a rope went a whole
//!    step into the rope without feeling it, and friction spun a light
//!    ball a step late, one way, then the other harder: of 120 balls
//!    thrown at 2–20 m/s at a rope pinned at both ends, 21 got past it and
//!    92 gained kinetic energy (up to 596-fold); now none does. A coupled
//!    body takes no supports and no bound on its impulses (a rope gives
//!    way about its pin), and a held particle's momentum goes to it (after
//!    the stage) where its contact touches it. The chains touching a
//!    coupled body take more passes after the substep's, until its
//!    contacts converge (at most 32 per pass): a body hundreds of times
//!    heavier than the particles gives way only its share in each. The
//!    bodies are still solved before the cables: the rigid solve does not
//!    see the cables' pull within its step. So the bodies resting on a
//!    coupled body (its riders: `world/cable_riders.rs`) move with it in
//!    the stage as one rigid body, and each contact holding one up ends
//!    the stage plastic along its normal; else a stack on a rope fell in
//!    each rigid step, only its lowest box was pushed back up, and the
//!    others sank into it and crept off. A sleeping body holds
//!    cables as a static one does; they wake it only for more than a load
//!    (down, 1.5× the touching cables' weight over the step; up, 1.5× the
//!    body's; across, too little to move it), for sideways pulls adding
//!    up, or for a touching cable moving faster than twice the sleep speed
//!    (`world/cable_sleep.rs`), so bodies with cables lying on them sleep;
//!    woken so, a body takes its island's share of the step's gravity it
//!    missed asleep (the cables' upward impulses on the island over its
//!    weight) with their impulses (a box on a rope bridge was thrown up
//!    at g·dt).
//! 3. **Substeps** (4 by default): predict, then 4 passes over segments,
//!    body contacts and those pairs within 5 mm of touching: each keeps
//!    `n·(B(u) − A(s)) ≥ r_a + r_b`, with `n`, `s` and `u` those of the
//!    segments' closest points at the substep's start
//!    (between nearly parallel segments, whose closest points jump from one
//!    end of their overlap to the other at the least change, those of an
//!    earlier substep while the new ones are no more than 0.1 mm nearer)
//!    (the pair's plane, kept for the verification, may be from the step's
//!    start: through the end of the segment a cable slides onto, tilted
//!    back towards it, it knocked a cable sliding across another's joints
//!    back; a rod across rails of 10 cm segments slid 31% short), the correction
//!    split over the four particles by barycentric weight divided by
//!    Σ wᵢ²/mᵢ (body contacts with Coulomb friction on the substep's
//!    sliding; the body side gets the opposite momentum). Where each
//!    segment has a particle without mass (pinned, or asleep), the depth
//!    between those two counts only while they are apart (the gap is the
//!    weighted sum of its four corners' gaps; a cable pinned 1 mm into a
//!    pinned one was thrown at up to 458 m/s through the lever 1/s, see
//!    `Contact::depth`), as a body contact's pinned end. Friction between
//!    segments acts on the velocities at the substep's end: each contact
//!    that pushed by λ takes away its relative tangential velocity up to
//!    μλ/h (inside the passes it fought the chains' solve, and a heap crept
//!    faster the more friction it had). A chain group whose links end the
//!    passes off their length by more than 0.5% beyond their compliance
//!    takes more passes with its contacts and the groups across them, until
//!    they converge or at most 16 per pass (`solver/strained.rs`; a cable
//!    dropped onto a taut line left the line's links stretched by the
//!    contacts' last push, 113% for the median of 100 random drops), for a
//!    few cables at a time (at most 16,384 particle solves a substep); a
//!    group with a cable touching a dynamic body is left out, and contacts
//!    between two segments of one cable of a collision radius larger than
//!    its segments are held as they are. Each cable's segments are solved together (a Newton step
//!    on the chain's tridiagonal system), eight runs of cables side by side
//!    as SIMD vectors (`solver/chains.rs`); the cables are cut into two halves of whole cables, and
//!    each pass solves the halves side by side (on two threads for large
//!    systems) and then the contacts across them, in a fixed order: the
//!    result does not depend on the threads. A large stage forks and joins
//!    about 50 times a step, so for its length the pool's other thread
//!    keeps looking for work instead of sleeping (`world/cables.rs`).
//! 4. **Verification, every substep: the no-crossing guarantee.** For
//!    linear motion the gap along a fixed direction is concave in `t`, so a
//!    plane that separates the segments at the substep's start and at its
//!    end separates them throughout. Each pair's plane is checked at the end
//!    (4 dot products, with a 10 µm least gap); a pair that fails tries the
//!    plane of its closest points at the start, then the exact edge–edge CCD
//!    of [`super::collision::ccd_cubic`] (no false negatives). If the centre
//!    lines would touch, the thick-segment CCD of
//!    [`super::collision::ccd_thick`] finds the time of impact and an
//!    impulse `−(1 + e)·vₙ / Σ wᵢ²/mᵢ`, split by where the contact lies on
//!    each segment, stops the approach (segments that begin within their
//!    thickness of each other and part there, turning about each other,
//!    take it where they first come within half the distance they began
//!    at); a pair that still fails after two such responses has its four
//!    particles held where the substep began (a state already proven), and
//!    the pairs around them are checked again. Where all four are of free
//!    cables (no pinned or sleeping particle, none held back from a body),
//!    they move on together instead, by their mass-weighted mean
//!    displacement: their places relative to each other are those of the
//!    substep's start, and their momentum stays (`solver/holds.rs`; stopped
//!    pairs sharing a particle move as one group). The held particles' cables
//!    are then solved again with them standing still, so that their free
//!    particles come back onto their links instead of stretching them by
//!    their motion in the substep (up to 92% for a step in 100 random drops
//!    on a pinned line; the next substep's solve turned that strain into
//!    speed), and the pairs around what moved are checked again, up to
//!    8 times (`CableSystem::drain_and_pull`).
//!    Pairs outside the list cannot touch while particles stay in their
//!    tubes. A particle that ends the substep outside its tube (pushed there
//!    by the solve, or held back by the fail-safe) gets a new tube from the
//!    substep's start at its new velocity; its segments are queried against
//!    the grid (and a small grid of the other changed boxes) for new pairs,
//!    which are verified for this substep too, until every particle is in
//!    its tube (many at once: all pairs are rebuilt).
//!    `WorldSettings::cable_audit` checks all of this by brute force in
//!    tests: no two centre lines touch, and no pair left out of the list
//!    comes within touching distance.
//! 5. Velocities, damping, friction between segments (each contact that
//!    pushed by λ takes away up to μλ/h of its relative sliding velocity),
//!    the depth a contact (with a segment or a body) began the substep
//!    with pushed out as position only (its gap's opening speed loses up
//!    to depth/h, never below its start's), and restitution (contacts approached faster than 1 m/s
//!    leave at `e` times that speed).
//! 6. **Sleep** (`world/cable_sleep.rs`): a cable whose particles have
//!    stayed slow for the sleep time (root mean square speed under the
//!    sleep speed, none faster than twice that, no awake dynamic body in
//!    contact but resting ones without supports, with which it falls
//!    asleep; a particle's speed is the larger of its velocity and its
//!    displacement over the step) falls asleep. Its particles are then loaded as pinned: no
//!    chain solve, no body contacts, no pairs with segments that cannot
//!    move; with every cable asleep the stage is skipped. Among awake
//!    ones, a sleeping cable's segments (and those pinned at both ends)
//!    stay out of the step's grid: their boxes are in a grid of their own,
//!    kept from step to step while they stay the same, which the movable
//!    segments' boxes (and tube extensions) are queried against (a
//!    50,000-segment heap asleep under one falling cable cost 19.6 ms a
//!    step with every segment in the step's grid, 1.24 ms now; the
//!    10,000-segment one, 4.2 and 0.23 ms). A cable asleep at the
//!    stage's last run and now, unchanged, keeps the tube, box and filter
//!    record of each particle and segment from the last build
//!    (`CableSystem::fresh`); its particles are still copied in and out.
//!    The supports of bodies resting on it are kept. Before each stage, a
//!    sleeping cable that an awake segment faster than four times the
//!    sleep speed or a moving body may reach within the step wakes (at rest, so the
//!    no-crossing argument above is unchanged: within a step a particle
//!    is either free or pinned throughout).
//!
//! Threads (radius 0) collide with a 1 mm thickness ([`MIN_THICKNESS`]):
//! the crossing guarantee needs no thickness, but contacts at zero distance
//! would leave every touching pair to the fail-safe.

use super::math::Vec3;
use serde::{Deserialize, Serialize};

pub(crate) mod pairs;
pub(crate) mod solver;

/// Runs `a` and `b`, on two threads when `par`. Each writes only its own
/// half, so the result does not depend on which.
#[inline]
fn both<A: Send, B: Send>(
    par: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if par {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

pub use solver::CableStats;

#[cfg(test)]
use super::math::lcg;

/// Collision radius (m) of a cable whose radius is smaller (threads).
pub const MIN_THICKNESS: f64 = 1.0e-3;

/// Most segments in one cable.
pub const MAX_SEGMENTS: u32 = 100_000;

/// Most pairs of segments a step's grid may list (twice
/// [`MAX_OVERLAPS`], which bounds them when cables are spawned; cables
/// spawned apart that meet at speed can pass it). Past it the stage stops
/// before moving any cable, and the world reports a fault
/// ([`crate::physics::World::fault`]): the memory a step takes stays
/// bounded (about 16 bytes a pair).
pub const MAX_STEP_PAIRS: usize = 2 * MAX_OVERLAPS as usize;

/// Most contacts between segments and bodies a step may list (a cable
/// through many bodies spawned at one place, all thick: each segment with
/// each body). Past it the stage stops as past [`MAX_STEP_PAIRS`]. A
/// 50,000-segment heap in its box makes about 10,000.
pub const MAX_STEP_BODY_CONTACTS: usize = 2_000_000;

/// Most pairs of segments whose boxes over a step overlap (each segment's
/// box around where its ends are and where their velocity takes them in a
/// step, with its collision radius and a tube's slack) a world's cables may
/// have when a cable joins: about three times the settled
/// 200,000-segment heap's (a world's most over REST). The step's broad
/// phase lists every such pair: cables spawned into each other can make a
/// number quadratic in their segments (one cable of 100,000 segments
/// wound into a ball, 5·10⁹), which exhausted the memory and took the
/// whole server down. A cable past the limit is refused
/// ([`crate::physics::World::add_cable`]).
pub const MAX_OVERLAPS: u64 = 8_000_000;

/// A cable as a scene or the REST API describes it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CableSpec {
    /// Set in snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub from: [f32; 3],
    pub to: [f32; 3],
    #[serde(default = "default_segments")]
    pub segments: u32,
    /// Thickness radius (m); 0 is a thread.
    #[serde(default = "default_radius")]
    pub radius: f32,
    /// Total mass (kg), spread evenly over the particles.
    #[serde(default = "default_mass")]
    pub mass: f32,
    /// Segment stiffness (N/m).
    #[serde(default = "default_stiffness")]
    pub stiffness: f32,
    /// Segment damping (N·s/m) on the relative velocity along each segment.
    #[serde(default)]
    pub damping: f32,
    /// Particle indices held in place.
    #[serde(default)]
    pub pinned: Vec<u32>,
    #[serde(default)]
    pub linear_velocity: [f32; 3],
    #[serde(default)]
    pub restitution: f32,
    #[serde(default = "default_friction")]
    pub friction: f32,
    /// Set in snapshots: the particle positions (then `from`/`to` only give
    /// the rest length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<[f32; 3]>>,
    /// Set in snapshots: the particle velocities (then `linear_velocity`
    /// is only the one it was spawned with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocities: Option<Vec<[f32; 3]>>,
    /// Set in snapshots: whether it is asleep (a scene loads it so; a
    /// cable added over REST starts awake, as a body does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sleeping: Option<bool>,
}

fn default_segments() -> u32 {
    16
}
fn default_radius() -> f32 {
    0.02
}
fn default_mass() -> f32 {
    1.0
}
fn default_stiffness() -> f32 {
    1.0e6
}
fn default_friction() -> f32 {
    0.5
}

impl CableSpec {
    pub fn new(from: [f32; 3], to: [f32; 3], segments: u32) -> Self {
        Self {
            id: None,
            from,
            to,
            segments,
            radius: default_radius(),
            mass: default_mass(),
            stiffness: default_stiffness(),
            damping: 0.0,
            pinned: Vec::new(),
            linear_velocity: [0.0; 3],
            restitution: 0.0,
            friction: default_friction(),
            points: None,
            velocities: None,
            sleeping: None,
        }
    }

    /// One-line error for anything out of range.
    pub fn validate(&self) -> Result<(), String> {
        let finite3 = |name: &str, v: [f32; 3], max: f32| {
            if v.iter().all(|x| x.is_finite() && x.abs() <= max) {
                Ok(())
            } else {
                Err(format!("{name} must be finite and within ±{max}"))
            }
        };
        finite3("from", self.from, super::scene::MAX_COORD)?;
        finite3("to", self.to, super::scene::MAX_COORD)?;
        finite3(
            "linear_velocity",
            self.linear_velocity,
            super::scene::MAX_SPEED,
        )?;
        if self.segments == 0 || self.segments > MAX_SEGMENTS {
            return Err(format!("segments must be in [1, {MAX_SEGMENTS}]"));
        }
        let length = (Vec3::from_array(self.to) - Vec3::from_array(self.from)).length();
        if length.is_nan() || length <= 1.0e-4 {
            return Err("a cable needs from and to apart".into());
        }
        let pos = |name: &str, x: f32, max: f32| {
            if x.is_finite() && x > 0.0 && x <= max {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be positive and at most {max}, got {x}"
                ))
            }
        };
        pos("mass", self.mass, 1.0e6)?;
        pos("stiffness", self.stiffness, 1.0e12)?;
        for (name, x, max) in [
            ("radius", self.radius, 10.0),
            ("damping", self.damping, 1.0e6),
            ("restitution", self.restitution, 1.0),
            ("friction", self.friction, 10.0),
        ] {
            if !(x.is_finite() && x >= 0.0 && x <= max) {
                return Err(format!("{name} must be in [0, {max}], got {x}"));
            }
        }
        if let Some(&p) = self.pinned.iter().find(|&&p| p > self.segments) {
            return Err(format!(
                "pinned particle {p} does not exist (0..={})",
                self.segments
            ));
        }
        if let Some(points) = &self.points {
            if points.len() != self.segments as usize + 1 {
                return Err("points must hold segments + 1 positions".into());
            }
            for p in points {
                finite3("points", *p, super::scene::MAX_COORD)?;
            }
            // A link of no length has no direction: its chain's solve moves
            // nothing there, and a cable of coincident points hung in the
            // air for good (a reviewer's case).
            let least = MIN_POINT_GAP * length / self.segments as f32;
            if let Some(i) = points
                .windows(2)
                .position(|q| (Vec3::from_array(q[1]) - Vec3::from_array(q[0])).length() <= least)
            {
                return Err(format!(
                    "points {i} and {} coincide (a link needs some length)",
                    i + 1
                ));
            }
        }
        if let Some(velocities) = &self.velocities {
            if velocities.len() != self.segments as usize + 1 {
                return Err("velocities must hold segments + 1 velocities".into());
            }
            for v in velocities {
                finite3("velocities", *v, super::scene::MAX_SPEED)?;
            }
        }
        Ok(())
    }
}

/// The least length of a link in a spec's `points`, as a fraction of its
/// rest length ([`CableSpec::validate`]).
const MIN_POINT_GAP: f32 = 1.0e-4;

/// How far a cable's particles may move apart in one substep, in rest
/// lengths ([`Cable::swing_rate`]): a step whose cables spread faster
/// takes more substeps ([`swing_substeps`]). A 300-link
/// pinned cable thrown sideways kept its length within 3–6% at 4.7–7.8
/// rest lengths a substep, and stretched by 29% or more at 9.4 and over;
/// but a stiff one (10⁷ N/m) pinned at both ends had links 4.6 times long at
/// 1.6 (`a_stiff_cable_pinned_at_both_ends_thrown_sideways_gains_no_energy`).
pub const MAX_LINK_SWING: f32 = 1.0;

/// The most substeps a step takes, as a multiple of the world's (the
/// default of `WorldSettings::cable_substep_factor`).
pub const MAX_SUBSTEP_FACTOR: u32 = 16;

/// The substeps a step of `dt` needs so that no awake cable's particles
/// move apart by more than [`MAX_LINK_SWING`] rest lengths in one (at
/// their velocities at the step's start; 0 for none). The stage takes at
/// least the world's, and at most [`MAX_SUBSTEP_FACTOR`] times those.
pub fn swing_substeps<'a>(cables: impl Iterator<Item = &'a Cable>, dt: f32) -> u32 {
    let rate = cables
        .filter(|c| !c.sleeping)
        .map(Cable::swing_rate)
        .fold(0.0f32, f32::max);
    // (The cast saturates; `f32::max` skips a NaN.)
    (rate * dt / MAX_LINK_SWING).ceil() as u32
}

/// A cable's state on the wire: `{"id", "points"}`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CableState {
    pub id: u64,
    pub points: Vec<[f32; 3]>,
}

#[derive(Clone, Debug)]
pub struct Cable {
    pub id: u64,
    pub spec: CableSpec,
    pub x: Vec<Vec3>,
    pub v: Vec<Vec3>,
    /// Inverse mass per particle; 0 for pinned ones.
    pub w: Vec<f32>,
    pub rest: f32,
    pub particle_mass: f32,
    /// Asleep: its particles hold still (velocities zero) and the stage
    /// treats them as pinned until something wakes it
    /// (`world/cable_sleep.rs`).
    pub sleeping: bool,
    /// Seconds it has rested (its particles' root mean square speed under
    /// the sleep speed, none faster than twice that, no awake dynamic body
    /// in contact but resting ones without supports:
    /// `world/cable_sleep.rs`).
    pub sleep_time: f32,
}

impl Cable {
    pub fn from_spec(spec: &CableSpec, id: u64) -> Result<Cable, String> {
        spec.validate()?;
        let n = spec.segments as usize;
        let (a, b) = (Vec3::from_array(spec.from), Vec3::from_array(spec.to));
        let x: Vec<Vec3> = match &spec.points {
            Some(p) => p.iter().map(|q| Vec3::from_array(*q)).collect(),
            None => (0..=n).map(|i| a.lerp(b, i as f32 / n as f32)).collect(),
        };
        let particle_mass = spec.mass / (n + 1) as f32;
        let mut w = vec![1.0 / particle_mass; n + 1];
        for &p in &spec.pinned {
            w[p as usize] = 0.0;
        }
        let v0 = Vec3::from_array(spec.linear_velocity);
        let v = w
            .iter()
            .enumerate()
            .map(|(i, &wi)| match &spec.velocities {
                _ if wi == 0.0 => Vec3::ZERO,
                Some(vs) => Vec3::from_array(vs[i]),
                None => v0,
            })
            .collect();
        Ok(Cable {
            id,
            spec: spec.clone(),
            x,
            v,
            w,
            rest: (b - a).length() / n as f32,
            particle_mass,
            sleeping: false,
            sleep_time: 0.0,
        })
    }

    pub fn segments(&self) -> usize {
        self.x.len() - 1
    }

    /// The radius its contacts keep (at least [`MIN_THICKNESS`]).
    pub fn collision_radius(&self) -> f32 {
        self.spec.radius.max(MIN_THICKNESS as f32)
    }

    /// Awake, its rest starting again.
    pub fn wake(&mut self) {
        self.sleeping = false;
        self.sleep_time = 0.0;
    }

    /// How fast its particles move apart, in rest lengths a second: the
    /// diagonal of the box of their velocities (a pinned one's is zero)
    /// over the rest length. A chain solve is exact only along its links
    /// as a pass begins: where a cable bends, a part swung sideways by
    /// many rest lengths in a substep is pulled back about one link a
    /// pass, so a pinned cable thrown sideways at 30 m/s stretched to 1.3
    /// times its length with 4 substeps of 4 passes, and kept it within 3%
    /// with 8 ([`swing_substeps`]). The links' own turn rates at the step's
    /// start do not bound that: once the first step has bent the cable
    /// near its pin, its neighbours move alike, and the bend runs along it
    /// within the next step.
    pub fn swing_rate(&self) -> f32 {
        let (lo, hi) = self.v.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(lo, hi), v| (lo.min(*v), hi.max(*v)),
        );
        (hi - lo).length() / self.rest
    }

    /// Current length along the particles.
    pub fn length(&self) -> f32 {
        self.x.windows(2).map(|p| (p[1] - p[0]).length()).sum()
    }

    pub fn state(&self) -> CableState {
        CableState {
            id: self.id,
            points: self.x.iter().map(|p| p.to_array()).collect(),
        }
    }

    pub fn to_spec(&self) -> CableSpec {
        let mut s = self.spec.clone();
        s.id = Some(self.id);
        s.points = Some(self.x.iter().map(|p| p.to_array()).collect());
        s.velocities = Some(self.v.iter().map(|v| v.to_array()).collect());
        s.sleeping = Some(self.sleeping);
        s
    }

    /// Kinetic plus gravitational potential energy (J), for tests.
    pub fn energy(&self, gravity: Vec3) -> f32 {
        self.x
            .iter()
            .zip(&self.v)
            .zip(&self.w)
            .filter(|(_, &w)| w > 0.0)
            .map(|((x, v), _)| {
                0.5 * self.particle_mass * v.length_squared() - self.particle_mass * gravity.dot(*x)
            })
            .sum()
    }
}
