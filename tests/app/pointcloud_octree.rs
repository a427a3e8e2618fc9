//! The octree of a real survey file (`autzen_trim.laz`, 110,000 points): every point in exactly
//! one node, each node's points inside its cube, inner nodes holding at most one point per cell
//! of their subsample grid (a spatially even subset of the points that reached them), children
//! the octants of their parent, leaves within the size limit, the same tree on every build.

use std::path::Path;

use vizdeck::pointcloud::LasFile;
use vizdeck::pointcloud::octree::{Octree, OctreeConfig, build};

fn autzen() -> Vec<[f64; 3]> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pointcloud/autzen_trim.laz");
    let mut f = LasFile::open(&path).unwrap();
    let mut xyz = Vec::new();
    while let Some(b) = f.next_batch(50_000).unwrap() {
        xyz.extend_from_slice(&b.xyz);
    }
    xyz
}

#[test]
fn the_octree_of_a_survey_holds_every_point_once_in_its_place() {
    let xyz = autzen();
    assert_eq!(xyz.len(), 110_000);
    let cfg = OctreeConfig {
        max_leaf_points: 5_000,
        sample_grid: 32,
        max_depth: 12,
    };
    let t = build(&xyz, &cfg);
    assert!(t.depth() >= 2, "depth {}", t.depth());
    // Every point exactly once.
    let mut seen = vec![0u8; xyz.len()];
    for n in &t.nodes {
        for &i in &n.points {
            seen[i as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&c| c == 1), "a point held twice or never");
    let g = cfg.sample_grid as usize;
    for (at, n) in t.nodes.iter().enumerate() {
        // Inside the cube.
        for &i in &n.points {
            assert!(n.contains(xyz[i as usize]), "node {at}: point {i} outside");
        }
        if n.is_leaf() {
            assert!(n.points.len() <= cfg.max_leaf_points || n.level == cfg.max_depth);
        } else {
            // At most one point per subsample cell, and some.
            assert!(!n.points.is_empty() && n.points.len() <= g * g * g);
            let mut cells = std::collections::HashSet::new();
            for &i in &n.points {
                let p = xyz[i as usize];
                let c: [usize; 3] = std::array::from_fn(|k| {
                    (((p[k] - n.min[k]) / n.side * g as f64) as usize).min(g - 1)
                });
                assert!(cells.insert(c), "node {at}: two points in cell {c:?}");
            }
        }
        // Children are the octants of the parent.
        for (o, c) in n.children.iter().enumerate() {
            let Some(c) = c else { continue };
            let c = &t.nodes[*c as usize];
            assert_eq!(c.level, n.level + 1);
            assert_eq!(c.side, n.side / 2.0);
            for k in 0..3 {
                let bit = ((o >> k) & 1) as u32;
                assert_eq!(c.cell[k], n.cell[k] * 2 + bit);
                assert_eq!(c.min[k], n.min[k] + f64::from(bit) * c.side);
            }
        }
    }
    // The root's cube holds the whole cloud.
    assert!(xyz.iter().all(|&p| t.nodes[Octree::ROOT].contains(p)));
    // Deterministic.
    assert_eq!(build(&xyz, &cfg), t);
}
