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

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};

pub mod direct;
pub mod host;
pub mod parallel;

pub use host::{HostBytes, HostImportError, HostImporter, HostSource};

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
    /// The map ring filled by several threads at once.
    ThreadedMap,
    /// Host memory imported with `VK_EXT_external_memory_host`, read in place by the GPU's copy
    /// (borrowed bytes are first copied into an imported arena; falls back to threaded-map where
    /// the device cannot import).
    HostImport,
    /// Staging memory in the GPU's own memory that the CPU maps (device-local and host-visible:
    /// a BAR), written by the CPU (shared out over the rayon pool when large) and copied on the
    /// GPU from device memory; falls back to threaded-map where the device has no such memory.
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
/// Likewise for device staging.
static DEVICE_STAGING_FALLBACK_LOGGED: AtomicBool = AtomicBool::new(false);

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
pub const BELT_CHUNK: u64 = 1 << 20;
/// Most staging buffers the map ring keeps.
pub const RING_MAX: usize = 4;
/// The pieces [`Strategy::DeviceStaging`] shares its CPU copy out in, bytes (64 KiB: smaller
/// copies stay on the calling thread).
pub const DEVICE_STAGING_CHUNK: usize = 64 << 10;

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

    /// [`write`](Self::write) after the checks, not counted. `len` is `bytes.len()` padded to 4.
    #[allow(clippy::disallowed_methods)] // the uploader is what carries out write-buffer uploads
    #[allow(clippy::too_many_arguments)]
    fn write_checked(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        offset: u64,
        bytes: &[u8],
        len: u64,
    ) -> Result<(), UploadError> {
        let mut strategy = self.strategy;
        // The strategies with staging memory of their own: staged, or all of it in flight, or
        // not available on this device (then threaded-map, counted apart).
        let staged = match strategy {
            Strategy::DeviceStaging => {
                let error = |up: &Self| up.device_staging_error.is_some();
                Some(if error(self) {
                    Staged::Unavailable
                } else if self.write_device_staging(device, encoder, dst, offset, bytes, len) {
                    Staged::Done
                } else if error(self) {
                    Staged::Unavailable
                } else {
                    Staged::Busy
                })
            }
            Strategy::HostImport => Some(if self.importer(device).is_none() {
                Staged::Unavailable
            } else if self.write_arena(device, encoder, dst, offset, bytes, len)? {
                Staged::Done
            } else if self.host_import_error().is_some() {
                // The arena's import failed: host-import is off for this uploader from now on.
                Staged::Unavailable
            } else {
                Staged::Busy
            }),
            _ => None,
        };
        match staged {
            Some(Staged::Done) => return Ok(()),
            Some(Staged::Busy) => {
                // Every staging buffer in flight: never wait.
                self.counters.fallbacks += 1;
                let threads = self.options.threads;
                return copy_through_new_buffer(device, encoder, dst, offset, bytes, len, threads);
            }
            Some(Staged::Unavailable) => {
                if strategy == Strategy::DeviceStaging {
                    self.counters.device_staging_fallbacks += 1;
                } else {
                    self.counters.host_import_fallbacks += 1;
                }
                strategy = Strategy::ThreadedMap;
            }
            None => {}
        }
        match strategy {
            Strategy::WriteBuffer => {
                queue.write_buffer(dst, offset, Self::padded(&mut self.padded, bytes, len))
            }
            Strategy::StagingBelt => {
                let belt = self.belt.get_or_insert_with(|| {
                    wgpu::util::StagingBelt::new(device.clone(), BELT_CHUNK)
                });
                let size = wgpu::BufferSize::new(len).ok_or(UploadError::Offset(offset))?;
                belt.write_buffer(encoder, dst, offset, size)
                    .copy_from_slice(Self::padded(&mut self.padded, bytes, len));
            }
            Strategy::MapRing
            | Strategy::ThreadedMap
            | Strategy::HostImport
            | Strategy::DeviceStaging => {
                let threads = if strategy == Strategy::MapRing {
                    1
                } else {
                    self.options.threads
                };
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
                            parallel::fill(view.slice(..), bytes, threads);
                        }
                        rb.buffer.unmap();
                        rb.state.store(RING_IN_USE, Ordering::Release);
                        encoder.copy_buffer_to_buffer(&rb.buffer, 0, dst, offset, len);
                        self.used.push(i);
                    }
                    None => {
                        self.counters.fallbacks += 1;
                        copy_through_new_buffer(device, encoder, dst, offset, bytes, len, threads)?;
                    }
                }
            }
            Strategy::MappedAtCreation => {
                copy_through_new_buffer(device, encoder, dst, offset, bytes, len, 1)?;
            }
        }
        Ok(())
    }

    /// [`Strategy::HostImport`]'s copy path: `bytes` copied (on several threads when large) into
    /// an idle imported arena, then a GPU copy from it. `false` when no arena is idle (all in
    /// flight, or a new one could not be made; a failed import also turns host import off,
    /// [`host_import_error`](Self::host_import_error)): nothing written.
    fn write_arena(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        offset: u64,
        bytes: &[u8],
        len: u64,
    ) -> Result<bool, UploadError> {
        let Some(i) = self.arena_slot(device, len) else {
            return Ok(false);
        };
        let threads = self.options.threads;
        let arena = &mut self.arenas[i];
        let Some(staging) = arena.bytes_mut() else {
            return Ok(false);
        };
        parallel::fill(&mut staging[..len as usize], bytes, threads);
        let Some(src) = arena.buffer() else {
            return Ok(false);
        };
        encoder.copy_buffer_to_buffer(src, 0, dst, offset, len);
        let flag = arena.mark_busy();
        self.busy.push(flag);
        Ok(true)
    }

    /// [`Strategy::DeviceStaging`]'s path: `bytes` written by the CPU into an idle staging buffer
    /// in the GPU's memory (padded to `len`), then a GPU copy from it. `false` when every buffer
    /// is in flight or a new one cannot be made now (out of memory: the caller falls back for this
    /// write), or the device has no such memory at all (then [`Self::device_staging_error`] is
    /// set, said once in the log, and the strategy falls back from here on): nothing written.
    fn write_device_staging(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        offset: u64,
        bytes: &[u8],
        len: u64,
    ) -> bool {
        let slot = Slot::choose(
            &self.device_staging,
            self.ring_max,
            len,
            |(d, _)| d.size(),
            |(_, b)| b.load(Ordering::Acquire) == 0,
        );
        let i = match slot {
            None => return false,
            Some(Slot::Use(i)) => i,
            Some(Slot::New(replace)) => {
                let made = if self.options.device_staging {
                    let size = staging_size(len, device.limits().max_buffer_size);
                    direct::DirectBuffer::new(device, "upload:device-staging", size)
                } else {
                    Err(direct::DirectError::Disabled)
                };
                let slot = match made {
                    Ok(d) => (d, Arc::new(AtomicU32::new(0))),
                    Err(
                        e @ (direct::DirectError::NotVulkan
                        | direct::DirectError::NoMemoryType { .. }
                        | direct::DirectError::Disabled),
                    ) => {
                        // The device has no such memory: threaded-map from now on.
                        let line = format!(
                            "upload strategy device-staging: {e}; using threaded-map instead"
                        );
                        if DEVICE_STAGING_FALLBACK_LOGGED.swap(true, Ordering::Relaxed) {
                            log::debug!("{line}");
                        } else {
                            log::warn!("{line}");
                        }
                        self.device_staging_error = Some(e);
                        self.device_staging.clear();
                        return false;
                    }
                    Err(e) => {
                        // This size, this time (out of memory in a small BAR heap): this write
                        // falls back, the next one tries again.
                        log::debug!("upload: device-staging buffer for {len} bytes: {e}");
                        return false;
                    }
                };
                self.counters.ring_buffers_created += 1;
                Slot::put(&mut self.device_staging, replace, slot)
            }
        };
        let (staging, busy) = &mut self.device_staging[i];
        // The bytes, then their padding to 4 written apart (no copy of the bytes to pad them).
        let pad = &[0u8; 3][..(len as usize).saturating_sub(bytes.len()).min(3)];
        let written = staging
            .write(0, bytes, DEVICE_STAGING_CHUNK)
            .and_then(|_| staging.write(bytes.len() as u64, pad, usize::MAX));
        if let Err(e) = written {
            // A flush that failed: the buffer is not used again.
            log::warn!("upload strategy device-staging: {e}");
            self.device_staging.swap_remove(i);
            return false;
        }
        encoder.copy_buffer_to_buffer(staging.buffer(), 0, dst, offset, len);
        busy.fetch_add(1, Ordering::AcqRel);
        self.busy.push(busy.clone());
        true
    }

    /// Why [`Strategy::DeviceStaging`] falls back on this uploader's device (`None`: it works,
    /// or no write was made yet).
    pub fn device_staging_error(&self) -> Option<&direct::DirectError> {
        self.device_staging_error.as_ref()
    }

    /// An idle arena of at least `len` bytes: the smallest idle one, else a new one (while fewer
    /// than [`RING_MAX`]), else an idle smaller one replaced by a larger one. `None` when all are
    /// in flight or the import fails.
    fn arena_slot(&mut self, device: &wgpu::Device, len: u64) -> Option<usize> {
        let slot = Slot::choose(
            &self.arenas,
            self.ring_max,
            len,
            |a| a.len() as u64,
            |a| !a.is_busy(),
        )?;
        let replace = match slot {
            Slot::Use(i) => return Some(i),
            Slot::New(replace) => replace,
        };
        let importer = self.importer(device)?;
        let align = importer.alignment().max(host::PAGE);
        let Some(size) = arena_size(len, device.limits().max_buffer_size, align) else {
            // Larger than any buffer the device makes: this write falls back, import stays on.
            log::debug!("upload: no host-import arena can hold {len} bytes");
            return None;
        };
        let size = usize::try_from(size).ok()?;
        let made = HostBytes::with_importer(Some(importer), "upload:host-import:arena", size);
        let arena = match made {
            Ok(a) if a.is_imported() => a,
            Ok(a) => {
                // The device said it imports, the import failed: not tried again (each try
                // allocates the arena anew).
                let e = a
                    .import_error()
                    .cloned()
                    .unwrap_or(HostImportError::Disabled);
                log::warn!(
                    "upload strategy host-import: importing a staging arena of {size} bytes: \
                         {e}; using threaded-map instead"
                );
                self.importer = Some(Err(e));
                return None;
            }
            Err(e) => {
                log::debug!("upload: host-import arena of {size} bytes: {e}");
                return None;
            }
        };
        self.counters.ring_buffers_created += 1;
        Some(Slot::put(&mut self.arenas, replace, arena))
    }

    /// Uploads `src[range]` into `dst` at `offset` (a multiple of 4) with no CPU copy where `src`
    /// is imported: the GPU copies the 4-byte multiple at the start of the range straight from
    /// `src`'s pages (under every strategy), a tail of 1–3 bytes (padded with zeros to 4) and a
    /// range starting off a multiple of 4 go through [`write`](Self::write)'s path, as does all
    /// of a `src` that is not imported. `src` reports busy ([`HostBytes::bytes_mut`] is `None`)
    /// from here until the GPU has done the copy (seen at a device poll after
    /// [`after_submit`](Self::after_submit)). Counted as one write of `range.len()` bytes
    /// (`imported_bytes` for the part read in place).
    ///
    /// # Errors
    ///
    /// [`UploadError::Source`] for a range outside `src`; as [`write`](Self::write) otherwise.
    #[allow(clippy::too_many_arguments)]
    pub fn write_host(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        offset: u64,
        src: &HostBytes,
        range: Range<usize>,
    ) -> Result<(), UploadError> {
        let bytes = src
            .as_slice()
            .get(range.clone())
            .ok_or(UploadError::Source {
                start: range.start,
                end: range.end,
                len: src.len(),
            })?;
        if bytes.is_empty() {
            return Ok(());
        }
        let len = self.begin(queue, dst, offset, bytes.len())?;
        let body = match src.buffer() {
            Some(buffer) if range.start.is_multiple_of(4) && bytes.len() >= 4 => {
                let body = bytes.len() / 4 * 4;
                encoder.copy_buffer_to_buffer(buffer, range.start as u64, dst, offset, body as u64);
                self.busy.push(src.mark_busy());
                self.counters.imported_bytes += body as u64;
                body
            }
            _ => 0,
        };
        if body < bytes.len() {
            self.write_checked(
                device,
                queue,
                encoder,
                dst,
                offset + body as u64,
                &bytes[body..],
                len - body as u64,
            )?;
        }
        self.count_write(bytes.len());
        Ok(())
    }

    /// Uploads the bytes `owner` holds into `dst` at `offset` (a multiple of 4), taking the
    /// owner. Under [`Strategy::HostImport`] on a device that imports host memory, the pages
    /// wholly inside the bytes (from the first multiple of `minImportedHostPointerAlignment` on,
    /// whole multiples of it) are imported for this one copy and read in place by the GPU; the
    /// head before them and the tail after them go through [`write`](Self::write)'s path, and
    /// the owner is dropped only once the GPU copy is done and the imported memory freed (not
    /// at `write_owned`'s return). Bytes too short to hold one aligned page, a head that is not
    /// a multiple of 4, another strategy, or a failed import: all through `write`'s path (the
    /// owner dropped here). Counted as one write of all the bytes.
    ///
    /// Each import pins the pages anew (the driver's cost, measured by `vizdeck-lab --upload
    /// host-import` as `host-import:owned`); bytes uploaded every frame are better kept in a
    /// [`HostBytes`] ([`write_host`](Self::write_host)).
    ///
    /// # Errors
    ///
    /// As [`write`](Self::write).
    #[allow(clippy::too_many_arguments)]
    pub fn write_owned<S: HostSource>(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        offset: u64,
        owner: S,
    ) -> Result<(), UploadError> {
        let owner = Arc::new(owner);
        let bytes = owner.host_bytes();
        if bytes.is_empty() {
            return Ok(());
        }
        let len = self.begin(queue, dst, offset, bytes.len())?;
        let imported = self.import_owned(device, &owner);
        match imported {
            Some((buffer, head, body)) => {
                if head > 0 {
                    self.write_checked(
                        device,
                        queue,
                        encoder,
                        dst,
                        offset,
                        &bytes[..head],
                        head as u64,
                    )?;
                }
                encoder.copy_buffer_to_buffer(&buffer, 0, dst, offset + head as u64, body as u64);
                self.counters.imported_bytes += body as u64;
                let rest = head + body;
                if rest < bytes.len() {
                    let tail = &bytes[rest..];
                    self.write_checked(
                        device,
                        queue,
                        encoder,
                        dst,
                        offset + rest as u64,
                        tail,
                        len - rest as u64,
                    )?;
                }
                // `buffer` is dropped here; the encoder keeps it (and so the owner) alive until
                // its submission is done, or until the encoder is dropped unsubmitted.
            }
            None => {
                // Under host-import this copies into an arena (threaded-map where the device
                // cannot import, counted there).
                self.write_checked(device, queue, encoder, dst, offset, bytes, len)?;
            }
        }
        self.count_write(bytes.len());
        Ok(())
    }

    /// [`write_owned`](Self::write_owned)'s import: under [`Strategy::HostImport`] on a device
    /// that imports, the aligned pages wholly inside `owner`'s bytes imported for one copy, with
    /// `owner` kept until the imported memory is freed. Returns the buffer, the head before it
    /// and its length (bytes); `None` where nothing is imported (a failed import counted).
    fn import_owned<S: HostSource>(
        &mut self,
        device: &wgpu::Device,
        owner: &Arc<S>,
    ) -> Option<(wgpu::Buffer, usize, usize)> {
        if self.strategy != Strategy::HostImport {
            return None;
        }
        let bytes = owner.host_bytes();
        let imp = self.importer(device)?;
        let align = imp.alignment() as usize;
        let head = (bytes.as_ptr() as usize).next_multiple_of(align) - bytes.as_ptr() as usize;
        let body = bytes.len().checked_sub(head)? / align * align;
        if body == 0 || !head.is_multiple_of(4) {
            return None;
        }
        let keep: Box<dyn Send + Sync> = Box::new(owner.clone());
        // SAFETY: `head..head + body` lies inside the owner's bytes, which live on the heap
        // (a `HostSource`: moving the owner does not move them) and never change while owned;
        // `keep` owns them until the imported memory is freed.
        let r = unsafe {
            imp.import(
                "upload:host-import:owned",
                bytes[head..].as_ptr(),
                body as u64,
                keep,
            )
        };
        match r {
            Ok(buffer) => Some((buffer, head, body)),
            Err(e) => {
                log::debug!("upload: importing {body} bytes failed ({e}); copied instead");
                self.counters.host_import_fallbacks += 1;
                None
            }
        }
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
        let slot = Slot::choose(
            ring,
            max,
            len,
            |r| r.buffer.size(),
            |r| r.state.load(Ordering::Acquire) == RING_MAPPED,
        )?;
        let replace = match slot {
            Slot::Use(i) => return Some(i),
            Slot::New(replace) => replace,
        };
        counters.ring_buffers_created += 1;
        let made = RingBuffer {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("upload:map-ring:staging"),
                size: staging_size(len, device.limits().max_buffer_size),
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            }),
            state: Arc::new(AtomicU8::new(RING_MAPPED)),
        };
        Some(Slot::put(ring, replace, made))
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

