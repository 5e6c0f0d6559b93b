pub mod physics;
pub mod protocol;
