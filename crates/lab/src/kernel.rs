//! The kernel tables of `vizdeck-lab --kernels`: the GPU FFT and particle tables the other
//! modules expose ([`kernel_tables`]).

use vizdeck::gpu::Gpu;

/// Which kernel tables to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kernel {
    /// The GPU FFT against the CPU FFT, by size (from `scene::spectrogram::fft::bench_table`).
    Fft,
    /// Particle steps and draws, by count (from `scene::particles::bench::bench_table`).
    Particles,
    /// GPU M4 decimation of time series (from `scene::timeseries::bench::bench_table`).
    Timeseries,
    /// The point-cloud compute rasterizer against point primitives (from
    /// `pointcloud::bench::bench_table`).
    Pointcloud,
    /// Point-cloud frame time at rest and while nodes stream in (from
    /// `scene::pointcloud::bench::stream_table`).
    PointcloudStream,
}

/// Options of the kernel tables.
#[derive(Clone, Debug)]
pub struct KernelOptions {
    /// FFT sizes.
    pub fft_sizes: Vec<usize>,
    /// FFT batch.
    pub fft_batch: u32,
    /// FFT repetitions per submit.
    pub fft_reps: u32,
    /// Particle counts (`None`: 16384 … 16777216 on a GPU, 4096 … 65536 on a CPU adapter).
    pub particle_counts: Option<Vec<u32>>,
    /// Particle steps per row.
    pub particle_steps: u32,
    /// Points in view of the time-series table (`None`: 1e5 … 1e8 on a GPU, 1e5 … 1e7 on a CPU
    /// adapter).
    pub series_points: Option<Vec<u64>>,
    /// Repetitions per time-series row.
    pub series_reps: u32,
    /// Points of the point-cloud table (`None`: 1e5 and 1e6 on a CPU adapter, 1e6 … 1e8 on a
    /// GPU).
    pub pointcloud_counts: Option<Vec<u32>>,
    /// Clouds of the streaming table (`None`: the committed `autzen_trim.laz` where it is
    /// found, synthetic 10M and 100M).
    pub pointcloud_clouds: Option<Vec<vizdeck::scene::pointcloud::CloudSource>>,
    /// Point budget of the streaming table (`None`: the adapter's default).
    pub pointcloud_budget: Option<u64>,
    /// Target size of the point-cloud tables, pixels (`--size`).
    pub size: (u32, u32),
}

/// Default particle counts: ×4 steps from 16384 to 16777216 on a GPU, 4096 to 65536 on a CPU
/// adapter (lavapipe).
pub fn default_particle_counts(gpu: &Gpu) -> Vec<u32> {
    if gpu.is_cpu_adapter() {
        vec![4096, 16384, 65536]
    } else {
        vec![16384, 65536, 262_144, 1_048_576, 4_194_304, 16_777_216]
    }
}

/// The kernel tables, one after the other.
pub fn kernel_tables(gpu: &Gpu, kernels: &[Kernel], o: &KernelOptions) -> String {
    let mut s = String::new();
    for k in kernels {
        match k {
            Kernel::Fft => {
                s.push_str(&crate::fft::bench_table(
                    gpu,
                    &o.fft_sizes,
                    o.fft_batch,
                    o.fft_reps,
                ));
            }
            Kernel::Particles => {
                use vizdeck::scene::particles::Mode;
                let counts = o
                    .particle_counts
                    .clone()
                    .unwrap_or_else(|| default_particle_counts(gpu));
                s.push_str(&crate::particles::bench_table(
                    gpu,
                    &counts,
                    &[Mode::Free, Mode::Grid, Mode::Brute],
                    o.particle_steps,
                ));
            }
            Kernel::Timeseries => {
                let points = o.series_points.clone().unwrap_or_else(|| {
                    if gpu.is_cpu_adapter() {
                        vec![100_000, 1_000_000, 10_000_000]
                    } else {
                        vec![100_000, 1_000_000, 10_000_000, 100_000_000]
                    }
                });
                s.push_str(&crate::timeseries::bench_table(gpu, &points, o.series_reps));
            }
            Kernel::Pointcloud => {
                let counts = o.pointcloud_counts.clone().unwrap_or_else(|| {
                    if gpu.is_cpu_adapter() {
                        vec![100_000, 1_000_000]
                    } else {
                        vec![1_000_000, 10_000_000, 100_000_000]
                    }
                });
                s.push_str(&crate::raster::bench_table(gpu, &counts, 5, o.size));
            }
            Kernel::PointcloudStream => {
                use vizdeck::scene::pointcloud::CloudSource;
                let clouds = o.pointcloud_clouds.clone().unwrap_or_else(|| {
                    let autzen = std::path::PathBuf::from("tests/data/pointcloud/autzen_trim.laz");
                    let mut v = Vec::new();
                    if autzen.exists() {
                        v.push(CloudSource::File(autzen));
                    }
                    v.push(CloudSource::Synthetic(10_000_000));
                    v.push(CloudSource::Synthetic(100_000_000));
                    v
                });
                s.push_str(&crate::pointcloud_stream::stream_table(
                    gpu,
                    &clouds,
                    o.pointcloud_budget,
                    3,
                    60,
                    o.size,
                ));
            }
        }
        s.push('\n');
    }
    s
}

/// Seconds per repetition of `record` (one repetition recorded into the encoder it is given),
/// `reps` repetitions in one submit, timed from the submit until the GPU is idle. Warmed up
/// until two runs of `reps` agree within 5 % (at most 10 runs, after one single repetition):
/// on the H200 a cloud of several GB drew 3–5× slower for its first few frames after it was
/// made, which one warm-up repetition did not cover. The last run is the one measured.
#[allow(clippy::disallowed_methods)] // a benchmark outside the deck submits its own work
pub fn time_reps(
    gpu: &Gpu,
    label: &str,
    reps: u32,
    record: impl Fn(&mut wgpu::CommandEncoder),
) -> f64 {
    let run = |reps: u32| {
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        for _ in 0..reps {
            record(&mut enc);
        }
        let t = std::time::Instant::now();
        gpu.queue.submit([enc.finish()]);
        gpu.wait_idle();
        t.elapsed().as_secs_f64()
    };
    let reps = reps.max(1);
    run(1);
    let mut last = run(reps);
    for _ in 0..9 {
        let t = run(reps);
        let settled = (t - last).abs() <= 0.05 * last;
        last = t;
        if settled {
            break;
        }
    }
    last / f64::from(reps)
}
