use super::*;
use crate::physics::math::{Pose, Quat};
use crate::physics::shape::Cuboid;
use FeatureKind::{Edge, Face, Vertex};

fn feature(points: &[Vec3], ids: &[u8], face: u8) -> SupportFeature {
    let mut f = SupportFeature {
        face,
        ..Default::default()
    };
    for (p, i) in points.iter().zip(ids) {
        f.push(*p, *i);
    }
    f
}

fn top_face(half: f32) -> SupportFeature {
    Cuboid {
        half_extents: Vec3::new(half, 0.5, half),
    }
    .face_feature(&Pose::IDENTITY, 2)
}

fn kinds(id: FeatureId) -> (u32, u32) {
    (id.0 >> 24, (id.0 >> 8) & 0xff)
}

#[test]
fn point_on_face_sphere_on_box() {
    let face = top_face(1.0);
    let centre = feature(&[Vec3::new(0.3, 0.9, 0.2)], &[0], 0);
    let m = clip_features(&face, &centre, Vec3::Y, 0.0, 0.5, 0.0);
    assert_eq!(m.count, 1);
    let p = m.points[0];
    assert!((p.separation + 0.1).abs() < 1e-6);
    assert!(p.point_a.abs_diff_eq(Vec3::new(0.3, 0.5, 0.2), 1e-6));
    assert!(p.point_b.abs_diff_eq(Vec3::new(0.3, 0.4, 0.2), 1e-6));
    assert_eq!(p.id, FeatureId::new(Face, 2, Vertex, 0));
    // The same contact seen from the sphere.
    let m2 = clip_features(&centre, &face, -Vec3::Y, 0.5, 0.0, 0.0);
    assert_eq!(m2.count, 1);
    assert!((m2.points[0].separation + 0.1).abs() < 1e-6);
    assert!(m2.points[0].point_a.abs_diff_eq(p.point_b, 1e-6));
    assert_eq!(m2.points[0].id, p.id.swapped());
}

#[test]
fn point_beside_the_face_falls_back_to_the_closest_pair() {
    let face = top_face(1.0);
    let centre = feature(&[Vec3::new(1.2, 0.6, 0.0)], &[0], 0);
    let m = clip_features(&face, &centre, Vec3::Y, 0.0, 0.3, 0.1);
    assert_eq!(m.count, 1);
    let p = m.points[0];
    // Closest point of the face: on its +x edge.
    assert!((p.point_a - Vec3::new(1.0, 0.5, 0.0)).length() < 1e-6);
    assert!((p.separation - (0.1 - 0.3)).abs() < 1e-6);
    assert_eq!(kinds(p.id), (Edge as u32, Vertex as u32));
}

#[test]
fn capsule_lying_over_the_edge_of_a_box() {
    let face = top_face(1.0);
    let seg = feature(
        &[Vec3::new(0.5, 0.6, 0.0), Vec3::new(1.5, 0.6, 0.0)],
        &[0, 1],
        0,
    );
    let m = clip_features(&face, &seg, Vec3::Y, 0.0, 0.15, 0.0);
    assert_eq!(m.count, 2);
    let mut xs: Vec<f32> = m.points().iter().map(|p| p.point_a.x).collect();
    xs.sort_by(f32::total_cmp);
    assert!((xs[0] - 0.5).abs() < 1e-6 && (xs[1] - 1.0).abs() < 1e-6);
    for p in m.points() {
        assert!((p.separation + 0.05).abs() < 1e-6);
        assert!((p.point_a.y - 0.5).abs() < 1e-6 && (p.point_b.y - 0.45).abs() < 1e-6);
    }
    let mut k: Vec<(u32, u32)> = m.points().iter().map(|p| kinds(p.id)).collect();
    k.sort();
    assert_eq!(
        k,
        vec![(Edge as u32, Edge as u32), (Face as u32, Vertex as u32)]
    );
}

