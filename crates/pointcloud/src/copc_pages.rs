//! A COPC file's hierarchy pages, read by following page pointers from the root page wherever
//! each page lies in the file (COPC 1.0, "Hierarchy": the info VLR gives the root page's offset
//! and size; an entry with point count −1 points to a child page by absolute offset and size).
//!
//! Writers order the pages as they like: PDAL and untwine write child pages before the root
//! page. The `las` crate (0.11) takes page offsets relative to the root page and so cannot
//! read such a file (las-rs#157); this reader seeks to each page itself. It reads only the
//! pages, never the points, and checks what a page can break: a page outside the file or of a
//! size that is not whole entries, pages that overlap or loop, a node listed twice, a key
//! outside the octree, a negative point count, a node's data outside the file.

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};

/// Bytes of one hierarchy entry: key (level, x, y, z as i32), offset (u64), byte size (i32),
/// point count (i32), little endian.
pub const ENTRY: u64 = 32;

/// Deepest level a key may name (2^30 cells a side: far beyond any real file).
pub const MAX_LEVEL: i32 = 30;

/// One node of the hierarchy that is not a page pointer: its key, and where its points are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageEntry {
    /// Level (root 0).
    pub level: i32,
    /// Position in the level's grid (0 ≤ x, y, z < 2^level).
    pub cell: [i32; 3],
    /// Absolute file offset of the node's LAZ chunk (0 without points).
    pub offset: u64,
    /// Bytes of the chunk.
    pub byte_size: i32,
    /// Points in the node (0: none; the node exists for its children).
    pub point_count: i32,
}

impl PageEntry {
    /// The node's name in messages: `node L-X-Y-Z`.
    pub fn name(&self) -> String {
        let [x, y, z] = self.cell;
        format!("node {}-{x}-{y}-{z}", self.level)
    }

    fn parse(b: &[u8]) -> PageEntry {
        let i32_at = |at: usize| i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let mut o = [0u8; 8];
        o.copy_from_slice(&b[16..24]);
        PageEntry {
            level: i32_at(0),
            cell: [i32_at(4), i32_at(8), i32_at(12)],
            offset: u64::from_le_bytes(o),
            byte_size: i32_at(24),
            point_count: i32_at(28),
        }
    }
}

/// The root page's place, from the COPC info VLR's payload (`root_hier_offset` at byte 40,
/// `root_hier_size` at byte 48, both u64): `None` when the payload is shorter.
pub(crate) fn root_page(info_vlr: &[u8]) -> Option<(u64, u64)> {
    let u64_at = |at: usize| -> Option<u64> {
        let b: [u8; 8] = info_vlr.get(at..at + 8)?.try_into().ok()?;
        Some(u64::from_le_bytes(b))
    };
    Some((u64_at(40)?, u64_at(48)?))
}

/// Reads every page reachable from the root page (`root` = offset, size) of the file in
/// `read` (`file_len` bytes) and returns its nodes (page pointers resolved, in the order met),
/// each checked as the module docs say.
///
/// # Errors
///
/// What is wrong, naming the page or node, on one line.
pub fn read_pages<R: Read + Seek>(
    read: &mut R,
    root: (u64, u64),
    file_len: u64,
) -> Result<Vec<PageEntry>, String> {
    let mut nodes = Vec::new();
    let mut keys = HashSet::new();
    let mut seen_pages = HashSet::new();
    let mut page_bytes = 0u64;
    let mut pending = vec![("the root page".to_string(), root.0, root.1)];
    while let Some((what, offset, size)) = pending.pop() {
        if size % ENTRY != 0 || size == 0 {
            return Err(format!(
                "{what} is {size} bytes, not a whole number of {ENTRY}-byte entries"
            ));
        }
        if offset.checked_add(size).is_none_or(|end| end > file_len) {
            return Err(format!(
                "{what} ({size} bytes at {offset}) lies outside the file of {file_len} bytes"
            ));
        }
        // Pages of a valid file do not overlap, so together they fit in the file.
        page_bytes += size;
        if !seen_pages.insert(offset) || page_bytes > file_len {
            return Err(format!(
                "{what} (at {offset}) overlaps another page or points back to one"
            ));
        }
        let mut page = vec![0u8; size as usize];
        read.seek(SeekFrom::Start(offset))
            .and_then(|_| read.read_exact(&mut page))
            .map_err(|e| format!("{what} ({size} bytes at {offset}): {e}"))?;
        for b in page.chunks_exact(ENTRY as usize) {
            let e = PageEntry::parse(b);
            let name = e.name();
            let side = 1i64 << e.level.clamp(0, MAX_LEVEL);
            let in_grid = e.cell.iter().all(|&v| v >= 0 && i64::from(v) < side);
            if !(0..=MAX_LEVEL).contains(&e.level) || !in_grid {
                return Err(format!("{name}: the key is outside the octree"));
            }
            if e.point_count == -1 {
                let size = u64::try_from(e.byte_size)
                    .map_err(|_| format!("{name}: child page of {} bytes", e.byte_size))?;
                pending.push((format!("the page of {name}"), e.offset, size));
                continue;
            }
            if e.point_count < -1 {
                return Err(format!("{name}: point count {}", e.point_count));
            }
            if !keys.insert((e.level, e.cell)) {
                return Err(format!("{name} is listed twice"));
            }
            if e.point_count > 0
                && (e.byte_size <= 0
                    || e.offset
                        .checked_add(e.byte_size as u64)
                        .is_none_or(|end| end > file_len))
            {
                return Err(format!(
                    "{name}: its data ({} bytes at {}) lies outside the file of {file_len} bytes",
                    e.byte_size, e.offset
                ));
            }
            nodes.push(e);
        }
    }
    Ok(nodes)
}
