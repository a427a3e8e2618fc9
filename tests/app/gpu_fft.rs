//! The GPU spectrogram FFT (`vizdeck::scene::spectrogram::fft::GpuFft`) on lavapipe against independent CPU
//! references:
//! - complex spectrum vs realfft in **f64** (the reference) on seeded noise, every size
//!   256…32768, rectangular window. Error measure, per column:
//!   `max_k |X_gpu[k] − X_ref[k]| / max_k |X_ref[k]|` over k = 0..=N/2, must be ≤ 1e-4;
//! - dB output vs `vizdeck::audio::stft::Stft` (Hann, same samples);
//! - closed-form levels: bin-centred full-scale sine, DC and Nyquist read 0 dBFS; silence reads
//!   exactly `DB_FLOOR`; a NaN/inf sample floors only its own column;
//! - errors for invalid parameters, batch 1 / max_batch / folded dispatches.

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

use crate::common;
use common::gpu;

use realfft::RealFftPlanner;
use realfft::num_complex::Complex;
use vizdeck::audio::stft::{DB_FLOOR, Stft};
use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::spectrogram::fft::{
    FftError, FftOptions, FusedColumns, FusedLayout, FusedValues, GpuFft,
};

/// Seeded noise in [−1, 1) (xorshift64*; independent of the crate's own generator).
fn noise(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let v = (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f64;
            (v / f64::from(1u32 << 23) - 1.0) as f32
        })
        .collect()
}

/// Uploads `samples` (batch × N), encodes `batch` columns, returns (dB, spectrum if any) of those
/// columns.
fn run(gpu: &Gpu, fft: &GpuFft, samples: &[f32], batch: u32) -> (Vec<f32>, Option<Vec<[f32; 2]>>) {
    assert_eq!(samples.len(), batch as usize * fft.fft_size());
    gpu.queue
        .write_buffer(fft.input(), 0, bytemuck::cast_slice(samples));
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:fft"),
        });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("test:fft:pass"),
            timestamp_writes: None,
        });
        fft.encode(&mut pass, batch);
    }
    gpu.queue.submit([enc.finish()]);
    let values = batch as u64 * fft.bins() as u64;
    let db: Vec<f32> = bytemuck::cast_slice(
        &gpu.read_buffer_blocking(fft.output_db(), 0, values * 4)
            .expect("read back"),
    )
    .to_vec();
    let spec = fft.spectrum().map(|b| {
        let bytes = gpu
            .read_buffer_blocking(b, 0, values * 8)
            .expect("read back");
        bytemuck::cast_slice::<u8, [f32; 2]>(&bytes).to_vec()
    });
    let errors = gpu.error_messages();
    assert!(errors.is_empty(), "wgpu errors: {errors:?}");
    (db, spec)
}

/// realfft in f64 of each column (already windowed by `window`).
fn reference(samples: &[f32], n: usize, window: &[f32]) -> Vec<Vec<Complex<f64>>> {
    let fft = RealFftPlanner::<f64>::new().plan_fft_forward(n);
    samples
        .chunks_exact(n)
        .map(|col| {
            let mut input: Vec<f64> = col
                .iter()
                .zip(window)
                .map(|(&x, &w)| f64::from(x) * f64::from(w))
                .collect();
            let mut out = fft.make_output_vec();
            fft.process(&mut input, &mut out).expect("realfft");
            out
        })
        .collect()
}

/// Per column: max_k |X_gpu − X_ref| / max_k |X_ref|.
fn relative_errors(gpu_spec: &[[f32; 2]], refs: &[Vec<Complex<f64>>]) -> Vec<f64> {
    let bins = refs[0].len();
    refs.iter()
        .enumerate()
        .map(|(c, r)| {
            let g = &gpu_spec[c * bins..(c + 1) * bins];
            let mut err = 0.0f64;
            let mut peak = 0.0f64;
            for (x, y) in g.iter().zip(r) {
                let d = Complex::new(f64::from(x[0]), f64::from(x[1])) - y;
                err = err.max(d.norm());
                peak = peak.max(y.norm());
            }
            err / peak
        })
        .collect()
}

