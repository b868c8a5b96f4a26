//! Adapters and devices: probing, limits, memory capacity, shader pipelines, error
//! scopes, and the recording and submission of compute dispatches.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex, OnceLock};

use crucible_core::priority;
use crucible_core::registry::ProbeOptions;
use crucible_core::{BackendInfo, DeviceBudget, DeviceSync};

use crate::error::WgpuError;
use crate::field::{wgsl_constants, wgsl_programs};

/// Environment variable choosing the adapter: an index into the list of adapters, or a
/// substring of the adapter's name (case-insensitive).
pub const ADAPTER_ENV: &str = "CRUCIBLE_WGPU_ADAPTER";

/// Environment variable giving the device's memory (`8GiB`, `8G`, bytes: the byte-size
/// grammar of `--memory-limit`), for adapters whose memory wgpu cannot report.
pub const MEMORY_ENV: &str = "CRUCIBLE_WGPU_MEMORY";

/// Device memory kept out of a hardware adapter's budget for the driver's per-thread
/// private memory (the curve interpreter's registers).
pub const PRIVATE_MEMORY_RESERVE: u64 = 2 << 30;

/// Choices for opening wgpu adapters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WgpuOptions {
    /// Use only the adapter at this index, or whose name contains this text.
    pub adapter: Option<String>,
    /// Device memory in bytes, overriding what the adapter reports.
    pub memory_bytes: Option<u64>,
    /// Largest storage binding (and buffer chunk) to use, below the adapter's own
    /// limit; tests use it to exercise chunking on small buffers.
    pub max_binding_bytes: Option<u64>,
}

impl WgpuOptions {
    /// Options from [`ADAPTER_ENV`] and [`MEMORY_ENV`].
    pub fn from_env() -> Result<Self, WgpuError> {
        let adapter = std::env::var(ADAPTER_ENV)
            .ok()
            .filter(|s| !s.trim().is_empty());
        let memory_bytes = match std::env::var(MEMORY_ENV) {
            Ok(s) if !s.trim().is_empty() => Some(
                crucible_core::parse_byte_size(&s)
                    .map_err(|e| WgpuError::NoAdapter(format!("{MEMORY_ENV}: {}", e.root())))?,
            ),
            _ => None,
        };
        Ok(WgpuOptions {
            adapter,
            memory_bytes,
            max_binding_bytes: None,
        })
    }
}

/// The limits this backend works within, derived from the adapter's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Largest buffer bound to one shader binding, and so the largest buffer chunk:
    /// the smaller of `max_storage_buffer_binding_size` and `max_buffer_size`.
    pub binding_bytes: u64,
    /// Alignment of uniform parameter slots.
    pub uniform_align: u64,
    /// Largest dispatch along one dimension, in workgroups.
    pub max_workgroups: u32,
}

impl DeviceLimits {
    fn new(limits: &wgpu::Limits, cap: Option<u64>) -> Self {
        let adapter = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        DeviceLimits {
            binding_bytes: cap.map_or(adapter, |c| c.min(adapter)),
            uniform_align: u64::from(limits.min_uniform_buffer_offset_alignment).max(16),
            max_workgroups: limits.max_compute_workgroups_per_dimension.max(1),
        }
    }

    /// Elements of `bytes_each` bytes per buffer chunk: the largest power of two that
    /// fits one binding (powers of two keep NTT stages aligned to chunks).
    pub fn chunk_len(&self, bytes_each: u64) -> usize {
        let most = (self.binding_bytes / bytes_each).clamp(1, 1 << 31);
        1usize << (63 - most.leading_zeros())
    }

    /// Bytes of one uniform parameter slot.
    pub fn params_slot(&self) -> u64 {
        PARAMS_BYTES.div_ceil(self.uniform_align) * self.uniform_align
    }

    /// Bytes of the parameter buffer every operation leases.
    pub fn params_bytes(&self) -> u64 {
        PARAMS_SLOTS * self.params_slot()
    }
}

/// Dispatch parameter slots per submission.
pub const PARAMS_SLOTS: u64 = 64;

/// Largest parameter block of any kernel (NttParams), in bytes.
const PARAMS_BYTES: u64 = 96;

/// Threads per workgroup in every kernel.
const WORKGROUP: u32 = 64;

