//! GPU → CPU readback: the asynchronous [`ReadbackRing`] of `MAP_READ` buffers (screenshots, GPU
//! timings, scene statistics: results arrive 1–3 frames later and the frame loop never waits), a
//! blocking texture readback for one-off use, and PNG writing (on a worker thread for
//! [`PngWriter`]).
//!
//! `copy_texture_to_buffer` needs `bytes_per_row` to be a multiple of
//! [`wgpu::COPY_BYTES_PER_ROW_ALIGNMENT`] (256), so rows are padded on the GPU side and unpadded
//! on the CPU side; the PNG holds exactly `width × height` RGBA pixels.

pub use super::png::{PngWriter, write_png, write_png_with};

use std::any::Any;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Errors of readback and PNG export.
#[derive(Debug, thiserror::Error)]
pub enum ReadbackError {
    /// The texture format is not an 8-bit RGBA/BGRA format.
    #[error("cannot read back texture format {0:?} (only 8-bit RGBA/BGRA)")]
    Format(wgpu::TextureFormat),
    /// Mapping the buffer failed.
    #[error("mapping the readback buffer failed: {0}")]
    Map(String),
    /// Writing the PNG failed.
    #[error("screenshot '{path}': {reason}")]
    Png {
        /// The output path.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

impl ReadbackError {
    /// [`ReadbackError::Png`] for `path`.
    pub(crate) fn png(path: &Path, reason: String) -> ReadbackError {
        ReadbackError::Png {
            path: path.display().to_string(),
            reason,
        }
    }
}

/// `width × 4` rounded up to the 256-byte copy alignment.
pub(crate) fn padded_bytes_per_row(width: u32) -> u32 {
    (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
}

/// Removes row padding: `padded` has `height` rows of `padded_bpr` bytes, each starting with
/// `width × 4` bytes of pixels. Returns `width × height × 4` bytes. When `bgra` is true the red and
/// blue channels are swapped so the result is RGBA.
/// Rows missing from a short `padded` are left out.
pub(crate) fn unpad_rows(
    padded: &[u8],
    width: u32,
    height: u32,
    padded_bpr: u32,
    bgra: bool,
) -> Vec<u8> {
    let layout = TextureLayout {
        width,
        height,
        padded_bpr,
        bgra,
    };
    let mut out = Vec::new();
    layout.unpad_into(padded, &mut out);
    out
}

/// Copies `texture` (8-bit RGBA or BGRA, `COPY_SRC`) into a buffer and waits for it: returns
/// tightly packed RGBA8, `width × height × 4` bytes. Blocks; used for screenshots in headless mode
/// and tests, never per frame in the window.
#[allow(clippy::disallowed_methods)] // a blocking read for shutdown (headless --screenshot) and tests
pub fn read_texture_rgba(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
) -> Result<Vec<u8>, ReadbackError> {
    let format = texture.format();
    let bgra = match format.remove_srgb_suffix() {
        wgpu::TextureFormat::Rgba8Unorm => false,
        wgpu::TextureFormat::Bgra8Unorm => true,
        f => return Err(ReadbackError::Format(f)),
    };
    let (width, height) = (texture.width(), texture.height());
    let bpr = padded_bytes_per_row(width);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback:screenshot"),
        size: bpr as u64 * height as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("readback:screenshot"),
    });
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(bpr),
                rows_per_image: Some(height),
            },
        },
        texture.size(),
    );
    queue.submit([encoder.finish()]);
    let bytes = map_blocking(device, &buffer)?;
    let out = unpad_rows(&bytes, width, height, bpr, bgra);
    Ok(out)
}

/// Maps a whole `MAP_READ` buffer, waits, copies its contents out and unmaps it.
pub(crate) fn map_blocking(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
) -> Result<Vec<u8>, ReadbackError> {
    super::count_blocking_wait();
    let slice = buffer.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| ReadbackError::Map(e.to_string()))?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(ReadbackError::Map(e.to_string())),
        Err(e) => return Err(ReadbackError::Map(e.to_string())),
    }
    let bytes = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| ReadbackError::Map(e.to_string()))?;
        view.to_vec()
    };
    buffer.unmap();
    Ok(bytes)
}

