//! The report's `particles` object ([`crate::Scene::metrics`]).

use super::{Particles, StepRate};

impl Particles {
    /// The report's `particles` object.
    pub(super) fn metrics_json(&self) -> serde_json::Value {
        let s = self.sim.latest_stats();
        let c = self.sim.consts();
        serde_json::json!({
            "count": self.count(),
            "seed": self.seed,
            "mode": self.mode.name(),
            // The draw style asked for, what this adapter's default made of it, and why.
            "draw_style": format!("{:?}", self.renderer.style),
            "drawn_as": if self.renderer.splatting() { "points" } else { "sprites" },
            "view": self.view_metrics(),
            "auto_splat_from": self.renderer.splat_from,
            "auto_reason": if self.renderer.splat_from == 0 {
                "CPU adapter: sprites are bound by fill rate, the point splat by the particle count"
            } else {
                "sprites below 1,048,576 particles, the point splat from there on"
            },
            // The simulation rate asked for, what it is on this adapter, and why.
            "step_rate": format!("{:?}", self.clock.step_rate),
            "steps_per_second": self.steps_per_second(),
            // Clock ticks dropped by the one-step cap after slow frames (simulated time lost).
            "ticks_dropped_slow": self.clock.ticks_dropped_slow,
            "rate_reason": if self.clock.step_rate != StepRate::Auto {
                "set by the user"
            } else if self.clock.cpu_adapter {
                "CPU adapter: each step is a pass over every particle on the CPU"
            } else {
                "GPU adapter: 120 Hz"
            },
            // The clamp notice of the count, and the restart after a GPU reset.
            "notice": self.message,
            "steps": self.sim.steps_total(),
            "paused": self.paused,
            "sim_time_s": self.sim_time,
            "kinetic_energy": s.map(|s| s.kinetic_energy),
            "mean_speed": s.map(|s| s.mean_speed),
            "live": s.map(|s| s.live),
            "mean_neighbours": s.map(|s| s.mean_neighbours),
            "max_neighbours": s.map(|s| s.max_neighbours),
            "neighbour_histogram": s.map(|s| s.histogram.to_vec()),
            "stats_at_step": s.map(|s| s.step),
            // The step count (in this configuration) the kinetic energy above belongs to.
            "kinetic_energy_step": s.map(|s| s.step),
            // [step, kinetic energy] of the last reductions that came back, oldest first (a
            // follower's and its publisher's are compared step by step).
            "kinetic_energy_history": self
                .sim
                .stats_history()
                .map(|(step, ke)| serde_json::json!([step, ke]))
                .collect::<Vec<_>>(),
            // `--publish` / `--follow`.
            "share": self.share_metrics(),
            // `--share PATH`: the producer, its frames, the notice (null without `--share`).
            "shared": self.shared.as_ref().map(|s| s.metrics()),
            // The reduction runs every n-th frame (4 on a CPU adapter, 1 elsewhere).
            "stats_every": self.sim.stats_every(),
            "radius": c.radius,
            "grid_cells": c.dims[3],
        })
    }
}
