//! What the fuzzers found (see docs/development.md, "Fuzzing"), each shrunk to a focused test with the
//! expected result worked out by hand. The crashing inputs themselves are in `fuzz/corpus/`.

use vizdeck::series::{SeriesSource, Store, open_csv_bytes};
use vizdeck::stats::Capture;

fn drain(mut source: SeriesSource) -> SeriesSource {
    let mut store = Store::new(1 << 16);
    source.drain_into(&mut store);
    assert!(source.is_finished());
    source
}

/// series_csv, crash 1: a quoted header cell holding a line break was quoted as is in the
/// error, so the one-line message had two lines. Control characters are now escaped.
#[test]
fn series_header_with_a_line_break_gives_a_one_line_error() {
    let err = open_csv_bytes(b"\"a\nb\",c\nx,y\n", "x.csv")
        .err()
        .expect("no numeric column");
    assert_eq!(
        err.to_string(),
        "series file 'x.csv': no numeric value column (header: a\\nb, c)"
    );
}

/// Same for a value cell and a time cell past the first 100 rows (rows skipped, with a warning).
#[test]
fn series_cells_with_line_breaks_give_one_line_errors() {
    let good: String = (0..101).map(|i| format!("{i},1\n")).collect();
    let csv = format!("time,v\n{good}200,\"x\ny\"\n201,1\n");
    let source = drain(open_csv_bytes(csv.as_bytes(), "x.csv").unwrap());
    assert_eq!(
        source.warning().as_deref(),
        Some("series file 'x.csv' line 103: column 'v': 'x\\ny' is not a number (row skipped)")
    );
    let csv = format!("time,v\n{good}\"1\r\n2\",5\n201,1\n");
    let source = drain(open_csv_bytes(csv.as_bytes(), "x.csv").unwrap());
    assert_eq!(
        source.warning().as_deref(),
        Some("series file 'x.csv' line 103: time '1\\r\\n2' is not a number (row skipped)")
    );
}

/// stats_csv: the same for a frame-time cell.
#[test]
fn stats_cell_with_a_line_break_gives_a_one_line_error() {
    let err = Capture::parse(&b"MsBetweenPresents\n\"1\n2\"\n"[..], "x.csv").unwrap_err();
    assert_eq!(
        err.to_string(),
        "stats file 'x.csv': line 2: MsBetweenPresents '1\\n2' is not a number"
    );
}

/// A canonical 44-byte-header PCM WAV with the fields given and `data` as its data chunk.
fn pcm_wav(channels: u16, rate: u32, block_align: u16, bits: u16, data: &[u8]) -> Vec<u8> {
    let mut v = b"RIFF".to_vec();
    v.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    v.extend_from_slice(b"WAVEfmt ");
    v.extend_from_slice(&16u32.to_le_bytes());
    v.extend_from_slice(&1u16.to_le_bytes());
    v.extend_from_slice(&channels.to_le_bytes());
    v.extend_from_slice(&rate.to_le_bytes());
    v.extend_from_slice(&48_000u32.to_le_bytes());
    v.extend_from_slice(&block_align.to_le_bytes());
    v.extend_from_slice(&bits.to_le_bytes());
    v.extend_from_slice(b"data");
    v.extend_from_slice(&(data.len() as u32).to_le_bytes());
    v.extend_from_slice(data);
    v
}

/// audio_file, crash 1: 65534 channels of 24-bit PCM. symphonia's WAV reader multiplies
/// channels × 3 bytes in a u16 ("attempt to multiply with overflow" in debug builds; in release
/// builds it wrapped and the file was refused as "invalid channel count"). The pre-parser now
/// refuses a frame of more than 65535 bytes itself: 65534 × 3 = 196602.
#[test]
fn wav_frame_larger_than_a_header_can_describe_is_a_clear_error() {
    // The fuzzer's input, byte for byte: the data chunk declares 40 bytes, 38 are present.
    let mut bytes = pcm_wav(65534, 58047, 6, 24, &[0; 40]);
    bytes.truncate(82);
    let err = vizdeck::audio::file::decode_bytes(&bytes, std::path::Path::new("x.wav"), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "audio file 'x.wav': malformed WAV header: 65534 channels of 24-bit samples make a frame \
         of 196602 bytes, more than the 65535 a WAV header can describe"
    );
    // The largest frame that fits still reads: 21845 channels × 3 bytes = 65535.
    let err = vizdeck::audio::file::decode_bytes(
        &pcm_wav(21845, 8000, 65535, 24, &[0; 6]),
        std::path::Path::new("x.wav"),
        None,
    )
    .unwrap_err();
    assert!(!err.to_string().contains("65535 a WAV header"), "{err}");
}

