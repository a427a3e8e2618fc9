//! The desktop app: a winit 0.30 [`ApplicationHandler`] that owns the window and its one wgpu
//! surface, handles every result of acquiring a surface texture, paces frames, and ends cleanly
//! (recording flushed, summary printed) on window close, Ctrl+Q, Ctrl-C or SIGTERM.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::window::{Window, WindowId};

use crate::cli::Cli;
use crate::deck::{Deck, Output, Redraw};
use crate::gpu::Gpu;

/// Events sent into the event loop from other threads.
#[derive(Debug, Clone, Copy)]
pub enum UserEvent {
    /// Ctrl-C or SIGTERM: finish and exit.
    Stop,
    /// Work finished on another thread (a point-cloud node decoded): draw a frame
    /// ([`crate::scene::wake`]).
    Redraw,
}

static STOP_PROXY: Mutex<Option<EventLoopProxy<UserEvent>>> = Mutex::new(None);

/// Installs the Ctrl-C / SIGTERM handler (once per process) and returns the flag it sets. The
/// handler also wakes the event loop when one is running.
pub fn install_stop_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        if let Err(e) = ctrlc::set_handler(move || {
            f.store(true, Ordering::SeqCst);
            if let Ok(p) = STOP_PROXY.lock()
                && let Some(p) = p.as_ref()
            {
                let _ = p.send_event(UserEvent::Stop);
            }
        }) {
            log::warn!("cannot install the Ctrl-C/SIGTERM handler: {e}");
        }
        flag
    })
    .clone()
}

struct Running {
    window: Arc<Window>,
    gpu: Gpu,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    view_format: wgpu::TextureFormat,
    deck: Deck,
    egui: egui_winit::State,
}

/// The application state.
pub struct App {
    cli: Cli,
    running: Option<Running>,
    last_frame: Option<Instant>,
    /// The window said it is fully hidden (`WindowEvent::Occluded(true)`).
    occluded: bool,
    /// The window size the surface was last clamped from (the notice is given once per size).
    clamped_from: Option<(u32, u32)>,
    /// The kind of the last [`Redraw`] asked for (logged at debug level when it changes).
    last_redraw_kind: Option<std::mem::Discriminant<Redraw>>,
    /// The wait under way ends in a poll of the scene's input ([`Redraw::Poll`]).
    poll_pending: bool,
    stop: Arc<AtomicBool>,
    error: Option<anyhow::Error>,
    finished: bool,
    /// The settings this run started from, handed to the deck when the window opens.
    settings: Option<crate::settings::Start>,
}

/// A winit error's text without the `os error at <winit source file>:<line>: ` that winit puts
/// before every OS error (a path inside the cargo registry says nothing to a user).
pub fn winit_error_text(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("os error at ") else {
        return text;
    };
    // The location ends at the first ": " preceded by ":<line number>".
    for (i, _) in rest.match_indices(": ") {
        let before = &rest[..i];
        if let Some((_, line)) = before.rsplit_once(':')
            && !line.is_empty()
            && line.bytes().all(|b| b.is_ascii_digit())
        {
            return &rest[i + 2..];
        }
    }
    text
}

/// The one line vizdeck prints when winit cannot connect to a display: `error` is winit's text,
/// `display` and `wayland` the values of `DISPLAY` and `WAYLAND_DISPLAY` (unset or empty: `None`).
pub fn no_window_message(error: &str, display: Option<&str>, wayland: Option<&str>) -> String {
    let reason = winit_error_text(error).trim().trim_end_matches('.');
    match (display, wayland) {
        (None, None) => "cannot open a window: no display (neither DISPLAY nor WAYLAND_DISPLAY \
                         is set); run it on a desktop, set DISPLAY, or use --headless"
            .to_string(),
        _ => {
            let mut on = Vec::new();
            if let Some(w) = wayland {
                on.push(format!("WAYLAND_DISPLAY={w}"));
            }
            if let Some(d) = display {
                on.push(format!("DISPLAY={d}"));
            }
            format!(
                "cannot open a window on {}: {reason}; is the display server running? (or use \
                 --headless)",
                on.join(", ")
            )
        }
    }
}