const RB_FREE: u8 = 0;
const RB_RECORDED: u8 = 1;
const RB_PENDING: u8 = 2;
const RB_MAPPED: u8 = 3;
const RB_FAILED: u8 = 4;
/// Handed out as a [`MappedReadback`]: still mapped.
const RB_LENT: u8 = 5;
/// The [`MappedReadback`] was dropped: unmapped and freed by the ring's next call on its own
/// thread (a buffer cannot be unmapped while the ring's own view of it is alive).
const RB_RETURNED: u8 = 6;

/// Who a readback is for. The deck routes each result to its consumer: GPU pass times to the
/// statistics, screenshots to the PNG workers, video frames to the video writer, scene i's copies
/// to that scene (`Scene::readback_arrived`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Consumer {
    /// Timestamp queries of the timed passes ([`crate::timing`]).
    Timing,
    /// Screenshots of the output.
    Screenshot,
    /// Video frames: the scene panel's crop of the output ([`crate::video`]).
    Video,
    /// Scene `i` of the app's `scene::SCENES`.
    Scene(usize),
}

/// Row layout of a texture copied into a readback buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureLayout {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bytes per row in the buffer (a multiple of 256).
    pub padded_bpr: u32,
    /// Whether the texture was BGRA (swapped to RGBA by [`Arrived::rgba_into`]).
    pub bgra: bool,
}

impl TextureLayout {
    /// Appends row `y` of the padded readback `data` to `out` as RGBA8 (`width × 4` bytes; BGRA
    /// swapped). Returns false, appending nothing, when `data` ends before the row does. The one
    /// place rows are unpadded and BGRA is swapped (screenshots, PNG workers, blocking reads).
    pub fn push_rgba_row(&self, data: &[u8], y: u32, out: &mut Vec<u8>) -> bool {
        let row = self.width as usize * 4;
        let start = y as usize * self.padded_bpr as usize;
        let Some(src) = data.get(start..start + row) else {
            return false;
        };
        let at = out.len();
        out.extend_from_slice(src);
        if self.bgra {
            for px in out[at..].chunks_exact_mut(4) {
                px.swap(0, 2);
            }
        }
        true
    }

    /// Every row of the padded readback `data` as tightly packed RGBA8 into `out` (cleared
    /// first): `width × height × 4` bytes, fewer when `data` is short.
    pub fn unpad_into(&self, data: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.reserve(self.width as usize * 4 * self.height as usize);
        for y in 0..self.height {
            if !self.push_rgba_row(data, y, out) {
                break;
            }
        }
    }
}

/// A finished readback, handed to the callback of [`ReadbackRing::poll`]. `data` is the mapped
/// memory (valid only during the callback, unless [`lend`](Arrived::lend)ed).
pub struct Arrived<'a> {
    /// Who the copy is for.
    pub consumer: Consumer,
    /// The bytes, `len` as requested (texture copies: `padded_bpr × height`).
    pub data: &'a [u8],
    /// Row layout for texture copies.
    pub texture: Option<TextureLayout>,
    payload: &'a (dyn Any + Send),
    slot: &'a RbSlot,
    lent: &'a std::cell::Cell<bool>,
}

/// A readback buffer kept mapped beyond the poll callback (see [`Arrived::lend`]), for another
/// thread to read without a copy on the frame loop. Dropping it gives the buffer back to its
/// ring, which unmaps and reuses it from its next call on.
#[derive(Debug)]
pub struct MappedReadback {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    len: u64,
    /// Row layout for texture copies.
    pub texture: Option<TextureLayout>,
}

impl MappedReadback {
    /// Calls `f` with the mapped bytes (`len` as requested). `None` if the view cannot be had
    /// (the device was lost).
    pub fn with_data<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let view = self.buffer.slice(..self.len).get_mapped_range().ok()?;
        Some(f(&view))
    }
}

