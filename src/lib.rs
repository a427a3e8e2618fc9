//! vizdeck: live data on the GPU (spectrogram, particles, streaming time series) with frame-time
//! statistics. The crate is a library so that tests and benches reach every module; `main.rs` only
//! parses the command line. `ARCHITECTURE.md` is the map of the code.

pub mod app;
pub mod bench;
pub use vizdeck_audio as audio;
pub mod cli;
pub use vizdeck_base::clock;
pub mod deck;
pub mod fuzzing;
pub use vizdeck_gpu as gpu;
pub mod headless;
pub use vizdeck_views::interop;
pub mod logging;
pub mod pointcloud;
pub use vizdeck_base::progress;
pub mod publish;
pub mod report;
pub use vizdeck_series as series;
pub use vizdeck_views as scene;
pub mod settings;
pub mod stats;
pub use vizdeck_base::text;
pub mod ui;
