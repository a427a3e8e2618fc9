//! Audio files, decoded fully up front with symphonia into interleaved `f32`.
//!
//! Containers and codecs: WAV (PCM 8-bit unsigned, 16/24/32-bit integer, 32/64-bit float,
//! A-law/µ-law, plain `WAVEFORMATEX` or `WAVE_FORMAT_EXTENSIBLE`), FLAC, Ogg Vorbis and MP3
//! (symphonia features `wav pcm flac ogg vorbis mp3`). Samples are converted by symphonia's
//! `FromSample` (exact: integers divide by 2^(bits−1), so the most negative code reads −1.0;
//! `u8` is centred, 128 → 0.0; `f64` is rounded to `f32`).
//!
//! **Up front, not streamed.** [`decode_file`] reads the whole file on the calling thread before
//! playback starts (a 5-minute 44.1 kHz stereo MP3 takes well under a second in release builds,
//! an hour-long one about 6 s on the 2-core machine), which makes seeking, looping and fast
//! analysis trivial and keeps the frame loop free of I/O. [`decode_file_with`] reports how far
//! it has come ([`DecodeStage`], bytes done of bytes in all) and can be stopped part-way: the
//! spectrogram decodes a long file on its own thread with a progress bar in the window
//! (`scene/spectrogram/loading.rs`), and a headless run shows a terminal bar while it waits.
//!
//! **WAV headers as players read them.** symphonia's WAV reader is strict (it refuses a RIFF
//! size 8 bytes short, or `WAVE_FORMAT_EXTENSIBLE` whose cbSize is not exactly 22), so a file
//! that starts `RIFF....WAVE` is first read here, leniently: the RIFF size is not trusted, a data
//! size of 0 or 0xFFFFFFFF (streamed) means "to the end of the file" (either read so is noted
//! in one line of [`DecodedFile::warning`]), one past the end reads what is there, `fmt ` chunks of 16, 18, 40 or any other size ≥ 16 are read for what they must
//! hold, `WAVE_FORMAT_EXTENSIBLE` takes any cbSize ≥ 22. The file is then rewritten in memory in
//! canonical form (true sizes, a normalised `fmt `, whole frames only) and decoded by symphonia
//! (see `repair_wav` for every rule). A header that cannot be read even so is
//! [`AudioError::MalformedWav`], one line naming the file and the problem.
//!
//! **Damaged files.** Decoding keeps what it can: a packet that fails to decode is skipped
//! (counted), and reading stops at the first container error or unexpected end of file. If
//! anything was decoded the file opens with a one-line [`DecodedFile::warning`] ("truncated:
//! decoded 0.5 s (4000 frames) of the 2.00 s (16000 frames) the header declares; the last frame
//! is cut (4 of its 6 bytes present) and was dropped", "the data ends inside a frame (1 of its 3
//! bytes present) after 0.25 s (2000 frames); that frame was dropped", "3 packets could not be
//! decoded and were skipped", ...; durations to three significant digits with the exact frame
//! count); if nothing was, the result is an error naming the file.
//!
//! Files: `mod.rs` the decode (probe, packets, the warning of a damaged file); `wav.rs` the
//! lenient WAV header reader that rewrites a file into the canonical form symphonia reads
//! ([`repair_wav`]); `counted.rs` the byte source that publishes how far it has been read, for
//! progress.

mod counted;
mod wav;

use std::io::{Cursor, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use symphonia::core::codecs::audio::AudioDecoderOptions;
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::{MediaSourceStream, ReadOnlySource};
use symphonia::core::meta::MetadataOptions;

use super::AudioError;

use counted::{PACKETS_PER_REPORT, READ_PIECE, counted};
pub use wav::{RepairedWav, repair_wav};

/// Consecutive undecodable packets after which decoding gives up (a file of garbage).
const MAX_CONSECUTIVE_BAD_PACKETS: usize = 1000;

/// A decoded file.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedFile {
    /// Interleaved samples in [-1, 1] (floats files may exceed it), `frames × channels`.
    pub samples: Vec<f32>,
    /// Sample rate, Hz (≥ 1).
    pub sample_rate: u32,
    /// Channels per frame (≥ 1).
    pub channels: u16,
    /// The codec, as symphonia names it (e.g. `pcm_s16le`, `flac`, `vorbis`, `mp3`).
    pub codec: String,
    /// What went wrong while decoding, if anything (see the module docs); the samples are what
    /// could be decoded.
    pub warning: Option<String>,
}