/// A shader module: which WGSL files it is made of, in order, after the constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    /// NTT stages and pointwise ops over Fr.
    Ntt,
    /// MSM scalar conversion and counting sort.
    MsmSort,
    /// MSM bucket accumulation and reduction, G1 and G2.
    MsmBuckets,
    /// Test entry point for Fr.
    FrTest,
    /// Test entry point for the interpreter's programs (Fq, Fq2, G1, G2).
    ProgramTest,
}

const FR: &str = include_str!("../shaders/fr.wgsl");
const PROGRAM: &str = include_str!("../shaders/program.wgsl");
const NTT: &str = include_str!("../shaders/ntt.wgsl");
const MSM_COMMON: &str = include_str!("../shaders/msm_common.wgsl");
const MSM_SORT: &str = include_str!("../shaders/msm_sort.wgsl");
const MSM: &str = include_str!("../shaders/msm.wgsl");
const FR_TEST: &str = include_str!("../shaders/fr_test.wgsl");
const PROGRAM_TEST: &str = include_str!("../shaders/program_test.wgsl");

impl Module {
    const ALL: [Module; 5] = [
        Module::Ntt,
        Module::MsmSort,
        Module::MsmBuckets,
        Module::FrTest,
        Module::ProgramTest,
    ];

    /// The module's shader files in order; `None` stands for Fq's field code (made
    /// from fr.wgsl by [`fq_wgsl`](crate::field::fq_wgsl)).
    fn parts(self) -> &'static [Option<&'static str>] {
        match self {
            Module::Ntt => &[Some(FR), Some(NTT)],
            Module::MsmSort => &[Some(FR), Some(MSM_COMMON), Some(MSM_SORT)],
            Module::MsmBuckets => &[None, Some(PROGRAM), Some(MSM_COMMON), Some(MSM)],
            Module::FrTest => &[Some(FR), Some(FR_TEST)],
            Module::ProgramTest => &[None, Some(PROGRAM), Some(PROGRAM_TEST)],
        }
    }

    fn index(self) -> usize {
        Module::ALL.iter().position(|m| *m == self).unwrap_or(0)
    }

    /// The module's full WGSL source.
    pub fn source(self) -> String {
        let mut s = wgsl_constants();
        if self.parts().contains(&Some(PROGRAM)) {
            s.push_str(&wgsl_programs());
        }
        for part in self.parts() {
            s.push('\n');
            match part {
                Some(text) => s.push_str(text),
                None => s.push_str(&crate::field::fq_wgsl(FR)),
            }
        }
        s
    }
}

/// One wgpu device and everything created on it once.
pub struct Context {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Limits this backend respects.
    pub limits: DeviceLimits,
    lost: Arc<Mutex<Option<String>>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    modules: [OnceLock<Result<wgpu::ShaderModule, String>>; 5],
    pipelines: Mutex<HashMap<(Module, &'static str), wgpu::ComputePipeline>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The guarded values are plain records; a panic elsewhere cannot leave them torn.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Context {
    /// Fails if the device was lost or reported an error outside any error scope.
    pub fn check_alive(&self) -> Result<(), WgpuError> {
        if let Some(reason) = lock(&self.lost).clone() {
            return Err(WgpuError::DeviceLost(reason));
        }
        let mut errors = lock(&self.uncaptured);
        if !errors.is_empty() {
            let all = errors.join("; ");
            errors.clear();
            return Err(WgpuError::Uncaptured(all));
        }
        Ok(())
    }

    /// Runs `f` inside out-of-memory, validation and internal error scopes; any error
    /// they catch (or a lost device) is returned instead of `f`'s value.
    pub fn scoped<T>(&self, during: &str, f: impl FnOnce() -> T) -> Result<T, WgpuError> {
        self.check_alive()?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let value = f();
        let internal = pollster::block_on(internal.pop());
        let validation = pollster::block_on(validation.pop());
        let oom = pollster::block_on(oom.pop());
        let during = during.to_string();
        if let Some(e) = oom {
            return Err(WgpuError::OutOfMemory {
                during,
                message: e.to_string(),
            });
        }
        if let Some(e) = validation {
            return Err(WgpuError::Validation {
                during,
                message: format!("{e:?}"),
            });
        }
        if let Some(e) = internal {
            return Err(WgpuError::Internal {
                during,
                message: e.to_string(),
            });
        }
        self.check_alive()?;
        Ok(value)
    }

    /// Blocks until every submitted command has finished.
    pub fn wait(&self) -> Result<(), WgpuError> {
        self.check_alive()?;
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        self.check_alive()
    }

    fn module(&self, module: Module) -> Result<&wgpu::ShaderModule, WgpuError> {
        self.modules[module.index()]
            .get_or_init(|| {
                self.scoped(&format!("compiling shader module {module:?}"), || {
                    self.device
                        .create_shader_module(wgpu::ShaderModuleDescriptor {
                            label: Some(&format!("crucible {module:?}")),
                            source: wgpu::ShaderSource::Wgsl(module.source().into()),
                        })
                })
                .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| WgpuError::Internal {
                during: format!("compiling shader module {module:?}"),
                message: e.clone(),
            })
    }

    /// The compute pipeline of `entry` in `module`, compiled on first use.
    pub fn pipeline(
        &self,
        module: Module,
        entry: &'static str,
    ) -> Result<wgpu::ComputePipeline, WgpuError> {
        if let Some(p) = lock(&self.pipelines).get(&(module, entry)) {
            return Ok(p.clone());
        }
        let shader = self.module(module)?;
        let pipeline = self.scoped(&format!("creating pipeline {module:?}::{entry}"), || {
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: None,
                    module: shader,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                })
        })?;
        lock(&self.pipelines).insert((module, entry), pipeline.clone());
        Ok(pipeline)
    }

