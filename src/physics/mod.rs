pub mod aabb;
pub mod ccd_queries;
pub mod collision;
pub mod math;
