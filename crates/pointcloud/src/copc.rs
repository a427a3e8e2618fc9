//! COPC files (`.copc.laz`: a LAZ whose chunks are the nodes of an octree, with the hierarchy in
//! an extended VLR; <https://copc.io>), read node by node, so nothing is converted: the file's
//! own hierarchy is the octree. The header comes from the `las` crate, the hierarchy pages
//! from [`super::copc_pages`] (pages in any order, which the `las` crate's `CopcReader`
//! refuses), each node's LAZ chunk from the `laz` crate's decoder, as `CopcReader` decodes it.

use std::io::Seek;
use std::path::Path;

use laz::record::{LayeredPointRecordDecompressor, RecordDecompressor};

use super::copc_pages::{PageEntry, read_pages, root_page};
use super::file::{LasInfo, PointBatch, PointCloudError, check_layout, one_line, open_error};
use super::laz_guard::guarded;
use super::source::{
    Hierarchy, NO_COLOR, NodeData, NodeMeta, NodeSource, SourceInfo, attribute_word, rgba_of,
};

/// One node of the file's hierarchy that holds points.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CopcNode {
    /// Level (root 0) and position in the level's grid (0 ≤ x, y, z < 2^level).
    pub level: u32,
    /// See `level`.
    pub cell: [u32; 3],
    /// Points in the node.
    pub points: u64,
    /// The node's cube (file coordinates): min corner and side, from the COPC info's centre
    /// and half size.
    pub min: [f64; 3],
    /// See `min`.
    pub side: f64,
}

/// An open COPC file.
pub struct CopcFile {
    info: LasInfo,
    header: las::Header,
    /// Spacing between points at the root (halved at every level), file units.
    spacing: f64,
    nodes: Vec<(CopcNode, PageEntry)>,
    /// The LAZ chunk decoder over the file (reset at every node: each node is one chunk).
    decompressor: LayeredPointRecordDecompressor<'static, Box<dyn ReadSeek>>,
}

/// What a COPC file is read through: a local file, an HTTP range reader, bytes in memory.
pub trait ReadSeek: std::io::Read + std::io::Seek + Send {}
impl<T: std::io::Read + std::io::Seek + Send> ReadSeek for T {}

/// Where a COPC file lives.
#[derive(Clone)]
pub enum Origin {
    /// A local file.
    Path(std::path::PathBuf),
    /// A file over HTTP(S), read with range requests.
    Http(std::sync::Arc<super::http::HttpFile>),
}

impl Origin {
    /// The path, or the URL as a path (for messages).
    pub fn name(&self) -> std::path::PathBuf {
        match self {
            Origin::Path(p) => p.clone(),
            Origin::Http(f) => std::path::PathBuf::from(f.url()),
        }
    }
}

impl CopcFile {
    /// Opens `path` and reads its header and whole hierarchy (every page).
    ///
    /// # Errors
    ///
    /// As [`super::LasFile::open`]; [`PointCloudError::NotLas`] also for a LAS/LAZ file without
    /// the COPC records; [`PointCloudError::BrokenHierarchy`] for a hierarchy that does not
    /// hold together ([`read_pages`]; nodes whose counts do not add up to the header's).
    pub fn open(path: &Path) -> Result<CopcFile, PointCloudError> {
        CopcFile::open_origin(&Origin::Path(path.to_path_buf()))
    }

    /// Opens the COPC file at `origin` (a path, or a URL read with range requests) and reads
    /// its header and whole hierarchy.
    ///
    /// # Errors
    ///
    /// As [`open`](CopcFile::open); for a URL, I/O errors name the URL and the request.
    pub fn open_origin(origin: &Origin) -> Result<CopcFile, PointCloudError> {
        let path = &origin.name();
        let (read, file_len): (Box<dyn ReadSeek>, u64) = match origin {
            Origin::Path(p) => {
                let io = |source| PointCloudError::Io {
                    path: p.clone(),
                    source,
                };
                let file = std::fs::File::open(p).map_err(io)?;
                let len = file.metadata().map_err(io)?.len();
                (Box::new(std::io::BufReader::new(file)), len)
            }
            Origin::Http(f) => (Box::new(super::http::RangeReader::new(f.clone())), f.len()),
        };
        CopcFile::from_reader(read, file_len, path)
    }

