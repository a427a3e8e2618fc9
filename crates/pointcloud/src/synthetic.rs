//! The synthetic point cloud (`--pointcloud synthetic:N`): terrain with buildings and trees,
//! any size up to 10¹⁰ points without a file. Its hierarchy is a full quadtree of tiles over a
//! 2 km square (placed at UTM-like coordinates near 5e5, 4.2e6 m, so precision is exercised as
//! with a real survey); every node holds the same share of the N points, spread uniformly over
//! its tile, so a node and its ancestors show the tile at that node's density (what level of
//! detail by screen-space size needs). A node's points come from a generator seeded by (seed,
//! level, x, y) only: the same node is the same points whenever and on whichever thread it
//! loads.

use super::PointCloudError;
use super::source::{
    Hierarchy, NodeData, NodeMeta, NodeSource, SourceInfo, attribute_word, rgba_of,
};
use vizdeck_base::rng::SplitMix64;

/// Side of the square, metres.
pub(crate) const SIDE_M: f64 = 2000.0;
/// Its south-west corner (x, y), metres.
pub(crate) const ORIGIN: [f64; 2] = [500_000.0, 4_200_000.0];
/// Elevation range of every node's box (terrain, roofs and crowns lie inside), metres.
pub(crate) const Z_RANGE: [f64; 2] = [30.0, 250.0];
/// Most points per node; N decides the depth so that no node holds more.
pub(crate) const MAX_NODE_POINTS: u64 = 20_000;
/// Largest N.
pub const MAX_POINTS: u64 = 10_000_000_000;
/// Coordinate resolution of the synthetic points (as if stored at millimetre scale).
pub(crate) const SCALE: f64 = 0.001;

/// The synthetic cloud of `n` points from `seed`.
pub struct Synthetic {
    seed: u64,
    hierarchy: Hierarchy,
    info: SourceInfo,
}

/// Nodes of a full quadtree of `depth + 1` levels.
fn nodes_of(depth: u32) -> u64 {
    (4u64.pow(depth + 1) - 1) / 3
}

impl Synthetic {
    /// The cloud of `n` points (1 ≤ n ≤ [`MAX_POINTS`]) from `seed`.
    ///
    /// # Errors
    ///
    /// A message naming the count when it is 0 or above [`MAX_POINTS`].
    pub fn new(n: u64, seed: u64) -> Result<Synthetic, String> {
        if n == 0 || n > MAX_POINTS {
            return Err(format!(
                "synthetic point cloud of {n} points: the count must be from 1 to {MAX_POINTS}"
            ));
        }
        let mut depth = 0;
        while nodes_of(depth) * MAX_NODE_POINTS < n {
            depth += 1;
        }
        let total_nodes = nodes_of(depth);
        let (base, rem) = (n / total_nodes, n % total_nodes);
        let mut nodes = Vec::with_capacity(total_nodes as usize);
        for level in 0..=depth {
            let tiles = 1u32 << level;
            let side = SIDE_M / f64::from(tiles);
            let first = nodes_of(level) - 4u64.pow(level);
            for y in 0..tiles {
                for x in 0..tiles {
                    let i = nodes.len() as u64;
                    let points = base + u64::from(i < rem);
                    let parent = (level > 0).then(|| {
                        let parent_first = first - 4u64.pow(level - 1);
                        let row = u64::from(1u32 << (level - 1));
                        (parent_first + u64::from(y / 2) * row + u64::from(x / 2)) as u32
                    });
                    nodes.push(NodeMeta {
                        level,
                        cell: [x, y, 0],
                        min: [
                            ORIGIN[0] + f64::from(x) * side,
                            ORIGIN[1] + f64::from(y) * side,
                            Z_RANGE[0],
                        ],
                        max: [
                            ORIGIN[0] + f64::from(x + 1) * side,
                            ORIGIN[1] + f64::from(y + 1) * side,
                            Z_RANGE[1],
                        ],
                        points,
                        spacing: side / (points.max(1) as f64).sqrt(),
                        parent,
                        children: Vec::new(),
                    });
                }
            }
        }
        let mut hierarchy = Hierarchy { nodes };
        hierarchy.link_children();
        Ok(Synthetic {
            seed,
            hierarchy,
            info: SourceInfo {
                name: format!("synthetic:{n}"),
                kind: "synthetic",
                scale: [SCALE; 3],
                has_color: true,
                has_gps_time: false,
                intensity_max: 2000,
                warning: None,
                decode_rate: None,
                build_rate: None,
                bounds: (
                    [ORIGIN[0], ORIGIN[1], Z_RANGE[0]],
                    [ORIGIN[0] + SIDE_M, ORIGIN[1] + SIDE_M, Z_RANGE[1]],
                ),
                bounds_from: "nodes",
            },
        })
    }
}

/// Hash of a few integers (SplitMix64's finaliser over their mix).
fn hash(parts: &[u64]) -> u64 {
    let mut s = SplitMix64(0x5EED);
    for &p in parts {
        s.0 ^= p;
        s.next_u64();
    }
    s.next_u64()
}

/// Uniform in [0, 1) from a hash.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Ground elevation at (x, y) metres from the south-west corner.
pub fn ground(x: f64, y: f64) -> f64 {
    100.0
        + 30.0 * (x / 310.0).sin() * (y / 270.0).cos()
        + 12.0 * ((x + 2.0 * y) / 97.0).sin()
        + 3.0 * ((3.0 * x - y) / 23.0).cos()
}

