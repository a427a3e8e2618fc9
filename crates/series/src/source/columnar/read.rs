//! The Parquet and Arrow IPC readers behind a columnar source: one row group (Parquet) or
//! record batch (IPC) at a time through the projection, footer checks that refuse what would
//! make the decoders panic, and a guard that turns a decoder's panic into an error.

use super::*;

use arrow_array::RecordBatch;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use std::io::{Seek, SeekFrom};

/// Record batches of a file in order, each with the columns of the projection.
pub(super) type Batches = Box<dyn Iterator<Item = Result<RecordBatch, String>> + Send>;

/// Runs `f`, a call into the parquet or arrow-ipc decoder, which assert on some inconsistencies
/// of corrupt files (e.g. "Decoder for dict should have been set" for dictionary-encoded pages
/// without a dictionary page): a panic there becomes an error (one line) instead of ending the
/// thread or the app.
pub(super) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!(
            "the decoder failed ({})",
            vizdeck_base::text::one_line(&why)
        )
    })
}

/// [`Batches`] whose decoder calls are [`guarded`]: a panic is the last item, an error.
pub(super) struct Guarded<I>(Option<I>);

impl<I: Iterator<Item = Result<RecordBatch, String>>> Iterator for Guarded<I> {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = self.0.as_mut()?;
        match guarded(|| inner.next()) {
            Ok(item) => item,
            Err(e) => {
                self.0 = None;
                Some(Err(e))
            }
        }
    }
}

/// A Parquet file's row groups, one after the other: a reader is built for one row group at a
/// time and yields its rows in record batches of [`READ_ROWS`].
pub(super) struct RowGroups<R> {
    file: R,
    meta: ArrowReaderMetadata,
    mask: ProjectionMask,
    next_group: usize,
    current: Option<ParquetRecordBatchReader>,
}

/// Where a Parquet file's bytes come from: the file, or memory ([`open_columnar_bytes`]); each
/// row group's reader gets its own handle.
pub(super) trait ParquetInput:
    parquet::file::reader::ChunkReader + Sized + Send + 'static
{
    fn reopen(&self) -> Result<Self, String>;
}

impl ParquetInput for File {
    fn reopen(&self) -> Result<File, String> {
        self.try_clone().map_err(|e| e.to_string())
    }
}

impl ParquetInput for bytes::Bytes {
    fn reopen(&self) -> Result<bytes::Bytes, String> {
        Ok(self.clone())
    }
}

impl<R: ParquetInput> Iterator for RowGroups<R> {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let groups = self.meta.metadata().num_row_groups();
        loop {
            if let Some(reader) = &mut self.current {
                match reader.next() {
                    Some(Ok(b)) => return Some(Ok(b)),
                    Some(Err(e)) => {
                        self.current = None;
                        let g = std::mem::replace(&mut self.next_group, groups);
                        return Some(Err(format!("row group {} of {groups}: {e}", g)));
                    }
                    None => self.current = None,
                }
            }
            if self.next_group >= groups {
                return None;
            }
            let g = self.next_group;
            self.next_group += 1;
            let built = self.file.reopen().and_then(|file| {
                ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.meta.clone())
                    .with_row_groups(vec![g])
                    .with_projection(self.mask.clone())
                    .with_batch_size(READ_ROWS)
                    .build()
                    .map_err(|e| e.to_string())
            });
            match built {
                Ok(r) => self.current = Some(r),
                Err(e) => {
                    self.next_group = groups;
                    return Some(Err(format!("row group {} of {groups}: {e}", g + 1)));
                }
            }
        }
    }
}

/// Opens `file` (Parquet) for the columns [`plan`] chooses: the schema and the record batches.
pub(super) fn open_parquet<R: ParquetInput>(
    file: R,
    shown: &str,
) -> Result<(Plan, Batches, Option<RecordBatch>), SeriesError> {
    let meta = guarded(|| ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()))
        .and_then(|m| m.map_err(|e| e.to_string()))
        .map_err(|e| invalid(shown, format!("not a readable Parquet file: {e}")))?;
    check_chunks(meta.metadata(), file.len())
        .map_err(|e| invalid(shown, format!("not a readable Parquet file: {e}")))?;
    let plan = plan(meta.schema(), shown, ColumnarFormat::Parquet)?;
    let mut cols: Vec<usize> = plan.values.iter().map(|&(c, _)| c).collect();
    cols.push(plan.time);
    let mask = ProjectionMask::roots(meta.parquet_schema(), cols);
    let batches = RowGroups {
        file,
        meta,
        mask,
        next_group: 0,
        current: None,
    };
    let mut batches = Guarded(Some(batches));
    let first = first_batch(&mut batches, shown)?;
    Ok((plan, Box::new(batches), first))
}

/// Checks that every column chunk of the footer `meta` lies inside the file of `file_len` bytes
/// (the parquet crate panics on a negative offset or size, and a chunk past the end can only
/// fail later): the problem, naming the row group and column, otherwise.
pub(super) fn check_chunks(
    meta: &parquet::file::metadata::ParquetMetaData,
    file_len: u64,
) -> Result<(), String> {
    for (g, group) in meta.row_groups().iter().enumerate() {
        for (c, col) in group.columns().iter().enumerate() {
            let start = col
                .dictionary_page_offset()
                .unwrap_or_else(|| col.data_page_offset());
            let len = col.compressed_size();
            let end = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(s, l)| s.checked_add(l));
            if end.is_none_or(|e| e > file_len) {
                return Err(format!(
                    "row group {} column {}: bytes {start} + {len} lie outside the file of \
                     {file_len} bytes",
                    g + 1,
                    c + 1
                ));
            }
        }
    }
    Ok(())
}

