//! The GPU mirrors of the time series within the adapter's buffer limits (lavapipe: 128 MiB
//! storage bindings): a series longer than one binding holds, and several series starting over
//! in one frame with more samples together than one binding holds, are drawn with no validation
//! error, their GPU M4 columns equal to the CPU reference; views the mirror cannot serve are
//! refused (the scene draws them with the CPU M4).

#![allow(clippy::disallowed_methods)] // tests drive the GPU with their own submits

use crate::common;
use common::gpu;
use common::series::cpu;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::SCENE_FORMAT;
use vizdeck::scene::timeseries::gpu::{GpuM4Error, Mirrors, Pipelines, ViewUniform};
use vizdeck::series::decimate::Column;
use vizdeck::series::store::Series;

/// Samples of value and valid count (8 bytes each) one storage binding of this adapter holds.
fn samples_per_binding(gpu: &Gpu) -> u64 {
    let l = gpu.device.limits();
    l.max_storage_buffer_binding_size.min(l.max_buffer_size) / 8
}

/// Whether the test is affordable here (a series over one binding in RAM): lavapipe's 16 Mi
/// samples are; a GPU's 2 Gi are not.
fn affordable(per_binding: u64) -> bool {
    if per_binding > 1 << 25 {
        eprintln!("skipped: one binding holds {per_binding} samples, too many to exceed here");
        return false;
    }
    true
}

/// Appends `n` samples 1 µs apart to `s`: a random walk with NaN runs.
fn feed(s: &mut Series, n: u64, state: &mut (u64, f32, u64)) {
    let (x, v, k) = state;
    for _ in 0..n {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *v += ((*x % 2001) as f32 - 1000.0) * 1e-4;
        let value = if *k % 1_000_003 < 300 { f32::NAN } else { *v };
        s.push(*k as f64 * 1e-6, value);
        *k += 1;
    }
}

/// [`common::series::assert_same`], and more than half the columns hold samples.
fn assert_same(gpu_cols: &[Column], cpu_cols: &[Column], what: &str) {
    common::series::assert_same(gpu_cols, cpu_cols, what);
    assert!(cpu_cols.iter().filter(|c| c.count > 0).count() > cpu_cols.len() / 2);
}

/// One series of more samples than one storage binding holds, capped (drop-oldest, like the
/// store at its cap) and still growing: its mirror holds its newest samples within one binding,
/// views of them equal the CPU M4 as the series grows past the mirror's room (which starts the
/// mirror over), and a view of all of it is refused, for the CPU M4.
#[test]
fn series_longer_than_a_binding_draws_its_newest_samples_exactly() {
    let gpu = gpu();
    let per_binding = samples_per_binding(&gpu);
    if !affordable(per_binding) {
        return;
    }
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    assert!(pipes.max_samples <= per_binding);
    let n = per_binding + per_binding / 16;
    let mut s = Series::new("long", n as usize);
    let mut state = (0x9E37_79B9_7F4A_7C15u64, 0.0f32, 0u64);
    feed(&mut s, n, &mut state);
    assert_eq!(s.len() as u64, n);
    let mut m = Mirrors::new();
    m.set_keep_columns(true);
    let columns = 700usize;
    // Grow by a quarter of a binding in three steps: the mirror's room runs out on the way.
    let step = per_binding / 12 + 1;
    for k in 0..4 {
        if k > 0 {
            feed(&mut s, step, &mut state);
        }
        let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
        m.sync(&mut f.frame(), &pipes, 0, &s).unwrap();
        let held = m.len(0);
        assert!(held <= pipes.max_samples && held < s.len() as u64, "{held}");
        let (a, b) = s.time_range_rel().unwrap();
        let end = b + 1e-9;
        // The mirror's oldest sample time: the view from there is served, one µs earlier not.
        let oldest = b - (held - 1) as f64 * 1e-6;
        let views = [
            (end - 0.25, end),
            (oldest, end),
            (oldest + 1.5, oldest + 1.5 + 0.003),
        ];
        for (v, &(r0, r1)) in views.iter().enumerate() {
            m.begin_views(columns as u32, &ViewUniform::default());
            m.add_view(&pipes, 0, &s, (r0, r1), 0, 0).unwrap();
            m.upload(&mut f.frame(), &pipes, std::slice::from_ref(&s));
            let g = m.run_and_read(&mut f, &pipes, 0).unwrap();
            assert_same(&g, &cpu(&s, r0, r1, columns), &format!("step {k} view {v}"));
        }
        for r0 in [a, oldest - 1.5e-6] {
            m.begin_views(columns as u32, &ViewUniform::default());
            let e = m.add_view(&pipes, 0, &s, (r0, end), 0, 0).unwrap_err();
            assert!(matches!(e, GpuM4Error::BeyondMirror { .. }), "{e}");
        }
        assert!(
            gpu.error_messages().is_empty(),
            "{:?}",
            gpu.error_messages()
        );
    }
}

