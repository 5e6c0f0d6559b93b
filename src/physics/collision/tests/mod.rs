//! Tests of the collision queries against closed-form answers and brute force.

mod gjk_brute_force;
