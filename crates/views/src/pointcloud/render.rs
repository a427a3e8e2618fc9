//! The point-cloud scene's GPU side: the rasterizer, the point pools, the visibility buffer of
//! the scene's size, the two parameter blocks and their bind groups. Resident nodes are in the
//! quantized pool (4 bytes a point, drawn by the rasterizer's quantized path: `main_q`, one
//! dispatch and one resolve dispatch per chunk of the pool); a node whose quantized cells are
//! too coarse for the view is also in the exact pool and drawn from there (16 bytes a point, the
//! rasterizer's `main`), into the same visibility buffer (the exact pool's ids first, the
//! quantized pool's after). Where the quantized pool is one chunk, one resolve dispatch colours
//! both pools' pixels (`cs_dual`). The resolve runs in the frame's compute pass, into a
//! [`ResolveImage`] that [`Renderer::write_target`] copies into the scene texture (no draw: see
//! `resolve.wgsl`). Everything here can be rebuilt from the CPU side (after a lost device the
//! pools start empty and refill).

use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::pointcloud::pieces::PieceGroups;
use crate::pointcloud::pool::{DrawnPoint, ExactPool, Pool, Resident};
use crate::pointcloud::raster::{
    PickParams, RasterParams, RasterStage, Rasterizer, ResolveImage, ResolveParams, ResolveVariant,
    VisibilityBuffer, points_per_binding,
};
use vizdeck_pointcloud::camera::CameraView;

/// ASPRS standard class colours (LAS 1.4 R15 Table 17 classes 0–18; the rest grey), RGBA8.
pub const CLASS_COLORS: [[u8; 3]; 19] = [
    [160, 160, 160], // 0 created, never classified
    [190, 190, 190], // 1 unclassified
    [170, 120, 70],  // 2 ground
    [140, 200, 90],  // 3 low vegetation
    [70, 170, 60],   // 4 medium vegetation
    [30, 120, 40],   // 5 high vegetation
    [220, 80, 60],   // 6 building
    [255, 0, 255],   // 7 low point (noise)
    [120, 120, 120], // 8 reserved / model key-point
    [60, 120, 230],  // 9 water
    [230, 200, 60],  // 10 rail
    [90, 90, 90],    // 11 road surface
    [200, 200, 200], // 12 reserved / overlap
    [240, 240, 120], // 13 wire – guard
    [240, 200, 120], // 14 wire – conductor
    [250, 150, 40],  // 15 transmission tower
    [240, 240, 240], // 16 wire-structure connector
    [170, 110, 200], // 17 bridge deck
    [255, 60, 160],  // 18 high noise
];

/// ASPRS class names (LAS 1.4 R15 Table 17).
pub const CLASS_NAMES: [&str; 19] = [
    "never classified",
    "unclassified",
    "ground",
    "low vegetation",
    "medium vegetation",
    "high vegetation",
    "building",
    "low point (noise)",
    "reserved",
    "water",
    "rail",
    "road surface",
    "reserved",
    "wire – guard",
    "wire – conductor",
    "transmission tower",
    "wire connector",
    "bridge deck",
    "high noise",
];

/// RGBA8 (R in the low byte) of class `c`.
pub fn class_rgba(c: u8) -> u32 {
    let [r, g, b] = CLASS_COLORS
        .get(usize::from(c))
        .copied()
        .unwrap_or([150, 150, 150]);
    u32::from_le_bytes([r, g, b, 255])
}

/// The GPU objects (see the module docs).
pub struct Renderer {
    /// The compute rasterizer's pipelines and layouts.
    pub raster: Rasterizer,
    /// Every resident node, quantized.
    pub pool: Pool,
    /// The nodes drawn exactly (16 bytes a point) where their cells are too coarse.
    pub exact: ExactPool,
    /// The capacity the quantized pool was asked for (it may hold less where the device ran
    /// out of memory).
    pub asked: u64,
    target: Option<VisibilityBuffer>,
    /// The resolve's output, the visibility buffer's size.
    image: Option<ResolveImage>,
    raster_params: wgpu::Buffer,
    resolve_params: wgpu::Buffer,
    groups: Option<Groups>,
    pick_params: wgpu::Buffer,
    /// The pick's result (`~index` or 0, depth key), copied back for the readout.
    pub picked: wgpu::Buffer,
    /// The pixel picked this frame.
    pub pick: Option<(u32, u32)>,
    /// Variant of this frame's resolve.
    pub variant: Option<ResolveVariant>,
    /// What the resolve's uniform holds (written again only when it changes).
    resolve_written: Option<ResolveParams>,
}

