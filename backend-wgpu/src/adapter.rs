//! Finding and opening adapters: the user's selection and memory override, what an
//! adapter reports (name, API, memory), software-adapter detection, and the budget.

use std::path::PathBuf;
use std::sync::Arc;

use crucible_core::priority;
use crucible_core::registry::ProbeOptions;
use crucible_core::{BackendInfo, DeviceBudget};

use crate::context::{Context, DeviceLimits};
use crate::error::WgpuError;
use crate::field_code::LimbBits;
use crate::msm::ReduceFormulas;
use crate::pipeline_cache::{cache_dir_from_env, CachePlace};
use crate::shaders::{Formulas, PerCurve, ShaderConfig, FORMULAS_ENV, LIMB_BITS_ENV};
use crate::upload::{parse_upload_mib, Uploads, DEFAULT_UPLOAD_MIB, UPLOAD_MIB_ENV};

/// Environment variable choosing the adapter: an index into the list of adapters, or a
/// substring of the adapter's name (case-insensitive).
pub const ADAPTER_ENV: &str = "CRUCIBLE_WGPU_ADAPTER";

/// Environment variable giving the device's memory (`8GiB`, `8G`, bytes: the byte-size
/// grammar of `--memory-limit`), for adapters whose memory wgpu cannot report.
pub const MEMORY_ENV: &str = "CRUCIBLE_WGPU_MEMORY";

/// Device memory kept out of a hardware adapter's budget for the driver's per-thread
/// private memory, by the form of the formulas: the curve interpreter's register file
/// (about 7 KiB a thread, x 132 SMs x 2048 threads on an H200: 1.9 GiB), or what the
/// straight-line kernels may spill, their live values beyond the registers (a G2
/// addition's points and temporaries, about 28 Fq of 30 limbs, 3.4 KiB a thread, of
/// which 255 registers hold 1 KiB: 2.4 KiB x 270 k threads, 0.65 GiB on an H200,
/// reserved as 1 GiB until a profile gives the driver's real figure; the compact form
/// keeps the same points and temporaries live), or the registers form's register file
/// (a G2 addition's registers of 30 limbs, about 4 KiB a thread: as the interpreter's).
/// The MSMs of both curves run on the device, each curve's reduction in the form
/// `reduce` gives it (a straight G1 reduces in the registers form by default), so the
/// largest reserve of the four forms.
pub fn private_memory_reserve(formulas: PerCurve<Formulas>, reduce: ReduceFormulas) -> u64 {
    let reserve = |f: Formulas| -> u64 {
        match f {
            Formulas::Interpreted | Formulas::Registers => 2 << 30,
            Formulas::Straight | Formulas::Compact => 1 << 30,
        }
    };
    let reductions = reduce.forms(formulas);
    [formulas.g1, formulas.g2, reductions.g1, reductions.g2]
        .into_iter()
        .map(reserve)
        .max()
        .unwrap_or(2 << 30)
}

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
    /// The form of each curve's formulas; `None` for a curve: the adapter's default
    /// ([`PerCurve::for_adapter`]). [`WgpuOptions::from_env`] reads
    /// `CRUCIBLE_WGPU_FORMULAS`.
    pub formulas: PerCurve<Option<Formulas>>,
    /// The straight-line form's Fq limb width for both curves; `None`:
    /// `CRUCIBLE_WGPU_LIMB_BITS`, else each curve's default for the adapter
    /// ([`PerCurve::default_for`]: wide limbs where it has 64-bit integers).
    pub limb_bits: Option<LimbBits>,
    /// The folder compiled pipelines are saved in (pipeline_cache.rs); `None`: not
    /// saved. [`WgpuOptions::from_env`] reads `CRUCIBLE_WGPU_CACHE` (empty: off),
    /// else the user's cache folder.
    pub pipeline_cache: Option<PathBuf>,
    /// MiB of each of the two upload buffers staging goes through (upload.rs); `None`:
    /// [`DEFAULT_UPLOAD_MIB`]. [`WgpuOptions::from_env`] reads `CRUCIBLE_WGPU_UPLOAD_MIB`.
    pub upload_mib: Option<u64>,
}

