//! The GPU FFT's levels back on the CPU: this frame's dB columns copied into the deck's shared
//! readback ring (`record_readbacks`, with a [`LevelsCopy`] saying where they go), and their
//! arrival into the history 1–3 frames later (`readback_arrived`).

use super::Spectrogram;
use crate::gpu::readback::{Arrived, Consumer, ReadbackRing};

/// Payload of a levels readback: the batch's column count, and the written (ring) index of its
/// first column (`None` when the view was frozen: the levels feed only the metrics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LevelsCopy {
    pub(super) written: Option<u64>,
    pub(super) columns: u32,
}

impl Spectrogram {
    /// `record_readbacks`: this frame's GPU levels copied into the shared readback ring.
    pub(super) fn copy_levels_back(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
        me: Consumer,
    ) {
        // The history was reset since the last copies were asked for: they no longer apply.
        if std::mem::take(&mut self.rec.readbacks_stale) {
            ring.invalidate(me);
        }
        // GPU path: this frame's dB columns go back to the CPU for the history (readout,
        // spectrum view, export), with where they go as the payload.
        let cols = std::mem::take(&mut self.a.copy_pending);
        let Some(f) = &self.a.gpu else { return };
        if cols == 0 {
            return;
        }
        let bytes = u64::from(cols) * self.a.bins as u64 * 4;
        let copy = LevelsCopy {
            written: self.a.copy_written,
            columns: cols,
        };
        if !ring.copy_buffer(device, encoder, f.output_db(), 0, bytes, me, copy) {
            log::warn!("spectrogram: readback ring full; {cols} columns not kept for the readout");
        }
    }

    /// `readback_arrived`: GPU levels come back into the history (copies from before a reset
    /// of the history never arrive: the ring drops them).
    pub(super) fn levels_arrived(&mut self, arrived: &Arrived<'_>) {
        let Some(&LevelsCopy { written, columns }) = arrived.payload::<LevelsCopy>() else {
            return;
        };
        let bins = self.a.bins;
        if bins == 0 || arrived.data.len() != columns as usize * bins * 4 {
            return;
        }
        let levels: Vec<f32> = bytemuck::pod_collect_to_vec(arrived.data);
        for (j, col) in levels.chunks_exact(bins).enumerate() {
            self.push_history(col, written.map(|w| w + j as u64));
        }
        if let Some(w) = written {
            // Readbacks arrive in order: an empty slot below these stays empty (`share.rs`).
            self.share.levels_end = self.share.levels_end.max(w + u64::from(columns));
        }
    }
}
