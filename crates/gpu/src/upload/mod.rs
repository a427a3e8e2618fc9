//! CPU → GPU uploads: double-buffered (ping-pong) buffers and the upload strategies.
//!
//! Frame `n` writes slot `n % 2` while the GPU may still read slot `(n - 1) % 2` of the frame
//! before, so a write never targets a buffer that in-flight work reads (wgpu orders
//! `queue.write_buffer` before the next submit anyway; two slots keep bind groups stable and let
//! the previous frame's data stay readable, e.g. for interpolation).

//!
//! How the bytes reach the GPU is a run-time choice, [`Strategy`] (`--upload-strategy`, View ▸
//! Upload strategy, `vizdeck-lab --upload`), carried out by an [`Uploader`]:
//!
//! - [`Strategy::WriteBuffer`]: `queue.write_buffer` (wgpu copies into its own staging memory, then
//!   into the buffer at the next submit: one extra CPU copy).
//! - [`Strategy::StagingBelt`]: `wgpu::util::StagingBelt` (chunks of `MAP_WRITE` memory written in
//!   place, recalled with `map_async` after submit).
//! - [`Strategy::MapRing`]: vizdeck's own ring of `MAP_WRITE | COPY_SRC` buffers: a buffer is
//!   written only while mapped (owned by the CPU), unmapped before the copy is submitted, and
//!   re-mapped with `map_async` after submit; it comes back when the GPU is done with it. When no
//!   mapped buffer is free the write falls back to a fresh buffer created mapped, copied in its
//!   place in the frame's encoder (counted), never waits; so do the other strategies' staging
//!   rings.
//! - [`Strategy::MappedAtCreation`]: a fresh `COPY_SRC` buffer created mapped, written, unmapped and
//!   copied; meant for data written once ([`create_buffer_init`] skips the copy entirely).
//! - [`Strategy::ThreadedMap`]: the map ring, filled by several threads at once (payloads of 8 MiB
//!   and more split into chunks of at least 4 MiB, `std::thread::scope`, up to
//!   `available_parallelism` threads, at most 8: [`parallel`]).
//! - [`Strategy::HostImport`]: host memory the GPU reads in place (`VK_EXT_external_memory_host`,
//!   [`host`]). Three ways in, by who owns the bytes:
//!   - [`Uploader::write_host`] from a [`HostBytes`] the caller filled (page-aligned host memory
//!     imported once, CUDA's pinned memory): the GPU copies from it, no CPU copy at all (under
//!     every strategy);
//!   - [`Uploader::write_owned`] of an owned `Vec<u8>` / `Arc<[u8]>` / …: its aligned pages are
//!     imported for this one copy and the owner held until the GPU is done; the unaligned head
//!     and tail go through the copy path;
//!   - [`Uploader::write`] of borrowed bytes: copied (by several threads) into a ring of imported
//!     arenas the uploader owns, then copied by the GPU (a CPU copy again, into ordinary cached
//!     memory).
//!
//!   Where the device cannot import host memory (GL backend, other drivers, or
//!   [`UploaderOptions::host_import`] off) it falls back to [`Strategy::ThreadedMap`], said in one
//!   log line and counted in [`UploadCounters::host_import_fallbacks`].
//!
//! - [`Strategy::DeviceStaging`]: a ring of [`DirectBuffer`](direct::DirectBuffer)s, GPU memory
//!   the CPU maps (on a discrete GPU its BAR): the CPU writes the bytes across the bus into the
//!   GPU's memory ([`parallel::fill_pool`]), the GPU copies them from there (a device-to-device
//!   copy, no PCIe transfer in the frame's GPU time). Where the device has no such memory it
//!   falls back to [`Strategy::ThreadedMap`] (one log line, counted in
//!   [`UploadCounters::device_staging_fallbacks`]).
//!
//! The deck owns one [`Uploader`] and lends it to the scenes every frame through
//! [`GpuFrame`](super::frame::GpuFrame); every byte written through it is counted in its
//! [`UploadCounters`] (no process-wide state: two decks or two tests never disturb each other's
//! figures), and the frame stats report the per-frame difference as `BytesUploaded`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};

mod device_staging;
pub mod direct;
pub mod host;
mod host_import;
pub mod parallel;
mod ping_pong;
mod staging;

pub use host::{HostBytes, HostImportError, HostImporter, HostSource};
pub use ping_pong::PingPong;

/// Number of slots in a ping-pong set.
pub const SLOTS: usize = 2;