impl Drop for MappedReadback {
    fn drop(&mut self) {
        self.state.store(RB_RETURNED, Ordering::Release);
    }
}

impl Arrived<'_> {
    /// The consumer's own payload given with the copy, if it is a `T` (each consumer knows the
    /// type it asked with: a frame index, a request id, a scene's column range).
    pub fn payload<T: Any>(&self) -> Option<&T> {
        let any: &dyn Any = self.payload;
        any.downcast_ref::<T>()
    }

    /// Keeps the buffer mapped after the callback and hands it out: the ring neither unmaps nor
    /// reuses it until the returned value is dropped (on any thread). Counts as read back.
    pub fn lend(&self) -> MappedReadback {
        self.lent.set(true);
        self.slot.state.store(RB_LENT, Ordering::Release);
        MappedReadback {
            buffer: self.slot.buffer.clone(),
            state: self.slot.state.clone(),
            len: self.slot.len,
            texture: self.texture,
        }
    }

    /// For texture copies: the tightly packed RGBA8 pixels (`width × height × 4` bytes) written
    /// into `out` (cleared first). Returns false for buffer copies.
    pub fn rgba_into(&self, out: &mut Vec<u8>) -> bool {
        let Some(t) = self.texture else { return false };
        t.unpad_into(self.data, out);
        true
    }
}

struct RbSlot {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    consumer: Consumer,
    /// The consumer's payload (`()` while free).
    payload: Box<dyn Any + Send>,
    /// Request order over the whole ring (results are delivered oldest first per consumer).
    seq: u64,
    /// The consumer's epoch when the copy was asked for ([`ReadbackRing::invalidate`]).
    epoch: u64,
    len: u64,
    texture: Option<TextureLayout>,
}

impl RbSlot {
    /// Holding a copy: recorded, in flight, mapped and waiting, or lent.
    fn busy(&self) -> bool {
        !matches!(self.state.load(Ordering::Acquire), RB_FREE | RB_RETURNED)
    }
}

/// A ring of `MAP_READ` buffers: copies are recorded into the frame's encoder, mapped with
/// `map_async` after submit, and handed out by [`poll`](ReadbackRing::poll) once the GPU has
/// finished, without ever waiting. A buffer is reused when its result has been handed out; it
/// grows when a larger copy needs it. When every buffer is busy a copy is refused (`false`) and
/// the caller drops that readback: the loop never stalls on the GPU.
///
/// Each copy is asked for by a [`Consumer`] with a payload of its own type, handed back with the
/// bytes ([`Arrived::payload`]). A consumer whose earlier copies no longer apply (its history
/// was reset, its settings changed) calls [`invalidate`](ReadbackRing::invalidate): those copies
/// are dropped here when they arrive, never delivered, and counted in
/// [`stale`](ReadbackRing::stale). The ring counts the bytes it read back
/// ([`bytes_read`](ReadbackRing::bytes_read)).
pub struct ReadbackRing {
    label: &'static str,
    slots: Vec<RbSlot>,
    max_slots: usize,
    dropped: u64,
    stale: u64,
    bytes_read: u64,
    next_seq: u64,
    /// (consumer, most buffers it may hold at once).
    limits: Vec<(Consumer, usize)>,
    /// (consumer, current epoch): copies asked for in an older epoch are stale.
    epochs: Vec<(Consumer, u64)>,
}

impl ReadbackRing {
    /// A ring of at most `max_slots` buffers (created on demand), labelled `"{label}[i]"`.
    pub fn new(label: &'static str, max_slots: usize) -> ReadbackRing {
        ReadbackRing {
            label,
            slots: Vec::new(),
            max_slots: max_slots.max(1),
            dropped: 0,
            stale: 0,
            bytes_read: 0,
            next_seq: 0,
            limits: Vec::new(),
            epochs: Vec::new(),
        }
    }

    /// Lets `consumer`'s copies hold at most `max` buffers at once (in flight, waiting or lent),
    /// so that one consumer (screenshots) cannot starve the others (GPU timings); further copies
    /// are refused and counted in [`dropped`](ReadbackRing::dropped).
    pub fn limit(&mut self, consumer: Consumer, max: usize) {
        self.limits.retain(|(c, _)| *c != consumer);
        self.limits.push((consumer, max));
    }