    /// Creates a buffer of `bytes` (inside error scopes: out of memory is an error).
    pub fn create_buffer(
        &self,
        label: impl std::fmt::Display,
        bytes: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, WgpuError> {
        let label = label.to_string();
        let label = label.as_str();
        if bytes > self.device.limits().max_buffer_size {
            return Err(WgpuError::Unsupported(format!(
                "buffer `{label}` of {bytes} bytes exceeds the adapter's limit"
            )));
        }
        self.scoped(&format!("allocating `{label}` ({bytes} bytes)"), || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// Workgroup counts (x, y) covering `threads` threads, 64 per workgroup.
    pub fn grid(&self, threads: u32) -> (u32, u32) {
        let groups = threads.div_ceil(WORKGROUP);
        let x = groups.min(self.limits.max_workgroups);
        (x, groups.div_ceil(x.max(1)))
    }
}

/// Waits for a wgpu device's queue: what a [`crucible_core::Lease`] calls after freeing
/// its buffers and before returning its budget.
pub struct QueueSync(pub Arc<Context>);

impl DeviceSync for QueueSync {
    fn synchronize(&self) -> crucible_core::Result<()> {
        Ok(self.0.wait()?)
    }
}

/// A binding of one dispatch: its number in the shader and the buffer bound to it.
pub type Binding<'a> = (u32, &'a wgpu::Buffer);

enum Step<'a> {
    Clear(&'a wgpu::Buffer),
    Dispatch {
        pipeline: wgpu::ComputePipeline,
        slot: u64,
        params_bytes: u64,
        bindings: Vec<Binding<'a>>,
        threads: u32,
    },
    Copy {
        src: &'a wgpu::Buffer,
        src_offset: u64,
        dst: &'a wgpu::Buffer,
        bytes: u64,
    },
}

/// Commands recorded for the queue. Each dispatch's parameters get their own slot of
/// a leased uniform buffer of [`PARAMS_SLOTS`] slots; when it is full the commands so
/// far are submitted and the buffer is refilled (queue writes are ordered between
/// submissions, so earlier dispatches still see their own parameters).
pub struct Batch<'a> {
    ctx: &'a Context,
    params_buf: Option<&'a wgpu::Buffer>,
    during: String,
    params: Vec<u8>,
    steps: Vec<Step<'a>>,
}

impl<'a> Batch<'a> {
    /// An empty batch on `ctx`, for the operation `during` names (in errors).
    pub fn new(
        ctx: &'a Context,
        params_buf: Option<&'a wgpu::Buffer>,
        during: impl Into<String>,
    ) -> Self {
        Batch {
            ctx,
            params_buf,
            during: during.into(),
            params: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// Zeroes `buffer` before the following steps.
    pub fn clear(&mut self, buffer: &'a wgpu::Buffer) {
        self.steps.push(Step::Clear(buffer));
    }

    /// Copies `bytes` from `src` at `src_offset` to the start of `dst`.
    pub fn copy(
        &mut self,
        src: &'a wgpu::Buffer,
        src_offset: u64,
        dst: &'a wgpu::Buffer,
        bytes: u64,
    ) {
        self.steps.push(Step::Copy {
            src,
            src_offset,
            dst,
            bytes,
        });
    }

    /// Dispatches `threads` threads of `pipeline` with `params` at binding 0.
    pub fn dispatch<P: bytemuck::Pod>(
        &mut self,
        pipeline: wgpu::ComputePipeline,
        params: &P,
        bindings: Vec<Binding<'a>>,
        threads: u32,
    ) -> Result<(), WgpuError> {
        if threads == 0 {
            return Ok(());
        }
        let Some(params_buf) = self.params_buf else {
            return Err(WgpuError::Validation {
                during: self.during.clone(),
                message: "a dispatch was recorded without a parameter buffer".into(),
            });
        };
        let slot_bytes = self.ctx.limits.params_slot();
        if self.params.len() as u64 + slot_bytes > params_buf.size() {
            self.flush()?;
        }
        let slot = self.params.len() as u64;
        let bytes = bytemuck::bytes_of(params);
        self.params.extend_from_slice(bytes);
        self.params.resize((slot + slot_bytes) as usize, 0);
        self.steps.push(Step::Dispatch {
            pipeline,
            slot,
            params_bytes: bytes.len() as u64,
            bindings,
            threads,
        });
        Ok(())
    }

    /// Submits everything recorded.
    pub fn submit(mut self) -> Result<(), WgpuError> {
        self.flush()
    }

    fn flush(&mut self) -> Result<(), WgpuError> {
        if self.steps.is_empty() {
            return Ok(());
        }
        let ctx = self.ctx;
        let steps = std::mem::take(&mut self.steps);
        let params = std::mem::take(&mut self.params);
        let params_buf = self.params_buf;
        ctx.scoped(&self.during, || {
            if let (Some(p), false) = (params_buf, params.is_empty()) {
                ctx.queue.write_buffer(p, 0, &params);
            }
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some(&self.during),
                });
            for step in &steps {
                match step {
                    Step::Clear(buffer) => encoder.clear_buffer(buffer, 0, None),
                    Step::Copy {
                        src,
                        src_offset,
                        dst,
                        bytes,
                    } => encoder.copy_buffer_to_buffer(src, *src_offset, dst, 0, *bytes),
                    Step::Dispatch {
                        pipeline,
                        slot,
                        params_bytes,
                        bindings,
                        threads,
                    } => {
                        let Some(params) = params_buf else { continue };
                        let mut entries = vec![wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: params,
                                offset: *slot,
                                size: NonZeroU64::new(*params_bytes),
                            }),
                        }];
                        entries.extend(bindings.iter().map(|(binding, buffer)| {
                            wgpu::BindGroupEntry {
                                binding: *binding,
                                resource: buffer.as_entire_binding(),
                            }
                        }));
                        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                            label: None,
                            layout: &pipeline.get_bind_group_layout(0),
                            entries: &entries,
                        });
                        let (x, y) = ctx.grid(*threads);
                        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                            label: None,
                            timestamp_writes: None,
                        });
                        pass.set_pipeline(pipeline);
                        pass.set_bind_group(0, &bind_group, &[]);
                        pass.dispatch_workgroups(x, y, 1);
                    }
                }
            }
            ctx.queue.submit([encoder.finish()]);
        })
    }
}

