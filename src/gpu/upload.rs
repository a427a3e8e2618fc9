//! CPU → GPU uploads: double-buffered (ping-pong) buffers and the upload strategies.
//!
//! Frame `n` writes slot `n % 2` while the GPU may still read slot `(n - 1) % 2` of the frame
//! before, so a write never targets a buffer that in-flight work reads (wgpu orders
//! `queue.write_buffer` before the next submit anyway; two slots keep bind groups stable and let
//! the previous frame's data stay readable, e.g. for interpolation).

//!
//! How the bytes reach the GPU is a run-time choice, [`Strategy`] (`--upload-strategy`, View ▸
//! Upload strategy, `vizdeck bench --upload`), carried out by an [`Uploader`]:
//!
//! - [`Strategy::WriteBuffer`]: `queue.write_buffer` (wgpu copies into its own staging memory, then
//!   into the buffer at the next submit: one extra CPU copy).
//! - [`Strategy::StagingBelt`]: `wgpu::util::StagingBelt` (chunks of `MAP_WRITE` memory written in
//!   place, recalled with `map_async` after submit).
//! - [`Strategy::MapRing`]: vizdeck's own ring of `MAP_WRITE | COPY_SRC` buffers: a buffer is
//!   written only while mapped (owned by the CPU), unmapped before the copy is submitted, and
//!   re-mapped with `map_async` after submit; it comes back when the GPU is done with it. When no
//!   mapped buffer is free the write falls back to `queue.write_buffer` (counted), never waits.
//! - [`Strategy::MappedAtCreation`]: a fresh `COPY_SRC` buffer created mapped, written, unmapped and
//!   copied; meant for data written once ([`create_buffer_init`] skips the copy entirely).
//!
//! The deck owns one [`Uploader`] and lends it to the scenes every frame through
//! [`GpuFrame`](super::frame::GpuFrame); every byte written through it is counted in its
//! [`UploadCounters`] (no process-wide state: two decks or two tests never disturb each other's
//! figures), and the frame stats report the per-frame difference as `BytesUploaded`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Number of slots in a ping-pong set.
pub const SLOTS: usize = 2;

/// How CPU data is copied into GPU buffers (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// `queue.write_buffer`.
    #[default]
    WriteBuffer,
    /// `wgpu::util::StagingBelt`.
    StagingBelt,
    /// A ring of `MAP_WRITE` staging buffers recycled with `map_async`.
    MapRing,
    /// A new staging buffer created with `mapped_at_creation` for every write.
    MappedAtCreation,
}

impl Strategy {
    /// Every strategy, in menu order.
    pub const ALL: [Strategy; 4] = [
        Strategy::WriteBuffer,
        Strategy::StagingBelt,
        Strategy::MapRing,
        Strategy::MappedAtCreation,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::WriteBuffer => "write-buffer",
            Strategy::StagingBelt => "staging-belt",
            Strategy::MapRing => "map-ring",
            Strategy::MappedAtCreation => "mapped-at-creation",
        }
    }
}

/// Errors of an upload.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Offset not a multiple of 4 (`wgpu::COPY_BUFFER_ALIGNMENT`).
    #[error("upload offset {0} is not a multiple of 4")]
    Offset(u64),
    /// The write does not fit in the destination.
    #[error("upload of {len} bytes at offset {offset} does not fit a buffer of {size} bytes")]
    Range {
        /// Bytes to write (rounded up to 4).
        len: u64,
        /// Destination offset.
        offset: u64,
        /// Destination size.
        size: u64,
    },
    /// A staging buffer could not be written.
    #[error("staging buffer: {0}")]
    Map(String),
}

const RING_MAPPED: u8 = 0;
const RING_IN_USE: u8 = 1;
const RING_PENDING: u8 = 2;
const RING_FAILED: u8 = 3;

struct RingBuffer {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
}

/// Counters of an [`Uploader`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UploadCounters {
    /// Bytes written (before padding to 4).
    pub bytes: u64,
    /// Writes.
    pub writes: u64,
    /// [`Strategy::MapRing`] writes that found no mapped buffer and used `queue.write_buffer`.
    pub fallbacks: u64,
    /// Staging buffers created by the ring.
    pub ring_buffers_created: u64,
}

