//! What the point-cloud scene streams from: a [`Hierarchy`] of octree nodes (known up front,
//! without their points) and a [`NodeSource`] that decodes one node's points on demand, on a
//! loader thread ([`super::loader`]). Three sources implement it: a LAS/LAZ file indexed in
//! memory ([`super::memory`]), a COPC file read node by node ([`super::copc`]), and the
//! synthetic terrain ([`super::synthetic`]).
//!
//! Precision: a node's points are handed over as f32 offsets from the node's own origin (its
//! box's min corner, f64 file coordinates), and exactly as f64 file coordinates for the hover
//! readout; the GPU only ever sees offsets from a nearby origin, so 10⁶–10⁸ m survey
//! coordinates at millimetre scale draw without jitter.

use super::PointCloudError;

/// One node of a hierarchy, without its points.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeMeta {
    /// Level (root 0).
    pub level: u32,
    /// Position in the level's grid (x, y, z), for names and ordering.
    pub cell: [u32; 3],
    /// Box of the node (min, max), file coordinates.
    pub min: [f64; 3],
    /// See `min`.
    pub max: [f64; 3],
    /// Points the node holds (not counting its descendants).
    pub points: u64,
    /// Spacing between the node's points, file units (its subsample grid's cell; the leaves'
    /// spacing is that of their level too).
    pub spacing: f64,
    /// Parent index (`None` for the root).
    pub parent: Option<u32>,
    /// Child indices.
    pub children: Vec<u32>,
}

impl NodeMeta {
    /// Centre of the box.
    pub fn center(&self) -> [f64; 3] {
        std::array::from_fn(|k| 0.5 * (self.min[k] + self.max[k]))
    }

    /// Radius of the box's bounding sphere.
    pub fn radius(&self) -> f64 {
        let d: f64 = (0..3).map(|k| (self.max[k] - self.min[k]).powi(2)).sum();
        0.5 * d.sqrt()
    }

    /// `level-x-y-z`, the name COPC and Potree give nodes.
    pub fn name(&self) -> String {
        format!(
            "{}-{}-{}-{}",
            self.level, self.cell[0], self.cell[1], self.cell[2]
        )
    }
}

/// The nodes of a cloud: the root first, every parent before its children.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hierarchy {
    /// All nodes.
    pub nodes: Vec<NodeMeta>,
}

impl Hierarchy {
    /// Points in all nodes together.
    pub fn total_points(&self) -> u64 {
        self.nodes.iter().map(|n| n.points).sum()
    }

    /// Deepest level.
    pub fn depth(&self) -> u32 {
        self.nodes.iter().map(|n| n.level).max().unwrap_or(0)
    }

    /// Box around every node (min, max); a unit box at the origin when empty.
    pub fn bounds(&self) -> ([f64; 3], [f64; 3]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for n in &self.nodes {
            for k in 0..3 {
                lo[k] = lo[k].min(n.min[k]);
                hi[k] = hi[k].max(n.max[k]);
            }
        }
        if self.nodes.is_empty() {
            return ([0.0; 3], [1.0; 3]);
        }
        (lo, hi)
    }

    /// The hierarchy of `nodes` given by level (every level before the next), each node's
    /// parent its nearest ancestor present by (level, cell) (a COPC hierarchy or a cache may
    /// leave empty nodes out); `parent` and `children` of the input are ignored.
    pub fn from_cells(mut nodes: Vec<NodeMeta>) -> Hierarchy {
        let mut index = std::collections::HashMap::new();
        for (i, n) in nodes.iter_mut().enumerate() {
            n.parent = None;
            let (mut l, mut c) = (n.level, n.cell);
            while l > 0 && n.parent.is_none() {
                l -= 1;
                c = c.map(|v| v / 2);
                n.parent = index.get(&(l, c)).copied();
            }
            index.insert((n.level, n.cell), i as u32);
        }
        let mut h = Hierarchy { nodes };
        h.link_children();
        h
    }

    /// Links `parent`/`children` of nodes given with parents only, sorted so every parent comes
    /// before its children; the nodes keep their relative order otherwise.
    pub fn link_children(&mut self) {
        for n in &mut self.nodes {
            n.children.clear();
        }
        for i in 0..self.nodes.len() {
            if let Some(p) = self.nodes[i].parent {
                self.nodes[p as usize].children.push(i as u32);
            }
        }
    }
}

/// The attribute word of a point (`w` of its GPU record): ASPRS class (bits 0–7), return
/// number (8–11), number of returns (12–15), intensity (16–31).
pub fn attribute_word(class: u8, return_number: u8, returns: u8, intensity: u16) -> u32 {
    u32::from(class)
        | (u32::from(return_number.min(15)) << 8)
        | (u32::from(returns.min(15)) << 12)
        | (u32::from(intensity) << 16)
}

