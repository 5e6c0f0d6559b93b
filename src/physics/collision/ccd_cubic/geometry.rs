//! The two primitive pairs' geometry for the search (see
//! [`super::PairGeometry`]): a vertex against a triangle, and two edges.

use super::*;

pub(super) struct VertexFace;

impl PairGeometry for VertexFace {
    const GAPS: usize = 3;
    const DIRECTIONS: usize = 13;

    fn gap_pairs() -> &'static [(usize, usize)] {
        // p − f_i: along a separating direction the vertex is beyond (or
        // below) every corner.
        &[(0, 1), (0, 2), (0, 3)]
    }

    #[inline]
    fn suggest(x: &[DVec3; 4]) -> Suggestion {
        let (c, feature) = closest_point_on_triangle(x[0], [x[1], x[2], x[3]]);
        let primary = match feature {
            TriangleFeature::Face => 0,
            TriangleFeature::Edge(i, _) => 1 + i,
            TriangleFeature::Vertex(i) => 4 + i,
        };
        let diff = x[0] - c;
        Suggestion {
            primary,
            diff,
            distance: diff.length(),
        }
    }

    /// 0: face normal; 1–3: perpendiculars from edges f0f1, f1f2, f2f0
    /// towards p; 4–6: p − f_i; 7–9: edge × velocity of p relative to the
    /// edge's first corner; 10–12: perpendicular from the path of p
    /// (relative to f_i) to f_i.
    #[inline]
    fn direction(x: &[DVec3; 4], v: &[DVec3; 4], k: usize) -> DVec3 {
        const EDGES: [(usize, usize); 3] = [(1, 2), (2, 3), (3, 1)];
        match k {
            0 => (x[2] - x[1]).cross(x[3] - x[1]),
            1..=3 => {
                let (i, j) = EDGES[k - 1];
                perpendicular_towards(x[j] - x[i], x[i], x[0])
            }
            4..=6 => x[0] - x[k - 3],
            7..=9 => {
                let (i, j) = EDGES[k - 7];
                (x[j] - x[i]).cross(v[0] - v[i])
            }
            _ => perpendicular_towards(v[0] - v[k - 9], x[0], x[k - 9]),
        }
    }

    fn direction_dd(x: &[dd::Dd3; 4], v: &[dd::Dd3; 4], k: usize) -> dd::Dd3 {
        const EDGES: [(usize, usize); 3] = [(1, 2), (2, 3), (3, 1)];
        match k {
            0 => x[2].sub(x[1]).cross(x[3].sub(x[1])),
            1..=3 => {
                let (i, j) = EDGES[k - 1];
                let e = x[j].sub(x[i]);
                e.cross(x[0].sub(x[i])).cross(e)
            }
            4..=6 => x[0].sub(x[k - 3]),
            7..=9 => {
                let (i, j) = EDGES[k - 7];
                x[j].sub(x[i]).cross(v[0].sub(v[i]))
            }
            _ => {
                let w = v[0].sub(v[k - 9]);
                w.cross(x[k - 9].sub(x[0])).cross(w)
            }
        }
    }

    fn clear_interior(x: &[DVec3; 4]) -> bool {
        let (p, f0) = (x[0], x[1]);
        let (e1, e2, w) = (x[2] - f0, x[3] - f0, p - f0);
        let n = e1.cross(e2);
        let nn = n.length_squared();
        if !is_positive(nn) {
            return false;
        }
        let wb = w.cross(e2).dot(n) / nn;
        let wc = e1.cross(w).dot(n) / nn;
        wb >= CLEAR_MARGIN && wc >= CLEAR_MARGIN && 1.0 - wb - wc >= CLEAR_MARGIN
    }
}

pub(super) struct EdgeEdge;

impl PairGeometry for EdgeEdge {
    const GAPS: usize = 4;
    const DIRECTIONS: usize = 17;

    fn gap_pairs() -> &'static [(usize, usize)] {
        // b_j − a_i: along a separating direction every point of b is beyond
        // (or below) every point of a.
        &[(2, 0), (3, 0), (2, 1), (3, 1)]
    }

    #[inline]
    fn suggest(x: &[DVec3; 4]) -> Suggestion {
        let c = closest_points_segment_segment(x[0], x[1], x[2], x[3]);
        let interior = |s: f64| s > 0.0 && s < 1.0;
        let end = |s: f64| usize::from(s >= 1.0);
        let primary = match (interior(c.s), interior(c.t)) {
            (true, true) => 0,
            (false, true) => 1 + end(c.s),
            (true, false) => 3 + end(c.t),
            (false, false) => 5 + end(c.t) + 2 * end(c.s),
        };
        Suggestion {
            primary,
            diff: c.point_b - c.point_a,
            distance: c.distance_squared.sqrt(),
        }
    }

    /// 0: ea × eb; 1–2: perpendiculars from line b towards a0, a1; 3–4: from
    /// line a towards b0, b1; 5–8: b_j − a_i in the order of the gaps;
    /// 9–10: eb × velocity of a0, a1 relative to b0; 11–12: ea × velocity of
    /// b0, b1 relative to a0; 13–16: perpendicular from the path of b_j
    /// (relative to a_i) to a_i, in the order of the gaps.
    #[inline]
    fn direction(x: &[DVec3; 4], v: &[DVec3; 4], k: usize) -> DVec3 {
        let (ea, eb) = (x[1] - x[0], x[3] - x[2]);
        match k {
            0 => ea.cross(eb),
            1 | 2 => perpendicular_towards(eb, x[2], x[k - 1]),
            3 | 4 => perpendicular_towards(ea, x[0], x[k - 1]),
            5..=8 => x[2 + (k - 5) % 2] - x[(k - 5) / 2],
            9 | 10 => eb.cross(v[k - 9] - v[2]),
            11 | 12 => ea.cross(v[k - 9] - v[0]),
            _ => {
                let (i, j) = ((k - 13) / 2, 2 + (k - 13) % 2);
                perpendicular_towards(v[j] - v[i], x[j], x[i])
            }
        }
    }

    fn direction_dd(x: &[dd::Dd3; 4], v: &[dd::Dd3; 4], k: usize) -> dd::Dd3 {
        let (ea, eb) = (x[1].sub(x[0]), x[3].sub(x[2]));
        match k {
            0 => ea.cross(eb),
            1 | 2 => eb.cross(x[k - 1].sub(x[2])).cross(eb),
            3 | 4 => ea.cross(x[k - 1].sub(x[0])).cross(ea),
            5..=8 => x[2 + (k - 5) % 2].sub(x[(k - 5) / 2]),
            9 | 10 => eb.cross(v[k - 9].sub(v[2])),
            11 | 12 => ea.cross(v[k - 9].sub(v[0])),
            _ => {
                let (i, j) = ((k - 13) / 2, 2 + (k - 13) % 2);
                let w = v[j].sub(v[i]);
                w.cross(x[i].sub(x[j])).cross(w)
            }
        }
    }

    fn clear_interior(x: &[DVec3; 4]) -> bool {
        let (ea, eb) = (x[1] - x[0], x[3] - x[2]);
        let inside = |s: f64| (CLEAR_MARGIN..=1.0 - CLEAR_MARGIN).contains(&s);
        let c = closest_points_segment_segment(x[0], x[1], x[2], x[3]);
        inside(c.s)
            && inside(c.t)
            && ea.cross(eb).length_squared()
                > CLEAR_MARGIN * CLEAR_MARGIN * ea.length_squared() * eb.length_squared()
    }
}