/// Carries out one [`Strategy`]. Per frame: any number of [`write`](Uploader::write)s into one
/// encoder, then [`finish`](Uploader::finish) before `queue.submit` and
/// [`after_submit`](Uploader::after_submit) right after it. Never blocks. The deck holds one for
/// the whole app (its strategy can change between frames, [`set_strategy`](Uploader::set_strategy));
/// tests and benches hold their own.
pub struct Uploader {
    strategy: Strategy,
    belt: Option<wgpu::util::StagingBelt>,
    ring: Vec<RingBuffer>,
    ring_max: usize,
    used: Vec<usize>,
    padded: Vec<u8>,
    /// What was done so far.
    pub counters: UploadCounters,
}

/// Default chunk of the staging belt, bytes.
pub const BELT_CHUNK: u64 = 1 << 20;
/// Most staging buffers the map ring keeps.
pub const RING_MAX: usize = 4;

impl Uploader {
    /// An uploader for `strategy`.
    pub fn new(device: &wgpu::Device, strategy: Strategy) -> Uploader {
        Uploader {
            strategy,
            belt: (strategy == Strategy::StagingBelt)
                .then(|| wgpu::util::StagingBelt::new(device.clone(), BELT_CHUNK)),
            ring: Vec::new(),
            ring_max: RING_MAX,
            used: Vec::new(),
            padded: Vec::new(),
            counters: UploadCounters::default(),
        }
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Switches to `strategy` from the next write on. Call between frames (after
    /// [`after_submit`](Uploader::after_submit)): the map ring's buffers still in flight are
    /// dropped (wgpu keeps them alive until the GPU is done), the belt is created on first use.
    /// Counters carry on.
    pub fn set_strategy(&mut self, strategy: Strategy) {
        if strategy == self.strategy {
            return;
        }
        self.strategy = strategy;
        self.ring.clear();
        self.used.clear();
        if strategy != Strategy::StagingBelt {
            self.belt = None;
        }
    }

    /// Staging buffers the map ring holds now.
    pub fn ring_len(&self) -> usize {
        self.ring.len()
    }

    /// Writes `bytes` (tightly packed rows of `bytes_per_row` bytes) into mip level 0 of `texture`
    /// at texel `origin`, `size` texels; counted like a buffer write. Textures go through
    /// `queue.write_texture` under every strategy (wgpu stages them itself, in submit order).
    /// `bytes` must hold `bytes_per_row × size.height` bytes (else wgpu reports a validation
    /// error naming the texture).
    #[allow(clippy::disallowed_methods)] // the uploader is what carries out texture uploads
    pub fn write_texture(
        &mut self,
        queue: &wgpu::Queue,
        texture: &wgpu::Texture,
        origin: (u32, u32),
        size: (u32, u32),
        bytes_per_row: u32,
        bytes: &[u8],
    ) {
        if bytes.is_empty() || size.0 == 0 || size.1 == 0 {
            return;
        }
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: 0,
                origin: wgpu::Origin3d {
                    x: origin.0,
                    y: origin.1,
                    z: 0,
                },
                aspect: wgpu::TextureAspect::All,
            },
            bytes,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(bytes_per_row),
                rows_per_image: Some(size.1),
            },
            wgpu::Extent3d {
                width: size.0,
                height: size.1,
                depth_or_array_layers: 1,
            },
        );
        self.counters.bytes += bytes.len() as u64;
        self.counters.writes += 1;
    }

    /// Writes `bytes` into `dst` at `offset` (a multiple of 4); a length that is not a multiple of
    /// 4 is padded with zeros (the padding bytes are written too). Records the copy into `encoder`
    /// (all strategies but [`Strategy::WriteBuffer`], which goes through the queue).
    ///
    /// # Errors
    ///
    /// [`UploadError::Offset`], [`UploadError::Range`]; [`UploadError::Map`] when a staging
    /// buffer cannot be written (nothing is uploaded then).
    #[allow(clippy::disallowed_methods)] // the uploader is what carries out write-buffer uploads
    pub fn write(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        offset: u64,
        bytes: &[u8],
    ) -> Result<(), UploadError> {
        if bytes.is_empty() {
            return Ok(());
        }
        if !offset.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
            return Err(UploadError::Offset(offset));
        }
        let len = (bytes.len() as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        if offset.checked_add(len).is_none_or(|end| end > dst.size()) {
            return Err(UploadError::Range {
                len,
                offset,
                size: dst.size(),
            });
        }
        let data: &[u8] = if len as usize == bytes.len() {
            bytes
        } else {
            self.padded.clear();
            self.padded.extend_from_slice(bytes);
            self.padded.resize(len as usize, 0);
            &self.padded
        };
        match self.strategy {
            Strategy::WriteBuffer => queue.write_buffer(dst, offset, data),
            Strategy::StagingBelt => {
                let belt = self.belt.get_or_insert_with(|| {
                    wgpu::util::StagingBelt::new(device.clone(), BELT_CHUNK)
                });
                let size = wgpu::BufferSize::new(len).ok_or(UploadError::Offset(offset))?;
                belt.write_buffer(encoder, dst, offset, size)
                    .copy_from_slice(data);
            }
            Strategy::MapRing => {
                match Self::ring_slot(
                    &mut self.ring,
                    self.ring_max,
                    device,
                    len,
                    &mut self.counters,
                ) {
                    Some(i) => {
                        let rb = &self.ring[i];
                        {
                            let mut view = rb
                                .buffer
                                .slice(..len)
                                .get_mapped_range_mut()
                                .map_err(|e| UploadError::Map(e.to_string()))?;
                            view.copy_from_slice(data);
                        }
                        rb.buffer.unmap();
                        rb.state.store(RING_IN_USE, Ordering::Release);
                        encoder.copy_buffer_to_buffer(&rb.buffer, 0, dst, offset, len);
                        self.used.push(i);
                    }
                    None => {
                        self.counters.fallbacks += 1;
                        queue.write_buffer(dst, offset, data);
                    }
                }
            }
            Strategy::MappedAtCreation => {
                let staging = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("upload:mapped-at-creation:staging"),
                    size: len,
                    usage: wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: true,
                });
                {
                    let mut view = staging
                        .slice(..)
                        .get_mapped_range_mut()
                        .map_err(|e| UploadError::Map(e.to_string()))?;
                    view.copy_from_slice(data);
                }
                staging.unmap();
                encoder.copy_buffer_to_buffer(&staging, 0, dst, offset, len);
            }
        }
        self.counters.bytes += bytes.len() as u64;
        self.counters.writes += 1;
        Ok(())
    }

    /// A mapped ring buffer of at least `len` bytes: the smallest free one, else a new one (while
    /// fewer than `max`), else a free smaller one replaced by a larger one. `None` when all are in
    /// use by the GPU.
    fn ring_slot(
        ring: &mut Vec<RingBuffer>,
        max: usize,
        device: &wgpu::Device,
        len: u64,
        counters: &mut UploadCounters,
    ) -> Option<usize> {
        ring.retain(|r| r.state.load(Ordering::Acquire) != RING_FAILED);
        let free = |r: &RingBuffer| r.state.load(Ordering::Acquire) == RING_MAPPED;
        if let Some((i, _)) = ring
            .iter()
            .enumerate()
            .filter(|(_, r)| free(r) && r.buffer.size() >= len)
            .min_by_key(|(_, r)| r.buffer.size())
        {
            return Some(i);
        }
        let make = |counters: &mut UploadCounters| {
            counters.ring_buffers_created += 1;
            RingBuffer {
                buffer: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("upload:map-ring:staging"),
                    size: len.next_power_of_two().max(64 * 1024),
                    usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: true,
                }),
                state: Arc::new(AtomicU8::new(RING_MAPPED)),
            }
        };
        if ring.len() < max {
            ring.push(make(counters));
            return Some(ring.len() - 1);
        }
        let i = ring.iter().position(free)?;
        ring[i] = make(counters);
        Some(i)
    }

    /// Call before `queue.submit` of the encoder the writes went into (unmaps the belt's chunks).
    pub fn finish(&mut self) {
        if let Some(b) = &mut self.belt {
            b.finish();
        }
    }

    /// Call right after `queue.submit`: asks for the staging memory back (`map_async`); it returns
    /// once the GPU has finished the copies, seen at a later device poll.
    pub fn after_submit(&mut self) {
        if let Some(b) = &mut self.belt {
            b.recall();
        }
        for i in self.used.drain(..) {
            if let Some(rb) = self.ring.get(i) {
                let state = rb.state.clone();
                state.store(RING_PENDING, Ordering::Release);
                rb.buffer
                    .slice(..)
                    .map_async(wgpu::MapMode::Write, move |r| {
                        state.store(
                            if r.is_ok() { RING_MAPPED } else { RING_FAILED },
                            Ordering::Release,
                        );
                    });
            }
        }
    }
}

