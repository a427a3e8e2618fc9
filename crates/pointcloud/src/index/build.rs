//! The indexing pipeline (steps 1 to 7 of the module docs): the spill file decoded into, the
//! counting grid and its split into chunks, the chunks indexed on worker threads, the upper
//! levels built from their roots, and the cache file written node by node.

use super::cached::{Footer, TableEntry};
use super::*;

pub(super) type Key = (u32, [u32; 3]);

/// A node on its way into the cache: its key, cube, and records.
pub(super) struct Pending {
    pub(super) key: Key,
    pub(super) min: [f64; 3],
    pub(super) side: f64,
    pub(super) records: Vec<Record>,
}

/// Appends nodes' records to the cache file being written.
pub(super) struct DataWriter {
    pub(super) file: BufWriter<std::fs::File>,
    pub(super) at: u64,
    pub(super) table: Vec<TableEntry>,
}

impl DataWriter {
    fn put(
        &mut self,
        key: Key,
        min: [f64; 3],
        side: f64,
        records: &[Record],
    ) -> std::io::Result<()> {
        self.file.write_all(bytemuck::cast_slice(records))?;
        self.table.push(TableEntry {
            min,
            side,
            offset: self.at,
            points: records.len() as u64,
            level: key.0,
            cell: key.1,
        });
        self.at += (records.len() * RECORD) as u64;
        Ok(())
    }
}