/// The bind groups over one visibility buffer, one per piece of it each (a target over the
/// device's binding limits is in pieces, `pointcloud::pieces`): the exact pool's raster passes
/// and resolve, the quantized pool's (one set per chunk each), both pools' resolve in one
/// dispatch where the quantized pool is one chunk (`resolve_dual`), the pick's.
struct Groups {
    raster: PieceGroups,
    raster_q: Vec<PieceGroups>,
    resolve: PieceGroups,
    resolve_q: Vec<PieceGroups>,
    resolve_dual: Option<PieceGroups>,
    pick: PieceGroups,
}

impl Renderer {
    /// The objects on `gpu`, with a quantized pool of `capacity` points (in as many chunks as
    /// the device's storage binding limits need) and an exact pool of `exact` points.
    pub fn new(gpu: &Gpu, capacity: u64, exact: u64) -> Renderer {
        let d = &gpu.device;
        let uniform = |label: &str, size: usize| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let exact_pool = ExactPool::new(d, exact);
        Renderer {
            raster: Rasterizer::new(d, gpu.scene_format),
            pool: Pool::new(
                d,
                capacity,
                points_per_binding(&d.limits()),
                exact_pool.capacity() as u32,
            ),
            exact: exact_pool,
            asked: capacity,
            target: None,
            image: None,
            raster_params: uniform(
                "pointcloud:raster:params",
                std::mem::size_of::<RasterParams>(),
            ),
            resolve_params: uniform(
                "pointcloud:resolve:params",
                std::mem::size_of::<ResolveParams>(),
            ),
            groups: None,
            pick_params: uniform("pointcloud:pick:params", std::mem::size_of::<PickParams>()),
            picked: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("pointcloud:pick:picked"),
                size: 8,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            pick: None,
            variant: None,
            resolve_written: None,
        }
    }

    /// Makes the visibility buffer the frame's size (and the bind groups over it).
    fn ensure_target(&mut self, gpu: &Gpu, size: (u32, u32)) {
        if self.target.as_ref().is_some_and(|t| t.size == size) && self.groups.is_some() {
            return;
        }
        let d = &gpu.device;
        let target = self.raster.target(d, size);
        let cloud = self.pool.cloud();
        let raster_q =
            self.raster
                .bind_quantized(d, &self.raster_params, cloud, &self.pool.words(), &target);
        let raster = self.raster.bind(
            d,
            &self.raster_params,
            self.exact.points(),
            self.exact.batches(),
            &target,
        );
        let resolve = self.raster.bind_resolve_ids(
            d,
            &self.resolve_params,
            &target,
            self.exact.points(),
            self.exact.attrs(),
            self.exact.capacity() as u32,
        );
        let resolve_q = cloud
            .chunks
            .iter()
            .zip(self.pool.words().into_iter().zip(self.pool.attrs()))
            .map(|(c, (words, attrs))| {
                self.raster.bind_resolve_quantized(
                    d,
                    &self.resolve_params,
                    &target,
                    words,
                    attrs,
                    c.first,
                    c.count,
                )
            })
            .collect();
        // One chunk (the usual case): both pools resolved in one dispatch, so each pixel's disc
        // and neighbours are read once.
        let resolve_dual = match (
            &cloud.chunks[..],
            &self.pool.words()[..],
            &self.pool.attrs()[..],
        ) {
            ([c], [words], [attrs]) => Some(self.raster.bind_resolve_dual(
                d,
                &self.resolve_params,
                &target,
                [words, attrs],
                (c.first, c.count),
                [self.exact.points(), self.exact.attrs()],
                self.exact.capacity() as u32,
            )),
            _ => None,
        };
        let pick = self
            .raster
            .bind_pick(d, &self.pick_params, &target, &self.picked);
        self.image = Some(self.raster.image(d, size));
        self.target = Some(target);
        self.groups = Some(Groups {
            raster,
            raster_q,
            resolve,
            resolve_q,
            resolve_dual,
            pick,
        });
    }