/// Device memory the budget is sized from: `CRUCIBLE_WGPU_MEMORY` if set; on Vulkan,
/// the largest device-local memory heap (what `vkGetPhysicalDeviceMemoryProperties`
/// reports, the figure CUDA's `cuMemGetInfo` total corresponds to); elsewhere wgpu
/// reports no memory size, so the adapter's `max_buffer_size` capped at 4 GiB, a
/// deliberately small guess that `CRUCIBLE_WGPU_MEMORY` should replace.
fn memory_bytes(adapter: &wgpu::Adapter, options: &WgpuOptions) -> (u64, &'static str) {
    if let Some(bytes) = options.memory_bytes {
        return (bytes, MEMORY_ENV);
    }
    if let Some(bytes) = vulkan_device_local_bytes(adapter) {
        return (bytes, "Vulkan device-local heap");
    }
    (
        adapter.limits().max_buffer_size.min(4 << 30),
        "estimate (max buffer size, at most 4 GiB)",
    )
}

#[cfg(not(target_arch = "wasm32"))]
#[allow(unsafe_code)]
fn vulkan_device_local_bytes(adapter: &wgpu::Adapter) -> Option<u64> {
    use ash::vk;
    // SAFETY: the guard only reads the hal adapter's handles; nothing is destroyed and
    // the adapter outlives the guard (both are dropped at the end of this function).
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    // SAFETY: the physical device handle comes from this instance, which is alive; the
    // query has no other precondition.
    let props =
        unsafe { instance.get_physical_device_memory_properties(hal.raw_physical_device()) };
    props
        .memory_heaps_as_slice()
        .iter()
        .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .map(|h| h.size)
        .max()
}

