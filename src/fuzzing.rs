//! Fuzzing entry points: each runs one loader of files from strangers on a byte slice (no
//! files, no threads) and checks what its result promises, panicking on a broken promise.
//!
//! The fuzz targets in `fuzz/` (cargo fuzz, libFuzzer) call these, and so does the regression
//! test `tests/fuzz_corpus.rs`, which replays every committed corpus file through them. A loader
//! may refuse any input, but only with an error: a panic, a hang or a broken invariant is a bug.
//!
//! Invariants checked:
//! - every error, warning and note is one line that names the input;
//! - [`audio_file`]: a decoded file has ≥ 1 channel, a rate ≥ 1 Hz, at least one whole frame
//!   and `samples.len()` a multiple of the channels; integer PCM samples lie in [−1, 1];
//! - [`wav_header`]: the RIFF pre-parser's output is canonical (true RIFF size, a `fmt ` chunk
//!   then a `data` chunk of whole frames, nothing else);
//! - [`series_csv`]: every row lands in the store, times finite, values finite or NaN (a clamped
//!   value is ±`f32::MAX`, never ±inf), a series without out-of-order samples has sorted times,
//!   and a file of at most one batch (100 rows) is sorted;
//! - [`stats_csv`]: frame times are finite and ≥ 0; the summary's statistics are ordered (min ≤
//!   p50 ≤ … ≤ max) and formatting and JSON never panic.

use std::path::Path;

use crate::audio::AudioError;
use crate::audio::file::{decode_bytes, repair_wav};
use crate::series::{SeriesSource, Store, open_csv_bytes};
use crate::stats::Capture;

/// What the loaders call a fuzz input in their messages.
pub const INPUT_NAME: &str = "fuzz-input";

/// Asserts that `msg` is one non-empty line naming [`INPUT_NAME`].
fn one_line_naming_input(what: &str, msg: &str) {
    assert!(!msg.is_empty(), "{what}: empty message");
    assert!(
        !msg.contains('\n') && !msg.contains('\r'),
        "{what} is not one line: {msg:?}"
    );
    assert!(
        msg.contains(INPUT_NAME),
        "{what} does not name the input: {msg:?}"
    );
}

/// Decodes `data` as an audio file of any supported format ([`decode_bytes`], WAV through the
/// lenient RIFF pre-parser) and checks the result (see the module docs).
///
/// # Panics
///
/// When the decoder panics or its result breaks an invariant.
pub fn audio_file(data: &[u8]) {
    match decode_bytes(data, Path::new(INPUT_NAME), None) {
        Ok(d) => {
            assert!(d.channels >= 1, "0 channels");
            assert!(d.sample_rate >= 1, "0 Hz");
            assert!(!d.samples.is_empty(), "no samples but Ok");
            assert_eq!(
                d.samples.len() % usize::from(d.channels),
                0,
                "{} samples is not a whole number of {}-channel frames",
                d.samples.len(),
                d.channels
            );
            assert!(!d.codec.is_empty(), "no codec name");
            let integer = d.codec.starts_with("pcm_s") || d.codec.starts_with("pcm_u");
            if integer && let Some(bad) = d.samples.iter().find(|s| !(-1.0..=1.0).contains(*s)) {
                panic!("{} sample {bad} outside [-1, 1]", d.codec);
            }
            if let Some(w) = &d.warning {
                assert!(!w.contains('\n'), "warning is not one line: {w:?}");
            }
            assert!(d.duration_s() > 0.0);
        }
        Err(e) => {
            one_line_naming_input("audio error", &e.to_string());
            if data.is_empty() {
                assert!(matches!(e, AudioError::EmptyFile { .. }), "{e}");
            }
        }
    }
}

/// Runs the RIFF/WAVE pre-parser alone on `RIFF <size> WAVE` followed by `chunks` (the fuzzer
/// spends its effort on the chunks), checks that its output is canonical, then decodes the whole
/// input as [`audio_file`] does.
///
/// # Panics
///
/// When the pre-parser panics or its output is not canonical.
pub fn wav_header(chunks: &[u8]) {
    let mut file = Vec::with_capacity(chunks.len() + 12);
    file.extend_from_slice(b"RIFF");
    file.extend_from_slice(&(chunks.len() as u32 + 4).to_le_bytes());
    file.extend_from_slice(b"WAVE");
    file.extend_from_slice(chunks);
    match repair_wav(&file, Path::new(INPUT_NAME)) {
        Ok(w) => {
            let b = &w.bytes;
            let le32 = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
            assert!(b.len() >= 44, "canonical file of {} bytes", b.len());
            assert_eq!(&b[..4], b"RIFF");
            assert_eq!(le32(4) as usize, b.len() - 8, "RIFF size");
            assert_eq!(&b[8..16], b"WAVEfmt ");
            let fmt_len = le32(16) as usize;
            assert!(fmt_len >= 16, "fmt chunk of {fmt_len} bytes");
            let data_at = 20 + fmt_len + fmt_len % 2;
            assert!(data_at + 8 <= b.len(), "no room for the data chunk header");
            assert_eq!(&b[data_at..data_at + 4], b"data");
            let data_len = le32(data_at + 4) as u64;
            let end = data_at as u64 + 8 + data_len + data_len % 2;
            assert_eq!(end, b.len() as u64, "data chunk does not end the file");
            if w.block > 0 {
                assert_eq!(data_len % w.block, 0, "data is not whole blocks");
                assert!(
                    w.partial < w.block,
                    "partial block {} ≥ {}",
                    w.partial,
                    w.block
                );
            }
            let channels = u16::from_le_bytes([b[22], b[23]]);
            let rate = le32(24);
            assert!(channels >= 1 && rate >= 1, "{channels} ch, {rate} Hz");
        }
        Err(e) => one_line_naming_input("WAV header error", &e.to_string()),
    }
    audio_file(&file);
}

