//! vizdeck's log: `env_logger` with vizdeck's default filter, and what libraries print on their
//! own routed into it, so a run that works prints only vizdeck's lines.
//!
//! Three kinds of library noise reach a run that works, and each is routed, not hidden by
//! redirecting stderr:
//!
//! - **ALSA** (`ALSA lib confmisc.c:855:(parse_card) cannot find card '0'` and eight more on a
//!   machine without a sound card, whenever cpal's ALSA host lists or opens a device): alsa-lib
//!   writes these to stderr from its default error handler. [`init`] installs vizdeck's handler
//!   (`snd_lib_error_set_handler`, through alsa-sys), which logs each line at debug level under
//!   the target `vizdeck::alsa`. cpal's errors, which vizdeck reports itself, are unchanged.
//! - **libwayland-client** (`error: XDG_RUNTIME_DIR is invalid or not set in the environment.`,
//!   twice, when `XDG_RUNTIME_DIR` is unset): not PulseAudio, as it looks, but Mesa's
//!   `VK_LAYER_MESA_device_select` Vulkan layer, which asks `wl_display_connect` whether a
//!   Wayland compositor runs (to prefer the GPU driving the display) when wgpu lists the Vulkan
//!   adapters; libwayland prints that line when it has no runtime directory to look in. The
//!   environment is left as it is (a made-up `XDG_RUNTIME_DIR` would also move where the
//!   PulseAudio client looks for its server); [`init`] sets libwayland's log handler
//!   (`wl_log_set_handler_client`, the library opened with `dlopen` where it is installed): that
//!   line goes to debug level under `vizdeck::wayland`, anything else libwayland says to warn.
//! - **winit** through the `log` crate (`XRandR reported that the display's 0mm in size, which is
//!   certifiably insane` and `error setting XSETTINGS; Xft options won't reload automatically`,
//!   both under Xvfb and on screens without an XSETTINGS daemon): logged at warn by winit, re-logged
//!   at debug by vizdeck's logger ([`demoted_level`]), under winit's own target.
//!
//! `RUST_LOG` works as usual, e.g. `RUST_LOG=debug` or `RUST_LOG=vizdeck::alsa=debug,winit=debug`
//! shows them all again.

/// The log filter when `RUST_LOG` is not set: warnings, vizdeck's own info lines; symphonia's
/// failed format probe and the PulseAudio client's disconnect at exit are off (vizdeck reports
/// both cases itself, in one line).
pub const DEFAULT_FILTER: &str =
    "warn,vizdeck=info,symphonia_core=off,pulseaudio::client::reactor=off";

/// Messages other crates log at warn or above that are noise on a run that works: (target
/// prefix, message prefix). They are logged at debug level instead.
const DEMOTED: &[(&str, &str)] = &[
    // Xvfb and some virtual screens report no physical size; winit then uses a scale factor of 1.
    ("winit", "XRandR reported that the display's 0mm in size"),
    // No XSETTINGS manager (Xvfb, bare window managers): font settings are read once.
    ("winit", "error setting XSETTINGS"),
    // rfd falls back to zenity where no desktop portal answers; vizdeck says so itself when
    // neither gives a dialog (deck/dialog.rs).
    ("rfd", "Using zenity fallback"),
    ("rfd", "Failed to pick file with zenity"),
    ("rfd", "Failed to connect to session bus"),
];

/// The libwayland-client line printed when `XDG_RUNTIME_DIR` is unset (see the module docs).
const WAYLAND_NO_RUNTIME_DIR: &str = "XDG_RUNTIME_DIR is invalid or not set";

/// The level vizdeck logs a record of `target` with text `message` at: [`log::Level::Debug`] for
/// the known noise of other crates (see the module docs), else `level` unchanged.
pub fn demoted_level(target: &str, message: &str, level: log::Level) -> log::Level {
    let noise = DEMOTED
        .iter()
        .any(|(t, m)| target.starts_with(t) && message.starts_with(m));
    if noise && level < log::Level::Debug {
        log::Level::Debug
    } else {
        level
    }
}

/// The level of a line libwayland-client printed: debug for the missing runtime directory (a
/// probe, not a failure), warn for anything else.
pub fn wayland_level(message: &str) -> log::Level {
    if message.contains(WAYLAND_NO_RUNTIME_DIR) {
        log::Level::Debug
    } else {
        log::Level::Warn
    }
}

/// env_logger behind [`demoted_level`].
struct Router {
    inner: env_logger::Logger,
}

impl log::Log for Router {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        self.inner.enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        // Only records of a target that has noise are formatted here (winit's are few).
        let level = if DEMOTED.iter().any(|(t, _)| record.target().starts_with(t)) {
            let text = match record.args().as_str() {
                Some(s) => std::borrow::Cow::Borrowed(s),
                None => std::borrow::Cow::Owned(record.args().to_string()),
            };
            demoted_level(record.target(), &text, record.level())
        } else {
            record.level()
        };
        if level == record.level() {
            // Printed above a terminal progress bar, if one is shown (crate::progress).
            if self.inner.matches(record) {
                crate::progress::suspend(|| self.inner.log(record));
            }
            return;
        }
        self.inner.log(
            &log::Record::builder()
                .args(*record.args())
                .level(level)
                .target(record.target())
                .module_path(record.module_path())
                .file(record.file())
                .line(record.line())
                .build(),
        );
    }

    fn flush(&self) {
        self.inner.flush();
    }
}

