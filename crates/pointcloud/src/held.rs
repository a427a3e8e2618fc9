//! How many point records a LAS/LAZ file's data holds, which may be fewer than its header
//! claims (a file cut short, a writer that set the count before it ran out).
//!
//! - LAS: the records between the offset to point data and the end of the point data (the
//!   first EVLR of a LAS 1.4 file, else the end of the file), whole records only.
//! - LAZ: what the chunk table lists (LASzip: an i64 offset to the table right at the start of
//!   the point data; the table holds per chunk its byte count and, for variable-size chunks,
//!   its point count). With fixed-size chunks the last chunk's count is not stored: it is found
//!   by decoding that chunk until its bytes run out, as the `laz` crate's parallel decoder does
//!   (only when the header's count reaches into the last chunk).
//!
//! The `las` crate trusts the header: its LAZ reader fills what the data lacks with zeros
//! (phantom points at the offset), its LAS reader reads EVLR bytes as points. [`LasFile`]
//! reads no more than [`points_held`] and reports the difference.
//!
//! [`LasFile`]: super::LasFile

use std::io::{Read, Seek, SeekFrom};

use laz::laszip::{ChunkTable, LazItemType, LazVlr};
use laz::record::{RecordDecompressor, SequentialPointRecordDecompressor};

use super::laz_guard::guarded;

/// Refuses what the `las` crate (0.11) would read blindly from the header of the file in `read`
/// (`file_len` bytes): a point count whose records' end overflows u64 (its
/// `offset_to_end_of_points` multiplies unchecked), and a first EVLR longer than the file (it
/// allocates and zero-fills the length the file states before reading: 183 GB for a garbled
/// one). A header that does not parse passes (the `las` crate says why).
///
/// # Errors
///
/// A one-line reason.
pub(crate) fn check_layout<R: Read + Seek>(read: &mut R, file_len: u64) -> Result<(), String> {
    read.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let Ok(raw) = las::raw::Header::read_from(&mut *read) else {
        return Ok(());
    };
    // LAS 1.4 R15 §2.4: a non-zero legacy count is the one to use.
    let count = match (raw.number_of_point_records, raw.large_file) {
        (0, Some(large)) => large.number_of_point_records,
        (legacy, _) => u64::from(legacy),
    };
    // The `las` crate seeks there (for LAZ too): beyond i64 a file refuses the seek (EINVAL)
    // where bytes in memory do not.
    let end = count
        .checked_mul(u64::from(raw.point_data_record_length))
        .and_then(|b| b.checked_add(u64::from(raw.offset_to_point_data)));
    if end.is_none_or(|e| e > i64::MAX as u64) {
        return Err(format!(
            "the header's point count {count} of {}-byte records is beyond any file",
            raw.point_data_record_length
        ));
    }
    if let Some(evlr) = raw.evlr
        && let Some(length_at) = evlr.start_of_first_evlr.checked_add(20)
        && length_at.checked_add(8).is_some_and(|end| end <= file_len)
    {
        let mut b = [0u8; 8];
        read.seek(SeekFrom::Start(length_at))
            .and_then(|_| read.read_exact(&mut b))
            .map_err(|e| e.to_string())?;
        let length = u64::from_le_bytes(b);
        let room = file_len.saturating_sub(evlr.start_of_first_evlr.saturating_add(60));
        if length > room {
            return Err(format!(
                "the extended VLR at byte {} claims {length} bytes, {room} follow it",
                evlr.start_of_first_evlr
            ));
        }
    }
    Ok(())
}

