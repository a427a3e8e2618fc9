//! Screenshots through the readback ring, never waited for: every frame into a directory
//! (`vizdeck bench --screenshots`) and one PNG on request (View ▸ Save PNG, F12 for the scene,
//! Shift+F12 for the window), both copied in the frame's encoder after the egui pass and written
//! as PNG by worker threads. A PNG asked for is taken from the *next* frame, drawn for it: for
//! [`PngKind::Scene`] that frame leaves out vizdeck's stats overlay, toasts and floating windows,
//! so the PNG is the scene with its own axes and labels only. Once written, a toast gives the
//! file's full path.

use std::path::{Path, PathBuf};

use super::Deck;
use crate::gpu::Gpu;
use crate::gpu::readback::{Consumer, PngWriter};
use crate::ui::PngKind;

/// Saving screenshots through the readback ring: every frame (`--screenshot-every-frame`) and/or
/// the next one (F12).
pub(super) struct Screenshots {
    pub(super) writer: PngWriter,
    pub(super) dir: Option<PathBuf>,
    pub(super) next_id: u64,
    /// Where F12 / Shift+F12 PNGs go (`None`: the working directory).
    pub(super) png_dir: Option<PathBuf>,
    /// The last PNG asked for (maybe not written yet): the next one of the same second gets
    /// another name.
    pub(super) last_png: Option<PathBuf>,
}

/// The payload of a screenshot readback: what to make of the output copy when it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shot {
    /// An every-frame screenshot: the whole output as `frame-NNNNNN.png` (the number).
    Frame(u64),
    /// A PNG asked for: this crop of the output (x, y, w, h in output pixels) as `name`.
    Crop {
        /// x, y, width, height in output pixels.
        rect: (u32, u32, u32, u32),
        /// The file name's middle part: the scene's id, or `window`.
        name: &'static str,
    },
}

impl Deck {
    /// Saves a PNG of the output texture every frame into `dir` (`frame-NNNNNN.png`), through the
    /// readback ring and the PNG worker; `None` stops. Frames are dropped (counted) rather than
    /// waited for when the ring or the worker is behind.
    pub fn set_screenshot_dir(&mut self, dir: Option<PathBuf>) {
        self.files.screenshots.dir = dir;
    }

    /// Screenshots dropped so far (ring full or PNG worker behind).
    pub fn screenshots_dropped(&self) -> u64 {
        self.files.screenshots.writer.dropped() + self.readback.dropped()
    }

    /// Where PNGs asked for (F12, Shift+F12, the View menu) are written: `dir`, or the working
    /// directory with `None` (the default).
    pub fn set_png_dir(&mut self, dir: Option<PathBuf>) {
        self.files.screenshots.png_dir = dir;
    }

    /// Asks for a PNG of the next frame ([`PngKind`]); the window draws it at once.
    pub fn request_png(&mut self, kind: PngKind) {
        self.files.png_next = Some(kind);
    }

    /// Whether this frame is drawn for a PNG of the scene: vizdeck's stats overlay, toasts and
    /// floating windows are left out of it.
    pub(crate) fn drawing_scene_png(&self) -> bool {
        self.files.png_now == Some(PngKind::Scene)
    }

    /// Toasts (and logs) the PNGs the workers finished writing since the last call.
    pub(super) fn report_pngs(&mut self) {
        for report in self.files.screenshots.writer.reports() {
            self.png_written(report);
        }
    }

    fn png_written(&mut self, (path, result): crate::gpu::png::PngReport) {
        match result {
            Ok(()) => {
                log::info!("saved {}", path.display());
                self.toast(format!("saved {}", path.display()));
            }
            Err(e) => {
                log::error!("PNG export to {}: {e}", path.display());
                self.toast(format!("PNG export to {} failed: {e}", path.display()));
            }
        }
    }

