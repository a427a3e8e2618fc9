//! What to open: the selection ([`AudioSelection`]: default device, a device, a file, the
//! synthetic source or one of its signals), the channel that becomes the mono stream
//! ([`ChannelChoice`]) and the other options ([`AudioOptions`]).

use std::path::PathBuf;

use super::SynthSignal;

/// Which channel of a multi-channel source becomes the mono stream. 0-based inside; the command
/// line (`--audio-channel`) and [`Display`](std::fmt::Display) are 1-based.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChannelChoice {
    /// The mean of all channels, `(1/C)·Σ_c x_c` (a tone on one channel of a stereo pair reads
    /// 20·log10(1/2) = −6.02 dB lower than that channel alone).
    #[default]
    Mix,
    /// Channel `i`, 0-based (0 = left, 1 = right).
    Channel(usize),
}

impl ChannelChoice {
    /// Parses `--audio-channel`: `mix` (or `all`), `left` (= 1), `right` (= 2), or a 1-based
    /// channel number `N` ≥ 1. Case-insensitive.
    ///
    /// # Errors
    ///
    /// One line saying what is accepted.
    pub fn from_cli(s: &str) -> Result<ChannelChoice, String> {
        let v = s.trim().to_ascii_lowercase();
        match v.as_str() {
            "mix" | "all" => Ok(ChannelChoice::Mix),
            "left" | "l" => Ok(ChannelChoice::Channel(0)),
            "right" | "r" => Ok(ChannelChoice::Channel(1)),
            _ => match v.parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => Ok(ChannelChoice::Channel(n - 1)),
                _ => Err(format!(
                    "'{s}' is not a channel: use mix, left, right or a channel number 1..=1024"
                )),
            },
        }
    }
}

impl std::fmt::Display for ChannelChoice {
    /// `mix` or the 1-based channel number.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChannelChoice::Mix => f.write_str("mix"),
            ChannelChoice::Channel(c) => write!(f, "{}", c + 1),
        }
    }
}

/// How a selection is opened, besides the selection itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AudioOptions {
    /// Channel kept (or mix) for live input and files. Fixed per stream: reopen to change it.
    pub channel: ChannelChoice,
    /// Seed of the synthetic noises.
    pub seed: u64,
    /// Live input only: capture in this sample format instead of the device's default one (the
    /// same rate and channels); `None` keeps the default. PulseAudio offers U8, I16, I24, I32 and
    /// F32 on every source and converts.
    pub sample_format: Option<cpal::SampleFormat>,
}

impl Default for AudioOptions {
    /// Mix, seed 1, the device's own sample format.
    fn default() -> AudioOptions {
        AudioOptions {
            channel: ChannelChoice::Mix,
            seed: 1,
            sample_format: None,
        }
    }
}

/// What the user asked for (from CLI `--audio default|synthetic[:SIGNAL]|NAME` and
/// `--audio-file PATH`).
#[derive(Clone, Debug, PartialEq)]
pub enum AudioSelection {
    /// The default input device of cpal's default host; falls back to [`AudioSelection::Synthetic`]
    /// (with a [`AudioSource::notice`]) when it cannot be opened.
    ///
    /// [`AudioSource::notice`]: super::AudioSource::notice
    Default,
    /// The built-in deterministic generator, [`synth::Synth`], with its default signal
    /// ([`SynthSignal::ChirpTones`]).
    ///
    /// [`synth::Synth`]: super::synth::Synth
    Synthetic,
    /// The built-in generator with a chosen signal.
    Signal(SynthSignal),
    /// An input device chosen by name: exact match first, else a case-insensitive substring.
    Device(String),
    /// An audio file (WAV, FLAC, Ogg Vorbis, MP3), decoded fully when opened and played at
    /// real-time rate.
    File(PathBuf),
}

impl AudioSelection {
    /// Parses the value of `--audio`: `default`, `synthetic` (or `synth`) and
    /// `synthetic:SIGNAL` (any case; signals: `sine`, `two-tone`, `chirp`, `chirp-tones`,
    /// `white`, `pink`, see [`SynthSignal::from_name`]) are the keywords, anything else is a
    /// device name. An empty string means `Default`. An unknown signal name is taken as a device
    /// name (use [`AudioSelection::parse`] to reject it).
    pub fn from_cli(value: &str) -> AudioSelection {
        Self::parse(value).unwrap_or_else(|_| AudioSelection::Device(value.trim().to_string()))
    }

    /// As [`from_cli`](Self::from_cli), but `synthetic:NAME` with an unknown signal name is an
    /// error listing the signals.
    ///
    /// # Errors
    ///
    /// One line naming the bad signal and the accepted ones.
    pub fn parse(value: &str) -> Result<AudioSelection, String> {
        let v = value.trim();
        if v.is_empty() || v.eq_ignore_ascii_case("default") {
            return Ok(AudioSelection::Default);
        }
        if v.eq_ignore_ascii_case("synthetic") || v.eq_ignore_ascii_case("synth") {
            return Ok(AudioSelection::Synthetic);
        }
        if let Some((kw, sig)) = v.split_once(':')
            && (kw.eq_ignore_ascii_case("synthetic") || kw.eq_ignore_ascii_case("synth"))
        {
            return match SynthSignal::from_name(sig) {
                Some(SynthSignal::ChirpTones) => Ok(AudioSelection::Synthetic),
                Some(s) => Ok(AudioSelection::Signal(s)),
                None => {
                    let names: Vec<_> = SynthSignal::ALL.iter().map(|s| s.name()).collect();
                    Err(format!(
                        "unknown synthetic signal '{sig}'; signals: {}",
                        names.join(", ")
                    ))
                }
            };
        }
        Ok(AudioSelection::Device(v.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_from_cli() {
        assert_eq!(AudioSelection::from_cli("default"), AudioSelection::Default);
        assert_eq!(AudioSelection::from_cli(""), AudioSelection::Default);
        assert_eq!(
            AudioSelection::from_cli("Synthetic"),
            AudioSelection::Synthetic
        );
        assert_eq!(
            AudioSelection::from_cli("Monitor of Null Output"),
            AudioSelection::Device("Monitor of Null Output".into())
        );
    }
}