impl DecodedFile {
    /// Sample frames (samples per channel).
    pub fn frames(&self) -> usize {
        self.samples.len() / usize::from(self.channels.max(1))
    }

    /// Length in seconds.
    pub fn duration_s(&self) -> f64 {
        self.frames() as f64 / f64::from(self.sample_rate.max(1))
    }
}

/// A sound file decoded and reduced to the channel analysed (or the mix of all): what a file
/// source plays ([`AudioSource::from_mono_file`]). Made by [`MonoFile::decode`] on any thread.
///
/// [`AudioSource::from_mono_file`]: super::AudioSource::from_mono_file
#[derive(Clone, Debug, PartialEq)]
pub struct MonoFile {
    /// The file.
    pub path: std::path::PathBuf,
    /// Mono samples, one per frame.
    pub samples: Vec<f32>,
    /// Sample rate, Hz (≥ 1).
    pub sample_rate: u32,
    /// The file's own channel count.
    pub channels: u16,
    /// The channel taken (or the mix).
    pub channel: super::ChannelChoice,
    /// [`DecodedFile::warning`].
    pub warning: Option<String>,
}

impl MonoFile {
    /// Decodes `path` ([`decode_file_with`], reporting to `progress`) and takes `channel` of it.
    ///
    /// # Errors
    ///
    /// Those of [`decode_file`], and [`AudioError::InvalidChannel`] for a channel the file does
    /// not have.
    pub fn decode(
        path: &Path,
        channel: super::ChannelChoice,
        progress: OnProgress<'_>,
    ) -> Result<MonoFile, AudioError> {
        use super::ChannelChoice;
        let decoded = decode_file_with(path, progress)?;
        let channels = usize::from(decoded.channels);
        let mut mono = Vec::with_capacity(decoded.samples.len() / channels.max(1));
        match channel {
            ChannelChoice::Mix => super::mix_to_mono(&decoded.samples, channels, &mut mono),
            ChannelChoice::Channel(c) if c < channels => {
                mono.extend(decoded.samples.chunks_exact(channels).map(|f| f[c]));
            }
            ChannelChoice::Channel(c) => {
                return Err(AudioError::InvalidChannel {
                    source_name: format!("file '{}'", path.display()),
                    channel: c + 1,
                    channels,
                });
            }
        }
        Ok(MonoFile {
            path: path.to_path_buf(),
            samples: mono,
            sample_rate: decoded.sample_rate,
            channels: decoded.channels,
            channel,
            warning: decoded.warning,
        })
    }
}

/// What a decode reported through its progress callback is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeStage {
    /// Reading the file into memory: bytes read of the file's size.
    Reading,
    /// Decoding: bytes of the (repaired) file the format reader has consumed, of its size.
    Decoding,
}

/// A progress callback of [`decode_file_with`] and [`decode_bytes_with`]: `(stage, bytes done,
/// bytes in all)`, called every few packets; returning `false` stops the decode there (the
/// result then holds what was decoded so far, with a warning saying it was stopped).
pub(crate) type OnProgress<'a> = &'a mut dyn FnMut(DecodeStage, u64, u64) -> bool;

/// Decodes the file at `path` (format found from its content, the extension is only a hint).
/// The file is read into memory and decoded by [`decode_bytes`].
///
/// # Errors
///
/// Each naming the path: [`AudioError::FileNotFound`], [`AudioError::FileRead`], and those of
/// [`decode_bytes`].
pub fn decode_file(path: &Path) -> Result<DecodedFile, AudioError> {
    decode_file_with(path, &mut |_, _, _| true)
}