/// Point records the data of the file in `read` (`file_len` bytes, header `header`) holds, or
/// `None` when that cannot be told (a LAZ without a chunk table: the decoder finds the end).
///
/// # Errors
///
/// A one-line reason when the chunk table cannot hold together (more chunks than bytes, a
/// table that does not decode): the file is broken.
pub fn points_held<R: Read + Seek>(
    read: &mut R,
    header: &las::Header,
    file_len: u64,
) -> Result<Option<u64>, String> {
    read.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let raw = las::raw::Header::read_from(&mut *read).map_err(|e| e.to_string())?;
    let start = u64::from(raw.offset_to_point_data);
    let end = raw
        .evlr
        .map(|e| e.start_of_first_evlr)
        .filter(|&e| e >= start && e <= file_len)
        .unwrap_or(file_len);
    let format = header.point_format();
    if !format.is_compressed {
        let record = u64::from(format.len()).max(1);
        return Ok(Some(end.saturating_sub(start) / record));
    }
    let Ok(vlr) = header.laz_vlr() else {
        return Ok(None);
    };
    read.seek(SeekFrom::Start(start))
        .map_err(|e| e.to_string())?;
    let mut offset = [0u8; 8];
    if read.read_exact(&mut offset).is_err() {
        return Ok(None);
    }
    let mut table_at = i64::from_le_bytes(offset);
    let data_start = start + 8;
    if table_at <= start as i64 && file_len >= 8 {
        // A writer that could not seek back stores the offset in the last 8 bytes instead.
        read.seek(SeekFrom::Start(file_len - 8))
            .map_err(|e| e.to_string())?;
        read.read_exact(&mut offset).map_err(|e| e.to_string())?;
        table_at = i64::from_le_bytes(offset);
    }
    if table_at <= start as i64 || table_at as u64 > file_len.saturating_sub(8) {
        // No chunk table: the decoder finds the end of the data itself.
        return Ok(None);
    }
    let table_at = table_at as u64;
    // Layered chunks (LAZ 1.4) as the decoder finds them, one after the other at the sizes they
    // state (the table's byte counts may say otherwise): none is decoded past the first whose
    // layers do not fit before the table.
    let layered = layer_count(&vlr).map(|layers| {
        layered_points(
            read,
            data_start,
            table_at,
            items_size(&vlr),
            layers,
            header.number_of_points(),
        )
    });
    let cap = |points: u64| layered.map_or(points, |l| points.min(l));
    read.seek(SeekFrom::Start(table_at + 4))
        .map_err(|e| e.to_string())?;
    let mut n = [0u8; 4];
    read.read_exact(&mut n).map_err(|e| e.to_string())?;
    let chunks = u64::from(u32::from_le_bytes(n));
    // Every chunk holds at least one byte before the table.
    if chunks > table_at.saturating_sub(data_start) {
        return Err(format!(
            "the LAZ chunk table lists {chunks} chunks in {} bytes of data",
            table_at.saturating_sub(data_start)
        ));
    }
    read.seek(SeekFrom::Start(start))
        .map_err(|e| e.to_string())?;
    let table = guarded(|| ChunkTable::read_from(&mut *read, &vlr))?
        .map_err(|e| format!("the LAZ chunk table does not decode: {e}"))?;
    let entries = table.as_ref();
    let Some(last) = entries.last() else {
        return Ok(Some(cap(0)));
    };
    if let Some(layers) = layer_count(&vlr) {
        // A layered chunk whose layers do not fit in it ends the data before it.
        let mut at = data_start;
        let mut points = 0u64;
        for e in entries {
            if !layers_fit(read, at, e.byte_count, items_size(&vlr), layers) {
                return Ok(Some(cap(points)));
            }
            points = points.saturating_add(e.point_count);
            at = at.saturating_add(e.byte_count);
        }
    }
    let mut before_last = 0u64;
    let mut last_at = data_start;
    for e in &entries[..entries.len() - 1] {
        before_last = before_last.saturating_add(e.point_count);
        last_at = last_at.saturating_add(e.byte_count);
    }
    if vlr.uses_variable_size_chunks() {
        return Ok(Some(cap(before_last.saturating_add(last.point_count))));
    }
    if header.number_of_points() <= before_last {
        return Ok(Some(cap(before_last)));
    }
    let last_bytes = last.byte_count.min(table_at.saturating_sub(last_at));
    // Only whether the last chunk reaches the header's count matters.
    let most = last
        .point_count
        .min(header.number_of_points() - before_last);
    let in_last = last_chunk_points(read, &vlr, last_at, last_bytes, most);
    Ok(Some(cap(before_last.saturating_add(in_last))))
}

/// Bytes of one point as the LAZ items describe it: the sum of their sizes (the `laz` crate's
/// `LazVlr::items_size` sums them as a u16, which a stranger's VLR overflows).
pub fn items_size(vlr: &LazVlr) -> u64 {
    vlr.items().iter().map(|i| u64::from(i.size())).sum()
}

