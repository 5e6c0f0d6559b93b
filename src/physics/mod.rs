pub mod aabb;
pub mod broad_phase;
pub mod math;