    /// Whether a copy for `consumer` would be refused now because of its
    /// [`limit`](ReadbackRing::limit) (a free buffer may still be missing).
    pub fn full(&self, consumer: Consumer) -> bool {
        let Some(&(_, max)) = self.limits.iter().find(|(c, _)| *c == consumer) else {
            return false;
        };
        self.busy(consumer) >= max
    }

    /// Buffers holding copies for `consumer`: recorded, in flight, waiting for a poll, or lent.
    pub fn busy(&self, consumer: Consumer) -> usize {
        self.slots
            .iter()
            .filter(|s| s.consumer == consumer && s.busy())
            .count()
    }

    /// From now on, every copy `consumer` asked for before this call is stale: dropped when it
    /// arrives (counted in [`stale`](ReadbackRing::stale)), never delivered.
    pub fn invalidate(&mut self, consumer: Consumer) {
        match self.epochs.iter_mut().find(|(c, _)| *c == consumer) {
            Some((_, e)) => *e += 1,
            None => self.epochs.push((consumer, 1)),
        }
    }

    fn epoch(&self, consumer: Consumer) -> u64 {
        self.epochs
            .iter()
            .find(|(c, _)| *c == consumer)
            .map_or(0, |(_, e)| *e)
    }

    /// Copies refused because every buffer was busy.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Copies that arrived after their consumer invalidated them, dropped unseen.
    pub fn stale(&self) -> u64 {
        self.stale
    }

    /// Bytes mapped and handed out (delivered or lent) by this ring so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Buffers waiting for the GPU or for [`poll`](ReadbackRing::poll).
    pub fn in_flight(&self) -> usize {
        self.slots.iter().filter(|s| s.busy()).count()
    }

    /// Unmaps and frees the buffers whose [`MappedReadback`] was dropped.
    fn sweep_returned(&mut self) {
        for slot in &self.slots {
            if slot.state.load(Ordering::Acquire) == RB_RETURNED {
                slot.buffer.unmap();
                slot.state.store(RB_FREE, Ordering::Release);
            }
        }
    }

