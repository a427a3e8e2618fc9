//! The clock and transport of file and synthetic sources: [`AudioSource::advance_to`] produces
//! exactly `floor(t · sample_rate)` samples; pause, seek, loop, fast mode, position, duration.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::{AudioSource, Feed, Generator, SYNTH_CHUNK};

impl AudioSource {
    /// For clocked sources (file, synthetic), while playing: produces every sample whose time is
    /// `< t_seconds` since the source started, so that after the call the total produced is
    /// `floor(t_seconds · sample_rate)` (capped at the file's end unless looping; pauses and
    /// seeks shift the origin: time spent paused produces nothing, and a seek moves where the
    /// next samples come from, not how many). Samples that do not fit in the ring are counted in
    /// [`dropped`](Self::dropped), the clock still moves past them.
    ///
    /// In fast mode ([`set_fast`](Self::set_fast)) the clock is ignored: every call pushes as
    /// many samples as the ring has room for (up to the file's end), so nothing is dropped.
    ///
    /// Going back in time, NaN or infinite `t_seconds` do nothing. No-op for live input.
    ///
    /// A file source with a stop position ([`set_stop_at`](Self::set_stop_at)) produces nothing
    /// past it: on reaching it the source pauses (and the stop position is cleared).
    pub fn advance_to(&mut self, t_seconds: f64) {
        let sr = f64::from(self.sample_rate);
        let (paused, fast, stop_at) = (self.paused, self.fast, self.stop_at);
        let Feed::Clocked {
            producer,
            generator,
            produced,
            cursor,
            t_base,
            pos_base,
            scratch,
        } = &mut self.feed
        else {
            return;
        };
        if !t_seconds.is_finite() {
            return;
        }
        let rebase = |t_base: &mut f64, pos_base: &mut u64, produced: u64| {
            if t_seconds > *t_base {
                *t_base = t_seconds;
                *pos_base = produced;
            }
        };
        if paused {
            rebase(t_base, pos_base, *produced);
            return;
        }
        let remaining = match generator {
            Generator::File {
                samples,
                looping: false,
            } => (samples.len() as u64).saturating_sub(*cursor),
            _ => u64::MAX,
        };
        let stop = match generator {
            Generator::File { .. } => stop_at.map(|s| s.saturating_sub(*cursor)),
            Generator::Synth(_) => None,
        };
        let remaining = remaining.min(stop.unwrap_or(u64::MAX));
        let room = producer.slots() as u64;
        let wanted = if fast {
            room.min(remaining)
        } else {
            if t_seconds <= *t_base {
                return;
            }
            // `as` saturates for values beyond u64::MAX.
            let target = pos_base.saturating_add(((t_seconds - *t_base) * sr).floor() as u64);
            if target <= *produced {
                return;
            }
            (target - *produced).min(remaining)
        };
        let to_push = wanted.min(room) as usize;
        match generator {
            Generator::Synth(synth) => {
                // `to_push` samples starting at `cursor` (the synthesizer may lag after samples
                // were dropped).
                synth.seek(*cursor);
                if scratch.len() < SYNTH_CHUNK {
                    scratch.resize(SYNTH_CHUNK, 0.0);
                }
                let mut left = to_push;
                while left > 0 {
                    let n = left.min(SYNTH_CHUNK);
                    synth.fill(&mut scratch[..n]);
                    let (pushed, _) = producer.push_partial_slice(&scratch[..n]);
                    debug_assert_eq!(pushed.len(), n);
                    left -= n;
                }
                *cursor = cursor.saturating_add(wanted);
            }
            Generator::File { samples, looping } => {
                let len = samples.len() as u64;
                let mut pos = *cursor;
                let mut left = to_push as u64;
                while left > 0 && len > 0 {
                    let start = (pos % len) as usize;
                    let n = (left as usize).min(samples.len() - start);
                    let (pushed, _) = producer.push_partial_slice(&samples[start..start + n]);
                    debug_assert_eq!(pushed.len(), n);
                    pos += n as u64;
                    left -= n as u64;
                }
                *cursor = if *looping && len > 0 {
                    (*cursor + wanted) % len
                } else {
                    (*cursor + wanted).min(len)
                };
            }
        }
        let lost = wanted - to_push as u64;
        if lost > 0 {
            self.dropped.fetch_add(lost, Ordering::Relaxed);
        }
        *produced += wanted;
        if wanted > 0 {
            self.last_advance = Some(Instant::now());
        }
        if fast || wanted == remaining {
            // Fast mode, or the file ran out: the clock restarts from here, so that leaving fast
            // mode or seeking back plays on from the next call without a burst.
            *t_base = t_seconds.max(*t_base);
            *pos_base = *produced;
        }
        if stop.is_some_and(|s| wanted >= s) {
            // The stop position is reached: pause there.
            self.stop_at = None;
            self.paused = true;
        }
    }

