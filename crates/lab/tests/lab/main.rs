//! The lab's integration tests, one binary: the pipeline statistics of the fused FFT, the
//! transfer tables of `vizdeck-lab --upload` (every strategy delivers the payload's bytes), and
//! the lab's own shader validated by naga.

#[path = "../../../../tests/common/mod.rs"]
mod common;

mod pipeline_stats;
mod shaders;
mod transfers;
