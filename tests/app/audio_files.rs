//! Audio files through symphonia: every common WAV variant (bytes written here), FLAC, Ogg Vorbis
//! and MP3 (made with `sox` from those bytes), at 8, 44.1, 48 and 96 kHz, mono and stereo. Each
//! must decode to a tone at the right frequency and level (read with the window's ENBW, so the
//! level does not depend on where the tone falls between bins), on the channel it was written to.
//!
//! `sox` is installed by `cargo xtask` (package `sox`); MP3 needs sox's MP3 handler
//! (`libsox-fmt-mp3`) or `lame`. A missing tool fails the test with a message saying what to
//! install.

use std::f64::consts::TAU;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use vizdeck::audio::stft::{DB_FLOOR, Stft, dominant};
use vizdeck::audio::{
    AudioError, AudioOptions, AudioSelection, AudioSource, ChannelChoice, file::decode_file,
};

/// Tone written to the left (or only) channel.
const LEFT: (f64, f64) = (1000.0, 0.5);
/// Tone written to the right channel of stereo files.
const RIGHT: (f64, f64) = (2500.0, 0.25);
const RATES: [u32; 4] = [8000, 44_100, 48_000, 96_000];

fn db(a: f64) -> f64 {
    20.0 * a.log10()
}

/// A unique temp path, removed on drop.
struct Temp(PathBuf);
impl Temp {
    fn new(name: &str) -> Temp {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("vizdeck-files-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Temp(dir.join(name))
    }
}
impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(d) = self.0.parent() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// How samples are stored in the WAV.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Enc {
    U8,
    S16,
    S24,
    S32,
    F32,
    F64,
    /// WAVE_FORMAT_EXTENSIBLE, PCM sub-format, 24 valid bits in 24-bit containers.
    ExtS24,
    /// WAVE_FORMAT_EXTENSIBLE, PCM sub-format, 24 valid bits in 32-bit containers.
    ExtS24In32,
    /// WAVE_FORMAT_EXTENSIBLE, IEEE float sub-format, 32 bits.
    ExtF32,
}

const ALL_ENC: [Enc; 9] = [
    Enc::U8,
    Enc::S16,
    Enc::S24,
    Enc::S32,
    Enc::F32,
    Enc::F64,
    Enc::ExtS24,
    Enc::ExtS24In32,
    Enc::ExtF32,
];

/// Interleaved test signal: LEFT on channel 0, RIGHT on channel 1 (stereo only).
fn signal(rate: u32, channels: u16, frames: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(frames * usize::from(channels));
    for i in 0..frames {
        let t = i as f64 / f64::from(rate);
        v.push(LEFT.1 * (TAU * LEFT.0 * t).sin());
        if channels == 2 {
            v.push(RIGHT.1 * (TAU * RIGHT.0 * t + 0.3).sin());
        }
    }
    v
}

/// `round(s · 2^(bits−1))` clamped to the signed range of `bits`.
fn int(s: f64, bits: u32) -> i64 {
    let full = (1i64 << (bits - 1)) as f64;
    (s * full).round().clamp(-full, full - 1.0) as i64
}

/// WAV bytes written by hand (RIFF/WAVE, `fmt ` + `data`), so each header variant is exact.
fn wav_bytes(enc: Enc, rate: u32, channels: u16, x: &[f64]) -> Vec<u8> {
    wav_bytes_with(enc, rate, channels, x, |_| ())
}

