//! What every vizdeck layer uses and nothing else owns: one-line text for messages about bad
//! input and counts typed by a user ([`text`]), the progress of long work ([`progress`]), a seeded
//! generator ([`rng`]), the fixed-timestep clock of the frame loop ([`clock`]) and percentiles by
//! nearest rank ([`percentile`]). Depends on no other vizdeck crate.

pub mod clock;
pub mod percentile;
pub mod progress;
pub mod rng;
pub mod text;