/// How CPU data is copied into GPU buffers (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// `queue.write_buffer`. Its writes land at the submit, before the encoder's copies: in one
    /// frame, a [`Uploader::write_host`] or [`Uploader::write_owned`] of the same range recorded
    /// before a [`Uploader::write`] lands after it (the other strategies keep the order).
    #[default]
    WriteBuffer,
    /// `wgpu::util::StagingBelt`.
    StagingBelt,
    /// A ring of `MAP_WRITE` staging buffers recycled with `map_async`.
    MapRing,
    /// A new staging buffer created with `mapped_at_creation` for every write.
    MappedAtCreation,
    /// The map ring filled by several threads at once (host-import's fallback; offered in the
    /// lab's tables, not in the menu).
    #[cfg_attr(feature = "clap", value(hide = true))]
    ThreadedMap,
    /// Host memory imported with `VK_EXT_external_memory_host`, read in place by the GPU's copy
    /// (borrowed bytes are first copied into an imported arena; falls back to threaded-map where
    /// the device cannot import).
    HostImport,
    /// Staging memory in the GPU's own memory that the CPU maps (device-local and host-visible:
    /// a BAR), written by the CPU (shared out over the rayon pool when large) and copied on the
    /// GPU from device memory; falls back to threaded-map where the device has no such memory
    /// (a comparison path of the lab's transfer table, not in the menu).
    #[cfg_attr(feature = "clap", value(hide = true))]
    DeviceStaging,
}

impl Strategy {
    /// Every strategy, in menu order.
    pub const ALL: [Strategy; 7] = [
        Strategy::WriteBuffer,
        Strategy::StagingBelt,
        Strategy::MapRing,
        Strategy::MappedAtCreation,
        Strategy::ThreadedMap,
        Strategy::HostImport,
        Strategy::DeviceStaging,
    ];

    /// The strategies the app offers (View ▸ Upload strategy): the four of wgpu's mapping model
    /// and the fastest for large uploads on a discrete GPU, host import (BENCHMARKS.md, "Uploads
    /// and readback"; on lavapipe the staging belt is the fastest, already among the four).
    pub const OFFERED: [Strategy; 5] = [
        Strategy::WriteBuffer,
        Strategy::StagingBelt,
        Strategy::MapRing,
        Strategy::MappedAtCreation,
        Strategy::HostImport,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::WriteBuffer => "write-buffer",
            Strategy::StagingBelt => "staging-belt",
            Strategy::MapRing => "map-ring",
            Strategy::MappedAtCreation => "mapped-at-creation",
            Strategy::ThreadedMap => "threaded-map",
            Strategy::HostImport => "host-import",
            Strategy::DeviceStaging => "device-staging",
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
    /// The source range is not inside the [`HostBytes`] (`write_host`).
    #[error("source range {start}..{end} is not inside host bytes of length {len}")]
    Source {
        /// Start of the range, bytes.
        start: usize,
        /// End of the range (exclusive), bytes.
        end: usize,
        /// Length of the host bytes.
        len: usize,
    },
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
    /// Writes that found no free staging memory ([`Strategy::MapRing`] and
    /// [`Strategy::ThreadedMap`]: no mapped buffer; [`Strategy::HostImport`]: no idle arena;
    /// [`Strategy::DeviceStaging`]: no idle staging buffer, or one could not be made now: out of
    /// memory, or a host-import arena past the device's largest buffer) and went through a
    /// fresh buffer created mapped instead, copied in order with the frame's other writes.
    pub fallbacks: u64,
    /// Staging buffers created by the ring.
    pub ring_buffers_created: u64,
    /// Bytes the GPU copied straight from imported host memory, no CPU copy
    /// ([`Uploader::write_host`], [`Uploader::write_owned`]); part of `bytes`.
    pub imported_bytes: u64,
    /// Writes under [`Strategy::HostImport`] that could not import (device without
    /// `VK_EXT_external_memory_host`, import turned off or refused by the driver) and went
    /// through [`Strategy::ThreadedMap`] instead (`write_host` of memory that is not imported
    /// included).
    pub host_import_fallbacks: u64,
    /// Writes under [`Strategy::DeviceStaging`] that went through [`Strategy::ThreadedMap`]
    /// because the device has no GPU memory the CPU can map.
    pub device_staging_fallbacks: u64,
}

/// Options of an [`Uploader`] ([`Uploader::with_options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploaderOptions {
    /// Whether [`Strategy::HostImport`] may import host memory (default `true`); `false` forces
    /// its fallback, as on a device without `VK_EXT_external_memory_host`.
    pub host_import: bool,
    /// Whether [`Strategy::DeviceStaging`] may map GPU memory (default `true`); `false` forces its
    /// fallback, as on a device without device-local host-visible memory.
    pub device_staging: bool,
    /// Threads of one staging copy ([`Strategy::ThreadedMap`], the host-import arena), at least
    /// 1; default [`parallel::default_threads`].
    pub threads: usize,
}