/// [`wav_bytes`] with the `fmt ` chunk body edited by `edit_fmt` before it is written (its size
/// field follows the edited length).
fn wav_bytes_with(
    enc: Enc,
    rate: u32,
    channels: u16,
    x: &[f64],
    edit_fmt: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let (tag, container, valid, float) = match enc {
        Enc::U8 => (1u16, 8u16, 8u16, false),
        Enc::S16 => (1, 16, 16, false),
        Enc::S24 => (1, 24, 24, false),
        Enc::S32 => (1, 32, 32, false),
        Enc::F32 => (3, 32, 32, true),
        Enc::F64 => (3, 64, 64, true),
        Enc::ExtS24 => (0xFFFE, 24, 24, false),
        Enc::ExtS24In32 => (0xFFFE, 32, 24, false),
        Enc::ExtF32 => (0xFFFE, 32, 32, true),
    };
    let mut data = Vec::new();
    for &s in x {
        match enc {
            // Integers: code = round(s · 2^(bits−1)), clamped (the decoder divides by 2^(bits−1)).
            Enc::U8 => data.push((int(s, 8) + 128) as u8),
            Enc::S16 => data.extend_from_slice(&(int(s, 16) as i16).to_le_bytes()),
            Enc::S24 | Enc::ExtS24 => {
                data.extend_from_slice(&(int(s, 24) as i32).to_le_bytes()[..3])
            }
            Enc::ExtS24In32 => {
                // 24 valid bits, left-justified in the 32-bit container (low byte zero).
                let v = (int(s, 24) as i32) << 8;
                data.extend_from_slice(&v.to_le_bytes());
            }
            Enc::S32 => data.extend_from_slice(&(int(s, 32) as i32).to_le_bytes()),
            Enc::F32 | Enc::ExtF32 => data.extend_from_slice(&(s as f32).to_le_bytes()),
            Enc::F64 => data.extend_from_slice(&s.to_le_bytes()),
        }
    }
    let block_align = channels * container / 8;
    let mut fmt = Vec::new();
    fmt.extend_from_slice(&tag.to_le_bytes());
    fmt.extend_from_slice(&channels.to_le_bytes());
    fmt.extend_from_slice(&rate.to_le_bytes());
    fmt.extend_from_slice(&(rate * u32::from(block_align)).to_le_bytes());
    fmt.extend_from_slice(&block_align.to_le_bytes());
    fmt.extend_from_slice(&container.to_le_bytes());
    if tag == 0xFFFE {
        fmt.extend_from_slice(&22u16.to_le_bytes()); // cbSize
        fmt.extend_from_slice(&valid.to_le_bytes());
        let mask: u32 = if channels == 2 { 0x3 } else { 0x4 }; // FL|FR, or FC
        fmt.extend_from_slice(&mask.to_le_bytes());
        // KSDATAFORMAT_SUBTYPE_PCM / _IEEE_FLOAT: {0000000X-0000-0010-8000-00AA00389B71}
        let sub: u32 = if float { 3 } else { 1 };
        fmt.extend_from_slice(&sub.to_le_bytes());
        fmt.extend_from_slice(&[
            0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
        ]);
    } else if float {
        fmt.extend_from_slice(&0u16.to_le_bytes()); // cbSize for WAVE_FORMAT_IEEE_FLOAT
    }
    edit_fmt(&mut fmt);
    let mut v = Vec::new();
    v.extend_from_slice(b"RIFF");
    let riff_len = 4 + 8 + fmt.len() + 8 + data.len() + (data.len() & 1);
    v.extend_from_slice(&(riff_len as u32).to_le_bytes());
    v.extend_from_slice(b"WAVE");
    v.extend_from_slice(b"fmt ");
    v.extend_from_slice(&(fmt.len() as u32).to_le_bytes());
    v.extend_from_slice(&fmt);
    v.extend_from_slice(b"data");
    v.extend_from_slice(&(data.len() as u32).to_le_bytes());
    v.extend_from_slice(&data);
    if data.len() & 1 == 1 {
        v.push(0);
    }
    v
}

