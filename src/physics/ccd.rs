//! Continuous collision in the step (pipeline stage 5).
//!
//! After the solver has moved every awake body, the bodies that could have
//! tunnelled — those marked `ccd`, and any body whose points moved more than
//! `motion_fraction` of its thickness in the step — are swept from their
//! start to their end pose against everything their swept box overlapped.
//! Impacts are found by conservative advancement (translation and rotation,
//! [`crate::physics::collision::toi`]) and handled in time order in a priority
//! queue: advance both bodies to the impact, apply an impulse that respects
//! restitution and friction, continue with the remaining time along the new
//! velocities, and recompute the affected bodies' next impacts. Each body gets
//! at most `max_impacts_per_body` impacts per step; a body that uses them all
//! is stopped at its last impact pose for the rest of the step, so even a
//! pathological case neither stalls the tick nor tunnels.
//!
//! Impacts the solver already handled are skipped: when the swept path does
//! not move the bodies into each other at the time of impact, there is
//! nothing to do. When the path does but the solved velocities already
//! separate, the bodies stop at the impact and go on with those velocities.

use super::collision::toi::{time_of_impact, Sweep, Toi, ToiSettings};
use super::collision::{contact_manifold, Manifold, PairCache};
use super::math::{Pose, Quat, Vec3};
use super::shape::{Plane, Shape, ShapeKind};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// Continuous-collision settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcdSettings {
    pub enabled: bool,
    /// A body counts as fast when its points move more than this fraction of
    /// its thickness in a step.
    pub motion_fraction: f32,
    /// Most impacts handled per body per step.
    pub max_impacts_per_body: u32,
    pub toi: ToiSettings,
}

impl Default for CcdSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            motion_fraction: 0.5,
            max_impacts_per_body: 4,
            toi: ToiSettings::default(),
        }
    }
}

/// Counters of the last CCD pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CcdStats {
    pub swept_bodies: u32,
    /// Events taken from the queue (impacts, stale and resumed searches,
    /// deepening checks): the pass's work.
    pub events: u32,
    pub toi_queries: u32,
    pub impacts: u32,
    pub stopped_bodies: u32,
}

/// One body as the CCD pass sees it.
#[derive(Clone, Debug)]
pub(crate) struct CcdBody<'a> {
    pub shape: &'a Shape,
    pub sweep: Sweep,
    /// Largest distance from the centre of mass to the surface.
    pub rho: f32,
    pub inv_mass: f32,
    /// Inverse inertia in the body's local frame (rotated to each impact).
    pub inv_inertia_local: glam::Mat3,
    pub v: Vec3,
    pub w: Vec3,
    pub friction: f32,
    pub restitution: f32,
    /// Static bodies and planes never move.
    pub movable: bool,
    pub candidate: bool,
    /// Time (fraction of the step) up to which this body's motion is final.
    pub t: f32,
    pub version: u32,
    pub impacts: u32,
    /// The sweep or velocity changed: write the body back.
    pub changed: bool,
}

/// What the pass remembers per pair during one step.
#[derive(Default)]
struct Pairs {
    /// Pairs the solver already handled (not approaching at their impact).
    settled: HashSet<(u32, u32)>,
    /// Impacts per pair so far: each one halves the pair's target distance,
    /// so bodies just pushed apart are not found touching again at once,
    /// while a body that bounces back later in the step is still caught.
    hits: HashMap<(u32, u32), u32>,
    /// Where conservative advancement stopped short of a contact (out of
    /// iterations): the search resumes there, a bounded number of times.
    resume: HashMap<(u32, u32), (f32, u32)>,
}

/// Most times one pair's search resumes in a step.
const MAX_RESUMES: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    /// Time bits (non-negative f32 order like their bits).
    t: u32,
    a: u32,
    b: u32,
    version_a: u32,
    version_b: u32,
}

/// An impact the pass resolved: the two bodies (dense indices), the
/// normal impulse it gave them, and where and along which normal (from `a`
/// to `b`) they met.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Impact {
    pub a: u32,
    pub b: u32,
    pub impulse: f32,
    pub point: Vec3,
    pub normal: Vec3,
}

