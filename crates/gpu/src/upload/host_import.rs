//! [`Strategy::HostImport`]'s writes: bytes a [`HostBytes`] holds copied by the GPU in place
//! ([`Uploader::write_host`]), an owner's pages imported for one copy
//! ([`Uploader::write_owned`]), and the ring of imported staging arenas borrowed bytes are
//! copied into.

use std::ops::Range;
use std::sync::Arc;

use super::staging::{Slot, staging_size};
use super::{
    HostBytes, HostImportError, HostSource, Strategy, UploadError, Uploader, host, parallel,
};

impl Uploader {
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
    pub(super) fn import_owned<S: HostSource>(
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

    /// [`Strategy::HostImport`]'s copy path: `bytes` copied (on several threads when large) into
    /// an idle imported arena, then a GPU copy from it. `false` when no arena is idle (all in
    /// flight, or a new one could not be made; a failed import also turns host import off,
    /// [`host_import_error`](Self::host_import_error)): nothing written.
    pub(super) fn write_arena(
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

    /// An idle arena of at least `len` bytes: the smallest idle one, else a new one (while fewer
    /// than [`RING_MAX`](super::RING_MAX)), else an idle smaller one replaced by a larger one. `None` when all are
    /// in flight or the import fails.
    pub(super) fn arena_slot(&mut self, device: &wgpu::Device, len: u64) -> Option<usize> {
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
}

/// The size of a new host-import arena for a write of `len` bytes: as [`staging_size`] under a
/// cap of `max` (the device's `max_buffer_size`) rounded down to `align` (the import alignment),
/// then rounded up to `align`; `None` when `len` is over that cap (the write falls back, host
/// import stays on; an arena over `max_buffer_size` would fail to import, which turns import
/// off).
pub(super) fn arena_size(len: u64, max: u64, align: u64) -> Option<u64> {
    let cap = max / align * align;
    let size = staging_size(len, cap).checked_next_multiple_of(align)?;
    (size <= cap).then_some(size)
}

#[cfg(test)]
mod tests {
    use super::arena_size;

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
}