/// Runs the windowed app until it is closed, starting from `settings` (the window's size was
/// applied to `cli` already; its position is taken here) and writing them back at the end.
/// Errors: no display, no GPU adapter.
pub fn run(cli: &Cli, settings: crate::settings::Start) -> anyhow::Result<()> {
    let event_loop = EventLoop::<UserEvent>::with_user_event()
        .build()
        .map_err(|e| {
            let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
            anyhow::anyhow!(no_window_message(
                &e.to_string(),
                var("DISPLAY").as_deref(),
                var("WAYLAND_DISPLAY").as_deref(),
            ))
        })?;
    if let Ok(mut p) = STOP_PROXY.lock() {
        *p = Some(event_loop.create_proxy());
    }
    let proxy = event_loop.create_proxy();
    crate::scene::wake::set(Some(Arc::new(move || {
        let _ = proxy.send_event(UserEvent::Redraw);
    })));
    let stop = install_stop_flag();
    let mut app = App {
        cli: cli.clone(),
        running: None,
        last_frame: None,
        occluded: false,
        clamped_from: None,
        last_redraw_kind: None,
        poll_pending: false,
        stop,
        error: None,
        finished: false,
        settings: Some(settings),
    };
    event_loop.run_app(&mut app)?;
    match app.error.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Picks a non-sRGB surface format (egui-wgpu writes gamma-space colours): the first of
/// Bgra8Unorm/Rgba8Unorm the surface supports, else the first format, viewed without its sRGB
/// suffix. Returns (surface format, view format).
pub fn choose_format(
    formats: &[wgpu::TextureFormat],
) -> Option<(wgpu::TextureFormat, wgpu::TextureFormat)> {
    let preferred = [
        wgpu::TextureFormat::Bgra8Unorm,
        wgpu::TextureFormat::Rgba8Unorm,
    ];
    if let Some(f) = formats.iter().find(|f| preferred.contains(f)) {
        return Some((*f, *f));
    }
    formats.first().map(|f| (*f, f.remove_srgb_suffix()))
}

impl App {
    fn start(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        let (w, h) = self.cli.size;
        let mut attrs = Window::default_attributes()
            .with_title("vizdeck")
            .with_inner_size(winit::dpi::PhysicalSize::new(w, h));
        // Where the window was when it last closed (X11 honours it; Wayland places windows
        // itself).
        if let Some(s) = &self.settings
            && let Some(p) = s.settings.window
            && let (Some(x), Some(y)) = (p.x, p.y)
        {
            attrs = attrs.with_position(winit::dpi::PhysicalPosition::new(x, y));
        }
        let window = Arc::new(event_loop.create_window(attrs).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the window: {}",
                winit_error_text(&e.to_string())
            )
        })?);
        let display = Box::new(event_loop.owned_display_handle());
        let (mut gpu, surface) =
            Gpu::new(self.cli.backend, Some(display), Some(window.clone().into()))?;
        let surface = surface.context("no surface")?;
        let caps = surface.get_capabilities(&gpu.adapter);
        let (format, view_format) =
            choose_format(&caps.formats).context("the window surface offers no texture format")?;
        gpu.set_output_format(view_format);
        let inner = window.inner_size();
        let (width, height) = clamp_surface_size(
            (inner.width, inner.height),
            gpu.device.limits().max_texture_dimension_2d,
        );
        let config = wgpu::SurfaceConfiguration {
            // COPY_SRC where offered, for "Save PNG of the scene".
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | (caps.usages & (wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST)),
            format,
            width,
            height,
            present_mode: {
                let wanted = self.cli.present_mode.mode();
                let auto = matches!(
                    wanted,
                    wgpu::PresentMode::AutoVsync | wgpu::PresentMode::AutoNoVsync
                );
                if auto || caps.present_modes.contains(&wanted) {
                    wanted
                } else {
                    log::warn!(
                        "present mode {wanted:?} not offered by this surface ({:?}); using Fifo",
                        caps.present_modes
                    );
                    wgpu::PresentMode::Fifo
                }
            },
            desired_maximum_frame_latency: 2,
            alpha_mode: caps
                .alpha_modes
                .first()
                .copied()
                .unwrap_or(wgpu::CompositeAlphaMode::Auto),
            color_space: wgpu::SurfaceColorSpace::Auto,
            view_formats: if view_format != format {
                vec![view_format]
            } else {
                vec![]
            },
        };
        if inner.width > 0 && inner.height > 0 {
            surface.configure(&gpu.device, &config);
        }
        let mut deck = Deck::new(
            &gpu,
            view_format,
            self.cli.scene_index(),
            self.cli.scene_config(),
        );
        deck.plan_capture(
            self.cli.record_stats.clone(),
            self.cli.capture_delay,
            self.cli.capture_duration,
        );
        deck.set_overlay(self.cli.overlay_on());
        // A chart polling for input draws at most at the display's rate.
        if let Some(mhz) = window
            .current_monitor()
            .and_then(|m| m.refresh_rate_millihertz())
        {
            deck.set_display_rate(f64::from(mhz) / 1000.0);
        }
        deck.set_upload_strategy(self.cli.upload_strategy);
        deck.set_composite(self.cli.composite);
        deck.memory = crate::stats::memory::MemoryTrack::new(self.cli.memory_warmup_frames);
        if let Some(s) = self.settings.take() {
            if let Some(m) = s.messages.first() {
                deck.toast(m.clone());
            }
            deck.use_settings(s);
        }
        if let Err(e) = deck.start_sharing(self.cli.publish.as_deref(), self.cli.follow.as_deref())
        {
            // The URLs were checked by the parser; what is left (TLS set-up) is a toast.
            log::error!("{e}");
            deck.toast(e);
        }
        if let Some(path) = &self.cli.record_video {
            // A problem (no ffmpeg) is a toast; the window runs on without the video.
            let clock = crate::deck::VideoClock::RealTime;
            if let Err(e) = deck.start_video(Some(path.clone()), clock) {
                let msg = crate::deck::video_flag_message(path, &e);
                log::error!("{msg}");
                deck.toast(msg);
            }
        }
        let egui = egui_winit::State::new(
            deck.egui_ctx().clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(gpu.device.limits().max_texture_dimension_2d as usize),
        );
        window.request_redraw();
        self.running = Some(Running {
            window,
            gpu,
            surface,
            config,
            view_format,
            deck,
            egui,
        });
        Ok(())
    }

    /// Ends the run: stops recording (flushing every row), ends the video file, prints the
    /// summary, writes the report.
    fn finish(&mut self, event_loop: &ActiveEventLoop) {
        if self.finished {
            event_loop.exit();
            return;
        }
        self.finished = true;
        if let Some(r) = &mut self.running {
            r.deck.stop_recording(&r.gpu);
            let inner = r.window.inner_size();
            let pos = r.window.outer_position().ok();
            r.deck.save_settings(Some(crate::settings::WindowPlacement {
                width: inner.width,
                height: inner.height,
                x: pos.map(|p| p.x),
                y: pos.map(|p| p.y),
            }));
            if let Err(e) = r.deck.finish_scenes(&r.gpu) {
                self.error = Some(anyhow::anyhow!(e));
            }
            // The video file ended properly (ffmpeg waited for); a failure was said in its toast
            // and the log when it happened.
            let _ = r.deck.finish_video(&r.gpu);
            let summary = crate::stats::Summary::from_frame_times(&r.deck.run_frame_ms);
            println!("vizdeck: {summary}");
            if let Some(path) = &self.cli.report {
                let size = (r.config.width, r.config.height);
                let report = crate::report::build(&r.gpu, &r.deck, "window", size);
                if let Err(e) = crate::report::write(path, &report) {
                    log::error!("{e}");
                    self.error = Some(e);
                }
            }
        }
        event_loop.exit();
    }

    /// Waits 100 ms for the next look (`new_events` asks for a redraw then) instead of drawing:
    /// a minimized, occluded or zero-size window costs ten event-loop turns a second.
    fn nap(last_frame: &mut Option<Instant>, event_loop: &ActiveEventLoop) {
        *last_frame = None;
        event_loop.set_control_flow(ControlFlow::WaitUntil(
            Instant::now() + Duration::from_millis(100),
        ));
    }

    /// The device of `r` was lost (`reason`): a new [`Gpu`] and surface for the same window,
    /// the deck moved onto them ([`Deck::replace_gpu`]), egui-winit given the deck's new egui
    /// context.
    ///
    /// # Errors
    ///
    /// When no new device or surface can be made; the work in flight on the old device is
    /// forgotten first, so the caller can still stop the recording and write the report.
    fn recover(r: &mut Running, event_loop: &ActiveEventLoop, reason: &str) -> anyhow::Result<()> {
        let noticed = Instant::now();
        log::error!("GPU device lost ({reason}); creating a new one");
        let display = Box::new(event_loop.owned_display_handle());
        let made = r
            .gpu
            .replacement(Some(display), Some(r.window.clone().into()))
            .map_err(anyhow::Error::from)
            .and_then(|(gpu, surface)| Ok((gpu, surface.context("no surface")?)));
        let (gpu, surface) = match made {
            Ok(m) => m,
            Err(e) => {
                r.deck.abandon_gpu_work();
                return Err(e.context(format!(
                    "the GPU device was lost ({reason}) and no new one could be created"
                )));
            }
        };
        // The old surface (and its swapchain) goes before the new one is configured.
        r.surface = surface;
        r.gpu = gpu;
        r.gpu.set_output_format(r.view_format);
        let caps = r.surface.get_capabilities(&r.gpu.adapter);
        if !caps.formats.contains(&r.config.format) {
            r.deck.abandon_gpu_work();
            anyhow::bail!(
                "the GPU device was lost ({reason}); the new one cannot draw {:?} into the window",
                r.config.format
            );
        }
        if r.config.width > 0 && r.config.height > 0 {
            r.surface.configure(&r.gpu.device, &r.config);
        }
        let ctx = r.deck.replace_gpu(&r.gpu, reason, noticed);
        r.egui = egui_winit::State::new(
            ctx,
            egui::ViewportId::ROOT,
            &r.window,
            Some(r.window.scale_factor() as f32),
            None,
            Some(r.gpu.device.limits().max_texture_dimension_2d as usize),
        );
        Ok(())
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        let Some(r) = &mut self.running else { return };
        r.deck.inject_device_loss(&r.gpu);
        if let Some(reason) = r.gpu.lost()
            && let Err(e) = Self::recover(r, event_loop, &reason)
        {
            log::error!("{e:#}");
            self.error = Some(e);
            self.finish(event_loop);
            return;
        }
        let window_size = r.window.inner_size();
        let hidden = self.occluded || r.window.is_minimized() == Some(true);
        if window_size.width == 0 || window_size.height == 0 || hidden {
            // Nothing to draw into: nap, then look again (`new_events`); no busy loop.
            r.deck.note_wait();
            Self::nap(&mut self.last_frame, event_loop);
            return;
        }
        let size = clamp_surface_size(
            (window_size.width, window_size.height),
            r.gpu.device.limits().max_texture_dimension_2d,
        );
        let clamped = size != (window_size.width, window_size.height);
        if clamped && self.clamped_from != Some((window_size.width, window_size.height)) {
            let msg = format!(
                "the window is {}x{} px, larger than this GPU's {} px texture limit: drawing \
                 {}x{} px of it",
                window_size.width,
                window_size.height,
                r.gpu.device.limits().max_texture_dimension_2d,
                size.0,
                size.1
            );
            log::warn!("{msg}");
            r.deck.toast(msg);
        }
        self.clamped_from = clamped.then_some((window_size.width, window_size.height));
        if size != (r.config.width, r.config.height) {
            r.config.width = size.0;
            r.config.height = size.1;
            r.surface.configure(&r.gpu.device, &r.config);
        }
        let acquire_start = Instant::now();
        let acquired = r.surface.get_current_texture();
        let acquire_wait_ms = crate::deck::duration_ms(acquire_start.elapsed());
        let frame = match acquired {
            wgpu::CurrentSurfaceTexture::Success(f) => f,
            wgpu::CurrentSurfaceTexture::Suboptimal(f) => {
                // Draw this one, then reconfigure for the next (a clamped surface is suboptimal
                // by design: reconfiguring would not change it).
                if !clamped {
                    r.config.width = 0; // forces configure below
                }
                f
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                // Asking again at once spins while the compositor holds the images back.
                r.deck.note_wait();
                Self::nap(&mut self.last_frame, event_loop);
                return;
            }
            wgpu::CurrentSurfaceTexture::Outdated => {
                r.surface.configure(&r.gpu.device, &r.config);
                r.window.request_redraw();
                return;
            }
            wgpu::CurrentSurfaceTexture::Lost => {
                match r.gpu.instance.create_surface(r.window.clone()) {
                    Ok(s) => {
                        r.surface = s;
                        r.surface.configure(&r.gpu.device, &r.config);
                    }
                    Err(e) => log::error!("surface lost and not recreated: {e}"),
                }
                r.window.request_redraw();
                return;
            }
            wgpu::CurrentSurfaceTexture::Validation => {
                log::error!("surface acquire: validation error; skipping frame");
                r.window.request_redraw();
                return;
            }
        };
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor {
            label: Some("surface:view"),
            format: Some(r.view_format),
            ..Default::default()
        });
        event_loop.set_control_flow(ControlFlow::Wait);
        let now = Instant::now();
        let elapsed = self
            .last_frame
            .map(|t| (now - t).as_secs_f64())
            .unwrap_or(0.0);
        self.last_frame = Some(now);
        let raw = r.egui.take_egui_input(&r.window);
        let out = Output {
            view: &view,
            texture: Some(&frame.texture),
            size: (frame.texture.width(), frame.texture.height()),
            pixels_per_point: r.window.scale_factor() as f32,
        };
        let (mut times, platform) = r.deck.frame(&r.gpu, &out, raw, elapsed);
        times.acquire_wait_ms = acquire_wait_ms;
        r.window.pre_present_notify();
        let present_start = Instant::now();
        r.gpu.queue.present(frame);
        let presented = Instant::now();
        times.present_ms = crate::deck::duration_ms(presented - present_start);
        r.deck.end_frame(&r.gpu, &times, presented);
        r.egui.handle_platform_output(&r.window, platform);
        if r.config.width == 0 {
            let s = r.window.inner_size();
            let (w, h) = clamp_surface_size(
                (s.width.max(1), s.height.max(1)),
                r.gpu.device.limits().max_texture_dimension_2d,
            );
            r.config.width = w;
            r.config.height = h;
            r.surface.configure(&r.gpu.device, &r.config);
        }
        let limit_reached = self.cli.frames.is_some_and(|n| r.deck.frames() >= n);
        if r.deck.quit_requested() || limit_reached {
            self.finish(event_loop);
            return;
        }
        // Draw again now, at a time, or on input only (an idle window sleeps; `new_events`
        // asks for the redraw when a wait ends, `window_event` on input).
        let next = r.deck.next_redraw();
        if self.last_redraw_kind != Some(std::mem::discriminant(&next)) {
            log::debug!("next redraw: {next:?}");
            self.last_redraw_kind = Some(std::mem::discriminant(&next));
        }
        self.schedule(event_loop, next);
    }

    /// Carries out `next` ([`Deck::next_redraw`]): a redraw asked for now, or a wait (until a
    /// time, for a poll of the scene's input, or for input).
    fn schedule(&mut self, event_loop: &ActiveEventLoop, next: Redraw) {
        let Some(r) = &mut self.running else {
            return;
        };
        self.poll_pending = matches!(next, Redraw::Poll(_)) && self.cli.frames.is_none();
        match next {
            Redraw::Now => r.window.request_redraw(),
            _ if self.cli.frames.is_some() => r.window.request_redraw(),
            Redraw::At(t) | Redraw::Poll(t) => {
                r.deck.note_wait();
                event_loop.set_control_flow(ControlFlow::WaitUntil(t));
            }
            Redraw::OnInput => {
                r.deck.note_wait();
                event_loop.set_control_flow(ControlFlow::Wait);
            }
        }
    }
}

