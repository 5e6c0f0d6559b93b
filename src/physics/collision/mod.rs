pub mod ccd_cubic;
pub mod ccd_thick;