/// Sets up vizdeck's log ([`DEFAULT_FILTER`] unless `RUST_LOG` says otherwise) and routes ALSA's
/// and libwayland's own messages into it (see the module docs). Call once, first thing in `main`,
/// before any audio or GPU library is used. A second call changes nothing.
pub fn init() {
    let inner =
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(DEFAULT_FILTER))
            .build();
    let max = inner.filter();
    if log::set_boxed_logger(Box::new(Router { inner })).is_ok() {
        log::set_max_level(max);
    }
    #[cfg(target_os = "linux")]
    native::route();
}

#[cfg(target_os = "linux")]
mod native {
    use std::ffi::{CStr, c_char, c_int, c_void};

    unsafe extern "C" {
        // src/logging/native.c: format their message, then call `vizdeck_native_log`.
        fn vizdeck_alsa_error_handler(
            file: *const c_char,
            line: c_int,
            function: *const c_char,
            err: c_int,
            fmt: *const c_char,
            ...
        );
        fn vizdeck_wayland_log_handler(fmt: *const c_char, args: *mut c_void);
    }

    /// `wl_log_set_handler_client(wl_log_func_t)`.
    type SetWaylandHandler = unsafe extern "C" fn(handler: *const c_void);

    /// Installs both handlers (once per process; later calls set the same handlers again).
    pub(super) fn route() {
        // SAFETY: the handler has alsa-lib's `snd_lib_error_handler_t` signature (native.c) and
        // lives for the whole process; alsa-lib is linked (cpal's ALSA host).
        unsafe {
            alsa_sys::snd_lib_error_set_handler(Some(vizdeck_alsa_error_handler));
        }
        // libwayland-client may be absent (then nothing can print through it). It is opened and
        // never closed, so the handler stays set for whoever loads it later (Mesa's Vulkan
        // layer, winit on Wayland): the same library, the same handler.
        // SAFETY: dlopen/dlsym with NUL-terminated names; the symbol, when present, has
        // libwayland's `void wl_log_set_handler_client(wl_log_func_t)` signature, and the handler
        // passed has `wl_log_func_t`'s (native.c).
        unsafe {
            let lib = libc::dlopen(c"libwayland-client.so.0".as_ptr(), libc::RTLD_NOW);
            if lib.is_null() {
                return;
            }
            let set = libc::dlsym(lib, c"wl_log_set_handler_client".as_ptr());
            if set.is_null() {
                return;
            }
            let set = std::mem::transmute::<*mut c_void, SetWaylandHandler>(set);
            set(vizdeck_wayland_log_handler as *const c_void);
        }
    }

    /// Text of a C string that may be null.
    fn text(s: *const c_char) -> String {
        if s.is_null() {
            return String::new();
        }
        // SAFETY: non-null pointers come from native.c: NUL-terminated strings of alsa-lib,
        // libwayland or native.c's own buffer, valid during this call.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }

    /// Called by native.c with one formatted line of ALSA (`source` 0: also its file, line,
    /// function and error code) or libwayland-client (`source` 1).
    #[unsafe(no_mangle)]
    extern "C" fn vizdeck_native_log(
        source: c_int,
        file: *const c_char,
        line: c_int,
        function: *const c_char,
        err: c_int,
        message: *const c_char,
    ) {
        let message = text(message);
        let message = message.trim_end();
        if source == 0 {
            // ALSA's own layout, so the line can be looked up: file:line:(function) text[: error].
            let reason = if err != 0 {
                // SAFETY: snd_strerror returns a static string for any code.
                format!(": {}", text(unsafe { alsa_sys::snd_strerror(err) }))
            } else {
                String::new()
            };
            log::debug!(
                target: "vizdeck::alsa",
                "ALSA lib {}:{}:({}) {message}{reason}",
                text(file),
                line,
                text(function)
            );
        } else {
            let message = message.trim_start_matches("error: ");
            log::log!(
                target: "vizdeck::wayland",
                super::wayland_level(message),
                "libwayland-client: {message}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use log::Level;

    #[test]
    fn winit_noise_is_demoted_and_nothing_else() {
        let randr = "winit::platform_impl::linux::x11::util::randr";
        let xdisplay = "winit::platform_impl::linux::x11::xdisplay";
        assert_eq!(
            demoted_level(
                randr,
                "XRandR reported that the display's 0mm in size, which is certifiably insane",
                Level::Warn
            ),
            Level::Debug
        );
        assert_eq!(
            demoted_level(
                xdisplay,
                "error setting XSETTINGS; Xft options won't reload automatically",
                Level::Warn
            ),
            Level::Debug
        );
        // Other winit warnings, the same text from another crate, and quieter levels: unchanged.
        assert_eq!(
            demoted_level(xdisplay, "failed to open display", Level::Error),
            Level::Error
        );
        assert_eq!(
            demoted_level("vizdeck::app", "error setting XSETTINGS", Level::Warn),
            Level::Warn
        );
        assert_eq!(
            demoted_level(
                randr,
                "XRandR reported that the display's 0mm",
                Level::Trace
            ),
            Level::Trace
        );
    }

    #[test]
    fn wayland_runtime_dir_line_is_debug_other_lines_warn() {
        assert_eq!(
            wayland_level("XDG_RUNTIME_DIR is invalid or not set in the environment."),
            Level::Debug
        );
        assert_eq!(
            wayland_level("error in client communication (pid 1234)"),
            Level::Warn
        );
    }
}