/// Stft (hop = N) over the concatenated columns: one dB column per input column.
fn stft_columns(samples: &[f32], n: usize) -> Vec<Vec<f32>> {
    let mut stft = Stft::new(n, n).expect("stft");
    stft.push(samples);
    let mut out = Vec::new();
    let mut col = vec![0.0; stft.bins()];
    while stft.pop_column(&mut col) {
        out.push(col.clone());
    }
    out
}

fn periodic_hann(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n as f64).cos()) as f32)
        .collect()
}

const SIZES: [usize; 8] = [256, 512, 1024, 2048, 4096, 8192, 16_384, 32_768];

/// Both code paths: workgroup memory (the fused single pass where its workgroup and tile fit the
/// limits, DIF + 4 sub-FFTs above) and the multi-pass one; `layout` picks the fused kernel's tile,
/// `values` its values per thread, and `unchecked` builds it without wgpu's runtime checks.
fn build_with(
    gpu: &Gpu,
    n: usize,
    max_batch: u32,
    spectrum: bool,
    fused: bool,
    (layout, values, unchecked): (FusedLayout, FusedValues, bool),
) -> GpuFft {
    let options = FftOptions {
        spectrum,
        fused,
        layout,
        values,
        unchecked,
        columns: FusedColumns::One,
    };
    let fft = GpuFft::with_options(&gpu.device, n, max_batch, options).expect("GpuFft");
    assert_eq!(fft.is_fused(), fused, "N = {n}");
    // The fused kernel needs N/(2·values) invocations per workgroup and a tile of N/2 f32 words
    // (halves) or N words (planar), padding optional. (32 values also need N/2 ≥ FUSED32_MIN_M,
    // which every size the GPU FFT accepts has: N ≥ 256.)
    let limits = gpu.device.limits();
    let words = match layout {
        FusedLayout::Planar => n as u64,
        _ => n as u64 / 2,
    };
    let per_thread = match values {
        FusedValues::Eight => 8,
        FusedValues::Sixteen => 16,
        FusedValues::ThirtyTwo => 32,
        FusedValues::Auto if n / 2 >= vizdeck::scene::spectrogram::fft::FUSED32_AUTO_M as usize => {
            32
        }
        FusedValues::Auto if n / 2 >= vizdeck::scene::spectrogram::fft::FUSED16_MIN_M as usize => {
            16
        }
        FusedValues::Auto => 8,
    };
    assert!(per_thread < 32 || n as u64 / 2 >= vizdeck::scene::spectrogram::fft::FUSED32_MIN_M);
    let single = (n as u64 / (2 * per_thread))
        <= u64::from(limits.max_compute_invocations_per_workgroup)
        && words * 4 <= u64::from(limits.max_compute_workgroup_storage_size);
    let passes = match (fused, single) {
        (true, true) => 1,
        (true, false) => 3,
        (false, _) => {
            let log2m = (n / 2).trailing_zeros() as usize;
            log2m / 2 + log2m % 2 + 1
        }
    };
    assert_eq!(
        fft.pass_count(),
        passes,
        "N = {n}, fused {fused}, {layout:?}"
    );
    fft
}

fn build(gpu: &Gpu, n: usize, max_batch: u32, spectrum: bool, fused: bool) -> GpuFft {
    build_with(
        gpu,
        n,
        max_batch,
        spectrum,
        fused,
        (FusedLayout::Auto, FusedValues::Auto, false),
    )
}

