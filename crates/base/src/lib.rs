//! What every vizdeck layer uses and nothing else owns: one-line text for messages about bad
//! input ([`text`]) and the progress of long work ([`progress`]) and a seeded generator ([`rng`]). Depends on no other vizdeck
//! crate.

pub mod progress;
pub mod rng;
pub mod text;
