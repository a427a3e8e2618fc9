//! Decoding a LAS/LAZ file into the index's records ([`super::index::Record`]): every point once,
//! in batches, with its exact file coordinates, attribute word, colour and GPS time. A file whose
//! data breaks part-way gives the points before the break and a warning naming the file and the
//! count; a header whose bounds do not hold the points gives a warning (the points are drawn
//! from their own bounds).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::PointCloudError;
use super::file::{LasFile, PointBatch};
use super::index::{Progress, Record};
use super::source::{NO_COLOR, SourceInfo, attribute_word, rgba_of};

/// Points decoded per batch: many LAZ chunks (about 50,000 points each), decoded in parallel.
const BATCH: usize = 1 << 20;

/// Decodes `path` into `sink` (see the module docs; LAZ chunks on all cores), setting
/// `progress.expected` to the count the header announces (the index counts what arrives).
///
/// # Errors
///
/// As [`LasFile::open`]; the break itself when it comes before any point; an I/O error of the
/// sink, naming the file.
pub fn decode_las(
    path: &Path,
    progress: &Arc<Progress>,
    sink: &mut dyn FnMut(&[Record]) -> std::io::Result<()>,
) -> Result<SourceInfo, PointCloudError> {
    let mut file = LasFile::open_with(path, true)?;
    let info = file.info().clone();
    progress
        .expected
        .store(info.header_points, Ordering::Relaxed);
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    let mut intensity_max = 0u16;
    let mut count = 0u64;
    let mut broke = None;
    // This thread decodes (LAZ chunks in parallel: the reader is not Send) while a converter
    // thread turns the batch before into records; this thread hands those to the sink.
    let (to_convert, converter_in) = std::sync::mpsc::sync_channel::<las::PointData>(1);
    let (converted_out, converted) = std::sync::mpsc::sync_channel::<Vec<Record>>(2);
    let convert_info = info.clone();
    std::thread::scope(|scope| -> Result<(), PointCloudError> {
        let converter = std::thread::Builder::new()
            .name("vizdeck-pointcloud-convert".into())
            .spawn_scoped(scope, move || {
                let mut stats = Stats::default();
                for d in converter_in {
                    let recs = stats.convert(&PointBatch::from_data(&d, &convert_info));
                    if converted_out.send(recs).is_err() {
                        break;
                    }
                }
                stats
            })
            .map_err(|e| PointCloudError::Io {
                path: path.to_path_buf(),
                source: e,
            })?;
        let mut deliver = |recs: Vec<Record>| -> Result<(), PointCloudError> {
            count += recs.len() as u64;
            sink(&recs).map_err(|source| PointCloudError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        let mut sent = 0usize;
        let mut received = 0usize;
        loop {
            match file.next_records(BATCH) {
                Ok(Some(d)) => {
                    if to_convert.send(d).is_err() {
                        break;
                    }
                    sent += 1;
                }
                Ok(None) => break,
                Err(e) => {
                    broke = Some(e);
                    break;
                }
            }
            while let Ok(r) = converted.try_recv() {
                received += 1;
                deliver(r)?;
            }
        }
        drop(to_convert);
        while received < sent {
            let Ok(r) = converted.recv() else {
                break;
            };
            received += 1;
            deliver(r)?;
        }
        let stats = converter.join().unwrap_or_default();
        (lo, hi, intensity_max) = (stats.lo, stats.hi, stats.intensity_max);
        Ok(())
    })?;
    if count == 0 {
        return Err(broke.unwrap_or(PointCloudError::NoPoints {
            path: path.to_path_buf(),
        }));
    }
    let warning = broke
        .map(|e| e.to_string())
        .or_else(|| header_disagrees(&info, (lo, hi)));
    Ok(SourceInfo {
        name: path.display().to_string(),
        kind: if info.compressed { "LAZ" } else { "LAS" },
        scale: info.scale,
        has_color: info.has_color,
        has_gps_time: info.has_gps_time,
        intensity_max,
        warning,
        decode_rate: None,
        build_rate: None,
        bounds: (lo, hi),
        bounds_from: "points",
    })
}

/// What conversion gathers on the way: bounds, largest intensity, and whether colours are
/// 8-bit values in the 16-bit fields (decided on the first batch with colour).
struct Stats {
    lo: [f64; 3],
    hi: [f64; 3],
    intensity_max: u16,
    eight_bit: Option<bool>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            lo: [f64::INFINITY; 3],
            hi: [f64::NEG_INFINITY; 3],
            intensity_max: 0,
            eight_bit: None,
        }
    }
}

impl Stats {
    /// The records of batch `b`.
    fn convert(&mut self, b: &PointBatch) -> Vec<Record> {
        if let Some(c) = &b.rgb
            && self.eight_bit.is_none()
        {
            self.eight_bit = Some(c.iter().all(|v| v.iter().all(|&x| x <= 255)));
        }
        let eight_bit = self.eight_bit.unwrap_or(false);
        (0..b.len())
            .map(|i| {
                let p = b.xyz[i];
                for (k, v) in p.iter().enumerate() {
                    self.lo[k] = self.lo[k].min(*v);
                    self.hi[k] = self.hi[k].max(*v);
                }
                self.intensity_max = self.intensity_max.max(b.intensity[i]);
                Record {
                    xyz: p,
                    gps_time: b.gps_time.as_ref().map_or(0.0, |g| g[i]),
                    word: attribute_word(
                        b.classification[i],
                        b.return_number[i],
                        0,
                        b.intensity[i],
                    ),
                    rgba: b
                        .rgb
                        .as_ref()
                        .map_or(NO_COLOR, |c| rgba_of(c[i], eight_bit)),
                }
            })
            .collect()
    }
}

/// A warning when the header's bounds do not hold the points (by more than the scale): the data
/// is drawn, the header is wrong.
fn header_disagrees(info: &super::LasInfo, (lo, hi): ([f64; 3], [f64; 3])) -> Option<String> {
    let outside = (0..3).any(|k| {
        lo[k] < info.header_min[k] - info.scale[k] || hi[k] > info.header_max[k] + info.scale[k]
    });
    outside.then(|| {
        format!(
            "point cloud '{}': the header's bounds do not hold the points (drawn from the points)",
            info.path.display()
        )
    })
}