#[test]
fn parallel_capsules_clip_to_their_overlap() {
    let a = feature(&[Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0)], &[0, 1], 7);
    let b = feature(
        &[Vec3::new(1.0, 0.5, 0.0), Vec3::new(3.0, 0.5, 0.0)],
        &[0, 1],
        9,
    );
    let m = clip_features(&a, &b, Vec3::Y, 0.3, 0.3, 0.0);
    assert_eq!(m.count, 2);
    let mut pts: Vec<(f32, FeatureId)> = m.points().iter().map(|p| (p.point_a.x, p.id)).collect();
    pts.sort_by(|x, y| x.0.total_cmp(&y.0));
    assert!((pts[0].0 - 1.0).abs() < 1e-6 && (pts[1].0 - 2.0).abs() < 1e-6);
    // B's end point over A's edge; A's end point under B's edge.
    assert_eq!(pts[0].1, FeatureId::new(Edge, 7, Vertex, 0));
    assert_eq!(pts[1].1, FeatureId::new(Vertex, 1, Edge, 9));
    for p in m.points() {
        assert!((p.separation + 0.1).abs() < 1e-6);
        assert!((p.point_a.y - 0.3).abs() < 1e-6 && (p.point_b.y - 0.2).abs() < 1e-6);
    }
}

#[test]
fn crossing_segments_meet_at_one_point() {
    let a = feature(
        &[Vec3::new(-1.0, 0.0, 0.2), Vec3::new(1.0, 0.0, 0.2)],
        &[0, 1],
        3,
    );
    let b = feature(
        &[Vec3::new(0.5, 0.3, -1.0), Vec3::new(0.5, 0.3, 1.0)],
        &[0, 1],
        4,
    );
    let m = clip_features(&a, &b, Vec3::Y, 0.2, 0.2, 0.0);
    assert_eq!(m.count, 1);
    let p = m.points[0];
    assert!(p.point_a.abs_diff_eq(Vec3::new(0.5, 0.2, 0.2), 1e-6));
    assert!(p.point_b.abs_diff_eq(Vec3::new(0.5, 0.1, 0.2), 1e-6));
    assert!((p.separation + 0.1).abs() < 1e-6);
    assert_eq!(p.id, FeatureId::new(Edge, 3, Edge, 4));
}

#[test]
fn points_and_segments() {
    let n = Vec3::new(1.0, 1.0, 0.0).normalize();
    let a = feature(&[Vec3::ZERO], &[0], 0);
    let b = feature(&[n * 0.9], &[0], 0);
    let m = clip_features(&a, &b, n, 0.5, 0.5, 0.0);
    assert_eq!(m.count, 1);
    assert!((m.points[0].separation + 0.1).abs() < 1e-6);
    assert!(m.points[0].point_a.abs_diff_eq(n * 0.5, 1e-6));
    assert!(m.points[0].point_b.abs_diff_eq(n * 0.4, 1e-6));
    assert_eq!(m.points[0].id, FeatureId::new(Vertex, 0, Vertex, 0));

    // A sphere against the middle of a capsule's segment.
    let seg = feature(
        &[Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)],
        &[0, 1],
        5,
    );
    let ball = feature(&[Vec3::new(0.25, 0.7, 0.0)], &[0], 0);
    let m = clip_features(&seg, &ball, Vec3::Y, 0.25, 0.5, 0.0);
    assert_eq!(m.count, 1);
    assert!(m.points[0]
        .point_a
        .abs_diff_eq(Vec3::new(0.25, 0.25, 0.0), 1e-6));
    assert!((m.points[0].separation + 0.05).abs() < 1e-6);
    assert_eq!(m.points[0].id, FeatureId::new(Edge, 5, Vertex, 0));
}