    fn take_slot(&mut self, device: &wgpu::Device, len: u64) -> Option<usize> {
        self.sweep_returned();
        let free = |s: &RbSlot| s.state.load(Ordering::Acquire) == RB_FREE;
        if let Some((i, _)) = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| free(s) && s.buffer.size() >= len)
            .min_by_key(|(_, s)| s.buffer.size())
        {
            return Some(i);
        }
        let make = |i: usize| RbSlot {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("{}[{i}]", self.label)),
                size: len.next_multiple_of(256).max(256),
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                mapped_at_creation: false,
            }),
            state: Arc::new(AtomicU8::new(RB_FREE)),
            consumer: Consumer::Timing,
            payload: Box::new(()),
            seq: 0,
            epoch: 0,
            len: 0,
            texture: None,
        };
        if self.slots.len() < self.max_slots {
            let i = self.slots.len();
            let slot = make(i);
            self.slots.push(slot);
            return Some(i);
        }
        let i = self.slots.iter().position(free)?;
        self.slots[i] = make(i);
        Some(i)
    }

    /// Fills slot `i` for a copy for `consumer` carrying `payload`.
    fn claim(
        &mut self,
        i: usize,
        consumer: Consumer,
        payload: Box<dyn Any + Send>,
        len: u64,
        texture: Option<TextureLayout>,
    ) {
        let epoch = self.epoch(consumer);
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = &mut self.slots[i];
        slot.consumer = consumer;
        slot.payload = payload;
        slot.seq = seq;
        slot.epoch = epoch;
        slot.len = len;
        slot.texture = texture;
        slot.state.store(RB_RECORDED, Ordering::Release);
    }

    /// Records a copy of `size` bytes of `src` (needs `COPY_SRC`) from `offset` (both multiples
    /// of 4) into a free buffer, for `consumer`, who gets `payload` back with the bytes. Returns
    /// false (nothing recorded, counted in [`dropped`](ReadbackRing::dropped)) when every buffer
    /// is busy or the consumer is at its [`limit`](ReadbackRing::limit).
    #[allow(clippy::too_many_arguments)]
    pub fn copy_buffer(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        src: &wgpu::Buffer,
        offset: u64,
        size: u64,
        consumer: Consumer,
        payload: impl Any + Send,
    ) -> bool {
        if self.full(consumer) {
            self.dropped += 1;
            return false;
        }
        let Some(i) = self.take_slot(device, size) else {
            self.dropped += 1;
            return false;
        };
        encoder.copy_buffer_to_buffer(src, offset, &self.slots[i].buffer, 0, size);
        self.claim(i, consumer, Box::new(payload), size, None);
        true
    }

    /// Records a copy of the whole `texture` (8-bit RGBA/BGRA, `COPY_SRC`), rows padded to 256
    /// bytes (any width, odd ones included), for `consumer` with `payload`. `Ok(false)` when
    /// every buffer is busy or the consumer is at its limit.
    ///
    /// # Errors
    ///
    /// [`ReadbackError::Format`] for other formats.
    pub fn copy_texture(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        texture: &wgpu::Texture,
        consumer: Consumer,
        payload: impl Any + Send,
    ) -> Result<bool, ReadbackError> {
        let whole = (0, 0, texture.width(), texture.height());
        self.copy_texture_region(device, encoder, texture, whole, consumer, payload)
    }

    /// [`copy_texture`](ReadbackRing::copy_texture) of the part `rect` (x, y, width, height in
    /// texels) of `texture`: the bytes arrive as a `width × height` image ([`TextureLayout`]),
    /// rows padded to 256 bytes. `rect` is clipped to the texture; `Ok(false)` (nothing
    /// recorded, not counted) when nothing of it is left.
    ///
    /// # Errors
    ///
    /// [`ReadbackError::Format`] for formats other than 8-bit RGBA/BGRA.
    pub fn copy_texture_region(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        texture: &wgpu::Texture,
        rect: (u32, u32, u32, u32),
        consumer: Consumer,
        payload: impl Any + Send,
    ) -> Result<bool, ReadbackError> {
        let bgra = match texture.format().remove_srgb_suffix() {
            wgpu::TextureFormat::Rgba8Unorm => false,
            wgpu::TextureFormat::Bgra8Unorm => true,
            f => return Err(ReadbackError::Format(f)),
        };
        let (x, y) = (rect.0.min(texture.width()), rect.1.min(texture.height()));
        let width = rect.2.min(texture.width() - x);
        let height = rect.3.min(texture.height() - y);
        if width == 0 || height == 0 {
            return Ok(false);
        }
        let padded_bpr = padded_bytes_per_row(width);
        let len = padded_bpr as u64 * height as u64;
        if self.full(consumer) {
            self.dropped += 1;
            return Ok(false);
        }
        let Some(i) = self.take_slot(device, len) else {
            self.dropped += 1;
            return Ok(false);
        };
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                origin: wgpu::Origin3d { x, y, z: 0 },
                ..texture.as_image_copy()
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.slots[i].buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded_bpr),
                    rows_per_image: Some(height),
                },
            },
            wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
        );
        let layout = TextureLayout {
            width,
            height,
            padded_bpr,
            bgra,
        };
        self.claim(i, consumer, Box::new(payload), len, Some(layout));
        Ok(true)
    }

    /// Call right after the `queue.submit` holding the copies: starts mapping them (the callback
    /// only flips an atomic).
    pub fn after_submit(&mut self) {
        for slot in &mut self.slots {
            if slot.state.load(Ordering::Acquire) != RB_RECORDED {
                continue;
            }
            let state = slot.state.clone();
            state.store(RB_PENDING, Ordering::Release);
            slot.buffer
                .slice(..slot.len)
                .map_async(wgpu::MapMode::Read, move |r| {
                    state.store(
                        if r.is_ok() { RB_MAPPED } else { RB_FAILED },
                        Ordering::Release,
                    );
                });
        }
    }

    /// Non-blocking: polls the device once, then calls `f` for every finished readback that is
    /// not stale (oldest first per consumer) and frees its buffer. Returns how many arrived.
    pub fn poll(&mut self, device: &wgpu::Device, f: impl FnMut(Arrived<'_>)) -> usize {
        let _ = device.poll(wgpu::PollType::Poll);
        self.deliver(f)
    }

    /// Blocking: waits for every copy in flight, then delivers as [`poll`](ReadbackRing::poll).
    /// For shutdown and tests, never for the frame loop.
    pub fn wait(&mut self, device: &wgpu::Device, f: impl FnMut(Arrived<'_>)) -> usize {
        super::count_blocking_wait();
        if let Err(e) = device.poll(wgpu::PollType::wait_indefinitely()) {
            log::warn!("readback: device poll failed: {e}");
        }
        self.deliver(f)
    }

    fn deliver(&mut self, mut f: impl FnMut(Arrived<'_>)) -> usize {
        self.sweep_returned();
        let mut ready: Vec<usize> = (0..self.slots.len())
            .filter(|&i| {
                matches!(
                    self.slots[i].state.load(Ordering::Acquire),
                    RB_MAPPED | RB_FAILED
                )
            })
            .collect();
        ready.sort_by_key(|&i| self.slots[i].seq);
        let mut n = 0;
        for i in ready {
            let slot = &self.slots[i];
            let lent = std::cell::Cell::new(false);
            let stale = slot.epoch < self.epoch(slot.consumer);
            if stale {
                // Invalidated by its consumer since it was asked for: never delivered.
                self.stale += 1;
                if slot.state.load(Ordering::Acquire) == RB_MAPPED {
                    slot.buffer.unmap();
                }
            } else if slot.state.load(Ordering::Acquire) == RB_MAPPED {
                let slice = slot.buffer.slice(..slot.len);
                match slice.get_mapped_range() {
                    Ok(view) => {
                        self.bytes_read += slot.len;
                        f(Arrived {
                            consumer: slot.consumer,
                            data: &view,
                            texture: slot.texture,
                            payload: slot.payload.as_ref(),
                            slot,
                            lent: &lent,
                        });
                        n += 1;
                    }
                    Err(e) => log::debug!("readback: {e}"),
                }
                if lent.get() {
                    // The MappedReadback unmaps and frees the buffer when dropped.
                    continue;
                }
                slot.buffer.unmap();
            } else {
                log::debug!("readback for {:?} failed", slot.consumer);
            }
            slot.state.store(RB_FREE, Ordering::Release);
            self.slots[i].payload = Box::new(());
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_rounds_to_256() {
        assert_eq!(padded_bytes_per_row(1), 256);
        assert_eq!(padded_bytes_per_row(64), 256);
        assert_eq!(padded_bytes_per_row(65), 512);
        assert_eq!(padded_bytes_per_row(1366), 5632);
    }

    #[test]
    fn unpad_keeps_pixels_and_swaps_bgra() {
        // 3×2 image, padded rows of 256 bytes; pixel (x, y) = [x, y, 100 + x, 200].
        let (w, h, bpr) = (3u32, 2u32, 256u32);
        let mut padded = vec![0xEEu8; (bpr * h) as usize];
        for y in 0..h {
            for x in 0..w {
                let i = (y * bpr + x * 4) as usize;
                padded[i..i + 4].copy_from_slice(&[x as u8, y as u8, 100 + x as u8, 200]);
            }
        }
        let rgba = unpad_rows(&padded, w, h, bpr, false);
        assert_eq!(rgba.len(), 24);
        assert_eq!(&rgba[12..16], &[0, 1, 100, 200]);
        let swapped = unpad_rows(&padded, w, h, bpr, true);
        assert_eq!(&swapped[12..16], &[100, 1, 0, 200]);
        assert!(!swapped.contains(&0xEE));
    }
}