/// What lies at (x, y) metres from the corner: (elevation, class, colour, intensity). Buildings
/// (class 6) on a 60 m grid, trees (class 5) on a 12 m grid, ground (class 2) elsewhere.
fn surface(x: f64, y: f64, seed: u64, rng: &mut SplitMix64) -> (f64, u8, [u16; 3], u16, u8, u8) {
    let g = ground(x, y);
    // Buildings: 30 % of the 60 m cells, a footprint inside the cell, flat roof.
    let (bx, by) = ((x / 60.0).floor(), (y / 60.0).floor());
    let hb = hash(&[seed, 1, bx as u64, by as u64]);
    if unit(hb) < 0.3 {
        let (fx0, fy0) = (8.0 + 10.0 * unit(hb >> 7), 8.0 + 10.0 * unit(hb >> 13));
        let (fw, fh) = (15.0 + 20.0 * unit(hb >> 19), 15.0 + 20.0 * unit(hb >> 25));
        let (lx, ly) = (x - bx * 60.0, y - by * 60.0);
        if lx >= fx0 && lx < fx0 + fw && ly >= fy0 && ly < fy0 + fh {
            let roof = ground(bx * 60.0 + 30.0, by * 60.0 + 30.0) + 6.0 + 30.0 * unit(hb >> 31);
            let shade = (150.0 + 60.0 * unit(hb >> 37)) as u16;
            return (roof, 6, [shade * 256, 90 * 256, 70 * 256], 1500, 1, 1);
        }
    }
    // Trees: 40 % of the 12 m cells, a round crown.
    let (tx, ty) = ((x / 12.0).floor(), (y / 12.0).floor());
    let ht = hash(&[seed, 2, tx as u64, ty as u64]);
    if unit(ht) < 0.4 {
        let (cx, cy) = (
            tx * 12.0 + 3.0 + 6.0 * unit(ht >> 9),
            ty * 12.0 + 3.0 + 6.0 * unit(ht >> 17),
        );
        let r = 2.5 + 2.5 * unit(ht >> 25);
        let d2 = (x - cx).powi(2) + (y - cy).powi(2);
        if d2 < r * r {
            let top = ground(cx, cy) + 6.0 + 12.0 * unit(ht >> 33);
            let z = top - r + (r * r - d2).sqrt();
            let returns = 1 + (rng.next_u64() % 3) as u8;
            let ret = 1 + (rng.next_u64() % u64::from(returns)) as u8;
            let green = (110.0 + 80.0 * unit(ht >> 41)) as u16;
            return (z, 5, [40 * 256, green * 256, 40 * 256], 400, ret, returns);
        }
    }
    let t = ((g - 60.0) / 90.0).clamp(0.0, 1.0);
    let rgb = [
        ((120.0 + 60.0 * t) * 256.0) as u16,
        ((140.0 + 30.0 * t) * 256.0) as u16,
        ((90.0 + 20.0 * t) * 256.0) as u16,
    ];
    (g, 2, rgb, 900 + (200.0 * t) as u16, 1, 1)
}

impl NodeSource for Synthetic {
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
        let mut rng = SplitMix64(hash(&[
            self.seed,
            u64::from(meta.level),
            u64::from(meta.cell[0]),
            u64::from(meta.cell[1]),
        ]));
        let mut data = NodeData {
            origin: meta.min,
            ..NodeData::default()
        };
        let side = meta.max[0] - meta.min[0];
        let quantise = |v: f64| (v / SCALE).round() * SCALE;
        for _ in 0..meta.points {
            let x = meta.min[0] - ORIGIN[0] + side * unit(rng.next_u64());
            let y = meta.min[1] - ORIGIN[1] + side * unit(rng.next_u64());
            let (z, class, rgb, intensity, ret, returns) = surface(x, y, self.seed, &mut rng);
            let p = [
                quantise(ORIGIN[0] + x),
                quantise(ORIGIN[1] + y),
                quantise(z.clamp(Z_RANGE[0], Z_RANGE[1])),
            ];
            data.push(
                p,
                attribute_word(class, ret, returns, intensity),
                rgba_of(rgb, false),
            );
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_nodes_are_capped() {
        for n in [1u64, 1000, 20_000, 20_001, 1_000_000, 1_000_000_000] {
            let s = Synthetic::new(n, 1).unwrap();
            let h = s.hierarchy();
            assert_eq!(h.total_points(), n, "{n}");
            assert!(h.nodes.iter().all(|m| m.points <= MAX_NODE_POINTS), "{n}");
            // Every parent precedes its children and holds them.
            for (i, m) in h.nodes.iter().enumerate() {
                for &c in &m.children {
                    assert!(c as usize > i);
                    assert_eq!(h.nodes[c as usize].parent, Some(i as u32));
                    assert_eq!(h.nodes[c as usize].level, m.level + 1);
                }
            }
        }
        assert!(Synthetic::new(0, 1).is_err());
        assert!(Synthetic::new(MAX_POINTS + 1, 1).is_err());
    }

    #[test]
    fn a_node_is_the_same_points_every_time_and_inside_its_box() {
        let s = Synthetic::new(200_000, 7).unwrap();
        let last = s.hierarchy().nodes.len() as u32 - 1;
        let a = s.load(last).unwrap();
        let b = s.load(last).unwrap();
        assert_eq!(a, b);
        let m = &s.hierarchy().nodes[last as usize];
        assert_eq!(a.len() as u64, m.points);
        for p in &a.xyz {
            for k in 0..3 {
                assert!(
                    p[k] >= m.min[k] - SCALE && p[k] <= m.max[k] + SCALE,
                    "{p:?}"
                );
            }
        }
        let other = Synthetic::new(200_000, 8).unwrap().load(last).unwrap();
        assert_ne!(a.xyz, other.xyz);
    }
}