    /// Reads a COPC file of `file_len` bytes from `read` (a file, a range reader, bytes in a
    /// [`std::io::Cursor`]), naming it `path` in messages: what
    /// [`open_origin`](CopcFile::open_origin) runs on the opened file. The hierarchy pages are
    /// read wherever they lie ([`read_pages`]).
    ///
    /// # Errors
    ///
    /// As [`open`](CopcFile::open).
    pub fn from_reader(
        read: Box<dyn ReadSeek>,
        file_len: u64,
        path: &Path,
    ) -> Result<CopcFile, PointCloudError> {
        // Seeks and reads a stranger's offsets ask for behave alike on files and bytes.
        let mut read: Box<dyn ReadSeek> =
            Box::new(super::seek_within::SeekWithin::new(read).map_err(|source| {
                PointCloudError::Io {
                    path: path.to_path_buf(),
                    source,
                }
            })?);
        check_layout(&mut read, file_len, path)?;
        read.seek(std::io::SeekFrom::Start(0))
            .map_err(|source| PointCloudError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        let header = las::Header::new(&mut read).map_err(|e| open_error(path, e))?;
        let info = LasInfo::from_header(path, &header)?;
        let not_copc = |reason: &str| PointCloudError::NotLas {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        };
        let copc = header
            .copc_info_vlr()
            .ok_or_else(|| not_copc("no COPC info record"))?;
        let root = header
            .vlrs()
            .iter()
            .find(|v| v.is_copc_info())
            .and_then(|v| root_page(&v.data))
            .ok_or_else(|| not_copc("no COPC info record"))?;
        let items = header
            .laz_vlr()
            .map_err(|e| not_copc(&format!("no LAZ record: {}", one_line(&e))))?;
        let broken = |reason: String| PointCloudError::BrokenHierarchy {
            path: path.to_path_buf(),
            reason: vizdeck_base::text::one_line(&reason),
        };
        let entries = read_pages(&mut read, root, file_len).map_err(broken)?;
        let mut nodes: Vec<(CopcNode, PageEntry)> = Vec::new();
        let centre = [copc.center_x, copc.center_y, copc.center_z];
        let root_min = centre.map(|c| c - copc.halfsize);
        let root_size = centre.map(|c| (c + copc.halfsize) - (c - copc.halfsize));
        for e in entries.into_iter().filter(|e| e.point_count > 0) {
            // The node's cube as `las::copc::VoxelKey::bounds` computes it, to the bit.
            let cells = f64::from(1i32 << e.level);
            let min: [f64; 3] =
                std::array::from_fn(|k| root_min[k] + root_size[k] / cells * f64::from(e.cell[k]));
            nodes.push((
                CopcNode {
                    level: e.level as u32,
                    cell: e.cell.map(|v| v as u32),
                    points: e.point_count as u64,
                    min,
                    side: (min[0] + root_size[0] / cells) - min[0],
                },
                e,
            ));
        }
        let total: u64 = nodes.iter().map(|(n, _)| n.points).sum();
        if total != info.header_points {
            return Err(broken(format!(
                "its nodes hold {total} points, the header says {}",
                info.header_points
            )));
        }
        nodes.sort_by_key(|(n, _)| (n.level, n.cell[2], n.cell[1], n.cell[0]));
        let mut decompressor = LayeredPointRecordDecompressor::new(read);
        decompressor
            .set_fields_from(items.items())
            .map_err(|e| not_copc(&format!("LAZ record: {}", one_line(&e))))?;
        Ok(CopcFile {
            info,
            header,
            spacing: copc.spacing,
            nodes,
            decompressor,
        })
    }

    /// The header's facts.
    pub fn info(&self) -> &LasInfo {
        &self.info
    }

    /// Spacing between points at the root (halved at every level), file units.
    pub fn spacing(&self) -> f64 {
        self.spacing
    }

    /// The nodes that hold points, by level then position.
    pub fn nodes(&self) -> Vec<&CopcNode> {
        self.nodes.iter().map(|(n, _)| n).collect()
    }

    /// Decodes node `i` of [`nodes`](CopcFile::nodes).
    ///
    /// # Errors
    ///
    /// [`PointCloudError::Truncated`] when the node's chunk does not decode (a truncated or
    /// corrupt file), naming the file and the node; an index out of range reads as an empty
    /// batch.
    pub fn read_node(&mut self, i: usize) -> Result<PointBatch, PointCloudError> {
        let Some((node, entry)) = self.nodes.get(i) else {
            return Ok(PointBatch::default());
        };
        let broke = |reason: String| PointCloudError::Truncated {
            path: self.info.path.clone(),
            read: 0,
            expected: node.points,
            reason: format!(
                "node {}-{}-{}-{}: {}",
                node.level, node.cell[0], node.cell[1], node.cell[2], reason
            ),
        };
        let record_len = self.header.point_format().len();
        let items = self.header.laz_vlr().map_err(|e| broke(one_line(&e)))?;
        let d = &mut self.decompressor;
        let layers = super::held::layer_count(&items).unwrap_or(0);
        let point = super::held::items_size(&items);
        if !super::held::layers_fit(
            d.get_mut(),
            entry.offset,
            entry.byte_size as u64,
            point,
            layers,
        ) {
            return Err(broke(format!(
                "its layers do not fit in its {} bytes",
                entry.byte_size
            )));
        }
        d.get_mut()
            .seek(std::io::SeekFrom::Start(entry.offset))
            .map_err(|e| broke(one_line(&e)))?;
        d.reset();
        d.set_fields_from(items.items())
            .map_err(|e| broke(one_line(&e)))?;
        // Decoded in pieces of at most MAX_BATCH_BYTES of records: a node may claim many
        // long records that compress to almost nothing.
        let piece = super::file::batch_points(usize::MAX, record_len);
        let mut out = PointBatch::default();
        let mut left = node.points;
        while left > 0 {
            let n = left.min(piece);
            let mut bytes = vec![0u8; n as usize * usize::from(record_len)];
            guarded(|| d.decompress_many(&mut bytes))
                .map_err(broke)?
                .map_err(|e| broke(one_line(&e)))?;
            let data = las::PointDataBuilder::new()
                .for_header(&self.header)
                .build_from_bytes(bytes)
                .map_err(|e| broke(one_line(&e)))?;
            let batch = PointBatch::from_data(&data, &self.info);
            if out.is_empty() {
                out = batch;
            } else {
                out.append(batch);
            }
            left -= n;
        }
        Ok(out)
    }
}

/// A COPC file as a [`NodeSource`]: the file's hierarchy as it is, nodes decoded by whichever
/// loader thread asks, each with its own reader (opened on first need, then reused).
pub struct CopcSource {
    origin: Origin,
    hierarchy: Hierarchy,
    info: SourceInfo,
    readers: std::sync::Mutex<Vec<CopcFile>>,
}

impl CopcSource {
    /// Opens `path` (header and whole hierarchy) as a source.
    ///
    /// # Errors
    ///
    /// As [`CopcFile::open`]; [`PointCloudError::NoPoints`] when no node holds a point.
    pub fn open(path: &Path) -> Result<CopcSource, PointCloudError> {
        CopcSource::open_origin(Origin::Path(path.to_path_buf()))
    }