#[test]
fn complex_spectrum_matches_realfft_f64_for_every_size() {
    let gpu = gpu();
    let paths = [
        (true, (FusedLayout::Auto, FusedValues::Auto, false)),
        (true, (FusedLayout::Planar, FusedValues::Eight, false)),
        (true, (FusedLayout::Halves, FusedValues::Eight, false)),
        (true, (FusedLayout::Planar, FusedValues::Sixteen, false)),
        (true, (FusedLayout::Halves, FusedValues::Sixteen, false)),
        (true, (FusedLayout::Halves, FusedValues::ThirtyTwo, false)),
        (true, (FusedLayout::Planar, FusedValues::ThirtyTwo, false)),
        // Without wgpu's runtime checks (FftOptions::unchecked, the default): the same values.
        (true, (FusedLayout::Auto, FusedValues::Auto, true)),
        (true, (FusedLayout::Planar, FusedValues::Eight, true)),
        (true, (FusedLayout::Halves, FusedValues::Eight, true)),
        (true, (FusedLayout::Halves, FusedValues::Sixteen, true)),
        (true, (FusedLayout::Planar, FusedValues::Sixteen, true)),
        (true, (FusedLayout::Halves, FusedValues::ThirtyTwo, true)),
        (false, (FusedLayout::Auto, FusedValues::Auto, false)),
    ];
    for (n, (fused, layout)) in SIZES.iter().flat_map(|&n| paths.map(|p| (n, p))) {
        let batch = 3u32;
        // max_batch larger than the batch: the unused column must not matter.
        let mut fft = build_with(&gpu, n, batch + 1, true, fused, layout);
        assert_eq!((fft.fft_size(), fft.bins()), (n, n / 2 + 1));
        let ones = vec![1.0f32; n];
        let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
        fft.set_window(&mut f.frame(), &ones).expect("window");
        f.submit();
        let samples = noise(batch as usize * n, n as u64);
        let (_, spec) = run(&gpu, &fft, &samples, batch);
        let refs = reference(&samples, n, &ones);
        let errs = relative_errors(&spec.expect("spectrum"), &refs);
        let shown: Vec<String> = errs.iter().map(|e| format!("{e:.2e}")).collect();
        eprintln!("N = {n}, fused {fused} {layout:?}: relative errors {shown:?}");
        for (c, e) in errs.iter().enumerate() {
            assert!(
                *e <= 1e-4,
                "N = {n}, fused {fused} {layout:?}, column {c}: relative error {e:.3e}"
            );
        }
    }
}

#[test]
fn db_matches_cpu_stft() {
    let gpu = gpu();
    let auto = FusedValues::Auto;
    for (n, fused, values) in [
        (256, true, auto),
        (2048, true, auto),
        (4096, false, auto),
        (8192, true, auto),
        (16_384, true, auto),
        (32_768, false, auto),
        // main32's dB output: M = 32·32 (no last stage) and 32·32·8.
        (2048, true, FusedValues::ThirtyTwo),
        (16_384, true, FusedValues::ThirtyTwo),
    ] {
        let batch = 3u32;
        let layout = (FusedLayout::Auto, values, false);
        let mut fft = build_with(&gpu, n, batch, false, fused, layout);
        let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
        fft.set_window(&mut f.frame(), &periodic_hann(n))
            .expect("window");
        f.submit();
        // Noise at −6 dBFS plus a tone off the bin grid: levels from about −30 to −6 dBFS and a
        // Hann leakage skirt falling below −100 dBFS.
        let mut samples = noise(batch as usize * n, 77 + n as u64);
        for (i, s) in samples.iter_mut().enumerate() {
            let t = (i % n) as f64;
            *s = 0.5 * *s + 0.25 * (std::f64::consts::TAU * 10.3 * t / n as f64).sin() as f32;
        }
        let (db, _) = run(&gpu, &fft, &samples, batch);
        let cpu = stft_columns(&samples, n);
        assert_eq!(cpu.len(), batch as usize);
        let bins = fft.bins();
        let mut worst = (0.0f32, 0.0f32);
        let mut compared = 0;
        for (c, col) in cpu.iter().enumerate() {
            for (k, &want) in col.iter().enumerate() {
                let got = db[c * bins + k];
                assert!(
                    got.is_finite() && got >= DB_FLOOR,
                    "N {n} c {c} k {k}: {got}"
                );
                if want > -100.0 {
                    compared += 1;
                    if (got - want).abs() > worst.0 {
                        worst = ((got - want).abs(), want);
                    }
                    assert!(
                        (got - want).abs() <= 1e-3,
                        "N = {n}, column {c}, bin {k}: GPU {got} dB, CPU {want} dB"
                    );
                }
            }
        }
        eprintln!(
            "N = {n}, fused {fused} {values:?}: {compared} bins above −100 dBFS, worst |ΔdB| = {:.2e} (at {:.1} dBFS)",
            worst.0, worst.1
        );
        assert!(compared > batch as usize * bins / 2);
    }
}

