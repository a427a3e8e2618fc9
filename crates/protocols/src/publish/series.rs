//! The time-series scene's bodies: samples, view, keyframe and delta.

use serde::{Deserialize, Serialize};

use super::Body;

/// One series' samples: times relative to the series' origin and values, the same length.
/// The origin travels with them, so a follower stores the very same relative times as the
/// publisher (the chart is drawn from them) rather than a rounding of `origin + t`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSamples {
    /// The series' index in the publisher's store (stable for its run).
    pub id: u32,
    /// Its name.
    pub name: String,
    /// The publisher's index of the first sample (its store numbers a series' samples 0, 1, …
    /// for the run): a follower applies each sample once by it, even out of time order.
    pub first_index: u64,
    /// Absolute time of the series' first sample, s (the store's [`origin`]).
    ///
    /// [`origin`]: vizdeck_series::store::Series::origin
    pub origin: f64,
    /// The same origin in integer ns, when the series was fed integer nanoseconds.
    pub origin_ns: Option<i64>,
    /// Sample times, s after `origin`.
    pub times: Vec<f64>,
    /// Sample values (the store keeps f32).
    pub values: Vec<f32>,
}

/// The chart's view: what a follower attached to the publisher's view shows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesView {
    /// Width of the window while following the newest data, s.
    pub window_s: f64,
    /// `true`: the window follows the newest sample; `false`: `paused` is shown.
    pub follow: bool,
    /// The time range shown while paused, s after the chart origin.
    pub paused: (f64, f64),
    /// A fixed value range (`None`: automatic).
    pub fixed_y: Option<(f64, f64)>,
}

/// A keyframe of the time-series scene: every series with its samples of the last
/// `window_s` seconds (at most the publisher's store holds), and the view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesKeyframe {
    /// The publisher's store generation, +1 each time it starts empty again (another source
    /// opened): a follower holding another generation starts empty too.
    pub generation: u64,
    /// The chart's view when it was sent.
    pub view: SeriesView,
    /// The series, in the publisher's order.
    pub series: Vec<SeriesSamples>,
}

/// The samples one publisher frame ingested, series by series (series without new samples are
/// left out).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesDelta {
    /// The new samples.
    pub series: Vec<SeriesSamples>,
    /// The chart's view, when it changed since the previous message.
    pub view: Option<SeriesView>,
}

/// The series samples a body carries.
pub(super) fn series_of(b: &Body) -> &[SeriesSamples] {
    match b {
        Body::SeriesKey(k) => &k.series,
        Body::SeriesDelta(d) => &d.series,
        Body::ParticlesKey(_) | Body::ParticlesDelta(_) => &[],
        Body::SpectrogramKey(_) | Body::SpectrogramDelta(_) => &[],
        Body::PointCloudKey(_) | Body::PointCloudDelta(_) | Body::Heartbeat => &[],
    }
}