/// Checks that the blocks an Arrow IPC file's footer lists (dictionaries, record batches) lie
/// inside the file (arrow-ipc panics on a negative length); the problem, naming the block,
/// otherwise. A footer that does not read is left to arrow-ipc to report.
pub(super) fn check_ipc_blocks<R: Read + Seek>(file: &mut R) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let len = file.seek(SeekFrom::End(0)).map_err(io)?;
    let footer = (|| {
        let mut tail = [0u8; 10];
        file.seek(SeekFrom::End(-10)).ok()?;
        file.read_exact(&mut tail).ok()?;
        let footer_len = arrow_ipc::reader::read_footer_length(tail).ok()?;
        if footer_len as u64 + 10 > len {
            return None;
        }
        file.seek(SeekFrom::End(-10 - footer_len as i64)).ok()?;
        let mut footer = vec![0u8; footer_len];
        file.read_exact(&mut footer).ok()?;
        Some(footer)
    })();
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let Some(footer) = footer else {
        return Ok(());
    };
    let Ok(footer) = arrow_ipc::root_as_footer(&footer) else {
        return Ok(());
    };
    for (what, blocks) in [
        ("dictionary", footer.dictionaries()),
        ("record batch", footer.recordBatches()),
    ] {
        for (i, b) in blocks.into_iter().flatten().enumerate() {
            let (at, meta, body) = (b.offset(), b.metaDataLength(), b.bodyLength());
            let end = u64::try_from(at)
                .ok()
                .zip(u64::try_from(meta).ok())
                .zip(u64::try_from(body).ok())
                .and_then(|((a, m), b)| a.checked_add(m)?.checked_add(b));
            if end.is_none_or(|e| e > len) {
                return Err(format!(
                    "{what} {}: block at {at} of {meta} + {body} bytes lies outside the file \
                     of {len} bytes",
                    i + 1
                ));
            }
        }
    }
    Ok(())
}

/// Opens `file` (Arrow IPC, file or stream format by its first bytes) for the columns [`plan`]
/// chooses: the schema and the record batches.
pub(super) fn open_ipc<R: Read + Seek + Send + 'static>(
    mut file: R,
    shown: &str,
    stream: bool,
) -> Result<(Plan, Batches, Option<RecordBatch>), SeriesError> {
    use arrow_ipc::reader::{FileReader, StreamReader};
    let what = if stream {
        "not a readable Arrow IPC stream"
    } else {
        "not a readable Arrow IPC file"
    };
    let bad = |e: String| invalid(shown, format!("{what}: {e}"));
    // The reader's constructor, guarded (it reads the dictionaries of a file).
    fn flat<T>(r: Result<Result<T, arrow_schema::ArrowError>, String>) -> Result<T, String> {
        r.and_then(|r| r.map_err(|e| e.to_string()))
    }
    let io = |source| SeriesError::Io {
        path: shown.to_string(),
        source,
    };
    if !stream {
        check_ipc_blocks(&mut file).map_err(|e| invalid(shown, format!("{what}: {e}")))?;
    }
    // The schema first, then the reader again with the projection.
    let schema = if stream {
        flat(guarded(|| StreamReader::try_new_buffered(&mut file, None)))
            .map_err(bad)?
            .schema()
    } else {
        flat(guarded(|| FileReader::try_new_buffered(&mut file, None)))
            .map_err(bad)?
            .schema()
    };
    let plan = plan(&schema, shown, ColumnarFormat::ArrowIpc)?;
    let mut cols: Vec<usize> = plan.values.iter().map(|&(c, _)| c).collect();
    cols.push(plan.time);
    cols.sort_unstable();
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let name = |i: usize| format!("record batch {}: ", i + 1);
    let batches: Batches = if stream {
        let r = flat(guarded(|| StreamReader::try_new_buffered(file, Some(cols)))).map_err(bad)?;
        Box::new(
            r.enumerate()
                .map(move |(i, b)| b.map_err(|e| format!("{}{e}", name(i)))),
        )
    } else {
        let r = flat(guarded(|| FileReader::try_new_buffered(file, Some(cols)))).map_err(bad)?;
        Box::new(
            r.enumerate()
                .map(move |(i, b)| b.map_err(|e| format!("{}{e}", name(i)))),
        )
    };
    let mut batches: Batches = Box::new(Guarded(Some(batches)));
    let first = first_batch(&mut batches, shown)?;
    Ok((plan, batches, first))
}

/// The first record batch with rows (`None`: the file has none); an error names the file.
pub(super) fn first_batch(
    batches: &mut impl Iterator<Item = Result<RecordBatch, String>>,
    shown: &str,
) -> Result<Option<RecordBatch>, SeriesError> {
    for b in batches {
        let b = b.map_err(|e| invalid(shown, e))?;
        if b.num_rows() > 0 {
            return Ok(Some(b));
        }
    }
    Ok(None)
}
