//! Memory as a figure: the process's resident set (RSS) and the GPU memory wgpu's allocator holds,
//! for `--report` and `vizdeck bench`, and the soak test's leak check (RSS after a warm-up against
//! RSS at the end of a run).
//!
//! Sources:
//! - RSS and peak RSS: `VmRSS` and `VmHWM` of `/proc/self/status` (Linux, `proc(5)`), in kB there,
//!   bytes here. Elsewhere there is no reading (`None`, JSON `null`).
//! - GPU memory: [`wgpu::Device::generate_allocator_report`], wgpu-hal's report of its suballocator
//!   (Vulkan and D3D12 through `gpu-allocator`): bytes of live allocations (buffers, textures,
//!   query resolve buffers, staging) and bytes of the device-memory blocks reserved for them. GL
//!   and Metal have no report (`None`).

/// The process's memory, from `/proc/self/status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProcessMemory {
    /// Resident set size now (`VmRSS`), bytes.
    pub rss_bytes: u64,
    /// Largest resident set size so far (`VmHWM`), bytes.
    pub peak_rss_bytes: u64,
}

impl ProcessMemory {
    /// Reads `/proc/self/status`; `None` where there is none (not Linux) or it lacks the fields.
    pub fn read() -> Option<ProcessMemory> {
        let text = std::fs::read_to_string("/proc/self/status").ok()?;
        ProcessMemory::parse(&text)
    }

    /// Resets the peak (`VmHWM`) to the current RSS by writing `5` to `/proc/self/clear_refs`
    /// (Linux 4.0+, `proc(5)`), so that a later [`read`](ProcessMemory::read) gives the peak of
    /// what ran since. Returns false where that is not possible.
    pub fn reset_peak() -> bool {
        std::fs::write("/proc/self/clear_refs", "5").is_ok()
    }

    /// Parses the `VmRSS:` and `VmHWM:` lines of a `/proc/PID/status` text (values in kB).
    pub fn parse(status: &str) -> Option<ProcessMemory> {
        let field = |name: &str| {
            status.lines().find_map(|line| {
                let rest = line.strip_prefix(name)?.strip_prefix(':')?;
                let kb = rest.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
                Some(kb * 1024)
            })
        };
        Some(ProcessMemory {
            rss_bytes: field("VmRSS")?,
            peak_rss_bytes: field("VmHWM")?,
        })
    }
}

/// GPU memory held through wgpu's allocator (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct GpuMemory {
    /// Bytes of live allocations.
    pub allocated_bytes: u64,
    /// Bytes of the device-memory blocks those allocations live in.
    pub reserved_bytes: u64,
}

impl GpuMemory {
    /// The allocator report of `device`; `None` on backends without one (GL, Metal).
    pub fn read(device: &wgpu::Device) -> Option<GpuMemory> {
        let report = device.generate_allocator_report()?;
        Some(GpuMemory {
            allocated_bytes: report.total_allocated_bytes,
            reserved_bytes: report.total_reserved_bytes,
        })
    }
}

/// Default frame after which [`MemoryTrack`] takes its warm-up reading.
pub const DEFAULT_WARMUP_FRAMES: u64 = 120;

/// The RSS reading taken once, when a run has drawn `warmup_frames` frames: what a leak grows
/// from. Everything a scene fills by design (the spectrogram's scrollback, the chart's store)
/// should be full by then for the end-of-run growth to mean a leak.
#[derive(Clone, Debug)]
pub struct MemoryTrack {
    warmup_frames: u64,
    after_warmup: Option<ProcessMemory>,
}

impl MemoryTrack {
    /// A track that reads RSS when frame `warmup_frames` has ended (0: after the first frame).
    pub fn new(warmup_frames: u64) -> MemoryTrack {
        MemoryTrack {
            warmup_frames: warmup_frames.max(1),
            after_warmup: None,
        }
    }

    /// Call once a frame, with the number of frames drawn so far; reads RSS at the warm-up frame.
    pub fn frame_ended(&mut self, frames: u64) {
        if self.after_warmup.is_none() && frames >= self.warmup_frames {
            self.after_warmup = ProcessMemory::read();
        }
    }

    /// The report object: `{"rss_bytes", "peak_rss_bytes", "warmup_frames",
    /// "rss_after_warmup_bytes", "growth_after_warmup" (fraction of the warm-up RSS), "gpu":
    /// {"allocated_bytes", "reserved_bytes"}}`; a reading that is not there is `null`.
    pub fn report(&self, device: &wgpu::Device) -> serde_json::Value {
        let now = ProcessMemory::read();
        let growth = match (self.after_warmup, now) {
            (Some(w), Some(n)) if w.rss_bytes > 0 => {
                Some((n.rss_bytes as f64 - w.rss_bytes as f64) / w.rss_bytes as f64)
            }
            _ => None,
        };
        serde_json::json!({
            "rss_bytes": now.map(|m| m.rss_bytes),
            "peak_rss_bytes": now.map(|m| m.peak_rss_bytes),
            "warmup_frames": self.warmup_frames,
            "rss_after_warmup_bytes": self.after_warmup.map(|m| m.rss_bytes),
            "growth_after_warmup": growth,
            "gpu": GpuMemory::read(device),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_status() {
        let text = "Name:\tvizdeck\nVmPeak:\t  900 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(
            ProcessMemory::parse(text),
            Some(ProcessMemory {
                rss_bytes: 1024 * 1024,
                peak_rss_bytes: 2048 * 1024
            })
        );
        assert_eq!(ProcessMemory::parse("VmRSS:\t12 kB\n"), None);
        assert_eq!(ProcessMemory::parse("VmRSS:\tlots\nVmHWM:\t1 kB\n"), None);
    }

    #[test]
    fn reads_this_process_on_linux() {
        if cfg!(target_os = "linux") {
            let m = ProcessMemory::read().expect("/proc/self/status");
            assert!(m.rss_bytes > 0 && m.peak_rss_bytes >= m.rss_bytes, "{m:?}");
        }
    }
}
