//! The driver's own statistics of a compute pipeline: registers per thread, spills to local
//! memory, shared memory, instruction counts, whatever the driver reports through
//! `VK_KHR_pipeline_executable_properties` (`vkGetPipelineExecutableStatisticsKHR`). They say
//! how many workgroups a multiprocessor can hold at once (occupancy), which is what the fused
//! FFT's speed at large N hangs on (`vizdeck bench --kernels fft`, BENCHMARKS.md).
//!
//! wgpu neither enables that extension nor lets a pipeline be created with
//! `VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR`, so [`compute_pipeline_statistics`] first
//! builds the pipeline through wgpu (so a shader wgpu would refuse on this device, for its
//! features, limits or layout, is refused here too), then compiles it as wgpu's Vulkan backend
//! does (naga: overrides resolved for the entry point, SPIR-V with wgpu's runtime checks or
//! without them, wgpu's bounds-check policy for its robust buffer access) and builds it on a
//! second, short-lived `VkDevice` of the same physical device with the extension and the same
//! robustness features on. wgpu's own device only builds and drops its pipeline. The driver
//! compiles the same SPIR-V under the same robustness, so its figures are those of wgpu's
//! pipeline, up to the workgroup-memory zero-initialisation (left out here, as every caller in
//! vizdeck that asks for statistics turns it off).

use std::ffi::CString;

use ash::vk;
use wgpu::hal::api::Vulkan;
use wgpu::naga;

/// The extension the statistics need.
pub const EXTENSION: &str = "VK_KHR_pipeline_executable_properties";

/// Why no statistics came back.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// The device is not a Vulkan device.
    #[error("pipeline statistics need the Vulkan backend")]
    NotVulkan,
    /// The device lacks [`EXTENSION`] or its `pipelineExecutableInfo` feature.
    #[error("{device} lacks {EXTENSION} (or its pipelineExecutableInfo feature)")]
    Unsupported {
        /// The physical device's name.
        device: String,
    },
    /// wgpu refused the shader or its pipeline on this device, or it did not compile to
    /// SPIR-V (parse, validation, entry point, overrides, the SPIR-V writer; the message names
    /// the stage that failed).
    #[error("{path}: {message}")]
    Shader {
        /// The shader's path or label.
        path: String,
        /// What failed.
        message: String,
    },
    /// A Vulkan call failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The call, e.g. `vkCreateComputePipelines`.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
}

/// One executable of a pipeline (a compute pipeline has one) and its statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Executable {
    /// The driver's name for it (e.g. `"Compute Shader"`).
    pub name: String,
    /// Each statistic's name (as the driver spells it, e.g. `"Register Count"`) and value.
    pub statistics: Vec<(String, StatValue)>,
}

impl Executable {
    /// The statistic named `name` (ASCII case-insensitive), if the driver reports it.
    pub fn get(&self, name: &str) -> Option<StatValue> {
        self.statistics
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, v)| v)
    }

    /// Every statistic as `name value`, comma-separated, for tables.
    pub fn summary(&self) -> String {
        self.statistics
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A statistic's value, in the driver's own type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StatValue {
    /// A boolean.
    Bool(bool),
    /// A signed count.
    I64(i64),
    /// An unsigned count (registers, bytes, instructions).
    U64(u64),
    /// A real number.
    F64(f64),
}

impl std::fmt::Display for StatValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatValue::Bool(b) => write!(f, "{b}"),
            StatValue::I64(v) => write!(f, "{v}"),
            StatValue::U64(v) => write!(f, "{v}"),
            StatValue::F64(v) => write!(f, "{v:.3}"),
        }
    }
}