/// [`decode_file`] reporting its progress to `progress` (read, then decode; see
/// [`OnProgress`]).
///
/// # Errors
///
/// As [`decode_file`].
pub fn decode_file_with(path: &Path, progress: OnProgress<'_>) -> Result<DecodedFile, AudioError> {
    let p = || path.to_path_buf();
    let read_err = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            AudioError::FileNotFound { path: p() }
        } else {
            AudioError::FileRead {
                path: p(),
                reason: e.to_string(),
            }
        }
    };
    let mut file = std::fs::File::open(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if meta.is_dir() {
        return Err(AudioError::FileRead {
            path: p(),
            reason: "is a directory".to_string(),
        });
    }
    let len = meta.len();
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // In pieces, so that a long read reports how far it has come.
    loop {
        let before = bytes.len();
        let n = (&mut file)
            .take(READ_PIECE)
            .read_to_end(&mut bytes)
            .map_err(read_err)?;
        if n == 0 {
            break;
        }
        if !progress(DecodeStage::Reading, (before + n) as u64, len) {
            break;
        }
    }
    drop(file);
    let ext = path.extension().and_then(|e| e.to_str());
    decode_bytes_with(&bytes, path, ext, progress)
}

/// Decodes a whole audio file held in memory: `bytes` are the file's content (format found from
/// it; `ext_hint`, a file extension without the dot such as `"mp3"`, only helps the probe), and
/// `name` is what messages call the file (its path, or any label). This is [`decode_file`]'s
/// decoder; it reads nothing else and runs on the calling thread.
///
/// # Errors
///
/// Each one line naming `name`: [`AudioError::EmptyFile`] (0 bytes), [`AudioError::MalformedWav`]
/// (a RIFF/WAVE header that cannot be read even leniently), [`AudioError::UnsupportedFormat`] (no
/// reader recognises it, no audio track, or an unsupported codec), [`AudioError::ZeroChannels`],
/// [`AudioError::ZeroSampleRate`], [`AudioError::Decode`] (recognised, but not one sample could
/// be decoded), [`AudioError::NoSamples`] (decodes cleanly to nothing).
pub fn decode_bytes(
    bytes: &[u8],
    name: &Path,
    ext_hint: Option<&str>,
) -> Result<DecodedFile, AudioError> {
    decode_bytes_with(bytes, name, ext_hint, &mut |_, _, _| true)
}

