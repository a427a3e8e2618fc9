//! [`AudioError`]: everything that can go wrong in the audio module, one line each.

use std::path::PathBuf;

/// Everything that can go wrong in the audio module. Every message is one line that names the
/// input (file path, device name, STFT parameter) and the problem.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// The file does not exist.
    #[error("audio file '{}': no such file", .path.display())]
    FileNotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// The file exists but could not be read (permissions, a directory, I/O error).
    #[error("audio file '{}': cannot read: {reason}", .path.display())]
    FileRead {
        /// The path as given.
        path: PathBuf,
        /// The operating system's message.
        reason: String,
    },
    /// The file has zero bytes.
    #[error("audio file '{}': empty file (0 bytes)", .path.display())]
    EmptyFile {
        /// The path as given.
        path: PathBuf,
    },
    /// No decoder recognises the file (not WAV, FLAC, Ogg Vorbis or MP3), or its codec is not
    /// supported.
    #[error("audio file '{}': unsupported or unrecognised format: {reason}", .path.display())]
    UnsupportedFormat {
        /// The path as given.
        path: PathBuf,
        /// What the decoder said.
        reason: String,
    },
    /// A RIFF/WAVE file whose chunks cannot be read even leniently (see
    /// [`file::decode_file`]): no `fmt ` or `data` chunk, a chunk past the end of the file, a
    /// `fmt ` chunk too short for its format.
    ///
    /// [`file::decode_file`]: super::file::decode_file
    #[error("audio file '{}': malformed WAV header: {reason}", .path.display())]
    MalformedWav {
        /// The path as given.
        path: PathBuf,
        /// What is wrong, one line.
        reason: String,
    },
    /// The file was recognised but not one sample could be decoded from it.
    #[error("audio file '{}': nothing could be decoded: {reason}", .path.display())]
    Decode {
        /// The path as given.
        path: PathBuf,
        /// The first decoder error.
        reason: String,
    },
    /// The header says 0 Hz.
    #[error("audio file '{}': sample rate is 0 Hz", .path.display())]
    ZeroSampleRate {
        /// The path as given.
        path: PathBuf,
    },
    /// The header says 0 channels.
    #[error("audio file '{}': zero channels", .path.display())]
    ZeroChannels {
        /// The path as given.
        path: PathBuf,
    },
    /// The file decodes to no sample frames.
    #[error("audio file '{}': contains no audio samples", .path.display())]
    NoSamples {
        /// The path as given.
        path: PathBuf,
    },
    /// The chosen channel does not exist in the file or on the device.
    #[error("audio {source_name}: channel {channel} requested, it has {channels} channel(s)")]
    InvalidChannel {
        /// `file '<path>'` or `device '<name>'`.
        source_name: String,
        /// The channel asked for, 1-based.
        channel: usize,
        /// Channels available.
        channels: usize,
    },
    /// No input device matches the requested name.
    #[error("audio device '{name}' not found; input devices: {available}")]
    DeviceNotFound {
        /// The name as given.
        name: String,
        /// The input devices the default host offers, comma-separated as `name (id)`, or `none`.
        available: String,
    },
    /// The name is not an exact match and is a substring of several device names.
    #[error("audio device '{name}' is ambiguous; it matches: {matches}")]
    DeviceAmbiguous {
        /// The name as given.
        name: String,
        /// Comma-separated names of the matching devices.
        matches: String,
    },
    /// The input devices of the default host could not be listed.
    #[error("audio device '{name}': cannot list input devices: {reason}")]
    DeviceList {
        /// The name as given.
        name: String,
        /// cpal's message.
        reason: String,
    },
    /// The device was found but no input stream could be built or started on it.
    #[error("audio device '{name}': cannot open: {reason}")]
    DeviceOpen {
        /// The device's name.
        name: String,
        /// cpal's message (or the unsupported sample format or channel).
        reason: String,
    },
    /// [`stft::Stft::new`] got an FFT size that is not a power of two in 16..=65536.
    ///
    /// [`stft::Stft::new`]: super::stft::Stft::new
    #[error("STFT fft size {fft_size}: must be a power of two in 16..=65536")]
    InvalidFftSize {
        /// The size given.
        fft_size: usize,
    },
    /// [`stft::Stft::new`] got a hop outside 1..=fft_size.
    ///
    /// [`stft::Stft::new`]: super::stft::Stft::new
    #[error("STFT hop {hop}: must be in 1..={fft_size} (the fft size)")]
    InvalidHop {
        /// The hop given.
        hop: usize,
        /// The FFT size it was checked against.
        fft_size: usize,
    },
    /// [`AudioSource::open`] got a ring capacity of 0.
    ///
    /// [`AudioSource::open`]: super::AudioSource::open
    #[error("audio ring capacity {capacity}: must be at least 1 sample")]
    InvalidRingCapacity {
        /// The capacity given.
        capacity: usize,
    },
}
