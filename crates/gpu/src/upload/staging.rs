//! How a checked write reaches the GPU under each strategy ([`Uploader::write`]'s path after
//! its checks): `queue.write_buffer`, the staging belt, the map ring (filled on one thread or
//! several), a buffer mapped at creation, and the fallbacks; the slot choice every strategy's
//! staging buffers share.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use super::{
    BELT_CHUNK, RING_FAILED, RING_IN_USE, RING_MAPPED, RingBuffer, Strategy, UploadCounters,
    UploadError, Uploader, parallel,
};

impl Uploader {
    /// [`write`](Self::write) after the checks, not counted. `len` is `bytes.len()` padded to 4.
    #[allow(clippy::disallowed_methods)] // the uploader is what carries out write-buffer uploads
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write_checked(
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

    /// A mapped ring buffer of at least `len` bytes: the smallest free one, else a new one (while
    /// fewer than `max`), else a free smaller one replaced by a larger one. `None` when all are in
    /// use by the GPU.
    pub(super) fn ring_slot(
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
}

/// What a strategy with staging memory of its own made of a write.
pub(super) enum Staged {
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
pub(super) fn copy_through_new_buffer(
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

/// The size of a new staging buffer for a write of `len` bytes (a multiple of 4, at most `max`):
/// the next power of two, at least 64 KiB, at most `max` rounded down to 4 (still ≥ `len`, since
/// `len` fits a destination buffer).
pub(super) fn staging_size(len: u64, max: u64) -> u64 {
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
pub(super) enum Slot {
    /// Write into item `i`.
    Use(usize),
    /// Make a new one: appended (`None`) or in place of idle item `Some(i)`.
    New(Option<usize>),
}

impl Slot {
    /// The slot for `len` bytes among `items` (`size` and `idle` of each); `None` when every item
    /// is in flight and there are `max` of them.
    pub(super) fn choose<T>(
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
    pub(super) fn put<T>(items: &mut Vec<T>, replace: Option<usize>, made: T) -> usize {
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

#[cfg(test)]
mod tests {
    use super::{Slot, staging_size};

    #[test]
    fn staging_buffers_are_powers_of_two_within_the_limit() {
        assert_eq!(staging_size(1000, 1 << 30), 64 << 10);
        assert_eq!(staging_size((1 << 20) + 4, 1 << 30), 2 << 20);
        // Over the device's largest buffer: the limit (a multiple of 4), never under `len`.
        let max = (1u64 << 31) - 1;
        assert_eq!(staging_size((1 << 30) + 8, max), max / 4 * 4);
        assert_eq!(staging_size(max / 4 * 4, max), max / 4 * 4);
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
