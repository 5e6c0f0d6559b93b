//! `arbiter simulate`: run a scene headless.

use crate::physics::{ContactEvent, Scene, World};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Most steps one run accepts.
pub const MAX_STEPS: u64 = 100_000_000;

#[derive(Serialize)]
struct LineBody {
    id: u64,
    p: [f32; 3],
    q: [f32; 4],
    v: [f32; 3],
    w: [f32; 3],
    sleeping: bool,
}

#[derive(Serialize)]
struct Line<'a> {
    step: u64,
    time: f64,
    bodies: Vec<LineBody>,
    contacts: &'a [ContactEvent],
    cables: Vec<crate::physics::cable::CableState>,
}

/// Loads a scene file; errors are one line and name the file.
pub fn load_scene(path: &Path) -> Result<Scene, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Scene::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `steps` steps of the scene at `path`. With `every = Some(K)` writes one
/// JSON line to `out` every K steps (and one for the initial state); the final
/// scene goes to `output` if given, else to `out` when `every` is None.
pub fn run(
    path: &Path,
    steps: u64,
    output: Option<&Path>,
    every: Option<u64>,
    out: &mut dyn Write,
) -> Result<(), String> {
    if steps > MAX_STEPS {
        return Err(format!("--steps must be at most {MAX_STEPS}"));
    }
    if every == Some(0) {
        return Err("--every must be at least 1".into());
    }
    let scene = load_scene(path)?;
    let mut world = World::from_scene(&scene).map_err(|e| format!("{}: {e}", path.display()))?;
    let io = |e: std::io::Error| format!("cannot write output: {e}");
    let mut events: Vec<ContactEvent> = Vec::new();
    if every.is_some() {
        write_line(&world, 0, &events, out).map_err(io)?;
    }
    for s in 1..=steps {
        world.step();
        if let Some(fault) = world.fault() {
            return Err(format!("{}: step {s}: {fault}", path.display()));
        }
        if let Some(k) = every {
            events.extend_from_slice(world.contact_events());
            if s % k == 0 {
                write_line(&world, s, &events, out).map_err(io)?;
                events.clear();
            }
        }
    }
    let snapshot = world.snapshot();
    let text = serde_json::to_string_pretty(&snapshot).map_err(|e| e.to_string())?;
    match output {
        Some(p) => std::fs::write(p, text + "\n").map_err(|e| format!("{}: {e}", p.display()))?,
        None if every.is_none() => writeln!(out, "{text}").map_err(io)?,
        None => {}
    }
    // (The last lines may still be buffered: a full disk or a closed pipe
    // shows only here, and exited 0 before.)
    out.flush().map_err(io)
}

fn write_line(
    world: &World,
    step: u64,
    contacts: &[ContactEvent],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let bodies = world
        .bodies()
        .filter(|b| !b.is_static())
        .map(|b| LineBody {
            id: b.id,
            p: b.pose.position.to_array(),
            q: b.pose.rotation.to_array(),
            v: b.linear_velocity.to_array(),
            w: b.angular_velocity.to_array(),
            sleeping: b.sleeping,
        })
        .collect();
    let line = Line {
        step,
        time: world.time(),
        bodies,
        contacts,
        cables: world.cables().iter().map(|c| c.state()).collect(),
    };
    serde_json::to_writer(&mut *out, &line)?;
    out.write_all(b"\n")
}