    /// Records this frame's screenshot copies of `output` into the frame's `encoder`, after the
    /// egui pass: the every-frame screenshot when a directory is set (dropped and counted when
    /// the PNG workers are behind), and the PNG asked for (F12, Shift+F12) in the frame before.
    /// Never waits. An output without `COPY_SRC` cannot be read back: said once a request.
    pub(super) fn record_screenshots(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        output: Option<&wgpu::Texture>,
    ) {
        let one_off = self.files.png_now.take();
        let every = self.files.screenshots.dir.is_some();
        if one_off.is_none() && !every {
            return;
        }
        let Some(output) = output.filter(|t| t.usage().contains(wgpu::TextureUsages::COPY_SRC))
        else {
            if one_off.is_some() {
                log::warn!("this surface cannot be read back (no COPY_SRC); PNG not saved");
                self.toast("PNG export failed: this surface cannot be read back".into());
            }
            return;
        };
        if every {
            let id = self.files.screenshots.next_id;
            self.files.screenshots.next_id += 1;
            let committed = self.readback.busy(Consumer::Screenshot);
            if self.files.screenshots.writer.is_full()
                || committed >= self.files.screenshots.writer.capacity()
            {
                // The PNG workers could not take this frame by the time it arrived (every slot
                // is taken by frames queued, being written or still in flight): skip the copy,
                // count the drop.
                self.files.screenshots.writer.count_dropped();
            } else {
                self.copy_output(gpu, encoder, output, Shot::Frame(id));
            }
        }
        if let Some(kind) = one_off {
            // Cropped from the output and written as `vizdeck-<scene or window>-<unix time>.png`
            // by the PNG worker 1–3 frames later.
            let shot = match kind {
                PngKind::Scene => Shot::Crop {
                    rect: self.ui_state.scene_rect_px,
                    name: crate::scene::SCENES[self.active].id,
                },
                PngKind::Window => Shot::Crop {
                    rect: (0, 0, output.width(), output.height()),
                    name: "window",
                },
            };
            if !self.copy_output(gpu, encoder, output, shot) {
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

    /// Writes every screenshot still in flight and waits for the PNG worker (end of a run);
    /// the PNGs asked for are toasted and logged with their paths as usual.
    pub fn finish_screenshots(&mut self, gpu: &Gpu) -> (u64, Vec<String>) {
        self.drain_readbacks(gpu, true);
        let old = std::mem::replace(&mut self.files.screenshots.writer, screenshot_writer());
        let (totals, reports) = old.finish_reported();
        for report in reports {
            self.png_written(report);
        }
        totals
    }

    /// Whether a PNG is asked for or still being written (the window keeps drawing until its
    /// toast can be shown).
    pub(super) fn png_pending(&self) -> bool {
        self.files.png_next.is_some()
            || self.files.png_now.is_some()
            || self.files.screenshots.writer.reports_pending()
    }
}

impl Screenshots {
    /// A screenshot readback arrived: crop (a PNG asked for) or keep whole (every frame) and
    /// hand it to the PNG worker. Returns the full path of a PNG asked for.
    pub(super) fn arrived(&mut self, a: &crate::gpu::readback::Arrived<'_>) -> Option<PathBuf> {
        let t = a.texture?;
        let (x, y, w, h, name) = match *a.payload::<Shot>()? {
            Shot::Frame(id) => {
                // Every-frame screenshot: the worker reads the mapped buffer itself (no copy).
                let dir = self.dir.as_ref()?;
                let path = dir.join(format!("frame-{id:06}.png"));
                self.writer.submit_mapped(path, a.lend());
                return None;
            }
            Shot::Crop { rect, name } => (rect.0, rect.1, rect.2, rect.3, name),
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
            let path = png_path(
                self.png_dir.as_deref(),
                name,
                secs,
                self.last_png.as_deref(),
            );
            self.last_png = Some(path.clone());
            log::debug!("saving {}", path.display());
            if !self.writer.submit_reported(path.clone(), w, h, crop) {
                log::error!(
                    "PNG export: the PNG workers are busy; {} not saved",
                    path.display()
                );
                return None;
            }
            Some(path)
        }
    }
}

/// The full path of a PNG asked for: `vizdeck-<name>-<secs>.png` in `dir` (the working
/// directory when `None`), with `-2`, `-3`… before `.png` when that file exists or is `taken`
/// (asked for and not written yet).
pub fn png_path(dir: Option<&Path>, name: &str, secs: u64, taken: Option<&Path>) -> PathBuf {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    // Absolute, so the toast says where the file is whatever the working directory.
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let free = |p: &PathBuf| !p.exists() && taken != Some(p.as_path());
    let first = dir.join(format!("vizdeck-{name}-{secs}.png"));
    if free(&first) {
        return first;
    }
    (2..1000)
        .map(|n| dir.join(format!("vizdeck-{name}-{secs}-{n}.png")))
        .find(free)
        .unwrap_or(first)
}

/// The PNG writer of the screenshots: a queue of 2 frames and one worker per spare core (the
/// frame loop and the driver keep two), 1 to 4.
pub(super) fn screenshot_writer() -> PngWriter {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    PngWriter::with_workers(2, cores.saturating_sub(2).clamp(1, 4))
}
