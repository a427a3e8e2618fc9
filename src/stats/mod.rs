//! Frame-time statistics: one [`FrameRecord`] per frame written to CSV by a [`Recorder`], captures
//! read back ([`Capture`], vizdeck's or PresentMon's CSVs), a [`Summary`] (nearest-rank
//! percentiles, 1 %/0.1 % lows, stutters), a [`Live`] window with an HDR histogram for the
//! overlay, the comparison view and `vizdeck stats` (`vizdeck bench` is `crate::bench`, above).

pub mod cli;
pub mod compare;
pub mod memory;
pub mod record;
pub mod summary;

pub use record::{CSV_HEADER, Capture, CaptureFormat, FrameRecord, Recorder, StatsError};
pub use summary::{
    LIVE_MAX_WINDOW, Live, Summary, low_mean, nearest_rank_permille, percentile_nearest_rank,
};