    /// Makes a file source pause by itself once its cursor reaches file sample `at` (`None`:
    /// no stop). Used to analyse the start of a file longer than the view holds, then wait.
    /// No effect on live and synthetic sources.
    pub fn set_stop_at(&mut self, at: Option<u64>) {
        self.stop_at = at;
    }

    /// The stop position set by [`set_stop_at`](Self::set_stop_at), until it is reached.
    pub fn stop_at(&self) -> Option<u64> {
        self.stop_at
    }

    /// Whether the file source has delivered all its samples (its cursor reached the end and it
    /// is not looping). Always `false` for live and synthetic sources.
    pub fn finished(&self) -> bool {
        match &self.feed {
            Feed::Clocked {
                generator: Generator::File { samples, looping },
                cursor,
                ..
            } => !*looping && *cursor >= samples.len() as u64,
            _ => false,
        }
    }

    /// Makes a file source start over at its beginning when it reaches its end (sample `i` of
    /// the stream is then file sample `i mod len`, when not seeked). No effect on other sources.
    pub fn set_looping(&mut self, looping: bool) {
        if let Feed::Clocked {
            generator:
                Generator::File {
                    looping: l,
                    samples,
                },
            cursor,
            ..
        } = &mut self.feed
        {
            *l = looping;
            if looping && *cursor >= samples.len() as u64 {
                *cursor = 0;
            }
        }
    }

    /// Whether a file source loops; `false` for other sources.
    pub fn looping(&self) -> bool {
        matches!(
            &self.feed,
            Feed::Clocked {
                generator: Generator::File { looping: true, .. },
                ..
            }
        )
    }

