//! The WGSL mirrors of the spectrogram's uniform blocks (`WriteParams` in `ring_write.wgsl`,
//! `DrawParams` in `draw.wgsl`), for the layout test (see [`crate::gpu::layout`]). A child module,
//! so the types and their fields stay private to the scene.

use super::{DrawParams, WriteParams};
use crate::gpu::layout::{Mirror, wgsl_mirror};

/// This scene's mirrored types.
pub(crate) fn wgsl_mirrors() -> Vec<Mirror> {
    vec![
        wgsl_mirror!(WriteParams => "WriteParams" {
            bins, rows, new_cols, write_start, ring_width, first_col, _pad,
        }),
        wgsl_mirror!(DrawParams => "DrawParams" {
            ring_width, newest, visible, rows, bins, scale, width_px, height_px, nyquist, f_lo,
            db_floor, db_ceil, filled, _pad,
        }),
    ]
}
