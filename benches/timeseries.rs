//! Time-series benchmarks: store ingest (samples/s), CSV parse (MB/s), CPU M4, and the GPU M4
//! frame table (`bench_table`) at sizes from `VIZDECK_TS_POINTS` (comma-separated, default
//! `1000000,10000000`; `none` skips the table), e.g.
//! `VIZDECK_TS_POINTS=1000000,10000000,100000000 cargo bench --bench timeseries` on a large GPU.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use rtrb::{PushError, RingBuffer};
use vizdeck::gpu::{BackendChoice, Gpu};
use vizdeck::scene::timeseries::bench::{bench_table, random_walk_series};
use vizdeck::series::decimate::decimate_m4_rel;
use vizdeck::series::store::Series;
use vizdeck::series::{DEFAULT_CAP_SAMPLES, Pacing, SeriesSelection, SeriesSource, Store};

fn ingest(c: &mut Criterion) {
    let n = 4_000_000u64;
    let mut g = c.benchmark_group("timeseries_ingest");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    g.bench_function("store_push_4M", |b| {
        b.iter(|| {
            let mut s = Series::new("x", usize::MAX);
            for k in 0..n {
                s.push(k as f64 * 1e-6, k as f32);
            }
            black_box(s.len())
        })
    });
    // The same samples in batches of BATCH_ROWS through the bulk path, same thread.
    let times: Vec<f64> = (0..n).map(|k| k as f64 * 1e-6).collect();
    let values: Vec<f32> = (0..n).map(|k| k as f32).collect();
    g.bench_function("store_push_slice_4M", |b| {
        b.iter(|| {
            let mut s = Series::new("x", usize::MAX);
            for (t, v) in times.chunks(BATCH_ROWS).zip(values.chunks(BATCH_ROWS)) {
                s.push_slice(t, v).unwrap();
            }
            black_box(s.len())
        })
    });
    g.finish();
    producer_to_store(c);
}

/// Rows per batch handed from the producer thread to the store (the synthetic source's batch).
const BATCH_ROWS: usize = 16 * 1024;

/// One batch of samples: times (s), values.
type Rows = (Vec<f64>, Vec<f32>);

/// Sustained ingest: a producer thread fills batches (times computed, values copied from a
/// random-walk template) and hands them over an `rtrb` SPSC ring, emptied batches coming back
/// through a second ring as in `SeriesSource`; this thread stores them with `Series::push_slice`
/// into one series at the default cap (4 Mi samples), already full, so every batch also drops
/// the oldest samples: the steady state of a live chart.
fn producer_to_store(c: &mut Criterion) {
    let n = 16_000_000u64;
    let dt = 1e-8;
    let template: Arc<Vec<f32>> = Arc::new(
        random_walk_series(BATCH_ROWS as u64, 5)
            .iter()
            .map(|(_, v)| v)
            .collect(),
    );
    let mut series = Series::new("x", DEFAULT_CAP_SAMPLES);
    let mut next_k = 0u64;
    let mut run = |series: &mut Series, count: u64| {
        let (mut tx, mut rx) = RingBuffer::<Rows>::new(64);
        let (mut back_tx, mut back_rx) = RingBuffer::<Rows>::new(64);
        let (k0, template) = (next_k, template.clone());
        let producer = std::thread::spawn(move || {
            let (mut k, end) = (k0, k0 + count);
            while k < end {
                let (mut t, mut v) = back_rx.pop().unwrap_or_default();
                t.clear();
                v.clear();
                let rows = (BATCH_ROWS as u64).min(end - k);
                t.extend((k..k + rows).map(|i| i as f64 * dt));
                v.extend_from_slice(&template[..rows as usize]);
                let mut item = (t, v);
                while let Err(PushError::Full(back)) = tx.push(item) {
                    item = back;
                    std::thread::yield_now();
                }
                k += rows;
            }
        });
        let mut got = 0u64;
        while got < count {
            match rx.pop() {
                Ok((t, v)) => {
                    series.push_slice(&t, &v).unwrap();
                    got += t.len() as u64;
                    let _ = back_tx.push((t, v));
                }
                Err(_) => std::thread::yield_now(),
            }
        }
        producer.join().unwrap();
        next_k += count;
    };
    // Fill to the cap first: the measured runs are steady state (drop-oldest, chunks recycled).
    run(&mut series, DEFAULT_CAP_SAMPLES as u64);
    let mut g = c.benchmark_group("timeseries_ingest");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("producer_thread_to_store_16M", |b| {
        b.iter(|| {
            run(&mut series, n);
            black_box(series.len())
        })
    });
    g.finish();
    assert_eq!(series.len(), DEFAULT_CAP_SAMPLES);
}

fn csv_parse(c: &mut Criterion) {
    let mut text = String::from("time,a,b,c\n");
    for i in 0..400_000 {
        let t = i as f64 * 1e-4;
        text += &format!(
            "{t},{:.6},{:.6},{}\n",
            (t * 3.0).sin(),
            (t * 5.0).cos(),
            i % 97
        );
    }
    let path = std::env::temp_dir().join(format!("vizdeck-bench-{}.csv", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let mut g = c.benchmark_group("timeseries_csv");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    g.bench_function("parse_400k_rows_3_series", |b| {
        b.iter(|| {
            let mut src =
                SeriesSource::open(&SeriesSelection::Csv(path.clone()), Pacing::WallClock).unwrap();
            let mut store = Store::default();
            while !src.is_finished() {
                src.drain_into(&mut store);
                std::thread::yield_now();
            }
            black_box(store.points_ingested())
        })
    });
    g.finish();
    std::fs::remove_file(&path).ok();
}

fn cpu_m4(c: &mut Criterion) {
    let n = 10_000_000u64;
    let s = random_walk_series(n, 3);
    let mut out = Vec::new();
    let mut g = c.benchmark_group("timeseries_cpu_m4");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    g.bench_function("10M_into_2000_columns", |b| {
        b.iter(|| {
            decimate_m4_rel(&s, 0.0, n as f64 * 1e-6, 2000, &mut out);
            black_box(out.len())
        })
    });
    g.finish();
}

fn gpu_table() {
    if std::env::var("VIZDECK_TS_POINTS").is_ok_and(|v| v == "none") {
        return;
    }
    let sizes: Vec<u64> = std::env::var("VIZDECK_TS_POINTS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000_000, 10_000_000]);
    let gpu = match Gpu::new(BackendChoice::Vulkan, None, None)
        .or_else(|_| Gpu::new(BackendChoice::Auto, None, None))
    {
        Ok((g, _)) => g,
        Err(e) => {
            eprintln!("GPU M4 table skipped: {e}");
            return;
        }
    };
    let t = Instant::now();
    println!(
        "\nGPU M4 (1920 columns, all points in view):\n{}",
        bench_table(&gpu, &sizes, 10)
    );
    println!("(table took {:.1} s)", t.elapsed().as_secs_f64());
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    ingest(&mut c);
    csv_parse(&mut c);
    cpu_m4(&mut c);
    gpu_table();
    c.final_summary();
}