/// One node's points, decoded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeData {
    /// The node's origin (its box's min corner), file coordinates.
    pub origin: [f64; 3],
    /// Each point minus `origin`, f32.
    pub offsets: Vec<[f32; 3]>,
    /// Each point's attribute word ([`attribute_word`]).
    pub words: Vec<u32>,
    /// Each point's colour, RGBA8 (R in the low byte); grey where the source has none.
    pub rgba: Vec<u32>,
    /// Each point's file coordinates, exact (for the hover readout).
    pub xyz: Vec<[f64; 3]>,
    /// GPS time per point, where the source has it.
    pub gps_time: Option<Vec<f64>>,
}

impl NodeData {
    /// Points in the node.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether the node holds no point.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Bytes this node takes in the CPU cache (its arrays).
    pub fn cpu_bytes(&self) -> u64 {
        let per = 12 + 4 + 4 + 24 + if self.gps_time.is_some() { 8 } else { 0 };
        (self.len() * per) as u64
    }

    /// Appends point `xyz` (file coordinates) with its attributes.
    pub fn push(&mut self, xyz: [f64; 3], word: u32, rgba: u32) {
        self.offsets
            .push(std::array::from_fn(|k| (xyz[k] - self.origin[k]) as f32));
        self.words.push(word);
        self.rgba.push(rgba);
        self.xyz.push(xyz);
    }
}

/// What a source says about itself (side panel, report).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceInfo {
    /// What was opened: the path, or `synthetic:N`.
    pub name: String,
    /// Kind: "LAS", "LAZ", "COPC", "synthetic".
    pub kind: &'static str,
    /// Coordinate resolution per axis (the file's scale), for printing coordinates exactly.
    pub scale: [f64; 3],
    /// Whether points have RGB colour / GPS time.
    pub has_color: bool,
    /// See `has_color`.
    pub has_gps_time: bool,
    /// Largest intensity in the data (for the intensity colours), 0 when unknown.
    pub intensity_max: u16,
    /// A problem with data that can still be shown (a truncated file: the points before the
    /// break are drawn).
    pub warning: Option<String>,
    /// Points per second decoded while indexing, and points per second of the octree build
    /// (`None` for sources that need neither).
    pub decode_rate: Option<f64>,
    /// See `decode_rate`.
    pub build_rate: Option<f64>,
    /// Bounds (min, max), file coordinates, and where they come from: "points" (every point
    /// read), "header" (COPC: the file's header, its points not all read), "nodes" (the
    /// synthetic cloud's node boxes).
    pub bounds: ([f64; 3], [f64; 3]),
    /// See `bounds`.
    pub bounds_from: &'static str,
}

/// A cloud that decodes nodes on demand. `load` is called from loader threads, several at once.
pub trait NodeSource: Send + Sync {
    /// The hierarchy (fixed for the source's life).
    fn hierarchy(&self) -> &Hierarchy;
    /// The source's facts.
    fn info(&self) -> &SourceInfo;
    /// Decodes node `node` (index into the hierarchy).
    ///
    /// # Errors
    ///
    /// A [`PointCloudError`] naming the file and the node when its data does not decode.
    fn load(&self, node: u32) -> Result<NodeData, PointCloudError>;
}

/// RGBA8 of a 16-bit LAS colour: the high byte, or the value itself where the file stores
/// 8-bit values in the 16-bit fields (`eight_bit`, decided per source from the largest value).
pub(crate) fn rgba_of(rgb: [u16; 3], eight_bit: bool) -> u32 {
    let c = |v: u16| {
        if eight_bit {
            v.min(255) as u8
        } else {
            (v >> 8) as u8
        }
    };
    u32::from_le_bytes([c(rgb[0]), c(rgb[1]), c(rgb[2]), 255])
}

/// Grey where a point has no colour.
pub(crate) const NO_COLOR: u32 = u32::from_le_bytes([200, 200, 200, 255]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_word_packs_fields() {
        let w = attribute_word(6, 2, 3, 0xBEEF);
        assert_eq!(w & 0xff, 6);
        assert_eq!((w >> 8) & 0xf, 2);
        assert_eq!((w >> 12) & 0xf, 3);
        assert_eq!(w >> 16, 0xBEEF);
        assert_eq!(attribute_word(0, 20, 20, 0) >> 8 & 0xff, 0xff);
    }

    #[test]
    fn colours_scale_by_depth() {
        assert_eq!(rgba_of([0xff00, 0x8000, 0], false), 0xff00_80ff);
        assert_eq!(rgba_of([255, 128, 0], true), 0xff00_80ff);
    }
}