/// Creates a buffer holding `bytes` (padded with zeros to a multiple of 4) with
/// `mapped_at_creation`: no staging copy at all; for data written once, when a scene is created
/// (not a frame upload, so not counted in `BytesUploaded`).
pub fn create_buffer_init(
    device: &wgpu::Device,
    label: &str,
    usage: wgpu::BufferUsages,
    bytes: &[u8],
) -> Result<wgpu::Buffer, UploadError> {
    let len = (bytes.len() as u64)
        .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
        .max(4);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: len,
        usage,
        mapped_at_creation: true,
    });
    {
        let mut view = buffer
            .slice(..)
            .get_mapped_range_mut()
            .map_err(|e| UploadError::Map(e.to_string()))?;
        // Mapped-at-creation memory starts zeroed, so the padding is 0.
        view.slice(..bytes.len()).copy_from_slice(bytes);
    }
    buffer.unmap();
    Ok(buffer)
}

/// A pair of GPU buffers of one usage, written alternately, grown by doubling when a write does not
/// fit (which recreates both and bumps [`PingPong::generation`] so users rebuild bind groups).
pub struct PingPong {
    label: &'static str,
    usage: wgpu::BufferUsages,
    capacity: u64,
    buffers: [wgpu::Buffer; SLOTS],
    generation: u64,
    written: [u64; SLOTS],
}

