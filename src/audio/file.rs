//! WAV files, decoded fully up front with `hound` and mixed to mono `f32`.
//!
//! Supported encodings: PCM integer of 8 bits (stored unsigned, centred by `hound`), 16, 24 and
//! 32 bits (and other whole-byte depths up to 32 that `hound` reads), and IEEE float of 32 bits.
//! Integers become `s / 2^(bits−1)` (so the most negative code reads −1.0); floats pass through.
//! Channels are averaged per frame ([`super::mix_to_mono`]).

use std::io::Read;
use std::path::Path;

use super::AudioError;

/// Decodes the WAV file at `path`.
///
/// Returns `(mono samples in [-1, 1], sample rate in Hz, channel count of the file)`; the samples
/// are the per-frame mean of the channels, one per frame.
///
/// # Errors
///
/// Each naming the path: [`AudioError::FileNotFound`], [`AudioError::FileRead`],
/// [`AudioError::EmptyFile`], [`AudioError::NotWav`] (no `RIFF` tag),
/// [`AudioError::InvalidWav`] (malformed or truncated), [`AudioError::UnsupportedWav`] (e.g.
/// 64-bit float), [`AudioError::ZeroChannels`], [`AudioError::ZeroSampleRate`],
/// [`AudioError::NoSamples`].
pub fn decode_wav(path: &Path) -> Result<(Vec<f32>, u32, u16), AudioError> {
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
    let file_len = meta.len();
    if file_len == 0 {
        return Err(AudioError::EmptyFile { path: p() });
    }
    // Check the tag ourselves so that a non-WAV file gets a plain message.
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match file.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(read_err(e)),
        }
    }
    if got < 4 || &magic != b"RIFF" {
        return Err(AudioError::NotWav { path: p() });
    }
    drop(file);

    let invalid = |e: hound::Error| match e {
        hound::Error::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            AudioError::InvalidWav {
                path: p(),
                reason: "file is truncated (ends before its header or data chunk does)".to_string(),
            }
        }
        hound::Error::FormatError("file contains zero channels") => {
            AudioError::ZeroChannels { path: p() }
        }
        hound::Error::Unsupported | hound::Error::TooWide => AudioError::UnsupportedWav {
            path: p(),
            reason: e.to_string(),
        },
        other => AudioError::InvalidWav {
            path: p(),
            reason: other.to_string(),
        },
    };
    let reader = hound::WavReader::open(path).map_err(invalid)?;
    let spec = reader.spec();
    if spec.channels == 0 {
        return Err(AudioError::ZeroChannels { path: p() });
    }
    if spec.sample_rate == 0 {
        return Err(AudioError::ZeroSampleRate { path: p() });
    }
    let channels = usize::from(spec.channels);
    let total = reader.len() as usize;
    if total < channels {
        return Err(AudioError::NoSamples { path: p() });
    }
    // The header's sample count is not trusted for the allocation: cap it by what the file can hold.
    let bytes_per_sample = usize::from(spec.bits_per_sample.div_ceil(8)).max(1);
    let plausible = (file_len as usize / bytes_per_sample).min(total);
    let mut interleaved: Vec<f32> = Vec::with_capacity(plausible);

    match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => {
            for s in reader.into_samples::<f32>() {
                interleaved.push(s.map_err(invalid)?);
            }
        }
        (hound::SampleFormat::Int, bits @ 1..=32) => {
            let scale = 1.0 / (1u64 << (bits - 1)) as f64;
            for s in reader.into_samples::<i32>() {
                interleaved.push((f64::from(s.map_err(invalid)?) * scale) as f32);
            }
        }
        (fmt, bits) => {
            return Err(AudioError::UnsupportedWav {
                path: p(),
                reason: format!(
                    "{bits}-bit {}",
                    match fmt {
                        hound::SampleFormat::Float => "float",
                        hound::SampleFormat::Int => "integer",
                    }
                ),
            });
        }
    }

    let mut mono = Vec::with_capacity(interleaved.len() / channels);
    super::mix_to_mono(&interleaved, channels, &mut mono);
    if mono.is_empty() {
        return Err(AudioError::NoSamples { path: p() });
    }
    Ok((mono, spec.sample_rate, spec.channels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::{AudioSelection, AudioSource};
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
    fn non_wav_and_empty_and_broken_files() {
        let f = TempFile::new("text.wav");
        std::fs::write(&f.0, b"this is not audio at all").unwrap();
        let err = decode_wav(&f.0).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "audio file '{}': not a WAV file (RIFF header missing)",
                f.0.display()
            )
        );

        let e = TempFile::new("empty.wav");
        std::fs::write(&e.0, b"").unwrap();
        let err = decode_wav(&e.0).unwrap_err();
        assert!(matches!(err, AudioError::EmptyFile { .. }), "{err}");
        assert!(err.to_string().contains(&*e.0.to_string_lossy()));

        let t = TempFile::new("tiny.wav");
        std::fs::write(&t.0, b"RI").unwrap();
        assert!(matches!(
            decode_wav(&t.0).unwrap_err(),
            AudioError::NotWav { .. }
        ));

        let h = TempFile::new("header-only.wav");
        std::fs::write(&h.0, b"RIFF\x24\x00\x00\x00WAVEfmt ").unwrap();
        let err = decode_wav(&h.0).unwrap_err();
        assert!(matches!(err, AudioError::InvalidWav { .. }), "{err}");

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
        type Case = (&'static str, Vec<u8>, fn(&AudioError) -> bool);
        let cases: [Case; 5] = [
            ("zero-ch.wav", forge(0, 44_100, 16, &[0, 0]), |e| {
                matches!(e, AudioError::ZeroChannels { .. })
            }),
            ("zero-sr.wav", forge(1, 0, 16, &[0, 0]), |e| {
                matches!(e, AudioError::ZeroSampleRate { .. })
            }),
            ("no-data.wav", forge(1, 44_100, 16, &[]), |e| {
                matches!(e, AudioError::NoSamples { .. })
            }),
            ("odd-len.wav", forge(1, 44_100, 16, &[0, 0, 0]), |e| {
                matches!(e, AudioError::InvalidWav { .. })
            }),
            (
                "truncated.wav",
                {
                    let mut v = forge(1, 44_100, 16, &[0u8; 400]);
                    v.truncate(60);
                    v
                },
                |e| matches!(e, AudioError::InvalidWav { .. }),
            ),
        ];
        for (name, bytes, check) in cases {
            let f = TempFile::new(name);
            std::fs::write(&f.0, &bytes).unwrap();
            let err = decode_wav(&f.0).unwrap_err();
            assert!(check(&err), "{name}: {err}");
            assert!(err.to_string().contains(&*f.0.to_string_lossy()), "{err}");
        }
        // The forger itself makes valid files.
        let f = TempFile::new("ok.wav");
        std::fs::write(&f.0, forge(1, 8000, 16, &[0x00, 0x40])).unwrap();
        assert_eq!(decode_wav(&f.0).unwrap(), (vec![0.5], 8000, 1));
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
