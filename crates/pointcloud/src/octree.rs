//! The octree of a point cloud without one (LAS/LAZ files; COPC brings its own): every point in
//! exactly one node, inner nodes holding a spatially even subsample of the points below them, as
//! PotreeConverter 2.0 builds it (Schütz, Ohrhallinger, Wimmer: "Fast Out-of-Core Octree
//! Generation for Massive Point Clouds", CGF 39(7), 2020): a node with more than
//! [`OctreeConfig::max_leaf_points`] keeps the first point that falls into each cell of a
//! `sample_grid³` grid over its cube and hands the rest to its eight children (octants of its
//! cube). Drawing a node and its ancestors then shows the whole region at that node's density,
//! which is what level of detail by screen-space size needs.
//!
//! This first version builds in memory on the calling thread, deterministically (points in file
//! order); the out-of-core, multi-threaded build and its cache are still to come (issue 14).

/// Limits of [`build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OctreeConfig {
    /// A node with at most this many points is a leaf and keeps them all.
    pub max_leaf_points: usize,
    /// Cells per axis of an inner node's subsample grid (at most `sample_grid³` points kept).
    pub sample_grid: u32,
    /// Deepest level (root = 0); a node there keeps all its points whatever their number.
    pub max_depth: u32,
}

impl Default for OctreeConfig {
    fn default() -> Self {
        OctreeConfig {
            max_leaf_points: 20_000,
            sample_grid: 128,
            max_depth: 20,
        }
    }
}

/// One node: its cube and the indices (into the cloud's arrays) of the points it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Level (root 0) and position of the cube in the level's grid (0 ≤ x, y, z < 2^level).
    pub level: u32,
    /// See `level`.
    pub cell: [u32; 3],
    /// The cube: min corner and side (file units).
    pub min: [f64; 3],
    /// See `min`.
    pub side: f64,
    /// Points held, in file order.
    pub points: Vec<u32>,
    /// Child per octant (bit 0: x upper half, bit 1: y, bit 2: z), index into [`Octree::nodes`].
    pub children: [Option<u32>; 8],
}

impl Node {
    /// Whether `p` lies in the node's cube (min inclusive, max inclusive: points on the cloud's
    /// upper faces belong to the upper nodes).
    pub fn contains(&self, p: [f64; 3]) -> bool {
        (0..3).all(|k| p[k] >= self.min[k] && p[k] <= self.min[k] + self.side)
    }

    /// Whether the node has no children.
    pub fn is_leaf(&self) -> bool {
        self.children.iter().all(Option::is_none)
    }
}

/// The octree: nodes in build order (root first, every parent before its children).
#[derive(Clone, Debug, PartialEq)]
pub struct Octree {
    /// All nodes; [`Octree::ROOT`] is the root.
    pub nodes: Vec<Node>,
}

impl Octree {
    /// Index of the root in [`Octree::nodes`].
    pub const ROOT: usize = 0;

    /// Deepest level of any node.
    pub fn depth(&self) -> u32 {
        self.nodes.iter().map(|n| n.level).max().unwrap_or(0)
    }
}

