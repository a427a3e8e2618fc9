//! vizdeck's side of `benches/tsdownsample_ref.sh`: CPU M4 of a file of raw little-endian f32
//! values into pixel columns, timed, with a cross-check against tsdownsample's selection.
//!
//! Usage: `m4_compare DATA.f32 COLUMNS REPS [PEER_MS]`. The values are stored as one series at
//! times 0, 1, 2, … seconds (so column `i` holds exactly the samples `i·n/COLUMNS ..`, the same
//! equal-count bins as tsdownsample's index-based M4 when COLUMNS divides n), decimated `REPS`
//! times by [`decimate_m4_rel`] over `[0, n)`; the median is printed, and the ratio to `PEER_MS`
//! (tsdownsample's median) when given. If `DATA.f32.idx` exists (tsdownsample's selected indices,
//! little-endian u64), every column's min, max, first and last are checked against the values at
//! the indices tsdownsample selected in that bin.

use std::process::ExitCode;
use std::time::Instant;

use vizdeck::series::decimate::{Column, decimate_m4_rel};
use vizdeck::series::store::Series;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("m4_compare: {e}");
            ExitCode::from(2)
        }
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> Result<T, String> {
    let s = args.get(i).ok_or_else(|| {
        format!("missing {what} (usage: m4_compare DATA.f32 COLUMNS REPS [PEER_MS])")
    })?;
    s.parse()
        .map_err(|_| format!("{what} '{s}' is not a valid number"))
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path: String = arg(&args, 0, "DATA.f32")?;
    let columns: usize = arg(&args, 1, "COLUMNS")?;
    let reps: usize = arg(&args, 2, "REPS")?;
    let peer_ms: Option<f64> = if args.len() > 3 {
        Some(arg(&args, 3, "PEER_MS")?)
    } else {
        None
    };
    if columns == 0 || reps == 0 {
        return Err("COLUMNS and REPS must be at least 1".into());
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("'{path}': {e}"))?;
    if bytes.is_empty() || bytes.len() % 4 != 0 {
        return Err(format!(
            "'{path}': {} bytes is not a whole, non-zero number of f32 values",
            bytes.len()
        ));
    }
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    drop(bytes);
    let n = values.len();
    let mut series = Series::new("m4", usize::MAX);
    let batch = 1 << 16;
    let mut times = Vec::with_capacity(batch);
    for (k, run) in values.chunks(batch).enumerate() {
        times.clear();
        times.extend((0..run.len()).map(|j| (k * batch + j) as f64));
        series
            .push_slice(&times, run)
            .map_err(|e| format!("storing '{path}': {e}"))?;
    }

    let mut out: Vec<Column> = Vec::new();
    decimate_m4_rel(&series, 0.0, n as f64, columns, &mut out); // warm-up
    let mut ms: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            decimate_m4_rel(&series, 0.0, n as f64, columns, &mut out);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    let med = ms[ms.len() / 2];
    println!(
        "  vizdeck decimate_m4 (time bins, 1 thread):  {med:9.2} ms  {:6.2} G values/s",
        n as f64 / med / 1e6
    );
    if let Some(p) = peer_ms {
        println!(
            "  vizdeck speed / tsdownsample speed (1 thread, index bins): {:.2}x",
            p / med
        );
    }

    let idx_path = format!("{path}.idx");
    if let Ok(raw) = std::fs::read(&idx_path) {
        let idx: Vec<usize> = raw
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize)
            .collect();
        if !n.is_multiple_of(columns) {
            println!("  cross-check skipped: {columns} columns do not divide {n} values");
            return Ok(());
        }
        let per = n / columns;
        let mut bad = 0;
        for (i, col) in out.iter().enumerate() {
            let picked: Vec<usize> = idx
                .iter()
                .copied()
                .filter(|&k| k / per == i && k < n)
                .collect();
            let (Some(&a), Some(&b)) = (picked.iter().min(), picked.iter().max()) else {
                bad += 1;
                continue;
            };
            let lo = picked
                .iter()
                .map(|&k| values[k])
                .fold(f32::INFINITY, f32::min);
            let hi = picked
                .iter()
                .map(|&k| values[k])
                .fold(f32::NEG_INFINITY, f32::max);
            let ok = col.min == lo
                && col.max == hi
                && col.first == values[a]
                && col.last == values[b]
                && col.count as usize == per;
            bad += usize::from(!ok);
        }
        println!(
            "  cross-check against tsdownsample's selection: {} of {columns} columns agree",
            columns - bad
        );
        if bad > 0 {
            return Err(format!("{bad} columns differ from tsdownsample's M4"));
        }
    }
    Ok(())
}
