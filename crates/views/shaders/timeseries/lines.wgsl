// Time series: line segments from min/max (M4) decimated pixel columns. Positions arrive in NDC
// from the CPU through a ping-pong vertex buffer; colour is packed RGBA8 (R in the low byte).
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl.

@vertex
fn vs_main(@location(0) pos: vec2<f32>, @location(1) color: u32) -> VsOut {
    var out: VsOut;
    out.clip = vec4<f32>(pos, 0.0, 1.0);
    out.color = unpack4x8unorm(color);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return in.color;
}
