//! How far indexing has come ([`Progress`]): counters the indexing threads bump and the frame
//! thread reads as a fraction, a rate and a line of text.

use std::sync::atomic::{AtomicU64, Ordering};

/// How far indexing has come, shared with the frame thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Points decoded so far, and the count the file announces.
    pub decoded: AtomicU64,
    /// See `decoded`.
    pub expected: AtomicU64,
    /// Chunks indexed so far, and their number (0 until known).
    pub chunks_done: AtomicU64,
    /// See `chunks_done`.
    pub chunks: AtomicU64,
}

impl Progress {
    /// Fraction done in [0, 1]: decoding is the first half, the chunks the second.
    pub fn fraction(&self) -> f32 {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed) as f32;
        let d = (get(&self.decoded) / get(&self.expected).max(1.0)).min(1.0);
        let c = get(&self.chunks_done) / get(&self.chunks).max(1.0);
        0.5 * d + 0.5 * c.min(1.0)
    }

    /// Where indexing stands `elapsed_s` seconds after it started: the estimate of the whole
    /// ([`Progress::fraction`], the time left at the rate so far, points decoded a second while
    /// decoding) and one line for a bar: `"decoding 2.00 M of 8.00 M points · 12 % · 1.00 M
    /// points/s · 0:14 left"`, then `"indexing chunk 3 of 12 · 62 % · 0:06 left"`.
    pub fn describe(&self, elapsed_s: f64) -> (vizdeck_base::progress::Estimate, String) {
        use vizdeck_base::progress::{Estimate, amount_text};
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (decoded, expected) = (get(&self.decoded), get(&self.expected));
        let (done, chunks) = (get(&self.chunks_done), get(&self.chunks));
        let decoding = chunks == 0;
        let per_s =
            (decoding && decoded > 0 && elapsed_s > 0.0).then(|| decoded as f64 / elapsed_s);
        let e = Estimate::from_fraction(f64::from(self.fraction()), elapsed_s, per_s);
        let stage = if !decoding {
            format!("indexing chunk {} of {chunks}", (done + 1).min(chunks))
        } else if expected > 0 {
            format!(
                "decoding {} of {}",
                vizdeck_base::progress::count_text(decoded as f64),
                amount_text(expected as f64, "points")
            )
        } else {
            "opening".to_string()
        };
        (e, format!("{stage} · {}", e.text("points")))
    }
}

#[cfg(test)]
mod tests {
    use super::Progress;
    use std::sync::atomic::Ordering;

    #[test]
    fn indexing_progress_reads_as_worked_by_hand() {
        let p = Progress::default();
        p.decoded.store(2_000_000, Ordering::Relaxed);
        p.expected.store(8_000_000, Ordering::Relaxed);
        // Decoding is the first half: a quarter decoded is 1/8 of the whole; 2 s for 1/8 leaves
        // 14 s; 2 M points in 2 s.
        let (e, text) = p.describe(2.0);
        assert_eq!(e.fraction, 0.125);
        assert_eq!(e.eta_s, Some(14.0));
        assert_eq!(e.per_s, Some(1e6));
        assert_eq!(
            text,
            "decoding 2.00 M of 8.00 M points · 12 % · 1.00 M points/s · 0:14 left"
        );
        // Decoded; 1 of 4 chunks indexed: 1/2 + 1/8 = 5/8 in 10 s leaves 6 s.
        p.decoded.store(8_000_000, Ordering::Relaxed);
        p.chunks.store(4, Ordering::Relaxed);
        p.chunks_done.store(1, Ordering::Relaxed);
        let (e, text) = p.describe(10.0);
        assert_eq!(e.fraction, 0.625);
        assert_eq!(e.eta_s, Some(6.0));
        assert_eq!(e.per_s, None);
        assert_eq!(text, "indexing chunk 2 of 4 · 62 % · 0:06 left");
    }
}