/// Runs the CCD pass over `bodies` (dense), with `neighbours[i]` the indices
/// of the bodies body i may touch this step. `dt` is the step length. The
/// impacts it resolves are appended to `impacts`.
pub(crate) fn solve_impacts(
    bodies: &mut [CcdBody],
    neighbours: &[Vec<u32>],
    dt: f32,
    settings: &CcdSettings,
    restitution_threshold: f32,
    impacts: &mut Vec<Impact>,
) -> CcdStats {
    let mut stats = CcdStats::default();
    let mut heap = BinaryHeap::new();
    let mut pairs = Pairs::default();
    for i in 0..bodies.len() {
        if bodies[i].candidate {
            stats.swept_bodies += 1;
            if let Some(e) = next_impact(bodies, neighbours, i as u32, &pairs, settings, &mut stats)
            {
                heap.push(Reverse(e));
            }
        }
    }
    while let Some(Reverse(e)) = heap.pop() {
        stats.events += 1;
        let (ia, ib) = (e.a as usize, e.b as usize);
        if bodies[ia].version != e.version_a || bodies[ib].version != e.version_b {
            // Stale: one of the bodies changed its path since; search again.
            if let Some(n) = next_impact(bodies, neighbours, e.a, &pairs, settings, &mut stats) {
                heap.push(Reverse(n));
            }
            continue;
        }
        let t = f32::from_bits(e.t);
        // The contact geometry at the impact time.
        let reach = 2.0 * (settings.toi.target + settings.toi.tolerance);
        let Some(manifold) = contact_at(&bodies[ia], &bodies[ib], t, reach) else {
            // Advancement stopped short (out of iterations): resume there.
            let r = pairs.resume.entry(key(e.a, e.b)).or_insert((0.0, 0));
            r.1 += 1;
            if r.1 > MAX_RESUMES || t <= r.0 {
                pairs.settled.insert(key(e.a, e.b));
            } else {
                r.0 = t;
            }
            if let Some(n) = next_impact(bodies, neighbours, e.a, &pairs, settings, &mut stats) {
                heap.push(Reverse(n));
            }
            continue;
        };
        let resolved = resolve(bodies, ia, ib, t, &manifold, dt, restitution_threshold);
        if let Some(impulse) = resolved {
            let deepest = manifold.deepest().map_or(Vec3::ZERO, |p| p.point());
            impacts.push(Impact {
                a: e.a,
                b: e.b,
                impulse,
                point: deepest,
                normal: manifold.normal,
            });
        } else {
            // Not approaching where they touch now. Another part may still
            // swing through later in the step (a body pivoting on this
            // contact): look for the overlap deepening; else the pair is done.
            let later = deepening(&bodies[ia], &bodies[ib], t + 1.0e-4).filter(|&t2| t2 > t);
            if let Some(t2) = later {
                heap.push(Reverse(Event {
                    t: t2.to_bits(),
                    ..e
                }));
                continue;
            }
            pairs.settled.insert(key(e.a, e.b));
            if let Some(n) = next_impact(bodies, neighbours, e.a, &pairs, settings, &mut stats) {
                heap.push(Reverse(n));
            }
            continue;
        }
        stats.impacts += 1;
        *pairs.hits.entry(key(e.a, e.b)).or_insert(0) += 1;
        for i in [ia, ib] {
            if !bodies[i].movable {
                continue;
            }
            bodies[i].impacts += 1;
            if bodies[i].impacts >= settings.max_impacts_per_body {
                // Out of budget: stay at this pose for the rest of the step.
                let pose = bodies[i].sweep.pose_at(t);
                bodies[i].sweep = Sweep {
                    com: pose.transform_point(bodies[i].sweep.local_center),
                    rotation: pose.rotation,
                    local_center: bodies[i].sweep.local_center,
                    dx: Vec3::ZERO,
                    dtheta: Vec3::ZERO,
                };
                bodies[i].candidate = false;
                stats.stopped_bodies += 1;
            }
        }
        for i in [e.a, e.b] {
            if bodies[i as usize].candidate {
                if let Some(n) = next_impact(bodies, neighbours, i, &pairs, settings, &mut stats) {
                    heap.push(Reverse(n));
                }
            }
        }
    }
    stats
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// The earliest impact of body `i` with any neighbour from its current time.
fn next_impact(
    bodies: &[CcdBody],
    neighbours: &[Vec<u32>],
    i: u32,
    pairs: &Pairs,
    settings: &CcdSettings,
    stats: &mut CcdStats,
) -> Option<Event> {
    let a = &bodies[i as usize];
    let mut best: Option<Event> = None;
    for &j in &neighbours[i as usize] {
        if pairs.settled.contains(&key(i, j)) {
            continue;
        }
        let b = &bodies[j as usize];
        let t0 =
            a.t.max(b.t)
                .max(pairs.resume.get(&key(i, j)).map_or(0.0, |r| r.0));
        stats.toi_queries += 1;
        let mut toi_settings = settings.toi;
        let n_hits = pairs.hits.get(&key(i, j)).copied().unwrap_or(0);
        toi_settings.target *= 0.5f32.powi(n_hits as i32);
        toi_settings.tolerance *= 0.5f32.powi(n_hits as i32);
        let toi = match (&a.shape.kind, &b.shape.kind) {
            (_, ShapeKind::Plane(p)) => {
                match plane_toi(a, p, b.sweep.pose_at(0.0), t0, &toi_settings) {
                    PlaneToi::Hit(t) => Some(t),
                    PlaneToi::Touching => deepening(a, b, t0),
                    PlaneToi::Miss => None,
                }
            }
            (ShapeKind::Plane(_), _) => None,
            _ => match time_of_impact(
                a.shape,
                &a.sweep,
                a.rho,
                b.shape,
                &b.sweep,
                b.rho,
                t0,
                &toi_settings,
            ) {
                // Within the target distance as the step begins, and moving
                // too little to pass through the other: as touching (see
                // `plane_toi`). A body that could go through (a bullet
                // resting on a thin wall, fired) stays an impact there: the
                // deepening check sees no overlap once it is through.
                Toi::Hit { t, .. } if t0 == 0.0 && t <= 0.0 && !could_pass(a, b) => {
                    deepening(a, b, t0)
                }
                Toi::Hit { t, .. } => Some(t),
                Toi::Overlapping => deepening(a, b, t0),
                Toi::Miss => None,
            },
        };
        if let Some(t) = toi {
            let e = Event {
                t: t.max(0.0).to_bits(),
                a: i,
                b: j,
                version_a: a.version,
                version_b: b.version,
            };
            if best.is_none_or(|b| e < b) {
                best = Some(e);
            }
        }
    }
    best
}

/// Whether `a` and `b` move, relative to each other over the step, by as
/// much as half the thinner's thickness (a bound: translation and each
/// one's turn times its reach).
fn could_pass(a: &CcdBody, b: &CcdBody) -> bool {
    let moved = (a.sweep.dx - b.sweep.dx).length()
        + a.sweep.dtheta.length() * a.rho
        + b.sweep.dtheta.length() * b.rho;
    moved >= 0.5 * a.shape.thickness().min(b.shape.thickness())
}

/// Bodies that already touch at `t0` cannot be advanced by distance; but a
/// body pivoting on a contact can still swing the rest of itself through the
/// other. So when they overlap at the end of the step by more than a small
/// allowance, and by more than at `t0`, bisect for the first time the overlap
/// passes half the allowance (if it is past that at `t0`: grows [`DEEPER`]
/// of the allowance, at least [`MIN_DEEPER`], deeper than there) and treat
/// that as the impact.
///
/// An overlap that is no deeper at the end than at `t0` is not deepening
/// (bodies spawned into each other that the solver is pushing apart): without
/// that test such a pair, once deeper than half the allowance, had its
/// bisection stay at `t0`, and when its path did not go into the contact it
/// was queued again at t + 1e-4, and again, on past the end of the step
/// (hundreds of thousands of events, 17 manifolds each, per pair). Nothing
/// is found from `t0 >= 1`, the end of the step.
fn deepening(a: &CcdBody, b: &CcdBody, t0: f32) -> Option<f32> {
    if t0 >= 1.0 {
        return None;
    }
    let allowed = (0.25 * a.shape.thickness().min(b.shape.thickness())).min(0.02);
    let depth = |t: f32| {
        let (pa, pb) = (a.sweep.pose_at(t), b.sweep.pose_at(t));
        let mut cache = PairCache::default();
        contact_manifold(a.shape, &pa, b.shape, &pb, 0.0, &mut cache).map_or(0.0, |m| {
            m.points().iter().map(|p| -p.separation).fold(0.0, f32::max)
        })
    };
    // The depth it must pass: half the allowance, or, where the overlap is
    // already past that at `t0`, a little deeper than it is there.
    let start = depth(t0);
    let target = if start < 0.5 * allowed {
        0.5 * allowed
    } else {
        start + (DEEPER * allowed).max(MIN_DEEPER)
    };
    let end = depth(1.0);
    if end <= allowed || end <= target {
        return None;
    }
    let (mut lo, mut hi) = (t0, 1.0f32);
    for _ in 0..16 {
        let mid = 0.5 * (lo + hi);
        if depth(mid) > target {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(lo)
}

/// How much deeper than at `t0` ([`deepening`]), as a fraction of the
/// allowance, an overlap already past half the allowance must grow to be
/// looked at again. The first passing of half the allowance, taken before,
/// lay behind `t0`, so the bisection stayed there and a pair pivoting on a
/// contact that is not approaching (a cone tipping over another) was
/// looked at again every 10⁻⁴ of the step: four cones of the demo world
/// took 3,964 events and 150 ms in one step, 1,000 thin boxes spinning
/// onto a floor up to 5 s. Half the allowance deeper let a spinning plank
/// 5.1 cm into a 10 cm wall (1.2 cm before); a sixteenth, 2.5 cm; a
/// hundredth, 1.6 cm (`tests/ccd.rs`).
const DEEPER: f32 = 0.01;

/// The least growth (m) of such an overlap looked at again ([`DEEPER`]
/// of the allowance is 5 µm for a plate 2 mm thick, whose allowance is a
/// quarter of it: thousands of looks for one pivoting deep into another).
const MIN_DEEPER: f32 = 1.0e-4;

enum PlaneToi {
    Hit(f32),
    Touching,
    Miss,
}

/// Conservative advancement of a body against a static half-space.
fn plane_toi(a: &CcdBody, plane: &Plane, plane_pose: Pose, t0: f32, s: &ToiSettings) -> PlaneToi {
    let pl = plane.to_world(&plane_pose);
    let n = pl.normal;
    let spin = a.sweep.dtheta.length() * a.rho;
    let mu = -a.sweep.dx.dot(n) + spin;
    let mut t = t0;
    for _ in 0..s.max_iterations {
        let pose = a.sweep.pose_at(t);
        let d = pl.distance(a.shape.support_world(&pose, -n));
        // Touching, or within the target distance as the step begins: the
        // discrete contact holds it (it is within its reach), and only an
        // overlap that deepens is an impact. Stopped there instead, a body
        // that an impact had left at the target distance was stopped there
        // again each step, and slept 5 mm above the ground with no contact
        // (a reviewer's `ccd: true` sphere and box).
        if t == t0 && (d <= 0.0 || (t0 == 0.0 && d <= s.target + s.tolerance)) {
            return PlaneToi::Touching;
        }
        if d <= s.target + s.tolerance {
            return PlaneToi::Hit(t);
        }
        if mu <= 0.0 {
            return PlaneToi::Miss;
        }
        t += (d - s.target) / mu;
        if t > 1.0 {
            return PlaneToi::Miss;
        }
    }
    PlaneToi::Hit(t)
}

/// The contact manifold of two bodies at time t (all its points, so an edge
/// or a face landing flat gets a balanced impulse rather than a one-corner
/// kick that would set a thin body spinning about its long axis).
fn contact_at(a: &CcdBody, b: &CcdBody, t: f32, reach: f32) -> Option<Manifold> {
    let (pa, pb) = (a.sweep.pose_at(t), b.sweep.pose_at(t));
    let mut cache = PairCache::default();
    contact_manifold(a.shape, &pa, b.shape, &pb, reach, &mut cache).filter(|m| m.count > 0)
}

/// Applies the impact impulses at time t and re-plans both sweeps from t.
/// Returns the total normal impulse, or `None` when the swept path does not
/// go into the contact.
#[allow(clippy::too_many_arguments)]
fn resolve(
    bodies: &mut [CcdBody],
    ia: usize,
    ib: usize,
    t: f32,
    m: &Manifold,
    dt: f32,
    restitution_threshold: f32,
) -> Option<f32> {
    let (a, b) = (&bodies[ia], &bodies[ib]);
    let com_a = a.sweep.com + a.sweep.dx * t;
    let com_b = b.sweep.com + b.sweep.dx * t;
    let n = m.normal;
    // Does the swept path go into the contact at any point? (The sweep runs
    // from the start to the end pose of the step; the solver may already have
    // changed the velocities, but the path is what would penetrate.)
    let approaching_path = m.points().iter().any(|p| {
        let (ra, rb) = (p.point_a - com_a, p.point_b - com_b);
        let path =
            (b.sweep.dx + b.sweep.dtheta.cross(rb)) - (a.sweep.dx + a.sweep.dtheta.cross(ra));
        path.dot(n) < -1.0e-6
    });
    if !approaching_path {
        return None;
    }
    // Inverse inertia in world space at the impact pose.
    let world_inertia = |x: &CcdBody| {
        let r = glam::Mat3::from_quat(x.sweep.pose_at(t).rotation);
        r * x.inv_inertia_local * r.transpose()
    };
    let (ia_w, ib_w) = (world_inertia(a), world_inertia(b));
    let (ma, mb) = (a.inv_mass, b.inv_mass);
    let mu = (a.friction * b.friction).sqrt();
    let e_pair = a.restitution.max(b.restitution);
    let (mut va, mut wa, mut vb, mut wb) = (a.v, a.w, b.v, b.w);
    // A few sequential-impulse sweeps over the manifold points: normal
    // impulses reach the restitution target, friction stays in the cone.
    let count = m.count;
    let mut ra = [Vec3::ZERO; 4];
    let mut rb = [Vec3::ZERO; 4];
    let mut target = [0.0f32; 4];
    let mut kn = [0.0f32; 4];
    let mut acc = [0.0f32; 4];
    let mut acc_t = [Vec3::ZERO; 4];
    let k = |r_a: Vec3, r_b: Vec3, d: Vec3| {
        let (x, y) = (r_a.cross(d), r_b.cross(d));
        ma + mb + x.dot(ia_w * x) + y.dot(ib_w * y)
    };
    for (i, p) in m.points().iter().enumerate() {
        ra[i] = p.point_a - com_a;
        rb[i] = p.point_b - com_b;
        let vn = ((vb + wb.cross(rb[i])) - (va + wa.cross(ra[i]))).dot(n);
        let e = if -vn > restitution_threshold {
            e_pair
        } else {
            0.0
        };
        target[i] = if vn < 0.0 { -e * vn } else { 0.0 };
        kn[i] = k(ra[i], rb[i], n);
    }
    for _ in 0..8 {
        for i in 0..count {
            if kn[i] <= 0.0 {
                continue;
            }
            let vrel = (vb + wb.cross(rb[i])) - (va + wa.cross(ra[i]));
            let vn = vrel.dot(n);
            let new = (acc[i] + (target[i] - vn) / kn[i]).max(0.0);
            let dj = new - acc[i];
            acc[i] = new;
            let mut imp = n * dj;
            // Friction against the sliding at this point.
            let vt = vrel - n * vrel.dot(n);
            let vt_len = vt.length();
            if vt_len > 1.0e-6 {
                let tdir = vt / vt_len;
                let kt = k(ra[i], rb[i], tdir);
                if kt > 0.0 {
                    let want = acc_t[i] - tdir * (vt_len / kt);
                    let max = mu * acc[i];
                    let clamped = if want.length() > max {
                        want.normalize_or_zero() * max
                    } else {
                        want
                    };
                    imp += clamped - acc_t[i];
                    acc_t[i] = clamped;
                }
            }
            va -= imp * ma;
            wa -= ia_w * ra[i].cross(imp);
            vb += imp * mb;
            wb += ib_w * rb[i].cross(imp);
        }
    }
    for (i, v, w) in [(ia, va, wa), (ib, vb, wb)] {
        let body = &mut bodies[i];
        if !body.movable {
            continue;
        }
        body.v = v;
        body.w = w;
        replan(body, t, dt);
    }
    Some(acc[..count].iter().sum())
}

/// Sets the body's sweep to continue from its pose at t with its velocity.
fn replan(body: &mut CcdBody, t: f32, dt: f32) {
    let pose = body.sweep.pose_at(t);
    let com_t = pose.transform_point(body.sweep.local_center);
    let dtheta = body.w * dt;
    body.sweep = Sweep {
        com: com_t - body.v * dt * t,
        rotation: (Quat::from_scaled_axis(-dtheta * t) * pose.rotation).normalize(),
        local_center: body.sweep.local_center,
        dx: body.v * dt,
        dtheta,
    };
    body.t = t;
    body.version += 1;
    body.changed = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit-mass body at `com` moving by `dx` over the step (1/60 s).
    fn swept_body(shape: &Shape, com: Vec3, dx: Vec3) -> CcdBody<'_> {
        CcdBody {
            shape,
            sweep: Sweep {
                com,
                rotation: Quat::IDENTITY,
                local_center: Vec3::ZERO,
                dx,
                dtheta: Vec3::ZERO,
            },
            rho: shape.bounding_radius(),
            inv_mass: 1.0,
            inv_inertia_local: glam::Mat3::IDENTITY,
            v: dx * 60.0,
            w: Vec3::ZERO,
            friction: 0.5,
            restitution: 0.0,
            movable: true,
            candidate: true,
            t: 0.0,
            version: 0,
            impacts: 0,
            changed: false,
        }
    }

    /// Unit spheres `gap` apart at t = 0 (negative: overlapping), the second
    /// moving by `dx` along the line of centres; the allowance is 0.02 m.
    fn pair(shape: &Shape, gap: f32, dx: f32) -> (CcdBody<'_>, CcdBody<'_>) {
        (
            swept_body(shape, Vec3::ZERO, Vec3::ZERO),
            swept_body(
                shape,
                Vec3::new(2.0 + gap, 0.0, 0.0),
                Vec3::new(dx, 0.0, 0.0),
            ),
        )
    }

    #[test]
    fn a_touching_pair_that_swings_in_is_found_at_half_the_allowance() {
        let shape = Shape::sphere(1.0);
        // Touching, in by 0.1 m over the step: 0.01 m deep at t = 0.1.
        let (a, b) = pair(&shape, 0.0, -0.1);
        let t = deepening(&a, &b, 0.0).expect("the overlap deepens");
        assert!((t - 0.1).abs() < 1.0e-3, "t = {t}");
        // In by less than the allowance: nothing to do.
        let (a, b) = pair(&shape, 0.0, -0.015);
        assert_eq!(deepening(&a, &b, 0.0), None);
    }

    #[test]
    fn a_deep_overlap_that_does_not_grow_is_not_deepening() {
        let shape = Shape::sphere(1.0);
        // 0.5 m deep, kept or pushed apart: deeper than the allowance at
        // the end, but not deepening (this was an impact at t0, for ever).
        for dx in [0.3, 0.0] {
            let (a, b) = pair(&shape, -0.5, dx);
            assert_eq!(deepening(&a, &b, 1.0e-4), None, "dx {dx}");
        }
        // 0.5 m deep and going in (0.1 m over the step): deepening, where it
        // is a hundredth of the allowance (0.2 mm) deeper, 0.002 later.
        let (a, b) = pair(&shape, -0.5, -0.1);
        let t = deepening(&a, &b, 1.0e-4).expect("the overlap deepens");
        assert!((t - 2.1e-3).abs() < 1.0e-4, "t = {t}");
        // From the end of the step or past it there is nothing to find.
        assert_eq!(deepening(&a, &b, 1.0), None);
        assert_eq!(deepening(&a, &b, 1.5), None);
    }

    /// The fuzzer's case: a tetrahedron and a sphere spawned at one point,
    /// the solver pushing them apart. The pass used to re-queue the pair
    /// 1e-4 later ~180,000 times (2 s); now a few events.
    #[test]
    fn bodies_spawned_into_each_other_and_separating_take_a_few_events() {
        let hull = Shape::convex_hull(&[Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z]).unwrap();
        let sphere = Shape::sphere(1.0);
        for dx in [0.005, 0.05, 0.5] {
            let mut bodies = [
                swept_body(&hull, Vec3::ZERO, Vec3::new(-dx, 0.0, 0.0)),
                swept_body(&sphere, Vec3::ZERO, Vec3::new(dx, 0.0, 0.0)),
            ];
            let neighbours = [vec![1], vec![0]];
            let stats = solve_impacts(
                &mut bodies,
                &neighbours,
                1.0 / 60.0,
                &CcdSettings::default(),
                1.0,
                &mut Vec::new(),
            );
            assert!(stats.events <= 4, "dx {dx}: {stats:?}");
            for b in &bodies {
                let p = b.sweep.pose_at(1.0);
                assert!(p.position.is_finite() && b.v.is_finite() && b.w.is_finite());
            }
        }
    }
}
