//! Percentiles by nearest rank (the definition frame-time tools use: a percentile is a value
//! that was measured, never an interpolation between two).

/// The `p`-th percentile (0..=100, clamped; NaN is 0) of `sorted` (ascending) by nearest rank;
/// 0.0 for an empty slice.
pub fn percentile_nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
    // p·n first: exact for integer p and n, so 95·100/100 is exactly 95. The tiny tolerance keeps a
    // rounding error just above an integer from bumping the rank.
    let x = p * n as f64 / 100.0;
    let rank = (x - 1e-9 * x.max(1.0)).ceil();
    let rank = (rank.max(1.0) as usize).min(n);
    sorted[rank - 1]
}