impl PingPong {
    /// Creates two buffers of `capacity` bytes (rounded up to 256) with `usage | COPY_DST`.
    pub fn new(
        device: &wgpu::Device,
        label: &'static str,
        usage: wgpu::BufferUsages,
        capacity: u64,
    ) -> PingPong {
        let capacity = capacity.max(256).next_multiple_of(256);
        let usage = usage | wgpu::BufferUsages::COPY_DST;
        PingPong {
            label,
            usage,
            capacity,
            buffers: Self::make(device, label, usage, capacity),
            generation: 0,
            written: [0; SLOTS],
        }
    }

    fn make(
        device: &wgpu::Device,
        label: &'static str,
        usage: wgpu::BufferUsages,
        capacity: u64,
    ) -> [wgpu::Buffer; SLOTS] {
        std::array::from_fn(|i| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("{label}[{i}]")),
                size: capacity,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// The slot frame `frame` writes: `frame % 2`.
    pub fn slot(frame: u64) -> usize {
        (frame % SLOTS as u64) as usize
    }

    /// Writes `bytes` at offset 0 of slot `frame.frame() % 2` through the frame's uploader
    /// (counted, in the frame's strategy), growing (doubling) both buffers first if needed.
    /// Returns the slot written.
    pub fn write(&mut self, frame: &mut super::frame::GpuFrame<'_>, bytes: &[u8]) -> usize {
        let device = frame.device();
        let need = (bytes.len() as u64).next_multiple_of(4);
        if need > self.capacity {
            let mut cap = self.capacity;
            while cap < need {
                cap *= 2;
            }
            let max = device.limits().max_buffer_size;
            self.capacity = cap.min(max.max(need));
            self.buffers = Self::make(device, self.label, self.usage, self.capacity);
            self.generation += 1;
        }
        let slot = Self::slot(frame.frame());
        frame.write(&self.buffers[slot], 0, bytes);
        self.written[slot] = bytes.len() as u64;
        slot
    }

    /// The buffer of `slot`.
    pub fn buffer(&self, slot: usize) -> &wgpu::Buffer {
        &self.buffers[slot]
    }

    /// Bytes last written into `slot`.
    pub fn written(&self, slot: usize) -> u64 {
        self.written[slot]
    }

    /// Capacity of each buffer in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Incremented whenever the buffers were recreated (bind groups must be rebuilt).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}