    /// Pauses or resumes. Clocked sources produce nothing while paused and resume where they
    /// stopped (the time paused is skipped, not caught up); a live stream is paused in the
    /// backend (cpal `pause`/`play`) and its data watchdog is quiet meanwhile.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
        if let Feed::Live(live) = &mut self.feed {
            live.set_paused(paused);
        }
        self.gap_until = None;
    }

    /// Whether the source is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Moves a clocked source to `seconds` from its start: files clamp to `[0, duration]`, the
    /// synthetic signals to `≥ 0`. Samples already in the ring (from before the seek) are
    /// discarded, so the next [`drain_into`](Self::drain_into) starts at the new position.
    /// NaN does nothing; no-op for live input.
    pub fn seek(&mut self, seconds: f64) {
        if seconds.is_nan() {
            return;
        }
        let sr = f64::from(self.sample_rate);
        let Feed::Clocked {
            generator, cursor, ..
        } = &mut self.feed
        else {
            return;
        };
        // `as` saturates: negative → 0, +∞ → u64::MAX.
        let target = (seconds * sr).floor() as u64;
        *cursor = match generator {
            Generator::File { samples, .. } => target.min(samples.len() as u64),
            Generator::Synth(_) => target,
        };
        let n = self.consumer.slots();
        if let Ok(chunk) = self.consumer.read_chunk(n) {
            chunk.commit_all();
        }
    }

    /// Analyse as fast as possible (`true`): [`advance_to`](Self::advance_to) pushes as much as
    /// the ring has room for on every call, ignoring the clock; nothing is dropped. `false`
    /// returns to real-time rate from the current position. Clocked sources only.
    pub fn set_fast(&mut self, fast: bool) {
        self.fast = fast && !matches!(self.feed, Feed::Live(_));
    }

    /// Whether fast mode is on.
    pub fn fast(&self) -> bool {
        self.fast
    }

    /// Samples produced so far by a clocked source (pushed or dropped), i.e. its clock in samples;
    /// `None` for live input.
    pub fn position(&self) -> Option<u64> {
        match &self.feed {
            Feed::Clocked { produced, .. } => Some(*produced),
            Feed::Live(_) => None,
        }
    }

    /// Playback position of a clocked source, seconds: where the next sample comes from in the
    /// file (in `[0, duration]`) or in the synthetic signal. `None` for live input.
    pub fn position_s(&self) -> Option<f64> {
        match &self.feed {
            Feed::Clocked { cursor, .. } => Some(*cursor as f64 / f64::from(self.sample_rate)),
            Feed::Live(_) => None,
        }
    }

    /// Length of a file source in seconds (decoded frames / sample rate); `None` for live and
    /// synthetic sources.
    pub fn duration_s(&self) -> Option<f64> {
        match &self.feed {
            Feed::Clocked {
                generator: Generator::File { samples, .. },
                ..
            } => Some(samples.len() as f64 / f64::from(self.sample_rate)),
            _ => None,
        }
    }

    /// Length of a file source in samples per channel (what the ring receives from it: the
    /// mono mix or the chosen channel); `None` for live and synthetic sources.
    pub fn file_samples(&self) -> Option<usize> {
        match &self.feed {
            Feed::Clocked {
                generator: Generator::File { samples, .. },
                ..
            } => Some(samples.len()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AudioSelection, DEFAULT_RING_CAPACITY, synth};

    #[test]
    fn synthetic_advance_pushes_floor_t_times_rate() {
        let mut src = AudioSource::open(&AudioSelection::Synthetic, DEFAULT_RING_CAPACITY).unwrap();
        assert_eq!(src.kind(), "synthetic");
        assert_eq!(src.sample_rate(), 48_000);
        assert_eq!(src.label(), "synthetic (48000 Hz)");
        assert!(src.notice().is_none());
        let mut got = Vec::new();
        // Times chosen so that t·48000 is not an integer: 0.0100001 s → 480.0048 → 480.
        let steps = [
            (0.0100001, 480u64),
            (0.0166667, 800), // 800.0016
            (0.1, 4800),
            (0.1, 4800),         // same time: nothing new
            (0.05, 4800),        // going back: nothing
            (1.23456789, 59259), // 59259.25
        ];
        for (t, total) in steps {
            src.advance_to(t);
            src.drain_into(&mut got);
            assert_eq!(got.len() as u64, total, "after advance_to({t})");
            assert_eq!(src.position(), Some(total));
        }
        assert_eq!(src.dropped(), 0);
        assert!(!src.finished());
        // The stream is the synthesizer's output, whatever the chunking.
        let mut reference = vec![0.0; got.len()];
        synth::Synth::new().fill(&mut reference);
        assert_eq!(got, reference);
        src.advance_to(f64::NAN);
        src.advance_to(f64::INFINITY);
        assert_eq!(src.position(), Some(59259));
    }

    #[test]
    fn synthetic_ring_overflow_is_counted_and_clock_moves_on() {
        let mut src = AudioSource::open(&AudioSelection::Synthetic, 1000).unwrap();
        src.advance_to(0.05); // 2400 samples, 1000 fit
        assert_eq!(src.dropped(), 1400);
        let mut got = Vec::new();
        src.drain_into(&mut got);
        assert_eq!(got.len(), 1000);
        let mut reference = vec![0.0; 1000];
        synth::Synth::new().fill(&mut reference);
        assert_eq!(got, reference);
        // Next samples continue at the clock position (sample 2400), not where pushing stopped.
        src.advance_to(0.06); // 2880
        got.clear();
        src.drain_into(&mut got);
        assert_eq!(got.len(), 480);
        let mut s = synth::Synth::new();
        s.seek(2400);
        let mut expected = vec![0.0; 480];
        s.fill(&mut expected);
        assert_eq!(got, expected);
        assert_eq!(src.dropped(), 1400);
    }

    #[test]
    fn file_in_fast_mode_stops_at_its_stop_position_and_pauses() {
        let path = std::env::temp_dir().join(format!("vizdeck-stop-at-{}.wav", std::process::id()));
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 8000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = hound::WavWriter::create(&path, spec).unwrap();
        for i in 0..10_000i32 {
            w.write_sample((i % 1000) as i16).unwrap();
        }
        w.finalize().unwrap();
        let mut src = AudioSource::open(&AudioSelection::File(path.clone()), 1 << 16).unwrap();
        let _ = std::fs::remove_file(&path);
        src.set_stop_at(Some(6000));
        src.set_fast(true);
        src.advance_to(0.001);
        let mut got = Vec::new();
        src.drain_into(&mut got);
        // Fast mode takes what the ring has room for, but not past the stop: 6000 samples, then
        // paused there, the stop cleared.
        assert_eq!(got.len(), 6000);
        assert!(src.paused() && src.stop_at().is_none() && !src.finished());
        assert_eq!(src.position(), Some(6000));
        src.advance_to(0.002);
        assert_eq!(src.available(), 0);
        // Played on: the rest, to the end.
        src.set_paused(false);
        src.advance_to(0.003);
        assert_eq!(src.drain_at_most(&mut got, 1000), 1000);
        assert_eq!(src.available(), 3000);
        src.drain_into(&mut got);
        assert_eq!(got.len(), 10_000);
        assert!(src.finished());
        // Sample i of the file is i mod 1000 (16-bit, scaled by 1/32768).
        assert_eq!(got[6500], 500.0 / 32768.0);
    }

    #[test]
    fn stream_error_and_finished_for_synthetic() {
        let src = AudioSource::open(&AudioSelection::Synthetic, 16).unwrap();
        assert!(src.stream_error().is_none());
        assert!(!src.finished());
        assert_eq!(src.ring_capacity(), 16);
    }
}
