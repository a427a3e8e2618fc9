//! The CPU copy into staging memory, split over several threads
//! ([`Strategy::ThreadedMap`](super::Strategy), and the staging arena of
//! [`Strategy::HostImport`](super::Strategy)): one thread's `memcpy` reaches about 14 GB/s into
//! mapped memory, well under what the memory system and the PCIe link carry.

/// Smallest chunk one thread copies, bytes (4 MiB): below about twice this a copy stays on the
/// calling thread (a thread's start costs some 10–30 µs, a 4 MiB copy about 300 µs).
pub const MIN_CHUNK: usize = 4 << 20;

/// Most threads one copy uses by default (memory bandwidth is shared: more rarely helps).
pub const MAX_THREADS: usize = 8;

/// Threads a copy uses by default: `available_parallelism`, at most [`MAX_THREADS`], at least 1.
pub fn default_threads() -> usize {
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

/// One chunk of a [`fill_pool`] copy: its destination and source.
type CopyPair<'a, 'b> = (&'a mut [u8], &'b [u8]);

/// Copies `src` into `dst` (the same length; a shorter `dst` takes what fits) in chunks of
/// `min_chunk` bytes (rounded up to 64: whole cache lines), shared out as they are taken: the
/// calling thread copies chunks one after the other from the first on, and as many rayon pool
/// threads as there are further chunks (at most the pool's size less one) are asked to join in,
/// each taking the next chunk not yet taken until none is left. So no chunk waits for a thread
/// to start ([`fill`] starts its own, 10–30 µs each, and hands each a fixed share): with the pool
/// asleep the copy takes about what one thread takes, and every thread that wakes in time
/// shortens it. Below `2 · min_chunk` bytes, or with `min_chunk == usize::MAX`, the calling
/// thread copies alone. Returns the threads that copied at least one chunk.
/// ([`DirectBuffer::write`](super::direct::DirectBuffer::write).)
pub fn fill_pool(dst: &mut [u8], src: &[u8], min_chunk: usize) -> usize {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let n = src.len().min(dst.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    let helpers = rayon::current_num_threads().saturating_sub(1);
    if n / min_chunk.max(1) < 2 || helpers == 0 {
        dst.copy_from_slice(src);
        return 1;
    }
    let chunk = min_chunk.next_multiple_of(64);
    // One slot per chunk, each taken once (by the index `next` hands out): its lock is never
    // contended, it only moves the `&mut` to the thread that took the index.
    let slots: Vec<Mutex<Option<CopyPair>>> = dst
        .chunks_mut(chunk)
        .zip(src.chunks(chunk))
        .map(|p| Mutex::new(Some(p)))
        .collect();
    let next = AtomicUsize::new(0);
    let threads = AtomicUsize::new(0);
    let work = || {
        let mut did = false;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(i) else { break };
            let taken = slot.lock().ok().and_then(|mut s| s.take());
            if let Some((d, s_)) = taken {
                d.copy_from_slice(s_);
                did = true;
            }
        }
        if did {
            threads.fetch_add(1, Ordering::Relaxed);
        }
    };
    rayon::in_place_scope(|s| {
        for _ in 0..helpers.min(slots.len() - 1) {
            s.spawn(|_| work());
        }
        work();
    });
    threads.load(Ordering::Relaxed).max(1)
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
        for (len, min_chunk) in [(0usize, 64usize), (1000, usize::MAX), (300_001, 4096)] {
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