/// What a strategy with staging memory of its own made of a write.
enum Staged {
    /// Staged and its copy recorded.
    Done,
    /// Every staging buffer in flight (the write falls back once).
    Busy,
    /// The device cannot do it (the strategy falls back to threaded-map).
    Unavailable,
}

/// `bytes` into a fresh `COPY_SRC` buffer of `len` bytes (≥ `bytes.len()`, the rest zero)
/// created mapped, filled on `threads` threads and unmapped, then copied into `dst` at `offset`
/// by `encoder`: [`Strategy::MappedAtCreation`], and every strategy's fallback when its staging
/// memory is all in flight. The copy keeps its place among the encoder's other copies, so a
/// later write of the same range wins (`queue.write_buffer` would land before all of them, at
/// the submit).
///
/// # Errors
///
/// [`UploadError::Map`] when the new buffer's mapping cannot be had.
fn copy_through_new_buffer(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    dst: &wgpu::Buffer,
    offset: u64,
    bytes: &[u8],
    len: u64,
    threads: usize,
) -> Result<(), UploadError> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("upload:staging:mapped-at-creation"),
        size: len,
        usage: wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: true,
    });
    {
        let mut view = staging
            .slice(..)
            .get_mapped_range_mut()
            .map_err(|e| UploadError::Map(e.to_string()))?;
        parallel::fill(view.slice(..), bytes, threads);
    }
    staging.unmap();
    encoder.copy_buffer_to_buffer(&staging, 0, dst, offset, len);
    Ok(())
}