impl ApplicationHandler<UserEvent> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_none()
            && let Err(e) = self.start(event_loop)
        {
            self.error = Some(e);
            event_loop.exit();
        }
    }

    fn new_events(&mut self, event_loop: &ActiveEventLoop, cause: winit::event::StartCause) {
        // A wait is over (the 100 ms nap of a minimized or zero-size window, or the time an
        // idle window was asked to draw again at): draw; a poll of the scene's input draws only
        // when the input changed the image, else waits again.
        if let winit::event::StartCause::ResumeTimeReached { .. } = cause
            && let Some(r) = &mut self.running
        {
            if self.poll_pending && !self.occluded && !r.deck.poll_input() {
                let next = r.deck.next_redraw();
                self.schedule(event_loop, next);
                return;
            }
            self.poll_pending = false;
            r.window.request_redraw();
        }
    }

    fn user_event(&mut self, event_loop: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::Stop => self.finish(event_loop),
            UserEvent::Redraw => {
                if let Some(r) = &self.running {
                    r.window.request_redraw();
                }
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        if let Some(r) = &mut self.running {
            let response = r.egui.on_window_event(&r.window, &event);
            // egui asks to repaint after every event, RedrawRequested included: honouring that
            // one would make a loop of redraws even while the window is minimized.
            if response.repaint && !matches!(event, WindowEvent::RedrawRequested) {
                r.window.request_redraw();
            }
        }
        match event {
            WindowEvent::CloseRequested | WindowEvent::Destroyed => self.finish(event_loop),
            WindowEvent::Occluded(hidden) => {
                self.occluded = hidden;
                if let (false, Some(r)) = (hidden, &self.running) {
                    r.window.request_redraw();
                }
            }
            WindowEvent::Resized(_) => {
                if let Some(r) = &self.running {
                    r.window.request_redraw();
                }
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            WindowEvent::DroppedFile(path) => {
                if let Some(r) = &mut self.running {
                    r.deck.open_file(&r.gpu, path);
                    r.window.request_redraw();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.stop.load(Ordering::SeqCst) {
            self.finish(event_loop);
        }
    }
}

/// The surface size for a window of `window` pixels: each side at most `max` (the adapter's
/// `max_texture_dimension_2d`), at least 1. A larger window shows the top-left part drawn at this
/// size (one notice).
pub fn clamp_surface_size(window: (u32, u32), max: u32) -> (u32, u32) {
    (window.0.clamp(1, max.max(1)), window.1.clamp(1, max.max(1)))
}

#[cfg(test)]
mod tests {
    use super::{no_window_message, winit_error_text};

    /// winit 0.30.13's texts, as printed before this was fixed.
    const NO_VARS: &str = "os error at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/\
                           winit-0.30.13/src/platform_impl/linux/mod.rs:765: neither \
                           WAYLAND_DISPLAY nor WAYLAND_SOCKET nor DISPLAY is set.";
    const NO_SERVER: &str = "os error at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/\
                             winit-0.30.13/src/platform_impl/linux/mod.rs:788: Failed to open \
                             connection to X server";

    #[test]
    fn winit_location_is_dropped() {
        assert_eq!(
            winit_error_text(NO_VARS),
            "neither WAYLAND_DISPLAY nor WAYLAND_SOCKET nor DISPLAY is set."
        );
        assert_eq!(
            winit_error_text(NO_SERVER),
            "Failed to open connection to X server"
        );
        // A colon inside the reason stays; text without the prefix is kept whole.
        assert_eq!(
            winit_error_text("os error at src/x.rs:12: bad: thing"),
            "bad: thing"
        );
        assert_eq!(
            winit_error_text("EventLoop can't be recreated"),
            "EventLoop can't be recreated"
        );
        assert_eq!(
            winit_error_text("os error at nowhere"),
            "os error at nowhere"
        );
    }

    #[test]
    fn no_window_is_one_line_without_source_paths() {
        for (error, display, wayland) in [
            (NO_VARS, None, None),
            (NO_SERVER, Some(":77"), None),
            (NO_SERVER, Some(":77"), Some("wayland-1")),
        ] {
            let m = no_window_message(error, display, wayland);
            assert!(!m.contains('\n'), "{m}");
            assert!(!m.contains(".rs"), "{m}");
            assert!(!m.contains("cargo"), "{m}");
            assert!(m.contains("--headless"), "{m}");
        }
        let m = no_window_message(NO_VARS, None, None);
        assert!(
            m.contains("neither DISPLAY nor WAYLAND_DISPLAY is set"),
            "{m}"
        );
        let m = no_window_message(NO_SERVER, Some(":77"), None);
        assert!(
            m.contains("DISPLAY=:77") && m.contains("Failed to open connection to X server"),
            "{m}"
        );
    }
}
