//! Point clouds, the data side (no GPU): survey files read with exact coordinates, their
//! octrees, node selection, streaming and quantization. The GPU side (the node pool, the
//! compute rasterizer and its bench) and the scene that drives them are the app's
//! `pointcloud/` and `scene/pointcloud/`.
//!
//! - `source.rs`: the hierarchy of nodes and the [`source::NodeSource`] trait the scene streams
//!   from; `index/` (a LAS/LAZ/PLY file indexed out of core into an octree cached on disk,
//!   `CachedSource`; `decode.rs` reads LAS/LAZ for it), `copc.rs` (`CopcSource`) and
//!   `synthetic.rs` (terrain with buildings and trees, deterministic per node) implement it;
//! - `http.rs`: files over HTTP(S) read with range requests through a shared block cache
//!   (COPC streamed from a server or object store);
//! - `ply.rs`: PLY (ASCII and binary) vertices as points, decoded for the index like LAS;
//! - `camera.rs`: the orbit camera in f64, frustum and ray; `lod.rs`: node selection by
//!   screen-space size within the point budget; `loader.rs`: the loader threads;
//!   `quantize.rs`: a decoded node's points in Morton order, cut into pages of 10-bit cells;
//! - `file.rs`: LAS 1.0–1.4 and LAZ through the `las` crate (its `laz` feature), in batches of
//!   points kept as the file's integers and their f64 file coordinates, plus a one-pass summary
//!   (count, bounds from the points, per-class counts); `held.rs`: how many points the data
//!   holds when the header claims more; `laz_guard.rs`: the LAZ decoder's panics as errors;
//!   `seek_within.rs`: one seek rule for files and bytes;
//! - `copc.rs`: COPC files node by node through their own hierarchy (`copc_pages.rs`: its
//!   pages, read in any order);
//! - `octree.rs`: the octree of a file without one (PotreeConverter 2.0's scheme: inner nodes
//!   hold a spatially even subsample, every point in exactly one node);
//! - `cache.rs`: the octree cache directory for the user: sizes, clearing, caches of files
//!   that are gone dropped, class counts kept beside each cache.

pub mod cache;
pub mod camera;
pub mod color;
pub mod copc;
pub mod copc_pages;
pub mod decode;
pub mod file;
pub mod held;
pub mod http;
pub mod index;
pub mod laz_guard;
pub mod loader;
pub mod lod;
pub mod octree;
pub mod ply;
pub mod quantize;
pub mod seek_within;
pub mod source;
pub mod synthetic;

pub use file::{
    LasFile, LasInfo, MAX_BATCH_BYTES, PointBatch, PointCloudError, Summary, batch_points,
    summarize,
};
