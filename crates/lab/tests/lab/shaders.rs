//! The lab's own shader (the rasterizer's point-primitive baseline), composed from the files on
//! disk with its prelude, parses and validates with naga, and the compiled-in copy equals them.

use std::path::Path;

use vizdeck_lab::raster::POINTS_BASELINE;
use wgpu::naga;

#[test]
fn the_baseline_shader_validates_and_matches_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    assert_eq!(POINTS_BASELINE.prelude, ["common/pointcloud.wgsl"]);
    let prelude = read(&root.join("../views/shaders/common/pointcloud.wgsl"));
    let body = read(&root.join("shaders/points_baseline.wgsl"));
    assert_eq!(POINTS_BASELINE.body, body);
    assert_eq!(POINTS_BASELINE.source, format!("{prelude}{body}"));
    let module = naga::front::wgsl::parse_str(POINTS_BASELINE.source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(POINTS_BASELINE.source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{e:?}"));
    let entries: Vec<&str> = module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(entries, ["vs_main", "fs_main"]);
}
