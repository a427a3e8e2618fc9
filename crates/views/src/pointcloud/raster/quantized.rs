//! Quantized clouds: the batch entries ([`QBatch`]), the dispatch shape of the `main_q` passes
//! and the cloud on the GPU ([`QuantizedCloud`]), in chunks within the device's binding limits.

use super::{QBATCH_POINTS, quantize_batch};

/// `QBatch` of `shaders/common/pointcloud.wgsl` (32 bytes): one batch of a quantized cloud.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct QBatch {
    /// The box's low corner minus the eye (camera-relative), file units.
    pub lo: [f32; 3],
    /// Id of the batch's first point (point k of the batch has id `first + k`).
    pub first: u32,
    /// Cell size per axis, file units (a power of two; the box is [`QCELLS`](super::QCELLS) cells a
    /// side).
    pub step: [f32; 3],
    /// `(index of its first point in its binding / QBATCH_POINTS) << 10 | (count − 1)`;
    /// `u32::MAX`: an empty entry (padding).
    pub slot: u32,
}

impl QBatch {
    /// An entry that draws nothing (padding up to the dispatch size).
    pub const EMPTY: QBatch = QBatch {
        lo: [0.0; 3],
        first: 0,
        step: [0.0; 3],
        slot: u32::MAX,
    };

    /// The entry of the batch of `count` points (clamped to 1…[`QBATCH_POINTS`]) stored from
    /// element `page · QBATCH_POINTS` of its binding, ids from `first`, in the box of low
    /// corner `lo` (minus the eye) and cell size `step`.
    pub fn new(lo: [f32; 3], step: [f32; 3], first: u32, page: u32, count: u32) -> QBatch {
        QBatch {
            lo,
            first,
            step,
            slot: (page.min((1 << 22) - 1) << 10) | (count.clamp(1, QBATCH_POINTS) - 1),
        }
    }

    /// The camera-relative position of point code `q` of this batch: the centre of its cell,
    /// the same arithmetic as `qdecode` in `shaders/common/pointcloud.wgsl` (exact in f32: the
    /// step is a power of two), so the GPU and this agree bit for bit.
    pub fn decode(&self, q: u32) -> [f32; 3] {
        let c = [q & 1023, (q >> 10) & 1023, (q >> 20) & 1023];
        std::array::from_fn(|a| self.lo[a] + (c[a] as f32 + 0.5) * self.step[a])
    }
}

/// Points a chunk of a quantized cloud holds on a device of `limits`: its largest per-point
/// buffer, the resolve's attributes at 8 bytes a point (the codes take 4), within
/// `max_storage_buffer_binding_size` and `max_buffer_size`; a multiple of [`QBATCH_POINTS`], at
/// least one batch.
pub fn points_per_binding(limits: &wgpu::Limits) -> u64 {
    let bytes = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    let batch = u64::from(QBATCH_POINTS);
    (bytes / 8 / batch).clamp(1, 1 << 22) * batch
}

/// Workgroups a row of a quantized dispatch (see [`qdispatch_size`]).
pub const QDISPATCH_X: u32 = 8192;

/// Workgroups `(x, y)` of the quantized passes for `batches` batch-table entries: `(batches,
/// 1)` up to [`QDISPATCH_X`], else `(QDISPATCH_X, rows)`; the table holds `x · y` entries
/// (padded with [`QBatch::EMPTY`]). The shaders read entry `wg.y + wg.x · y`
/// (`qbatch_index`): consecutive batches, which cover neighbouring pixels, run `x` workgroups
/// apart, so one has finished before the next starts and the early depth test rejects most of
/// the next one's points (dense clouds: hundreds of points a pixel).
pub fn qdispatch_size(batches: u32) -> (u32, u32) {
    let batches = batches.max(1);
    if batches <= QDISPATCH_X {
        (batches, 1)
    } else {
        (QDISPATCH_X, batches.div_ceil(QDISPATCH_X))
    }
}

/// One binding of a [`QuantizedCloud`]: points `first .. first + count` (ids).
pub struct QuantizedChunk {
    /// Point codes, a u32 each (see [`quantize_batch`]).
    pub codes: wgpu::Buffer,
    /// Its batch table: [`QBatch`] entries, padded with [`QBatch::EMPTY`] to the dispatch size.
    pub batches: wgpu::Buffer,
    /// Batches (entries before the padding).
    pub batch_count: u32,
    /// Id of its first point.
    pub first: u32,
    /// Points it holds.
    pub count: u32,
}

/// A quantized cloud on the GPU: `points` points (ids 0 … points − 1) in chunks of at most
/// `per_binding` points, each its own storage buffers.
pub struct QuantizedCloud {
    /// The chunks, by id.
    pub chunks: Vec<QuantizedChunk>,
    /// Points in all.
    pub points: u64,
}