/// Four series starting over in the same frame, each with over a quarter of a binding of
/// samples (the chart of 4 series × 50 kHz at 84 s on lavapipe): one frame's staging would
/// exceed one binding, so one series waits a frame (drawn with the CPU M4 meanwhile), and every
/// series drawn from its mirror equals the CPU M4, with no validation error.
#[test]
fn series_starting_over_together_stage_within_one_binding() {
    let gpu = gpu();
    let per_binding = samples_per_binding(&gpu);
    if !affordable(per_binding) {
        return;
    }
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let n = per_binding / 4 + per_binding / 64;
    let mut states: Vec<(u64, f32, u64)> = (0..4u64).map(|i| (i * 7919 + 1, 0.0, 0)).collect();
    let mut series: Vec<Series> = (0..4)
        .map(|i| Series::new(format!("s{i}"), usize::MAX))
        .collect();
    // Small first, so every mirror holds a block, then all past their blocks in one frame.
    for (s, st) in series.iter_mut().zip(&mut states) {
        feed(s, 10_000, st);
    }
    let mut m = Mirrors::new();
    m.set_keep_columns(true);
    let columns = 500usize;
    let mut deferred = 0;
    for frame in 0..4 {
        if frame == 1 {
            for (s, st) in series.iter_mut().zip(&mut states) {
                feed(s, n, st);
            }
        }
        let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
        let synced: Vec<bool> = (0..4)
            .map(|i| match m.sync(&mut f.frame(), &pipes, i, &series[i]) {
                Ok(()) => true,
                Err(GpuM4Error::Deferred { .. }) => {
                    deferred += 1;
                    false
                }
                Err(e) => panic!("{e}"),
            })
            .collect();
        let (a, b) = series[0].time_range_rel().unwrap();
        let (r0, r1) = (a, b + 1e-9);
        m.begin_views(columns as u32, &ViewUniform::default());
        for (i, s) in series.iter().enumerate().filter(|&(i, _)| synced[i]) {
            m.add_view(&pipes, i, s, (r0, r1), 0, i as u32).unwrap();
        }
        m.upload(&mut f.frame(), &pipes, &series);
        m.run(&mut f, &pipes);
        for (i, s) in series.iter().enumerate().filter(|&(i, _)| synced[i]) {
            let g = m.read_columns(&gpu, i).unwrap();
            assert_same(&g, &cpu(s, r0, r1, columns), &format!("frame {frame} s{i}"));
        }
        if frame == 3 {
            assert!(synced.iter().all(|&s| s), "caught up: {synced:?}");
        }
        assert!(
            gpu.error_messages().is_empty(),
            "frame {frame}: {:?}",
            gpu.error_messages()
        );
    }
    assert!(deferred > 0, "one frame's samples exceed one binding");
}

/// The headless app at 5 M samples/s over 4 series (past 4 Mi samples a series, where the
/// four start over together): no validation error, exit 0.
#[test]
fn headless_chart_past_a_binding_of_samples_runs_clean() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args([
            "--headless",
            "--no-settings",
            "--scene",
            "timeseries",
            "--series-rate",
            "5M",
            "--frames",
            "300",
        ])
        .output()
        .unwrap();
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("Validation Error"), "{text}");
}
