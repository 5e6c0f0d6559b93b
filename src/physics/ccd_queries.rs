//! Runs the CCD routines of [`super::collision::ccd_cubic`] over query files
//! in the format of the shared CCD benchmark (`../shared/ccd-queries`), for
//! `arbiter ccd-queries`.
//!
//! A file holds 8 rows per query, one point per row:
//! `x_num,x_den,y_num,y_den,z_num,z_den[,truth]`. Edge–edge rows are
//! `a0, a1, b0, b1` at t = 0 then the same at t = 1; vertex–face rows are
//! `p, f0, f1, f2` at t = 0 then at t = 1. Each coordinate is `num / den`;
//! when `den` is a power of two and `|num| ≤ 2^53` (true of the benchmark)
//! the value is exactly an `f64`, otherwise it is rounded to the nearest `f64`
//! and the routines answer for the rounded points. The truth column (0 or 1,
//! the same on all 8 rows) is optional, but all rows of a file must agree on
//! whether it is there.

use std::fmt;
use std::path::Path;
use std::time::Instant;

use glam::DVec3;

use super::collision::ccd_cubic::{EdgeEdgeQuery, VertexFaceQuery};

/// Which primitive pair a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    EdgeEdge,
    VertexFace,
}

impl QueryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryKind::EdgeEdge => "edge-edge",
            QueryKind::VertexFace => "vertex-face",
        }
    }

    /// Reads the kind from a path: the deepest path component that names one
    /// (`edge-edge` or `ee`, `vertex-face` or `vf`, also as a `_`/`-`/`.`
    /// separated word of a file name such as `ee_0.csv`) decides.
    pub fn from_path(path: &Path) -> Result<QueryKind, String> {
        let components: Vec<String> = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
            .collect();
        for comp in components.iter().rev() {
            let ee = comp.contains("edge-edge") || comp.contains("edge_edge");
            let vf = comp.contains("vertex-face") || comp.contains("vertex_face");
            let words: Vec<&str> = comp.split(['-', '_', '.']).collect();
            let ee = ee || words.contains(&"ee");
            let vf = vf || words.contains(&"vf");
            match (ee, vf) {
                (true, false) => return Ok(QueryKind::EdgeEdge),
                (false, true) => return Ok(QueryKind::VertexFace),
                (true, true) => {
                    return Err(format!(
                        "{}: path names both edge-edge and vertex-face",
                        path.display()
                    ))
                }
                (false, false) => {}
            }
        }
        Err(format!(
            "{}: cannot tell the query kind from the path (expected edge-edge/ee or vertex-face/vf in it)",
            path.display()
        ))
    }
}

/// One query: the four points at t = 0, the four at t = 1, and the exact
/// answer when the file has it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Query {
    pub start: [DVec3; 4],
    pub end: [DVec3; 4],
    pub truth: Option<bool>,
}

/// The contents of a query file.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryFile {
    pub kind: QueryKind,
    pub queries: Vec<Query>,
    /// Whether the file has the truth column.
    pub has_truth: bool,
}

fn parse_integer(field: &str, line: usize, col: usize, path: &Path) -> Result<i128, String> {
    let f = field.trim();
    let digits = f.strip_prefix(['-', '+']).unwrap_or(f);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{}:{line}: column {col}: {f:?} is not an integer",
            path.display()
        ));
    }
    f.parse::<i128>().map_err(|_| {
        format!(
            "{}:{line}: column {col}: integer {f} is out of range",
            path.display()
        )
    })
}

