use arbiter::physics::*;
fn main() {
    for hz in [30.0f32, 60.0] {
        let mut s = WorldSettings::default();
        s.solver.contact_hertz = hz;
        let mut w = World::new(s);
        w.add_body(&BodySpec::new(ShapeSpec::Plane { normal: [0.0, 1.0, 0.0], offset: 0.0 }).kind(BodyKind::Static)).unwrap();
        let ids: Vec<u64> = (0..10).map(|i| w.add_body(&BodySpec::new(ShapeSpec::Box { half_extents: [0.5; 3] }).position([0.0, 0.5 + i as f32, 0.0])).unwrap()).collect();
        for _ in 0..180 { w.step(); }
        let ys: Vec<String> = ids.iter().map(|&id| { let b = w.body(id).unwrap(); format!("{:.4}{}", b.pose.position.y - (0.5 + (id - 2) as f32), if b.sleeping {"z"} else {""}) }).collect();
        println!("hz {hz}: {}", ys.join(" "));
    }
}