    /// Opens the COPC file at `origin` as a source (a URL: every loader thread reads through
    /// its own range reader, all sharing the file's block cache).
    ///
    /// # Errors
    ///
    /// As [`open`](CopcSource::open).
    pub fn open_origin(origin: Origin) -> Result<CopcSource, PointCloudError> {
        let path = &origin.name();
        let file = CopcFile::open_origin(&origin)?;
        let spacing = file.spacing();
        let hierarchy = Hierarchy::from_cells(
            file.nodes()
                .into_iter()
                .map(|n| NodeMeta {
                    level: n.level,
                    cell: n.cell,
                    min: n.min,
                    max: n.min.map(|v| v + n.side),
                    points: n.points,
                    spacing: spacing / f64::from(1u32 << n.level.min(31)),
                    parent: None,
                    children: Vec::new(),
                })
                .collect(),
        );
        if hierarchy.total_points() == 0 {
            return Err(PointCloudError::NoPoints {
                path: path.to_path_buf(),
            });
        }
        let i = file.info();
        let info = SourceInfo {
            name: path.display().to_string(),
            kind: "COPC",
            scale: i.scale,
            has_color: i.has_color,
            has_gps_time: i.has_gps_time,
            intensity_max: u16::MAX,
            warning: None,
            decode_rate: None,
            build_rate: None,
            bounds: (i.header_min, i.header_max),
            bounds_from: "header",
        };
        Ok(CopcSource {
            origin,
            hierarchy,
            info,
            readers: std::sync::Mutex::new(vec![file]),
        })
    }
}

impl CopcSource {
    /// The remote file, for a URL.
    pub fn http(&self) -> Option<&super::http::HttpFile> {
        match &self.origin {
            Origin::Http(f) => Some(f),
            Origin::Path(_) => None,
        }
    }
}

impl NodeSource for CopcSource {
    fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn load(&self, node: u32) -> Result<NodeData, PointCloudError> {
        let Some(meta) = self.hierarchy.nodes.get(node as usize) else {
            return Ok(NodeData::default());
        };
        let taken = self.readers.lock().ok().and_then(|mut r| r.pop());
        let mut reader = match taken {
            Some(r) => r,
            None => CopcFile::open_origin(&self.origin)?,
        };
        let batch = reader.read_node(node as usize);
        if let Ok(mut r) = self.readers.lock() {
            r.push(reader);
        }
        let b = batch?;
        let mut d = NodeData {
            origin: meta.min,
            gps_time: b.gps_time.as_ref().map(|_| Vec::new()),
            ..NodeData::default()
        };
        let eight_bit = b
            .rgb
            .as_ref()
            .is_some_and(|c| c.iter().all(|v| v.iter().all(|&x| x <= 255)));
        for i in 0..b.len() {
            let rgba = b
                .rgb
                .as_ref()
                .map_or(NO_COLOR, |c| rgba_of(c[i], eight_bit));
            d.push(
                b.xyz[i],
                attribute_word(b.classification[i], b.return_number[i], 0, b.intensity[i]),
                rgba,
            );
            if let (Some(out), Some(g)) = (&mut d.gps_time, &b.gps_time) {
                out.push(g[i]);
            }
        }
        Ok(d)
    }
}