/// [`decode_bytes`] reporting its progress to `progress` ([`DecodeStage::Decoding`]; see
/// [`OnProgress`]).
///
/// # Errors
///
/// As [`decode_bytes`].
pub(crate) fn decode_bytes_with(
    bytes: &[u8],
    name: &Path,
    ext_hint: Option<&str>,
    progress: OnProgress<'_>,
) -> Result<DecodedFile, AudioError> {
    let p = || name.to_path_buf();
    if bytes.is_empty() {
        return Err(AudioError::EmptyFile { path: p() });
    }
    let unsupported = |reason: String| AudioError::UnsupportedFormat { path: p(), reason };

    let mut hint = Hint::new();
    if let Some(ext) = ext_hint {
        hint.with_extension(ext);
    }
    let probe = |mss| probe_format(&hint, mss);
    // WAV: read leniently here and handed to symphonia in canonical form (see `repair_wav`).
    let is_wav = bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE";
    // symphonia's probe scans past leading bytes to a RIFF/WAVE header, which its strict reader
    // would then read (and a few headers make it panic in debug builds): when the bytes before
    // the first such header are no format of their own, it is read leniently from where it
    // starts, as if the leading bytes were not there.
    if !is_wav && let Some(at) = find_riff_wave(bytes) {
        let before = probe(MediaSourceStream::new(
            Box::new(Cursor::new(&bytes[..at])),
            Default::default(),
        ));
        if before.is_err() {
            return decode_bytes_with(&bytes[at..], name, ext_hint, progress);
        }
    }
    // How far the format reader has read, of `stream_len` bytes.
    let pos = Arc::new(AtomicU64::new(0));
    let mut stream_len = bytes.len() as u64;
    let mut wav: Option<RepairedWav> = None;
    let probed = if is_wav {
        let mut repaired = repair_wav(bytes, name)?;
        let canonical = std::mem::take(&mut repaired.bytes);
        stream_len = canonical.len() as u64;
        wav = Some(repaired);
        probe(counted(Cursor::new(canonical), &pos))
    } else {
        probe(counted(Cursor::new(bytes), &pos))
    };
    let mut format = match probed {
        Ok(f) => f,
        // Readers that scan the end of a seekable file (Ogg looks for its last page) fail on a
        // truncated one: probe again as an unseekable stream, which they read front to back.
        // (Not for WAV: that would hand symphonia's strict reader the original header.)
        Err(SymError::IoError(_)) if wav.is_none() => {
            let ro = ReadOnlySource::new(bytes);
            probe(counted(ro, &pos)).map_err(|e| unsupported(describe(&e)))?
        }
        Err(e) => return Err(unsupported(describe(&e))),
    };
    let track = format
        .default_track(TrackType::Audio)
        .ok_or_else(|| unsupported("no audio track".to_string()))?;
    let track_id = track.id;
    // For WAV the repaired header holds only the frames present: the declared count is the
    // original header's.
    let declared_frames = match &wav {
        Some(w) => w.declared_frames,
        None => track.num_frames,
    };
    let params = track
        .codec_params
        .as_ref()
        .and_then(|c| c.audio())
        .ok_or_else(|| unsupported("the audio track has no codec parameters".to_string()))?
        .clone();
    let packet_frames = params.max_frames_per_packet;
    let mut sample_rate = params.sample_rate.unwrap_or(0);
    let mut channels = params.channels.as_ref().map_or(0, |c| c.count());
    if params.sample_rate == Some(0) {
        return Err(AudioError::ZeroSampleRate { path: p() });
    }
    if params.channels.is_some() && channels == 0 {
        return Err(AudioError::ZeroChannels { path: p() });
    }
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(&params, &AudioDecoderOptions::default())
        .map_err(|e| unsupported(describe(&e)))?;
    let codec = decoder.codec_info().short_name.to_string();

    let mut samples: Vec<f32> = Vec::new();
    // The declared length, when there is one, is allocated at once (no copies while the vector
    // doubles: an hour of 44.1 kHz stereo is 1.3 GB of f32); a header can claim anything, so at
    // most one sample per byte of a WAV's data, 32 per byte of a compressed file (more than any
    // codec here packs).
    if let (Some(frames), true) = (declared_frames, channels > 0) {
        let cap = if wav.is_some() {
            stream_len
        } else {
            (bytes.len() as u64).saturating_mul(32)
        };
        let want = frames.saturating_mul(channels as u64).min(cap);
        samples.reserve_exact(usize::try_from(want).unwrap_or(0));
    }
    let mut packet_buf: Vec<f32> = Vec::new();
    let mut bad_packets = 0usize;
    let mut consecutive_bad = 0usize;
    let mut first_error: Option<String> = None;
    let mut stopped: Option<String> = None;
    let mut packets = 0u32;
    loop {
        packets = packets.wrapping_add(1);
        if packets.is_multiple_of(PACKETS_PER_REPORT)
            && !progress(
                DecodeStage::Decoding,
                pos.load(Ordering::Relaxed).min(stream_len),
                stream_len,
            )
        {
            stopped = Some("decoding was stopped".to_string());
            break;
        }
        let packet = match format.next_packet() {
            Ok(Some(packet)) => packet,
            Ok(None) => break,
            Err(SymError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                stopped = Some("the file ends unexpectedly".to_string());
                break;
            }
            Err(SymError::ResetRequired) => {
                stopped = Some("the stream changes format mid-file; decoding stopped there".into());
                break;
            }
            Err(e) => {
                stopped = Some(format!("reading stopped: {}", describe(&e)));
                break;
            }
        };
        if packet.track_id != track_id {
            continue;
        }
        match decoder.decode(&packet) {
            Ok(buf) => {
                consecutive_bad = 0;
                if buf.frames() == 0 {
                    continue;
                }
                let spec = buf.spec();
                let (rate, ch) = (spec.rate(), spec.channels().count());
                if sample_rate == 0 {
                    sample_rate = rate;
                }
                if channels == 0 {
                    channels = ch;
                }
                if rate != sample_rate || ch != channels || ch == 0 {
                    stopped = Some(format!(
                        "the stream changes from {sample_rate} Hz, {channels} ch to {rate} Hz, \
                         {ch} ch; decoding stopped there"
                    ));
                    break;
                }
                buf.copy_to_vec_interleaved(&mut packet_buf);
                samples.extend_from_slice(&packet_buf);
            }
            Err(SymError::DecodeError(_)) | Err(SymError::IoError(_)) => {
                bad_packets += 1;
                consecutive_bad += 1;
                if first_error.is_none() {
                    first_error = Some(match decoder.decode(&packet) {
                        Err(e) => describe(&e),
                        Ok(_) => "malformed packet".to_string(),
                    });
                }
                if consecutive_bad >= MAX_CONSECUTIVE_BAD_PACKETS {
                    stopped = Some(format!(
                        "{MAX_CONSECUTIVE_BAD_PACKETS} packets in a row could not be decoded"
                    ));
                    break;
                }
            }
            Err(e) => {
                stopped = Some(format!("decoding stopped: {}", describe(&e)));
                break;
            }
        }
    }

    if sample_rate == 0 {
        return Err(AudioError::ZeroSampleRate { path: p() });
    }
    if channels == 0 {
        return Err(AudioError::ZeroChannels { path: p() });
    }
    let channels_u16 = u16::try_from(channels)
        .map_err(|_| unsupported(format!("{channels} channels (at most 65535 are supported)")))?;
    // A trailing partial frame cannot be played.
    let partial_samples = samples.len() % channels;
    samples.truncate(samples.len() - partial_samples);
    if samples.is_empty() {
        return Err(match stopped.or(first_error) {
            Some(reason) => AudioError::Decode { path: p(), reason },
            None => AudioError::NoSamples { path: p() },
        });
    }
    let frames = (samples.len() / channels) as u64;
    let secs = |f: u64| secs(f, sample_rate);
    let mut notes: Vec<String> = Vec::new();
    // A compressed stream's declared length (MP3's Xing/LAME header) may count one packet more
    // than a decoder yields after trimming the encoder's delay and padding (sox's MP3s: one
    // 1152-frame packet, which ffmpeg does not call an error either): up to one packet short is
    // not a truncation. A WAV's declared size is exact.
    let slack = if wav.is_some() {
        0
    } else {
        packet_frames.unwrap_or(1152)
    };
    if let Some(declared) = declared_frames.filter(|&d| d > frames + slack) {
        notes.push(format!(
            "truncated: decoded {} of the {} the header declares",
            secs(frames),
            secs(declared)
        ));
    }
    if let Some(w) = &wav {
        let unit = if w.pcm_like { "frame" } else { "block" };
        if w.overrun && !w.pcm_like {
            notes.push("truncated: the data chunk declares more bytes than the file holds".into());
        }
        if w.partial > 0 {
            notes.push(if w.overrun {
                format!(
                    "the last {unit} is cut ({} of its {} bytes present) and was dropped",
                    w.partial, w.block
                )
            } else {
                format!(
                    "the data ends inside a {unit} ({} of its {} bytes present) after {}; that \
                     {unit} was dropped",
                    w.partial,
                    w.block,
                    secs(frames)
                )
            });
        }
    }
    if partial_samples > 0 {
        notes.push(format!(
            "the last frame holds {partial_samples} of its {channels} channels and was dropped"
        ));
    }
    if bad_packets > 0 {
        notes.push(format!(
            "{bad_packets} packet(s) could not be decoded and were skipped ({})",
            first_error.as_deref().unwrap_or("malformed")
        ));
    }
    if let Some(s) = stopped {
        notes.push(format!("{s} after {}", secs(frames)));
    }
    let damage =
        (!notes.is_empty()).then(|| format!("{}; playing what was decoded", notes.join("; ")));
    // A WAV header whose sizes were not taken at their word comes first: the file is whole.
    let header = wav.as_ref().and_then(|w| w.size_note.clone());
    let warning = match (header, damage) {
        (Some(h), Some(d)) => Some(format!("{h}; {d}")),
        (h, d) => h.or(d),
    };
    Ok(DecodedFile {
        samples,
        sample_rate,
        channels: channels_u16,
        codec,
        warning,
    })
}

