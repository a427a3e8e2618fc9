//! Node selection, every frame: which octree nodes to draw and which to load, as Potree does it
//! (Schütz, "Potree: Rendering Large Point Clouds in Web Browsers", TU Wien 2016, §3.4):
//! nodes are visited largest on screen first (priority = projected radius of the node's
//! bounding sphere, in pixels); a node outside the view frustum is skipped with its subtree; a
//! node whose projected point spacing is at most [`Selection`]'s `target_spacing_px` needs no
//! children; visiting stops at the point budget. A node that is not resident is asked for and
//! its subtree waits: what is drawn is always a resident node with all its ancestors drawn, so
//! a parent stays on screen until its children arrive (no holes, no flicker).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::camera::CameraView;
use super::source::Hierarchy;

/// What the selection decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// Resident nodes to draw, by priority (every ancestor of each is in the list, earlier).
    pub draw: Vec<u32>,
    /// Nodes to load, most wanted first.
    pub wanted: Vec<u32>,
    /// Points in `draw`.
    pub points: u64,
    /// Nodes inside the frustum that were visited.
    pub visible: u32,
    /// Whether the budget stopped the refinement.
    pub budget_hit: bool,
    /// Deepest level drawn.
    pub depth: u32,
}

struct Candidate {
    priority: f64,
    node: u32,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then(other.node.cmp(&self.node))
    }
}

/// Selects the nodes of `h` to draw through `view` with at most `budget` points, refining
/// nodes whose projected spacing exceeds `target_spacing_px`; `resident(i)` says whether node
/// i's points are on the GPU. Up to `max_wanted` non-resident nodes are asked for.
pub fn select(
    h: &Hierarchy,
    view: &CameraView,
    budget: u64,
    target_spacing_px: f64,
    max_wanted: usize,
    resident: impl Fn(u32) -> bool,
) -> Selection {
    let mut s = Selection::default();
    let mut heap = BinaryHeap::new();
    let priority = |i: u32| -> Option<f64> {
        let n = &h.nodes[i as usize];
        if !view.sees_box(n.min, n.max) {
            return None;
        }
        let c = glam::DVec3::from(n.center());
        let r = n.radius();
        let dist = (c - view.eye).length();
        if !view.ortho && dist <= r {
            return Some(f64::MAX);
        }
        Some(view.pixels(r, dist - r))
    };
    for (i, n) in h.nodes.iter().enumerate() {
        if n.parent.is_none()
            && let Some(p) = priority(i as u32)
        {
            heap.push(Candidate {
                priority: p,
                node: i as u32,
            });
        }
    }
    while let Some(Candidate { node, .. }) = heap.pop() {
        s.visible += 1;
        let n = &h.nodes[node as usize];
        if s.points + n.points > budget {
            s.budget_hit = true;
            break;
        }
        if !resident(node) {
            if s.wanted.len() < max_wanted {
                s.wanted.push(node);
            }
            continue;
        }
        s.draw.push(node);
        s.points += n.points;
        s.depth = s.depth.max(n.level);
        let c = glam::DVec3::from(n.center());
        let dist = ((c - view.eye).length() - n.radius()).max(view.near.max(1e-9));
        if view.pixels(n.spacing, dist) <= target_spacing_px {
            continue;
        }
        for &child in &n.children {
            if let Some(p) = priority(child) {
                heap.push(Candidate {
                    priority: p,
                    node: child,
                });
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::{Camera, ViewPreset};
    use crate::source::NodeSource;
    use crate::synthetic::Synthetic;

    fn cloud() -> Synthetic {
        Synthetic::new(2_000_000, 1).unwrap()
    }

    #[test]
    fn drawn_nodes_have_their_ancestors_drawn_and_respect_the_budget() {
        let s = cloud();
        let h = s.hierarchy();
        let (min, max) = h.bounds();
        let cam = Camera::fitted(min, max, ViewPreset::Iso, (800, 600));
        let v = cam.view((800, 600), cam.pivot, 2000.0);
        let sel = select(h, &v, 300_000, 1.0, 100, |_| true);
        assert!(sel.points <= 300_000);
        assert_eq!(
            sel.points,
            sel.draw
                .iter()
                .map(|&i| h.nodes[i as usize].points)
                .sum::<u64>()
        );
        assert!(sel.budget_hit);
        for (k, &i) in sel.draw.iter().enumerate() {
            if let Some(p) = h.nodes[i as usize].parent {
                assert!(
                    sel.draw[..k].contains(&p),
                    "node {i} drawn before its parent {p}"
                );
            }
        }
        assert!(sel.wanted.is_empty());
    }

    #[test]
    fn nothing_resident_asks_for_the_root_only() {
        let s = cloud();
        let h = s.hierarchy();
        let (min, max) = h.bounds();
        let cam = Camera::fitted(min, max, ViewPreset::Top, (800, 600));
        let v = cam.view((800, 600), cam.pivot, 2000.0);
        let sel = select(h, &v, 1_000_000, 1.0, 100, |_| false);
        assert_eq!(sel.wanted, vec![0]);
        assert!(sel.draw.is_empty());
    }

    #[test]
    fn nodes_outside_the_frustum_are_never_drawn() {
        let s = cloud();
        let h = s.hierarchy();
        let (min, max) = h.bounds();
        // Zoomed on the south-west corner: the north-east quadrant's subtree is out of view.
        let corner_max = [min[0] + 200.0, min[1] + 200.0, max[2]];
        let cam = Camera::fitted(min, corner_max, ViewPreset::Top, (400, 400));
        let v = cam.view((400, 400), cam.pivot, 2000.0);
        let sel = select(h, &v, u64::MAX, 1.0, 100, |_| true);
        for &i in &sel.draw {
            let n = &h.nodes[i as usize];
            assert!(v.sees_box(n.min, n.max));
            assert!(n.min[0] < corner_max[0] + 1e-6 && n.min[1] < corner_max[1] + 1e-6);
        }
        assert!(sel.depth >= 2, "zoomed in refines: depth {}", sel.depth);
    }
}
