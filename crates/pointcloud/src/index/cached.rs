//! The cache file of an indexed cloud: its name (from the file's [`Fingerprint`]), the JSON
//! footer, the node table, and [`CachedSource`], which serves nodes from the file with
//! positioned reads.

use super::*;

/// The identity of a file for its cache: canonical path, size, modification time (ns).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Fingerprint {
    pub(super) path: String,
    pub(super) size: u64,
    pub(super) mtime_ns: i128,
}

pub(super) fn fingerprint(path: &Path) -> Result<Fingerprint, PointCloudError> {
    let io = |source| PointCloudError::Io {
        path: path.to_path_buf(),
        source,
    };
    let canonical = std::fs::canonicalize(path).map_err(io)?;
    let meta = std::fs::metadata(&canonical).map_err(io)?;
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    Ok(Fingerprint {
        path: canonical.display().to_string(),
        size: meta.len(),
        mtime_ns,
    })
}

/// The cache file of `fp` in `dir` (named by a hash of the canonical path).
pub(super) fn cache_file(dir: &Path, fp: &Fingerprint) -> PathBuf {
    // FNV-1a, 64 bits: a stable name, not a security boundary.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in fp.path.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let stem = Path::new(&fp.path)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    dir.join(format!("{stem}-{h:016x}.vzoct"))
}

/// The footer of a cache file.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Footer {
    pub(super) fingerprint: Fingerprint,
    pub(super) name: String,
    pub(super) kind: String,
    pub(super) scale: [f64; 3],
    pub(super) has_color: bool,
    pub(super) has_gps_time: bool,
    pub(super) intensity_max: u16,
    pub(super) warning: Option<String>,
    pub(super) bounds: ([f64; 3], [f64; 3]),
    pub(super) spacing_grid: u32,
    pub(super) decode_rate: Option<f64>,
    pub(super) build_rate: Option<f64>,
}

/// One node of the table: level, cell, cube, points and where they are.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct TableEntry {
    pub(super) min: [f64; 3],
    pub(super) side: f64,
    pub(super) offset: u64,
    pub(super) points: u64,
    pub(super) level: u32,
    pub(super) cell: [u32; 3],
}

/// A cloud served from its cache file (see the module docs).
pub struct CachedSource {
    pub(super) file: std::fs::File,
    pub(super) hierarchy: Hierarchy,
    pub(super) offsets: Vec<u64>,
    pub(super) info: SourceInfo,
    pub(super) fingerprint: Fingerprint,
    /// The cache file.
    pub path: PathBuf,
}

impl CachedSource {
    /// The file this cache was made from (its canonical path when indexed).
    pub fn source_path(&self) -> &str {
        &self.fingerprint.path
    }

    /// Opens a cache file: its footer and node table.
    ///
    /// # Errors
    ///
    /// [`PointCloudError::Io`] or [`PointCloudError::NotLas`] naming the cache when it is
    /// missing, of another version or damaged.
    pub fn open(path: &Path) -> Result<CachedSource, PointCloudError> {
        let io = |source| PointCloudError::Io {
            path: path.to_path_buf(),
            source,
        };
        let bad = |reason: &str| PointCloudError::NotLas {
            path: path.to_path_buf(),
            reason: format!("not a vizdeck octree cache: {reason}"),
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < 24 + MAGIC.len() as u64 {
            return Err(bad("too short"));
        }
        let mut tail = [0u8; 24];
        file.read_exact_at(&mut tail, len - 24).map_err(io)?;
        if &tail[16..] != MAGIC {
            return Err(bad("no footer of this version"));
        }
        let table_at = u64::from_le_bytes(tail[0..8].try_into().unwrap_or_default());
        let json_at = u64::from_le_bytes(tail[8..16].try_into().unwrap_or_default());
        if !(table_at <= json_at && json_at <= len - 24) {
            return Err(bad("footer offsets out of range"));
        }
        let mut json = vec![0u8; (len - 24 - json_at) as usize];
        file.read_exact_at(&mut json, json_at).map_err(io)?;
        let footer: Footer = serde_json::from_slice(&json).map_err(|e| bad(&e.to_string()))?;
        let entry = std::mem::size_of::<TableEntry>() as u64;
        if (json_at - table_at) % entry != 0 {
            return Err(bad("node table size"));
        }
        let mut table = vec![TableEntry::default(); ((json_at - table_at) / entry) as usize];
        file.read_exact_at(bytemuck::cast_slice_mut(&mut table), table_at)
            .map_err(io)?;
        let mut nodes = Vec::with_capacity(table.len());
        let mut offsets = Vec::with_capacity(table.len());
        let grid = f64::from(footer.spacing_grid.max(1));
        for e in &table {
            if e.offset + e.points * RECORD as u64 > table_at {
                return Err(bad("a node's data lies outside the data region"));
            }
            nodes.push(NodeMeta {
                level: e.level,
                cell: e.cell,
                min: e.min,
                max: e.min.map(|v| v + e.side),
                points: e.points,
                spacing: e.side / grid,
                parent: None,
                children: Vec::new(),
            });
            offsets.push(e.offset);
        }
        let hierarchy = Hierarchy::from_cells(nodes);
        let kind: &'static str = match footer.kind.as_str() {
            "LAS" => "LAS",
            "LAZ" => "LAZ",
            "PLY" => "PLY",
            _ => "file",
        };
        Ok(CachedSource {
            file,
            hierarchy,
            offsets,
            info: SourceInfo {
                name: footer.name,
                kind,
                scale: footer.scale,
                has_color: footer.has_color,
                has_gps_time: footer.has_gps_time,
                intensity_max: footer.intensity_max,
                warning: footer.warning,
                decode_rate: footer.decode_rate,
                build_rate: footer.build_rate,
                bounds: footer.bounds,
                bounds_from: "points",
            },
            fingerprint: footer.fingerprint,
            path: path.to_path_buf(),
        })
    }
}

impl NodeSource for CachedSource {
    fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn load(&self, node: u32) -> Result<NodeData, PointCloudError> {
        let (Some(meta), Some(&offset)) = (
            self.hierarchy.nodes.get(node as usize),
            self.offsets.get(node as usize),
        ) else {
            return Ok(NodeData::default());
        };
        let mut records = vec![Record::default(); meta.points as usize];
        self.file
            .read_exact_at(bytemuck::cast_slice_mut(&mut records), offset)
            .map_err(|source| PointCloudError::Io {
                path: self.path.clone(),
                source,
            })?;
        let mut d = NodeData {
            origin: meta.min,
            gps_time: self.info.has_gps_time.then(Vec::new),
            ..NodeData::default()
        };
        for r in &records {
            d.push(r.xyz, r.word, r.rgba);
            if let Some(g) = &mut d.gps_time {
                g.push(r.gps_time);
            }
        }
        Ok(d)
    }
}