#[test]
fn closed_form_levels_silence_and_non_finite_samples() {
    let gpu = gpu();
    // Fused: `main` (256), `main16` with the mirror split (8192) and with its radix-4/8 tail fused
    // with the split (2048, 4096), `main32` with its radix-8 tail (16384); three passes (32768).
    for (n, fused) in [
        (256, true),
        (1024, false),
        (2048, true),
        (4096, true),
        (8192, true),
        (16_384, false),
        (16_384, true),
        (32_768, true),
    ] {
        let fft = build(&gpu, n, 6, false, fused);
        let bins = fft.bins();
        let k0 = n / 8 + 3;
        let mut samples = Vec::with_capacity(6 * n);
        // 0: full-scale sine centred on bin k0; 1: silence; 2: DC at full scale;
        // 3: Nyquist (±1); 4: the sine with one NaN sample; 5: the sine with one +inf sample.
        let sine: Vec<f32> = (0..n)
            .map(|i| (std::f64::consts::TAU * (k0 * i) as f64 / n as f64).sin() as f32)
            .collect();
        samples.extend_from_slice(&sine);
        samples.extend(std::iter::repeat_n(0.0f32, n));
        samples.extend(std::iter::repeat_n(1.0f32, n));
        samples.extend((0..n).map(|i| if i % 2 == 0 { 1.0f32 } else { -1.0 }));
        let mut with_nan = sine.clone();
        with_nan[n / 3] = f32::NAN;
        samples.extend_from_slice(&with_nan);
        let mut with_inf = sine.clone();
        with_inf[n - 1] = f32::INFINITY;
        samples.extend_from_slice(&with_inf);
        let (db, _) = run(&gpu, &fft, &samples, 6);
        let col = |c: usize| &db[c * bins..(c + 1) * bins];
        assert!(col(0)[k0].abs() <= 0.01, "N {n}: sine {}", col(0)[k0]);
        assert!(col(2)[0].abs() <= 0.01, "N {n}: DC {}", col(2)[0]);
        assert!(
            col(3)[n / 2].abs() <= 0.01,
            "N {n}: Nyquist {}",
            col(3)[n / 2]
        );
        assert!(
            col(1).iter().all(|&v| v == DB_FLOOR),
            "N {n}: silence must read exactly DB_FLOOR"
        );
        for c in [4, 5] {
            assert!(
                col(c).iter().all(|&v| v == DB_FLOOR),
                "N {n}: column {c} with a non-finite sample must read DB_FLOOR everywhere"
            );
        }
        // The neighbours of the non-finite columns are untouched (column 3 precedes them).
        assert!(col(3).iter().all(|v| v.is_finite()));
        assert!(db.iter().all(|v| v.is_finite() && *v >= DB_FLOOR));
    }
}

#[test]
fn invalid_parameters_give_errors() {
    let gpu = gpu();
    for n in [0, 1, 16, 128, 255, 1000, 3 * 1024, 65_536, 1 << 20] {
        assert_eq!(
            GpuFft::new(&gpu.device, n, 4).unwrap_err(),
            FftError::InvalidSize { fft_size: n },
            "size {n}"
        );
    }
    assert_eq!(
        GpuFft::new(&gpu.device, 1024, 0).unwrap_err(),
        FftError::ZeroBatch
    );
    assert!(matches!(
        GpuFft::new(&gpu.device, 32_768, u32::MAX).unwrap_err(),
        FftError::TooLarge { .. }
    ));
    let mut fft = GpuFft::new(&gpu.device, 1024, 1).expect("GpuFft");
    assert_eq!(
        fft.set_window(
            &mut OwnedFrame::new(&gpu, Strategy::WriteBuffer).frame(),
            &[1.0; 1023]
        )
        .unwrap_err(),
        FftError::WindowLength {
            got: 1023,
            fft_size: 1024
        }
    );
    assert!(gpu.error_messages().is_empty());
}

