//! The CPU copy into staging memory, split over several threads
//! ([`Strategy::ThreadedMap`](super::Strategy), and the staging arena of
//! [`Strategy::HostImport`](super::Strategy)): one thread's `memcpy` reaches about 14 GB/s into
//! mapped memory, well under what the memory system and the PCIe link carry.

use std::sync::atomic::AtomicUsize;

/// Smallest chunk one thread copies, bytes (4 MiB): below about twice this a copy stays on the
/// calling thread (a thread's start costs some 10–30 µs, a 4 MiB copy about 300 µs).
pub(crate) const MIN_CHUNK: usize = 4 << 20;

/// Most threads one copy uses by default (memory bandwidth is shared: more rarely helps).
pub(crate) const MAX_THREADS: usize = 8;

/// Threads a copy uses by default: `available_parallelism`, at most [`MAX_THREADS`], at least 1.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, MAX_THREADS)
}

/// A write-only chunk of a destination handed to one thread.
struct Chunk<'a>(wgpu::WriteOnly<'a, [u8]>);

// SAFETY: `WriteOnly<[u8]>` is a pointer and a length that are `Send` for any sized element
// (wgpu-types' impl only misses the unsized `[u8]`); each chunk is a disjoint range of one
// destination, written by exactly one thread, and every thread is joined (the scope) before the
// destination's borrow ends.
unsafe impl Send for Chunk<'_> {}

/// Copies `src` into `dst[..src.len()]` and zeroes the rest of `dst` (the padding to 4 bytes of an
/// upload), on up to `threads` threads (the calling one included; `std::thread::scope`) in
/// chunks of at least [`MIN_CHUNK`] bytes; small copies stay on the calling thread. `dst` is
/// write-only (mapped memory may be write-combined: `wgpu::BufferViewMut::slice`), or a plain
/// `&mut [u8]` (`.into()`). Returns the threads used.
///
/// `dst` shorter than `src` copies what fits (callers size it; never a panic).
pub fn fill<'a>(dst: impl Into<wgpu::WriteOnly<'a, [u8]>>, src: &[u8], threads: usize) -> usize {
    let dst: wgpu::WriteOnly<'a, [u8]> = dst.into();
    let n = src.len().min(dst.len());
    let Ok((mut body, mut pad)) = dst.split_at_checked(n) else {
        return 0;
    };
    pad.fill(0);
    let src = &src[..n];
    let parts = (n / MIN_CHUNK).clamp(1, threads.max(1));
    if parts == 1 {
        body.copy_from_slice(src);
        return 1;
    }
    // Chunks of equal size, rounded to 64 bytes (whole cache lines per thread).
    let chunk = n.div_ceil(parts).next_multiple_of(64);
    let mut used = 0;
    std::thread::scope(|s| {
        let mut rest = src;
        let mut mine = None;
        while !rest.is_empty() {
            let take = chunk.min(rest.len());
            let (d, tail) = match body.split_at_checked(take) {
                Ok(p) => p,
                Err(_) => break,
            };
            body = tail;
            let (s_, r) = rest.split_at(take);
            rest = r;
            used += 1;
            if mine.is_none() {
                mine = Some((d, s_));
            } else {
                let d = Chunk(d);
                s.spawn(move || {
                    let mut d = d;
                    d.0.copy_from_slice(s_)
                });
            }
        }
        if let Some((mut d, s_)) = mine {
            d.copy_from_slice(s_);
        }
    });
    used
}