/// wav_header, crash 1: a chunk id of non-printable bytes (here `d`, `-`, 0xD1, CR) was quoted
/// raw in the error, so the message held a carriage return. It is now escaped.
#[test]
fn wav_chunk_id_with_control_bytes_gives_a_one_line_error() {
    let mut bytes = pcm_wav(2, 44_100, 4, 16, &[]);
    bytes.truncate(36); // RIFF header and fmt chunk
    bytes.extend_from_slice(b"d-\xd1\r");
    bytes.extend_from_slice(&3_873_038_803u32.to_le_bytes());
    bytes.resize(120, 0);
    let err = vizdeck::audio::file::decode_bytes(&bytes, std::path::Path::new("x.wav"), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "audio file 'x.wav': malformed WAV header: chunk 'd-\\xd1\\r' at byte 36 declares \
         3873038803 bytes, past the end of the file (120 bytes)"
    );
}

/// A `WAVE_FORMAT_EXTENSIBLE` 16-bit PCM WAV (cbSize 22, standard PCM sub-format GUID) with the
/// channel count and channel mask given.
fn extensible_wav(channels: u16, mask: u32, data: &[u8]) -> Vec<u8> {
    let mut v = b"RIFF".to_vec();
    v.extend_from_slice(&(60 + data.len() as u32).to_le_bytes());
    v.extend_from_slice(b"WAVEfmt ");
    v.extend_from_slice(&40u32.to_le_bytes());
    v.extend_from_slice(&0xFFFEu16.to_le_bytes());
    v.extend_from_slice(&channels.to_le_bytes());
    v.extend_from_slice(&8000u32.to_le_bytes());
    v.extend_from_slice(&(8000 * 2 * u32::from(channels)).to_le_bytes());
    v.extend_from_slice(&(2 * channels).to_le_bytes());
    v.extend_from_slice(&16u16.to_le_bytes());
    v.extend_from_slice(&22u16.to_le_bytes());
    v.extend_from_slice(&16u16.to_le_bytes());
    v.extend_from_slice(&mask.to_le_bytes());
    v.extend_from_slice(&[
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B,
        0x71,
    ]);
    v.extend_from_slice(b"data");
    v.extend_from_slice(&(data.len() as u32).to_le_bytes());
    v.extend_from_slice(data);
    v
}

/// audio_file, crash 2 (and wav_header, crash 2): an extensible WAV whose channel mask does not
/// place its channels. symphonia "fixes" the mask with `(1 << missing) - 1) << above_top_bit`,
/// which overflows (a panic in debug builds) when 32 or more are missing (here 8194 channels,
/// a mask of 2 speakers) or when the mask's top bit is set. The pre-parser now sets such a
/// mask itself, or refuses more than 18 channels (all a mask can place).
#[test]
fn extensible_wav_with_a_mask_that_does_not_fit_the_channels() {
    let name = std::path::Path::new("x.wav");
    let err = vizdeck::audio::file::decode_bytes(&extensible_wav(8194, 3, &[0; 64]), name, None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "audio file 'x.wav': malformed WAV header: WAVE_FORMAT_EXTENSIBLE with 8194 channels \
         and a channel mask of 2 (0x00000003); a mask places at most 18"
    );
    // Top bit set, one speaker for two channels: read as the first two positions. Frames
    // (0x4000, 0xC000) are (0.5, -0.5).
    let d = vizdeck::audio::file::decode_bytes(
        &extensible_wav(2, 0x8000_0000, &[0x00, 0x40, 0x00, 0xC0]),
        name,
        None,
    )
    .unwrap();
    assert_eq!((d.channels, d.samples.clone()), (2, vec![0.5, -0.5]));
    // A mask that fits is left alone: 2 channels, front left + front right.
    let d = vizdeck::audio::file::decode_bytes(
        &extensible_wav(2, 0b11, &[0x00, 0x40, 0x00, 0xC0]),
        name,
        None,
    )
    .unwrap();
    assert_eq!(d.samples, vec![0.5, -0.5]);
}