/// The WGSL compute shader to measure: its text, entry point, override values and whether
/// wgpu's runtime checks are compiled in (as `create_shader_module`) or not (as
/// `create_shader_module_trusted` with `ShaderRuntimeChecks::unchecked()`).
#[derive(Clone, Copy, Debug)]
pub struct ComputeShader<'a> {
    /// Label for errors (the shader's path).
    pub path: &'a str,
    /// The WGSL text (preludes included).
    pub wgsl: &'a str,
    /// The entry point.
    pub entry: &'a str,
    /// Override values, as `PipelineCompilationOptions::constants`.
    pub constants: &'a [(&'a str, f64)],
    /// Whether wgpu's runtime checks (index clamps, loop bounding, division guards) are in.
    pub checked: bool,
}

/// The driver's statistics of `shader` built as a compute pipeline on `device`'s physical
/// device (see the module docs), one [`Executable`] per executable the driver reports.
///
/// # Errors
///
/// [`StatsError::NotVulkan`], [`StatsError::Shader`] when the WGSL does not compile,
/// [`StatsError::Vulkan`] naming the call that failed (the pipeline's creation included),
/// [`StatsError::Unsupported`] when the pipeline built but the driver lacks [`EXTENSION`]
/// (Mesa's lavapipe before 23.1, for one). Nothing is left allocated on an error.
pub fn compute_pipeline_statistics(
    device: &wgpu::Device,
    shader: &ComputeShader<'_>,
) -> Result<Vec<Executable>, StatsError> {
    // SAFETY: only queries and objects of our own are made through the hal handles; the
    // instance outlives the guard because wgpu's device (which we borrow) keeps it alive.
    let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or(StatsError::NotVulkan)?;
    drop(hal);
    // What wgpu accepts on this device is valid Vulkan usage below: same SPIR-V, same layout.
    validate_with_wgpu(device, shader)?;
    // SAFETY: as above.
    let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or(StatsError::NotVulkan)?;
    let physical = hal.raw_physical_device();
    let instance = hal.shared_instance().raw_instance().clone();
    drop(hal);

    // SAFETY: plain query.
    let props = unsafe { instance.get_physical_device_properties(physical) };
    // SAFETY: plain query.
    let extensions = unsafe { instance.enumerate_device_extension_properties(physical) }
        .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?;
    let has_extension = extensions.iter().any(|e| {
        e.extension_name_as_c_str()
            .is_ok_and(|n| n.to_bytes() == EXTENSION.as_bytes())
    });
    let mut exec_features = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
    if has_extension {
        let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut exec_features);
        // SAFETY: plain query with a valid chain (the extension's struct: it is supported).
        unsafe { instance.get_physical_device_features2(physical, &mut features) };
    }
    let capture = has_extension && exec_features.pipeline_executable_info == vk::TRUE;
    // The robustness wgpu turns on where the device has it (robustBufferAccess, and
    // robustBufferAccess2 of VK_EXT_robustness2), which the driver's code depends on.
    let has_robustness2 = extensions.iter().any(|e| {
        e.extension_name_as_c_str()
            .is_ok_and(|n| n == ash::ext::robustness2::NAME)
    });
    let mut robustness2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
    let core = {
        let mut features = vk::PhysicalDeviceFeatures2::default();
        if has_robustness2 {
            features = features.push_next(&mut robustness2);
        }
        // SAFETY: plain query with a valid chain (the extension's struct only where supported).
        unsafe { instance.get_physical_device_features2(physical, &mut features) };
        features.features
    };
    let robust_buffer_access2 = has_robustness2 && robustness2.robust_buffer_access2 == vk::TRUE;

    // The pipeline is built either way, so a driver without the extension still checks the
    // SPIR-V and the layouts (tests/app/pipeline_stats.rs on lavapipe).
    let (module, info) = module_of(shader)?;
    let sets = descriptor_sets(shader, &module, &info)?;
    let spirv = spirv_of(
        shader,
        &module,
        &info,
        props.api_version,
        robust_buffer_access2,
    )?;

    // SAFETY: plain query.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    let family = families
        .iter()
        .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .ok_or(StatsError::Vulkan {
            call: "vkGetPhysicalDeviceQueueFamilyProperties (no compute queue)",
            result: vk::Result::ERROR_FEATURE_NOT_PRESENT,
        })? as u32;
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family)
        .queue_priorities(&priorities)];
    let mut names = Vec::new();
    let mut enable = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let mut enable_robustness2 =
        vk::PhysicalDeviceRobustness2FeaturesEXT::default().robust_buffer_access2(true);
    let core = vk::PhysicalDeviceFeatures::default()
        .robust_buffer_access(core.robust_buffer_access == vk::TRUE);
    let mut info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_features(&core);
    if capture {
        names.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
        info = info.push_next(&mut enable);
    }
    if robust_buffer_access2 {
        names.push(ash::ext::robustness2::NAME.as_ptr());
        info = info.push_next(&mut enable_robustness2);
    }
    info = info.enabled_extension_names(&names);
    // SAFETY: a valid create info for this physical device (each extension and feature only
    // where it is supported).
    let raw = unsafe { instance.create_device(physical, &info, None) }
        .map_err(vk_err("vkCreateDevice"))?;
    let own = OwnDevice(raw);
    let result = build(&instance, &own.0, &spirv, &sets, shader.entry, capture);
    drop(own);
    match result? {
        Some(executables) => Ok(executables),
        None => Err(StatsError::Unsupported {
            device: props
                .device_name_as_c_str()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }),
    }
}

