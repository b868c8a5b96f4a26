//! Finding and opening adapters: the user's selection and memory override, what an
//! adapter reports (name, API, memory), software-adapter detection, and the budget.
//!
//! Below it, what an opened adapter is made of and how work reaches it: `context` (the
//! device and queue: limits, error scopes, shader modules and pipelines),
//! `pipeline_cache` (compiled pipelines kept across processes), `batch` (commands
//! recorded and submitted, their parameters in a leased uniform buffer), `profile`
//! (per-pass GPU timings), `upload` and `readback` (the host-visible buffers data
//! crosses the bus through).

pub mod batch;
pub mod context;
pub mod pipeline_cache;
pub mod profile;
pub mod readback;
pub mod upload;

use std::path::PathBuf;
use std::sync::Arc;

use crucible_core::cache_dir::{cache_folder, WGPU};
use crucible_core::priority;
use crucible_core::registry::ProbeOptions;
use crucible_core::{BackendInfo, DeviceBudget};

use crate::error::WgpuError;
use crate::tuning::{AdapterClass, Tuned, WgpuTuning};
use crate::wgsl::curve::CurveParams;
use crate::wgsl::{Formulas, PerCurve};
use context::{Context, DeviceLimits};
use pipeline_cache::CachePlace;
use upload::Uploads;

/// Environment variable choosing the adapter: an index into the list of adapters, or a
/// substring of the adapter's name (case-insensitive).
pub const ADAPTER_ENV: &str = "CRUCIBLE_WGPU_ADAPTER";

/// Device memory kept out of a hardware adapter's budget for the driver's per-thread
/// private memory, by the form of the formulas: the curve interpreter's register file
/// (about 7 KiB a thread, x 132 SMs x 2048 threads on an H200: 1.9 GiB), or what the
/// straight-line kernels may spill, their live values beyond the registers (a G2
/// addition's points and temporaries, about 28 Fq of 30 limbs, 3.4 KiB a thread, of
/// which 255 registers hold 1 KiB: 2.4 KiB x 270 k threads, 0.65 GiB on an H200,
/// reserved as 1 GiB until a profile gives the driver's real figure), or the registers
/// form's register file (a G2 addition's registers of 30 limbs, about 4 KiB a thread:
/// as the interpreter's). The MSMs of both curves run on the device, each curve's
/// reduction in its reduction's form ([`Formulas::reduction`]: a straight G1 reduces in
/// the registers form), so the largest reserve of the four forms.
pub fn private_memory_reserve(formulas: PerCurve<Formulas>) -> u64 {
    let reserve = |f: Formulas| -> u64 {
        match f {
            Formulas::Interpreted | Formulas::Registers => 2 << 30,
            Formulas::Straight => 1 << 30,
        }
    };
    [
        formulas.g1,
        formulas.g2,
        formulas.g1.reduction(),
        formulas.g2.reduction(),
    ]
    .into_iter()
    .map(reserve)
    .max()
    .unwrap_or(2 << 30)
}

/// Choices for opening wgpu adapters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WgpuOptions {
    /// Use only the adapter at this index, or whose name contains this text
    /// ([`ADAPTER_ENV`]).
    pub adapter: Option<String>,
    /// Largest storage binding (and buffer chunk) to use, below the adapter's own
    /// limit; tests use it to exercise chunking on small buffers.
    pub max_binding_bytes: Option<u64>,
    /// The tuning file's `[wgpu]` table: each key left out takes the default of the
    /// adapter's class.
    pub tuning: WgpuTuning,
    /// The folder compiled pipelines are saved in (pipeline_cache.rs); `None`: not
    /// saved. [`WgpuOptions::from_probe`] takes the `wgpu` folder of crucible's cache
    /// directory (`crucible_core::cache_dir`).
    pub pipeline_cache: Option<PathBuf>,
}

impl WgpuOptions {
    /// The options of a probe: the adapter [`ADAPTER_ENV`] selects, the `[wgpu]` table
    /// of `options`' tuning file (refused when a key or value is invalid), the pipeline
    /// cache folder.
    pub fn from_probe(options: &ProbeOptions) -> crucible_core::Result<Self> {
        let adapter = std::env::var(ADAPTER_ENV)
            .ok()
            .filter(|s| !s.trim().is_empty());
        Ok(WgpuOptions {
            adapter,
            max_binding_bytes: None,
            tuning: WgpuTuning::from_file(&options.tuning)?,
            pipeline_cache: Some(cache_folder(WGPU)),
        })
    }
}