impl Default for UploaderOptions {
    fn default() -> Self {
        UploaderOptions {
            host_import: true,
            device_staging: true,
            threads: parallel::default_threads(),
        }
    }
}

/// One log line per process when host import is not available (the deck has two uploaders).
static HOST_IMPORT_FALLBACK_LOGGED: AtomicBool = AtomicBool::new(false);
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
    options: UploaderOptions,
    /// The host importer, made on the first host-import write (`None`: not tried yet).
    importer: Option<Result<HostImporter, HostImportError>>,
    /// [`Strategy::HostImport`]'s staging arenas (imported host memory the uploader owns).
    arenas: Vec<HostBytes>,
    /// Busy flags of imported memory copied from in this frame, cleared when its work is done.
    busy: Vec<Arc<AtomicU32>>,
    /// [`Strategy::DeviceStaging`]'s staging buffers, each with its busy count (copies in
    /// flight); the error when the device cannot make them (the strategy falls back).
    device_staging: Vec<(direct::DirectBuffer, Arc<AtomicU32>)>,
    device_staging_error: Option<direct::DirectError>,
    /// The queue of the writes (for `on_submitted_work_done`).
    queue: Option<wgpu::Queue>,
    /// What was done so far.
    pub counters: UploadCounters,
}

/// Default chunk of the staging belt, bytes.
pub(crate) const BELT_CHUNK: u64 = 1 << 20;
/// Most staging buffers the map ring keeps.
pub const RING_MAX: usize = 4;
/// The pieces [`Strategy::DeviceStaging`] shares its CPU copy out in, bytes (64 KiB: smaller
/// copies stay on the calling thread).
pub(crate) const DEVICE_STAGING_CHUNK: usize = 64 << 10;

impl Uploader {
    /// An uploader for `strategy`, default [`UploaderOptions`].
    pub fn new(device: &wgpu::Device, strategy: Strategy) -> Uploader {
        Uploader::with_options(device, strategy, UploaderOptions::default())
    }

    /// An uploader for `strategy` with `options` (e.g. host import forced off, to test the
    /// fallback).
    pub fn with_options(
        device: &wgpu::Device,
        strategy: Strategy,
        options: UploaderOptions,
    ) -> Uploader {
        Uploader {
            strategy,
            belt: (strategy == Strategy::StagingBelt)
                .then(|| wgpu::util::StagingBelt::new(device.clone(), BELT_CHUNK)),
            ring: Vec::new(),
            ring_max: RING_MAX,
            used: Vec::new(),
            padded: Vec::new(),
            options: UploaderOptions {
                threads: options.threads.max(1),
                ..options
            },
            importer: None,
            arenas: Vec::new(),
            busy: Vec::new(),
            device_staging: Vec::new(),
            device_staging_error: None,
            queue: None,
            counters: UploadCounters::default(),
        }
    }

    /// Its options.
    pub fn options(&self) -> UploaderOptions {
        self.options
    }

    /// The host importer, made on first use; `None` (with one log line per process) where host
    /// memory cannot be imported or import is turned off.
    fn importer(&mut self, device: &wgpu::Device) -> Option<&HostImporter> {
        let host_import = self.options.host_import;
        let made = self.importer.get_or_insert_with(|| {
            let r = if host_import {
                HostImporter::new(device)
            } else {
                Err(HostImportError::Disabled)
            };
            if let Err(e) = &r {
                if !HOST_IMPORT_FALLBACK_LOGGED.swap(true, Ordering::Relaxed) {
                    log::warn!("upload strategy host-import: {e}; using threaded-map instead");
                } else {
                    log::debug!("upload strategy host-import: {e}; using threaded-map instead");
                }
            }
            r
        });
        made.as_ref().ok()
    }

    /// Why [`Strategy::HostImport`] falls back on this uploader's device (`None`: it imports, or
    /// no host-import write was made yet).
    pub fn host_import_error(&self) -> Option<&HostImportError> {
        self.importer.as_ref().and_then(|r| r.as_ref().err())
    }

