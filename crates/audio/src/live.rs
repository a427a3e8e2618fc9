//! Draining the ring ([`AudioSource::drain_into`]) and the life of a live stream: the automatic
//! reconnection (polled from the drain, never blocking), gaps, the sample clock, dropped
//! samples, problems and status.

use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

use super::{AudioSource, Feed, ReopenStats, SourceStatus, capture, reconnect};

impl AudioSource {
    /// Drains every available sample from the ring into `out` (appends). Never blocks. For a
    /// live device that left the device list (its stream now carries another source's samples,
    /// see [`capture`]) the samples are discarded and counted as a gap instead.
    ///
    /// A live source also runs its reconnection here (see [`reconnect`]): it notices a lost
    /// stream, starts and collects reopen attempts on a background thread, and swaps in the new
    /// stream; none of it blocks. While reconnecting, what the old stream delivers is a gap.
    pub fn drain_into(&mut self, out: &mut Vec<f32>) {
        self.drain_at_most(out, usize::MAX);
    }

    /// [`drain_into`](Self::drain_into), taking at most `max` samples, the oldest first; the rest
    /// stay in the ring for the next call (an analysis that catches up on a backlog a bounded
    /// amount per frame). Returns the samples appended. Samples discarded as a gap (a device gone,
    /// a reconnection under way) are all discarded, whatever `max`.
    pub fn drain_at_most(&mut self, out: &mut Vec<f32>, max: usize) -> usize {
        self.maintain_live();
        let before = out.len();
        let available = self.consumer.slots();
        if available == 0 {
            return 0;
        }
        let discard = self.reconnect.is_some()
            || matches!(&self.feed, Feed::Live(live) if live.device_gone());
        let n = if discard {
            available
        } else {
            available.min(max)
        };
        if n == 0 {
            return 0;
        }
        if let Ok(chunk) = self.consumer.read_chunk(n) {
            if discard {
                self.gap_pending += n as u64;
            } else {
                let (a, b) = chunk.as_slices();
                out.reserve(a.len() + b.len());
                out.extend_from_slice(a);
                out.extend_from_slice(b);
                self.delivered += n as u64;
                let st = &mut self.reopen_stats;
                if st.reopens > 0 {
                    st.samples_since_reopen += n as u64;
                    if st.first_data_after_reopen.is_none() {
                        st.first_data_after_reopen = Some(SystemTime::now());
                    }
                }
            }
            chunk.commit_all();
        }
        out.len() - before
    }

    /// Samples waiting in the ring now (what the next drain could take).
    pub fn available(&self) -> usize {
        self.consumer.slots()
    }

    /// Why the live stream counts as lost now, if it does: a stream error, the device gone
    /// from the device list, or no data for [`reconnect::LOST_AFTER`] while not paused.
    fn loss_reason(&self) -> Option<String> {
        let Feed::Live(live) = &self.feed else {
            return None;
        };
        if let Some(e) = live.last_error() {
            return Some(e);
        }
        if live.device_gone() {
            return Some("the device left the device list".to_string());
        }
        let quiet = live.silence_for();
        reconnect::lost_by_silence(quiet, self.paused)
            .then(|| format!("no data for {:.1} s", quiet.as_secs_f64()))
    }

    /// The live reconnection state machine, polled once per drain; never blocks.
    fn maintain_live(&mut self) {
        if !self.auto_reconnect || !matches!(self.feed, Feed::Live(_)) {
            return;
        }
        let Some(rc) = &mut self.reconnect else {
            if let (Some(reason), Some(target)) = (self.loss_reason(), &self.target) {
                self.reopen_stats.losses += 1;
                self.reopen_stats.last_loss = Some(reason.clone());
                self.reconnect = Some(reconnect::Reconnect::start(target.clone(), reason));
            }
            return;
        };
        let Some(done) = rc.poll() else {
            return;
        };
        let reason = rc.reason().to_string();
        self.reconnect = None;
        let (live, consumer, dropped) = done.parts;
        let old_dropped = self.dropped.load(Ordering::Relaxed);
        self.dropped_base += old_dropped;
        self.frames_base = self.delivered + self.dropped_base;
        if live.sample_rate() != self.sample_rate {
            self.rate_changed = true;
        }
        self.sample_rate = live.sample_rate();
        self.label = live.label();
        let old = std::mem::replace(&mut self.feed, Feed::Live(live));
        // Dropping a stream of a dead server may wait on its threads: not on the frame thread.
        let _ = std::thread::Builder::new()
            .name("vizdeck-audio-drop".into())
            .spawn(move || drop(old));
        self.consumer = consumer;
        self.dropped = dropped;
        self.gap_until = None;
        if self.paused
            && let Feed::Live(live) = &mut self.feed
        {
            live.set_paused(true);
        }
        let st = &mut self.reopen_stats;
        st.reopens += 1;
        st.last_reopen = Some(done.at);
        st.first_data_after_reopen = None;
        st.samples_since_reopen = 0;
        st.last_outage_s = Some(done.after.as_secs_f64());
        let note = format!(
            "audio input '{}' was lost ({reason}) and reopened after {:.1} s ({} reconnection(s) so far)",
            self.target.as_ref().map_or("", |t| t.name.as_str()),
            done.after.as_secs_f64(),
            st.reopens
        );
        self.notice = Some(note);
    }