/// The size of a new host-import arena for a write of `len` bytes: as [`staging_size`] under a
/// cap of `max` (the device's `max_buffer_size`) rounded down to `align` (the import alignment),
/// then rounded up to `align`; `None` when `len` is over that cap (the write falls back, host
/// import stays on; an arena over `max_buffer_size` would fail to import, which turns import
/// off).
fn arena_size(len: u64, max: u64, align: u64) -> Option<u64> {
    let cap = max / align * align;
    let size = staging_size(len, cap).checked_next_multiple_of(align)?;
    (size <= cap).then_some(size)
}

/// The size of a new staging buffer for a write of `len` bytes (a multiple of 4, at most `max`):
/// the next power of two, at least 64 KiB, at most `max` rounded down to 4 (still ≥ `len`, since
/// `len` fits a destination buffer).
fn staging_size(len: u64, max: u64) -> u64 {
    len.next_power_of_two()
        .max(64 * 1024)
        .min(max / 4 * 4)
        .max(len)
}

/// Where a staging write of `len` bytes goes among a strategy's staging buffers (the map ring,
/// the host-import arenas, the device-staging buffers): the smallest idle one of at least `len`
/// bytes, else a new one (appended while there are fewer than `max`, else in place of an idle
/// smaller one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Write into item `i`.
    Use(usize),
    /// Make a new one: appended (`None`) or in place of idle item `Some(i)`.
    New(Option<usize>),
}