    /// The strategy writes actually use: [`strategy`](Self::strategy), except
    /// [`Strategy::HostImport`] where it falls back ([`Strategy::ThreadedMap`]); known after the
    /// first write.
    pub fn effective_strategy(&self) -> Strategy {
        match (self.strategy, &self.importer) {
            (Strategy::HostImport, Some(Err(_))) => Strategy::ThreadedMap,
            (Strategy::DeviceStaging, _) if self.device_staging_error.is_some() => {
                Strategy::ThreadedMap
            }
            (s, _) => s,
        }
    }

    /// Host-import staging arenas the uploader holds now.
    pub fn arena_len(&self) -> usize {
        self.arenas.len()
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
        if strategy != Strategy::HostImport {
            // Busy arenas stay alive in wgpu until their copies are done (see `host`).
            self.arenas.clear();
        }
        if strategy != Strategy::DeviceStaging {
            // Likewise the staging buffers (wgpu frees them once their copies are done).
            self.device_staging.clear();
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
        self.count_write(bytes.len());
    }

    /// Writes `bytes` into `dst` at `offset` (a multiple of 4); a length that is not a multiple of
    /// 4 is padded with zeros (the padding bytes are written too). Records the copy into `encoder`
    /// (all strategies but [`Strategy::WriteBuffer`], which goes through the queue).
    /// `bytes` is borrowed: every strategy copies it on the CPU before returning
    /// ([`Strategy::HostImport`] into an imported arena); [`write_host`](Self::write_host) and
    /// [`write_owned`](Self::write_owned) avoid that copy.
    ///
    /// # Errors
    ///
    /// [`UploadError::Offset`], [`UploadError::Range`]; [`UploadError::Map`] when a staging
    /// buffer cannot be written (nothing is uploaded then).
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
        let len = self.begin(queue, dst, offset, bytes.len())?;
        self.write_checked(device, queue, encoder, dst, offset, bytes, len)?;
        self.count_write(bytes.len());
        Ok(())
    }

    /// The start of a buffer write of `bytes` (not 0) bytes: [`check`](Self::check)s it and
    /// remembers the queue; returns the length padded to 4.
    fn begin(
        &mut self,
        queue: &wgpu::Queue,
        dst: &wgpu::Buffer,
        offset: u64,
        bytes: usize,
    ) -> Result<u64, UploadError> {
        let len = Self::check(dst, offset, bytes)?;
        self.remember_queue(queue);
        Ok(len)
    }

    /// Counts one write of `bytes` bytes.
    fn count_write(&mut self, bytes: usize) {
        self.counters.bytes += bytes as u64;
        self.counters.writes += 1;
    }

    /// Checks `offset` and the range; returns the length padded to 4.
    fn check(dst: &wgpu::Buffer, offset: u64, bytes: usize) -> Result<u64, UploadError> {
        if !offset.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
            return Err(UploadError::Offset(offset));
        }
        let len = (bytes as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        if offset.checked_add(len).is_none_or(|end| end > dst.size()) {
            return Err(UploadError::Range {
                len,
                offset,
                size: dst.size(),
            });
        }
        Ok(len)
    }

    fn remember_queue(&mut self, queue: &wgpu::Queue) {
        if self.queue.is_none() {
            self.queue = Some(queue.clone());
        }
    }

    /// `bytes` padded with zeros to `len` (a copy only when padding is needed).
    fn padded<'a>(padded: &'a mut Vec<u8>, bytes: &'a [u8], len: u64) -> &'a [u8] {
        if len as usize == bytes.len() {
            bytes
        } else {
            padded.clear();
            padded.extend_from_slice(bytes);
            padded.resize(len as usize, 0);
            padded
        }
    }

    /// Call before `queue.submit` of the encoder the writes went into (unmaps the belt's chunks).
    pub fn finish(&mut self) {
        if let Some(b) = &mut self.belt {
            b.finish();
        }
    }

    /// Call right after `queue.submit`: asks for the staging memory back (`map_async`; imported
    /// host memory through `Queue::on_submitted_work_done`); it returns once the GPU has finished
    /// the copies, seen at a later device poll. Imported memory copied from and never followed by
    /// `after_submit` stays busy.
    pub fn after_submit(&mut self) {
        if let Some(b) = &mut self.belt {
            b.recall();
        }
        if !self.busy.is_empty() {
            let flags = std::mem::take(&mut self.busy);
            if let Some(queue) = &self.queue {
                // Imported host memory copied from in this submit is idle again once it is done.
                queue.on_submitted_work_done(move || {
                    for f in flags {
                        f.fetch_sub(1, Ordering::AcqRel);
                    }
                });
            }
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