/// Parses the text of a query file of the given kind. `path` is only used in
/// error messages, which are one line each.
pub fn parse_queries(text: &str, kind: QueryKind, path: &Path) -> Result<QueryFile, String> {
    let mut rows: Vec<(DVec3, Option<bool>, usize)> = Vec::new();
    let mut columns: Option<usize> = None;
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        let fields: Vec<&str> = trimmed.split(',').collect();
        let n = fields.len();
        if n != 6 && n != 7 {
            return Err(format!(
                "{}:{line}: expected 6 or 7 comma-separated columns, found {n}",
                path.display()
            ));
        }
        match columns {
            None => columns = Some(n),
            Some(c) if c != n => {
                return Err(format!(
                    "{}:{line}: {n} columns, but earlier rows have {c}",
                    path.display()
                ))
            }
            Some(_) => {}
        }
        let mut xyz = [0.0f64; 3];
        for (k, v) in xyz.iter_mut().enumerate() {
            let num = parse_integer(fields[2 * k], line, 2 * k + 1, path)?;
            let den = parse_integer(fields[2 * k + 1], line, 2 * k + 2, path)?;
            if den == 0 {
                return Err(format!(
                    "{}:{line}: column {}: zero denominator",
                    path.display(),
                    2 * k + 2
                ));
            }
            // Exact for the benchmark (|num| < 2^53, den a power of two);
            // otherwise the division rounds to nearest.
            *v = num as f64 / den as f64;
        }
        let truth = if n == 7 {
            match parse_integer(fields[6], line, 7, path)? {
                0 => Some(false),
                1 => Some(true),
                other => {
                    return Err(format!(
                        "{}:{line}: column 7: truth must be 0 or 1, found {other}",
                        path.display()
                    ))
                }
            }
        } else {
            None
        };
        rows.push((DVec3::from_array(xyz), truth, line));
    }
    if !rows.len().is_multiple_of(8) {
        return Err(format!(
            "{}: {} point rows is not a multiple of 8 (8 rows per query)",
            path.display(),
            rows.len()
        ));
    }
    let mut queries = Vec::with_capacity(rows.len() / 8);
    for chunk in rows.chunks_exact(8) {
        let truth = chunk[0].1;
        if let Some(bad) = chunk.iter().find(|r| r.1 != truth) {
            return Err(format!(
                "{}:{}: truth value differs from the first row of its query (line {})",
                path.display(),
                bad.2,
                chunk[0].2
            ));
        }
        queries.push(Query {
            start: [chunk[0].0, chunk[1].0, chunk[2].0, chunk[3].0],
            end: [chunk[4].0, chunk[5].0, chunk[6].0, chunk[7].0],
            truth,
        });
    }
    Ok(QueryFile {
        kind,
        queries,
        has_truth: columns == Some(7),
    })
}

/// Reads and parses a query file; the kind comes from the path.
pub fn load_file(path: &Path) -> Result<QueryFile, String> {
    let kind = QueryKind::from_path(path)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse_queries(&text, kind, path)
}

/// Runs the CCD routine of the file's kind on one query.
#[inline]
pub fn run_query(kind: QueryKind, q: &Query) -> Option<f64> {
    match kind {
        QueryKind::EdgeEdge => EdgeEdgeQuery::new(q.start, q.end).toi(),
        QueryKind::VertexFace => VertexFaceQuery::new(q.start, q.end).toi(),
    }
}

/// The outcome of running one file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileReport {
    pub path: String,
    pub kind: QueryKind,
    /// Per query, the reported time of impact (`None`: no contact).
    pub results: Vec<Option<f64>>,
    pub hits: usize,
    /// `None` when the file has no truth column.
    pub false_negatives: Option<usize>,
    pub false_positives: Option<usize>,
    /// Wall-clock time of the CCD calls (parsing excluded) per query.
    pub ns_per_query: f64,
    /// Whether `Display` also prints the `i hit toi` lines.
    pub per_query: bool,
}

impl FileReport {
    pub fn queries(&self) -> usize {
        self.results.len()
    }
}

impl fmt::Display for FileReport {
    /// The summary line of DESIGN.md, then, with `per_query`, one
    /// `i hit toi` line per query (`i` from 0, `hit` 0 or 1, `toi` `-` for
    /// no hit).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: Option<usize>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
        write!(
            f,
            "file={} kind={} queries={} hits={} false_negatives={} false_positives={} ns_per_query={:.0}",
            self.path,
            self.kind.as_str(),
            self.queries(),
            self.hits,
            opt(self.false_negatives),
            opt(self.false_positives),
            self.ns_per_query
        )?;
        if self.per_query {
            for (i, r) in self.results.iter().enumerate() {
                match r {
                    Some(t) => write!(f, "\n{i} 1 {t}")?,
                    None => write!(f, "\n{i} 0 -")?,
                }
            }
        }
        Ok(())
    }
}