    /// Turns the automatic reconnection of a lost live stream on (the default) or off.
    pub fn set_auto_reconnect(&mut self, on: bool) {
        self.auto_reconnect = on;
        if !on {
            self.reconnect = None;
        }
    }

    /// Whether a lost live stream is being reopened now.
    pub fn reconnecting(&self) -> bool {
        self.reconnect.is_some()
    }

    /// The automatic reconnection counters (all zero for clocked sources).
    pub fn reopen_stats(&self) -> &ReopenStats {
        &self.reopen_stats
    }

    /// `true` once after a reconnection opened the device at another sample rate (the analysis
    /// must be rebuilt).
    pub fn take_rate_changed(&mut self) -> bool {
        std::mem::take(&mut self.rate_changed)
    }

    /// Samples of time for which a live source delivered nothing usable since the previous call:
    /// while no data has come for [`capture::STALE_AFTER`] (not paused), the whole silent span
    /// (counted once), plus the samples discarded because the device is gone. The analysis should
    /// show this many samples as a gap (no data), not as silence, and restart its frames after
    /// it. Always 0 for clocked sources. Call once per frame, after [`drain_into`](Self::drain_into).
    pub fn gap_samples(&mut self) -> u64 {
        let mut gap = std::mem::take(&mut self.gap_pending);
        if let Feed::Live(live) = &self.feed {
            let quiet = live.silence_for();
            if quiet >= capture::STALE_AFTER {
                let now = Instant::now();
                let start = now.checked_sub(quiet).unwrap_or(now);
                let from = match self.gap_until {
                    Some(u) if u > start => u,
                    _ => start,
                };
                gap += (now.saturating_duration_since(from).as_secs_f64()
                    * f64::from(self.sample_rate)) as u64;
                self.gap_until = Some(now);
            } else {
                self.gap_until = None;
            }
        }
        gap
    }

    /// The sample clock: (samples delivered so far, pushed or dropped; the instant the newest of
    /// them became available). Live input: the last data callback (see
    /// [`capture::LiveCapture::sample_clock`]); clocked sources: the last `advance_to` that
    /// produced samples. Used to measure latency from capture to present. `None` before any.
    pub fn sample_clock(&self) -> Option<(u64, Instant)> {
        match &self.feed {
            Feed::Live(live) => live
                .sample_clock()
                .map(|(frames, at)| (self.frames_base + frames, at)),
            Feed::Clocked { produced, .. } => self.last_advance.map(|t| (*produced, t)),
        }
    }

    /// Samples that did not fit in the ring, total since open (counted by the producer with an
    /// atomic: the cpal callback for live input, `advance_to` for clocked sources).
    pub fn dropped(&self) -> u64 {
        self.dropped_base + self.dropped.load(Ordering::Relaxed)
    }

    /// The current problem of a live source, one line, if any: the last stream error from cpal's
    /// error callback; "audio device '\<name\>' is gone (...)" once the device left the device list;
    /// "no data from \<device\> for N.N s" when nothing came for [`capture::STALE_AFTER`] while not
    /// paused. Always `None` for clocked sources.
    ///
    /// While a lost stream is being reopened: `"audio device 'NAME' lost (REASON) N s ago;
    /// reconnecting: ..."`.
    pub fn stream_error(&self) -> Option<String> {
        if let Some(rc) = &self.reconnect {
            return Some(rc.status());
        }
        match &self.feed {
            Feed::Live(live) => live.problem(),
            Feed::Clocked { .. } => None,
        }
    }

    /// What the source is doing: a live problem ([`stream_error`](Self::stream_error)) first,
    /// then paused, finished (file at its end, not looping), else running.
    pub fn status(&self) -> SourceStatus {
        if let Some(p) = self.stream_error() {
            return SourceStatus::Problem(p);
        }
        if self.paused {
            SourceStatus::Paused
        } else if self.finished() {
            SourceStatus::Finished
        } else {
            SourceStatus::Running
        }
    }
}