impl QuantizedCloud {
    /// Creates the buffers of a cloud of `total` points (at most `u32::MAX − 1`, ids are u32),
    /// `per_binding` points a binding (rounded down to a multiple of [`QBATCH_POINTS`], at
    /// least one batch; at most [`points_per_binding`] of the device), and fills them a piece
    /// at a time (up to 64 M points, through host memory) through `fill(first, codes, table)`:
    /// `codes` the piece's points (ids `first …`, `first` a multiple of [`QBATCH_POINTS`]),
    /// `table` its batches (entry j holds the points from element j · [`QBATCH_POINTS`] of
    /// `codes`, ids from `first + j · QBATCH_POINTS`, made with [`QBatch::new`]; the page bits
    /// of `slot` are set here, whatever `fill` gives).
    ///
    /// # Errors
    /// A line saying why, when the ids do not fit or the device cannot allocate the buffers
    /// (out of memory): the buffers made so far are dropped.
    pub fn build(
        device: &wgpu::Device,
        total: u64,
        per_binding: u64,
        mut fill: impl FnMut(u32, &mut [u32], &mut [QBatch]),
    ) -> Result<QuantizedCloud, String> {
        if total >= u64::from(u32::MAX) {
            return Err(format!(
                "{total} points: ids are 32-bit, at most {}",
                u32::MAX - 1
            ));
        }
        let batch = u64::from(QBATCH_POINTS);
        let per =
            (per_binding / batch).clamp(1, points_per_binding(&device.limits()) / batch) * batch;
        let mut chunks = Vec::new();
        let mut first = 0u64;
        while first < total {
            let count = (total - first).min(per);
            let batches = count.div_ceil(batch) as u32;
            let (x, y) = qdispatch_size(batches);
            let entries = u64::from(x) * u64::from(y);
            let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
            let label = format!("pointcloud:quantized:codes:{}", chunks.len());
            let codes = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size: (count * 4).next_multiple_of(16),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: true,
            });
            let label = format!("pointcloud:quantized:batches:{}", chunks.len());
            let table = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size: entries * std::mem::size_of::<QBatch>() as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: true,
            });
            if let Some(e) = pollster::block_on(scope.pop()) {
                return Err(format!(
                    "{total} points ({} bytes quantized) do not fit in this device's memory: {e}",
                    total * 4
                ));
            }
            {
                let (Ok(mut c), Ok(mut t)) = (
                    codes.slice(..).get_mapped_range_mut(),
                    table.slice(..).get_mapped_range_mut(),
                ) else {
                    return Err(format!(
                        "{total} points: the new buffers could not be mapped"
                    ));
                };
                // Filled a piece at a time through host memory (mapped views are write-only).
                const PIECE_BATCHES: u64 = 65536;
                let piece = PIECE_BATCHES * batch;
                let mut host_codes = vec![0u32; count.min(piece) as usize];
                let mut host_table = vec![QBatch::EMPTY; entries.min(PIECE_BATCHES) as usize];
                let mut done = 0u64;
                while done < count {
                    let n = (count - done).min(piece);
                    let nb = n.div_ceil(batch) as usize;
                    let page0 = (done / batch) as u32;
                    let codes_part = &mut host_codes[..n as usize];
                    let table_part = &mut host_table[..nb];
                    table_part.fill(QBatch::EMPTY);
                    fill((first + done) as u32, codes_part, table_part);
                    for (j, e) in table_part.iter_mut().enumerate() {
                        let c = if e.slot == u32::MAX {
                            1
                        } else {
                            (e.slot & 1023) + 1
                        };
                        *e = QBatch::new(e.lo, e.step, e.first, page0 + j as u32, c);
                    }
                    c.slice(done as usize * 4..(done + n) as usize * 4)
                        .copy_from_slice(bytemuck::cast_slice(codes_part));
                    let tb = std::mem::size_of::<QBatch>();
                    t.slice(page0 as usize * tb..(page0 as usize + nb) * tb)
                        .copy_from_slice(bytemuck::cast_slice(table_part));
                    done += n;
                }
                let pad = bytemuck::cast_slice::<QBatch, u8>(&[QBatch::EMPTY]).to_vec();
                for e in u64::from(batches)..entries {
                    let at = e as usize * pad.len();
                    t.slice(at..at + pad.len()).copy_from_slice(&pad);
                }
            }
            codes.unmap();
            table.unmap();
            chunks.push(QuantizedChunk {
                codes,
                batches: table,
                batch_count: batches,
                first: first as u32,
                count: count as u32,
            });
            first += count;
        }
        Ok(QuantizedCloud {
            chunks,
            points: total,
        })
    }

    /// The cloud of `points` (file units, in the order given: point i has id i; sort them with
    /// [`morton_order`](super::morton_order) first for coherent batches) seen from `eye`, quantized
    /// batch by batch ([`quantize_batch`]), `per_binding` points a binding (see
    /// [`build`](Self::build)). Returns the cloud, its batch entries (entry `id / QBATCH_POINTS`
    /// decodes point `id`: [`QBatch::decode`] of its code; their `slot` page bits are not the
    /// GPU's) and the codes by id.
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn from_points(
        device: &wgpu::Device,
        points: &[[f32; 3]],
        eye: [f32; 3],
        per_binding: u64,
    ) -> Result<(QuantizedCloud, Vec<QBatch>, Vec<u32>), String> {
        let mut all_batches = Vec::new();
        let mut all_codes = Vec::new();
        let cloud = Self::build(
            device,
            points.len() as u64,
            per_binding,
            |first, codes, table| {
                let pts = &points[first as usize..first as usize + codes.len()];
                for (j, (run, out)) in pts
                    .chunks(QBATCH_POINTS as usize)
                    .zip(codes.chunks_mut(QBATCH_POINTS as usize))
                    .enumerate()
                {
                    let (lo, step) = quantize_batch(run, out);
                    let lo = std::array::from_fn(|a| lo[a] - eye[a]);
                    table[j] = QBatch::new(
                        lo,
                        step,
                        first + j as u32 * QBATCH_POINTS,
                        0,
                        run.len() as u32,
                    );
                }
                all_batches.extend_from_slice(table);
                all_codes.extend_from_slice(codes);
            },
        )?;
        Ok((cloud, all_batches, all_codes))
    }
}