/// Copies `src` into `dst` (the same length; a shorter `dst` takes what fits) in chunks of
/// `min_chunk` bytes (rounded up to 64: whole cache lines), shared out as they are taken: the
/// calling thread copies chunks one after the other from the first on, and as many rayon pool
/// threads as there are further chunks (at most the pool's size less one) are asked to join in
/// (`rayon::spawn`), each taking the next chunk not yet taken until none is left. The caller
/// returns once every chunk is copied: it waits only for helpers that are copying a chunk, never
/// for one that has not started (a busy or sleeping pool costs nothing but its help; a helper
/// that starts late finds nothing to take and touches nothing). So the copy takes at most about
/// what one thread takes, and every thread that joins in time shortens it. Below `2 · min_chunk`
/// bytes, or with `min_chunk == usize::MAX`, the calling thread copies alone. Returns the threads
/// that copied at least one chunk. ([`DirectBuffer::write`](super::direct::DirectBuffer::write).)
pub(crate) fn fill_pool(dst: &mut [u8], src: &[u8], min_chunk: usize) -> usize {
    use std::sync::Arc;
    use std::sync::atomic::Ordering::SeqCst;
    let n = src.len().min(dst.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    let helpers = rayon::current_num_threads().saturating_sub(1);
    if n / min_chunk.max(1) < 2 || helpers == 0 {
        dst.copy_from_slice(src);
        return 1;
    }
    let chunk = min_chunk.max(1).next_multiple_of(64);
    let shared = Arc::new(PooledCopy {
        dst: dst.as_mut_ptr(),
        src: src.as_ptr(),
        len: n,
        chunk,
        count: n.div_ceil(chunk),
        next: AtomicUsize::new(0),
        copying: AtomicUsize::new(0),
        threads: AtomicUsize::new(0),
    });
    for _ in 0..helpers.min(shared.count - 1) {
        let job = shared.clone();
        rayon::spawn(move || {
            // Counted as copying before taking a chunk: the caller's wait sees every helper
            // that can still take one (see `PooledCopy`).
            job.copying.fetch_add(1, SeqCst);
            if job.take_chunks() {
                job.threads.fetch_add(1, SeqCst);
            }
            job.copying.fetch_sub(1, SeqCst);
        });
    }
    let mine = usize::from(shared.take_chunks());
    // Every chunk is taken now; wait for the helpers still copying theirs.
    while shared.copying.load(SeqCst) != 0 {
        std::hint::spin_loop();
    }
    (mine + shared.threads.load(SeqCst)).max(1)
}

/// A [`fill_pool`] copy shared with the pool's threads. Chunk `i` is `len` bytes from `i · chunk`
/// (the last one shorter), handed out once by `next`. The pointers are valid until `fill_pool`
/// returns, which it does only after `next` has passed `count` and `copying` was seen at 0: a
/// helper counts itself in `copying` before taking an index, so one that took a chunk index
/// below `count` is waited for, and one counted later can only take an index past the end.
struct PooledCopy {
    dst: *mut u8,
    src: *const u8,
    len: usize,
    chunk: usize,
    count: usize,
    next: AtomicUsize,
    copying: AtomicUsize,
    threads: AtomicUsize,
}

// SAFETY: the pointers are only dereferenced for chunk indices below `count`, each by the one
// thread that took it, while `fill_pool` holds the borrows (see the struct's docs).
unsafe impl Send for PooledCopy {}
// SAFETY: as above; the counters are atomics.
unsafe impl Sync for PooledCopy {}

impl PooledCopy {
    /// Copies chunks until none is left; whether this thread copied any.
    fn take_chunks(&self) -> bool {
        let mut did = false;
        loop {
            let i = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if i >= self.count {
                return did;
            }
            let at = i * self.chunk;
            let len = self.chunk.min(self.len - at);
            // SAFETY: chunk i (in range: i < count) is this thread's alone, and the borrows of
            // `fill_pool` are alive (it has not returned: see `PooledCopy`); the ranges of `src`
            // and `dst` do not overlap (a shared and a unique borrow).
            unsafe { std::ptr::copy_nonoverlapping(self.src.add(at), self.dst.add(at), len) };
            did = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_copies_and_pads() {
        for (len, pad) in [(0usize, 3usize), (5, 3), (MIN_CHUNK * 3 + 7, 1)] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let mut dst = vec![0xAAu8; len + pad];
            let used = fill(&mut dst[..], &src, 4);
            assert_eq!(&dst[..len], &src[..]);
            assert!(dst[len..].iter().all(|&b| b == 0));
            assert!((1..=4).contains(&used));
        }
    }

    #[test]
    fn fill_pool_copies_in_chunks() {
        for (len, min_chunk) in [
            (0usize, 64usize),
            (1000, usize::MAX),
            (1000, 0),
            (300_001, 4096),
            (1 << 22, 64),
        ] {
            let src: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
            let mut dst = vec![0xAAu8; len];
            let used = fill_pool(&mut dst, &src, min_chunk);
            assert_eq!(dst, src);
            let expected_max = (len / min_chunk.max(1)).max(1);
            assert!(
                used >= 1 && used <= expected_max,
                "{used} threads for {len}"
            );
        }
    }
}
