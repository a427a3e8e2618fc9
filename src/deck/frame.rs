//! One frame, in order: clock → fixed updates → ingest → egui UI (its commands applied after
//! it) → uploads through the frame's uploader → compute pass → scene render pass → readback
//! copies → egui pass → screenshot and video copies → the frame's one submit; then, after the
//! present, the statistics of the frame ([`Deck::end_frame`]) and the readbacks that have
//! arrived.

use std::time::Instant;

use super::capture::{GPU_TIME_WAIT_FRAMES, attach_gpu_times};
use super::composite::{Composite, copy_into_rect, copyable};
use super::{Deck, FrameTimes, Output, SceneSlot, duration_ms};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::gpu::readback::Consumer;
use crate::gpu::timing::PassTimes;
use crate::gpu::timing::TimedFrame;
use crate::scene::{FrameCtx, SCENES};
use crate::stats::FrameRecord;

impl Deck {
    /// Runs one frame: `elapsed_s` of (real or simulated) time has passed since the previous one.
    /// Draws into `out` and submits; the caller presents, then calls [`Deck::end_frame`].
    pub fn frame(
        &mut self,
        gpu: &Gpu,
        out: &Output<'_>,
        raw_input: egui::RawInput,
        elapsed_s: f64,
    ) -> (FrameTimes, egui::PlatformOutput) {
        let start = Instant::now();
        let uploaded_before = self.uploader.counters.bytes;
        self.poll_dialog(gpu);
        self.follow_poll();
        self.ensure_active(gpu);
        if self.frame == 0
            && let Some((_, at)) = &mut self.ui_state.toast
        {
            // A toast given before the first frame (a settings file that did not read) is
            // shown from the first frame on, not from before the window and scene opened.
            *at = Instant::now();
        }
        let tick = self.clock.tick(elapsed_s);
        if elapsed_s.is_finite() && elapsed_s > 0.0 {
            self.pacing.run_s += elapsed_s;
        }
        let dt = self.clock.dt() as f32;
        let mut ctx = FrameCtx {
            frame: self.frame,
            steps: tick.steps,
            dt,
            alpha: tick.alpha,
            advanced_s: tick.advanced_s,
            elapsed_s: elapsed_s.clamp(0.0, crate::scene::MAX_FRAME_ELAPSED_S),
            size: self.out.target_px,
        };
        let mut t_mark = Instant::now();
        let mut lap = || {
            let now = Instant::now();
            let ms = duration_ms(now - t_mark);
            t_mark = now;
            ms
        };
        let mut update_ms = lap();
        let mut ingest_ms = 0.0;
        let mut ingest_late = false;
        let ingesting = self.active;
        if let SceneSlot::Ready(scene) = &mut self.slots[self.active] {
            for _ in 0..tick.steps {
                scene.fixed_update(dt);
            }
            update_ms += lap();
            ingest_late = scene.ingest_after_ui();
            if !ingest_late {
                scene.ingest(&ctx);
            }
            ingest_ms = lap();
        }
        self.follow_apply();

        // UI: lays out the panels and tells us the scene's pixel size for this frame.
        self.ensure_target(gpu, (1, 1));
        // The scene image is egui's only with `--composite egui-image`; else the output's passes
        // copy or blit it.
        self.out.composite_used = match self.out.composite {
            Composite::Copy if !out.texture.is_some_and(|o| copyable(gpu.scene_format, o)) => {
                Composite::Blit
            }
            c => c,
        };
        let tex_id = match self.out.composite_used {
            Composite::EguiImage => self.out.target.as_ref().map(|t| t.egui_id),
            Composite::Copy | Composite::Blit => None,
        };
        // A PNG asked for in the last frame is taken from this one, drawn for it.
        self.files.png_now = self.files.png_next.take();
        let mut scene_rect = egui::Rect::NOTHING;
        let mut commands = Vec::new();
        let mut full = {
            let ctx_egui = self.ui_state.egui_ctx.clone();
            ctx_egui.run_ui(raw_input, |ui| {
                scene_rect = self.ui(ui, tex_id, &mut commands);
            })
        };
        for command in commands {
            self.apply(gpu, command);
        }
        self.pacing.repaint_from = std::time::Instant::now();
        self.pacing.egui_repaint_delay = full
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .map_or(std::time::Duration::MAX, |v| v.repaint_delay);
        let ppp = full.pixels_per_point;
        let max_side = gpu.device.limits().max_texture_dimension_2d;
        let px = (
            ((scene_rect.width() * ppp).round() as u32).clamp(1, max_side),
            ((scene_rect.height() * ppp).round() as u32).clamp(1, max_side),
        );
        self.ui_state.scene_rect_px = (
            (scene_rect.left() * ppp).round().max(0.0) as u32,
            (scene_rect.top() * ppp).round().max(0.0) as u32,
            px.0,
            px.1,
        );
        let area = if self.ui_state.scene_area.is_positive() {
            self.ui_state.scene_area
        } else {
            scene_rect
        };
        self.ui_state.scene_area_px = (
            (area.left() * ppp).round().max(0.0) as u32,
            (area.top() * ppp).round().max(0.0) as u32,
            ((area.width() * ppp).round() as u32).max(1),
            ((area.height() * ppp).round() as u32).max(1),
        );
        self.ensure_target(gpu, px);
        ctx.size = self.out.target_px;
        self.capture_tick(gpu);
        let ui_ms = lap();
        // A scene that asks for it pulls its input only now, just before its uploads: whatever
        // arrived while the UI was laid out reaches this frame (the spectrogram's latency).
        if ingest_late
            && self.active == ingesting
            && let SceneSlot::Ready(scene) = &mut self.slots[self.active]
        {
            scene.ingest(&ctx);
            ingest_ms += lap();
        }
        self.publish_frame();

        // Uploads (through the frame's uploader, into the frame's one encoder), then one compute
        // pass and the scene's render pass, both timed.
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame"),
            });
        if let SceneSlot::Ready(scene) = &mut self.slots[self.active] {
            let mut f = GpuFrame::new(gpu, &mut encoder, &mut self.uploader, self.frame);
            scene.prepare(&mut f, &ctx);
        }
        let upload_ms = lap();
        self.ensure_depth(gpu);
        let timed = match &mut self.timer {
            Some(t) => t.begin_frame(self.frame),
            None => false,
        };
        if let (SceneSlot::Ready(scene), Some(target)) =
            (&mut self.slots[self.active], &self.out.target)
        {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("scene:compute"),
                    timestamp_writes: self.timer.as_ref().and_then(|t| t.compute_writes()),
                });
                scene.compute(&mut pass, &ctx);
            }
            // A scene that resolves in compute writes the whole texture here; the render pass
            // then keeps it.
            let load = crate::scene::write_or_clear(
                scene.as_ref(),
                &mut encoder,
                &target.texture,
                scene.background(),
            );
            {
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("scene:render"),
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &target.view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations {
                            load,
                            store: wgpu::StoreOp::Store,
                        },
                    })],
                    depth_stencil_attachment: scene
                        .depth_format()
                        .and(self.out.depth.as_ref())
                        .map(|d| wgpu::RenderPassDepthStencilAttachment {
                            view: &d.view,
                            depth_ops: Some(wgpu::Operations {
                                load: wgpu::LoadOp::Clear(1.0),
                                store: wgpu::StoreOp::Discard,
                            }),
                            stencil_ops: None,
                        }),
                    timestamp_writes: self.timer.as_ref().and_then(|t| t.render_writes()),
                    occlusion_query_set: None,
                    multiview_mask: None,
                });
                scene.paint(&mut pass, &ctx);
            }
        } else if timed {
            // Nothing to time this frame: give the slot back unused.
            if let Some(t) = &mut self.timer {
                t.cancel();
            }
        }

        // The scene's GPU → CPU copies (statistics, levels) into the shared ring, after its passes.
        let consumer = Consumer::Scene(self.active);
        if let (SceneSlot::Ready(scene), true) =
            (&mut self.slots[self.active], self.out.target.is_some())
        {
            scene.record_readbacks(&gpu.device, &mut encoder, &mut self.readback, consumer);
        }

        // The output: the scene image (copied, blitted, or drawn by egui as an image), then egui's
        // shapes on top. egui's textures and buffers go through the UI's uploader (same
        // strategy, counted apart from the scene's).
        let prims = self.ui_state.egui_ctx.tessellate(full.shapes, ppp);
        {
            let mut f = GpuFrame::new(gpu, &mut encoder, &mut self.ui_uploader, self.frame);
            self.ui_state
                .painter
                .update_textures(&mut f, &full.textures_delta);
            self.ui_state.painter.prepare(&mut f, &prims, out.size, ppp);
        }
        let ready = matches!(self.slots[self.active], SceneSlot::Ready(_));
        let copy = match (&self.out.target, out.texture) {
            (Some(t), Some(o)) if ready && self.out.composite_used == Composite::Copy => {
                Some((t, o))
            }
            _ => None,
        };
        if let Some((target, output)) = copy {
            // Copy the scene image into its rect and the background colour around it, then
            // egui's shapes over both in one pass that loads what the copies left: on a software
            // rasterizer the copies are memcpys, where a clear and a blit are passes of fill.
            {
                // Starts the UI's timing before the copies (an empty compute pass: no raster
                // work, unlike a render pass).
                let _ = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("egui:composite"),
                    timestamp_writes: self
                        .timer
                        .as_mut()
                        .and_then(|t| t.ui_begin_compute_writes()),
                });
            }
            let copied = copy_into_rect(
                &mut encoder,
                &target.texture,
                output,
                self.ui_state.scene_rect_px,
            );
            self.out.background.fill_around(
                &gpu.device,
                &mut encoder,
                output,
                copied,
                self.out.clear_color,
            );
            let mut pass = crate::gpu::frame::color_pass(
                &mut encoder,
                out.view,
                "egui",
                wgpu::LoadOp::Load,
                self.timer.as_mut().and_then(|t| t.ui_end_writes()),
            );
            self.ui_state.painter.paint(&mut pass, out.size);
        } else {
            let mut pass = crate::gpu::frame::color_pass(
                &mut encoder,
                out.view,
                "egui",
                wgpu::LoadOp::Clear(self.out.clear_color),
                self.timer.as_mut().and_then(|t| t.ui_writes()),
            );
            if let (Composite::Blit, Some(target), true) =
                (self.out.composite_used, &self.out.target, ready)
            {
                self.out.blit.draw(
                    &mut pass,
                    &target.blit_group,
                    self.ui_state.scene_rect_px,
                    out.size,
                );
            }
            self.ui_state.painter.paint(&mut pass, out.size);
        }
        if let Some(t) = &mut self.timer {
            t.resolve(&gpu.device, &mut encoder, &mut self.readback);
        }
        self.record_screenshots(gpu, &mut encoder, out.texture);
        self.record_video(gpu, &mut encoder, out.texture);
        self.ui_state.painter.free_textures(&full.textures_delta);
        // Both parts are handled now (epaint checks that none is dropped unapplied).
        full.textures_delta.clear();
        let encode_ms = lap();
        self.uploader.finish();
        self.ui_uploader.finish();
        // The frame's one submit (egui's own upload command buffers first).
        #[allow(clippy::disallowed_methods)]
        gpu.queue.submit(std::iter::once(encoder.finish()));
        self.uploader.after_submit();
        self.ui_uploader.after_submit();
        self.readback.after_submit();
        let submit_ms = lap();
        let times = FrameTimes {
            frame: self.frame,
            start,
            ingest_ms,
            update_ms,
            ui_ms,
            upload_ms,
            encode_ms,
            submit_ms,
            acquire_wait_ms: 0.0,
            present_ms: 0.0,
            bytes_uploaded: self.uploader.counters.bytes.saturating_sub(uploaded_before),
            tick,
        };
        self.frame += 1;
        (times, full.platform_output)
    }

    /// Records the frame's statistics after it was presented at `presented`. Never blocks: the
    /// readback ring is polled once (GPU times, screenshots and video frames that have arrived
    /// are handed out), and the video writer's news taken (a failure, a file finished).
    pub fn end_frame(&mut self, gpu: &Gpu, times: &FrameTimes, presented: Instant) {
        let cpu_frame_ms = duration_ms(presented.duration_since(times.start));
        let present_interval_ms = match self.pacing.last_present {
            Some(p) => duration_ms(presented.duration_since(p)),
            None => cpu_frame_ms,
        };
        self.pacing.last_present = Some(presented);
        let device_reset = match self.recovery.reset_started.take() {
            Some(t) => {
                let ms = duration_ms(presented.saturating_duration_since(t));
                log::info!(
                    "GPU reset: first frame presented on the new device {ms:.1} ms after the loss was noticed"
                );
                self.recovery.device_reset_ms.push(ms);
                true
            }
            None => false,
        };
        if let SceneSlot::Ready(scene) = &mut self.slots[self.active] {
            scene.presented(presented);
        }
        self.share_presented(presented);
        // An interval that began with the window waiting (for input, a toast's end, a nap) is
        // time spent idle, not drawing: it stays out of the overlay and the run's summary
        // (a recording never waits: it keeps the loop running).
        if std::mem::take(&mut self.pacing.after_wait) {
            self.idle_intervals += 1;
        } else {
            self.live.push(present_interval_ms);
            self.run_frame_ms.push(present_interval_ms);
        }
        self.memory.frame_ended(self.run_frame_ms.len() as u64);
        let gpu_times = self.drain_readbacks(gpu, false);
        self.poll_video();
        if let Some(last) = gpu_times.last() {
            self.gpu_live = [last.compute_ms, last.render_ms, last.ui_ms.unwrap_or(0.0)];
        }
        let read_total = self.readback.bytes_read();
        let bytes_read_back = read_total.saturating_sub(self.files.readback_mark);
        self.files.readback_mark = read_total;
        let scene = SCENES[self.active].id;
        if let Some(rec) = &mut self.files.recording {
            let time_ms = times
                .start
                .checked_duration_since(rec.start)
                .map_or(0.0, duration_ms);
            rec.pending.push_back(FrameRecord {
                frame: times.frame,
                scene,
                time_ms,
                ms_between_presents: present_interval_ms,
                cpu_busy_ms: times.cpu_busy_ms(),
                present_ms: times.present_ms,
                acquire_wait_ms: times.acquire_wait_ms,
                ingest_ms: times.ingest_ms,
                update_ms: times.update_ms,
                ui_ms: times.ui_ms,
                upload_ms: times.upload_ms,
                encode_ms: times.encode_ms,
                submit_ms: times.submit_ms,
                gpu_compute_ms: None,
                gpu_render_ms: None,
                gpu_ui_ms: None,
                steps: times.tick.steps,
                dropped_steps: times.tick.dropped_steps,
                dropped_sim_ms: times.tick.dropped_steps as f64 * self.clock.dt() * 1e3,
                bytes_uploaded: times.bytes_uploaded,
                bytes_read_back,
                device_reset,
            });
            // GPU times arrive 0–3 frames late (possibly for this very frame).
            attach_gpu_times(&mut rec.pending, &gpu_times);
            let mut failed = None;
            while let Some(front) = rec.pending.front() {
                let ready = front.gpu_compute_ms.is_some()
                    || times.frame.saturating_sub(front.frame) >= GPU_TIME_WAIT_FRAMES
                    || self.timer.is_none();
                if !ready {
                    break;
                }
                if let Some(row) = rec.pending.pop_front()
                    && let Err(e) = rec.recorder.push(&row)
                {
                    failed = Some(e.to_string());
                    break;
                }
            }
            if let Some(e) = failed {
                log::error!(
                    "recording to {}: {e}; recording stopped",
                    rec.path.display()
                );
                self.toast(format!("recording stopped: {e}"));
                self.files.recording = None;
            }
        }
    }

    /// Polls the readback ring once (or, with `wait`, waits for every copy in flight) and routes
    /// what arrived: GPU times are decoded and returned, screenshots go to the PNG writer, video
    /// frames to the video writer, and copies for [`Consumer::Scene`]`(i)` to scene i
    /// ([`Scene::readback_arrived`](crate::scene::Scene::readback_arrived)); copies their consumer
    /// invalidated are dropped by the ring itself.
    pub(super) fn drain_readbacks(&mut self, gpu: &Gpu, wait: bool) -> Vec<PassTimes> {
        let mut gpu_times = Vec::new();
        let timer = self.timer.as_ref();
        let shots = &mut self.files.screenshots;
        let video = &mut self.files.video;
        let slots = &mut self.slots;
        let route = |a: crate::gpu::readback::Arrived<'_>| match a.consumer {
            Consumer::Timing => {
                if let Some(&TimedFrame(frame)) = a.payload::<TimedFrame>()
                    && let Some(t) = timer.and_then(|t| t.decode(frame, a.data))
                {
                    gpu_times.push(t);
                }
            }
            Consumer::Video => video.arrived(&a),
            Consumer::Screenshot => {
                // A PNG asked for is toasted with its path once written (`report_pngs`).
                let _ = shots.arrived(&a);
            }
            Consumer::Scene(i) => {
                if let Some(SceneSlot::Ready(s)) = slots.get_mut(i) {
                    s.readback_arrived(&a);
                }
            }
        };
        if wait {
            self.readback.wait(&gpu.device, route);
        } else {
            self.readback.poll(&gpu.device, route);
        }
        self.report_pngs();
        gpu_times
    }
}
