//! A LAS/LAZ (or PLY, [`super::ply`]) file without a hierarchy, indexed in memory: every point decoded once (on the
//! scene's indexing thread, never the frame thread), the octree built over them
//! ([`super::octree::build`]), and nodes then served from memory. Bounds come from the points,
//! not the header; a file whose data ends early is shown with what it holds and a warning.
//!
//! Memory: about 44 bytes a point (f64 coordinates for the exact readout, the attribute word,
//! the colour, the octree's index). The out-of-core build with a cache on disk is still to come
//! (issue 14).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::PointCloudError;
use super::file::LasFile;
use super::octree::{self, OctreeConfig};
use super::source::{
    Hierarchy, NO_COLOR, NodeData, NodeMeta, NodeSource, SourceInfo, attribute_word, rgba_of,
};

/// Points decoded per batch while indexing.
const BATCH: usize = 65_536;

/// How far indexing has come, shared with the frame thread (points decoded; then the build).
#[derive(Debug, Default)]
pub struct Progress {
    /// Points decoded so far.
    pub decoded: AtomicU64,
    /// Points the header announces.
    pub expected: AtomicU64,
    /// 1 once decoding ended and the octree is being built.
    pub building: AtomicU64,
}

impl Progress {
    /// Fraction done in [0, 1] (decoding counts for 80 %, the build for the rest).
    pub fn fraction(&self) -> f32 {
        let e = self.expected.load(Ordering::Relaxed).max(1) as f32;
        let d = self.decoded.load(Ordering::Relaxed) as f32;
        let f = 0.8 * (d / e).min(1.0);
        if self.building.load(Ordering::Relaxed) > 0 {
            0.8_f32.max(f)
        } else {
            f
        }
    }
}

/// The indexed file.
pub struct MemorySource {
    info: SourceInfo,
    hierarchy: Hierarchy,
    /// Point indices per node (octree order).
    node_points: Vec<Vec<u32>>,
    xyz: Vec<[f64; 3]>,
    words: Vec<u32>,
    rgba: Vec<u32>,
    gps_time: Option<Vec<f64>>,
}

impl MemorySource {
    /// Decodes every point of `path` and builds its octree, reporting into `progress`.
    ///
    /// # Errors
    ///
    /// As [`LasFile::open`]; [`PointCloudError::NoPoints`] when the file holds none. A file
    /// whose data breaks part-way is not an error: its points before the break are kept and
    /// [`SourceInfo::warning`] says what happened.
    pub fn index(path: &Path, progress: &Arc<Progress>) -> Result<MemorySource, PointCloudError> {
        let mut file = LasFile::open(path)?;
        let info = file.info().clone();
        progress
            .expected
            .store(info.header_points, Ordering::Relaxed);
        let start = Instant::now();
        let mut xyz = Vec::new();
        let mut words = Vec::new();
        let mut rgb16 = Vec::new();
        let mut gps: Option<Vec<f64>> = info.has_gps_time.then(Vec::new);
        let mut intensity_max = 0;
        let mut broke: Option<PointCloudError> = None;
        loop {
            match file.next_batch(BATCH) {
                Ok(Some(b)) => {
                    xyz.extend_from_slice(&b.xyz);
                    for i in 0..b.len() {
                        intensity_max = intensity_max.max(b.intensity[i]);
                        words.push(attribute_word(
                            b.classification[i],
                            b.return_number[i],
                            0,
                            b.intensity[i],
                        ));
                    }
                    if let Some(c) = &b.rgb {
                        rgb16.extend_from_slice(c);
                    }
                    if let (Some(g), Some(t)) = (&mut gps, &b.gps_time) {
                        g.extend_from_slice(t);
                    }
                    progress.decoded.store(xyz.len() as u64, Ordering::Relaxed);
                }
                Ok(None) => break,
                Err(e) => {
                    broke = Some(e);
                    break;
                }
            }
        }
        let decode_s = start.elapsed().as_secs_f64();
        if xyz.is_empty() {
            return Err(broke.unwrap_or(PointCloudError::NoPoints {
                path: path.to_path_buf(),
            }));
        }
        let warning = broke.map(|e| e.to_string());
        progress.building.store(1, Ordering::Relaxed);
        let eight_bit = rgb16.iter().all(|c| c.iter().all(|&v| v <= 255));
        let rgba: Vec<u32> = if rgb16.len() == xyz.len() {
            rgb16.iter().map(|&c| rgba_of(c, eight_bit)).collect()
        } else {
            vec![NO_COLOR; xyz.len()]
        };
        let bounds = super::octree::bounds(&xyz);
        let warning = warning.or_else(|| header_disagrees(&info, bounds));
        let points = Points {
            xyz,
            words,
            rgba,
            gps_time: gps,
        };
        let facts = SourceInfo {
            name: path.display().to_string(),
            kind: if info.compressed { "LAZ" } else { "LAS" },
            scale: info.scale,
            has_color: !rgb16.is_empty(),
            has_gps_time: info.has_gps_time,
            intensity_max,
            warning,
            decode_rate: Some(points.xyz.len() as f64 / decode_s.max(1e-9)),
            build_rate: None,
            bounds,
            bounds_from: "points",
        };
        Ok(MemorySource::build(points, facts))
    }