/// A `VkDevice` of our own, destroyed on drop (after everything made on it, which `build`
/// destroys before returning).
struct OwnDevice(ash::Device);

impl Drop for OwnDevice {
    fn drop(&mut self) {
        // SAFETY: nothing made on this device outlives `build`, and no work was submitted.
        unsafe { self.0.destroy_device(None) }
    }
}

/// Builds the compute pipeline on `raw`; with `capture` (the extension enabled on `raw`)
/// captures and returns its statistics, else `None` once it is built.
fn build(
    instance: &ash::Instance,
    raw: &ash::Device,
    spirv: &[u32],
    sets: &[Vec<(u32, vk::DescriptorType)>],
    entry: &str,
    capture: bool,
) -> Result<Option<Vec<Executable>>, StatsError> {
    let mut layouts = Vec::new();
    let mut module = vk::ShaderModule::null();
    let mut pipeline_layout = vk::PipelineLayout::null();
    let mut pipeline = vk::Pipeline::null();
    let result = (|| {
        for set in sets {
            let bindings: Vec<_> = set
                .iter()
                .map(|&(binding, ty)| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(binding)
                        .descriptor_type(ty)
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            // SAFETY: a valid create info.
            let layout = unsafe { raw.create_descriptor_set_layout(&info, None) }
                .map_err(vk_err("vkCreateDescriptorSetLayout"))?;
            layouts.push(layout);
        }
        let info = vk::ShaderModuleCreateInfo::default().code(spirv);
        // SAFETY: SPIR-V from naga's writer.
        module = unsafe { raw.create_shader_module(&info, None) }
            .map_err(vk_err("vkCreateShaderModule"))?;
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts);
        // SAFETY: valid set layouts of this device.
        pipeline_layout = unsafe { raw.create_pipeline_layout(&info, None) }
            .map_err(vk_err("vkCreatePipelineLayout"))?;
        let name = CString::new(entry).map_err(|_| StatsError::Shader {
            path: entry.to_string(),
            message: "entry point name holds a NUL".into(),
        })?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&name);
        let flags = if capture {
            vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
        } else {
            vk::PipelineCreateFlags::empty()
        };
        let info = [vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(pipeline_layout)];
        // SAFETY: valid module, layout and entry point.
        pipeline = unsafe {
            raw.create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                .map_err(|(_, e)| StatsError::Vulkan {
                    call: "vkCreateComputePipelines",
                    result: e,
                })?
        }[0];
        if !capture {
            return Ok(None);
        }
        let ext = ash::khr::pipeline_executable_properties::Device::new(instance, raw);
        let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
        // SAFETY: a pipeline created with CAPTURE_STATISTICS on a device with the feature on.
        let executables = unsafe { ext.get_pipeline_executable_properties(&info) }
            .map_err(vk_err("vkGetPipelineExecutablePropertiesKHR"))?;
        let mut out = Vec::with_capacity(executables.len());
        for (index, e) in executables.iter().enumerate() {
            let info = vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(index as u32);
            // SAFETY: as above, index below the executable count.
            let stats = unsafe { ext.get_pipeline_executable_statistics(&info) }
                .map_err(vk_err("vkGetPipelineExecutableStatisticsKHR"))?;
            out.push(Executable {
                name: e
                    .name_as_c_str()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                statistics: stats.iter().map(statistic).collect(),
            });
        }
        Ok(Some(out))
    })();
    // SAFETY: every object below was made on `raw` above (null handles are ignored) and is
    // used by nothing else.
    unsafe {
        raw.destroy_pipeline(pipeline, None);
        raw.destroy_pipeline_layout(pipeline_layout, None);
        raw.destroy_shader_module(module, None);
        for layout in layouts {
            raw.destroy_descriptor_set_layout(layout, None);
        }
    }
    result
}