/// Several columns a workgroup (`FusedColumns::Many`: the next column's samples loaded during
/// the split), for batches from `min_batch` up, one column a workgroup below, with a window set
/// after construction (`set_window` writes both paths' params): every column of the batch matches
/// the f64 reference and its dB levels are bit for bit those of one column a workgroup (the same
/// arithmetic). The last workgroup runs on past the batch within `max_batch` and no further: after
/// a run of other samples in every column, exactly the rows up to `min(⌈batch/cols⌉·cols,
/// max_batch)` are rewritten (so several columns a workgroup did run), each from its own column. Batches that are not a
/// multiple of `cols`, one workgroup, and M from 128 (a workgroup of 8 threads) to 8192.
#[test]
fn several_columns_a_workgroup_match_f64() {
    let gpu = gpu();
    for (n, cols, batch, max_batch) in [
        (256usize, 3u32, 7u32, 8u32),
        (2048, 2, 5, 6),
        (4096, 4, 4, 4),
        (8192, 3, 2, 9),
        (16_384, 8, 11, 12),
    ] {
        // A Blackman window, not the Hann window the GpuFft starts with.
        let window: Vec<f32> = (0..n)
            .map(|i| {
                let x = std::f64::consts::TAU * i as f64 / n as f64;
                (0.42 - 0.5 * x.cos() + 0.08 * (2.0 * x).cos()) as f32
            })
            .collect();
        let samples = noise(max_batch as usize * n, 77 + n as u64);
        let refs = reference(&samples, n, &window);
        let bins = n / 2 + 1;
        // Other samples in every column first, so that each row shows which run wrote it last.
        let other = noise(max_batch as usize * n, 991 + n as u64);
        let other_refs = reference(&other, n, &window);
        let all_rows = |buffer: &wgpu::Buffer, width: u64| -> Vec<u8> {
            gpu.read_buffer_blocking(buffer, 0, u64::from(max_batch) * bins as u64 * width)
                .expect("read back")
        };
        // Every row of the levels and the spectrum after a batch of `samples`, every column
        // having held `other` before.
        let rows_after = |fft: &GpuFft, batch: u32| {
            run(&gpu, fft, &other, max_batch);
            gpu.queue
                .write_buffer(fft.input(), 0, bytemuck::cast_slice(&samples));
            run(&gpu, fft, &samples[..batch as usize * n], batch);
            let db: Vec<f32> = bytemuck::cast_slice(&all_rows(fft.output_db(), 4)).to_vec();
            let spec: Vec<[f32; 2]> =
                bytemuck::cast_slice(&all_rows(fft.spectrum().expect("spectrum"), 8)).to_vec();
            (db, spec)
        };
        // Rows 0..rows from `samples`, the rest still from `other`.
        let written = |spec: &[[f32; 2]], rows: usize, what: &str| {
            let cut = rows * bins;
            let new = relative_errors(&spec[..cut], &refs[..rows]);
            let old = if rows < other_refs.len() {
                relative_errors(&spec[cut..], &other_refs[rows..])
            } else {
                Vec::new()
            };
            assert!(
                new.iter().chain(&old).all(|&e| e <= 1e-4),
                "N = {n}, {what}: rows 0..{rows} new {new:?}, the rest old {old:?}"
            );
        };
        let build = |columns| {
            let options = FftOptions {
                spectrum: true,
                values: FusedValues::Sixteen,
                columns,
                ..FftOptions::default()
            };
            let mut fft = GpuFft::with_options(&gpu.device, n, max_batch, options).expect("GpuFft");
            let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
            fft.set_window(&mut f.frame(), &window).expect("window");
            f.submit();
            fft
        };
        let many = build(FusedColumns::Many { cols, min_batch: 2 });
        let detail = many.path_detail();
        assert!(
            detail.ends_with(&format!(", {cols} columns from 2")),
            "{detail}"
        );
        let one = build(FusedColumns::One);
        let bits = |db: &[f32]| db.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let (db_one, spec_one) = rows_after(&one, batch);
        written(&spec_one, batch as usize, "one column a workgroup");
        let (db, spec) = rows_after(&many, batch);
        let rows = (batch.div_ceil(cols) * cols).min(max_batch);
        written(&spec, rows as usize, &format!("{cols} columns"));
        let upto = batch as usize * bins;
        assert_eq!(
            bits(&db[..upto]),
            bits(&db_one[..upto]),
            "N = {n}, {cols} columns"
        );
        // Below min_batch: one column a workgroup, row 0 alone.
        let (db_small, spec_small) = rows_after(&many, 1);
        written(&spec_small, 1, "batch 1");
        assert_eq!(
            bits(&db_small[..bins]),
            bits(&db_one[..bins]),
            "N = {n}, batch 1"
        );
    }
    // With 16 values, Auto takes FUSED_COLUMNS from M = FUSED_COLUMNS_MIN_M up, for batches of
    // FUSED_COLUMNS_MIN_GROUPS workgroups' worth of columns (where max_batch allows them).
    let from = vizdeck::scene::spectrogram::fft::FUSED_COLUMNS
        * vizdeck::scene::spectrogram::fft::FUSED_COLUMNS_MIN_GROUPS;
    let sixteen = FftOptions {
        values: FusedValues::Sixteen,
        ..FftOptions::default()
    };
    for (n, max_batch, several) in [
        (16_384usize, from, true),
        (16_384, from - 1, false),
        (8192, from, false),
        (2048, from, false),
    ] {
        let fft = GpuFft::with_options(&gpu.device, n, max_batch, sixteen).expect("GpuFft");
        let detail = fft.path_detail();
        let expected = format!(
            ", {} columns from {from}",
            vizdeck::scene::spectrogram::fft::FUSED_COLUMNS
        );
        assert_eq!(detail.ends_with(&expected), several, "N = {n}: {detail}");
        assert_eq!(
            several,
            n / 2 >= vizdeck::scene::spectrogram::fft::FUSED_COLUMNS_MIN_M as usize
                && max_batch >= from
        );
    }
    // By default the fused kernel takes 32 values a thread from M = FUSED32_AUTO_M up, one column
    // a workgroup, and 16 below.
    for n in [8192usize, 16_384] {
        let fft =
            GpuFft::with_options(&gpu.device, n, from, FftOptions::default()).expect("GpuFft");
        let detail = fft.path_detail();
        let values = if n / 2 >= vizdeck::scene::spectrogram::fft::FUSED32_AUTO_M as usize {
            32
        } else {
            16
        };
        assert!(
            detail.contains(&format!("×{values} ")) && !detail.contains("columns"),
            "N = {n}: {detail}"
        );
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

#[test]
fn batch_one_max_batch_and_folded_dispatch() {
    let gpu = gpu();
    let n = 1024;
    let max_batch = 5u32;
    for (fused, batch) in [(true, 1), (true, max_batch), (false, 1), (false, max_batch)] {
        let fft = build(&gpu, n, max_batch, true, fused);
        let hann = periodic_hann(n);
        let samples = noise(batch as usize * n, 1000 + u64::from(batch));
        let (_, spec) = run(&gpu, &fft, &samples, batch);
        let errs = relative_errors(&spec.expect("spectrum"), &reference(&samples, n, &hann));
        assert_eq!(errs.len(), batch as usize);
        assert!(errs.iter().all(|&e| e <= 1e-4), "batch {batch}: {errs:?}");
    }
    let fft = GpuFft::with_spectrum(&gpu.device, n, max_batch).expect("GpuFft");
    // A batch beyond max_batch is clamped (no validation error), 0 records nothing.
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        fft.encode(&mut pass, max_batch + 10);
        fft.encode(&mut pass, 0);
    }
    gpu.queue.submit([enc.finish()]);
    gpu.wait_idle();
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );

    // More than 65535 workgroups in one dispatch (N = 256: the split pass and the fused kernel
    // run one workgroup per column): the dispatch folds into y; spot-check columns around the
    // fold and the last one.
    let n = 256;
    let batch = 70_000u32;
    let limit = gpu.device.limits().max_compute_workgroups_per_dimension;
    assert!(
        batch > limit,
        "the adapter allows {limit} workgroups per dimension"
    );
    let samples = noise(batch as usize * n, 4242);
    let hann = periodic_hann(n);
    for fused in [true, false] {
        let fft = build(&gpu, n, batch, true, fused);
        let (db, spec) = run(&gpu, &fft, &samples, batch);
        let spec = spec.expect("spectrum");
        let bins = fft.bins();
        for c in [
            0usize,
            1,
            34_999,
            35_000,
            65_535,
            65_536,
            batch as usize - 1,
        ] {
            let col = &samples[c * n..(c + 1) * n];
            let e = relative_errors(&spec[c * bins..(c + 1) * bins], &reference(col, n, &hann));
            assert!(e[0] <= 1e-4, "fused {fused}, column {c}: {e:?}");
        }
        assert!(db.iter().all(|v| v.is_finite() && *v > DB_FLOOR));
    }
}
