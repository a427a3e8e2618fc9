//! Fuzzing entry points: each runs one loader of files from strangers on a byte slice (no
//! files, no threads) and checks what its result promises, panicking on a broken promise.
//!
//! The fuzz targets in `fuzz/` (cargo fuzz, libFuzzer) call these, and so does the regression
//! test `tests/app/fuzz_corpus.rs`, which replays every committed corpus file through them. A loader
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
//!   p50 ≤ … ≤ max) and formatting and JSON never panic;
//! - point clouds ([`las_file`], [`copc_file`], [`copc_hierarchy`], [`ply_file`]): see each;
//! - [`parquet_file`], [`arrow_ipc`]: as [`series_csv`] (rows in the store, finite times, values
//!   finite or NaN), the whole file read on the calling thread ([`crate::series::open_columnar_bytes`]);
//! - [`series_payload`]: see there (one-line errors, finite or NaN values named by the topic, a
//!   time only with a time field, the same payload decoded twice alike).

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
    // Up to 100 data rows are one batch, sorted whole before the store sees it.
    let one_batch = data.iter().filter(|&&b| b == b'\n').count() <= 100;
    check_series_source(&source, &store, one_batch);
}

/// Checks a drained series source and its store (see the module docs); `one_batch`: the input
/// was read as one batch, so no series may hold samples out of time order.
fn check_series_source(source: &SeriesSource, store: &Store, one_batch: bool) {
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
        if one_batch {
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

// Series payloads and columnar files

/// Reads `data` as a Parquet file (`PAR1` put in front when it does not start so) through
/// [`open_columnar_bytes`](crate::series::open_columnar_bytes), drains it into a [`Store`] and
/// checks the source and the store as [`series_csv`] does.
///
/// # Panics
///
/// When the reader panics or its result breaks an invariant.
pub fn parquet_file(data: &[u8]) {
    if data.starts_with(b"PAR1") {
        columnar_file(data);
    } else {
        columnar_file(&[b"PAR1", data].concat());
    }
}

/// Reads `data` as an Arrow IPC file or stream (`ARROW1\0\0` put in front when it starts
/// with neither `ARROW1` nor the stream's `0xFFFFFFFF`), as [`parquet_file`] does.
///
/// # Panics
///
/// When the reader panics or its result breaks an invariant.
pub fn arrow_ipc(data: &[u8]) {
    if data.starts_with(b"ARROW1") || data.starts_with(&[0xFF; 4]) {
        columnar_file(data);
    } else {
        columnar_file(&[b"ARROW1\0\0", data].concat());
    }
}

fn columnar_file(data: &[u8]) {
    // The loader turns a panic of the parquet or arrow-ipc decoder into an error (`guarded` in
    // columnar/); libFuzzer's panic hook would abort at the panic itself, before that, so the
    // default hook stands in meanwhile. A panic that leaves the loader still fails the target.
    let fuzzer_hook = std::panic::take_hook();
    let opened = crate::series::open_columnar_bytes(data, INPUT_NAME);
    std::panic::set_hook(fuzzer_hook);
    let mut source = match opened {
        Ok(s) => s,
        Err(e) => {
            one_line_naming_input("columnar error", &e.to_string());
            return;
        }
    };
    let names: Vec<String> = source.names().to_vec();
    assert!(!names.is_empty(), "a source without series");
    let mut store = Store::new(crate::series::DEFAULT_CAP_SAMPLES);
    source.drain_into(&mut store);
    assert!(source.is_finished(), "not finished after one drain");
    check_series_source(&source, &store, false);
}

/// Decodes `data[1..]` as one network payload with the [`Decoder`] of the live sources; `data[0]`
/// picks the format (of the six, `data[0] % 6`) and the time field (`(data[0] / 6) % 3`: none,
/// `t`, `0`). The payload is decoded twice on topic `fuzz-input`, then once with no topic.
///
/// Invariants: an error is one non-empty line of at most 400 characters and leaves no samples;
/// a decoded message holds at most [`MAX_LEAVES`] samples, each named by the topic or
/// `topic/path`, of a finite or NaN (gap) value; a time only with a time field, and then the
/// decoder's time base is fixed; decoding the same payload again gives the same result.
///
/// [`Decoder`]: crate::series::source::payload::Decoder
/// [`MAX_LEAVES`]: crate::series::source::payload::MAX_LEAVES
///
/// # Panics
///
/// When the decoder panics or its result breaks an invariant.
pub fn series_payload(data: &[u8]) {
    use crate::series::source::payload::{Decoder, MAX_LEAVES, PayloadFormat, PayloadOptions};
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    let format = PayloadFormat::ALL[usize::from(pick % 6)];
    let time_field = [None, Some("t"), Some("0")][usize::from((pick / 6) % 3)];
    let opts = PayloadOptions {
        format,
        time_field: time_field.map(str::to_string),
    };
    let mut decoder = Decoder::new(opts.clone());
    type Decoded = Result<(Option<i64>, Vec<(String, u64)>), String>;
    let decode = |decoder: &mut Decoder, topic: &str| -> Decoded {
        match decoder.decode(topic, payload) {
            Ok(t) => {
                let samples = decoder.samples();
                assert!(samples.len() <= MAX_LEAVES, "{} samples", samples.len());
                for (name, v) in samples {
                    if !topic.is_empty() {
                        assert!(
                            name == topic || name.starts_with(&format!("{topic}/")),
                            "sample {name:?} not named by the topic"
                        );
                    }
                    assert!(v.is_nan() || v.is_finite(), "{name}: value {v}");
                }
                if time_field.is_none() {
                    assert_eq!(t, None, "a time without a time field");
                    assert_eq!(decoder.time_base(), None);
                }
                if t.is_some() {
                    assert!(decoder.time_base().is_some(), "a time but no time base");
                }
                let samples = samples
                    .iter()
                    .map(|(n, v)| (n.clone(), v.to_bits()))
                    .collect();
                Ok((t, samples))
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.is_empty(), "empty payload error");
                assert!(
                    !msg.contains('\n') && !msg.contains('\r'),
                    "payload error is not one line: {msg:?}"
                );
                assert!(
                    msg.chars().count() <= 400,
                    "payload error of {} chars",
                    msg.len()
                );
                assert!(decoder.samples().is_empty(), "samples after an error");
                Err(msg)
            }
        }
    };
    let first = decode(&mut decoder, INPUT_NAME);
    let again = decode(&mut decoder, INPUT_NAME);
    assert_eq!(
        first, again,
        "the same payload decoded twice differs ({format:?})"
    );
    let mut fresh = Decoder::new(opts);
    let _ = decode(&mut fresh, "");
}

// Point clouds

/// Reads `data` as a LAS/LAZ file with the path loader's code ([`LasFile::from_reader`] on the
/// bytes), then its points in batches (the first [`FUZZ_LAS_BATCHES`]), and checks what the
/// reader promises: a header it accepts has finite scale factors above 0 and finite offsets;
/// every batch's attributes have one value per point; coordinates are finite and equal `raw · scale + offset`; no more points
/// than the header announces; a break is one [`PointCloudError::Truncated`] line naming the
/// input, after which nothing more is read. A file with the COPC records is also opened as
/// COPC (see [`copc_file`]).
///
/// # Panics
///
/// When the reader panics or its result breaks a promise.
///
/// [`LasFile::from_reader`]: crate::pointcloud::LasFile::from_reader
/// [`PointCloudError::Truncated`]: crate::pointcloud::PointCloudError::Truncated
pub fn las_file(data: &[u8]) {
    use crate::pointcloud::{LasFile, PointCloudError};
    let cursor = std::io::Cursor::new(data.to_vec());
    let mut file = match LasFile::from_reader(cursor, Path::new(INPUT_NAME), false) {
        Ok(f) => f,
        Err(e) => {
            one_line_naming_input("LAS error", &e.to_string());
            return;
        }
    };
    let info = file.info().clone();
    for k in 0..3 {
        assert!(info.scale[k].is_finite() && info.scale[k] > 0.0, "{info:?}");
        assert!(info.offset[k].is_finite(), "{info:?}");
    }
    let mut read = 0u64;
    for _ in 0..FUZZ_LAS_BATCHES {
        match file.next_batch(4096) {
            Ok(Some(b)) => {
                let n = b.len();
                assert!(n >= 1, "an empty batch");
                assert_eq!(b.raw.len(), n);
                assert_eq!(b.intensity.len(), n);
                assert_eq!(b.classification.len(), n);
                assert_eq!(b.return_number.len(), n);
                assert_eq!(b.rgb.as_ref().map_or(n, Vec::len), n);
                assert_eq!(b.gps_time.as_ref().map_or(n, Vec::len), n);
                assert_eq!(b.rgb.is_some(), info.has_color);
                for (p, r) in b.xyz.iter().zip(&b.raw) {
                    for k in 0..3 {
                        let want = f64::from(r[k]) * info.scale[k] + info.offset[k];
                        assert!(p[k].is_finite(), "coordinate {p:?}");
                        assert_eq!(p[k].to_bits(), want.to_bits(), "{p:?} from {r:?}");
                    }
                }
                read += n as u64;
                assert!(
                    read <= info.header_points,
                    "{read} of {}",
                    info.header_points
                );
            }
            Ok(None) => break,
            Err(e) => {
                one_line_naming_input("LAS data error", &e.to_string());
                assert!(matches!(e, PointCloudError::Truncated { .. }), "{e:?}");
                assert!(
                    matches!(file.next_batch(4096), Ok(None)),
                    "read on after a break"
                );
                break;
            }
        }
    }
    if info.copc {
        copc_file(data);
    }
}

/// Batches of 4,096 points read at most by [`las_file`]: the work per input stays bounded (a
/// few kilobytes of LAZ may claim millions of long records), and every batch after these runs
/// the same code.
const FUZZ_LAS_BATCHES: usize = 8;

/// Points decoded per COPC node at most by [`copc_file`] (a fuzz input may claim 2³¹).
const FUZZ_NODE_POINTS: u64 = 100_000;

/// Opens `data` as a COPC file with the path loader's code ([`CopcFile::from_reader`]: header,
/// hierarchy pages in any order) and checks its nodes: keys inside the octree and unique,
/// counts above 0 adding up to the header's, cubes of the side their level gives; each node
/// of at most 100,000 points decodes to its count or fails with one line naming the input.
///
/// # Panics
///
/// When the reader panics or its result breaks a promise.
///
/// [`CopcFile::from_reader`]: crate::pointcloud::copc::CopcFile::from_reader
pub fn copc_file(data: &[u8]) {
    use crate::pointcloud::copc::CopcFile;
    let cursor = Box::new(std::io::Cursor::new(data.to_vec()));
    let mut file = match CopcFile::from_reader(cursor, data.len() as u64, Path::new(INPUT_NAME)) {
        Ok(f) => f,
        Err(e) => {
            one_line_naming_input("COPC error", &e.to_string());
            return;
        }
    };
    let nodes: Vec<_> = file.nodes().into_iter().cloned().collect();
    let total: u64 = nodes.iter().map(|n| n.points).sum();
    assert_eq!(total, file.info().header_points);
    let mut keys = std::collections::HashSet::new();
    for n in &nodes {
        assert!(n.points > 0);
        assert!(n.level <= crate::pointcloud::copc_pages::MAX_LEVEL as u32);
        assert!(
            n.cell.iter().all(|&c| u64::from(c) < 1u64 << n.level),
            "{n:?}"
        );
        assert!(keys.insert((n.level, n.cell)), "{n:?} twice");
    }
    for (i, n) in nodes.iter().enumerate() {
        if n.points > FUZZ_NODE_POINTS {
            continue;
        }
        match file.read_node(i) {
            Ok(b) => assert_eq!(b.len() as u64, n.points, "{n:?}"),
            Err(e) => one_line_naming_input("COPC node error", &e.to_string()),
        }
    }
}

/// Reads COPC hierarchy pages from `data` as a file ([`read_pages`], what [`copc_file`] and
/// COPC over HTTP run): the root page starts at byte 8, of `32 · u16` bytes (the u16 little
/// endian at byte 0), its pointers lead anywhere in `data`. Checks the nodes: keys inside the
/// octree and unique, counts ≥ 0, data inside the file for nodes with points, no more nodes
/// than 32-byte entries fit in the file.
///
/// # Panics
///
/// When the reader panics or its result breaks a promise.
///
/// [`read_pages`]: crate::pointcloud::copc_pages::read_pages
pub fn copc_hierarchy(data: &[u8]) {
    use crate::pointcloud::copc_pages::{ENTRY, MAX_LEVEL, read_pages};
    let [a, b, ..] = *data else {
        return;
    };
    let root = (8, ENTRY * u64::from(u16::from_le_bytes([a, b])));
    let len = data.len() as u64;
    match read_pages(&mut std::io::Cursor::new(data), root, len) {
        Ok(nodes) => {
            assert!(nodes.len() as u64 <= len / ENTRY, "{} nodes", nodes.len());
            let mut keys = std::collections::HashSet::new();
            for e in &nodes {
                assert!((0..=MAX_LEVEL).contains(&e.level), "{e:?}");
                assert!(
                    e.cell
                        .iter()
                        .all(|&c| c >= 0 && (c as u64) < 1u64 << e.level),
                    "{e:?}"
                );
                assert!(e.point_count >= 0, "{e:?}");
                assert!(keys.insert((e.level, e.cell)), "{e:?} twice");
                if e.point_count > 0 {
                    assert!(
                        e.byte_size > 0 && e.offset + e.byte_size as u64 <= len,
                        "{e:?}"
                    );
                }
            }
        }
        Err(e) => {
            assert!(!e.is_empty() && !e.contains('\n'), "{e:?}");
        }
    }
}

/// Reads `data` as a PLY file with the path loader's code ([`decode_from`], after
/// [`vertex_count_from`] as the scene does) and checks the records: at least one, at most the
/// vertices declared, coordinates finite and inside the bounds reported, bounds finite and
/// ordered; errors and the warning are one line naming the input.
///
/// # Panics
///
/// When the reader panics or its result breaks a promise.
///
/// [`decode_from`]: crate::pointcloud::ply::decode_from
/// [`vertex_count_from`]: crate::pointcloud::ply::vertex_count_from
pub fn ply_file(data: &[u8]) {
    use crate::pointcloud::index::{Progress, Record};
    use crate::pointcloud::ply::{decode_from, vertex_count_from};
    let declared = match vertex_count_from(data, Path::new(INPUT_NAME)) {
        Ok(n) => n,
        Err(e) => {
            one_line_naming_input("PLY header error", &e.to_string());
            return;
        }
    };
    let progress = std::sync::Arc::new(Progress::default());
    let mut records = Vec::new();
    let result = decode_from(
        data,
        Path::new(INPUT_NAME),
        &progress,
        &mut |r: &[Record]| {
            records.extend_from_slice(r);
            Ok(())
        },
    );
    match result {
        Ok(info) => {
            assert!(!records.is_empty(), "no records but Ok");
            assert!(records.len() <= declared, "{} of {declared}", records.len());
            let (lo, hi) = info.bounds;
            for k in 0..3 {
                assert!(
                    lo[k].is_finite() && hi[k].is_finite() && lo[k] <= hi[k],
                    "{lo:?} {hi:?}"
                );
            }
            for r in &records {
                for k in 0..3 {
                    assert!(
                        r.xyz[k] >= lo[k] && r.xyz[k] <= hi[k],
                        "{:?} outside",
                        r.xyz
                    );
                }
            }
            if let Some(w) = &info.warning {
                one_line_naming_input("PLY warning", w);
            }
        }
        Err(e) => one_line_naming_input("PLY error", &e.to_string()),
    }
}
