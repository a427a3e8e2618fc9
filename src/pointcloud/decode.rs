//! Decoding a LAS/LAZ file into the index's records ([`super::index::Record`]): every point once,
//! in batches, with its exact file coordinates, attribute word, colour and GPS time. A file whose
//! data breaks part-way gives the points before the break and a warning naming the file and the
//! count; a header whose bounds do not hold the points gives a warning (the points are drawn
//! from their own bounds).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::PointCloudError;
use super::file::LasFile;
use super::index::{Decoded, Progress, Record};
use super::source::{NO_COLOR, SourceInfo, attribute_word, rgba_of};

/// Points decoded per batch.
const BATCH: usize = 65_536;

/// Decodes `path` into `sink` (see the module docs), reporting into `progress`.
///
/// # Errors
///
/// As [`LasFile::open`]; the break itself when it comes before any point; an I/O error of the
/// sink, naming the file.
pub fn decode_las(
    path: &Path,
    progress: &Arc<Progress>,
    sink: &mut dyn FnMut(&[Record]) -> std::io::Result<()>,
) -> Result<Decoded, PointCloudError> {
    let mut file = LasFile::open(path)?;
    let info = file.info().clone();
    progress
        .expected
        .store(info.header_points, Ordering::Relaxed);
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    let mut intensity_max = 0u16;
    let mut eight_bit: Option<bool> = None;
    let mut count = 0u64;
    let mut broke = None;
    let mut records = Vec::with_capacity(BATCH);
    loop {
        let b = match file.next_batch(BATCH) {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => {
                broke = Some(e);
                break;
            }
        };
        // 8-bit colours stored in the 16-bit fields: decided on the first batch with colour.
        if let Some(c) = &b.rgb
            && eight_bit.is_none()
        {
            eight_bit = Some(c.iter().all(|v| v.iter().all(|&x| x <= 255)));
        }
        records.clear();
        for i in 0..b.len() {
            let p = b.xyz[i];
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
            intensity_max = intensity_max.max(b.intensity[i]);
            records.push(Record {
                xyz: p,
                gps_time: b.gps_time.as_ref().map_or(0.0, |g| g[i]),
                word: attribute_word(b.classification[i], b.return_number[i], 0, b.intensity[i]),
                rgba: b
                    .rgb
                    .as_ref()
                    .map_or(NO_COLOR, |c| rgba_of(c[i], eight_bit.unwrap_or(false))),
            });
        }
        count += records.len() as u64;
        sink(&records).map_err(|source| PointCloudError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    if count == 0 {
        return Err(broke.unwrap_or(PointCloudError::NoPoints {
            path: path.to_path_buf(),
        }));
    }
    let warning = broke
        .map(|e| e.to_string())
        .or_else(|| header_disagrees(&info, (lo, hi)));
    Ok(Decoded {
        info: SourceInfo {
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
        },
    })
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