/// Reads `data` as a series CSV ([`open_csv_bytes`]), drains it into a [`Store`] and checks the
/// source and the store (see the module docs).
///
/// # Panics
///
/// When the reader panics or its result breaks an invariant.
pub fn series_csv(data: &[u8]) {
    let mut source = match open_csv_bytes(data, INPUT_NAME) {
        Ok(s) => s,
        Err(e) => {
            one_line_naming_input("series error", &e.to_string());
            return;
        }
    };
    let names: Vec<String> = source.names().to_vec();
    assert!(!names.is_empty(), "a source without series");
    for (i, n) in names.iter().enumerate() {
        assert!(!names[..i].contains(n), "series name {n:?} twice");
    }
    let mut store = Store::new(crate::series::DEFAULT_CAP_SAMPLES);
    source.drain_into(&mut store);
    assert!(source.is_finished(), "not finished after one drain");
    check_series_source(&source, &store, data);
}

fn check_series_source(source: &SeriesSource, store: &Store, data: &[u8]) {
    for (what, msg) in [
        ("warning", source.warning()),
        ("late error", source.error()),
        ("clamp note", source.clamp_note()),
    ] {
        if let Some(m) = msg {
            one_line_naming_input(what, &m);
        }
    }
    assert!(source.time_unit().is_some());
    let mut rows: Option<usize> = None;
    let mut at_max = 0u64;
    for name in source.names() {
        let s = store
            .get(name)
            .unwrap_or_else(|| panic!("series {name:?} not in the store"));
        assert_eq!(s.rejected(), 0, "{name}: rejected (non-finite) times");
        assert_eq!(s.dropped(), 0, "{name}: dropped under the cap");
        // Every series gets one value per row.
        let n = *rows.get_or_insert(s.len());
        assert_eq!(
            s.len(),
            n,
            "{name}: {} samples, another series {n}",
            s.len()
        );
        let mut prev = f64::NEG_INFINITY;
        let mut sorted = true;
        for (t, v) in s.iter() {
            assert!(t.is_finite(), "{name}: time {t}");
            assert!(v.is_nan() || v.is_finite(), "{name}: value {v}");
            at_max += (v.abs() == f32::MAX) as u64;
            sorted &= t >= prev;
            prev = t;
        }
        if s.out_of_order() == 0 {
            assert!(
                sorted,
                "{name}: times not sorted but no sample counted out of order"
            );
        }
        // Up to 100 data rows are one batch, sorted whole before the store sees it.
        let lines = data.iter().filter(|&&b| b == b'\n').count();
        if lines <= 100 {
            assert_eq!(s.out_of_order(), 0, "{name}: out of order in one batch");
        }
        if let Some((t0, t1)) = s.time_range() {
            assert!(t0 <= t1, "{name}: time range {t0}..{t1}");
        }
    }
    assert!(
        at_max >= source.values_clamped(),
        "{} values clamped, {at_max} stored at ±f32::MAX",
        source.values_clamped()
    );
    assert_eq!(
        source.values_clamped() > 0,
        source.clamp_note().is_some(),
        "clamped values and the clamp note disagree"
    );
}

/// Reads `data` as a frame-stats capture ([`Capture::parse`], vizdeck's own or PresentMon-style)
/// and checks it and its summary (see the module docs).
///
/// # Panics
///
/// When the reader or the summary panics or breaks an invariant.
pub fn stats_csv(data: &[u8]) {
    let capture = match Capture::parse(data, INPUT_NAME) {
        Ok(c) => c,
        Err(e) => {
            one_line_naming_input("stats error", &e.to_string());
            return;
        }
    };
    for &t in &capture.frame_times_ms {
        assert!(t.is_finite() && t >= 0.0, "frame time {t}");
    }
    let s = capture.summary();
    assert_eq!(s.frames, capture.frame_times_ms.len() as u64);
    let stats = [
        s.min_ms, s.p50_ms, s.p90_ms, s.p95_ms, s.p99_ms, s.p999_ms, s.max_ms,
    ];
    for w in stats.windows(2) {
        assert!(w[0] <= w[1], "statistics out of order: {stats:?}");
    }
    for (name, v) in [
        ("duration_s", s.duration_s),
        ("mean_fps", s.mean_fps.unwrap_or(0.0)),
        ("mean_ms", s.mean_ms),
        ("low_1_ms", s.low_1_ms),
        ("low_01_ms", s.low_01_ms),
        ("low_1_fps", s.low_1_fps.unwrap_or(0.0)),
        ("low_01_fps", s.low_01_fps.unwrap_or(0.0)),
        ("stutter_threshold_ms", s.stutter_threshold_ms),
    ] {
        assert!(!v.is_nan() && v >= 0.0, "{name} = {v}");
    }
    if s.frames == 0 {
        assert!(s.is_empty());
    }
    // An FPS of 0 ms is n/a (None), never a made-up figure.
    if s.mean_ms == 0.0 {
        assert!(
            s.mean_fps.is_none() && s.low_1_fps.is_none(),
            "FPS of 0 ms frames"
        );
    }
    let rows = s.table_rows();
    assert!(!rows.is_empty());
    let json = serde_json::to_string(&s).expect("summary JSON");
    assert!(json.starts_with('{'));
}