/// Where the first `RIFF....WAVE` header in `bytes` starts, if any.
fn find_riff_wave(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(12)
        .position(|w| &w[..4] == b"RIFF" && &w[8..] == b"WAVE")
}

/// symphonia's probe with the default options: the format reader for `mss`.
fn probe_format<'s>(
    hint: &Hint,
    mss: MediaSourceStream<'s>,
) -> Result<Box<dyn FormatReader + 's>, SymError> {
    symphonia::default::get_probe().probe(
        hint,
        mss,
        FormatOptions::default(),
        MetadataOptions::default(),
    )
}

/// Decodes any supported file and mixes it to mono: `(mono samples, sample rate, channels of
/// the file)`. Kept for callers of the earlier WAV-only API; the decode warning is logged.
///
/// # Errors
///
/// As [`decode_file`].
pub fn decode_wav(path: &Path) -> Result<(Vec<f32>, u32, u16), AudioError> {
    let d = decode_file(path)?;
    if let Some(w) = &d.warning {
        log::warn!("audio file '{}': {w}", path.display());
    }
    let mut mono = Vec::with_capacity(d.frames());
    super::mix_to_mono(&d.samples, usize::from(d.channels), &mut mono);
    Ok((mono, d.sample_rate, d.channels))
}

/// `frames` at `rate` as seconds to three significant digits (two decimals from 1 s up) and
/// the frame count: `"0.005 s (40 frames)"`, `"2.50 s (20000 frames)"`.
fn secs(frames: u64, rate: u32) -> String {
    let s = frames as f64 / f64::from(rate.max(1));
    let text = if s >= 1.0 || s == 0.0 {
        format!("{s:.2}")
    } else {
        let decimals = (2 - s.log10().floor() as i32).clamp(2, 12) as usize;
        let t = format!("{s:.decimals$}");
        t.trim_end_matches('0').to_string()
    };
    let unit = if frames == 1 { "frame" } else { "frames" };
    format!("{text} s ({frames} {unit})")
}