/// audio_file, crash 3: bytes before the `RIFF` header. symphonia's probe scans past them to
/// the header and its strict WAV reader read it, bypassing the lenient pre-parser (and its
/// checks: here the mask of crash 2). The pre-parser now reads a header symphonia found that
/// way too, from where it starts.
#[test]
fn wav_after_leading_bytes_goes_through_the_pre_parser() {
    let name = std::path::Path::new("x.wav");
    let mut bytes = b"junk-junk-12".to_vec();
    bytes.extend_from_slice(&extensible_wav(8194, 3, &[0; 64]));
    let err = vizdeck::audio::file::decode_bytes(&bytes, name, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "audio file 'x.wav': malformed WAV header: WAVE_FORMAT_EXTENSIBLE with 8194 channels \
         and a channel mask of 2 (0x00000003); a mask places at most 18"
    );
    // A RIFF size 8 short (which symphonia refuses) after leading bytes reads like without them.
    let mut wav = pcm_wav(1, 8000, 2, 16, &[0x00, 0x40]);
    wav[4..8].copy_from_slice(&(38u32 - 8).to_le_bytes());
    let mut bytes = b"junk-junk-12".to_vec();
    bytes.extend_from_slice(&wav);
    let d = vizdeck::audio::file::decode_bytes(&bytes, name, None).unwrap();
    assert_eq!((d.channels, d.sample_rate, d.samples), (1, 8000, vec![0.5]));
}

/// wav_header, crash 3: when symphonia could not read the canonical WAV the pre-parser wrote
/// (an I/O error: here the last of three `fmt ` chunks, a pass-through tag, is cut short), the
/// fallback for truncated Ogg files probed the *original* bytes again, so symphonia's strict
/// reader read the first `fmt ` chunk: 62722 channels of 24-bit PCM, the u16 overflow of
/// crash 1 (in release builds: "invalid channel count"). WAV no longer takes that fallback.
#[test]
fn wav_that_symphonia_cannot_read_canonically_is_not_read_raw() {
    let chunks = include_bytes!(
        "../../fuzz/corpus/wav_header/crash-7573c0796141262f41c83ca47b36e04bc626f15d"
    );
    let mut bytes = b"RIFF".to_vec();
    bytes.extend_from_slice(&(chunks.len() as u32 + 4).to_le_bytes());
    bytes.extend_from_slice(b"WAVE");
    bytes.extend_from_slice(chunks);
    let err = vizdeck::audio::file::decode_bytes(&bytes, std::path::Path::new("x.wav"), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "audio file 'x.wav': unsupported or unrecognised format: the file ends before its header \
         does"
    );
}

// Series payloads and columnar files

/// parquet_file, crash 1 (minimised, `fuzz/corpus/parquet_file/crash-negative-chunk-offset`):
/// a footer whose column chunk has a negative offset made the parquet crate panic ("column start
/// and length should not be negative") when the row group was read. The chunks are now checked
/// against the file first: one line naming the file, the row group and the column.
#[test]
fn parquet_chunk_outside_the_file_is_refused_in_one_line() {
    // The fuzz target puts `PAR1` in front: the file is 4 + 1080 bytes.
    let input = include_bytes!("../../fuzz/corpus/parquet_file/crash-negative-chunk-offset");
    let bytes = [b"PAR1".as_slice(), input].concat();
    assert_eq!(bytes.len(), 1084);
    let err = vizdeck::series::open_columnar_bytes(&bytes, "x.parquet")
        .err()
        .expect("a chunk outside the file")
        .to_string();
    assert!(
        err.starts_with("series file 'x.parquet': not a readable Parquet file: row group ")
            && err.ends_with("lie outside the file of 1084 bytes")
            && !err.contains('\n'),
        "{err}"
    );
}