/// Opens `path` with `channel`, reads all of it in fast mode, and returns the mono samples.
fn read_all(path: &Path, channel: ChannelChoice) -> (Vec<f32>, u32) {
    let opts = AudioOptions {
        channel,
        ..AudioOptions::default()
    };
    let mut src = AudioSource::open_with(&AudioSelection::File(path.into()), 1 << 22, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(src.warning().is_none(), "{:?}", src.warning());
    src.set_fast(true);
    src.advance_to(0.001);
    let mut out = Vec::new();
    src.drain_into(&mut out);
    assert!(src.finished());
    assert_eq!(src.dropped(), 0);
    (out, src.sample_rate())
}

/// Level (dBFS, ENBW-normalised) and frequency (Hz) of the tone nearest `hz`, averaged over the
/// STFT columns of `x` (Hann, N = 4096 or less for short signals).
fn tone_at(x: &[f32], rate: u32, hz: f64) -> (f64, f64) {
    let n = 4096;
    let mut stft = Stft::new(n, n / 2).unwrap();
    // Skip the first 2048 samples (lossy encoders' start-up transient).
    stft.push(&x[2048.min(x.len())..]);
    let mut col = vec![0.0; stft.bins()];
    let mut power = vec![0.0f64; stft.bins()];
    let mut cols = 0;
    while stft.pop_column(&mut col) {
        for (p, &d) in power.iter_mut().zip(&col) {
            *p += 10f64.powf(f64::from(d) / 10.0);
        }
        cols += 1;
    }
    assert!(cols > 0, "too short");
    let mean: Vec<f32> = power
        .iter()
        .map(|p| (10.0 * (p / f64::from(cols)).log10()) as f32)
        .collect();
    let bin_hz = f64::from(rate) / n as f64;
    let k0 = (hz / bin_hz).round() as usize;
    // Strongest bin within ±2 bins of the expected one.
    let (k, _) = (k0 - 2..=k0 + 2)
        .map(|k| (k, mean[k]))
        .fold((k0, f32::MIN), |b, (k, v)| if v > b.1 { (k, v) } else { b });
    (f64::from(stft.tone_level_db(&mean, k)), k as f64 * bin_hz)
}

/// Checks the decoded tones. `tol_db`: level tolerance; the frequency must be within one bin.
fn check(path: &Path, channels: u16, tol_db: f64, what: &str) {
    let bin = |rate: u32| f64::from(rate) / 4096.0;
    if channels == 1 {
        let (x, rate) = read_all(path, ChannelChoice::Mix);
        let (level, hz) = tone_at(&x, rate, LEFT.0);
        eprintln!("{what}: {level:.3} dBFS at {hz:.1} Hz");
        assert!((hz - LEFT.0).abs() <= bin(rate), "{what}: peak at {hz} Hz");
        assert!(
            (level - db(LEFT.1)).abs() <= tol_db,
            "{what}: level {level:.3} dBFS, expected {:.3}",
            db(LEFT.1)
        );
        let (dominant_bin, _) = {
            let mut s = Stft::new(4096, 4096).unwrap();
            s.push(&x[..4096.min(x.len())]);
            let mut c = vec![DB_FLOOR; s.bins()];
            s.pop_column(&mut c);
            dominant(&c)
        };
        assert!(
            (dominant_bin as f64 * bin(rate) - LEFT.0).abs() <= bin(rate),
            "{what}"
        );
        return;
    }
    // Left only: the 1 kHz tone at its level, the right tone far below.
    let (x, rate) = read_all(path, ChannelChoice::Channel(0));
    let (level, hz) = tone_at(&x, rate, LEFT.0);
    eprintln!("{what}: left {level:.3} dBFS at {hz:.1} Hz");
    assert!((hz - LEFT.0).abs() <= bin(rate), "{what} left: {hz} Hz");
    assert!(
        (level - db(LEFT.1)).abs() <= tol_db,
        "{what} left: {level:.3}"
    );
    let (other, _) = tone_at(&x, rate, RIGHT.0);
    assert!(
        other < -60.0,
        "{what} left: right tone leaks at {other:.1} dB"
    );
    // Right only.
    let (x, rate) = read_all(path, ChannelChoice::Channel(1));
    let (level, hz) = tone_at(&x, rate, RIGHT.0);
    assert!((hz - RIGHT.0).abs() <= bin(rate), "{what} right: {hz} Hz");
    assert!(
        (level - db(RIGHT.1)).abs() <= tol_db,
        "{what} right: {level:.3}"
    );
    let (other, _) = tone_at(&x, rate, LEFT.0);
    assert!(
        other < -60.0,
        "{what} right: left tone leaks at {other:.1} dB"
    );
    // Mix: each tone 6.02 dB below its own channel.
    let (x, rate) = read_all(path, ChannelChoice::Mix);
    let (l, _) = tone_at(&x, rate, LEFT.0);
    let (r, _) = tone_at(&x, rate, RIGHT.0);
    assert!(
        (l - (db(LEFT.1) - db(2.0))).abs() <= tol_db,
        "{what} mix: {l:.3}"
    );
    assert!(
        (r - (db(RIGHT.1) - db(2.0))).abs() <= tol_db,
        "{what} mix: {r:.3}"
    );
}

#[test]
fn wav_every_variant_rate_and_layout() {
    for enc in ALL_ENC {
        for rate in RATES {
            for channels in [1u16, 2] {
                let t = Temp::new("tone.wav");
                let frames = rate as usize / 2 + 4096; // ≥ 0.5 s
                std::fs::write(
                    &t.0,
                    wav_bytes(enc, rate, channels, &signal(rate, channels, frames)),
                )
                .unwrap();
                let d = decode_file(&t.0).unwrap_or_else(|e| panic!("{enc:?}: {e}"));
                assert_eq!((d.sample_rate, d.channels), (rate, channels), "{enc:?}");
                assert_eq!(d.frames(), frames, "{enc:?}");
                assert!(d.warning.is_none(), "{enc:?}: {:?}", d.warning);
                // 8-bit: quantisation noise (step 1/128) is ~45 dB below the tones; 0.05 dB
                // covers it. The others are exact to f32 rounding.
                let tol = if enc == Enc::U8 { 0.05 } else { 0.01 };
                check(
                    &t.0,
                    channels,
                    tol,
                    &format!("{enc:?} {rate} Hz {channels} ch"),
                );
            }
        }
    }
}

#[test]
fn wav_sample_values_convert_exactly() {
    // Full-scale codes of every integer width and both float widths.
    let cases: [(Enc, &[f64], &[f32]); 4] = [
        (Enc::U8, &[-1.0, 0.0, 1.0], &[-1.0, 0.0, 127.0 / 128.0]),
        (Enc::S16, &[-1.0, 0.5, 1.0], &[-1.0, 0.5, 32767.0 / 32768.0]),
        (
            Enc::F64,
            &[0.123_456_789, -1.0],
            &[0.123_456_789_f64 as f32, -1.0],
        ),
        (Enc::ExtS24In32, &[-1.0, 0.25], &[-1.0, 0.25]),
    ];
    for (enc, x, expected) in cases {
        let t = Temp::new("codes.wav");
        std::fs::write(&t.0, wav_bytes(enc, 8000, 1, x)).unwrap();
        let d = decode_file(&t.0).unwrap();
        assert_eq!(d.samples, expected, "{enc:?}");
    }
}

/// `sox`'s list of file formats, or a panic saying to install it.
fn sox_formats() -> Vec<String> {
    let out = Command::new("sox")
        .arg("-h")
        .output()
        .unwrap_or_else(|e| panic!("sox is needed to make FLAC/Ogg/MP3 test files (apt-get install sox, or run `cargo xtask test`): {e}"));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.lines()
        .find_map(|l| l.strip_prefix("AUDIO FILE FORMATS:"))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Encodes `wav` to `out` with sox (or lame for MP3 when sox lacks it).
fn encode(wav: &Path, out: &Path, ext: &str) {
    let formats = sox_formats();
    let status = if formats.iter().any(|f| f == ext) {
        Command::new("sox").arg(wav).arg(out).status()
    } else if ext == "mp3" {
        Command::new("lame")
            .args(["--quiet", "-b", "128"])
            .arg(wav)
            .arg(out)
            .status()
            .map_err(|e| {
                panic!(
                    "no MP3 encoder: sox lacks mp3 (apt-get install libsox-fmt-mp3) and lame \
                     cannot run ({e}); install one of them"
                )
            })
    } else {
        panic!("sox lacks the '{ext}' format (sox -h lists: {formats:?}); install libsox-fmt-all");
    };
    let status = status.unwrap_or_else(|e| panic!("cannot run the encoder: {e}"));
    assert!(status.success(), "encoding {} failed", out.display());
}

fn lossy_case(ext: &str, rates: &[u32], tol_db: f64) {
    for &rate in rates {
        for channels in [1u16, 2] {
            let wav = Temp::new("src.wav");
            let frames = rate as usize; // 1 s
            std::fs::write(
                &wav.0,
                wav_bytes(Enc::S16, rate, channels, &signal(rate, channels, frames)),
            )
            .unwrap();
            let out = wav.0.with_extension(ext);
            encode(&wav.0, &out, ext);
            let d = decode_file(&out).unwrap_or_else(|e| panic!("{ext} {rate}: {e}"));
            assert_eq!((d.sample_rate, d.channels), (rate, channels), "{ext}");
            // A whole file is not called truncated (a sox MP3 declares one packet more than a
            // decoder yields after trimming delay and padding).
            assert!(
                !d.warning.as_deref().unwrap_or("").contains("truncated"),
                "{ext} {rate} Hz: {:?}",
                d.warning
            );
            // Gapless formats keep the length; MP3 without a LAME tag may add padding.
            let len_tol = if ext == "mp3" { 2 * 1152 + 576 } else { 0 };
            assert!(
                d.frames().abs_diff(frames) <= len_tol,
                "{ext} {rate} Hz: {} frames, wrote {frames}",
                d.frames()
            );
            check(
                &out,
                channels,
                tol_db,
                &format!("{ext} {rate} Hz {channels} ch"),
            );
            if ext != "flac" {
                // Against an independent decoder (sox: libvorbis / libmad, or lame --decode):
                // the same level to 0.05 dB, so any offset is the encoder's, not ours.
                let reference = wav.0.with_file_name("reference.wav");
                let ok = if sox_formats().iter().any(|f| f == ext) {
                    Command::new("sox")
                        .arg(&out)
                        .args(["-e", "floating-point", "-b", "32"])
                        .arg(&reference)
                        .status()
                } else {
                    Command::new("lame")
                        .args(["--quiet", "--decode"])
                        .arg(&out)
                        .arg(&reference)
                        .status()
                };
                assert!(ok.is_ok_and(|s| s.success()), "reference decode of {ext}");
                let (ours, r1) = read_all(&out, ChannelChoice::Channel(0));
                let (theirs, r2) = read_all(&reference, ChannelChoice::Channel(0));
                assert_eq!(r1, r2);
                let (a, _) = tone_at(&ours, r1, LEFT.0);
                let (b, _) = tone_at(&theirs, r2, LEFT.0);
                assert!(
                    (a - b).abs() <= 0.05,
                    "{ext} {rate} Hz: ours {a:.3}, reference decoder {b:.3}"
                );
            }
        }
    }
}

#[test]
fn flac_at_every_rate() {
    // Lossless: the 16-bit source decodes exactly.
    lossy_case("flac", &RATES, 0.01);
}

#[test]
fn ogg_vorbis_at_every_rate() {
    // Vorbis (sox default quality 3) codes a steady tone well above its masking threshold; the
    // level of a −6 dBFS sine moves by a few hundredths of a dB. 0.3 dB leaves margin for the
    // 8 kHz mode's coarser quantisation, and is still 5× tighter than Hann scalloping.
    lossy_case("ogg", &RATES, 0.3);
}

#[test]
fn mp3_at_its_rates() {
    // MPEG-1/2/2.5 Layer III has no 96 kHz mode (its highest rate is 48 kHz), so 96 kHz is not
    // tested. LAME 3.100 (through sox or alone) writes this −6.02 dBFS sine 0.44 dB low at every
    // rate — libmad decodes the same files to the same level, which the reference comparison in
    // `lossy_case` checks to 0.05 dB — so the absolute tolerance is 0.6 dB.
    lossy_case("mp3", &[8000, 44_100, 48_000], 0.6);
}

#[test]
fn tiny_files_do_not_panic_and_give_finite_columns() {
    for frames in [0usize, 1, 4095] {
        let t = Temp::new("tiny.wav");
        std::fs::write(
            &t.0,
            wav_bytes(Enc::S16, 48_000, 1, &signal(48_000, 1, frames)),
        )
        .unwrap();
        match AudioSource::open(&AudioSelection::File(t.0.clone()), 1 << 16) {
            Err(e) => {
                assert_eq!(frames, 0, "{e}");
                assert!(matches!(e, AudioError::NoSamples { .. }), "{e}");
                assert!(e.to_string().contains(&*t.0.to_string_lossy()));
            }
            Ok(mut src) => {
                src.advance_to(10.0);
                let mut x = Vec::new();
                src.drain_into(&mut x);
                assert_eq!(x.len(), frames);
                assert!(src.finished());
                // FFT 4096 on 4095 samples: no column yet; padding with one more makes one.
                let mut s = Stft::new(4096, 1024).unwrap();
                s.push(&x);
                let mut col = vec![0.0; s.bins()];
                assert!(!s.pop_column(&mut col));
                s.push(&[0.0]);
                if frames == 4095 {
                    assert!(s.pop_column(&mut col));
                    assert!(col.iter().all(|v| v.is_finite()));
                }
            }
        }
    }
}

#[test]
fn garbage_and_damaged_files() {
    // Not audio at all: an error naming the file.
    let t = Temp::new("noise.mp3");
    let junk: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&t.0, &junk).unwrap();
    let err = decode_file(&t.0).unwrap_err();
    assert!(err.to_string().contains(&*t.0.to_string_lossy()), "{err}");
    assert!(!err.to_string().contains('\n'));

    // Files cut in half: the first half plays (FLAC and WAV say so in a warning). 10 s, so that
    // half of the Ogg file is well past its Vorbis setup header.
    let wav = Temp::new("src.wav");
    std::fs::write(
        &wav.0,
        wav_bytes(Enc::S16, 48_000, 1, &signal(48_000, 1, 480_000)),
    )
    .unwrap();
    for ext in ["flac", "ogg", "mp3"] {
        let full = wav.0.with_extension(ext);
        encode(&wav.0, &full, ext);
        let mut bytes = std::fs::read(&full).unwrap();
        bytes.truncate(bytes.len() / 2);
        let cut = wav.0.with_file_name(format!("cut.{ext}"));
        std::fs::write(&cut, &bytes).unwrap();
        let src = AudioSource::open(&AudioSelection::File(cut.clone()), 1 << 16)
            .unwrap_or_else(|e| panic!("{ext}: {e}"));
        let dur = src.duration_s().unwrap();
        assert!(dur > 3.0 && dur < 7.0, "{ext}: {dur} s");
        let d = decode_file(&cut).unwrap();
        let (level, hz) = tone_at(&d.samples, 48_000, LEFT.0);
        assert!(
            (hz - LEFT.0).abs() < 12.0 && (level - db(LEFT.1)).abs() < 0.6,
            "{ext}: {level} dB at {hz} Hz"
        );
        eprintln!("{ext} cut in half: {dur:.3} s, warning {:?}", src.warning());
        if ext == "flac" {
            // The STREAMINFO header declares 2 s: the shortfall is reported.
            assert!(
                src.warning().is_some_and(|w| w.contains("truncated")),
                "{:?}",
                src.warning()
            );
        }
    }
    let mut bytes = std::fs::read(&wav.0).unwrap();
    let n = bytes.len();
    bytes.truncate(n - n / 4);
    std::fs::write(&wav.0, &bytes).unwrap();
    let d = decode_file(&wav.0).unwrap();
    assert!(
        d.warning
            .as_deref()
            .is_some_and(|w| w.contains("truncated")),
        "{:?}",
        d.warning
    );
    assert!(
        d.frames() > 359_000 && d.frames() < 361_000,
        "{}",
        d.frames()
    );
}

#[test]
fn missing_channel_is_an_error_naming_the_file() {
    let t = Temp::new("mono.wav");
    std::fs::write(&t.0, wav_bytes(Enc::S16, 8000, 1, &signal(8000, 1, 100))).unwrap();
    let opts = AudioOptions {
        channel: ChannelChoice::Channel(1),
        ..AudioOptions::default()
    };
    let err = AudioSource::open_with(&AudioSelection::File(t.0.clone()), 1024, &opts).unwrap_err();
    assert!(
        matches!(
            err,
            AudioError::InvalidChannel {
                channel: 2,
                channels: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(&*t.0.to_string_lossy()), "{err}");
}

/// Byte offset of the first `tag` in `v` (a chunk id in a header written here).
fn find(v: &[u8], tag: &[u8; 4]) -> usize {
    v.windows(4).position(|w| w == tag).expect("tag present")
}

fn set_u32(v: &mut [u8], at: usize, x: u32) {
    v[at..at + 4].copy_from_slice(&x.to_le_bytes());
}

/// The samples a 16-bit file written by [`wav_bytes`] holds, as the decoder must return them.
fn s16_values(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&s| int(s, 16) as f32 / 32768.0).collect()
}

/// The samples a 24-bit file written by [`wav_bytes`] holds (24-bit code / 2^23).
fn s24_values(x: &[f64]) -> Vec<f32> {
    x.iter()
        .map(|&s| int(s, 24) as f32 / (1 << 23) as f32)
        .collect()
}

/// Decodes `bytes` written to a temp file as `name`; panics with the error.
fn decode_bytes(name: &str, bytes: &[u8]) -> vizdeck::audio::file::DecodedFile {
    let t = Temp::new(name);
    std::fs::write(&t.0, bytes).unwrap();
    decode_file(&t.0).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// RIFF and data sizes that players ignore or read as "streamed": RIFF 8 too small, 0,
/// 0xFFFFFFFF, 0xFFFFFFF8 (−8) or past the end of the file; data 0 or 0xFFFFFFFF (to the end of
/// the file); a chunk after the data that the RIFF size does not count. Every sample decodes;
/// a size that did not say where the file ends is named in a one-line note (issue 34: they
/// loaded without a word), a LIST the RIFF size leaves out is no matter.
#[test]
fn wav_riff_and_data_sizes_that_players_accept() {
    for channels in [1u16, 2] {
        let x = signal(8000, channels, 1000);
        let good = wav_bytes(Enc::S16, 8000, channels, &x);
        let riff = u32::from_le_bytes(good[4..8].try_into().unwrap());
        let data_at = find(&good, b"data") + 4;
        // What the file really holds: after the 8-byte RIFF header, and in the data chunk.
        let after_riff = good.len() - 8;
        let data_bytes = good.len() - (data_at + 4);
        assert_eq!(after_riff, riff as usize);
        let riff_note = |v: &str| {
            format!("RIFF size says {v}, the file holds {after_riff} after the RIFF header")
        };
        let mut cases: Vec<(&str, Vec<u8>, Option<String>)> = Vec::new();
        for (name, v, says) in [
            ("riff-8", riff - 8, format!("{} bytes", riff - 8)),
            ("riff-0", 0, "0 bytes".to_string()),
            ("riff-max", u32::MAX, "4294967295 bytes (0xFFFFFFFF)".into()),
            (
                "riff-minus-8",
                (-8i32) as u32,
                "4294967288 bytes (0xFFFFFFF8)".into(),
            ),
            (
                "riff-past-end",
                riff + 1000,
                format!("{} bytes", riff + 1000),
            ),
        ] {
            let mut b = good.clone();
            set_u32(&mut b, 4, v);
            let note = format!("{}: read to the end of the file", riff_note(&says));
            cases.push((name, b, Some(note)));
        }
        for (name, v, says) in [
            ("data-0", 0u32, "0 bytes"),
            ("data-max", u32::MAX, "4294967295 bytes (0xFFFFFFFF)"),
        ] {
            let mut b = good.clone();
            set_u32(&mut b, data_at, v);
            set_u32(&mut b, 4, v); // streamed writers leave both unset
            let note = format!(
                "{}; data size says {says} (streamed), the file holds {data_bytes} bytes of \
                 data: read to the end of the file",
                riff_note(says)
            );
            cases.push((name, b, Some(note)));
        }
        // A LIST chunk after the data, not counted by the RIFF size.
        let mut b = good.clone();
        b.extend_from_slice(b"LIST\x04\x00\x00\x00INFO");
        cases.push(("trailing-list", b, None));
        for (name, b, note) in cases {
            let d = decode_bytes(&format!("{name}.wav"), &b);
            assert_eq!((d.sample_rate, d.channels), (8000, channels), "{name}");
            assert_eq!(d.samples, s16_values(&x), "{name} {channels} ch");
            assert_eq!(d.warning, note, "{name}");
            if let Some(w) = &d.warning {
                assert!(!w.contains('\n'), "{w}");
            }
        }
    }
}

/// The note reaches the source (what the spectrogram's panel and the report show), and a header
/// note and damage join in one line: RIFF 0xFFFFFFFF on a file whose data size promises more
/// than it holds.
#[test]
fn wav_size_note_reaches_the_source_and_joins_damage_in_one_line() {
    let x = signal(8000, 1, 1000);
    let mut b = wav_bytes(Enc::S16, 8000, 1, &x);
    set_u32(&mut b, 4, u32::MAX);
    let t = Temp::new("riff-max-source.wav");
    std::fs::write(&t.0, &b).unwrap();
    let src = AudioSource::open(&AudioSelection::File(t.0.clone()), 1 << 16).unwrap();
    let w = src.warning().expect("a note").to_string();
    assert!(
        w.starts_with("RIFF size says 4294967295 bytes (0xFFFFFFFF)")
            && w.ends_with("read to the end of the file"),
        "{w}"
    );
    // Cut 100 bytes (50 samples) off the end: the data size now promises 50 frames more.
    b.truncate(b.len() - 100);
    let d = decode_bytes("riff-max-cut.wav", &b);
    let w = d.warning.expect("a warning");
    assert!(!w.contains('\n'), "{w}");
    assert!(w.starts_with("RIFF size says 4294967295 bytes"), "{w}");
    assert!(
        w.contains("read to the end of the file; truncated: decoded"),
        "{w}"
    );
    assert_eq!(d.samples.len(), x.len() - 50);
}

/// `fmt ` chunks as other tools write them: WAVE_FORMAT_EXTENSIBLE with cbSize 32 (with and
/// without the 10 extra bytes present), PCM/float with a cbSize field (sizes 18 and 40, and an
/// odd 20), EXTENSIBLE with wValidBitsPerSample 0. Each decodes to the exact samples written.
#[test]
fn wav_fmt_chunk_variants_that_players_accept() {
    let x = signal(8000, 2, 300);
    let f32s: Vec<f32> = x.iter().map(|&s| s as f32).collect();
    type Edit = fn(&mut Vec<u8>);
    let cb32_in_40: Edit = |f| f[16..18].copy_from_slice(&32u16.to_le_bytes());
    let cb32_in_50: Edit = |f| {
        f[16..18].copy_from_slice(&32u16.to_le_bytes());
        f.extend_from_slice(&[0xAB; 10]);
    };
    let valid_0: Edit = |f| f[18..20].copy_from_slice(&0u16.to_le_bytes());
    let cb0_18: Edit = |f| {
        f.truncate(16);
        f.extend_from_slice(&0u16.to_le_bytes());
    };
    let cb22_40: Edit = |f| {
        f.truncate(16);
        f.extend_from_slice(&22u16.to_le_bytes());
        f.extend_from_slice(&[0; 22]);
    };
    let odd_20: Edit = |f| {
        f.truncate(16);
        f.extend_from_slice(&[2, 0, 0, 0]);
    };
    let cases: [(&str, Enc, Edit, Vec<f32>); 10] = [
        (
            "ext-s24-cb32-in-40",
            Enc::ExtS24,
            cb32_in_40,
            s24_values(&x),
        ),
        (
            "ext-s24-cb32-in-50",
            Enc::ExtS24,
            cb32_in_50,
            s24_values(&x),
        ),
        (
            "ext-s24in32-cb32",
            Enc::ExtS24In32,
            cb32_in_50,
            s24_values(&x),
        ),
        ("ext-f32-cb32", Enc::ExtF32, cb32_in_50, f32s.clone()),
        ("ext-s24-valid-0", Enc::ExtS24, valid_0, s24_values(&x)),
        ("pcm-18", Enc::S16, cb0_18, s16_values(&x)),
        ("pcm-40", Enc::S16, cb22_40, s16_values(&x)),
        ("pcm-20", Enc::S16, odd_20, s16_values(&x)),
        ("float-40", Enc::F32, cb22_40, f32s.clone()),
        ("float-20", Enc::F32, odd_20, f32s),
    ];
    for (name, enc, edit, expected) in cases {
        let d = decode_bytes(
            &format!("{name}.wav"),
            &wav_bytes_with(enc, 8000, 2, &x, edit),
        );
        assert_eq!((d.sample_rate, d.channels), (8000, 2), "{name}");
        assert_eq!(d.samples, expected, "{name}");
        assert!(d.warning.is_none(), "{name}: {:?}", d.warning);
    }
}

/// Headers that cannot be read give one line naming the file and what is wrong with it.
#[test]
fn wav_broken_headers_are_one_clear_error() {
    let x = signal(8000, 1, 100);
    let good = wav_bytes(Enc::ExtS24, 8000, 1, &x);
    let fmt_at = find(&good, b"fmt ");
    let data_at = find(&good, b"data");
    let mut cb0 = good.clone();
    cb0[fmt_at + 8 + 16..fmt_at + 8 + 18].copy_from_slice(&0u16.to_le_bytes());
    // A 40-byte chunk cut to 18 bytes (the size field says 18, the rest moved into the gap).
    let mut short_ext = good[..fmt_at].to_vec();
    short_ext.extend_from_slice(b"fmt \x12\x00\x00\x00");
    short_ext.extend_from_slice(&good[fmt_at + 8..fmt_at + 8 + 18]);
    short_ext.extend_from_slice(&good[data_at..]);
    let mut no_fmt = good[..fmt_at].to_vec();
    no_fmt.extend_from_slice(&good[data_at..]);
    let mut list_overrun = good[..fmt_at].to_vec();
    list_overrun.extend_from_slice(b"LIST\x00\x00\x01\x00INFO");
    list_overrun.extend_from_slice(&good[fmt_at..]);
    let no_data = good[..data_at].to_vec();
    for (name, bytes, says) in [
        ("ext-cb0.wav", cb0, "cbSize 0"),
        ("ext-short.wav", short_ext, "18 bytes"),
        ("no-fmt.wav", no_fmt, "no 'fmt ' chunk"),
        ("list-overrun.wav", list_overrun, "'LIST'"),
        ("no-data.wav", no_data, "no 'data' chunk"),
    ] {
        let t = Temp::new(name);
        std::fs::write(&t.0, &bytes).unwrap();
        let err = decode_file(&t.0).unwrap_err().to_string();
        eprintln!("{name}: {err}");
        assert!(err.contains(&*t.0.to_string_lossy()), "{err}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

/// A 24-bit stereo file (6-byte frames) cut inside a frame: what is whole plays, and the warning
/// says what was dropped and gives the real durations, (a) when the data size declares more than
/// the file holds, (b) when the data size itself ends inside a frame.
#[test]
fn wav_24_bit_cut_mid_frame_warns_with_real_durations() {
    let rate = 8000;
    let x = signal(rate, 2, 200); // 200 frames = 0.025 s
    let full = wav_bytes(Enc::S24, rate, 2, &x);
    let data = find(&full, b"data") + 8;

    // (a) The header declares 200 frames; the file stops 4 bytes into frame 40.
    let cut = full[..data + 40 * 6 + 4].to_vec();
    let d = decode_bytes("cut-a.wav", &cut);
    assert_eq!(d.samples, s24_values(&x[..80]));
    let w = d.warning.expect("a warning");
    eprintln!("(a): {w}");
    // 40 frames at 8000 Hz = 0.005 s; 200 frames = 0.025 s.
    assert!(
        w.contains("truncated: decoded 0.005 s (40 frames) of the 0.025 s (200 frames)"),
        "{w}"
    );
    assert!(w.contains("4 of its 6 bytes"), "{w}");
    assert!(w.ends_with("playing what was decoded"), "{w}");

    // (b) The data size says 40 frames and 5 bytes, and the file holds exactly that (+ pad).
    let mut odd = full[..data + 40 * 6 + 5].to_vec();
    set_u32(&mut odd, data - 4, 40 * 6 + 5);
    odd.push(0);
    let riff = odd.len() as u32 - 8;
    set_u32(&mut odd, 4, riff);
    let d = decode_bytes("cut-b.wav", &odd);
    assert_eq!(d.samples, s24_values(&x[..80]));
    let w = d.warning.expect("a warning");
    eprintln!("(b): {w}");
    assert!(w.contains("5 of its 6 bytes"), "{w}");
    assert!(w.contains("after 0.005 s (40 frames)"), "{w}");

    // Mono 24-bit (3-byte frames), 3 frames declared; the file stops 2 bytes into the third.
    let xm = signal(rate, 1, 3);
    let m = wav_bytes(Enc::S24, rate, 1, &xm);
    let d = decode_bytes("cut-mono.wav", &m[..m.len() - 2]);
    assert_eq!(d.samples, s24_values(&xm[..2]));
    let w = d.warning.expect("a warning");
    assert!(w.contains("2 of its 3 bytes"), "{w}");
    assert!(
        w.contains("decoded 0.00025 s (2 frames) of the 0.000375 s (3 frames)"),
        "{w}"
    );
}

/// G.711 A-law code → 16-bit linear value (the ITU reference `alaw2linear`).
fn alaw_to_linear(code: u8) -> i16 {
    let a = code ^ 0x55;
    let mut t = i32::from(a & 0x0F) << 4;
    let seg = (a & 0x70) >> 4;
    if seg == 0 {
        t += 8;
    } else {
        t = (t + 0x108) << (seg - 1);
    }
    (if a & 0x80 != 0 { t } else { -t }) as i16
}

/// A-law (tag 6) with the 16-byte `fmt ` chunk many writers use (symphonia alone wants 18) and
/// with the 18-byte one: every code decodes to its G.711 value / 32768.
#[test]
fn wav_alaw_with_16_and_18_byte_fmt() {
    let codes: Vec<u8> = (0..=255u8).collect();
    let expected: Vec<f32> = codes
        .iter()
        .map(|&c| f32::from(alaw_to_linear(c)) / 32768.0)
        .collect();
    for fmt_len in [16u32, 18] {
        let mut v = b"RIFF".to_vec();
        v.extend_from_slice(&(4 + 8 + fmt_len + 8 + 256).to_le_bytes());
        v.extend_from_slice(b"WAVEfmt ");
        v.extend_from_slice(&fmt_len.to_le_bytes());
        v.extend_from_slice(&6u16.to_le_bytes()); // WAVE_FORMAT_ALAW
        v.extend_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&8000u32.to_le_bytes());
        v.extend_from_slice(&8000u32.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&8u16.to_le_bytes());
        if fmt_len == 18 {
            v.extend_from_slice(&0u16.to_le_bytes());
        }
        v.extend_from_slice(b"data");
        v.extend_from_slice(&256u32.to_le_bytes());
        v.extend_from_slice(&codes);
        let d = decode_bytes(&format!("alaw-{fmt_len}.wav"), &v);
        assert_eq!(d.codec, "pcm_alaw", "{fmt_len}");
        assert_eq!(d.samples, expected, "fmt {fmt_len}");
        assert!(d.warning.is_none(), "{:?}", d.warning);
    }
}
