//! Point clouds (the fourth scene, issue 14), the data side so far: survey files read in batches
//! with exact coordinates. The scene itself (octree, streaming, the compute rasterizer) builds on
//! this.
//!
//! - `file.rs`: LAS 1.0–1.4 and LAZ through the `las` crate (its `laz` feature), in batches of
//!   points kept as the file's integers and their f64 file coordinates, plus a one-pass summary
//!   (count, bounds from the points, per-class counts);
//! - `copc.rs`: COPC files node by node through their own hierarchy;
//! - `octree.rs`: the octree of a file without one (PotreeConverter 2.0's scheme: inner nodes
//!   hold a spatially even subsample, every point in exactly one node);
//! - `bench.rs`: `vizdeck bench --kernels pointcloud`, the rasterizer against point primitives;
//! - `raster.rs`: the compute rasterizer's visibility buffer (nearest point per pixel, 32-bit
//!   two-pass path) and its CPU reference.

pub mod bench;
pub mod copc;
pub mod file;
pub mod octree;
pub mod raster;

pub use file::{LasFile, LasInfo, PointBatch, PointCloudError, Summary, summarize};
