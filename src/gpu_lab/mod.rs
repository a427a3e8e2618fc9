//! GPU lab material that stays in the app crate for now (issue 35: it moves to the lab, beside
//! the app): nothing in the frame uses it, and the GPU core (`vizdeck-gpu`) does not know it.

pub mod pipeline_stats;
