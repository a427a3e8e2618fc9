//! Streaming time series: sources that produce `(time seconds f64, value f32)` samples for several
//! named series on their own thread ([`source`]), a chunked append-only store the render thread owns
//! ([`store`]), and CPU M4 decimation to pixel columns ([`decimate`]).
//!
//! Flow per frame: `source.advance_to(t)` (headless only) → `source.drain_into(&mut store)` (never
//! blocks) → `decimate_m4(series, t0, t1, width_px, &mut columns)` or a GPU pass over
//! [`Series::chunks_in`].

pub mod decimate;
pub mod source;
pub mod store;

pub use decimate::{Column, column_of, decimate_m4, decimate_m4_rel};
pub use source::{
    CatchUp, Pacing, SeriesError, SeriesSelection, SeriesSource, SynthKind, TimeUnit,
    open_columnar_bytes, open_csv_bytes, open_csv_with, parse_time_ns, sniff_delimiter,
};
pub use store::{CHUNK_SAMPLES, ChunkView, DEFAULT_CAP_SAMPLES, LengthMismatch, Series, Store};
