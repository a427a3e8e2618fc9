//! The open cloud's stream ([`Stream`]): the loaders and the decoded nodes waiting, the node
//! selection each frame, the uploads within the frame's budget into the quantized pool, and the
//! split of the drawn nodes between the quantized and the exact pool by the precision the view
//! needs; the pools' capacities.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use super::opening::CacheUse;
use super::{ClassCounts, Phase, PointCloud, TARGET_SPACING_PX, legend};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::pointcloud::pool::QuantizedNode;
use vizdeck_pointcloud::camera::CameraView;
use vizdeck_pointcloud::loader::Loader;
use vizdeck_pointcloud::lod::{Selection, select};
use vizdeck_pointcloud::source::NodeSource;

/// Decoded nodes waiting for upload, at most.
const READY_CAP: usize = 64;

/// The point and upload budgets of the stream, and whether frames wait for their nodes.
pub(super) struct Budgets {
    pub(super) budget: u64,
    /// The adapter's default point budget ([`BUDGET_CPU`] or [`BUDGET_GPU`]).
    pub(super) default_budget: u64,
    pub(super) upload_budget: u64,
    pub(super) wait_for_nodes: bool,
}

/// An open cloud and its loaders.
pub(super) struct Stream {
    pub(super) source: Arc<dyn NodeSource>,
    pub(super) loader: Loader,
    /// Decoded (and quantized) nodes waiting for upload.
    pub(super) ready: VecDeque<(u32, Arc<QuantizedNode>)>,
    /// The cloud's bounds (min, max); elevations are stored relative to the lowest z.
    pub(super) bounds: ([f64; 3], [f64; 3]),
    pub(super) decoded_points: u64,
    pub(super) decode_seconds: f64,
    pub(super) load_errors: u64,
    pub(super) first_error: Option<String>,
    /// The remote file, for a cloud streamed over HTTP.
    pub(super) http: Option<Arc<vizdeck_pointcloud::http::HttpFile>>,
    /// The octree cache, for a LAS/LAZ/PLY file.
    pub(super) cache: Option<CacheUse>,
    /// Points per ASPRS class of the file, counted while it was indexed (`None`: not known,
    /// a COPC file or a cache made before the counts were kept).
    pub(super) class_totals: Option<ClassCounts>,
    /// Points per ASPRS class in the nodes decoded so far (each node counted once).
    pub(super) classes_seen: Vec<u64>,
    /// Nodes counted in `classes_seen` and `rgb_points`.
    pub(super) counted: std::collections::HashSet<u32>,
    /// Whether the loaders wake the frame loop when they hand a node over.
    pub(super) woken: bool,
    /// Colours decoded so far (a cloud with RGB), and whether any was not black.
    pub(super) rgb_points: u64,
    /// See `rgb_points`.
    pub(super) rgb_colored: bool,
}