/// Runs every query of a parsed file, timing the CCD calls.
pub fn run_queries(file: &QueryFile, path: &str, per_query: bool) -> FileReport {
    let mut results = Vec::with_capacity(file.queries.len());
    let start = Instant::now();
    for q in &file.queries {
        results.push(run_query(file.kind, q));
    }
    let elapsed = start.elapsed();
    let n = file.queries.len();
    let ns_per_query = if n == 0 {
        0.0
    } else {
        elapsed.as_nanos() as f64 / n as f64
    };
    let hits = results.iter().filter(|r| r.is_some()).count();
    let (false_negatives, false_positives) = if file.has_truth {
        let mut fneg = 0;
        let mut fpos = 0;
        for (q, r) in file.queries.iter().zip(&results) {
            match (q.truth, r.is_some()) {
                (Some(true), false) => fneg += 1,
                (Some(false), true) => fpos += 1,
                _ => {}
            }
        }
        (Some(fneg), Some(fpos))
    } else {
        (None, None)
    };
    FileReport {
        path: path.to_string(),
        kind: file.kind,
        results,
        hits,
        false_negatives,
        false_positives,
        ns_per_query,
        per_query,
    }
}

/// Loads and runs one file, returning its report.
pub fn run_file_report(path: &Path, per_query: bool) -> Result<FileReport, String> {
    let file = load_file(path)?;
    Ok(run_queries(&file, &path.display().to_string(), per_query))
}

