//! Cables thrown fast across a pinned line without gravity, every substep
//! audited by brute force.

mod common;

use arbiter::physics::cable::CableSpec;
use arbiter::physics::{Vec3, World, WorldSettings};

/// Throw `n` of series `series`: a line of 60 segments pinned at both ends
/// and 3–6 cables (4–39 segments, 0.3–1.5 m, 0–2 cm thick, 0.2–2.2 kg, one
/// stiffness of 10⁵–10⁷ N/m for all) thrown at it at 5–45 m/s, without
/// gravity, the audit on. Its kinetic energy at the throw.
fn throw(series: u64, n: u64) -> (World, f32) {
    let mut seed = series * 1000 + n;
    let r = |s: &mut u64| common::lcg(s);
    let mut w = common::world(Vec3::ZERO);
    w.settings.cable_audit = true;
    let stiffness = 10f32.powf(5.0 + 2.0 * r(&mut seed));
    let mut line = CableSpec::new([-1.1, 1.0, 0.0], [1.1, 1.0, 0.0], 60);
    line.pinned = vec![0, 60];
    line.radius = [0.0, 0.005, 0.02][(r(&mut seed) * 3.0) as usize % 3];
    line.stiffness = stiffness;
    w.add_cable(&line).unwrap();
    let mut energy = 0.0;
    for j in 0..3 + (r(&mut seed) * 4.0) as usize {
        let z = -0.6 - 0.1 * j as f32;
        let (x0, y0) = (-0.8 + 1.6 * r(&mut seed), 0.6 + 0.8 * r(&mut seed));
        let (len, a) = (
            0.3 + 1.2 * r(&mut seed),
            std::f32::consts::TAU * r(&mut seed),
        );
        let segments = 4 + (r(&mut seed) * 36.0) as u32;
        let to = [
            x0 + len * a.cos(),
            y0 + len * a.sin(),
            z + 0.05 * r(&mut seed),
        ];
        let mut c = CableSpec::new([x0, y0, z], to, segments);
        c.radius = [0.0, 0.005, 0.02][(r(&mut seed) * 3.0) as usize % 3];
        c.stiffness = stiffness;
        c.mass = 0.2 + 2.0 * r(&mut seed);
        let speed = 5.0 + 40.0 * r(&mut seed);
        let v = [
            speed * 0.3 * (r(&mut seed) - 0.5),
            speed * 0.3 * (r(&mut seed) - 0.5),
            speed,
        ];
        c.linear_velocity = v;
        w.add_cable(&c).unwrap();
        energy += 0.5 * c.mass * Vec3::from(v).length_squared();
    }
    (w, energy)
}

/// Twelve throws (among them one whose pair the exact edge–edge CCD called
/// touching while its segments stayed 1.8 mm apart, see `ccd_cubic`: the
/// audit, which asks the same query, counted two crossings there): in one
/// second, no two centre lines touch at any substep, by brute force over
/// every pair of segments, and the kinetic energy never exceeds the
/// throw's. Twice: with the world's four substeps in every step, where the
/// fail-safe holds particles in most throws (3,690 in all) and its pull
/// brings their neighbours back; and as a world steps them, with more
/// substeps where the cables' particles move apart fast, which leaves the
/// fail-safe little to do (16 held in all).
#[test]
fn cables_thrown_across_a_pinned_line_never_cross() {
    for factor in [1, WorldSettings::default().cable_substep_factor] {
        let mut frozen = 0;
        for n in 16..28 {
            let (mut w, energy) = throw(2, n);
            w.settings.cable_substep_factor = factor;
            for step in 0..60 {
                w.step();
                let s = w.cable_stats;
                frozen += s.frozen;
                assert_eq!(s.audit_crossings, 0, "throw {n}, step {step}: {s:?}");
                let kinetic: f32 = w
                    .cables()
                    .iter()
                    .map(|c| {
                        c.v.iter()
                            .map(|v| 0.5 * c.particle_mass * v.length_squared())
                            .sum::<f32>()
                    })
                    .sum();
                assert!(
                    kinetic <= 1.01 * energy,
                    "throw {n}, step {step}: kinetic energy {kinetic} J, thrown with {energy}"
                );
            }
        }
        if factor == 1 {
            assert!(
                frozen > 1000,
                "the fail-safe acted: {frozen} particles held"
            );
        }
    }
}

/// Two free cables of 1 kg (40 segments over 2 m) meeting without gravity,
/// one thrown at `speed` across the other at rest at `angle` degrees, 40
/// steps, audited: the least share of the throw's momentum (along the
/// throw) the two keep at a step's end, the greatest kinetic energy over
/// the throw's, and the particles the fail-safe held.
fn meet(speed: f32, radius: f32, angle: f32) -> (f32, f32, u64) {
    let mut w = common::world(Vec3::ZERO);
    w.settings.cable_audit = true;
    let mut thrown = CableSpec::new([-1.0, 0.0, -0.3], [1.0, 0.0, -0.3], 40);
    thrown.radius = radius;
    thrown.linear_velocity = [0.0, 0.0, speed];
    let t = angle.to_radians();
    let mut still = CableSpec::new([-t.cos(), -t.sin(), 0.0], [t.cos(), t.sin(), 0.0], 40);
    still.radius = radius;
    w.add_cable(&thrown).unwrap();
    w.add_cable(&still).unwrap();
    let (p0, e0) = (speed, 0.5 * speed * speed);
    let (mut kept, mut most, mut held) = (f32::MAX, 0.0f32, 0);
    for step in 0..40 {
        w.step();
        let s = w.cable_stats;
        assert_eq!(s.audit_crossings, 0, "{speed} m/s at {angle}°, step {step}");
        held += s.frozen;
        let (mut p, mut e) = (0.0, 0.0);
        for c in w.cables() {
            for v in &c.v {
                p += c.particle_mass * v.z;
                e += 0.5 * c.particle_mass * v.length_squared();
            }
        }
        kept = kept.min(p / p0);
        most = most.max(e / e0);
    }
    (kept, most, held)
}

/// Threads (and cables 1.5 mm thick) meeting at 20–30 m/s, across and at
/// 30° and 10°: the fail-safe holds particles in most meetings, and it
/// moves each stopped pair's particles on together by their mean
/// displacement (`cable/solver/holds.rs`), so the two keep at least 90%
/// of the throw's momentum (95–100% measured; 82–100% with the substeps'
/// bound at 4 rest lengths; what goes is the pull of the cables back onto
/// the held particles) and their kinetic energy never rises. Held where the substep began, as before, they kept as
/// little as −5% of it (the thrown thread stopped dead in one step) and
/// 18 of 24 such meetings held particles.
#[test]
fn threads_meeting_fast_keep_their_momentum() {
    let mut held = 0;
    for radius in [0.0, 0.0015] {
        for speed in [20.0, 25.0, 30.0] {
            for angle in [90.0, 30.0, 10.0] {
                let (kept, most, h) = meet(speed, radius, angle);
                held += h;
                let case = format!(
                    "{speed} m/s at {angle}°, radius {radius}: momentum kept {kept}, \
                     kinetic energy {most} of the throw's, {h} held"
                );
                assert!(kept >= 0.9, "{case}");
                assert!(most <= 1.0 + 1.0e-4, "{case}");
            }
        }
    }
    assert!(
        held > 0,
        "the fail-safe held nothing: the test does not test it"
    );
}
