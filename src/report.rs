//! The end-of-run report (`--report PATH.json`): run summary, adapter, clock and per-scene metrics.

use std::path::Path;

use crate::deck::Deck;
use crate::gpu::Gpu;
use crate::stats::Summary;

/// Builds the report object.
pub fn build(gpu: &Gpu, deck: &Deck, mode: &str, size: (u32, u32)) -> serde_json::Value {
    let summary = Summary::from_frame_times(&deck.run_frame_ms);
    let (steps, dropped) = deck.clock_totals();
    let mut report = serde_json::json!({
        "vizdeck": env!("CARGO_PKG_VERSION"),
        "mode": mode,
        "size": [size.0, size.1],
        "scene": crate::scene::SCENES[deck.active].id,
        "adapter": gpu.summary,
        "summary": summary,
        "clock": { "dt_s": crate::clock::DT, "max_steps": crate::clock::MAX_STEPS,
                   "steps": steps, "dropped_steps": dropped },
        "recordings": deck.finished.iter().map(|(p, s)| serde_json::json!({
            "path": p.display().to_string(), "summary": s })).collect::<Vec<_>>(),
        "scenes": deck.metrics(),
        "memory": deck.memory.report(&gpu.device),
        "gpu_errors": gpu.error_messages(),
        "idle_intervals": deck.idle_intervals,
        "device_resets": deck.recovery.device_resets,
        "device_reset_ms": deck.recovery.device_reset_ms,
        "upload": deck.upload_counters(),
        "upload_ui": deck.ui_upload_counters(),
        "upload_strategy": deck.upload_strategy(),
        "composite": deck.composite().name(),
        "composite_used": deck.composite_used().name(),
        "scene_rect_px": deck.scene_rect_px(),
        "videos": deck.videos(),
    });
    if let Some(o) = report.as_object_mut() {
        o.extend(deck.share_metrics());
    }
    report
}

/// Writes the report as pretty JSON. Errors name the path.
pub fn write(path: &Path, value: &serde_json::Value) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text + "\n")
        .map_err(|e| anyhow::anyhow!("report '{}': {e}", path.display()))
}