pub(super) fn tempdir(parent: &Path) -> std::io::Result<PathBuf> {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = parent.join(format!(
        ".work-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn index_into(
    path: &Path,
    fp: &Fingerprint,
    target: &Path,
    work: &Path,
    opts: &IndexOptions,
    progress: &Arc<Progress>,
    decode: impl FnOnce(
        &mut dyn FnMut(&[Record]) -> std::io::Result<()>,
    ) -> Result<SourceInfo, PointCloudError>,
) -> Result<(), PointCloudError> {
    let io_at = |p: &Path| {
        let p = p.to_path_buf();
        move |source| PointCloudError::Io {
            path: p.clone(),
            source,
        }
    };
    // 1. Decode into the spill file.
    let spill_path = work.join("spill.bin");
    let mut spill = BufWriter::new(std::fs::File::create(&spill_path).map_err(io_at(&spill_path))?);
    let mut count = 0u64;
    let decode_start = Instant::now();
    let info = decode(&mut |records: &[Record]| {
        count += records.len() as u64;
        progress.decoded.store(count, Ordering::Relaxed);
        spill.write_all(bytemuck::cast_slice(records))
    })?;
    spill.flush().map_err(io_at(&spill_path))?;
    drop(spill);
    let decode_s = decode_start.elapsed().as_secs_f64();
    if count == 0 {
        return Err(PointCloudError::NoPoints {
            path: path.to_path_buf(),
        });
    }
    let build_start = Instant::now();
    let (lo, hi) = info.bounds;
    // JSON has no NaN or infinity: refused here, before any cache is written.
    let finite = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
    if !(finite(&lo) && finite(&hi) && finite(&info.scale)) {
        return Err(PointCloudError::Cache {
            path: path.to_path_buf(),
            reason: format!(
                "not written: the points' bounds {lo:?}..{hi:?} or scale {:?} are not finite",
                info.scale
            ),
        });
    }
    let side = (0..3).map(|k| hi[k] - lo[k]).fold(1e-9, f64::max);
    let cube = (lo, side);
    // 2. Count.
    let g = COUNT_GRID as usize;
    let cell_of = |p: [f64; 3]| -> usize {
        let c: [usize; 3] =
            std::array::from_fn(|k| (((p[k] - lo[k]) / side * g as f64) as usize).min(g - 1));
        (c[2] * g + c[1]) * g + c[0]
    };
    let mut counts = vec![0u64; g * g * g];
    for_each_record(&spill_path, |r| counts[cell_of(r.xyz)] += 1).map_err(io_at(&spill_path))?;
    // 3. Chunks: split the count pyramid top-down.
    let depth = COUNT_GRID.trailing_zeros();
    let mut chunks: Vec<Key> = Vec::new();
    split(&counts, depth, (0, [0; 3]), opts.chunk_points, &mut chunks);
    let mut cell_chunk = vec![u32::MAX; g * g * g];
    for (i, &(level, c)) in chunks.iter().enumerate() {
        let span = 1usize << (depth - level);
        for z in 0..span {
            for y in 0..span {
                for x in 0..span {
                    let (cx, cy, cz) = (
                        c[0] as usize * span + x,
                        c[1] as usize * span + y,
                        c[2] as usize * span + z,
                    );
                    cell_chunk[(cz * g + cy) * g + cx] = i as u32;
                }
            }
        }
    }
    progress
        .chunks
        .store(chunks.len() as u64, Ordering::Relaxed);
    // 4. Distribute.
    let chunk_path = |i: usize| work.join(format!("chunk-{i}.bin"));
    {
        let mut writers: Vec<BufWriter<std::fs::File>> = (0..chunks.len())
            .map(|i| {
                std::fs::File::create(chunk_path(i)).map(|f| BufWriter::with_capacity(64 << 10, f))
            })
            .collect::<std::io::Result<_>>()
            .map_err(io_at(work))?;
        let mut failed = None;
        for_each_record(&spill_path, |r| {
            let i = cell_chunk[cell_of(r.xyz)] as usize;
            if let Some(w) = writers.get_mut(i)
                && let Err(e) = w.write_all(bytemuck::bytes_of(r))
            {
                failed.get_or_insert(e);
            }
        })
        .map_err(io_at(&spill_path))?;
        if let Some(e) = failed {
            return Err(io_at(work)(e));
        }
        for mut w in writers {
            w.flush().map_err(io_at(work))?;
        }
    }
    let _ = std::fs::remove_file(&spill_path);
    // 5. Index the chunks in parallel; every node but a chunk's root goes to the cache.
    let tmp_target = target.with_extension(format!("tmp{}", std::process::id()));
    let mut file = std::fs::File::create(&tmp_target).map_err(io_at(&tmp_target))?;
    file.write_all(MAGIC).map_err(io_at(&tmp_target))?;
    let writer = Mutex::new(DataWriter {
        file: BufWriter::with_capacity(1 << 20, file),
        at: MAGIC.len() as u64,
        table: Vec::new(),
    });
    let roots: Mutex<Vec<Pending>> = Mutex::new(Vec::new());
    let next = AtomicU64::new(0);
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for t in 0..opts.threads.max(1) {
            let (chunks, writer, roots, next, failure) =
                (&chunks, &writer, &roots, &next, &failure);
            let chunk_path = &chunk_path;
            let cfg = opts.octree;
            let spawned = std::thread::Builder::new()
                .name(format!("vizdeck-pointcloud-index-{t}"))
                .spawn_scoped(scope, move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        let Some(&(level, c)) = chunks.get(i) else {
                            return;
                        };
                        let r = index_chunk(&chunk_path(i), (level, c), cube, &cfg, writer);
                        match r {
                            Ok(root) => {
                                if let Ok(mut v) = roots.lock() {
                                    v.push(root);
                                }
                            }
                            Err(e) => {
                                if let Ok(mut f) = failure.lock() {
                                    f.get_or_insert(e);
                                }
                                return;
                            }
                        }
                        let _ = std::fs::remove_file(chunk_path(i));
                        progress.chunks_done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            if let Err(e) = spawned
                && let Ok(mut f) = failure.lock()
            {
                f.get_or_insert(e);
            }
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        let _ = std::fs::remove_file(&tmp_target);
        return Err(io_at(work)(e));
    }
    // 6. Upper levels.
    let mut nodes: HashMap<Key, Pending> = roots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p.key, p))
        .collect();
    let deepest = nodes.keys().map(|k| k.0).max().unwrap_or(0);
    for level in (0..deepest).rev() {
        // Upper nodes of this level: parents of the nodes one level down.
        let mut parents: Vec<Key> = nodes
            .keys()
            .filter(|k| k.0 == level + 1)
            .map(|k| (level, k.1.map(|v| v / 2)))
            .collect();
        parents.sort_unstable();
        parents.dedup();
        for key in parents {
            if nodes.contains_key(&key) {
                continue; // a chunk root already (cannot happen: chunks partition space)
            }
            let node_side = side / f64::from(1u32 << level);
            let min: [f64; 3] = std::array::from_fn(|k| lo[k] + f64::from(key.1[k]) * node_side);
            let grid = opts.octree.sample_grid.max(1) as usize;
            let mut claimed = vec![false; grid * grid * grid];
            let mut keep = Vec::new();
            for o in 0..8u32 {
                let child: Key = (
                    level + 1,
                    std::array::from_fn(|k| key.1[k] * 2 + ((o >> k) & 1)),
                );
                let Some(c) = nodes.get_mut(&child) else {
                    continue;
                };
                let mut stay = Vec::with_capacity(c.records.len());
                for r in c.records.drain(..) {
                    let cell: [usize; 3] = std::array::from_fn(|k| {
                        (((r.xyz[k] - min[k]) / node_side * grid as f64).max(0.0) as usize)
                            .min(grid - 1)
                    });
                    let slot = (cell[2] * grid + cell[1]) * grid + cell[0];
                    if claimed[slot] {
                        stay.push(r);
                    } else {
                        claimed[slot] = true;
                        keep.push(r);
                    }
                }
                c.records = stay;
            }
            nodes.insert(
                key,
                Pending {
                    key,
                    min,
                    side: node_side,
                    records: keep,
                },
            );
        }
    }
    // 7. Write the roots and upper nodes, the table and the footer.
    let mut w = writer
        .into_inner()
        .map_err(|_| io_at(&tmp_target)(std::io::Error::other("index writer poisoned")))?;
    let mut rest: Vec<Pending> = nodes.into_values().collect();
    rest.sort_by_key(|p| (p.key.0, p.key.1[2], p.key.1[1], p.key.1[0]));
    for p in &rest {
        w.put(p.key, p.min, p.side, &p.records)
            .map_err(io_at(&tmp_target))?;
    }
    w.table
        .sort_by_key(|e| (e.level, e.cell[2], e.cell[1], e.cell[0]));
    let table_at = w.at;
    w.file
        .write_all(bytemuck::cast_slice(&w.table))
        .map_err(io_at(&tmp_target))?;
    let build_s = build_start.elapsed().as_secs_f64();
    let footer = Footer {
        fingerprint: fp.clone(),
        name: info.name,
        kind: info.kind.to_string(),
        scale: info.scale,
        has_color: info.has_color,
        has_gps_time: info.has_gps_time,
        intensity_max: info.intensity_max,
        warning: info.warning,
        bounds: (lo, hi),
        spacing_grid: opts.octree.sample_grid,
        decode_rate: Some(count as f64 / decode_s.max(1e-9)),
        build_rate: Some(count as f64 / build_s.max(1e-9)),
    };
    let json =
        serde_json::to_vec(&footer).map_err(|e| io_at(&tmp_target)(std::io::Error::other(e)))?;
    let json_at = table_at + std::mem::size_of_val(w.table.as_slice()) as u64;
    w.file.write_all(&json).map_err(io_at(&tmp_target))?;
    w.file
        .write_all(&table_at.to_le_bytes())
        .map_err(io_at(&tmp_target))?;
    w.file
        .write_all(&json_at.to_le_bytes())
        .map_err(io_at(&tmp_target))?;
    w.file.write_all(MAGIC).map_err(io_at(&tmp_target))?;
    w.file.flush().map_err(io_at(&tmp_target))?;
    drop(w);
    std::fs::rename(&tmp_target, target).map_err(io_at(target))?;
    Ok(())
}

/// Splits the count pyramid at `key` (level, cell of a 2^level grid) into chunks of at most
/// `max` points (or cells of the counting grid itself).
pub(super) fn split(counts: &[u64], depth: u32, key: Key, max: u64, out: &mut Vec<Key>) {
    let (level, c) = key;
    let g = 1usize << depth;
    let span = 1usize << (depth - level);
    let mut n = 0u64;
    for z in 0..span {
        for y in 0..span {
            let row = ((c[2] as usize * span + z) * g + c[1] as usize * span + y) * g
                + c[0] as usize * span;
            n += counts[row..row + span].iter().sum::<u64>();
        }
    }
    if n == 0 {
        return;
    }
    if n <= max || level == depth {
        out.push(key);
        return;
    }
    for o in 0..8u32 {
        let child = std::array::from_fn(|k| c[k] * 2 + ((o >> k) & 1));
        split(counts, depth, (level + 1, child), max, out);
    }
}

/// Calls `f` for every record of the file at `path`, in order.
pub(super) fn for_each_record(path: &Path, mut f: impl FnMut(&Record)) -> std::io::Result<()> {
    let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut buf = vec![Record::default(); 16_384];
    loop {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
        let total = bytes.len();
        let mut n = 0;
        while n < total {
            let got = file.read(&mut bytes[n..])?;
            if got == 0 {
                break;
            }
            n += got;
        }
        for r in &buf[..n / RECORD] {
            f(r);
        }
        if n < total {
            return Ok(());
        }
    }
}

/// Indexes one chunk: its octree under its cube; every node but the root is written; the root
/// (with its records) is returned for the upper levels.
pub(super) fn index_chunk(
    path: &Path,
    key: Key,
    (lo, side): ([f64; 3], f64),
    cfg: &OctreeConfig,
    writer: &Mutex<DataWriter>,
) -> std::io::Result<Pending> {
    let bytes = std::fs::read(path)?;
    let n = bytes.len() / RECORD;
    let mut records = vec![Record::default(); n];
    bytemuck::cast_slice_mut::<Record, u8>(&mut records).copy_from_slice(&bytes[..n * RECORD]);
    drop(bytes);
    let xyz: Vec<[f64; 3]> = records.iter().map(|r| r.xyz).collect();
    let node_side = side / f64::from(1u32 << key.0);
    let min: [f64; 3] = std::array::from_fn(|k| lo[k] + f64::from(key.1[k]) * node_side);
    let tree = octree::build_in(
        &xyz,
        cfg,
        Node {
            level: key.0,
            cell: key.1,
            min,
            side: node_side,
            points: Vec::new(),
            children: [None; 8],
        },
    );
    let mut root = None;
    for (i, n) in tree.nodes.into_iter().enumerate() {
        let recs: Vec<Record> = n.points.iter().map(|&p| records[p as usize]).collect();
        if i == octree::Octree::ROOT {
            root = Some(Pending {
                key,
                min: n.min,
                side: n.side,
                records: recs,
            });
            continue;
        }
        let mut w = writer
            .lock()
            .map_err(|_| std::io::Error::other("index writer poisoned"))?;
        w.put((n.level, n.cell), n.min, n.side, &recs)?;
    }
    root.ok_or_else(|| std::io::Error::other("chunk without a root"))
}