/// Bounds (min, max) of the finite points of `xyz`; a unit box at the origin when there are
/// none.
pub fn bounds(xyz: &[[f64; 3]]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in xyz.iter().filter(|p| p.iter().all(|v| v.is_finite())) {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if lo[0] > hi[0] {
        return ([0.0; 3], [1.0; 3]);
    }
    (lo, hi)
}

/// The smallest cube holding `xyz` (its side the largest extent, at least 1e-9 so a single point
/// has a cube), as (min corner, side).
pub(crate) fn bounding_cube(xyz: &[[f64; 3]]) -> ([f64; 3], f64) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in xyz {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if xyz.is_empty() {
        return ([0.0; 3], 1.0);
    }
    let side = (0..3).map(|k| hi[k] - lo[k]).fold(1e-9, f64::max);
    (lo, side)
}

/// Builds the octree of the points `xyz` (file coordinates) under `cfg`. Non-finite points are
/// left out (they have no place in space); every other point is in exactly one node.
pub fn build(xyz: &[[f64; 3]], cfg: &OctreeConfig) -> Octree {
    let pts: Vec<[f64; 3]> = xyz
        .iter()
        .copied()
        .filter(|p| p.iter().all(|v| v.is_finite()))
        .collect();
    let (min, side) = bounding_cube(&pts);
    build_in(
        xyz,
        cfg,
        Node {
            level: 0,
            cell: [0; 3],
            min,
            side,
            points: Vec::new(),
            children: [None; 8],
        },
    )
}

/// [`build`] under a given root cube (`root`'s level, cell, min and side; its points and
/// children are ignored): the subtree of one chunk of a larger cloud. Points outside the cube
/// are kept in the nearest cell (the caller hands in only points inside it).
pub(crate) fn build_in(xyz: &[[f64; 3]], cfg: &OctreeConfig, root: Node) -> Octree {
    let finite: Vec<u32> = (0..xyz.len() as u32)
        .filter(|&i| xyz[i as usize].iter().all(|v| v.is_finite()))
        .collect();
    let mut tree = Octree { nodes: Vec::new() };
    tree.nodes.push(Node {
        points: Vec::new(),
        children: [None; 8],
        ..root
    });
    // Breadth-first over (node, points that fell into it).
    let mut queue = std::collections::VecDeque::from([(Octree::ROOT, finite)]);
    let g = cfg.sample_grid.max(1);
    let mut claimed = Vec::new();
    while let Some((at, points)) = queue.pop_front() {
        let (level, min, side, cell) = {
            let n = &tree.nodes[at];
            (n.level, n.min, n.side, n.cell)
        };
        if points.len() <= cfg.max_leaf_points || level >= cfg.max_depth {
            tree.nodes[at].points = points;
            continue;
        }
        // The subsample: the first point in each grid cell stays here.
        claimed.clear();
        claimed.resize((g as usize).pow(3), false);
        let scale = f64::from(g) / side;
        let mut keep = Vec::new();
        let mut octants: [Vec<u32>; 8] = Default::default();
        for &i in &points {
            let p = xyz[i as usize];
            let c: [usize; 3] =
                std::array::from_fn(|k| (((p[k] - min[k]) * scale) as usize).min(g as usize - 1));
            let slot = (c[2] * g as usize + c[1]) * g as usize + c[0];
            if !claimed[slot] {
                claimed[slot] = true;
                keep.push(i);
                continue;
            }
            let half = side / 2.0;
            let o = (0..3).fold(0usize, |o, k| o | (usize::from(p[k] >= min[k] + half) << k));
            octants[o].push(i);
        }
        tree.nodes[at].points = keep;
        let half = side / 2.0;
        for (o, pts) in octants.into_iter().enumerate() {
            if pts.is_empty() {
                continue;
            }
            let bit = |k: usize| ((o >> k) & 1) as u32;
            let child = tree.nodes.len();
            tree.nodes.push(Node {
                level: level + 1,
                cell: std::array::from_fn(|k| cell[k] * 2 + bit(k)),
                min: std::array::from_fn(|k| min[k] + f64::from(bit(k)) * half),
                side: half,
                points: Vec::new(),
                children: [None; 8],
            });
            tree.nodes[at].children[o] = Some(child as u32);
            queue.push_back((child, pts));
        }
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_cloud_is_one_leaf() {
        let xyz = [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]];
        let t = build(&xyz, &OctreeConfig::default());
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(t.nodes[0].points, vec![0, 1]);
        assert_eq!(t.nodes[0].side, 3.0);
    }

    #[test]
    fn a_split_keeps_one_point_per_cell_and_octants_below() {
        // 8 points per octant corner cluster: with a 2-cell grid and leaves of 4, the root keeps
        // the first point of each of its 8 cells and each octant gets the other 7.
        let mut xyz = Vec::new();
        for rep in 0..8 {
            for o in 0..8u32 {
                let c = |k: u32| f64::from((o >> k) & 1) * 10.0 + 0.1 * f64::from(rep);
                xyz.push([c(0), c(1), c(2)]);
            }
        }
        let cfg = OctreeConfig {
            max_leaf_points: 7,
            sample_grid: 2,
            max_depth: 5,
        };
        let t = build(&xyz, &cfg);
        assert_eq!(t.nodes[0].points, (0..8).collect::<Vec<u32>>());
        assert_eq!(t.nodes.len(), 9);
        for o in 0..8 {
            let c = &t.nodes[t.nodes[0].children[o].unwrap() as usize];
            assert_eq!(c.points.len(), 7);
            assert_eq!(c.level, 1);
            assert!(c.points.iter().all(|&i| i as usize % 8 == o));
        }
    }

    #[test]
    fn non_finite_points_are_left_out_and_depth_is_capped() {
        let mut xyz = vec![[1.0, 1.0, 1.0]; 50];
        xyz.push([f64::NAN, 0.0, 0.0]);
        let cfg = OctreeConfig {
            max_leaf_points: 4,
            sample_grid: 4,
            max_depth: 3,
        };
        let t = build(&xyz, &cfg);
        let all: usize = t.nodes.iter().map(|n| n.points.len()).sum();
        assert_eq!(all, 50);
        assert!(t.depth() <= 3);
    }
}