#[test]
fn the_reference_choice_does_not_change_points_or_ids() {
    // B's face hangs over A's edge: incident vertices, clip points and
    // reference corners all appear. Whichever face is the reference, the
    // same features touch, so the same points with the same ids come out.
    let big = Cuboid {
        half_extents: Vec3::new(1.0, 0.5, 1.0),
    };
    let small = Cuboid {
        half_extents: Vec3::new(0.5, 0.5, 0.3),
    };
    let pb = Pose::new(Vec3::new(0.8, 0.99, 0.7), Quat::from_rotation_y(0.4));
    let fa = big.face_feature(&Pose::IDENTITY, 2);
    let fb = small.face_feature(&pb, 3);
    let by_a = clip_features_with(&fa, &fb, Vec3::Y, 0.0, 0.0, 0.0, Reference::A);
    let by_b = clip_features_with(&fa, &fb, Vec3::Y, 0.0, 0.0, 0.0, Reference::B);
    assert!(by_a.count >= 3);
    assert_eq!(by_a.count, by_b.count);
    let mut kinds_seen = Vec::new();
    for p in by_a.points() {
        let q = by_b
            .points()
            .iter()
            .find(|q| q.id == p.id)
            .expect("same ids");
        assert!(p.point_a.abs_diff_eq(q.point_a, 1e-6));
        assert!(p.point_b.abs_diff_eq(q.point_b, 1e-6));
        assert!((p.separation + 0.01).abs() < 1e-6 && (q.separation + 0.01).abs() < 1e-6);
        kinds_seen.push(kinds(p.id));
    }
    assert!(kinds_seen.contains(&(Edge as u32, Edge as u32)));
    // Auto picks A when both faces are equally aligned.
    let auto = clip_features(&fa, &fb, Vec3::Y, 0.0, 0.0, 0.0);
    assert_eq!(auto, by_a);
}

#[test]
fn many_points_reduce_to_the_deepest_and_the_widest() {
    // A tilted regular 16-gon 1 cm above to 3 cm into a big face.
    let face = top_face(5.0);
    let mut pts = Vec::new();
    let mut ids = Vec::new();
    for i in 0..16u8 {
        let a = i as f32 / 16.0 * std::f32::consts::TAU;
        let (x, z) = (a.cos(), a.sin());
        pts.push(Vec3::new(x, 0.5 + 0.01 - 0.02 * (1.0 + x), z));
        ids.push(i);
    }
    pts.reverse();
    ids.reverse();
    let inc = feature(&pts, &ids, 0);
    let m = clip_features(&face, &inc, Vec3::Y, 0.0, 0.0, 0.02);
    assert_eq!(m.count, 4);
    // The deepest point (x = 1) is kept, every point is within reach.
    let deepest = m
        .points()
        .iter()
        .map(|p| p.separation)
        .fold(f32::MAX, f32::min);
    assert!((deepest + 0.03).abs() < 1e-5);
    for p in m.points() {
        assert!(p.separation <= 0.02);
    }
    // The four span most of the kept polygon: at least a square's worth of
    // the unit disc area (2.0) shrunk by the dropped shallow side.
    let q: Vec<Vec3> = m.points().iter().map(|p| p.point_a).collect();
    let mut area = 0.0f32;
    for i in 0..4 {
        for j in i + 1..4 {
            for k in j + 1..4 {
                area = area.max(0.5 * (q[j] - q[i]).cross(q[k] - q[i]).length());
            }
        }
    }
    assert!(area > 0.9, "largest triangle {area}");
}

#[test]
fn nothing_within_reach_gives_an_empty_manifold() {
    let face = top_face(1.0);
    let centre = feature(&[Vec3::new(0.0, 1.2, 0.0)], &[0], 0);
    assert!(clip_features(&face, &centre, Vec3::Y, 0.0, 0.5, 0.1).is_empty());
    assert_eq!(
        clip_features(&face, &centre, Vec3::Y, 0.0, 0.5, 0.25).count,
        1
    );
}

#[test]
fn faces_that_do_not_overlap_meet_at_their_closest_corners() {
    // Two unit squares, B's 0.1 above and diagonally beyond A's corner.
    let fa = top_face(0.5);
    let small = Cuboid {
        half_extents: Vec3::splat(0.5),
    };
    let fb = small.face_feature(&Pose::from_position(Vec3::new(1.2, 1.1, 1.3)), 3);
    let m = clip_features(&fa, &fb, Vec3::Y, 0.0, 0.0, 0.5);
    assert_eq!(m.count, 1);
    let p = m.points[0];
    assert!(p.point_a.abs_diff_eq(Vec3::new(0.5, 0.5, 0.5), 1e-6));
    assert!(p.point_b.abs_diff_eq(Vec3::new(0.7, 0.6, 0.8), 1e-6));
    assert!((p.separation - 0.1).abs() < 1e-6);
    assert_eq!(kinds(p.id), (Vertex as u32, Vertex as u32));
}