/// arrow_ipc, crash 1 (minimised, `fuzz/corpus/arrow_ipc/crash-negative-block-length`): a
/// footer block of negative length made arrow-ipc panic (`unwrap` on `None` in `read_block`).
/// The footer's blocks are now checked against the file first.
#[test]
fn arrow_ipc_block_outside_the_file_is_refused_in_one_line() {
    // The fuzz target puts `ARROW1\0\0` in front: the file is 8 + 387 bytes.
    let input = include_bytes!("../../fuzz/corpus/arrow_ipc/crash-negative-block-length");
    let bytes = [b"ARROW1\0\0".as_slice(), input].concat();
    assert_eq!(bytes.len(), 395);
    let err = vizdeck::series::open_columnar_bytes(&bytes, "x.arrow")
        .err()
        .expect("a block outside the file")
        .to_string();
    assert!(
        err.starts_with("series file 'x.arrow': not a readable Arrow IPC file: ")
            && err.ends_with("lies outside the file of 395 bytes")
            && !err.contains('\n'),
        "{err}"
    );
}

/// parquet_file, crash 2 (minimised, `fuzz/corpus/parquet_file/crash-dict-page-missing`): a
/// column chunk whose data page is dictionary-encoded but has no dictionary page made the parquet
/// crate panic ("Decoder for dict should have been set"). Calls into the decoders are now
/// guarded: the panic becomes one line naming the file.
#[test]
fn parquet_decoder_panic_becomes_a_one_line_error() {
    let bytes = include_bytes!("../../fuzz/corpus/parquet_file/crash-dict-page-missing");
    let err = match vizdeck::series::open_columnar_bytes(bytes, "x.parquet") {
        Err(e) => e.to_string(),
        Ok(mut s) => {
            s.drain_into(&mut Store::new(1 << 16));
            s.error().expect("the row group does not decode")
        }
    };
    assert!(
        err.starts_with("series file 'x.parquet': ")
            && err.contains("the decoder failed (Decoder for dict should have been set)")
            && !err.contains('\n'),
        "{err}"
    );
}

/// arrow_ipc, crash 2 (from the fuzzer's `crash-clamp-in-row-without-time`, written out here):
/// a value beyond the f32 range in a row with no time was counted as clamped although the row
/// is skipped, so `values_clamped` said 2 for 1 stored value at ±f32::MAX. Rows t = 1, null, 3
/// with v = 1e300, 1e300, 2: one row skipped, one value clamped, two stored.
#[test]
fn a_clamped_value_in_a_row_without_time_is_not_counted() {
    use arrow_array::{Float64Array, Int64Array, RecordBatch};
    use std::sync::Arc;
    let t = Int64Array::from(vec![Some(1i64), None, Some(3)]);
    let v = Float64Array::from(vec![1e300, 1e300, 2.0]);
    let batch = RecordBatch::try_from_iter([
        ("t", Arc::new(t) as arrow_array::ArrayRef),
        ("v", Arc::new(v) as arrow_array::ArrayRef),
    ])
    .unwrap();
    let mut bytes = Vec::new();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut bytes, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    let mut source = vizdeck::series::open_columnar_bytes(&bytes, "x.arrow").unwrap();
    let mut store = Store::new(1 << 16);
    source.drain_into(&mut store);
    assert_eq!(source.rows_skipped(), 1);
    assert_eq!(source.values_clamped(), 1);
    let got: Vec<(f64, f32)> = store.get("v").unwrap().iter().collect();
    assert_eq!(got, [(1.0, f32::MAX), (3.0, 2.0)]);
    // The fuzzer's own input passes its checks.
    vizdeck::fuzzing::arrow_ipc(include_bytes!(
        "../../fuzz/corpus/arrow_ipc/crash-clamp-in-row-without-time"
    ));
}

/// parquet_file, crash 3 (minimised, `fuzz/corpus/parquet_file/crash-line-break-in-field-name`):
/// the parquet crate's error quoted a field name holding a carriage return (`tk\re`), so the
/// error naming the file was two lines. Columnar errors are now made one line.
#[test]
fn parquet_error_quoting_a_field_name_is_one_line() {
    let bytes = include_bytes!("../../fuzz/corpus/parquet_file/crash-line-break-in-field-name");
    let err = vizdeck::series::open_columnar_bytes(bytes, "x.parquet")
        .err()
        .expect("the schemas disagree")
        .to_string();
    assert!(
        err.starts_with("series file 'x.parquet': not a readable Parquet file: ")
            && !err.contains('\n')
            && !err.contains('\r'),
        "{err:?}"
    );
}

