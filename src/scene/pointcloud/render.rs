//! The point-cloud scene's GPU side: the rasterizer, the point pool, the visibility buffer of
//! the scene's size, the two parameter blocks and their bind groups. Everything here can be
//! rebuilt from the CPU side (after a lost device the pool starts empty and refills).

use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::pointcloud::camera::CameraView;
use crate::pointcloud::pool::Pool;
use crate::pointcloud::raster::{
    PickParams, RasterParams, Rasterizer, ResolveParams, ResolveVariant, VisibilityBuffer,
};

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
    pub raster: Rasterizer,
    pub pool: Pool,
    target: Option<VisibilityBuffer>,
    raster_params: wgpu::Buffer,
    resolve_params: wgpu::Buffer,
    groups: Option<(wgpu::BindGroup, wgpu::BindGroup, wgpu::BindGroup)>,
    pick_params: wgpu::Buffer,
    /// The pick's result (`~index` or 0, depth key), copied back for the readout.
    pub picked: wgpu::Buffer,
    /// The pixel picked this frame.
    pub pick: Option<(u32, u32)>,
    /// Batches drawn this frame.
    pub batches: u32,
    /// Variant of this frame's resolve.
    pub variant: Option<ResolveVariant>,
    /// What the resolve's uniform holds (written again only when it changes).
    resolve_written: Option<ResolveParams>,
}

impl Renderer {
    /// The objects on `gpu`, with a pool of `capacity` points.
    pub fn new(gpu: &Gpu, capacity: u64) -> Renderer {
        let d = &gpu.device;
        let uniform = |label: &str, size: usize| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        Renderer {
            raster: Rasterizer::new(d, gpu.scene_format),
            pool: Pool::new(d, capacity),
            target: None,
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
            batches: 0,
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
        let raster = self.raster.bind(
            d,
            &self.raster_params,
            &self.pool.points,
            &self.pool.batches,
            &target,
        );
        let resolve = self.raster.bind_resolve(
            d,
            &self.resolve_params,
            &target,
            &self.pool.points,
            &self.pool.attrs,
        );
        let pick = self
            .raster
            .bind_pick(d, &self.pick_params, &target, &self.picked);
        self.target = Some(target);
        self.groups = Some((raster, resolve, pick));
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
        self.variant = Some(variant);
        let vp = view.view_proj.as_mat4().to_cols_array_2d();
        let mut p = RasterParams::new(vp, size);
        p.class_mask = class_mask;
        gpu.write_pod(&self.raster_params, 0, &p);
        let mut r = *resolve;
        r.width = size.0;
        r.height = size.1;
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

    /// Records the rasterizer's passes, and the pick when a pixel is read out.
    pub fn compute(&self, pass: &mut wgpu::ComputePass<'_>) {
        if let Some((group, _, pick)) = &self.groups {
            self.raster.encode(pass, group, self.batches);
            if self.pick.is_some() {
                self.raster.encode_pick(pass, pick);
            }
        }
    }

    /// Draws the resolve.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let (Some((_, group, _)), Some(v)) = (&self.groups, self.variant) {
            self.raster.paint(pass, v, group);
        }
    }
}
