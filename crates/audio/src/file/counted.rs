//! A symphonia byte source that publishes how far it has been read ([`Counted`]), and the read
//! and report sizes of a decode with progress.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use symphonia::core::io::{MediaSource, MediaSourceStream};

/// Bytes read at a time by [`decode_file_with`](super::decode_file_with).
pub(super) const READ_PIECE: u64 = 8 << 20;

/// Packets decoded between two calls of a progress callback.
pub(super) const PACKETS_PER_REPORT: u32 = 64;

/// A [`MediaSource`] that publishes how far it has been read (its position), for progress.
pub(super) struct Counted<M> {
    inner: M,
    pos: Arc<AtomicU64>,
}

impl<M: MediaSource> Read for Counted<M> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<M: MediaSource> std::io::Seek for Counted<M> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let at = self.inner.seek(to)?;
        self.pos.store(at, Ordering::Relaxed);
        Ok(at)
    }
}

impl<M: MediaSource> MediaSource for Counted<M> {
    fn is_seekable(&self) -> bool {
        self.inner.is_seekable()
    }

    fn byte_len(&self) -> Option<u64> {
        self.inner.byte_len()
    }
}

/// `source` as a stream whose read position goes to `pos`.
pub(super) fn counted<'s>(
    source: impl MediaSource + 's,
    pos: &Arc<AtomicU64>,
) -> MediaSourceStream<'s> {
    pos.store(0, Ordering::Relaxed);
    MediaSourceStream::new(
        Box::new(Counted {
            inner: source,
            pos: pos.clone(),
        }),
        Default::default(),
    )
}
