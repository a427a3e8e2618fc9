//! The CPU reference of the visibility buffer, for the tests.

/// The CPU reference of the visibility buffer: for `points` (camera-relative) seen through
/// `view_proj` (column-major) into `size` pixels, per pixel the index of the nearest point
/// (smallest depth; the smallest index among equal depths), `None` where none lands. The same
/// projection as `project` in `shaders/common/pointcloud.wgsl`, in f32.
pub fn cpu_visibility(
    points: &[[f32; 3]],
    view_proj: &[[f32; 4]; 4],
    size: (u32, u32),
) -> Vec<Option<u32>> {
    let (w, h) = (size.0.max(1), size.1.max(1));
    let mut best: Vec<Option<(f32, u32)>> = vec![None; (w * h) as usize];
    let m = glam::Mat4::from_cols_array_2d(view_proj);
    for (i, p) in points.iter().enumerate() {
        let clip = m * glam::Vec4::new(p[0], p[1], p[2], 1.0);
        if clip.w <= 0.0 {
            continue;
        }
        let ndc = clip.truncate() / clip.w;
        if ndc.z < 0.0 || ndc.z > 1.0 || ndc.x.abs() >= 1.0 || ndc.y.abs() >= 1.0 {
            continue;
        }
        let x = (((ndc.x * 0.5 + 0.5) * w as f32) as u32).min(w - 1);
        let y = (((0.5 - ndc.y * 0.5) * h as f32) as u32).min(h - 1);
        let slot = &mut best[(y * w + x) as usize];
        if slot.is_none_or(|(d, _)| ndc.z < d) {
            *slot = Some((ndc.z, i as u32));
        }
    }
    best.into_iter().map(|b| b.map(|(_, i)| i)).collect()
}
