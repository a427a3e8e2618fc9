//! The driver's pipeline statistics (`vizdeck_lab::pipeline_stats`, issue 18): every fused FFT
//! variant compiles to SPIR-V and builds as a pipeline on a second Vulkan device; where the
//! driver has `VK_KHR_pipeline_executable_properties` (the test asks Vulkan itself) statistics
//! come back, else the one refusal naming the device and the extension (Mesa 22.3's lavapipe in
//! CI lacks it, so there the test checks the build path and the refusal). Bad shaders, and
//! shaders wgpu itself would refuse on the device, are refused with their path and the stage
//! that failed.

use crate::common;
use common::gpu;

use vizdeck::scene::spectrogram::fft::{FftOptions, FusedValues, GpuFft};
use vizdeck_lab::pipeline_stats::{
    ComputeShader, EXTENSION, StatsError, compute_pipeline_statistics, fused_statistics,
};

/// Whether `gpu`'s physical device lists [`EXTENSION`] and its `pipelineExecutableInfo`
/// feature, asked through ash directly.
fn driver_has_extension(gpu: &vizdeck::gpu::Gpu) -> bool {
    use ash::vk;
    // SAFETY: plain queries on wgpu's instance and physical device; the feature struct is
    // chained only where the extension is listed.
    unsafe {
        let hal = gpu
            .device
            .as_hal::<wgpu::hal::api::Vulkan>()
            .expect("the test GPU is Vulkan");
        let instance = hal.shared_instance().raw_instance();
        let physical = hal.raw_physical_device();
        let listed = instance
            .enumerate_device_extension_properties(physical)
            .expect("extensions")
            .iter()
            .any(|e| e.extension_name_as_c_str().unwrap().to_str() == Ok(EXTENSION));
        if !listed {
            return false;
        }
        let mut exec = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut exec);
        instance.get_physical_device_features2(physical, &mut features);
        exec.pipeline_executable_info == vk::TRUE
    }
}

#[test]
fn every_fused_fft_variant_builds_and_reports_or_is_refused_by_name() {
    let gpu = gpu();
    let has = driver_has_extension(&gpu);
    for n in [256usize, 2048, 16384] {
        for values in [
            FusedValues::Eight,
            FusedValues::Sixteen,
            FusedValues::ThirtyTwo,
        ] {
            for unchecked in [false, true] {
                let options = FftOptions {
                    values,
                    unchecked,
                    ..FftOptions::default()
                };
                let fft = GpuFft::with_options(&gpu.device, n, 4, options).expect("GpuFft");
                let what = format!("N = {n}, {}", fft.path_detail());
                let result = fused_statistics(&gpu.device, &fft).expect("fused path");
                match result {
                    Ok(executables) => {
                        assert!(has, "{what}: statistics without the extension");
                        assert!(!executables.is_empty(), "{what}");
                        assert!(
                            executables.iter().all(|e| !e.statistics.is_empty()),
                            "{what}: {executables:?}"
                        );
                    }
                    Err(StatsError::Unsupported { device }) => {
                        assert!(!has, "{what}: refused although the driver lists it");
                        assert_eq!(device, gpu.summary.name, "{what}");
                        let message = StatsError::Unsupported { device }.to_string();
                        assert!(message.contains(EXTENSION), "{message}");
                    }
                    Err(e) => panic!("{what}: {e}"),
                }
            }
        }
    }
    // The multi-pass path has no fused pipeline.
    let options = FftOptions {
        fused: false,
        ..FftOptions::default()
    };
    let fft = GpuFft::with_options(&gpu.device, 1024, 4, options).expect("GpuFft");
    assert!(fused_statistics(&gpu.device, &fft).is_none());
}

/// `shader` with the default entry point `main`, no overrides, checks on.
fn shader(wgsl: &'static str) -> ComputeShader<'static> {
    ComputeShader {
        path: "test.wgsl",
        wgsl,
        entry: "main",
        constants: &[],
        checked: true,
    }
}

#[test]
fn bad_shaders_are_refused_with_their_path_and_stage() {
    let gpu = gpu();
    let cases: [(&str, ComputeShader<'static>, &str); 5] = [
        (
            "syntax",
            shader("@compute @workgroup_size(1) fn main( {"),
            "parsing error",
        ),
        (
            "texture binding",
            shader(
                "@group(0) @binding(3) var t: texture_2d<f32>;\n\
                 @compute @workgroup_size(1) fn main() { _ = textureDimensions(t); }",
            ),
            "binding 0:3",
        ),
        (
            "override without value",
            shader(
                "override K: u32;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n\
                 @compute @workgroup_size(1) fn main() { o[0] = K; }",
            ),
            "Missing value for pipeline-overridable constant with identifier string: 'K'",
        ),
        (
            // Past every device's limit of invocations a workgroup: wgpu refuses the
            // pipeline, so no second device is asked to build it.
            "workgroup too large",
            shader("@compute @workgroup_size(1024, 1024) fn main() {}"),
            "In Device::create_compute_pipeline",
        ),
        (
            "missing entry point",
            ComputeShader {
                entry: "nowhere",
                ..shader("@compute @workgroup_size(1) fn main() {}")
            },
            "nowhere",
        ),
    ];
    for (name, s, needle) in cases {
        match compute_pipeline_statistics(&gpu.device, &s) {
            Err(e @ StatsError::Shader { .. }) => {
                let message = e.to_string();
                assert!(message.starts_with("test.wgsl: "), "{name}: {message}");
                assert!(message.contains(needle), "{name}: {message}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn a_good_shader_with_overrides_and_both_buffer_kinds_builds() {
    let gpu = gpu();
    let s = ComputeShader {
        constants: &[("K", 3.0)],
        checked: false,
        ..shader(
            "override K: u32;\n\
             @group(0) @binding(0) var<uniform> u: vec4<u32>;\n\
             @group(1) @binding(2) var<storage, read_write> o: array<u32>;\n\
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n\
                 o[g.x] = u.x * K;\n\
             }",
        )
    };
    match compute_pipeline_statistics(&gpu.device, &s) {
        Ok(e) => assert!(driver_has_extension(&gpu) && !e.is_empty(), "{e:?}"),
        Err(StatsError::Unsupported { .. }) => assert!(!driver_has_extension(&gpu)),
        Err(e) => panic!("{e}"),
    }
}