// Point clouds.

/// Hex text to bytes.
fn unhex(lines: &[&str]) -> Vec<u8> {
    let hex: String = lines.concat();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// las_file, crash 1: a LAZ 1.2 (point format 1, 12 points in one fixed-size chunk) whose
/// compressed GPS times make the `laz` crate's arithmetic decoder fail an assertion
/// (`sym < (1 << 16)`, laz 0.13 decoders.rs): a panic in the decoder. A LAZ decoder panic is
/// now an error naming the file (`pointcloud::laz_guard`): here the last chunk's count, found
/// by decoding it, stops where the decoder breaks, and reading the points says so.
#[test]
fn a_laz_chunk_that_breaks_the_decoder_is_an_error_naming_the_file() {
    use vizdeck::pointcloud::LasFile;
    let bytes = unhex(&[
        "4c4153460000000000000000000000000000000000000000010200000000000000000000000000000000000000000000",
        "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000e300",
        "4701000001000000811c000c0000000c000000000000000000000000000000000000007b14ae47e17a843f7b14ae47e1",
        "7a843ffca9f1d24d62503f0000000000408f400000000000000000000000000000000000000000006c8f400000000000",
        "408f40b81e85eb513828400000000000000000295c8fc2f528bc3f000000000000000000006c61737a697020656e636f",
        "6465640000bc562e0068747470733a2f2f6c61737a69702e6f7267000000000000000000000000000002000000020200",
        "000000000050c30000ffffffffffffffffffffffffffffffff0200060014000200070008000200060200000000000000",
        "00000000000000000000000000090000000000000000000000000061d3cf2d2229ca841cc74cc828000007028ce80939",
        "7d786cea0572300000f98a5a51f6754593d3c45bc500002710ea2a6f12aff3b37b3b000000ad1c8db8cf4a1997dcda4d",
        "000200a801000032fee2642b58e9000037100232af11de8153977e000006b0c5943329032494f6760000015a39227b41",
        "0a89028323f500008d64bb1bebea1e3ad1b34800004e3b42b7d362de21db816200000100000000000000010000004392",
        "000000",
    ]);
    assert_eq!(bytes.len(), 531);
    let path = std::path::Path::new("crash1.laz");
    let cursor = std::io::Cursor::new(bytes);
    let mut file = LasFile::from_reader(cursor, path, false).unwrap_or_else(|e| panic!("{e}"));
    let mut read = 0;
    let err = loop {
        match file.next_batch(4096) {
            Ok(Some(b)) => read += b.len(),
            Ok(None) => panic!("no error after {read} points"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        err.starts_with("point cloud 'crash1.laz': the data ends or breaks after "),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}

/// las_file, crash 2: a LAS 1.4 header (375 bytes, nothing after it) whose 64-bit point count
/// (7,268,150,848,791,636,810) times its record length (255) overflows u64: the `las` crate's
/// `offset_to_end_of_points` multiplies unchecked ("attempt to multiply with overflow" in
/// builds with overflow checks; a wrapped, wrong offset in release). Refused before the `las`
/// crate reads it, naming the file and the count.
#[test]
fn a_point_count_beyond_any_file_is_refused() {
    use vizdeck::pointcloud::LasFile;
    let bytes = unhex(&[
        "4c4153460000100000000000ff0600030000000000000000010400000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000001000062000000000000000000000000000000000000",
        "4c415346000028ffffff000000000000000000000000ffffff3b8556006919d8534600444aeb2d3b8556006919d85346",
        "00444aeb2d4cb0a8ddeaf6ffffffffffffff0fa7254698de00444aeb2d4cb0a8dd6418eaf6ffffffffffffff0fa72546",
        "98de718acf343b8556006919d8534600444aeb2d4cb0a8dd6418eaf6ffffffffffffff0fa7254698de8acf343b855600",
        "6919d8534600444aeb2d4cb0a8dd6418eaf6ffffffffffffff0fa7254698de718acf343b8556006919d8534600444aeb",
        "2d4cb0a8dd6418eaf6ffffffffffffff0fa7254698de00444aeb2d4cb0a8dd6418eaf6ffffffffffffff0fa7254698de",
        "718acf343b8556006919d8534600444aeb2d4cb0a8dd6418eaf6ffffffffffffff0fa7254698de",
    ]);
    assert_eq!(bytes.len(), 375);
    // LAS 1.4: legacy count (u32 at 107) 0, so the 64-bit count at 247 holds; record length
    // (u16 at 105) 255.
    assert_eq!(u32::from_le_bytes(bytes[107..111].try_into().unwrap()), 0);
    let count = u64::from_le_bytes(bytes[247..255].try_into().unwrap());
    assert_eq!(count, 7_268_150_848_791_636_810);
    assert!(count.checked_mul(255).is_none());
    let cursor = std::io::Cursor::new(bytes);
    let e = LasFile::from_reader(cursor, std::path::Path::new("crash2.las"), false)
        .err()
        .expect("refused");
    assert_eq!(
        e.to_string(),
        "point cloud 'crash2.las': the file ends early (truncated?): the header's point count \
         7268150848791636810 of 255-byte records is beyond any file"
    );
}

/// las_file, crash 3: a LAS 1.4 file whose first EVLR states a length of 183,513,841,927
/// bytes. The `las` crate allocates (and zero-fills) that length before reading it: the
/// fuzzer's input failed a 183 GB allocation (an abort, not an error). Here the same record on a
/// file of no points written by the `las` crate: refused before the `las` crate reads it,
/// naming the file, the record and the bytes that follow it.
#[test]
fn an_extended_vlr_longer_than_the_file_is_refused() {
    use vizdeck::pointcloud::LasFile;
    let mut b = las::Builder::from(las::Version::new(1, 4));
    b.point_format = las::point::Format::new(6).unwrap();
    let header = b.into_header().unwrap();
    let w = las::Writer::new(std::io::Cursor::new(Vec::new()), header).unwrap();
    let mut bytes = w.into_inner().unwrap().into_inner();
    let start = bytes.len() as u64;
    // LAS 1.4 header: start of the first EVLR (u64 at 235), number of EVLRs (u32 at 243).
    bytes[235..243].copy_from_slice(&start.to_le_bytes());
    bytes[243..247].copy_from_slice(&1u32.to_le_bytes());
    // EVLR header: reserved, user id (16), record id, length (u64 at 20), description (32).
    let mut evlr = vec![0u8; 60];
    evlr[2..6].copy_from_slice(b"fuzz");
    evlr[20..28].copy_from_slice(&183_513_841_927u64.to_le_bytes());
    bytes.extend_from_slice(&evlr);
    let cursor = std::io::Cursor::new(bytes);
    let e = LasFile::from_reader(cursor, std::path::Path::new("crash3.las"), false)
        .err()
        .expect("refused");
    assert_eq!(
        e.to_string(),
        format!(
            "point cloud 'crash3.las': the file ends early (truncated?): the extended VLR at \
             byte {start} claims 183513841927 bytes, 0 follow it"
        )
    );
}

/// A LAZ (point format 1: GPS time) whose coded GPS times switch from one of the decoder's four
/// sequences to the next again and again: the `laz` crate decoded each switch by calling itself,
/// so a few kilobytes recursed until the stack overflowed and the process aborted (no panic to
/// catch). With `vendor/laz`'s loop, every point the header announces is read on a thread with
/// a 1 MiB stack, each batch or the break reported as the loader reports it.
#[test]
fn laz_gps_sequence_switches_do_not_overflow_the_stack() {
    use vizdeck::pointcloud::{LasFile, PointCloudError};
    let input = include_bytes!("../../fuzz/corpus/las_file/crash-gps-sequence-switches");
    let read = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let path = std::path::Path::new("gps.laz");
            let cursor = std::io::Cursor::new(input.to_vec());
            let mut file = match LasFile::from_reader(cursor, path, false) {
                Ok(f) => f,
                Err(e) => return Err(e.to_string()),
            };
            let mut points = 0u64;
            loop {
                match file.next_batch(65_536) {
                    Ok(Some(b)) => points += b.len() as u64,
                    Ok(None) => return Ok((points, file.info().header_points, None)),
                    Err(e @ PointCloudError::Truncated { .. }) => {
                        return Ok((points, file.info().header_points, Some(e.to_string())));
                    }
                    Err(e) => return Err(e.to_string()),
                }
            }
        })
        .unwrap()
        .join()
        .expect("the reading thread finished (no stack overflow, no panic)");
    let (points, header, broke) = read.unwrap_or_else(|e| panic!("{e}"));
    assert!(points <= header, "{points} of {header}");
    if let Some(e) = broke {
        assert!(e.contains("gps.laz") && !e.contains('\n'), "{e}");
    } else {
        assert_eq!(points, header);
    }
}

/// A LAZ 1.4 (layered chunks) whose first chunk states a layer of 4 GB, and whose chunk table
/// gives that chunk a byte count just as large (so the layers "fit" the table's entry): the
/// decoder allocated and zero-filled the layer before reading it (found by the `las_file`
/// fuzzer as an out-of-memory). The chunks are now walked as the decoder walks them, at their
/// stated sizes, and none counts past the chunk table, which the data must end before: no
/// point is held, and reading says the data ends early, in one line naming the input.
#[test]
fn layered_chunks_are_walked_at_their_stated_sizes() {
    let input =
        include_bytes!("../../fuzz/corpus/las_file/crash-layered-chunk-beyond-its-table-size");
    let header = las::Reader::new(std::io::Cursor::new(input.to_vec()))
        .expect("the header reads")
        .header()
        .clone();
    let mut cursor = std::io::Cursor::new(input.to_vec());
    let held = vizdeck::pointcloud::held::points_held(&mut cursor, &header, input.len() as u64)
        .expect("a chunk table that holds together");
    // The first chunk (after the 8-byte table offset at the offset to point data, u32 at byte
    // 96): its first point raw (the two items' 36 bytes), its u32 point count, 10 layer sizes
    // (9 of the point, 1 of the colour). Its layers end past the chunk table.
    let start = u32::from_le_bytes(input[96..100].try_into().unwrap()) as usize + 8;
    let table = i64::from_le_bytes(input[start - 8..start].try_into().unwrap()) as u64;
    let word = |at: usize| u64::from(u32::from_le_bytes(input[at..at + 4].try_into().unwrap()));
    let sizes: u64 = (0..10).map(|k| word(start + 40 + 4 * k)).sum();
    assert!(start as u64 + 80 + sizes > table, "{sizes} bytes of layers");
    assert_eq!(held, Some(0));
    let mut file = vizdeck::pointcloud::LasFile::from_reader(
        std::io::Cursor::new(input.to_vec()),
        std::path::Path::new("layers.laz"),
        false,
    )
    .expect("the header is sound");
    let e = file
        .next_batch(4096)
        .expect_err("the data ends before the first chunk");
    assert!(
        e.to_string().contains("layers.laz") && !e.to_string().contains('\n'),
        "{e}"
    );
}

/// A LAZ whose VLR lists items of 65,516 and 2,048 bytes: the `laz` crate sums item sizes as a
/// u16, which overflows (a panic in a debug build, a wrapped 44-byte point in a release one, and
/// the chunk checks then read the wrong bytes). vizdeck sums them as u64 (found by the
/// `las_file` fuzzer); the file is then read or refused in one line naming it.
#[test]
fn laz_item_sizes_are_summed_without_overflow() {
    let input = include_bytes!("../../fuzz/corpus/las_file/crash-laz-items-over-u16");
    let reader = las::Reader::new(std::io::Cursor::new(input.to_vec()));
    // The VLR's items, read from its bytes: the header size (u16 at 94) is where the VLRs
    // start; the item count is a u16 at 32 bytes into the LASzip record (after 54 bytes of VLR
    // header), then (type, size, version) as three u16 each.
    let vlr = usize::from(u16::from_le_bytes([input[94], input[95]])) + 54;
    let count = usize::from(u16::from_le_bytes([input[vlr + 32], input[vlr + 33]]));
    let sizes: u64 = (0..count)
        .map(|k| {
            let at = vlr + 34 + 6 * k + 2;
            u64::from(u16::from_le_bytes([input[at], input[at + 1]]))
        })
        .sum();
    assert_eq!(sizes, 65_516 + 2_048);
    let items = reader
        .expect("the header reads")
        .header()
        .laz_vlr()
        .expect("the LASzip VLR decodes");
    assert_eq!(vizdeck::pointcloud::held::items_size(&items), sizes);
    vizdeck::fuzzing::las_file(input);
}
