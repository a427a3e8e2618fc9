//! `vizdeck stats FILE.csv [FILE2.csv ...] [--json]`: summaries of recorded captures (vizdeck's
//! own CSVs and PresentMon-style CSVs, frame time from `MsBetweenPresents`), side by side.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::record::{Capture, StatsError};

/// Reads every file; the first that cannot be read is the error (one line naming it).
///
/// # Errors
///
/// See [`Capture::read`].
pub fn read_all(files: &[PathBuf]) -> Result<Vec<Capture>, StatsError> {
    files.iter().map(Capture::read).collect()
}

/// The text report: one column per capture, a row per statistic (`*`: needs more frames than
/// recorded), and for two or more captures the change of each against the first.
pub fn text_report(captures: &[Capture]) -> String {
    let summaries: Vec<_> = captures.iter().map(Capture::summary).collect();
    let mut out = String::new();
    for (i, c) in captures.iter().enumerate() {
        let _ = write!(
            out,
            "[{}] {} ({:?}, {} frames",
            i + 1,
            c.path.display(),
            c.format,
            c.frame_times_ms.len()
        );
        if c.skipped_rows > 0 {
            let _ = write!(
                out,
                ", {} rows without a frame time skipped",
                c.skipped_rows
            );
        }
        out.push_str(")\n");
    }
    let rows: Vec<Vec<(&str, String)>> = summaries.iter().map(|s| s.table_rows()).collect();
    let label_w = rows
        .first()
        .map(|r| r.iter().map(|(l, _)| l.len()).max().unwrap_or(0))
        .unwrap_or(0)
        .max(9);
    let _ = write!(out, "{:<label_w$}", "statistic");
    for i in 0..captures.len() {
        let _ = write!(out, " {:>14}", format!("[{}]", i + 1));
    }
    out.push('\n');
    if let Some(first) = rows.first() {
        for (r, (label, _)) in first.iter().enumerate() {
            let _ = write!(out, "{label:<label_w$}");
            for col in &rows {
                let _ = write!(out, " {:>14}", col[r].1);
            }
            out.push('\n');
        }
    }
    if summaries.len() >= 2 {
        let base = &summaries[0];
        for (i, s) in summaries.iter().enumerate().skip(1) {
            let comparable = !base.is_empty() && !s.is_empty();
            let pct = |a: f64, b: f64| {
                if comparable && a > 0.0 {
                    format!("{:+.1}%", (b - a) / a * 100.0)
                } else {
                    "n/a".to_string()
                }
            };
            // An undefined FPS (a capture of 0 ms frames) has no change to give.
            let pct_fps = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => pct(a, b),
                _ => "n/a".to_string(),
            };
            let _ = writeln!(
                out,
                "[{}] vs [1]: average FPS {}, p50 {}, p99 {}, 1% low FPS {}",
                i + 1,
                pct_fps(base.mean_fps, s.mean_fps),
                pct(base.p50_ms, s.p50_ms),
                pct(base.p99_ms, s.p99_ms),
                pct_fps(base.low_1_fps, s.low_1_fps)
            );
        }
    }
    if summaries.iter().any(|s| !s.needs_more_frames.is_empty()) {
        out.push_str(
            "* the capture has too few frames for this statistic (it is the slowest frame)\n",
        );
    }
    if summaries.iter().any(|s| s.is_empty()) {
        out.push_str("n/a: the capture has no frames\n");
    }
    if summaries
        .iter()
        .any(|s| !s.is_empty() && s.mean_fps.is_none())
    {
        out.push_str("n/a FPS: every frame of the capture is 0 ms (no rate over no time)\n");
    }
    out
}

/// The JSON report: `{"captures": [{"path", "format", "frames", "skipped_rows", "summary"}]}`.
pub fn json_report(captures: &[Capture]) -> serde_json::Value {
    serde_json::json!({
        "captures": captures.iter().map(|c| serde_json::json!({
            "path": c.path.display().to_string(),
            "format": c.format,
            "frames": c.frame_times_ms.len(),
            "skipped_rows": c.skipped_rows,
            "summary": c.summary(),
        })).collect::<Vec<_>>()
    })
}

/// Runs `vizdeck stats`: prints the report to stdout.
///
/// # Errors
///
/// The first file that cannot be read (the message names it).
pub fn run(files: &[PathBuf], json: bool) -> Result<(), StatsError> {
    let captures = read_all(files)?;
    if json {
        let text = serde_json::to_string_pretty(&json_report(&captures)).unwrap_or_default();
        println!("{text}");
    } else {
        print!("{}", text_report(&captures));
    }
    Ok(())
}
