//! The driver's own statistics of a compute pipeline: registers per thread, spills to local
//! memory, shared memory, instruction counts, whatever the driver reports through
//! `VK_KHR_pipeline_executable_properties` (`vkGetPipelineExecutableStatisticsKHR`). They say
//! how many workgroups a multiprocessor can hold at once (occupancy), which is what the fused
//! FFT's speed at large N hangs on (`vizdeck bench --kernels fft`, BENCHMARKS.md).
//!
//! wgpu neither enables that extension nor lets a pipeline be created with
//! `VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR`, so [`compute_pipeline_statistics`] compiles
//! the shader as wgpu's Vulkan backend does (naga: overrides resolved for the entry point, then
//! SPIR-V with wgpu's runtime checks or without them) and builds it on a second, short-lived
//! `VkDevice` of the same physical device with the extension on. wgpu's own device is never
//! touched. The driver compiles the same SPIR-V the same way, so its figures are those of
//! wgpu's pipeline, up to the workgroup-memory zero-initialisation (left out here, as every
//! caller in vizdeck that asks for statistics turns it off).

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
    #[error("{device} lacks {EXTENSION}")]
    Unsupported {
        /// The physical device's name.
        device: String,
    },
    /// The shader did not compile to SPIR-V (parse, validation, overrides or the SPIR-V writer;
    /// the message names the stage that failed).
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

    // The pipeline is built either way, so a driver without the extension still checks the
    // SPIR-V and the layouts (tests/pipeline_stats.rs on lavapipe).
    let (module, info) = module_of(shader)?;
    let sets = descriptor_sets(shader.path, &module)?;
    let spirv = spirv_of(shader, &module, &info, props.api_version)?;

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
    let names = [ash::khr::pipeline_executable_properties::NAME.as_ptr()];
    let mut enable = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
    if capture {
        info = info.enabled_extension_names(&names).push_next(&mut enable);
    }
    // SAFETY: a valid create info for this physical device (the extension and its feature only
    // where both are supported).
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
/// overrides resolved for the entry point, wgpu's bounds-check policies (index clamps; buffer
/// accesses left to the driver's robust buffer access) and loop bounding when `checked`, none
/// when not; no workgroup-memory zeroing.
fn spirv_of(
    shader: &ComputeShader<'_>,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    api_version: u32,
) -> Result<Vec<u32>, StatsError> {
    use naga::back::spv;
    use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
    let err = |stage: &str, e: String| StatsError::Shader {
        path: shader.path.to_string(),
        message: format!("{stage}: {e}"),
    };
    let has_entry = module
        .entry_points
        .iter()
        .any(|e| e.name == shader.entry && e.stage == naga::ShaderStage::Compute);
    if !has_entry {
        return Err(err(
            "entry point",
            format!("no compute entry point `{}`", shader.entry),
        ));
    }
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
            buffer: BoundsCheckPolicy::Unchecked,
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

/// The descriptor sets `module` (the shader at `path`) declares: per group 0..=max, its
/// (binding, uniform or storage buffer) pairs.
fn descriptor_sets(
    path: &str,
    module: &naga::Module,
) -> Result<Vec<Vec<(u32, vk::DescriptorType)>>, StatsError> {
    let mut sets: Vec<Vec<(u32, vk::DescriptorType)>> = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        let ty = match var.space {
            naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
            naga::AddressSpace::Storage { .. } => vk::DescriptorType::STORAGE_BUFFER,
            _ => {
                return Err(StatsError::Shader {
                    path: path.to_string(),
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
