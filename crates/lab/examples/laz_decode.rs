//! vizdeck's side of `benches/laz_decode_ref.sh`: decodes a LAS/LAZ file with vizdeck's loader
//! ([`vizdeck::pointcloud::LasFile`], batches of 65,536 points: the file's integers, f64 file
//! coordinates, intensity, class, return, colour, GPS time), `REPS` times, and prints the median
//! and the ratio to the peer's median when given; then builds the octree of its points
//! ([`vizdeck::pointcloud::octree::build`], default limits, one thread) `REPS` times and prints
//! the median build rate; then indexes the file out of core into a fresh cache
//! ([`vizdeck::pointcloud::index`]: decode into a spill file, count, chunks of 500,000 points,
//! distribute, index the chunks, upper levels, write) with 1 and 2 worker threads, and prints
//! the median wall time of the whole and the rate of the build after decoding.
//!
//! First decodes it on all cores as the index does ([`vizdeck::pointcloud::decode::decode_las`]:
//! LAZ chunks in parallel, batches of 1,048,576 points, each converted into records while the
//! next decodes) and prints the ratio to the peer's parallel median when given.
//!
//! Usage: `laz_decode FILE REPS [PEER_MS [PEER2_MS]]`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use vizdeck::pointcloud::LasFile;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("laz_decode: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: laz_decode FILE REPS [PEER_MS [PEER2_MS]]";
    let path = args.first().ok_or(usage)?;
    let reps: usize = args
        .get(1)
        .ok_or(usage)?
        .parse()
        .map_err(|_| format!("REPS '{}' is not a whole number", args[1]))?;
    let peer_ms: Option<f64> = match args.get(2) {
        Some(s) => Some(
            s.parse()
                .map_err(|_| format!("PEER_MS '{s}' is not a number"))?,
        ),
        None => None,
    };
    let peer2_ms: Option<f64> = match args.get(3) {
        Some(s) => Some(
            s.parse()
                .map_err(|_| format!("PEER2_MS '{s}' is not a number"))?,
        ),
        None => None,
    };
    let mut par = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let mut n = 0u64;
        let progress = std::sync::Arc::new(vizdeck::pointcloud::index::Progress::default());
        vizdeck::pointcloud::decode::decode_las(Path::new(path), &progress, &mut |r| {
            n += r.len() as u64;
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        par.push((t.elapsed().as_secs_f64() * 1e3, n));
    }
    par.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (pms, pn) = par[par.len() / 2];
    println!(
        "vizdeck decode_las (all cores: LAZ chunks in parallel, conversion overlapped): {pn} \
         points, median {pms:.1} ms, {:.2} M points/s",
        pn as f64 / pms / 1e3
    );
    if let Some(p) = peer2_ms {
        println!(
            "vizdeck speed / laspy speed (all cores each): {:.2}x",
            p / pms
        );
    }
    let mut times = Vec::new();
    let mut points = 0u64;
    let mut check = 0.0f64;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let mut f = LasFile::open(Path::new(path)).map_err(|e| e.to_string())?;
        points = 0;
        while let Some(b) = f.next_batch(65_536).map_err(|e| e.to_string())? {
            points += b.len() as u64;
            if let Some(p) = b.xyz.last() {
                check += p[0] + p[1] + p[2];
            }
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    println!(
        "vizdeck LasFile (1 thread): {points} points, median of {}: {ms:.1} ms, {:.2} M points/s \
         (checksum {check:.3})",
        times.len(),
        points as f64 / ms / 1e3
    );
    let mut f = LasFile::open(Path::new(path)).map_err(|e| e.to_string())?;
    let mut xyz = Vec::new();
    while let Some(b) = f.next_batch(65_536).map_err(|e| e.to_string())? {
        xyz.extend_from_slice(&b.xyz);
    }
    let cfg = vizdeck::pointcloud::octree::OctreeConfig::default();
    let mut build_ms = Vec::new();
    let mut nodes = 0;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        nodes = vizdeck::pointcloud::octree::build(&xyz, &cfg).nodes.len();
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    build_ms.sort_by(f64::total_cmp);
    let b = build_ms[build_ms.len() / 2];
    println!(
        "vizdeck octree build (in memory, 1 thread): {} points into {nodes} nodes, median {b:.1} \
         ms, {:.2} M points/s",
        xyz.len(),
        xyz.len() as f64 / b / 1e3
    );
    for threads in [1, 2] {
        let (mut walls, mut builds) = (Vec::new(), Vec::new());
        for rep in 0..reps.max(1) {
            let cache = std::env::temp_dir().join(format!(
                "vizdeck-laz-decode-{}-{threads}-{rep}",
                std::process::id()
            ));
            let mut opts = vizdeck::pointcloud::index::IndexOptions::new(cache.clone());
            opts.threads = threads;
            opts.chunk_points = 500_000;
            let progress = std::sync::Arc::new(vizdeck::pointcloud::index::Progress::default());
            let p = progress.clone();
            let t = Instant::now();
            let (source, _) = vizdeck::pointcloud::index::open_or_index(
                Path::new(path),
                &opts,
                &progress,
                |sink| vizdeck::pointcloud::decode::decode_las(Path::new(path), &p, sink),
            )
            .map_err(|e| e.to_string())?;
            walls.push(t.elapsed().as_secs_f64());
            use vizdeck::pointcloud::source::NodeSource;
            builds.push(source.info().build_rate.unwrap_or(0.0));
            let _ = std::fs::remove_dir_all(&cache);
        }
        walls.sort_by(f64::total_cmp);
        builds.sort_by(f64::total_cmp);
        let (w, b) = (walls[walls.len() / 2], builds[builds.len() / 2]);
        println!(
            "vizdeck out-of-core index ({threads} worker thread(s)): decode + build median {:.1} \
             ms ({:.2} M points/s); the build after decoding {:.2} M points/s",
            w * 1e3,
            xyz.len() as f64 / w / 1e6,
            b / 1e6
        );
    }
    if let Some(p) = peer_ms {
        println!(
            "vizdeck speed / laspy speed (1 thread each): {:.2}x",
            p / ms
        );
    }
    Ok(())
}