/// Loads and runs one file and returns the output lines of
/// `arbiter ccd-queries` for it (no trailing newline), or a one-line error.
pub fn run_file(path: &Path, per_query: bool) -> Result<String, String> {
    run_file_report(path, per_query).map(|r| r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A scratch file under a per-test directory whose name carries the
    /// kind; the directory is removed when the value is dropped.
    struct Scratch {
        root: PathBuf,
        path: PathBuf,
    }

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    fn write(test: &str, kind_dir: &str, text: &str) -> Scratch {
        let root = std::env::temp_dir().join(format!("arbiter-ccd-{}-{test}", std::process::id()));
        let dir = root.join(kind_dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("data.csv");
        std::fs::write(&path, text).unwrap();
        Scratch { root, path }
    }

    /// One vertex–face query: the vertex (x = y = 1/4) goes from height 1 to
    /// `end_z` over the unit triangle in z = 0.
    fn vf_query(end_z: &str, truth: Option<u8>) -> String {
        let rows = [
            "1,4,1,4,1,1".to_string(),
            "0,1,0,1,0,1".into(),
            "1,1,0,1,0,1".into(),
            "0,1,1,1,0,1".into(),
            format!("1,4,1,4,{end_z}"),
            "0,1,0,1,0,1".into(),
            "1,1,0,1,0,1".into(),
            "0,1,1,1,0,1".into(),
        ];
        rows.iter()
            .map(|r| match truth {
                Some(t) => format!("{r},{t}\n"),
                None => format!("{r}\n"),
            })
            .collect()
    }

    /// Drops through the triangle at t = 1/2.
    fn vf_hit(truth: Option<u8>) -> String {
        vf_query("-1,1", truth)
    }

    #[test]
    fn kind_from_path() {
        let k = |p: &str| QueryKind::from_path(Path::new(p));
        assert_eq!(k("a/edge-edge/data_0_0.csv"), Ok(QueryKind::EdgeEdge));
        assert_eq!(k("a/vertex-face/data_0_0.csv"), Ok(QueryKind::VertexFace));
        assert_eq!(k("queries/ee_1.csv"), Ok(QueryKind::EdgeEdge));
        assert_eq!(k("queries/vf/1.csv"), Ok(QueryKind::VertexFace));
        // The deepest component decides.
        assert_eq!(k("vertex-face/edge-edge/x.csv"), Ok(QueryKind::EdgeEdge));
        assert!(k("queries/data.csv")
            .unwrap_err()
            .contains("cannot tell the query kind"));
        // "free" contains "ee" but not as a word.
        assert!(k("free/data.csv").is_err());
    }

    #[test]
    fn runs_a_file_with_truth() {
        // A hit, then a vertex that stops at height 1/2: a miss.
        let text = vf_hit(Some(1)) + &vf_query("1,2", Some(0));
        let path = write("truth", "vertex-face", &text);
        let report = run_file_report(&path, true).unwrap();
        assert_eq!(report.queries(), 2);
        assert_eq!(report.hits, 1);
        assert_eq!(report.false_negatives, Some(0));
        assert_eq!(report.false_positives, Some(0));
        let out = report.to_string();
        let mut lines = out.lines();
        let head = lines.next().unwrap();
        assert!(head.starts_with(&format!("file={} kind=vertex-face queries=2 hits=1 false_negatives=0 false_positives=0 ns_per_query=", path.display())), "{head}");
        assert!(head.rsplit('=').next().unwrap().parse::<f64>().is_ok());
        let first: Vec<&str> = lines.next().unwrap().split(' ').collect();
        assert_eq!(first[..2], ["0", "1"]);
        let toi: f64 = first[2].parse().unwrap();
        assert!(toi <= 0.5 && toi > 0.5 - 1e-9);
        assert_eq!(lines.next(), Some("1 0 -"));
        assert_eq!(lines.next(), None);
        // Without --per-query: only the summary line.
        assert_eq!(run_file(&path, false).unwrap().lines().count(), 1);
    }

    #[test]
    fn six_columns_have_no_truth() {
        let path = write("six", "vf", &vf_hit(None));
        let out = run_file(&path, false).unwrap();
        assert!(
            out.contains("queries=1 hits=1 false_negatives=- false_positives=- ns_per_query="),
            "{out}"
        );
    }

    #[test]
    fn counts_false_negatives_and_positives() {
        // The query hits; labelled 0 it is a false positive.
        let path = write("fp", "vertex-face", &vf_hit(Some(0)));
        let r = run_file_report(&path, false).unwrap();
        assert_eq!((r.false_negatives, r.false_positives), (Some(0), Some(1)));
    }

    #[test]
    fn errors_are_one_line_messages() {
        let check = |name: &str, text: &str, needle: &str| {
            let path = write(name, "edge-edge", text);
            let err = run_file(&path, false).unwrap_err();
            assert!(err.contains(needle), "{name}: {err}");
            assert!(!err.contains('\n'), "{name}: {err}");
        };
        let good = vf_hit(Some(1));
        check(
            "cols",
            &good.replacen("1,4,1,4,1,1,1", "1,4,1,4,1,1", 1),
            "columns",
        );
        check("fivecols", "1,1,1,1,1\n", "expected 6 or 7");
        check(
            "nonint",
            &good.replacen("1,4,1,4,1,1,1", "1,4,x,4,1,1,1", 1),
            "not an integer",
        );
        check(
            "float",
            &good.replacen("1,4,1,4,1,1,1", "1,4,1.5,4,1,1,1", 1),
            "not an integer",
        );
        check(
            "zeroden",
            &good.replacen("1,4,1,4,1,1,1", "1,0,1,4,1,1,1", 1),
            "zero denominator",
        );
        check(
            "rows",
            &good
                .lines()
                .take(7)
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            "not a multiple of 8",
        );
        check(
            "truth",
            &good.replacen("0,1,0,1,0,1,1", "0,1,0,1,0,1,2", 1),
            "truth must be 0 or 1",
        );
        check(
            "mixed",
            &good.replacen("0,1,0,1,0,1,1", "0,1,0,1,0,1,0", 1),
            "truth value differs",
        );
        check(
            "huge",
            &good.replacen(
                "1,4,1,4,1,1,1",
                "1,4,1,4,999999999999999999999999999999999999999999,1,1",
                1,
            ),
            "out of range",
        );
        let missing = std::env::temp_dir().join("arbiter-no-such-dir/edge-edge/none.csv");
        assert!(run_file(&missing, false)
            .unwrap_err()
            .contains("cannot read"));
        let unknown = write("kind", "other", &good);
        assert!(run_file(&unknown, false)
            .unwrap_err()
            .contains("query kind"));
    }

    #[test]
    fn empty_file_has_no_queries() {
        let path = write("empty", "ee", "\n");
        let out = run_file(&path, false).unwrap();
        assert!(out.contains("kind=edge-edge queries=0 hits=0 false_negatives=- false_positives=- ns_per_query=0"), "{out}");
    }
}
