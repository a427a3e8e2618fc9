//! Point clouds (the fourth scene, issue 14), the data side so far: survey files read in batches
//! with exact coordinates. The scene itself (octree, streaming, the compute rasterizer) builds on
//! this.
//!
//! - `file.rs`: LAS 1.0–1.4 and LAZ through the `las` crate (its `laz` feature), in batches of
//!   points kept as the file's integers and their f64 file coordinates, plus a one-pass summary
//!   (count, bounds from the points, per-class counts).

pub mod file;

pub use file::{LasFile, LasInfo, PointBatch, PointCloudError, Summary, summarize};