    /// Writes this frame's parameters (and the pick's, for `pick`, a pixel to read out) and
    /// clears the visibility buffer.
    pub fn prepare(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        view: &CameraView,
        class_mask: [[u32; 4]; 2],
        resolve: &ResolveParams,
        variant: ResolveVariant,
        pick: Option<(u32, u32)>,
    ) {
        let size = view.size;
        self.ensure_target(gpu.gpu(), size);
        self.raster.prepare_variant(gpu.device(), variant);
        self.raster.prepare_variant_quantized(gpu.device(), variant);
        if self
            .groups
            .as_ref()
            .is_some_and(|g| g.resolve_dual.is_some())
        {
            self.raster.prepare_variant_dual(gpu.device(), variant);
        }
        self.variant = Some(variant);
        let vp = view.view_proj.as_mat4().to_cols_array_2d();
        let mut p = RasterParams::new(vp, size);
        p.class_mask = class_mask;
        gpu.write_pod(&self.raster_params, 0, &p);
        let mut r = *resolve;
        r.width = size.0;
        r.height = size.1;
        r.pitch = ResolveImage::pitch_of(size.0);
        if self.resolve_written != Some(r) {
            gpu.write_pod(&self.resolve_params, 0, &r);
            self.resolve_written = Some(r);
        }
        self.pick = pick.filter(|&(x, y)| x < size.0 && y < size.1);
        if let Some((x, y)) = self.pick {
            let pp = PickParams {
                x: x as i32,
                y: y as i32,
                radius: variant.radius as i32,
                _pad: 0,
                width: size.0,
                height: size.1,
                _pad1: [0; 2],
            };
            gpu.write_pod(&self.pick_params, 0, &pp);
        }
        if let Some(t) = &self.target {
            self.raster.clear(gpu.encoder(), t);
        }
    }

    /// Records the rasterizer's passes over this frame's batch table (nothing when it is
    /// empty), the pick when a pixel is read out, and the resolve into the image.
    pub fn compute(&self, pass: &mut wgpu::ComputePass<'_>) {
        if let Some(g) = &self.groups {
            self.encode_raster(pass);
            if let Some((_, y)) = self.pick {
                self.raster.encode_pick(pass, &g.pick, y);
            }
            self.encode_resolve(pass);
        }
    }

    /// Records the raster passes alone (the bench times them): the exact pool's depth stage,
    /// the quantized passes, the exact pool's id stage (on the 32-bit path every depth pass
    /// runs before the id passes).
    pub fn encode_raster(&self, pass: &mut wgpu::ComputePass<'_>) {
        let Some(g) = &self.groups else {
            return;
        };
        let exact = self.exact.batch_count();
        self.raster
            .encode_stage(pass, &g.raster, exact, RasterStage::Depth);
        if self.pool.batch_count() > 0 {
            self.raster
                .encode_quantized(pass, self.pool.cloud(), &g.raster_q);
        }
        self.raster
            .encode_stage(pass, &g.raster, exact, RasterStage::Ids);
    }

    /// Records the resolve into the image (the bench times it alone): both pools in one
    /// dispatch where the quantized pool is one chunk, else the exact pool's points, then a
    /// dispatch per chunk of the quantized pool. Nothing before a frame was prepared.
    pub fn encode_resolve(&self, pass: &mut wgpu::ComputePass<'_>) {
        let (Some(g), Some(v), Some(image)) = (&self.groups, self.variant, &self.image) else {
            return;
        };
        if let Some(dual) = &g.resolve_dual {
            self.raster.resolve_dual(pass, v, dual, image);
            return;
        }
        self.raster.resolve(pass, v, &g.resolve, image);
        self.raster.resolve_quantized(pass, v, &g.resolve_q, image);
    }

    /// Whether [`compute`](Self::compute) resolves into an image of `size` pixels (the scene
    /// texture's) that [`write_target`](Self::write_target) copies: once a frame of that size
    /// was prepared. A frame the scene does not prepare (no source yet, a new one loading)
    /// after a resize is false, so the deck clears the texture rather than keep a smaller image.
    pub fn writes_target(&self, size: (u32, u32)) -> bool {
        self.groups.is_some()
            && self.variant.is_some()
            && self.image.as_ref().is_some_and(|i| i.size == size)
    }

    /// Records the copy of the resolved image into `texture` (the scene texture: the
    /// rasterizer's format, COPY_DST), after the compute pass.
    pub fn write_target(&self, encoder: &mut wgpu::CommandEncoder, texture: &wgpu::Texture) {
        if let Some(image) = &self.image {
            image.copy_to(encoder, texture);
        }
    }

    /// The node, its residency and the point index within it of the point of id `id` (of the
    /// visibility buffer), in whichever pool holds it.
    pub fn locate(&self, id: u32) -> Option<(u32, &Resident, usize)> {
        if u64::from(id) < self.exact.capacity() {
            self.exact.locate(id)
        } else {
            self.pool.locate(id)
        }
    }

    /// This frame's points as the raster passes see them (both pools), by id.
    pub fn drawn(&self) -> Vec<DrawnPoint> {
        let mut d = self.exact.drawn();
        d.extend(self.pool.drawn());
        d
    }

    /// Bytes of GPU memory both pools hold.
    pub fn gpu_bytes(&self) -> u64 {
        self.pool.gpu_bytes() + self.exact.gpu_bytes()
    }

    /// The visibility buffer, once a frame has been prepared.
    pub fn target(&self) -> Option<&VisibilityBuffer> {
        self.target.as_ref()
    }
}