impl Stream {
    pub(super) fn new(source: Arc<dyn NodeSource>) -> Stream {
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8);
        let bounds = source.info().bounds;
        let waker = crate::wake::get();
        Stream {
            woken: waker.is_some(),
            loader: Loader::with_waker(source.clone(), threads, 2 * threads, waker),
            bounds,
            source,
            ready: VecDeque::new(),
            decoded_points: 0,
            decode_seconds: 0.0,
            load_errors: 0,
            first_error: None,
            http: None,
            cache: None,
            class_totals: None,
            classes_seen: vec![0; 256],
            counted: std::collections::HashSet::new(),
            rgb_points: 0,
            rgb_colored: false,
        }
    }

    /// Counts a decoded node's classes and colours (once per node, however often it is
    /// decoded again after an eviction).
    fn count(&mut self, node: u32, q: &QuantizedNode) {
        if !self.counted.insert(node) {
            return;
        }
        for w in &q.data.words {
            self.classes_seen[(w & 0xff) as usize] += 1;
        }
        if self.source.info().has_color {
            self.rgb_points += q.data.rgba.len() as u64;
            self.rgb_colored |= q.data.rgba.iter().any(|&c| !legend::is_black(c));
        }
    }

    fn take(&mut self, l: vizdeck_pointcloud::loader::Loaded) {
        match l.result {
            Ok(data) => {
                self.decoded_points += data.len() as u64;
                self.decode_seconds += l.seconds;
                self.count(l.node, &data);
                if !self.ready.iter().any(|(n, _)| *n == l.node) {
                    self.ready.push_back((l.node, Arc::new(data)));
                }
            }
            Err(e) => {
                self.load_errors += 1;
                self.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// The finest a node's quantized cells must be on screen, pixels: a node whose coarsest cell
/// spans more where it is nearest the eye is drawn from the exact pool (a decoded point then
/// lies within 1/32 pixel of the point wherever it is drawn quantized).
pub const PRECISION_PX: f64 = 1.0 / 16.0;

/// Exact pool capacity for `budget`: the budget (every node drawn may need it, as in a close
/// view of leaves whose points lie far apart on screen), at least 65,536 points (the pool
/// keeps it within the adapter's binding limit).
pub(super) fn exact_capacity(budget: u64) -> u64 {
    budget.max(1 << 16)
}

/// Storage bindings (chunks) the pool may spread over, at most: a budget beyond what one
/// binding holds (16 M points on lavapipe, 268 M on an H200) takes more, up to this.
pub const POOL_BINDINGS: u64 = 4;

/// Pool capacity for `budget`: twice the budget (room to keep nodes cached while the view
/// moves), at least 65,536 points, at most [`POOL_BINDINGS`] storage bindings of the adapter
/// ([`points_per_binding`](crate::pointcloud::raster::points_per_binding): whole pages, within
/// `max_storage_buffer_binding_size` and `max_buffer_size`) and the pool's id range.
pub(super) fn pool_capacity(gpu: &Gpu, budget: u64) -> u64 {
    let per = crate::pointcloud::raster::points_per_binding(&gpu.device.limits());
    let ids = u64::from(crate::pointcloud::pool::MAX_PAGES)
        * u64::from(crate::pointcloud::raster::QBATCH_POINTS);
    budget
        .saturating_mul(2)
        .max(1 << 16)
        .min(per.saturating_mul(POOL_BINDINGS))
        .min(ids)
}

impl PointCloud {
    /// Selects nodes for the current camera (marking the drawn ones used this frame).
    pub(super) fn reselect(&mut self) {
        let (Some(view), Phase::Ready(s)) = (&self.view, &self.phase) else {
            return;
        };
        let pool = &self.renderer.pool;
        let ready: std::collections::HashSet<u32> = s.ready.iter().map(|(n, _)| *n).collect();
        let mut sel = select(
            s.source.hierarchy(),
            view,
            self.budgets.budget,
            TARGET_SPACING_PX,
            64,
            |n| pool.contains(n),
        );
        sel.wanted.retain(|n| !ready.contains(n));
        for &n in &sel.draw {
            self.renderer.pool.touch(n, self.frame);
        }
        self.selection = sel;
    }

    /// This frame's streaming: take decoded nodes, upload within the budget, select again.
    /// Returns the upload budget left.
    pub(super) fn stream_nodes(&mut self, gpu: &mut GpuFrame<'_>) -> u64 {
        let mut left = self.budgets.upload_budget;
        for round in 0..64 {
            self.reselect();
            let Phase::Ready(s) = &mut self.phase else {
                return left;
            };
            s.loader.want(&self.selection.wanted);
            if self.budgets.wait_for_nodes && round > 0 && self.selection.wanted.is_empty() {
                break;
            }
            if self.budgets.wait_for_nodes {
                for _ in 0..self.selection.wanted.len() {
                    match s.loader.recv_timeout(Duration::from_secs(30)) {
                        Some(l) => s.take(l),
                        None => break,
                    }
                }
            }
            while s.ready.len() < READY_CAP
                && let Some(l) = s.loader.try_recv()
            {
                s.take(l);
            }
            let mut uploaded = 0;
            while left > 0
                && let Some((node, data)) = s.ready.pop_front()
            {
                let bytes = data.len() as u64 * crate::pointcloud::pool::POINT_BYTES;
                match self
                    .renderer
                    .pool
                    .insert(gpu, node, data.clone(), self.frame)
                {
                    Ok(()) => {
                        uploaded += 1;
                        left = left.saturating_sub(bytes);
                    }
                    Err(crate::pointcloud::pool::PoolFull::InUse) => {
                        s.ready.push_front((node, data));
                        break;
                    }
                    Err(crate::pointcloud::pool::PoolFull::TooLarge) => {
                        s.load_errors += 1;
                        s.first_error.get_or_insert_with(|| {
                            format!(
                                "node {node} is larger than the GPU pool; raise --pointcloud-budget"
                            )
                        });
                    }
                }
            }
            self.uploads_waiting = s.ready.len();
            if !self.budgets.wait_for_nodes || uploaded == 0 || left == 0 {
                break;
            }
        }
        self.reselect();
        if let Phase::Ready(s) = &self.phase {
            s.loader.want(&self.selection.wanted);
        }
        left
    }

    /// Splits the nodes to draw by the precision the view needs: a node whose coarsest
    /// quantized cell spans more than [`PRECISION_PX`] pixels where it is nearest the eye is
    /// drawn from the exact pool (uploaded there from its CPU copy, within `left` bytes of the
    /// frame's upload budget, or whatever it takes when frames wait for their nodes); the rest,
    /// and an exact one that finds no room, quantized. Returns (exact, quantized).
    pub(super) fn split_by_precision(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        draw: &[u32],
        view: &CameraView,
        mut left: u64,
    ) -> (Vec<u32>, Vec<u32>) {
        let (mut exact, mut quantized) = (Vec::new(), Vec::new());
        self.exact_waiting = false;
        let Phase::Ready(s) = &self.phase else {
            return (exact, draw.to_vec());
        };
        let h = s.source.hierarchy();
        let eye = view.eye.to_array();
        for &n in draw {
            let (Some(q), Some(meta)) = (self.renderer.pool.node(n), h.nodes.get(n as usize))
            else {
                quantized.push(n);
                continue;
            };
            let nearest = glam::DVec3::from(std::array::from_fn::<f64, 3, _>(|a| {
                eye[a].clamp(meta.min[a], meta.max[a])
            }));
            let dist = nearest.distance(view.eye).max(view.near);
            let cell_px = view.pixels(f64::from(q.max_step), dist);
            if cell_px <= PRECISION_PX {
                quantized.push(n);
                continue;
            }
            let r = &mut self.renderer.exact;
            if !r.contains(n) {
                let bytes = q.len() as u64 * crate::pointcloud::pool::EXACT_POINT_BYTES;
                if (self.budgets.wait_for_nodes || bytes <= left)
                    && r.insert(gpu, n, q.clone(), self.frame).is_ok()
                {
                    left = left.saturating_sub(bytes);
                } else if bytes > left && bytes <= self.budgets.upload_budget {
                    // This frame's upload budget is spent: the next frame uploads it.
                    self.exact_waiting = true;
                }
            }
            if r.contains(n) {
                exact.push(n);
            } else {
                quantized.push(n);
            }
        }
        (exact, quantized)
    }

    /// Forgets every resident node (GPU pool, decoded nodes waiting): the view streams in again.
    pub fn drop_resident(&mut self) {
        self.renderer.pool.clear();
        self.renderer.exact.clear();
        if let Phase::Ready(s) = &mut self.phase {
            s.ready.clear();
        }
        self.selection = Selection::default();
    }

    /// Whether the cloud is still indexing or nodes in view are still coming.
    pub fn loading(&self) -> bool {
        match &self.phase {
            Phase::Indexing { .. } => true,
            Phase::Ready(s) => {
                !self.selection.wanted.is_empty() || !s.ready.is_empty() || s.loader.busy() > 0
            }
            Phase::Failed(_) | Phase::Waiting => false,
        }
    }
}