impl WgpuOptions {
    /// Options from [`ADAPTER_ENV`], [`MEMORY_ENV`], [`FORMULAS_ENV`],
    /// [`LIMB_BITS_ENV`], [`CACHE_ENV`](crate::CACHE_ENV) and [`UPLOAD_MIB_ENV`].
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
        let formulas = match std::env::var(FORMULAS_ENV) {
            Ok(s) if !s.trim().is_empty() => PerCurve::parse(&s).ok_or_else(|| {
                WgpuError::NoAdapter(format!(
                    "{FORMULAS_ENV}=`{s}`: expected `straight`, `compact`, `registers` or \
                     `interpreted`, or per curve `g1=<form>,g2=<form>`"
                ))
            })?,
            _ => PerCurve::default(),
        };
        let limb_bits = match std::env::var(LIMB_BITS_ENV) {
            Ok(s) if !s.trim().is_empty() => Some(LimbBits::parse(&s).ok_or_else(|| {
                WgpuError::NoAdapter(format!(
                    "{LIMB_BITS_ENV}=`{s}`: expected a limb width of {} to {} bits",
                    LimbBits::RANGE.start(),
                    LimbBits::RANGE.end()
                ))
            })?),
            _ => None,
        };
        Ok(WgpuOptions {
            adapter,
            memory_bytes,
            max_binding_bytes: None,
            formulas,
            limb_bits,
            pipeline_cache: cache_dir_from_env(),
            upload_mib: match std::env::var(UPLOAD_MIB_ENV) {
                Ok(s) if !s.trim().is_empty() => Some(parse_upload_mib(&s)?),
                _ => None,
            },
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
    /// The upload buffers staging goes through (outside the budget).
    pub uploads: Uploads,
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
    let cache_place = CachePlace::for_adapter(
        wgpu_options.pipeline_cache.as_deref(),
        &info,
        adapter.features(),
    );
    let cache_feature = match cache_place {
        CachePlace::In(_) => wgpu::Features::PIPELINE_CACHE,
        _ => wgpu::Features::empty(),
    };
    // 64-bit integers in shaders where the adapter has them: the NTT's wide Fr
    // product and the wide Fq limbs (fr_code.rs, field_code.rs) need them.
    let int64 = adapter.features().contains(wgpu::Features::SHADER_INT64);
    let limbs = wgpu_options
        .limb_bits
        .map_or(PerCurve::default_for(int64), PerCurve::both);
    if limbs.need_int64() && !int64 {
        return Err(WgpuError::NoAdapter(format!(
            "{}: {LIMB_BITS_ENV}={} needs 64-bit integers in shaders (SHADER_INT64), which \
             this adapter does not offer; use {} to {} bits",
            info.name,
            limbs.g1.bits(),
            LimbBits::RANGE_U32.start(),
            LimbBits::RANGE_U32.end()
        )));
    }
    let required_features = if int64 {
        cache_feature | wgpu::Features::SHADER_INT64
    } else {
        cache_feature
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("crucible"),
        // The pipeline cache where it is on, 64-bit integers where the adapter has
        // them, and timestamp queries when CRUCIBLE_WGPU_PROFILE asks for them
        // (profile.rs).
        required_features: required_features | crate::profile::features(adapter.features()),
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
    let software = info.device_type == wgpu::DeviceType::Cpu;
    // llvmpipe compiles the straight-line MSM for minutes: software adapters keep the
    // interpreter unless asked otherwise.
    let formulas = wgpu_options.formulas.or_default_for(software);
    if cache_place == CachePlace::Unsupported {
        tracing::info!(
            "{}: no pipeline cache on this adapter (wgpu has one on Vulkan only): every \
             process compiles its pipelines",
            info.name
        );
    }
    let ctx = Context::new(
        device,
        queue,
        DeviceLimits::new(&adapter_limits, wgpu_options.max_binding_bytes),
        ShaderConfig {
            limbs,
            formulas,
            int64,
        },
        info.clone(),
        cache_place.clone(),
    );
    let (memory, memory_source) = memory_bytes(adapter, wgpu_options);
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
    let uploads = Uploads::new(wgpu_options.upload_mib.unwrap_or(DEFAULT_UPLOAD_MIB));
    // An invalid CRUCIBLE_WGPU_MSM_REDUCE_FORMULAS fails every MSM, saying why: the
    // reserve takes the default's forms.
    let reduce = ReduceFormulas::from_env().unwrap_or(ReduceFormulas::Registers);
    let usable = if software {
        memory
    } else {
        memory.saturating_sub(private_memory_reserve(formulas, reduce))
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
        let straight = PerCurve::both(Formulas::Straight);
        let compact = PerCurve::both(Formulas::Compact);
        // Straight or compact curves alone spill; reducing in registers adds its file.
        for forms in [straight, compact] {
            assert_eq!(private_memory_reserve(forms, ReduceFormulas::Same), GIB);
            assert_eq!(
                private_memory_reserve(forms, ReduceFormulas::Registers),
                2 * GIB
            );
        }
        let hardware = PerCurve::for_adapter(false);
        for reduce in [ReduceFormulas::Registers, ReduceFormulas::Same] {
            assert_eq!(private_memory_reserve(hardware, reduce), 2 * GIB);
            let interpreted = PerCurve::both(Formulas::Interpreted);
            assert_eq!(private_memory_reserve(interpreted, reduce), 2 * GIB);
        }
    }

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