    /// Builds the octree of `points` (every array of the same length, at least one point) and
    /// the source serving its nodes; `info`'s `build_rate` is filled in.
    pub fn build(points: Points, mut info: SourceInfo) -> MemorySource {
        let Points {
            xyz,
            words,
            rgba,
            gps_time,
        } = points;
        let build_start = Instant::now();
        let cfg = OctreeConfig::default();
        let tree = octree::build(&xyz, &cfg);
        let build_s = build_start.elapsed().as_secs_f64();
        let mut hierarchy = Hierarchy {
            nodes: Vec::with_capacity(tree.nodes.len()),
        };
        let mut parent = vec![None; tree.nodes.len()];
        for (i, n) in tree.nodes.iter().enumerate() {
            for c in n.children.iter().flatten() {
                parent[*c as usize] = Some(i as u32);
            }
        }
        let mut node_points = Vec::with_capacity(tree.nodes.len());
        for (i, n) in tree.nodes.into_iter().enumerate() {
            hierarchy.nodes.push(NodeMeta {
                level: n.level,
                cell: n.cell,
                min: n.min,
                max: n.min.map(|v| v + n.side),
                points: n.points.len() as u64,
                spacing: n.side / f64::from(cfg.sample_grid),
                parent: parent[i],
                children: Vec::new(),
            });
            node_points.push(n.points);
        }
        hierarchy.link_children();
        info.build_rate = Some(xyz.len() as f64 / build_s.max(1e-9));
        MemorySource {
            info,
            hierarchy,
            node_points,
            xyz,
            words,
            rgba,
            gps_time,
        }
    }
}

/// Points decoded from a file, as arrays of one attribute each (all of one length).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Points {
    /// File coordinates.
    pub xyz: Vec<[f64; 3]>,
    /// Attribute words ([`attribute_word`]).
    pub words: Vec<u32>,
    /// Colours, RGBA8.
    pub rgba: Vec<u32>,
    /// GPS times, where the file has them.
    pub gps_time: Option<Vec<f64>>,
}

/// A warning when the header's bounds do not hold the points (by more than the scale), or its
/// count is not theirs: the data is drawn, the header is wrong.
fn header_disagrees(info: &super::LasInfo, (lo, hi): ([f64; 3], [f64; 3])) -> Option<String> {
    let outside = (0..3).any(|k| {
        lo[k] < info.header_min[k] - info.scale[k] || hi[k] > info.header_max[k] + info.scale[k]
    });
    if outside {
        return Some(format!(
            "point cloud '{}': the header's bounds do not hold the points (drawn from the points)",
            info.path.display()
        ));
    }
    None
}

impl NodeSource for MemorySource {
    fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn load(&self, node: u32) -> Result<NodeData, PointCloudError> {
        let (Some(meta), Some(points)) = (
            self.hierarchy.nodes.get(node as usize),
            self.node_points.get(node as usize),
        ) else {
            return Ok(NodeData::default());
        };
        let mut d = NodeData {
            origin: meta.min,
            gps_time: self.gps_time.as_ref().map(|_| Vec::new()),
            ..NodeData::default()
        };
        for &i in points {
            let i = i as usize;
            d.push(self.xyz[i], self.words[i], self.rgba[i]);
            if let (Some(out), Some(g)) = (&mut d.gps_time, &self.gps_time) {
                out.push(g.get(i).copied().unwrap_or(0.0));
            }
        }
        Ok(d)
    }
}
