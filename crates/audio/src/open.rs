//! Opening an [`AudioSource`] (live device with its fallback, file, synthetic), opening it
//! again, and what it was opened as (rate, label, kind, selection, options, notices, ring).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use rtrb::{Consumer, Producer};

use super::{
    AudioError, AudioOptions, AudioSelection, AudioSource, ChannelChoice, Feed, Generator,
};
use super::{ReopenStats, SynthSignal, capture, file, reconnect, synth};

impl AudioSource {
    /// `open_with(sel, ring_capacity, &AudioOptions::default())`: mix of all channels, seed 1.
    ///
    /// # Errors
    ///
    /// As [`open_with`](Self::open_with).
    pub fn open(sel: &AudioSelection, ring_capacity: usize) -> Result<AudioSource, AudioError> {
        Self::open_with(sel, ring_capacity, &AudioOptions::default())
    }

    /// Opens the selection.
    ///
    /// - `Default`: the default input device of cpal's default host (PulseAudio when a server
    ///   runs, else ALSA). If there is none, or it cannot be opened, the synthetic source is used
    ///   instead and [`notice`](Self::notice) says so: "No audio input could be opened (\<why\>);
    ///   showing the built-in synthetic source". Only the default device is tried (on ALSA the
    ///   other "devices" include `null`, which would open and deliver silence).
    /// - `Device(name)`: exact match on the device name (or the host's device id, e.g. the
    ///   PulseAudio source name `viz.monitor`), else a case-insensitive substring of exactly one
    ///   name. Unknown → [`AudioError::DeviceNotFound`] listing the input devices; several
    ///   substring matches → [`AudioError::DeviceAmbiguous`]; no fallback.
    /// - `File(path)`: decoded fully here, on the calling thread ([`file::decode_file`]; its
    ///   errors surface here; a partly decodable file opens with a [`warning`](Self::warning)),
    ///   then played at real-time rate by [`advance_to`](Self::advance_to). The whole file is
    ///   held in memory as mono `f32` (4 bytes per frame: 11 MB per minute at 48 kHz).
    /// - `Synthetic` / `Signal(s)`: [`synth::Synth`] at [`synth::SYNTH_SAMPLE_RATE`] with
    ///   `options.seed`.
    ///
    /// `ring_capacity` is in mono samples ([`DEFAULT_RING_CAPACITY`] is a good value).
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidRingCapacity`] for 0; for `File`, every error of
    /// [`file::decode_file`] and [`AudioError::InvalidChannel`]; for `Device`,
    /// [`AudioError::DeviceNotFound`], [`AudioError::DeviceAmbiguous`],
    /// [`AudioError::DeviceList`], [`AudioError::DeviceOpen`] (also for a channel or a forced
    /// sample format the device lacks). `Default`, `Synthetic` and `Signal` never fail (with a
    /// valid capacity).
    ///
    /// [`DEFAULT_RING_CAPACITY`]: super::DEFAULT_RING_CAPACITY
    pub fn open_with(
        sel: &AudioSelection,
        ring_capacity: usize,
        options: &AudioOptions,
    ) -> Result<AudioSource, AudioError> {
        if ring_capacity == 0 {
            return Err(AudioError::InvalidRingCapacity {
                capacity: ring_capacity,
            });
        }
        let mut src = match sel {
            AudioSelection::Synthetic => {
                Self::synthetic(ring_capacity, SynthSignal::ChirpTones, options.seed, None)
            }
            AudioSelection::Signal(s) => Self::synthetic(ring_capacity, *s, options.seed, None),
            AudioSelection::File(path) => Self::open_file(path, ring_capacity, options.channel)?,
            AudioSelection::Device(name) => {
                let device = capture::find_input_device(name)?;
                let parts = capture::LiveCapture::open(
                    &device,
                    ring_capacity,
                    options.channel,
                    options.sample_format,
                )
                .map_err(|e| AudioError::DeviceOpen {
                    name: capture::device_name(&device),
                    reason: e,
                })?;
                Self::from_live(parts)
            }
            AudioSelection::Default => {
                match capture::open_default(ring_capacity, options.channel, options.sample_format) {
                    Ok(parts) => Self::from_live(parts),
                    Err(why) => {
                        let notice = format!(
                            "No audio input could be opened ({why}); showing the built-in synthetic source"
                        );
                        log::warn!("{notice}");
                        Self::synthetic(
                            ring_capacity,
                            SynthSignal::ChirpTones,
                            options.seed,
                            Some(notice),
                        )
                    }
                }
            }
        };
        // The synthetic source is mono: a channel other than the first is named, not silently
        // ignored (it still plays, so a UI switch to it never fails on the channel).
        if let (true, ChannelChoice::Channel(c)) = (src.kind == "synthetic", options.channel)
            && c > 0
        {
            let note = format!(
                "audio channel {} ignored: the synthetic source has 1 channel",
                c + 1
            );
            log::warn!("{note}");
            src.notice = Some(match src.notice.take() {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
        }
        src.selection = sel.clone();
        src.options = *options;
        if let Feed::Live(live) = &src.feed {
            let key = if live.device_id().is_empty() {
                live.device_name().to_string()
            } else {
                live.device_id().to_string()
            };
            src.target = Some(reconnect::Target {
                key,
                name: live.device_name().to_string(),
                ring_capacity,
                channel: options.channel,
                format: options.sample_format,
            });
        }
        Ok(src)
    }

    fn base(
        feed: Feed,
        consumer: Consumer<f32>,
        dropped: Arc<AtomicU64>,
        sample_rate: u32,
        label: String,
        kind: &'static str,
    ) -> AudioSource {
        AudioSource {
            feed,
            consumer,
            dropped,
            sample_rate,
            label,
            kind,
            notice: None,
            warning: None,
            selection: AudioSelection::Synthetic,
            options: AudioOptions::default(),
            paused: false,
            fast: false,
            stop_at: None,
            gap_pending: 0,
            gap_until: None,
            last_advance: None,
            auto_reconnect: true,
            reconnect: None,
            target: None,
            reopen_stats: ReopenStats::default(),
            dropped_base: 0,
            delivered: 0,
            frames_base: 0,
            rate_changed: false,
        }
    }

    fn clocked(producer: Producer<f32>, generator: Generator) -> Feed {
        Feed::Clocked {
            producer,
            generator,
            produced: 0,
            cursor: 0,
            t_base: 0.0,
            pos_base: 0,
            scratch: Vec::new(),
        }
    }

    fn from_live((live, consumer, dropped): capture::LiveParts) -> AudioSource {
        let sample_rate = live.sample_rate();
        let label = live.label();
        Self::base(
            Feed::Live(live),
            consumer,
            dropped,
            sample_rate,
            label,
            "live",
        )
    }

    fn synthetic(
        ring_capacity: usize,
        signal: SynthSignal,
        seed: u64,
        notice: Option<String>,
    ) -> AudioSource {
        let (producer, consumer) = super::new_ring(ring_capacity);
        let label = match signal {
            SynthSignal::ChirpTones => format!("synthetic ({} Hz)", synth::SYNTH_SAMPLE_RATE),
            s => format!("synthetic: {s} ({} Hz)", synth::SYNTH_SAMPLE_RATE),
        };
        let mut src = Self::base(
            Self::clocked(
                producer,
                Generator::Synth(synth::Synth::with_signal(signal, seed)),
            ),
            consumer,
            Arc::new(AtomicU64::new(0)),
            synth::SYNTH_SAMPLE_RATE,
            label,
            "synthetic",
        );
        src.notice = notice;
        src
    }

    /// Decodes the file here, on the calling thread, with a terminal progress bar on stderr
    /// while it takes long ([`vizdeck_base::progress::Progress`]: a terminal only).
    fn open_file(
        path: &Path,
        ring_capacity: usize,
        channel: ChannelChoice,
    ) -> Result<AudioSource, AudioError> {
        let mut bar = vizdeck_base::progress::Progress::new(
            format!("decoding {}", path.display()),
            0,
            "bytes",
        )
        .in_bytes();
        let mono = file::MonoFile::decode(path, channel, &mut |stage, done, total| {
            if bar.total() != total {
                bar.set_total(total);
            }
            let what = match stage {
                file::DecodeStage::Reading => "reading",
                file::DecodeStage::Decoding => "decoding",
            };
            bar.update(done, what);
            true
        })?;
        bar.finish();
        Ok(Self::mono_source(mono, ring_capacity))
    }

    /// A file source playing `file` (decoded elsewhere, e.g. on a loader thread), opened as
    /// [`open_with`](Self::open_with) opens `AudioSelection::File(file.path)` with `options`
    /// (whose channel `file` was made with).
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidRingCapacity`] for 0.
    pub fn from_mono_file(
        file: file::MonoFile,
        ring_capacity: usize,
        options: &AudioOptions,
    ) -> Result<AudioSource, AudioError> {
        if ring_capacity == 0 {
            return Err(AudioError::InvalidRingCapacity {
                capacity: ring_capacity,
            });
        }
        let sel = AudioSelection::File(file.path.clone());
        let mut src = Self::mono_source(file, ring_capacity);
        src.selection = sel;
        src.options = *options;
        Ok(src)
    }

    /// A file source with no samples, paused, labelled `"file: PATH (NOTE)"`: what the
    /// spectrogram holds while `path` is decoded on another thread (NOTE `"decoding"`) or after
    /// that failed. Its rate is [`synth::SYNTH_SAMPLE_RATE`] until the file replaces it.
    pub fn pending_file(
        path: &Path,
        note: &str,
        ring_capacity: usize,
        options: &AudioOptions,
    ) -> AudioSource {
        let mut src = Self::mono_source(
            file::MonoFile {
                path: path.to_path_buf(),
                samples: Vec::new(),
                sample_rate: synth::SYNTH_SAMPLE_RATE,
                channels: 1,
                channel: options.channel,
                warning: None,
            },
            ring_capacity.max(1),
        );
        src.label = format!("file: {} ({note})", path.display());
        src.selection = AudioSelection::File(path.to_path_buf());
        src.options = *options;
        src.paused = true;
        src
    }

    fn mono_source(file: file::MonoFile, ring_capacity: usize) -> AudioSource {
        let (producer, consumer) = super::new_ring(ring_capacity);
        let ch = match file.channel {
            ChannelChoice::Mix => String::new(),
            ChannelChoice::Channel(c) => format!(", channel {}", c + 1),
        };
        let label = format!(
            "file: {} ({} Hz, {} ch{ch})",
            file.path.display(),
            file.sample_rate,
            file.channels
        );
        let mut src = Self::base(
            Self::clocked(
                producer,
                Generator::File {
                    samples: file.samples,
                    looping: false,
                },
            ),
            consumer,
            Arc::new(AtomicU64::new(0)),
            file.sample_rate,
            label,
            "file",
        );
        if let Some(w) = &file.warning {
            log::warn!("audio file '{}': {w}", file.path.display());
        }
        src.warning = file.warning;
        src
    }

    /// Sample rate of the mono samples in the ring, in Hz (never 0).
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// One line for the UI and reports: `"live: <device name> (48000 Hz, 2 ch, I16)"`,
    /// `"synthetic (48000 Hz)"`, `"synthetic: pink (48000 Hz)"` or
    /// `"file: <path> (44100 Hz, 1 ch)"` (the file's own channel count; the ring is always mono).
    /// When one channel is taken, `", channel N"` (1-based) precedes the closing parenthesis.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Short kind for reports: `"live"` | `"synthetic"` | `"file"`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The selection this source was opened from (what [`reopen`](Self::reopen) opens again).
    pub fn selection(&self) -> &AudioSelection {
        &self.selection
    }

    /// The options this source was opened with.
    pub fn options(&self) -> &AudioOptions {
        &self.options
    }

    /// A visible one-line notice for the user, set when `Default` fell back to the synthetic
    /// source, or when a channel other than the first was asked of the (mono) synthetic source;
    /// `None` otherwise.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// A one-line warning about a file that was only partly decodable (truncated, corrupt
    /// packets): what was skipped or where decoding stopped. `None` for clean files and other
    /// sources. The decodable part plays normally.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Opens the same selection with the same options and ring capacity again and replaces this
    /// source with it (a live device that disappeared and came back, or `Default` that fell back
    /// to the synthetic source). The dropped-sample count starts over; the sample rate may change.
    ///
    /// # Errors
    ///
    /// As [`open_with`](Self::open_with); on error this source is left as it was.
    pub fn reopen(&mut self) -> Result<(), AudioError> {
        let sel = self.selection.clone();
        let options = self.options;
        self.reopen_with(&sel, &options)
    }

    /// Opens another selection (or the same with other options, e.g. another channel) with this
    /// source's ring capacity and replaces this source with it.
    ///
    /// # Errors
    ///
    /// As [`open_with`](Self::open_with); on error this source is left as it was.
    pub fn reopen_with(
        &mut self,
        sel: &AudioSelection,
        options: &AudioOptions,
    ) -> Result<(), AudioError> {
        let fresh = AudioSource::open_with(sel, self.ring_capacity(), options)?;
        *self = fresh;
        Ok(())
    }

    /// Capacity of the ring, in mono samples.
    pub fn ring_capacity(&self) -> usize {
        self.consumer.buffer().capacity()
    }

    /// The live stream, for device details (channels, sample format, frames received); `None`
    /// for clocked sources.
    pub fn live(&self) -> Option<&capture::LiveCapture> {
        match &self.feed {
            Feed::Live(live) => Some(live),
            Feed::Clocked { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_beyond_the_first_on_the_synthetic_source_is_noticed() {
        let opts = |channel| AudioOptions {
            channel,
            ..AudioOptions::default()
        };
        for sel in [
            AudioSelection::Synthetic,
            AudioSelection::Signal(SynthSignal::Sine),
        ] {
            let src = AudioSource::open_with(&sel, 4096, &opts(ChannelChoice::Channel(4))).unwrap();
            assert_eq!(
                src.notice(),
                Some("audio channel 5 ignored: the synthetic source has 1 channel")
            );
            for ok in [ChannelChoice::Mix, ChannelChoice::Channel(0)] {
                let src = AudioSource::open_with(&sel, 4096, &opts(ok)).unwrap();
                assert!(src.notice().is_none(), "{ok:?}");
            }
        }
    }

    #[test]
    fn zero_ring_capacity_is_an_error() {
        let err = AudioSource::open(&AudioSelection::Synthetic, 0).unwrap_err();
        assert!(matches!(err, AudioError::InvalidRingCapacity { .. }));
        assert!(err.to_string().contains("capacity 0"));
    }
}