/// One line from a symphonia error.
fn describe(e: &SymError) -> String {
    match e {
        SymError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the file ends before its header does".to_string()
        }
        other => other.to_string().replace('\n', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AudioSelection, AudioSource};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A fresh, unique path in the system temp dir (removed by the `TempFile` guard).
    struct TempFile(PathBuf);
    impl TempFile {
        fn new(stem: &str) -> TempFile {
            static COUNTER: AtomicU32 = AtomicU32::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let name = format!(
                "vizdeck-audio-{}-{}-{n}-{stem}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0)
            );
            TempFile(std::env::temp_dir().join(name))
        }
    }
    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn spec(channels: u16, bits: u16, fmt: hound::SampleFormat) -> hound::WavSpec {
        hound::WavSpec {
            channels,
            sample_rate: 44_100,
            bits_per_sample: bits,
            sample_format: fmt,
        }
    }

    #[test]
    fn round_trip_16_bit_stereo() {
        let f = TempFile::new("s16.wav");
        let mut w = hound::WavWriter::create(&f.0, spec(2, 16, hound::SampleFormat::Int)).unwrap();
        // Frames (L, R): means −1.0, 0.25, (32767 − 16384)/2/32768.
        for s in [i16::MIN, i16::MIN, 8192, 8192, 32767, -16384] {
            w.write_sample(s).unwrap();
        }
        w.finalize().unwrap();
        let (mono, sr, ch) = decode_wav(&f.0).unwrap();
        assert_eq!((sr, ch), (44_100, 2));
        assert_eq!(mono, vec![-1.0, 0.25, 16383.0 / 65536.0]);
    }

    #[test]
    fn round_trip_32_bit_float_mono() {
        let f = TempFile::new("f32.wav");
        let mut w =
            hound::WavWriter::create(&f.0, spec(1, 32, hound::SampleFormat::Float)).unwrap();
        let data = [0.0f32, 0.5, -0.123_456, 1.0, -1.0];
        for s in data {
            w.write_sample(s).unwrap();
        }
        w.finalize().unwrap();
        let (mono, sr, ch) = decode_wav(&f.0).unwrap();
        assert_eq!((sr, ch), (44_100, 1));
        assert_eq!(mono, data.to_vec());
    }

    #[test]
    fn round_trip_8_bit_unsigned() {
        let f = TempFile::new("u8.wav");
        let mut w = hound::WavWriter::create(&f.0, spec(1, 8, hound::SampleFormat::Int)).unwrap();
        // hound takes signed values and stores them as unsigned bytes (x + 128).
        for s in [-128i8, 0, 64, 127] {
            w.write_sample(s).unwrap();
        }
        w.finalize().unwrap();
        let raw = std::fs::read(&f.0).unwrap();
        assert_eq!(
            &raw[raw.len() - 4..],
            &[0u8, 128, 192, 255],
            "stored unsigned"
        );
        let (mono, _, _) = decode_wav(&f.0).unwrap();
        assert_eq!(mono, vec![-1.0, 0.0, 0.5, 127.0 / 128.0]);
    }

    #[test]
    fn round_trip_24_bit() {
        let f = TempFile::new("s24.wav");
        let mut w = hound::WavWriter::create(&f.0, spec(1, 24, hound::SampleFormat::Int)).unwrap();
        for s in [-(1i32 << 23), 1 << 22, (1 << 23) - 1] {
            w.write_sample(s).unwrap();
        }
        w.finalize().unwrap();
        let (mono, _, _) = decode_wav(&f.0).unwrap();
        assert_eq!(
            mono,
            vec![-1.0, 0.5, ((1 << 23) - 1) as f32 / (1 << 23) as f32]
        );
    }

    #[test]
    fn missing_file_names_the_path() {
        let f = TempFile::new("missing.wav");
        let err = decode_wav(&f.0).unwrap_err();
        assert!(matches!(err, AudioError::FileNotFound { .. }));
        let msg = err.to_string();
        assert_eq!(msg, format!("audio file '{}': no such file", f.0.display()));
        // Through AudioSource::open too.
        let err = AudioSource::open(&AudioSelection::File(f.0.clone()), 1024).unwrap_err();
        assert!(err.to_string().contains(&*f.0.to_string_lossy()));
    }

    #[test]
    fn non_audio_and_empty_and_broken_files() {
        let f = TempFile::new("text.wav");
        std::fs::write(&f.0, b"this is not audio at all").unwrap();
        let err = decode_wav(&f.0).unwrap_err();
        assert!(matches!(err, AudioError::UnsupportedFormat { .. }), "{err}");
        assert!(
            err.to_string().starts_with(&format!(
                "audio file '{}': unsupported or unrecognised format",
                f.0.display()
            )),
            "{err}"
        );

        let e = TempFile::new("empty.wav");
        std::fs::write(&e.0, b"").unwrap();
        let err = decode_wav(&e.0).unwrap_err();
        assert!(matches!(err, AudioError::EmptyFile { .. }), "{err}");
        assert!(err.to_string().contains(&*e.0.to_string_lossy()));

        for (name, bytes) in [
            ("tiny.wav", &b"RI"[..]),
            ("header-only.wav", &b"RIFF\x24\x00\x00\x00WAVEfmt "[..]),
        ] {
            let t = TempFile::new(name);
            std::fs::write(&t.0, bytes).unwrap();
            let err = decode_wav(&t.0).unwrap_err();
            assert!(err.to_string().contains(&*t.0.to_string_lossy()), "{err}");
            assert!(!err.to_string().contains('\n'), "{err}");
        }

        let d = std::env::temp_dir();
        let err = decode_wav(&d).unwrap_err();
        assert!(matches!(err, AudioError::FileRead { .. }), "{err}");
    }

    /// A minimal canonical WAV header + data, with fields we choose (to forge bad headers).
    fn forge(channels: u16, sample_rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
        let block_align = channels * bits.div_ceil(8);
        let mut v = Vec::new();
        v.extend_from_slice(b"RIFF");
        v.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
        v.extend_from_slice(b"WAVEfmt ");
        v.extend_from_slice(&16u32.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes()); // PCM
        v.extend_from_slice(&channels.to_le_bytes());
        v.extend_from_slice(&sample_rate.to_le_bytes());
        v.extend_from_slice(&(sample_rate * u32::from(block_align)).to_le_bytes());
        v.extend_from_slice(&block_align.to_le_bytes());
        v.extend_from_slice(&bits.to_le_bytes());
        v.extend_from_slice(b"data");
        v.extend_from_slice(&(data.len() as u32).to_le_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn bad_headers_are_errors_not_panics() {
        for (name, bytes) in [
            ("zero-ch.wav", forge(0, 44_100, 16, &[0, 0])),
            ("zero-sr.wav", forge(1, 0, 16, &[0, 0])),
            ("no-data.wav", forge(1, 44_100, 16, &[])),
        ] {
            let f = TempFile::new(name);
            std::fs::write(&f.0, &bytes).unwrap();
            let err = decode_file(&f.0).unwrap_err();
            eprintln!("{name}: {err}");
            assert!(err.to_string().contains(&*f.0.to_string_lossy()), "{err}");
        }
        // The forger itself makes valid files.
        let f = TempFile::new("ok.wav");
        std::fs::write(&f.0, forge(1, 8000, 16, &[0x00, 0x40])).unwrap();
        assert_eq!(decode_wav(&f.0).unwrap(), (vec![0.5], 8000, 1));
        let d = decode_file(&f.0).unwrap();
        assert!(d.warning.is_none(), "{:?}", d.warning);
    }

    #[test]
    fn truncated_and_odd_files_play_what_decodes_with_a_warning() {
        // Header declares 200 samples; the file stops after 8 of them.
        let mut v = forge(1, 8000, 16, &[0u8; 400]);
        v.truncate(44 + 16);
        let f = TempFile::new("truncated.wav");
        std::fs::write(&f.0, &v).unwrap();
        let d = decode_file(&f.0).unwrap();
        assert_eq!(d.frames(), 8);
        let w = d.warning.expect("a warning");
        assert!(w.contains("truncated"), "{w}");
        assert!(w.ends_with("playing what was decoded"), "{w}");
        // The warning reaches the source.
        let src = AudioSource::open(&AudioSelection::File(f.0.clone()), 1024).unwrap();
        assert!(src.warning().is_some());

        // 3 bytes of 16-bit data: one whole sample, half a sample.
        let f = TempFile::new("odd-len.wav");
        std::fs::write(&f.0, forge(1, 8000, 16, &[0x00, 0x40, 0x7f])).unwrap();
        let d = decode_file(&f.0).unwrap();
        assert_eq!(d.samples, vec![0.5]);
    }

    #[test]
    fn file_source_plays_at_real_time_rate_and_finishes() {
        let f = TempFile::new("ramp.wav");
        let sr = 8000u32;
        let mut w = hound::WavWriter::create(
            &f.0,
            hound::WavSpec {
                channels: 1,
                sample_rate: sr,
                bits_per_sample: 16,
                sample_format: hound::SampleFormat::Int,
            },
        )
        .unwrap();
        // 10 000 samples = 1.25 s; value i → i/32768 so positions can be checked.
        for i in 0..10_000i16 {
            w.write_sample(i).unwrap();
        }
        w.finalize().unwrap();
        let mut src = AudioSource::open(&AudioSelection::File(f.0.clone()), 1 << 16).unwrap();
        assert_eq!(src.kind(), "file");
        assert_eq!(src.sample_rate(), sr);
        assert_eq!(
            src.label(),
            format!("file: {} (8000 Hz, 1 ch)", f.0.display())
        );
        let mut got = Vec::new();
        for (t, total) in [
            (0.0001, 0usize),
            (0.00013, 1),
            (0.5, 4000),
            (1.0000999, 8000),
        ] {
            src.advance_to(t);
            src.drain_into(&mut got);
            assert_eq!(got.len(), total, "t = {t}");
            assert!(!src.finished());
        }
        src.advance_to(100.0);
        src.drain_into(&mut got);
        assert_eq!(got.len(), 10_000, "capped at file end");
        assert!(src.finished());
        for (i, v) in got.iter().enumerate() {
            assert_eq!(*v, i as f32 / 32768.0);
        }
        assert_eq!(src.dropped(), 0);

        // Looping: sample i of the stream is file sample i mod 10 000.
        let mut looped = AudioSource::open(&AudioSelection::File(f.0.clone()), 1 << 16).unwrap();
        looped.set_looping(true);
        looped.advance_to(2.0); // 16 000 samples
        let mut v = Vec::new();
        looped.drain_into(&mut v);
        assert_eq!(v.len(), 16_000);
        assert_eq!(v[10_000], 0.0);
        assert_eq!(v[15_999], 5999.0 / 32768.0);
        assert!(!looped.finished());
    }
}
