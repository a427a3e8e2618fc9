//! [`GpuFrame`]: the GPU context of one frame, handed by the deck to the scene hooks that record
//! GPU work (`Scene::prepare`). It holds the frame's one command encoder and the deck's
//! [`Uploader`]: every upload of the frame goes through it (so `BytesUploaded` counts it and the
//! chosen [`Strategy`](super::upload::Strategy) applies to it), and every command goes into the
//! one encoder the deck submits once. Scenes never call `Queue::submit` or `Queue::write_buffer`
//! themselves (`clippy.toml` forbids both outside the GPU core (`crates/gpu`) and the deck).

use super::Gpu;
use super::upload::Uploader;

/// One frame's GPU context: the device, the frame's encoder and the uploader (see the module
/// docs). Made by the deck each frame; tests, benches and tools get one from an
/// [`OwnedFrame`], which owns its encoder and uploader and submits them once.
pub struct GpuFrame<'a> {
    gpu: &'a Gpu,
    encoder: &'a mut wgpu::CommandEncoder,
    uploader: &'a mut Uploader,
    frame: u64,
}

impl<'a> GpuFrame<'a> {
    /// The context of frame `frame` (ping-pong slot `frame % 2`) over `encoder` and `uploader`.
    pub fn new(
        gpu: &'a Gpu,
        encoder: &'a mut wgpu::CommandEncoder,
        uploader: &'a mut Uploader,
        frame: u64,
    ) -> GpuFrame<'a> {
        GpuFrame {
            gpu,
            encoder,
            uploader,
            frame,
        }
    }

    /// The owner of the device (for creating objects and reading limits; not for submitting).
    pub fn gpu(&self) -> &'a Gpu {
        self.gpu
    }

    /// The device.
    pub fn device(&self) -> &'a wgpu::Device {
        &self.gpu.device
    }

    /// Frame index since the app started; the ping-pong slot is `frame % 2`.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The frame's command encoder (copies and passes recorded here run in the frame's one
    /// submit, after this frame's uploads).
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.encoder
    }

    /// Uploads `bytes` into `dst` at `offset` (a multiple of 4; a length that is not a multiple
    /// of 4 is padded with zeros) through the frame's uploader: counted, in its strategy, before
    /// any pass of this frame reads it. A write that does not fit `dst` (a programming error) is
    /// logged and skipped, never a panic. Returns whether it was written.
    pub fn write(&mut self, dst: &wgpu::Buffer, offset: u64, bytes: &[u8]) -> bool {
        logged(
            dst,
            self.uploader.write(
                &self.gpu.device,
                &self.gpu.queue,
                self.encoder,
                dst,
                offset,
                bytes,
            ),
        )
    }

    /// Uploads `src[range]` into `dst` at `offset` (a multiple of 4) through the frame's
    /// uploader with no CPU copy where `src` is imported host memory (the GPU reads it in place;
    /// see [`Uploader::write_host`]): counted. A bad range is logged and skipped, never a panic.
    /// Returns whether it was written.
    pub fn write_host(
        &mut self,
        dst: &wgpu::Buffer,
        offset: u64,
        src: &super::upload::HostBytes,
        range: std::ops::Range<usize>,
    ) -> bool {
        logged(
            dst,
            self.uploader.write_host(
                &self.gpu.device,
                &self.gpu.queue,
                self.encoder,
                dst,
                offset,
                src,
                range,
            ),
        )
    }

    /// Uploads the bytes `owner` holds (a `Vec<u8>`, `Arc<[u8]>`, …) into `dst` at `offset`
    /// through the frame's uploader, taking the owner: under the `host-import` strategy its
    /// pages are read in place by the GPU and the owner kept until the copy is done (see
    /// [`Uploader::write_owned`]); counted. Errors are logged and skipped, never a panic.
    /// Returns whether it was written.
    pub fn write_owned<S: super::upload::HostSource>(
        &mut self,
        dst: &wgpu::Buffer,
        offset: u64,
        owner: S,
    ) -> bool {
        logged(
            dst,
            self.uploader.write_owned(
                &self.gpu.device,
                &self.gpu.queue,
                self.encoder,
                dst,
                offset,
                owner,
            ),
        )
    }

    /// Uploads `bytes` (tightly packed rows of `bytes_per_row`) into `texture` at texel
    /// `origin`, `size` texels, through the frame's uploader (counted; see
    /// [`Uploader::write_texture`]).
    pub fn write_texture(
        &mut self,
        texture: &wgpu::Texture,
        origin: (u32, u32),
        size: (u32, u32),
        bytes_per_row: u32,
        bytes: &[u8],
    ) {
        self.uploader
            .write_texture(&self.gpu.queue, texture, origin, size, bytes_per_row, bytes);
    }

    /// [`write`](GpuFrame::write) of one plain-old-data value.
    pub fn write_pod<T: bytemuck::Pod>(&mut self, dst: &wgpu::Buffer, offset: u64, value: &T) {
        self.write(dst, offset, bytemuck::bytes_of(value));
    }

    /// [`write`](GpuFrame::write) of a slice of plain-old-data values.
    pub fn write_slice<T: bytemuck::Pod>(&mut self, dst: &wgpu::Buffer, offset: u64, values: &[T]) {
        self.write(dst, offset, bytemuck::cast_slice(values));
    }
}

