//! `vizdeck-lab`'s command line ([`LabArgs`]) and what it runs ([`run`]): the transfer tables
//! (`--upload`) and the kernel tables (`--kernels`), printed and written to `--out` as
//! `bench-transfers.{json,md}` and `bench-kernels.md` (the files `vizdeck bench` wrote before the
//! lab left the app).

use std::path::PathBuf;

use vizdeck::gpu::upload::Strategy;
use vizdeck::gpu::{BackendChoice, Gpu};
use vizdeck::progress::Progress;

use crate::kernel::{Kernel, KernelOptions, kernel_tables};
use crate::transfer::{
    direct_table, empty_frame_us, readback_table, transfer_markdown, upload_table,
};

/// `vizdeck-lab`: kernel and transfer tables on this machine's GPU.
#[derive(clap::Parser, Clone, Debug)]
#[command(name = "vizdeck-lab", version, about, long_about = None)]
pub struct LabArgs {
    /// Measure upload strategies (comma-separated; `direct` for writes straight into mapped GPU
    /// memory; `all` for every one) and readback, at `--upload-sizes`.
    #[arg(long, value_delimiter = ',', value_name = "STRATEGY,..|direct|all")]
    pub upload: Vec<String>,
    /// Payload sizes of `--upload` in bytes, with optional KiB/MiB suffix.
    #[arg(long, value_delimiter = ',', default_value = "64KiB,1MiB,16MiB,256MiB", value_parser = vizdeck::cli::parse_bytes)]
    pub upload_sizes: Vec<u64>,
    /// Frames measured per strategy and size.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub upload_frames: u32,
    /// Kernel tables to print: fft, particles, timeseries, pointcloud, pointcloud-stream
    /// (comma-separated).
    #[arg(long, value_delimiter = ',', value_enum, value_name = "KERNEL,..")]
    pub kernels: Vec<crate::kernel::Kernel>,
    /// FFT sizes of the fft table.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1024,2048,4096,8192,16384"
    )]
    pub fft_sizes: Vec<usize>,
    /// FFT batch (columns per dispatch).
    #[arg(long, default_value_t = 256)]
    pub fft_batch: u32,
    /// FFT repetitions per submit.
    #[arg(long, default_value_t = 20)]
    pub fft_reps: u32,
    /// Particle counts of the particles table (default: 16384 … 16777216 on a GPU, 4096 … 65536
    /// on a CPU adapter).
    #[arg(long, value_delimiter = ',')]
    pub particle_counts: Vec<u32>,
    /// Simulation steps per particles row.
    #[arg(long, default_value_t = 32)]
    pub particle_steps: u32,
    /// Points of the pointcloud table (default: 1e5 and 1e6 on a CPU adapter, 1e6 … 1e8 on a GPU).
    #[arg(long, value_delimiter = ',')]
    pub pointcloud_counts: Vec<u32>,
    /// Clouds of the pointcloud-stream table, comma-separated: files or synthetic:N (default:
    /// tests/data/pointcloud/autzen_trim.laz where it exists, synthetic:10M, synthetic:100M).
    #[arg(long, value_delimiter = ',', value_parser = vizdeck::cli::parse_pointcloud)]
    pub pointcloud_clouds: Vec<vizdeck::scene::pointcloud::CloudSource>,
    /// Point budget of the pointcloud-stream table (default: the adapter's, as in the app).
    #[arg(long, value_name = "N", value_parser = vizdeck::cli::parse_count)]
    pub pointcloud_budget: Option<u64>,
    /// Points in view of the timeseries table (default: 1e5 … 1e8 on a GPU, 1e5 … 1e7 on a CPU
    /// adapter).
    #[arg(long, value_delimiter = ',')]
    pub series_points: Vec<u64>,
    /// Repetitions per timeseries row.
    #[arg(long, default_value_t = 10)]
    pub series_reps: u32,
    /// Target size of the point-cloud tables, pixels.
    #[arg(long, default_value = "1280x720", value_name = "WxH", value_parser = vizdeck::cli::parse_size)]
    pub size: (u32, u32),
    /// Folder for the tables' files.
    #[arg(long, default_value = "bench-out", value_name = "DIR")]
    pub out: PathBuf,
    /// Graphics backend.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
}

