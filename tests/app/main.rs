//! The app crate's integration tests, one binary (each file a module, named as before): the
//! scenes end to end (headless on lavapipe and through the real binary), files and network
//! inputs against independent readings, GPU kernels against CPU references, publish/follow,
//! sharing, statistics. The tests that drive a real window or the sound server are in
//! `tests/live/`, run one at a time.

#[path = "../common/mod.rs"]
mod common;

mod audio_files;
mod audio_sources;
mod audio_stft;
mod capture_flags;
mod composite;
mod egui_painter;
mod frame_uploads;
mod fuzz_corpus;
mod fuzz_findings;
mod gpu_fft;
mod gpu_particles;
mod headless;
mod idle;
mod interop_protocol;
mod memory_soak;
mod pointcloud_bad_input;
mod pointcloud_files;
mod pointcloud_first_hour;
mod pointcloud_index;
mod pointcloud_octree;
mod pointcloud_pool;
mod pointcloud_quantized;
mod pointcloud_raster;
mod pointcloud_scene;
mod publish_follow;
mod publish_link;
mod publish_particles;
mod publish_pointcloud;
mod publish_spectrogram;
mod python_client;
mod scene_png;
mod series_columnar;
mod series_csv;
mod series_csv_dates;
mod series_csv_variants;
mod series_decimate;
mod series_long_format;
mod series_net;
mod series_synthetic;
mod settings;
mod shader_layout;
mod shaders;
mod share_particles;
mod share_timeseries;
mod shared_buffer;
mod side_panels;
mod spectrogram;
mod spectrogram_loading;
mod spectrogram_view;
mod stats_cli;
mod stats_recorder;
mod stats_summary;
mod stats_transfers;
mod timeseries_gpu;
mod timeseries_gpu_limits;
mod timeseries_markers;
mod timeseries_notices;
mod timeseries_own_signals;
mod timeseries_view;
mod upload_direct;
mod upload_strategies;