#[cfg(target_arch = "wasm32")]
fn vulkan_device_local_bytes(_adapter: &wgpu::Adapter) -> Option<u64> {
    None
}

fn api_name(backend: wgpu::Backend) -> &'static str {
    match backend {
        wgpu::Backend::Vulkan => "Vulkan",
        wgpu::Backend::Metal => "Metal",
        wgpu::Backend::Dx12 => "DX12",
        wgpu::Backend::Gl => "GL",
        wgpu::Backend::BrowserWebGpu => "WebGPU",
        wgpu::Backend::Noop => "none",
    }
}

/// Does `adapter` (at `index` of the enumeration) match the user's selection?
fn selected(selection: &str, index: usize, info: &wgpu::AdapterInfo) -> bool {
    match selection.trim().parse::<usize>() {
        Ok(i) => i == index,
        Err(_) => info
            .name
            .to_lowercase()
            .contains(&selection.trim().to_lowercase()),
    }
}

/// Runs `f`, turning a panic into an error: wgpu and the drivers below it are foreign
/// code, and a panic while probing means "unavailable", never a crashed caller.
fn no_panic<T>(f: impl FnOnce() -> Result<T, WgpuError>) -> Result<T, WgpuError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(WgpuError::NoAdapter(format!(
                "wgpu panicked while opening adapters: {message}"
            )))
        }
    }
}

/// One opened adapter: what a `WgpuBackend` is made of.
pub struct Opened {
    /// Name, device and memory, for reports.
    pub info: BackendInfo,
    /// The device's budget.
    pub budget: Arc<DeviceBudget>,
    /// The device, its queue and its pipelines.
    pub ctx: Arc<Context>,
}

/// Every selected adapter (Vulkan, Metal or DX12), opened or why not, or why there is
/// none; a panic inside wgpu is an error.
pub fn open_each(
    options: &ProbeOptions,
    wgpu_options: &WgpuOptions,
) -> Result<Vec<Result<Opened, WgpuError>>, WgpuError> {
    no_panic(|| open_all(options, wgpu_options))
}

/// The first adapter that opens, or why none does.
pub fn open_first(options: &ProbeOptions, wgpu_options: &WgpuOptions) -> Result<Opened, WgpuError> {
    let mut first_error = None;
    for backend in no_panic(|| open_all(options, wgpu_options))? {
        match backend {
            Ok(b) => return Ok(b),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| WgpuError::NoAdapter("no adapter opened".into())))
}

/// Every selected adapter, opened (or why it could not be), numbered from 0.
fn open_all(
    options: &ProbeOptions,
    wgpu_options: &WgpuOptions,
) -> Result<Vec<Result<Opened, WgpuError>>, WgpuError> {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
    descriptor.backends = wgpu::Backends::PRIMARY;
    let instance = wgpu::Instance::new(descriptor);
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    if adapters.is_empty() {
        return Err(WgpuError::NoAdapter(
            "no Vulkan, Metal or DX12 adapter found (without a GPU on Linux, install \
             mesa-vulkan-drivers for the llvmpipe software adapter)"
                .into(),
        ));
    }
    let all: Vec<String> = adapters
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{i}: {}", a.get_info().name))
        .collect();
    let chosen: Vec<wgpu::Adapter> = adapters
        .into_iter()
        .enumerate()
        .filter(|(i, a)| {
            wgpu_options
                .adapter
                .as_deref()
                .is_none_or(|sel| selected(sel, *i, &a.get_info()))
        })
        .map(|(_, a)| a)
        .collect();
    if chosen.is_empty() {
        return Err(WgpuError::NoAdapter(format!(
            "{ADAPTER_ENV}=`{}` matches none of the adapters [{}]",
            wgpu_options.adapter.as_deref().unwrap_or(""),
            all.join(", ")
        )));
    }
    Ok(chosen
        .into_iter()
        .enumerate()
        .map(|(index, adapter)| {
            open(&adapter, index, options, wgpu_options).map_err(|e| {
                WgpuError::NoAdapter(format!(
                    "adapter {index} ({}): {e}",
                    adapter.get_info().name
                ))
            })
        })
        .collect())
}

