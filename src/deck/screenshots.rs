//! Screenshots through the readback ring, never waited for: every frame into a directory
//! (`vizdeck bench --screenshots`) and the scene panel on request (View ▸ Save PNG, F12), both
//! copied in the frame's encoder after the egui pass and written as PNG by worker threads.

use std::path::PathBuf;

use super::Deck;
use crate::gpu::Gpu;
use crate::gpu::readback::{Consumer, PngWriter};

/// Saving screenshots through the readback ring: every frame (`--screenshot-every-frame`) and/or
/// the next one (F12).
pub(super) struct Screenshots {
    pub(super) writer: PngWriter,
    pub(super) dir: Option<PathBuf>,
    pub(super) next_id: u64,
}

/// The payload of a screenshot readback: what to make of the output copy when it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shot {
    /// An every-frame screenshot: the whole output as `frame-NNNNNN.png` (the number).
    Frame(u64),
    /// The scene panel (F12): this crop of the output (x, y, w, h in output pixels).
    Panel((u32, u32, u32, u32)),
}

impl Deck {
    /// Saves a PNG of the output texture every frame into `dir` (`frame-NNNNNN.png`), through the
    /// readback ring and the PNG worker; `None` stops. Frames are dropped (counted) rather than
    /// waited for when the ring or the worker is behind.
    pub fn set_screenshot_dir(&mut self, dir: Option<PathBuf>) {
        self.screenshots.dir = dir;
    }

    /// Screenshots dropped so far (ring full or PNG worker behind).
    pub fn screenshots_dropped(&self) -> u64 {
        self.screenshots.writer.dropped() + self.readback.dropped()
    }

    /// Records this frame's screenshot copies of `output` into the frame's `encoder`, after the
    /// egui pass: the every-frame screenshot when a directory is set (dropped and counted when
    /// the PNG workers are behind), and the scene panel when "Save PNG" (F12) was asked for.
    /// Never waits. An output without `COPY_SRC` cannot be read back: said once a request.
    pub(super) fn record_screenshots(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        output: Option<&wgpu::Texture>,
    ) {
        let one_off = std::mem::take(&mut self.screenshot_request);
        let every = self.screenshots.dir.is_some();
        if !one_off && !every {
            return;
        }
        let Some(output) = output.filter(|t| t.usage().contains(wgpu::TextureUsages::COPY_SRC))
        else {
            if one_off {
                log::warn!("this surface cannot be read back (no COPY_SRC); PNG not saved");
                self.toast("PNG export failed: this surface cannot be read back".into());
            }
            return;
        };
        if every {
            let id = self.screenshots.next_id;
            self.screenshots.next_id += 1;
            let committed = self.readback.busy(Consumer::Screenshot);
            if self.screenshots.writer.is_full() || committed >= self.screenshots.writer.capacity()
            {
                // The PNG workers could not take this frame by the time it arrived (every slot
                // is taken by frames queued, being written or still in flight): skip the copy,
                // count the drop.
                self.screenshots.writer.count_dropped();
            } else {
                self.copy_output(gpu, encoder, output, Shot::Frame(id));
            }
        }
        if one_off {
            // The scene panel (image, axes and overlays as shown), cropped from the output and
            // written as `vizdeck-<scene>-<unix time>.png` by the PNG worker 1–3 frames later.
            if !self.copy_output(gpu, encoder, output, Shot::Panel(self.scene_rect_px)) {
                log::error!("PNG export: the readback ring is busy; try again");
                self.toast("PNG export failed: the readback ring is busy".into());
            }
        }
    }

    pub(super) fn copy_output(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        output: &wgpu::Texture,
        shot: Shot,
    ) -> bool {
        match self
            .readback
            .copy_texture(&gpu.device, encoder, output, Consumer::Screenshot, shot)
        {
            Ok(copied) => copied,
            Err(e) => {
                log::warn!("screenshot: {e}");
                false
            }
        }
    }

    /// Writes every screenshot still in flight and waits for the PNG worker (end of a run).
    pub fn finish_screenshots(&mut self, gpu: &Gpu) -> (u64, Vec<String>) {
        self.drain_readbacks(gpu, true);
        let old = std::mem::replace(&mut self.screenshots.writer, screenshot_writer());
        old.finish()
    }
}

impl Screenshots {
    /// A screenshot readback arrived: crop (F12) or keep whole (every frame) and hand it to the
    /// PNG worker. Returns the path of an F12 PNG.
    pub(super) fn arrived(
        &mut self,
        a: &crate::gpu::readback::Arrived<'_>,
        scene: &str,
    ) -> Option<PathBuf> {
        let t = a.texture?;
        let (x, y, w, h) = match *a.payload::<Shot>()? {
            Shot::Frame(id) => {
                // Every-frame screenshot: the worker reads the mapped buffer itself (no copy).
                let dir = self.dir.as_ref()?;
                let path = dir.join(format!("frame-{id:06}.png"));
                self.writer.submit_mapped(path, a.lend());
                return None;
            }
            Shot::Panel(crop) => crop,
        };
        let mut rgba = self.writer.buffer();
        a.rgba_into(&mut rgba);
        {
            let (w, h) = (
                w.min(t.width.saturating_sub(x)),
                h.min(t.height.saturating_sub(y)),
            );
            if w == 0 || h == 0 {
                log::error!("PNG export: the scene panel is empty");
                return None;
            }
            let mut crop = Vec::with_capacity((w * h * 4) as usize);
            for row in y..y + h {
                let start = ((row * t.width + x) * 4) as usize;
                crop.extend_from_slice(&rgba[start..start + (w * 4) as usize]);
            }
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            let path = PathBuf::from(format!("vizdeck-{scene}-{secs}.png"));
            log::info!("saving {}", path.display());
            self.writer.submit(path.clone(), w, h, crop);
            Some(path)
        }
    }
}

/// The PNG writer of the screenshots: a queue of 2 frames and one worker per spare core (the
/// frame loop and the driver keep two), 1 to 4.
pub(super) fn screenshot_writer() -> PngWriter {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    PngWriter::with_workers(2, cores.saturating_sub(2).clamp(1, 4))
}
