//! [`bench_table`]: the batched GPU FFT timed per size and path (`vizdeck-lab --kernels fft`, the fft
//! bench), on deterministic noise.

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::scene::spectrogram::fft::{FftOptions, FusedValues, GpuFft};
use vizdeck::scene::spectrogram::fft_choice::noise;

/// One row of [`bench_table`]: seconds per batch by wall clock and (if measured) by timestamps.
fn bench_one(gpu: &Gpu, fft: &GpuFft, batch: u32, reps: u32) -> (f64, Option<f64>) {
    vizdeck::gpu::timing::time_compute_pass(gpu, "spectrogram:fft:bench", reps, |pass| {
        fft.encode(pass, batch)
    })
}

/// Benchmarks the batched GPU FFT (window + real FFT + split + dB, i.e. one [`GpuFft::encode`])
/// on `gpu` for each of `sizes` with `batch` columns of noise, and returns a markdown table: one
/// row per size and path (the workgroup-memory path where it applies, with 8, 16 and 32 values
/// per thread, each with wgpu's runtime checks and without them ([`FftOptions::unchecked`]), 8
/// and 16 unchecked with the planar tile where it fits ([`FusedLayout::Planar`](vizdeck::scene::spectrogram::fft::FusedLayout::Planar)), 16
/// unchecked with several columns a workgroup where [`FusedColumns::Auto`](vizdeck::scene::spectrogram::fft::FusedColumns::Auto) takes them (the
/// other 16-value rows take one), then the multi-pass one), then the driver's statistics of each fused pipeline (registers,
/// spills, …; [`crate::pipeline_stats::fused_statistics`]) or why there are none.
///
/// Timing: `reps` encodes of the whole batch are recorded into one compute pass and submitted
/// once; "wall" is (submit → `device.poll(wait)`) / reps, measured after a warm-up submit;
/// "GPU" is the pass's begin/end timestamps / reps when the device has TIMESTAMP_QUERY ("–"
/// otherwise). Throughput: GB/s = batch·N·4 bytes of f32 input / time / 1e9, columns/s =
/// batch / time. The input upload is not timed. Sizes the GPU path rejects appear as a row with
/// the error; never panics.
pub fn bench_table(gpu: &Gpu, sizes: &[usize], batch: u32, reps: u32) -> String {
    let reps = reps.max(1);
    let mut out = format!(
        "GPU FFT (window + real FFT + dB), adapter: {} ({}, {}), batch {batch}, {reps} reps per \
         submit\n\n| N | path | dispatches | wall ms/batch | wall GB/s | wall columns/s | GPU ms/batch \
         | GPU GB/s | GPU columns/s |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
        gpu.summary.name, gpu.summary.backend, gpu.summary.device_type
    );
    let errors_before = gpu.error_messages().len();
    let mut stats = String::new();
    let mut stats_error = None;
    // Per size: the fused kernel with 8, 16 and 32 values per thread, checked then unchecked
    // (16 with one column a workgroup); 8 and 16 unchecked with the planar tile where it fits
    // (one barrier pair an exchange instead of two, twice the workgroup memory); 16 unchecked
    // with several columns a workgroup where Auto takes them for this batch; then multi-pass.
    use vizdeck::scene::spectrogram::fft::FusedColumns as C;
    use vizdeck::scene::spectrogram::fft::FusedLayout::{Auto, Planar};
    let variants = [
        (true, FusedValues::Eight, false, Auto, C::Auto),
        (true, FusedValues::Sixteen, false, Auto, C::One),
        (true, FusedValues::ThirtyTwo, false, Auto, C::Auto),
        (true, FusedValues::Eight, true, Auto, C::Auto),
        (true, FusedValues::Sixteen, true, Auto, C::One),
        (true, FusedValues::ThirtyTwo, true, Auto, C::Auto),
        (true, FusedValues::Eight, true, Planar, C::Auto),
        (true, FusedValues::Sixteen, true, Planar, C::One),
        (true, FusedValues::Sixteen, true, Auto, C::Auto),
        (false, FusedValues::Auto, false, Auto, C::Auto),
    ];
    let paths = sizes
        .iter()
        .flat_map(|&n| variants.map(|(f, v, u, l, c)| (n, f, v, u, l, c)));
    for (n, fused, values, unchecked, layout, columns) in paths {
        let options = FftOptions {
            fused,
            values,
            unchecked,
            layout,
            columns,
            ..FftOptions::default()
        };
        let fft = match GpuFft::with_options(&gpu.device, n, batch, options) {
            Ok(f) => f,
            Err(e) => {
                if fused && values == FusedValues::Eight && !unchecked {
                    out.push_str(&format!("| {n} | – | – | error: {e} | | | | | |\n"));
                }
                continue;
            }
        };
        let first = values == FusedValues::Eight && !unchecked;
        let one_column = fft.fused_columns() <= 1;
        if columns == C::Auto && values == FusedValues::Sixteen && one_column {
            // Auto takes one column a workgroup at this size: the row above.
            continue;
        }
        if fused && (!fft.is_fused() || (!first && fft.pass_count() > 1)) {
            // The workgroup-memory kernels do not apply (the multi-pass row follows), or only
            // the three-pass one, whose row the checked 8-value variant gives.
            continue;
        }
        let samples = noise(batch as usize * n, 0x5eed_0000 + n as u64);
        let mut upload = OwnedFrame::new(gpu, vizdeck::gpu::upload::Strategy::WriteBuffer);
        upload.frame().write_slice(fft.input(), 0, &samples);
        upload.submit();
        let (wall, gpu_s) = bench_one(gpu, &fft, batch, reps);
        let bytes = f64::from(batch) * n as f64 * 4.0;
        let cols = f64::from(batch);
        let fmt = |s: f64| format!("{:.4} | {:.2} | {:.0}", s * 1e3, bytes / s / 1e9, cols / s);
        let gpu_cells = gpu_s.map_or_else(|| "– | – | –".to_string(), fmt);
        let path = fft.path_detail();
        out.push_str(&format!(
            "| {n} | {path} | {} | {} | {gpu_cells} |\n",
            fft.pass_count(),
            fmt(wall)
        ));
        match crate::pipeline_stats::fused_statistics(&gpu.device, &fft) {
            Some(Ok(executables)) => {
                for e in executables {
                    stats.push_str(&format!(
                        "| {n} | {path} | {} | {} |\n",
                        e.name,
                        e.summary()
                    ));
                }
            }
            Some(Err(e)) if stats_error.is_none() => stats_error = Some(e.to_string()),
            _ => {}
        }
    }
    // The driver's figures of each fused pipeline: registers per thread and spills set how
    // many workgroups a multiprocessor holds.
    if !stats.is_empty() {
        out.push_str(&format!(
            "\nFused kernel pipelines, the driver's statistics ({}):\n\n| N | path | executable | \
             statistics |\n|---:|---|---|---|\n{stats}",
            crate::pipeline_stats::EXTENSION
        ));
    }
    if let Some(e) = stats_error {
        out.push_str(&format!("\nNo pipeline statistics: {e}\n"));
    }
    let errors = gpu.error_messages();
    if errors.len() > errors_before {
        out.push_str(&format!(
            "\nwgpu errors during the run: {}\n",
            errors[errors_before..].join("; ")
        ));
    }
    out
}
