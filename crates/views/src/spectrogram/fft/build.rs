//! The constructors of [`GpuFft`]: size and limit checks, buffers, twiddles and window, and the
//! pipelines and passes of each path (fused, DIF-4 + local, multi-pass).

use wgpu::util::DeviceExt;

use super::plan::{FusedPlan, fold_dispatch, level_scale, periodic_hann, twiddle_table};
use super::{
    FftError, FftOptions, GPU_MAX_FFT_SIZE, GPU_MIN_FFT_SIZE, GpuFft, ManyColumns, Params, Pass,
    WORKGROUP,
};
use crate::spectrogram::shaders;

/// Largest M = N/2 of the DIF sub-FFT kernel `fft_local_sub` (its register array holds 16 complex values per thread:
/// 4·BPT with BPT = M/(4·256) ≤ 4).
const FUSED_MAX_M: u64 = 4096;

impl GpuFft {
    /// `with_options(device, fft_size, max_batch, FftOptions::default())`: builds the pipelines,
    /// twiddles, window (the periodic Hann window of [`crate::audio::stft::Stft`] until
    /// [`set_window`](Self::set_window)) and buffers for `fft_size`-point transforms of up to
    /// `max_batch` columns, without complex-spectrum output.
    ///
    /// # Errors
    ///
    /// [`FftError::InvalidSize`] unless `fft_size` is a power of two in 256..=32768;
    /// [`FftError::ZeroBatch`] if `max_batch == 0`; [`FftError::TooLarge`] if a buffer exceeds
    /// `max_buffer_size` / `max_storage_buffer_binding_size` or the dispatch of `max_batch`
    /// columns cannot be expressed within `max_compute_workgroups_per_dimension`.
    pub fn new(device: &wgpu::Device, fft_size: usize, max_batch: u32) -> Result<GpuFft, FftError> {
        Self::with_options(device, fft_size, max_batch, FftOptions::default())
    }

    /// As [`new`](Self::new), and every [`encode`](Self::encode) also writes the complex spectrum
    /// `X[0..=N/2]` of each column to [`spectrum`](Self::spectrum) (for tests and debugging).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), counting the spectrum buffer too.
    pub fn with_spectrum(
        device: &wgpu::Device,
        fft_size: usize,
        max_batch: u32,
    ) -> Result<GpuFft, FftError> {
        let options = FftOptions {
            spectrum: true,
            ..FftOptions::default()
        };
        Self::with_options(device, fft_size, max_batch, options)
    }