/// One statistic's name and value.
fn statistic(s: &vk::PipelineExecutableStatisticKHR<'_>) -> (String, StatValue) {
    let name = s
        .name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // SAFETY: the union member the format names.
    let value = unsafe {
        match s.format {
            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => StatValue::Bool(s.value.b32 != 0),
            vk::PipelineExecutableStatisticFormatKHR::INT64 => StatValue::I64(s.value.i64),
            vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => StatValue::F64(s.value.f64),
            _ => StatValue::U64(s.value.u64),
        }
    };
    (name, value)
}

fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> StatsError {
    move |result| StatsError::Vulkan { call, result }
}

/// The parsed and validated module of `shader`.
fn module_of(
    shader: &ComputeShader<'_>,
) -> Result<(naga::Module, naga::valid::ModuleInfo), StatsError> {
    let err = |stage: &str, e: String| StatsError::Shader {
        path: shader.path.to_string(),
        message: format!("{stage}: {e}"),
    };
    let module = naga::front::wgsl::parse_str(shader.wgsl)
        .map_err(|e| err("parse", e.emit_to_string(shader.wgsl)))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| err("validation", e.emit_to_string(shader.wgsl)))?;
    Ok((module, info))
}

/// SPIR-V of `shader` as wgpu's Vulkan backend writes it for a device of `api_version`: the
/// overrides resolved for the entry point, wgpu's bounds-check policies and loop bounding when
/// `checked` (index clamps; buffer accesses clamped too unless the device has
/// `robust_buffer_access2`, which then bounds them), none when not; no workgroup-memory
/// zeroing.
fn spirv_of(
    shader: &ComputeShader<'_>,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    api_version: u32,
    robust_buffer_access2: bool,
) -> Result<Vec<u32>, StatsError> {
    use naga::back::spv;
    use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
    let err = |stage: &str, e: String| StatsError::Shader {
        path: shader.path.to_string(),
        message: format!("{stage}: {e}"),
    };
    let mut constants = naga::back::PipelineConstants::default();
    for &(name, value) in shader.constants {
        constants.insert(name.to_string(), value);
    }
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        module,
        info,
        Some((naga::ShaderStage::Compute, shader.entry)),
        &constants,
    )
    .map_err(|e| err("overrides", e.to_string()))?;
    let policy = if shader.checked {
        BoundsCheckPolicy::Restrict
    } else {
        BoundsCheckPolicy::Unchecked
    };
    let options = spv::Options {
        // The highest SPIR-V the device's Vulkan version accepts, as wgpu picks it.
        lang_version: match (
            vk::api_version_major(api_version),
            vk::api_version_minor(api_version),
        ) {
            (1, 0) => (1, 0),
            (1, 1) => (1, 3),
            (1, 2) => (1, 5),
            _ => (1, 6),
        },
        bounds_check_policies: BoundsCheckPolicies {
            index: policy,
            buffer: if robust_buffer_access2 {
                BoundsCheckPolicy::Unchecked
            } else {
                policy
            },
            image_load: BoundsCheckPolicy::Unchecked,
            binding_array: BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::None,
        force_loop_bounding: shader.checked,
        emit_int_div_checks: shader.checked,
        ..spv::Options::default()
    };
    let pipeline = spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: shader.entry.to_string(),
    };
    spv::write_vec(&module, &info, &options, Some(&pipeline))
        .map_err(|e| err("SPIR-V", e.to_string()))
}

