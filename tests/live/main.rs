//! The tests that drive a real window (Xvfb, xdotool) or the sound server (PulseAudio's test
//! sink and its monitor): one binary, run by `cargo xtask test` after the others, each test
//! holding [`common::live`] so no two share the screen, the keyboard or the sink.

#[path = "../common/mod.rs"]
mod common;

mod audio_live;
mod device_loss;
mod keys;
mod live_report;
mod quiet_runs;
mod spectrogram_live;
mod video;
mod window;
mod window_states;