    /// The general constructor; see [`new`](Self::new) and [`FftOptions`].
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_options(
        device: &wgpu::Device,
        fft_size: usize,
        max_batch: u32,
        options: FftOptions,
    ) -> Result<GpuFft, FftError> {
        if !fft_size.is_power_of_two() || !(GPU_MIN_FFT_SIZE..=GPU_MAX_FFT_SIZE).contains(&fft_size)
        {
            return Err(FftError::InvalidSize { fft_size });
        }
        if max_batch == 0 {
            return Err(FftError::ZeroBatch);
        }
        let with_spectrum = options.spectrum;
        let n = fft_size as u64;
        let m = n / 2;
        let bins = m + 1;
        let batch = u64::from(max_batch);
        let limits = device.limits();
        let too_large = |what: String| FftError::TooLarge {
            fft_size,
            max_batch,
            what,
        };
        // Workgroup-memory kernels: `len` complex f32 per workgroup of min(256, len/4) threads.
        let local_wg = |len: u64| (len / 4).min(256) as u32;
        let local_ok = |len: u64| {
            len <= FUSED_MAX_M
                && len * 8 <= u64::from(limits.max_compute_workgroup_storage_size)
                && local_wg(len) <= limits.max_compute_invocations_per_workgroup
                && local_wg(len) <= limits.max_compute_workgroup_size_x
        };
        let fused_plan = options
            .fused
            .then(|| FusedPlan::choose(m, &limits, options.layout, options.values))
            .flatten()
            .map(|p| {
                let (cols, cols_min_batch) = options.columns.resolve(p.m, p.values, max_batch);
                FusedPlan {
                    unchecked: options.unchecked,
                    spectrum: with_spectrum,
                    cols,
                    cols_min_batch,
                    ..p
                }
            });
        let fused = fused_plan.is_some();
        let dif4 = options.fused && !fused && m > FUSED_MAX_M && local_ok(m / 4);
        let complex_bytes = batch * m * 8;
        let mut sizes = vec![
            ("input/ping-pong", complex_bytes),
            ("dB output", batch * bins * 4),
        ];
        if with_spectrum {
            sizes.push(("spectrum", batch * bins * 8));
        }
        for (what, bytes) in sizes {
            let cap = limits
                .max_buffer_size
                .min(limits.max_storage_buffer_binding_size);
            if bytes > cap {
                return Err(too_large(format!(
                    "{what} buffer of {bytes} bytes > {cap} bytes"
                )));
            }
        }
        // Largest dispatch: the split pass (M/2 threads per column) or, fused, one workgroup per
        // column.
        let max_threads = batch * m / 2;
        let max_wg_per_dim = limits.max_compute_workgroups_per_dimension;
        let (_, y) = fold_dispatch(max_threads, WORKGROUP, max_wg_per_dim);
        // The shaders compute a u32 flat thread index.
        if y > max_wg_per_dim
            || max_threads + u64::from(WORKGROUP) * u64::from(y) > u64::from(u32::MAX)
        {
            return Err(too_large(format!(
                "dispatch of {max_threads} threads exceeds the workgroup limits"
            )));
        }

        let storage = wgpu::BufferUsages::STORAGE;
        let make = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let input = make(
            "spectrogram:fft:input",
            complex_bytes,
            storage | wgpu::BufferUsages::COPY_DST,
        );
        let output_db = make(
            "spectrogram:fft:output_db",
            batch * bins * 4,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        // The split and fused shaders always bind a spectrum buffer; without the option it is one
        // element that is never written (the split's flags bit 0 clear, the fused kernel's
        // SPECTRUM false).
        let spectrum_buf = make(
            "spectrogram:fft:spectrum",
            if with_spectrum { batch * bins * 8 } else { 8 },
            storage | wgpu::BufferUsages::COPY_SRC,
        );

        // T[m] = e^{−2πi·m/N}, m = 0..N, in f64, stored as f32.
        let twiddle_data = twiddle_table(fft_size);
        let init = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let twiddles = init(
            "spectrogram:fft:twiddles",
            bytemuck::cast_slice(&twiddle_data),
            storage,
        );
        let hann = periodic_hann(fft_size);
        let window = init(
            "spectrogram:fft:window",
            bytemuck::cast_slice(&hann),
            storage | wgpu::BufferUsages::COPY_DST,
        );
        let uniform = |label: &str, value: &Params| {
            init(
                label,
                bytemuck::bytes_of(value),
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            )
        };
        // A bind group of `buffers` at bindings 0, 1, 2, … of the pipeline's group 0.
        let bind = |label: &str, pl: &wgpu::ComputePipeline, buffers: &[&wgpu::Buffer]| {
            crate::gpu::layout::buffers_group(device, label, &pl.get_bind_group_layout(0), buffers)
        };
        let pipeline_of =
            |module: &wgpu::ShaderModule, entry: &str, label: &str, constants: &[(&str, f64)]| {
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(label),
                    layout: None,
                    module,
                    entry_point: Some(entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants,
                        // Every shader writes before it reads its workgroup memory.
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
            };
        let pipeline_at =
            |src: &shaders::ShaderSource, entry: &str, label: &str, constants: &[(&str, f64)]| {
                pipeline_of(&src.module(device), entry, label, constants)
            };
        let pipeline = |src: &shaders::ShaderSource, label: &str, constants: &[(&str, f64)]| {
            pipeline_at(src, "main", label, constants)
        };

        let m32 = m as u32;
        let n32 = n as u32;
        let split_value = Params {
            per_col: m32 / 2,
            m: m32,
            max_batch,
            flags: u32::from(with_spectrum),
            scale: level_scale(&hann),
            cols: 1,
            ..Params::default()
        };
        let split_params = uniform("spectrogram:fft:split:params", &split_value);
        let mut params_bufs = Vec::new();
        let mut passes = Vec::new();
        let mut ping = Vec::new();

        if let Some(plan) = fused_plan {
            let src = &shaders::SPECTROGRAM_FFT_LOCAL;
            let module = if plan.unchecked {
                // SAFETY: fft_local.wgsl's indices are in range and its loops end by construction
                // (see `FftOptions::unchecked`); tests/app/gpu_fft.rs checks the unchecked module
                // against the f64 reference at every size.
                unsafe { src.module_unchecked(device) }
            } else {
                src.module(device)
            };
            let pl = pipeline_of(
                &module,
                plan.entry_point(),
                "spectrogram:fft:local",
                &plan.constants(),
            );
            let fused_group = |label: &str, params: &wgpu::Buffer| {
                bind(
                    label,
                    &pl,
                    &[
                        params,
                        &input,
                        &window,
                        &twiddles,
                        &output_db,
                        &spectrum_buf,
                    ],
                )
            };
            let bind_group = fused_group("spectrogram:fft:local:bind_group", &split_params);
            let many = (plan.cols > 1).then(|| {
                let params = uniform(
                    "spectrogram:fft:local:params:many",
                    &split_value.with_cols(plan.cols),
                );
                ManyColumns {
                    bind_group: fused_group("spectrogram:fft:local:bind_group:many", &params),
                    params,
                    cols: plan.cols,
                    min_batch: plan.cols_min_batch,
                }
            });
            passes.push(Pass {
                pipeline: pl,
                bind_group,
                per_col: plan.wg,
                group: plan.wg,
                many,
            });
        } else if dif4 {
            ping.push(make("spectrogram:fft:ping", complex_bytes, storage));
            ping.push(make("spectrogram:fft:pong", complex_bytes, storage));
            let l = m32 / 4;
            let wg = local_wg(m / 4);
            let dif_pl = pipeline(&shaders::SPECTROGRAM_FFT_DIF4, "spectrogram:fft:dif4", &[]);
            let sub_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_LOCAL_SUB,
                "spectrogram:fft:local_sub",
                &[
                    ("TILE", f64::from(l)),
                    ("WG", f64::from(wg)),
                    ("BPT", f64::from(l / (4 * wg))),
                ],
            );
            let split_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_SPLIT,
                "spectrogram:fft:split",
                &[],
            );
            let dif_value = Params {
                per_col: l,
                m: m32,
                max_batch,
                ..Params::default()
            };
            let dif_params = uniform("spectrogram:fft:dif4:params", &dif_value);
            let dif_bg = bind(
                "spectrogram:fft:dif4:bind_group",
                &dif_pl,
                &[&dif_params, &input, &window, &twiddles, &ping[0]],
            );
            passes.push(Pass {
                pipeline: dif_pl,
                bind_group: dif_bg,
                per_col: l,
                group: WORKGROUP,
                many: None,
            });
            let sub_value = Params {
                per_col: 4 * wg,
                m: m32,
                max_batch,
                ..Params::default()
            };
            let sub_params = uniform("spectrogram:fft:local_sub:params", &sub_value);
            let sub_bg = bind(
                "spectrogram:fft:local_sub:bind_group",
                &sub_pl,
                &[&sub_params, &twiddles, &ping[0], &ping[1]],
            );
            passes.push(Pass {
                pipeline: sub_pl,
                bind_group: sub_bg,
                per_col: 4 * wg,
                group: wg,
                many: None,
            });
            let split_bg = bind(
                "spectrogram:fft:split:bind_group",
                &split_pl,
                &[
                    &split_params,
                    &twiddles,
                    &ping[1],
                    &output_db,
                    &spectrum_buf,
                ],
            );
            passes.push(Pass {
                pipeline: split_pl,
                bind_group: split_bg,
                per_col: split_value.per_col,
                group: WORKGROUP,
                many: None,
            });
            params_bufs.push(dif_params);
            params_bufs.push(sub_params);
        } else {
            ping.push(make("spectrogram:fft:ping", complex_bytes, storage));
            ping.push(make("spectrogram:fft:pong", complex_bytes, storage));
            let pack_pl = pipeline(&shaders::SPECTROGRAM_FFT_PACK, "spectrogram:fft:pack", &[]);
            let radix4_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_RADIX4,
                "spectrogram:fft:radix4",
                &[],
            );
            let radix2_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_RADIX2,
                "spectrogram:fft:radix2",
                &[],
            );
            let split_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_SPLIT,
                "spectrogram:fft:split",
                &[],
            );

            // Stages: (radix, p). The first radix-4 stage is the pack pass.
            let log2m = m32.trailing_zeros();
            let mut stages = Vec::new();
            let mut p = 1u32;
            for _ in 0..log2m / 2 {
                stages.push((4u32, p));
                p *= 4;
            }
            if log2m % 2 == 1 {
                stages.push((2u32, p));
            }
            for (s, &(radix, p)) in stages.iter().enumerate() {
                let value = Params {
                    p,
                    per_col: m32 / radix,
                    m: m32,
                    tw_stride: n32 / (radix * p),
                    max_batch,
                    ..Params::default()
                };
                let params = uniform(&format!("spectrogram:fft:stage{s}:params"), &value);
                let dst = &ping[s % 2];
                let (pl, bind_group) = if s == 0 {
                    let bg = bind(
                        "spectrogram:fft:pack:bind_group",
                        &pack_pl,
                        &[&params, &input, &window, dst],
                    );
                    (&pack_pl, bg)
                } else {
                    let pl = if radix == 4 { &radix4_pl } else { &radix2_pl };
                    let bg = bind(
                        &format!("spectrogram:fft:stage{s}:bind_group"),
                        pl,
                        &[&params, &twiddles, &ping[(s + 1) % 2], dst],
                    );
                    (pl, bg)
                };
                passes.push(Pass {
                    pipeline: pl.clone(),
                    bind_group,
                    per_col: value.per_col,
                    group: WORKGROUP,
                    many: None,
                });
                params_bufs.push(params);
            }
            let last = &ping[(stages.len() - 1) % 2];
            let split_bg = bind(
                "spectrogram:fft:split:bind_group",
                &split_pl,
                &[&split_params, &twiddles, last, &output_db, &spectrum_buf],
            );
            passes.push(Pass {
                pipeline: split_pl,
                bind_group: split_bg,
                per_col: split_value.per_col,
                group: WORKGROUP,
                many: None,
            });
        }
        params_bufs.push(split_params.clone());

        Ok(GpuFft {
            fft_size,
            max_batch,
            max_wg_per_dim,
            fused: fused || dif4,
            plan: fused_plan,
            input,
            output_db,
            spectrum: with_spectrum.then_some(spectrum_buf),
            window,
            split_params,
            split_params_value: split_value,
            passes,
            _ping: ping,
            _twiddles: twiddles,
            _params: params_bufs,
        })
    }
}