/// The index of `shader`'s compute entry point in `module`.
fn entry_index(shader: &ComputeShader<'_>, module: &naga::Module) -> Result<usize, StatsError> {
    module
        .entry_points
        .iter()
        .position(|e| e.name == shader.entry && e.stage == naga::ShaderStage::Compute)
        .ok_or_else(|| StatsError::Shader {
            path: shader.path.to_string(),
            message: format!("entry point: no compute entry point `{}`", shader.entry),
        })
}

/// The descriptor sets `shader`'s entry point uses in `module`: per group 0..=max, its
/// (binding, uniform or storage buffer) pairs.
fn descriptor_sets(
    shader: &ComputeShader<'_>,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
) -> Result<Vec<Vec<(u32, vk::DescriptorType)>>, StatsError> {
    let uses = info.get_entry_point(entry_index(shader, module)?);
    let mut sets: Vec<Vec<(u32, vk::DescriptorType)>> = Vec::new();
    for (handle, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        if uses[handle].is_empty() {
            continue;
        }
        let ty = match var.space {
            naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
            naga::AddressSpace::Storage { .. } => vk::DescriptorType::STORAGE_BUFFER,
            _ => {
                return Err(StatsError::Shader {
                    path: shader.path.to_string(),
                    message: format!(
                        "binding {}:{} is neither a uniform nor a storage buffer",
                        binding.group, binding.binding
                    ),
                });
            }
        };
        let group = binding.group as usize;
        if sets.len() <= group {
            sets.resize_with(group + 1, Vec::new);
        }
        sets[group].push((binding.binding, ty));
    }
    Ok(sets)
}

/// Builds `shader`'s compute pipeline through wgpu on `device` (checked or trusted as
/// `shader.checked`, its overrides, an automatic layout) in a validation error scope.
fn validate_with_wgpu(device: &wgpu::Device, shader: &ComputeShader<'_>) -> Result<(), StatsError> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(shader.path),
        source: wgpu::ShaderSource::Wgsl(shader.wgsl.into()),
    };
    let module = if shader.checked {
        device.create_shader_module(desc)
    } else {
        // SAFETY: the module is only built into a pipeline here and never dispatched, so no
        // index it computes is ever used.
        unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    };
    let _pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(shader.path),
        layout: None,
        module: &module,
        entry_point: Some(shader.entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: shader.constants,
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    });
    match pollster::block_on(scope.pop()) {
        Some(e) => Err(StatsError::Shader {
            path: shader.path.to_string(),
            message: format!("wgpu: {e}"),
        }),
        None => Ok(()),
    }
}

/// The driver's statistics of `fft`'s fused kernel's pipeline, `None` on the other paths.
///
/// # Errors
///
/// As [`compute_pipeline_statistics`].
pub fn fused_statistics(
    device: &wgpu::Device,
    fft: &vizdeck::scene::spectrogram::fft::GpuFft,
) -> Option<Result<Vec<Executable>, StatsError>> {
    let k = fft.fused_kernel()?;
    let shader = ComputeShader {
        path: k.path,
        wgsl: k.wgsl,
        entry: k.entry,
        constants: &k.constants,
        checked: k.checked,
    };
    Some(compute_pipeline_statistics(device, &shader))
}
