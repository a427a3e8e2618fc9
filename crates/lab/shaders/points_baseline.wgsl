// Point clouds, the baseline the compute rasterizer is measured against (`vizdeck bench
// --kernels pointcloud`): every point drawn as a one-pixel point primitive (GL_POINTS), depth
// tested, through the same view as the rasterizer.
//
// Preludes prepended by the lab's registry entry (src/raster.rs `POINTS_BASELINE`): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) depth: f32,
}

@vertex
fn vs_main(@location(0) p: vec4<f32>) -> VsOut {
    var out: VsOut;
    out.clip = params.view_proj * vec4<f32>(p.xyz, 1.0);
    out.depth = out.clip.z / max(out.clip.w, 1e-6);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return vec4<f32>(vec3<f32>(1.0 - in.depth), 1.0);
}
