//! `arbiter simulate` through the real binary.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
}

fn scene(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arbiter-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn simulate_writes_the_final_scene() {
    let out = tmp("final.json");
    let st = bin()
        .args([
            "simulate",
            scene("drop.json").to_str().unwrap(),
            "--steps",
            "240",
            "--output",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["world"]["tick"], 240);
    let bodies = v["bodies"].as_array().unwrap();
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[1]["id"], 2);
    // The ball rests on the plane after 4 s: its centre is one radius up.
    let y = bodies[1]["position"][1].as_f64().unwrap();
    assert!((y - 0.5).abs() < 0.01, "ball at y={y}");
    // The final scene is itself a valid scene.
    let st = bin()
        .args(["simulate", out.to_str().unwrap(), "--steps", "1"])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
}

#[test]
fn simulate_every_prints_lines_with_contacts() {
    let o = bin()
        .args([
            "simulate",
            scene("drop.json").to_str().unwrap(),
            "--steps",
            "120",
            "--every",
            "10",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 13, "initial line + 12");
    assert_eq!(lines[0]["step"], 0);
    assert_eq!(lines[12]["step"], 120);
    assert_eq!(
        lines[0]["bodies"].as_array().unwrap().len(),
        2,
        "static bodies are not listed"
    );
    let begins: usize = lines
        .iter()
        .map(|l| {
            l["contacts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["kind"] == "begin")
                .count()
        })
        .sum();
    assert!(begins >= 1, "the ball lands within 2 s");
}

#[test]
fn bad_scenes_fail_with_one_line() {
    let cases = [
        ("{ not json", "invalid scene JSON"),
        // serde reads a struct from an array too: `[]` ran an empty scene.
        ("[]", "a scene is an object"),
        (
            r#"{"bodies":[[null,"dynamic",{"type":"sphere","radius":1}]]}"#,
            "each of bodies must be an object",
        ),
        (
            r#"{"bodies":[{"shape":{"type":"sphere","radius":0}}]}"#,
            "radius",
        ),
        (
            r#"{"bodies":[{"shape":{"type":"plane","normal":[0,1,0]}}]}"#,
            "plane",
        ),
        (
            r#"{"bodies":[{"shape":{"type":"torus","radius":1}}]}"#,
            "torus",
        ),
        (
            r#"{"bodies":[{"shape":{"type":"sphere","radius":1},"position":[0,1e300,0]}]}"#,
            "position",
        ),
        (
            r#"{"bodies":[{"shape":{"type":"convex_hull","points":[[0,0,0],[0,0,0],[0,0,0],[0,0,0]]}}]}"#,
            "hull",
        ),
        (
            r#"{"cables":[{"from":[0,5,0],"to":[0,5,0.001],"segments":100000}]}"#,
            "overlap",
        ),
        // Points all at one place (the cable hung in the air for good).
        (
            r#"{"cables":[{"from":[0,1,0],"to":[1,1,0],"segments":2,"points":[[0,1,0],[0,1,0],[0,1,0]]}]}"#,
            "coincide",
        ),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let p = tmp(&format!("bad{i}.json"));
        std::fs::write(&p, text).unwrap();
        let o = bin()
            .args(["simulate", p.to_str().unwrap(), "--steps", "10"])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{text} should fail");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.contains(needle), "{err} should mention {needle}");
        assert!(!err.contains("panicked"));
    }
    let o = bin()
        .args(["simulate", "/nonexistent.json", "--steps", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
}

/// A scene whose bodies meet at speed, past the pairs a step may handle
/// (`tests/limits.rs`): `simulate` stops at that step with one line naming
/// the file and the step, and a non-zero exit.
#[test]
fn a_step_past_the_limit_fails_with_one_line() {
    let scene = arbiter::physics::Scene {
        world: serde_json::from_str(r#"{"gravity": [0, 0, 0]}"#).unwrap(),
        bodies: common::converging_spheres(2100),
        cables: Vec::new(),
    };
    let p = tmp("converging.json");
    std::fs::write(&p, serde_json::to_string(&scene).unwrap()).unwrap();
    let o = bin()
        .args(["simulate", p.to_str().unwrap(), "--steps", "10"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("step 3: limit: "), "{err}");
    assert!(!err.contains("panicked"));
}

fn ccd_data() -> PathBuf {
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/ccd-queries");
    if local.exists() {
        local
    } else {
        PathBuf::from("/work/shared/ccd-queries")
    }
}

#[test]
fn ccd_queries_prints_one_line_per_file_and_per_query_with_flag() {
    let ee = ccd_data().join("unit-tests/edge-edge/data_0_0.csv");
    let vf = ccd_data().join("unit-tests/vertex-face/data_0_0.csv");
    assert!(
        ee.exists(),
        "the shared CCD query set is needed: {}",
        ee.display()
    );
    let o = bin()
        .args(["ccd-queries"])
        .arg(&ee)
        .arg(&vf)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].contains("kind=edge-edge queries=54 "),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("kind=vertex-face queries=125 "),
        "{}",
        lines[1]
    );
    for l in &lines {
        assert!(l.contains("false_negatives=0 "), "{l}");
        assert!(l.contains("ns_per_query="), "{l}");
    }
    let o = bin()
        .args(["ccd-queries", "--per-query"])
        .arg(&ee)
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    // One summary line plus one "i hit toi" line per query.
    assert_eq!(text.lines().count(), 55, "{text}");
    let bad = tmp("nothing-here.csv");
    std::fs::write(&bad, "1,2,3\n").unwrap();
    let o = bin().args(["ccd-queries"]).arg(&bad).output().unwrap();
    assert!(!o.status.success());
    assert_eq!(
        String::from_utf8(o.stderr)
            .unwrap()
            .trim_end()
            .lines()
            .count(),
        1
    );
}

#[test]
fn serve_with_a_bad_scene_exits_with_one_line() {
    let p = tmp("bad-serve.json");
    std::fs::write(&p, r#"{"bodies":[{"shape":{"type":"sphere","radius":0}}]}"#).unwrap();
    let o = bin()
        .args(["serve", "--addr", "127.0.0.1:0", "--scene"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with("arbiter:") && last.contains("radius"),
        "{err}"
    );
}

/// Bad flags get one line and exit 2 (clap's message ran to a usage
/// block); `--help` still prints the usage and exits 0.
#[test]
fn bad_flags_fail_with_one_line() {
    let drop = scene("drop.json");
    let drop = drop.to_str().unwrap();
    for (args, says) in [
        (
            vec!["simulate", drop, "--steps", "-1"],
            "unexpected argument '-1' found",
        ),
        (
            vec!["simulate", drop, "--steps", "abc"],
            "invalid value 'abc' for '--steps <STEPS>'",
        ),
        (vec!["--bogus"], "unexpected argument '--bogus' found"),
        (
            vec!["simulate"],
            "the following required arguments were not provided: --steps <STEPS> <SCENE>",
        ),
    ] {
        let o = bin().args(&args).output().unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("arbiter: {says}")),
            "{args:?}: {err}"
        );
    }
    let help = bin().args(["simulate", "--help"]).output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8(help.stdout).unwrap().contains("Usage: "));
}

/// `serve --max-bodies` holds for every world, not only those made over
/// REST: the demo or a `--scene` world past it stops the server at start
/// with one line (both ran with 61 bodies under `--max-bodies 2`, a
/// reviewer's case).
#[test]
fn serve_refuses_the_demo_or_a_scene_past_max_bodies() {
    let p = tmp("seventy-bodies.json");
    let spheres: Vec<String> = (0..70)
        .map(|k| format!(r#"{{"shape":{{"type":"sphere","radius":0.4}},"position":[{k},0,0]}}"#))
        .collect();
    std::fs::write(&p, format!(r#"{{"bodies":[{}]}}"#, spheres.join(","))).unwrap();
    let path = p.display().to_string();
    for (max, expect) in [
        (
            "2",
            "the demo world: too many bodies for one world: 61, at most 2".to_string(),
        ),
        (
            "65",
            format!("{path}: too many bodies for one world: 70, at most 65"),
        ),
    ] {
        let o = bin()
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--max-bodies",
                max,
                "--scene",
            ])
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8(o.stderr).unwrap();
        let last = err.trim_end().lines().last().unwrap_or("");
        assert_eq!(last, format!("arbiter: {expect}"), "{err}");
    }
}

/// Output that cannot be written (a full disk: `/dev/full`) fails with one
/// line and a non-zero exit, whether it is the final scene, the `--every`
/// lines or the CCD queries' report: the buffered last write was never
/// checked, and `simulate` exited 0 (a reviewer's case).
#[test]
fn output_that_cannot_be_written_fails_with_one_line() {
    let full = std::path::Path::new("/dev/full");
    if !full.exists() {
        return;
    }
    let drop = scene("drop.json");
    let drop = drop.to_str().unwrap();
    let data = ccd_data().join("unit-tests/edge-edge/data_0_0.csv");
    let mut runs: Vec<Vec<&str>> = vec![
        vec!["simulate", drop, "--steps", "5"],
        vec!["simulate", drop, "--steps", "5", "--every", "1"],
    ];
    if data.exists() {
        runs.push(vec!["ccd-queries", data.to_str().unwrap()]);
    }
    for args in runs {
        let out = bin()
            .args(&args)
            .stdout(std::fs::File::create(full).unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("cannot write output"), "{args:?}: {err}");
    }
}
