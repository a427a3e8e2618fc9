//! Taking in what the source (and the audio input) delivered, and whether it changes the image
//! ([`redraw`](super::redraw)).

use super::{TimeSeries, redraw};
use crate::Scene;
use crate::series::store::Series;

/// Whether the input taken in changes the image.
#[derive(Default)]
pub(super) struct Arrivals {
    /// Input taken in since the last frame changes the image ([`redraw`]): a frame is due.
    pub(super) redraw_due: bool,
    /// Scratch: each series' [`Series::end_index`] before the input is taken in.
    pub(super) ends: Vec<u64>,
}

impl TimeSeries {
    /// Takes in what the source (and the audio input) delivered, and notes in `redraw_due`
    /// whether it changes the image ([`redraw::arrivals_redraw`] on the samples that arrived;
    /// also a first series, the view fitted, the source's error or connection state changed).
    pub(super) fn take_input(&mut self) {
        let series_before = self.store.series().len();
        let link_before = self.source.link().map(|l| l.state);
        let error_before = self.source.error().is_some();
        let fitted_before = self.fitted_whole;
        self.arrivals.ends.clear();
        self.arrivals
            .ends
            .extend(self.store.series().iter().map(Series::end_index));
        self.source.drain_into(&mut self.store);
        self.source
            .take_message_times(&mut self.presents.unpresented);
        self.fit_whole_file();
        self.ingest_audio();
        self.visible.resize(self.store.series().len(), true);
        let changed = self.store.series().len() != series_before
            || self.fitted_whole != fitted_before
            || self.source.error().is_some() != error_before
            || self.source.link().map(|l| l.state) != link_before;
        if changed {
            self.arrivals.redraw_due = true;
        }
        if self.arrivals.redraw_due || self.animating() {
            // Drawn anyway: no need to look at what arrived.
            return;
        }
        let mut arrived = None;
        for (i, s) in self.store.series().iter().enumerate() {
            if !self.visible.get(i).copied().unwrap_or(true) {
                continue;
            }
            let from = self.arrivals.ends.get(i).copied().unwrap_or(0);
            arrived = redraw::union(arrived, redraw::arrived_range(s, from, self.offset_of(s)));
        }
        let view = self.drawn.view.map(|v| (v.t0, v.t1));
        self.arrivals.redraw_due = redraw::arrivals_redraw(view, self.follow, arrived);
    }
}