impl Slot {
    /// The slot for `len` bytes among `items` (`size` and `idle` of each); `None` when every item
    /// is in flight and there are `max` of them.
    fn choose<T>(
        items: &[T],
        max: usize,
        len: u64,
        size: impl Fn(&T) -> u64,
        idle: impl Fn(&T) -> bool,
    ) -> Option<Slot> {
        if let Some((i, _)) = items
            .iter()
            .enumerate()
            .filter(|(_, t)| idle(t) && size(t) >= len)
            .min_by_key(|(_, t)| size(t))
        {
            return Some(Slot::Use(i));
        }
        if items.len() < max {
            return Some(Slot::New(None));
        }
        items.iter().position(idle).map(|i| Slot::New(Some(i)))
    }

    /// Puts `made` where `New(replace)` says (appended when `replace` is out of range);
    /// returns its index.
    fn put<T>(items: &mut Vec<T>, replace: Option<usize>, made: T) -> usize {
        match replace.and_then(|i| items.get_mut(i).map(|t| (i, t))) {
            Some((i, t)) => {
                *t = made;
                i
            }
            None => {
                items.push(made);
                items.len() - 1
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

#[cfg(test)]
mod tests {
    use super::{Slot, arena_size, staging_size};

    #[test]
    fn staging_buffers_are_powers_of_two_within_the_limit() {
        assert_eq!(staging_size(1000, 1 << 30), 64 << 10);
        assert_eq!(staging_size((1 << 20) + 4, 1 << 30), 2 << 20);
        // Over the device's largest buffer: the limit (a multiple of 4), never under `len`.
        let max = (1u64 << 31) - 1;
        assert_eq!(staging_size((1 << 30) + 8, max), max / 4 * 4);
        assert_eq!(staging_size(max / 4 * 4, max), max / 4 * 4);
    }

    /// A host-import arena: a power of two of at least 64 KiB holding the write, never over the
    /// device's largest buffer rounded down to the import alignment, always a multiple of it;
    /// none for a write larger than that cap.
    #[test]
    fn a_host_import_arena_fits_the_device_and_the_alignment() {
        let page = 4096;
        assert_eq!(arena_size(1000, 1 << 30, page), Some(64 << 10));
        assert_eq!(arena_size((1 << 20) + 4, 1 << 30, page), Some(2 << 20));
        // A largest buffer that is not a power of two (3 GiB + 100 bytes): capped at 3 GiB.
        let max = (3 << 30) + 100;
        assert_eq!(arena_size((2 << 30) + 8, max, page), Some(3 << 30));
        assert_eq!(arena_size(3 << 30, max, page), Some(3 << 30));
        assert_eq!(arena_size((3 << 30) + 4, max, page), None);
        // A 64 KiB import alignment rounds up.
        assert_eq!(arena_size(1000, 1 << 30, 64 << 10), Some(64 << 10));
        assert_eq!(
            arena_size((64 << 10) + 4, (96 << 10) + 8, 32 << 10),
            Some(96 << 10)
        );
    }

    #[test]
    fn a_staging_write_takes_the_smallest_idle_fit_else_a_new_buffer() {
        // (size, idle) of each staging buffer.
        let items = [(64u64, true), (256, false), (128, true), (512, true)];
        let choose =
            |items: &[(u64, bool)], max, len| Slot::choose(items, max, len, |t| t.0, |t| t.1);
        assert_eq!(choose(&items, 4, 100), Some(Slot::Use(2)));
        assert_eq!(choose(&items, 4, 64), Some(Slot::Use(0)));
        assert_eq!(choose(&items, 4, 300), Some(Slot::Use(3)));
        // Nothing idle fits: appended while under the limit, else in place of the first idle one.
        assert_eq!(choose(&items, 5, 600), Some(Slot::New(None)));
        assert_eq!(choose(&items, 4, 600), Some(Slot::New(Some(0))));
        let busy = [(64u64, false), (128, false)];
        assert_eq!(choose(&busy, 2, 8), None);
        let mut v = vec![1, 2];
        assert_eq!((Slot::put(&mut v, Some(1), 7), &v[..]), (1, &[1, 7][..]));
        assert_eq!((Slot::put(&mut v, None, 9), &v[..]), (2, &[1, 7, 9][..]));
    }
}