/// Opens `adapter` as backend device `index`.
fn open(
    adapter: &wgpu::Adapter,
    index: usize,
    options: &ProbeOptions,
    wgpu_options: &WgpuOptions,
) -> Result<Opened, WgpuError> {
    let info = adapter.get_info();
    let adapter_limits = adapter.limits();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("crucible"),
        required_features: wgpu::Features::empty(),
        // The adapter's own limits, not the defaults: bigger bindings, fewer chunks.
        required_limits: adapter_limits.clone(),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::MemoryUsage,
        trace: wgpu::Trace::Off,
    }))
    .map_err(|source| WgpuError::RequestDevice {
        adapter: info.name.clone(),
        source,
    })?;
    let lost = Arc::new(Mutex::new(None));
    let lost_flag = Arc::clone(&lost);
    device.set_device_lost_callback(move |reason, message| {
        *lock(&lost_flag) = Some(format!("{reason:?}: {message}"));
    });
    let uncaptured = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&uncaptured);
    // Errors outside our scopes would otherwise panic inside wgpu; record them instead.
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        lock(&sink).push(e.to_string());
    }));
    let (memory, memory_source) = memory_bytes(adapter, wgpu_options);
    let software = info.device_type == wgpu::DeviceType::Cpu;
    let backend_info = BackendInfo {
        name: "wgpu".into(),
        device_index: index,
        device_name: info.name.clone(),
        api: format!(
            "{} ({}{}; memory from {memory_source})",
            api_name(info.backend),
            info.driver,
            if info.driver_info.is_empty() {
                String::new()
            } else {
                format!(" {}", info.driver_info)
            }
        ),
        memory_bytes: memory,
        // A software adapter (llvmpipe) is slower than the CPU backend: `auto` prefers
        // the CPU backend.
        priority: if software {
            priority::SOFTWARE_ADAPTER
        } else {
            priority::PORTABLE_GPU
        },
    };
    let ctx = Context {
        limits: DeviceLimits::new(&adapter_limits, wgpu_options.max_binding_bytes),
        device,
        queue,
        lost,
        uncaptured,
        modules: Default::default(),
        pipelines: Mutex::new(HashMap::new()),
    };
    // The curve interpreter keeps its registers in private memory (about 7 KiB per
    // thread), which a GPU driver reserves for every resident thread outside any
    // buffer of ours: about 1.9 GiB on an H200 (132 SMs x 2048 threads). It comes off
    // the budget so that a full budget cannot push the device out of memory.
    let usable = if software {
        memory
    } else {
        memory.saturating_sub(PRIVATE_MEMORY_RESERVE)
    };
    let budget = DeviceBudget::new(backend_info.label(), options.budget_capacity(usable));
    Ok(Opened {
        info: backend_info,
        budget,
        ctx: Arc::new(ctx),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgpu_errors_become_errors_not_panics() {
        let backend = match open_first(&ProbeOptions::default(), &WgpuOptions::default()) {
            Ok(b) => b,
            Err(e) => {
                let required = crucible_core::registry::is_required("wgpu");
                assert!(
                    !required,
                    "wgpu is required (CRUCIBLE_REQUIRE) but unavailable: {e}"
                );
                println!("skipped, wgpu unavailable: {e}");
                return;
            }
        };
        let ctx = &backend.ctx;
        // MAP_READ with MAP_WRITE is invalid: a validation error inside the scopes...
        let invalid = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::MAP_WRITE;
        let scoped = ctx.create_buffer("invalid", 16, invalid);
        assert!(
            matches!(scoped, Err(WgpuError::Validation { .. })),
            "{scoped:?}"
        );
        // ...and outside them, recorded and reported by the next check, not a panic.
        drop(ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 16,
            usage: invalid,
            mapped_at_creation: false,
        }));
        assert!(matches!(ctx.check_alive(), Err(WgpuError::Uncaptured(_))));
        assert!(ctx.check_alive().is_ok(), "reported once");
        // Nothing outlives the scopes: the device still works.
        assert!(ctx.wait().is_ok());
    }
}
