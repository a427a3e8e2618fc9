//! [`Strategy::DeviceStaging`](super::Strategy::DeviceStaging)'s writes: a ring of [`DirectBuffer`](super::direct::DirectBuffer)s
//! in the GPU's memory the CPU writes into, copied from by the GPU; the fallback when the device
//! has no such memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::staging::{Slot, staging_size};
use super::{DEVICE_STAGING_CHUNK, Uploader, direct};

/// Likewise for device staging.
static DEVICE_STAGING_FALLBACK_LOGGED: AtomicBool = AtomicBool::new(false);

impl Uploader {
    /// [`Strategy::DeviceStaging`](super::Strategy::DeviceStaging)'s path: `bytes` written by the CPU into an idle staging buffer
    /// in the GPU's memory (padded to `len`), then a GPU copy from it. `false` when every buffer
    /// is in flight or a new one cannot be made now (out of memory: the caller falls back for this
    /// write), or the device has no such memory at all (then [`Self::device_staging_error`] is
    /// set, said once in the log, and the strategy falls back from here on): nothing written.
    pub(super) fn write_device_staging(
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

    /// Why [`Strategy::DeviceStaging`](super::Strategy::DeviceStaging) falls back on this uploader's device (`None`: it works,
    /// or no write was made yet).
    pub fn device_staging_error(&self) -> Option<&direct::DirectError> {
        self.device_staging_error.as_ref()
    }
}
