//! Frame-time statistics: one [`FrameRecord`] per frame written to CSV by a [`Recorder`], a
//! [`Summary`] (nearest-rank percentiles) at the end of a run, and a [`Live`] window for the
//! on-screen overlay.

pub mod record;
pub mod summary;

pub use record::{CSV_HEADER, FrameRecord, Recorder, StatsError};
pub use summary::{LIVE_MAX_WINDOW, Live, Summary, percentile_nearest_rank};