/// Device memory the budget is sized from: the tuning's `memory` if set; on Vulkan,
/// the largest device-local memory heap (what `vkGetPhysicalDeviceMemoryProperties`
/// reports, the figure CUDA's `cuMemGetInfo` total corresponds to); elsewhere wgpu
/// reports no memory size, so the adapter's `max_buffer_size` capped at 4 GiB, a
/// deliberately small guess that the tuning's `memory` should replace.
fn memory_bytes(adapter: &wgpu::Adapter, tuned: &Tuned) -> (u64, &'static str) {
    if let Some(bytes) = tuned.memory_bytes {
        return (bytes, "the tuning's `memory`");
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
    /// The upload buffers staging goes through (outside the budget).
    pub uploads: Uploads,
}

/// Every selected adapter (Vulkan, Metal or DX12), opened for `curve` or why not, or
/// why there is none; a panic inside wgpu is an error.
pub fn open_each(
    options: &ProbeOptions,
    wgpu_options: &WgpuOptions,
    curve: &Arc<CurveParams>,
) -> Result<Vec<Result<Opened, WgpuError>>, WgpuError> {
    no_panic(|| open_all(options, wgpu_options, curve))
}

/// The first adapter that opens for `curve`, or why none does.
pub fn open_first(
    options: &ProbeOptions,
    wgpu_options: &WgpuOptions,
    curve: &Arc<CurveParams>,
) -> Result<Opened, WgpuError> {
    let mut first_error = None;
    for backend in no_panic(|| open_all(options, wgpu_options, curve))? {
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
    curve: &Arc<CurveParams>,
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
            open(&adapter, index, options, wgpu_options, curve).map_err(|e| {
                WgpuError::NoAdapter(format!(
                    "adapter {index} ({}): {e}",
                    adapter.get_info().name
                ))
            })
        })
        .collect())
}

/// Opens `adapter` as backend device `index`, its shaders computing on `curve`.
fn open(
    adapter: &wgpu::Adapter,
    index: usize,
    options: &ProbeOptions,
    wgpu_options: &WgpuOptions,
    curve: &Arc<CurveParams>,
) -> Result<Opened, WgpuError> {
    let info = adapter.get_info();
    let adapter_limits = adapter.limits();
    // 64-bit integers in shaders where the adapter has them: the NTT's wide Fr
    // product and the wide Fq limbs (wgsl/fr_code.rs, wgsl/field_code.rs) need them.
    let int64 = adapter.features().contains(wgpu::Features::SHADER_INT64);
    let software = info.device_type == wgpu::DeviceType::Cpu;
    let tuned = wgpu_options
        .tuning
        .resolve(AdapterClass { software, int64 }, &options.tuning)
        .map_err(|e| WgpuError::NoAdapter(e.to_string()))?;
    let cache_dir = wgpu_options
        .pipeline_cache
        .as_deref()
        .filter(|_| tuned.pipeline_cache);
    let cache_place = CachePlace::for_adapter(cache_dir, &info, adapter.features());
    let cache_feature = match cache_place {
        CachePlace::In(_) => wgpu::Features::PIPELINE_CACHE,
        _ => wgpu::Features::empty(),
    };
    let required_features = if int64 {
        cache_feature | wgpu::Features::SHADER_INT64
    } else {
        cache_feature
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("crucible"),
        // The pipeline cache where it is on, 64-bit integers where the adapter has
        // them, and timestamp queries when the tuning's `profile` asks for them
        // (profile.rs).
        required_features: required_features | profile::features(adapter.features(), tuned.profile),
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
    // llvmpipe compiles the straight-line MSM for minutes: software adapters keep the
    // interpreter unless the tuning asks otherwise.
    let (formulas, limbs) = (tuned.formulas, tuned.limbs);
    if cache_place == CachePlace::Unsupported {
        tracing::info!(
            "{}: no pipeline cache on this adapter (wgpu has one on Vulkan only): every \
             process compiles its pipelines",
            info.name
        );
    }
    let ctx = Context::new(
        device,
        Arc::clone(curve),
        queue,
        DeviceLimits::new(&adapter_limits, wgpu_options.max_binding_bytes),
        tuned,
        int64,
        info.clone(),
        cache_place.clone(),
    );
    let (memory, memory_source) = memory_bytes(adapter, &tuned);
    let backend_info = BackendInfo {
        name: "wgpu".into(),
        device_index: index,
        device_name: info.name.clone(),
        api: format!(
            "{} ({}{}; memory from {memory_source}; formulas {}{}; {cache_place})",
            api_name(info.backend),
            info.driver,
            if info.driver_info.is_empty() {
                String::new()
            } else {
                format!(" {}", info.driver_info)
            },
            formulas.describe(),
            if formulas.any_straight() {
                format!(", {}", limbs.describe())
            } else {
                String::new()
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
    // A GPU driver reserves private memory for every resident thread outside any
    // buffer of ours: it comes off the budget so that a full budget cannot push the
    // device out of memory.
    // The upload pair may sit in the device's host-visible heap, outside any lease.
    let uploads = Uploads::new(tuned.upload_mib);
    let usable = if software {
        memory
    } else {
        memory.saturating_sub(private_memory_reserve(formulas))
    }
    .saturating_sub(uploads.bytes());
    let budget = DeviceBudget::new(backend_info.label(), options.budget_capacity(usable));
    Ok(Opened {
        info: backend_info,
        budget,
        ctx: Arc::new(ctx),
        uploads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_counts_each_curves_reduction_form() {
        const GIB: u64 = 1 << 30;
        // A straight curve spills; its reduction in registers adds the register file.
        assert_eq!(
            private_memory_reserve(PerCurve::both(Formulas::Straight)),
            2 * GIB
        );
        let hardware = PerCurve::for_adapter(false);
        assert_eq!(private_memory_reserve(hardware), 2 * GIB);
        let interpreted = PerCurve::both(Formulas::Interpreted);
        assert_eq!(private_memory_reserve(interpreted), 2 * GIB);
    }

    #[test]
    fn wgpu_errors_become_errors_not_panics() {
        let curve = Arc::new(CurveParams::of::<crucible_core::Bls12_381>().unwrap());
        let backend = match open_first(&ProbeOptions::default(), &WgpuOptions::default(), &curve) {
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