/// Runs `vizdeck-lab`: the `--upload` tables, then the `--kernels` tables; prints each and writes
/// them into `--out`. A progress bar on stderr counts the tables.
///
/// # Errors
///
/// No adapter, an unknown strategy, a file that cannot be written, an upload that delivered
/// wrong bytes, or GPU validation errors: one line each.
pub fn run(args: &LabArgs) -> anyhow::Result<()> {
    if args.upload.is_empty() && args.kernels.is_empty() {
        anyhow::bail!("vizdeck-lab: nothing to run; give --upload and/or --kernels (see --help)");
    }
    let (gpu, _) = Gpu::new(args.backend, None, None)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("vizdeck-lab: '{}': {e}", args.out.display()))?;
    println!(
        "adapter: {} ({}, {}), driver: {}",
        gpu.summary.name, gpu.summary.backend, gpu.summary.device_type, gpu.summary.driver
    );
    let runs = usize::from(!args.upload.is_empty()) + args.kernels.len();
    let mut progress = Progress::new("lab", runs as u64, "tables");
    if !args.upload.is_empty() {
        transfers(&gpu, args, &mut progress)?;
    }
    if !args.kernels.is_empty() {
        let o = KernelOptions {
            fft_sizes: args.fft_sizes.clone(),
            fft_batch: args.fft_batch,
            fft_reps: args.fft_reps,
            particle_counts: (!args.particle_counts.is_empty())
                .then(|| args.particle_counts.clone()),
            particle_steps: args.particle_steps,
            series_points: (!args.series_points.is_empty()).then(|| args.series_points.clone()),
            series_reps: args.series_reps,
            pointcloud_counts: (!args.pointcloud_counts.is_empty())
                .then(|| args.pointcloud_counts.clone()),
            pointcloud_clouds: (!args.pointcloud_clouds.is_empty())
                .then(|| args.pointcloud_clouds.clone()),
            pointcloud_budget: args.pointcloud_budget,
            size: args.size,
        };
        let mut text = String::new();
        for k in &args.kernels {
            progress.set_item(format!("kernel table {}", kernel_name(*k)));
            text.push_str(&kernel_tables(&gpu, std::slice::from_ref(k), &o));
            progress.inc(1);
        }
        vizdeck::progress::suspend(|| println!("\n{text}"));
        std::fs::write(args.out.join("bench-kernels.md"), &text)?;
    }
    progress.finish();
    let errors = gpu.error_messages();
    if let Some(first) = errors.first() {
        anyhow::bail!(
            "{} GPU validation error(s); first: {}",
            errors.len(),
            first.lines().next().unwrap_or("")
        );
    }
    Ok(())
}

/// The `--upload` tables: the strategies asked for (or all), `direct`, readback, the empty
/// frame; printed, and written as `bench-transfers.json` and `.md`.
fn transfers(gpu: &Gpu, args: &LabArgs, progress: &mut Progress) -> anyhow::Result<()> {
    let all = args.upload.iter().any(|s| s == "all");
    let direct = all || args.upload.iter().any(|s| s == "direct");
    let strategies: Vec<Strategy> = if all {
        Strategy::ALL.to_vec()
    } else {
        args.upload
            .iter()
            .filter(|name| name.as_str() != "direct")
            .map(|name| {
                Strategy::ALL
                    .iter()
                    .copied()
                    .find(|s| s.name() == name.as_str())
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "vizdeck-lab: unknown upload strategy '{name}'; strategies: {}, direct, all",
                            Strategy::ALL.map(|s| s.name()).join(", ")
                        )
                    })
            })
            .collect::<anyhow::Result<_>>()?
    };
    progress.set_item("upload and readback tables");
    let mut up = if strategies.is_empty() {
        Vec::new()
    } else {
        upload_table(gpu, &strategies, &args.upload_sizes, args.upload_frames)
    };
    if direct {
        up.extend(direct_table(gpu, &args.upload_sizes, args.upload_frames));
    }
    let rb = readback_table(gpu, &args.upload_sizes, args.upload_frames);
    let empty = empty_frame_us(gpu, args.upload_frames.max(20));
    progress.inc(1);
    let md = transfer_markdown(gpu, &up, &rb, empty);
    vizdeck::progress::suspend(|| println!("\n{md}"));
    vizdeck::bench::write_json(
        &args.out.join("bench-transfers.json"),
        &serde_json::json!({
            "vizdeck": env!("CARGO_PKG_VERSION"),
            "kind": "transfers",
            "adapter": gpu.summary,
            "upload": up,
            "readback": rb,
            "empty_frame_us": {"blocking": empty.0, "spin": empty.1},
        }),
    )?;
    std::fs::write(args.out.join("bench-transfers.md"), &md)?;
    if up.iter().any(|r| !r.verified) {
        anyhow::bail!("vizdeck-lab: an upload strategy delivered wrong bytes (see the table)");
    }
    Ok(())
}

/// The name `--kernels` gives kernel `k`.
fn kernel_name(k: Kernel) -> String {
    clap::ValueEnum::to_possible_value(&k)
        .map_or_else(|| format!("{k:?}"), |v| v.get_name().to_string())
}
