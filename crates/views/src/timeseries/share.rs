//! The time series under `--publish` and `--follow` (the `vizdeck-protocols` crate's `publish`): what the chart sends
//! (each series' samples since the last message, the view when it changed; a keyframe of the
//! samples in the window) and how a follower applies it (each sample once, by the publisher's
//! sample index, with the publisher's origin, so the follower's store holds the very same
//! relative times and values).

use std::collections::HashMap;

use super::TimeSeries;
use vizdeck_protocols::publish::{Body, SeriesDelta, SeriesKeyframe, SeriesSamples, SeriesView};

/// Most samples a keyframe carries, all series together (about 27 MiB before compression): a
/// window wider than this at the data's rate sends the newest samples of each series.
pub(crate) const KEY_MAX_SAMPLES: usize = 2 << 20;

/// The chart's publish and follow state.
#[derive(Debug, Default)]
pub struct Share {
    /// Publishing: per series, the store index after the last sample sent.
    published: Vec<u64>,
    /// Publishing: the view last sent.
    published_view: Option<SeriesView>,
    /// The store's generation: +1 each time it starts empty again.
    pub generation: u64,
    /// Following: this scene shows a publisher's data, not its own source.
    pub following: bool,
    /// Following: per publisher series id, (store index, publisher index after the last
    /// sample applied).
    followed: HashMap<u32, (usize, u64)>,
    /// Following: the publisher and its store generation the store holds.
    followed_generation: Option<(u64, u64)>,
}

impl TimeSeries {
    /// The view as a follower would show it.
    fn shared_view(&self) -> SeriesView {
        SeriesView {
            window_s: self.window_s,
            follow: self.follow,
            paused: self.paused_range,
            fixed_y: self.fixed_y,
        }
    }

    /// [`Scene::publish`](crate::Scene::publish) for the chart.
    pub(super) fn publish_body(&mut self, keyframe: bool) -> Option<Body> {
        let view = self.shared_view();
        let n = self.store.series().len();
        self.share.published.resize(n, 0);
        let mut series = Vec::new();
        let budget = KEY_MAX_SAMPLES / n.max(1);
        for (i, s) in self.store.series().iter().enumerate() {
            let end = s.end_index();
            let sent = &mut self.share.published[i];
            if *sent > end {
                // The store was emptied since: start again from its first sample.
                *sent = s.first_index();
            }
            let from = if keyframe {
                let newest = s.time_range_rel().map_or(0.0, |r| r.1);
                let in_window = s.partition_index(|t| t < newest - self.window_s);
                in_window.max(end.saturating_sub(budget as u64))
            } else {
                (*sent).max(s.first_index())
            };
            *sent = end;
            if from >= end && !keyframe {
                continue;
            }
            let mut times = Vec::with_capacity((end - from) as usize);
            let mut values = Vec::with_capacity((end - from) as usize);
            for (t, v) in s.samples_from(from) {
                times.extend_from_slice(t);
                values.extend_from_slice(v);
            }
            series.push(SeriesSamples {
                id: i as u32,
                name: s.name.clone(),
                first_index: from.max(s.first_index()),
                origin: s.origin().unwrap_or(0.0),
                origin_ns: s.origin_ns(),
                times,
                values,
            });
        }
        let view_changed = self.share.published_view != Some(view);
        self.share.published_view = Some(view);
        if keyframe {
            Some(Body::SeriesKey(SeriesKeyframe {
                generation: self.share.generation,
                view,
                series,
            }))
        } else if series.is_empty() && !view_changed {
            None
        } else {
            Some(Body::SeriesDelta(SeriesDelta {
                series,
                view: view_changed.then_some(view),
            }))
        }
    }

    /// [`Scene::follow`](crate::Scene::follow) for the chart.
    pub(super) fn follow_body(&mut self, publisher: u64, body: Body, attached: bool) {
        let (series, view) = match body {
            Body::SeriesKey(k) => {
                if self.share.followed_generation != Some((publisher, k.generation)) {
                    // Another run of the publisher's store (or the first keyframe): start empty.
                    self.store.clear();
                    self.visible.clear();
                    self.share.followed.clear();
                    self.share.followed_generation = Some((publisher, k.generation));
                }
                (k.series, Some(k.view))
            }
            Body::SeriesDelta(d) => (d.series, d.view),
            // Another scene's body: not the chart's.
            _ => return,
        };
        if attached && let Some(v) = view {
            self.window_s = v.window_s;
            self.follow = v.follow;
            self.paused_range = v.paused;
            self.fixed_y = v.fixed_y;
        }
        for s in series {
            let entry = match self.share.followed.get(&s.id) {
                Some(&e) => e,
                None => (self.store.ensure(&s.name), 0),
            };
            let (index, applied) = entry;
            // Samples already applied (a keyframe overlaps the deltas before it) are skipped.
            let skip = applied.saturating_sub(s.first_index) as usize;
            let end = s.first_index + s.times.len() as u64;
            if skip < s.times.len()
                && let Some(series) = self.store.series_mut().get_mut(index)
                && series
                    .push_slice_rel(s.origin, s.origin_ns, &s.times[skip..], &s.values[skip..])
                    .is_ok()
            {
                self.share.followed.insert(s.id, (index, end.max(applied)));
            } else {
                self.share.followed.insert(s.id, (index, applied.max(end)));
            }
        }
        self.visible.resize(self.store.series().len(), true);
    }
}
