pub mod aabb;
pub mod math;
