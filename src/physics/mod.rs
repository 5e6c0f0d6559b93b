pub mod aabb;
pub mod collision;
pub mod math;
pub mod shape;
