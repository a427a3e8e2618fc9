//! What the time-series GPU tests share: the CPU M4 reference and the exact comparison of GPU
//! M4 columns with it.

use vizdeck::series::decimate::{Column, decimate_m4_rel};
use vizdeck::series::store::Series;

/// The CPU M4 of `s` over `[r0, r1)` (times relative to the series' origin) in `columns`
/// columns.
pub fn cpu(s: &Series, r0: f64, r1: f64, columns: usize) -> Vec<Column> {
    let mut out = Vec::new();
    decimate_m4_rel(s, r0, r1, columns, &mut out);
    out
}

/// Asserts that the GPU's columns equal the CPU's: as many, each with the same count, min and
/// max, and bitwise the same first and last values.
pub fn assert_same(gpu_cols: &[Column], cpu_cols: &[Column], what: &str) {
    assert_eq!(gpu_cols.len(), cpu_cols.len(), "{what}: column count");
    for (i, (g, c)) in gpu_cols.iter().zip(cpu_cols).enumerate() {
        // Bitwise on everything but ±0 (min/max of 0.0 and -0.0 may pick either).
        let same = g.count == c.count
            && g.min == c.min
            && g.max == c.max
            && g.first.to_bits() == c.first.to_bits()
            && g.last.to_bits() == c.last.to_bits();
        assert!(same, "{what}: column {i}: gpu {g:?} cpu {c:?}");
    }
}
