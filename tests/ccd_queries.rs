//! Runs the CCD routines over every file of the shared query set with exact
//! ground truth and requires zero false negatives on each.

use std::path::{Path, PathBuf};

use arbiter::physics::ccd_queries::run_file_report;

/// `../shared/ccd-queries` next to the repository (as in CI), else the
/// machine-wide copy. Missing data fails the test: a silent pass would hide
/// that nothing was checked.
fn query_dir() -> PathBuf {
    let candidates = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/ccd-queries"),
        PathBuf::from("/work/shared/ccd-queries"),
    ];
    candidates
        .iter()
        .find(|p| p.is_dir())
        .cloned()
        .unwrap_or_else(|| panic!("CCD query set not found; looked in {candidates:?}"))
}

fn csv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            csv_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "csv") {
            out.push(p);
        }
    }
}

#[test]
fn no_false_negatives_on_the_query_set() {
    let dir = query_dir();
    let mut files = Vec::new();
    csv_files(&dir, &mut files);
    assert!(!files.is_empty(), "no .csv files under {}", dir.display());

    let mut failures = Vec::new();
    // (queries, false positives) per group: erleben-* / unit-tests, by kind.
    let mut totals = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for path in &files {
        let report = run_file_report(path, false).unwrap_or_else(|e| panic!("{e}"));
        println!("{report}");
        let fneg = report
            .false_negatives
            .expect("the shared files carry the truth column");
        let fpos = report.false_positives.unwrap_or(0);
        if fneg != 0 {
            failures.push(format!("{}: {fneg} false negatives", path.display()));
        }
        let group = if path.to_string_lossy().contains("unit-tests") {
            "unit-tests"
        } else {
            "erleben"
        };
        let entry = totals
            .entry(format!("{group} {}", report.kind.as_str()))
            .or_default();
        entry.0 += report.queries();
        entry.1 += fpos;
    }
    for (group, (queries, fpos)) in &totals {
        println!("{group}: {queries} queries, {fpos} false positives");
    }
    assert!(
        failures.is_empty(),
        "false negatives:\n{}",
        failures.join("\n")
    );
}