/// Points in the layered chunks (LAZ 1.4) that follow each other from `at` up to `end` (the chunk
/// table), at the sizes they state, as the decoder meets them: each chunk is its first point (`point` bytes, raw), its point count (u32), its
/// `layers` layer sizes (u32 each) and those layers. Counted until a chunk's layers do not fit
/// before `end` (or its head cannot be read), or `most` points are reached.
fn layered_points<R: Read + Seek>(
    read: &mut R,
    mut at: u64,
    end: u64,
    point: u64,
    layers: u64,
    most: u64,
) -> u64 {
    let head = point + 4 + 4 * layers;
    let mut points = 0u64;
    while points < most && at.saturating_add(head) <= end {
        let mut b = vec![0u8; head as usize];
        if read
            .seek(SeekFrom::Start(at))
            .and_then(|_| read.read_exact(&mut b))
            .is_err()
        {
            break;
        }
        let word = |i: u64| {
            let i = i as usize;
            u64::from(u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]))
        };
        let count = word(point);
        let sizes: u64 = (0..layers).map(|k| word(point + 4 + 4 * k)).sum();
        let bytes = head + sizes;
        if count == 0 || at.saturating_add(bytes) > end {
            break;
        }
        points = points.saturating_add(count);
        at += bytes;
    }
    points.min(most)
}

/// Points in the fixed-size chunk of `bytes` bytes at `at` (at most `most`): decoded until
/// its bytes run out. A chunk that breaks counts the points before the break.
fn last_chunk_points<R: Read + Seek>(
    read: &mut R,
    vlr: &LazVlr,
    at: u64,
    bytes: u64,
    most: u64,
) -> u64 {
    let mut chunk = vec![0u8; bytes as usize];
    if read
        .seek(SeekFrom::Start(at))
        .and_then(|_| read.read_exact(&mut chunk))
        .is_err()
    {
        return 0;
    }
    // Item versions 3 and 4 are LAZ 1.4's layered chunks (the `laz` crate's own test): each
    // holds its point count (u32, after its first point), read as it is (decoding would first allocate the
    // layers at the sizes the chunk states).
    if vlr.items().first().is_some_and(|i| i.version() >= 3) {
        // After the chunk's first point, raw.
        let at = items_size(vlr) as usize;
        let count = chunk
            .get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
        return u64::from(count).min(most);
    }
    let src = std::io::Cursor::new(chunk);
    let mut decoder = SequentialPointRecordDecompressor::new(src);
    if decoder.set_fields_from(vlr.items()).is_err() {
        return 0;
    }
    let size = decoder.record_size().max(1);
    let mut point = vec![0u8; size];
    let mut n = 0;
    // A chunk that breaks the decoder counts the points before the break.
    while n < most && guarded(|| decoder.decompress_next(&mut point)).is_ok_and(|r| r.is_ok()) {
        n += 1;
    }
    n
}

/// Layers of a LAZ 1.4 layered chunk of the items of `vlr` (after its u32 point count, one u32
/// size a layer: point 14 has 9, RGB 1, RGB + NIR 2, wave packets 1, extra bytes one a byte),
/// or `None` for pointwise chunks (LAZ 1.0–1.3 items).
pub(crate) fn layer_count(vlr: &LazVlr) -> Option<u64> {
    let mut layers = 0u64;
    for item in vlr.items() {
        layers += match item.item_type() {
            LazItemType::Point14 => 9,
            LazItemType::RGB14 | LazItemType::WavePacket14 => 1,
            LazItemType::RGBNIR14 => 2,
            LazItemType::Byte14(n) => u64::from(n),
            _ => return None,
        };
    }
    Some(layers)
}

/// Whether the layered chunk of `bytes` bytes at `at` (points of `point` bytes) holds the
/// layers it states (the `laz`
/// crate allocates and zero-fills each layer at its stated size before reading it: a garbled
/// size costs gigabytes).
pub(crate) fn layers_fit<R: Read + Seek>(
    read: &mut R,
    at: u64,
    bytes: u64,
    point: u64,
    layers: u64,
) -> bool {
    // The chunk's first point, raw (`point` bytes), its u32 point count, the layers' sizes.
    let head = point + 4 + 4 * layers;
    if head > bytes {
        return false;
    }
    let mut b = vec![0u8; head as usize];
    if read
        .seek(SeekFrom::Start(at))
        .and_then(|_| read.read_exact(&mut b))
        .is_err()
    {
        return false;
    }
    let sizes: u64 = b[(point + 4) as usize..]
        .chunks_exact(4)
        .map(|c| u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .sum();
    head + sizes <= bytes
}