/// A frame outside the deck (tests, benches, tools, blocking helpers): owns its encoder and its
/// uploader, lends them as a [`GpuFrame`] ([`OwnedFrame::frame`]), and submits them once
/// ([`OwnedFrame::submit`]), uploads first, like the deck's frame.
pub struct OwnedFrame<'a> {
    gpu: &'a Gpu,
    encoder: wgpu::CommandEncoder,
    uploader: Uploader,
    frame: u64,
}

impl<'a> OwnedFrame<'a> {
    /// A frame of index 0 whose uploads use `strategy`.
    pub fn new(gpu: &'a Gpu, strategy: super::upload::Strategy) -> OwnedFrame<'a> {
        OwnedFrame {
            gpu,
            encoder: Self::encoder_for(gpu),
            uploader: Uploader::new(&gpu.device, strategy),
            frame: 0,
        }
    }

    fn encoder_for(gpu: &Gpu) -> wgpu::CommandEncoder {
        gpu.device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("owned_frame"),
            })
    }

    /// The frame's context, for frame [`set_index`](OwnedFrame::set_index) (0 at first; each
    /// [`submit`](OwnedFrame::submit) advances it).
    pub fn frame(&mut self) -> GpuFrame<'_> {
        GpuFrame::new(self.gpu, &mut self.encoder, &mut self.uploader, self.frame)
    }

    /// The owner of the device.
    pub fn gpu(&self) -> &'a Gpu {
        self.gpu
    }

    /// Sets the frame index of the next [`frame`](OwnedFrame::frame).
    pub fn set_index(&mut self, frame: u64) {
        self.frame = frame;
    }

    /// The encoder (for passes and copies after the uploads).
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        &mut self.encoder
    }

    /// The uploader's counters.
    pub fn counters(&self) -> super::upload::UploadCounters {
        self.uploader.counters
    }

    /// Submits everything recorded so far in one submit (staging memory finished first, asked
    /// back after), starts a new encoder and advances the frame index. Does not wait.
    pub fn submit(&mut self) {
        let encoder = std::mem::replace(&mut self.encoder, Self::encoder_for(self.gpu));
        self.uploader.finish();
        #[allow(clippy::disallowed_methods)] // the one submit of a frame made outside the deck
        self.gpu.queue.submit([encoder.finish()]);
        self.uploader.after_submit();
        self.frame += 1;
    }
}

/// Whether an upload into `dst` was written; an error is logged (a programming error: skipped,
/// never a panic).
fn logged(dst: &wgpu::Buffer, r: Result<(), super::upload::UploadError>) -> bool {
    r.inspect_err(|e| log::error!("upload into {:?}: {e}", dst))
        .is_ok()
}

/// A compute pass labelled `label` in `encoder`, without timestamps, running `record`.
pub fn compute_pass(
    encoder: &mut wgpu::CommandEncoder,
    label: &str,
    record: impl FnOnce(&mut wgpu::ComputePass<'_>),
) {
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: None,
    });
    record(&mut pass);
}

/// A render pass labelled `label` into the colour attachment `view`, loaded by `load` and
/// stored, no depth, with `timestamp_writes` (the deck's output passes, the benches' frames).
pub fn color_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    view: &wgpu::TextureView,
    label: &str,
    load: wgpu::LoadOp<wgpu::Color>,
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load,
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}
