//! The device and queue of one adapter: limits, error scopes, shader modules and
//! pipelines compiled once, buffer creation, and the queue sync a lease waits on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crucible_core::DeviceSync;

use crate::error::WgpuError;
use crate::tuning::Tuned;
use crate::wgsl::curve::CurveParams;
use crate::wgsl::field_code::LimbBits;
use crate::wgsl::params::PARAMS_BYTES;
use crate::wgsl::{Formulas, Module, PerCurve, ShaderConfig, WORKGROUP};

use super::pipeline_cache::{cache_file, CachePlace, CacheUse, ModuleCache};

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
    /// The limits of a device with `limits`, bindings capped at `cap` bytes if given.
    pub(crate) fn new(limits: &wgpu::Limits, cap: Option<u64>) -> Self {
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

/// One wgpu device and everything created on it once.
pub struct Context {
    /// The device.
    pub device: wgpu::Device,
    /// The pairing curve the shaders are generated for.
    pub curve: Arc<CurveParams>,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Limits this backend respects.
    pub limits: DeviceLimits,
    /// The form each curve's formulas take, fixed at open.
    pub formulas: PerCurve<Formulas>,
    /// The straight-line form's Fq limb width of each curve, fixed at open.
    pub limbs: PerCurve<LimbBits>,
    /// Whether the device was opened with 64-bit integers in shaders
    /// (`SHADER_INT64`): the wide limbs and the NTT's wide product need them.
    pub int64: bool,
    /// The tuning this device was opened with (every choice made for its adapter).
    pub tuned: Tuned,
    /// The adapter, for the pipeline caches' keys.
    pub adapter: wgpu::AdapterInfo,
    /// Where pipeline caches are saved.
    pub cache_place: CachePlace,
    lost: Arc<Mutex<Option<String>>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    modules: [OnceLock<Result<ShaderModule, String>>; Module::ALL.len()],
    pipelines: Mutex<HashMap<(Module, &'static str), wgpu::ComputePipeline>>,
    compiles: Mutex<Vec<PipelineCompile>>,
    buffers_created: AtomicU64,
    submissions: AtomicU64,
    param_writes: AtomicU64,
    /// Batches submitted, and how many of them had been when a wait last returned
    /// (all of those finished): see [`Context::create_buffer`].
    batches_submitted: AtomicU64,
    batches_waited: AtomicU64,
}

/// How many buffers, submissions and parameter uploads a backend instance has made:
/// the host work a repeated operation should not do again
/// ([`WgpuBackend::activity`](crate::WgpuBackend::activity)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Activity {
    /// Buffers created (every leased buffer).
    pub buffers: u64,
    /// Command submissions to the queue.
    pub submissions: u64,
    /// Dispatch parameters uploaded (`queue.write_buffer`, each through a staging
    /// buffer wgpu creates for it; see batch.rs's `ParamsBuffer`).
    pub param_writes: u64,
}

/// A compiled shader module and the pipeline cache its pipelines are created with.
struct ShaderModule {
    shader: wgpu::ShaderModule,
    cache: Option<ModuleCache>,
    cache_use: CacheUse,
}

/// How long one pipeline took to create: the shader module's translation (on its
/// first pipeline) and the driver's compilation of the entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineCompile {
    /// The module, as `Module`'s name (`MsmG1`).
    pub module: String,
    /// The entry point.
    pub entry: &'static str,
    /// Wall time of the creation.
    pub time: std::time::Duration,
    /// What the module's pipeline cache did.
    pub cache: CacheUse,
}

/// One line on `compiles`: how many pipelines, their total time, how many had saved
/// cache data, and the slowest.
pub fn compile_report(compiles: &[PipelineCompile]) -> String {
    let total: std::time::Duration = compiles.iter().map(|c| c.time).sum();
    let loaded = compiles
        .iter()
        .filter(|c| matches!(c.cache, CacheUse::Loaded(_)))
        .count();
    let mut s = format!(
        "wgpu pipelines: {} created in {:.2} s ({loaded} with saved cache data)",
        compiles.len(),
        total.as_secs_f64()
    );
    if let Some(slowest) = compiles.iter().max_by_key(|c| c.time) {
        s += &format!(
            "; slowest {}::{} {:.2} s",
            slowest.module,
            slowest.entry,
            slowest.time.as_secs_f64()
        );
    }
    s
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The guarded values are plain records; a panic elsewhere cannot leave them torn.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Context {
    /// The context of a freshly requested `device`: a lost device and errors outside
    /// any scope are recorded from here on, for [`Context::check_alive`] to report. Its
    /// kernels compute on `curve`, run `tuned`'s formulas, straight-line Fq code over
    /// its limbs, their pipelines cached as `cache_place` says, keyed by `adapter`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: wgpu::Device,
        curve: Arc<CurveParams>,
        queue: wgpu::Queue,
        limits: DeviceLimits,
        tuned: Tuned,
        int64: bool,
        adapter: wgpu::AdapterInfo,
        cache_place: CachePlace,
    ) -> Self {
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
        Context {
            device,
            curve,
            queue,
            limits,
            formulas: tuned.formulas,
            limbs: tuned.limbs,
            int64,
            tuned,
            adapter,
            cache_place,
            lost,
            uncaptured,
            modules: Default::default(),
            pipelines: Mutex::new(HashMap::new()),
            compiles: Mutex::new(Vec::new()),
            buffers_created: AtomicU64::new(0),
            submissions: AtomicU64::new(0),
            param_writes: AtomicU64::new(0),
            batches_submitted: AtomicU64::new(0),
            batches_waited: AtomicU64::new(0),
        }
    }

    /// What this context has done so far.
    pub fn activity(&self) -> Activity {
        Activity {
            buffers: self.buffers_created.load(Ordering::Relaxed),
            submissions: self.submissions.load(Ordering::Relaxed),
            param_writes: self.param_writes.load(Ordering::Relaxed),
        }
    }

    /// Submits `commands` to the queue (call inside [`Context::scoped`]).
    pub fn submit(&self, commands: wgpu::CommandBuffer) -> wgpu::SubmissionIndex {
        self.submissions.fetch_add(1, Ordering::Relaxed);
        self.queue.submit([commands])
    }

    /// Submits a batch's `commands` (batch.rs): an operation may return with them
    /// still queued.
    pub fn submit_batch(&self, commands: wgpu::CommandBuffer) -> wgpu::SubmissionIndex {
        let index = self.submit(commands);
        self.batches_submitted.fetch_add(1, Ordering::AcqRel);
        index
    }

    /// Queues `bytes` for the start of the uniform buffer `params` (call inside
    /// [`Context::scoped`]).
    pub fn write_params(&self, params: &wgpu::Buffer, bytes: &[u8]) {
        self.param_writes.fetch_add(1, Ordering::Relaxed);
        self.queue.write_buffer(params, 0, bytes);
    }

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
        let through = self.batches_submitted.load(Ordering::Acquire);
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        self.batches_waited.fetch_max(through, Ordering::AcqRel);
        self.check_alive()
    }

    /// Waits until a `map_async` callback has reported through `mapped`, polling until
    /// submission `after` (every submission if `None`) has finished. Another thread
    /// polling the same device may be the one that runs the callback, a moment after
    /// this thread's own poll returned, so poll and wait again until it has (at most a
    /// minute).
    pub fn wait_for_map(
        &self,
        after: Option<wgpu::SubmissionIndex>,
        mapped: &Receiver<Result<(), wgpu::BufferAsyncError>>,
    ) -> Result<(), WgpuError> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            self.check_alive()?;
            self.device.poll(wgpu::PollType::Wait {
                submission_index: after.clone(),
                timeout: None,
            })?;
            match mapped.recv_timeout(Duration::from_millis(5)) {
                Ok(result) => return result.map_err(|e| WgpuError::Map(e.to_string())),
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(e) => {
                    return Err(WgpuError::Map(format!(
                        "no map callback after the device went idle ({e})"
                    )))
                }
            }
        }
    }

    /// What the generated shader sources depend on.
    pub fn shader_config(&self) -> ShaderConfig {
        ShaderConfig {
            curve: Arc::clone(&self.curve),
            limbs: self.limbs,
            formulas: self.formulas,
            int64: self.int64,
        }
    }

    fn module(&self, module: Module) -> Result<&ShaderModule, WgpuError> {
        let during = || format!("compiling shader module {module:?}");
        self.modules[module.index()]
            .get_or_init(|| {
                let source = module.source(&self.shader_config());
                let (cache, cache_use) = match &self.cache_place {
                    CachePlace::In(dir) => {
                        match cache_file(dir, &self.adapter, &format!("{module:?}"), &source) {
                            Some(path) => {
                                let label = format!("crucible {module:?}");
                                let (cache, cache_use) =
                                    ModuleCache::open(&self.device, path, &label);
                                (Some(cache), cache_use)
                            }
                            None => (None, CacheUse::Unsupported),
                        }
                    }
                    place => (None, place.without_cache()),
                };
                let shader = self
                    .scoped(&during(), || {
                        self.device
                            .create_shader_module(wgpu::ShaderModuleDescriptor {
                                label: Some(&format!("crucible {module:?}")),
                                source: wgpu::ShaderSource::Wgsl(source.into()),
                            })
                    })
                    .map_err(|e| e.to_string())?;
                Ok(ShaderModule {
                    shader,
                    cache,
                    cache_use,
                })
            })
            .as_ref()
            .map_err(|e| WgpuError::Internal {
                during: during(),
                message: e.clone(),
            })
    }

    /// The compute pipeline of `entry` in `module`, compiled on first use (through the
    /// module's pipeline cache, saved after each new pipeline).
    pub fn pipeline(
        &self,
        module: Module,
        entry: &'static str,
    ) -> Result<wgpu::ComputePipeline, WgpuError> {
        if let Some(p) = lock(&self.pipelines).get(&(module, entry)) {
            return Ok(p.clone());
        }
        let started = std::time::Instant::now();
        let shader = self.module(module)?;
        let pipeline = self.scoped(&format!("creating pipeline {module:?}::{entry}"), || {
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: None,
                    module: &shader.shader,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: shader.cache.as_ref().map(|c| &c.cache),
                })
        })?;
        let time = started.elapsed();
        if let Some(Err(why)) = shader.cache.as_ref().map(ModuleCache::save) {
            tracing::warn!("{why}");
        }
        tracing::info!(
            "created pipeline {module:?}::{entry} in {:.3} s ({})",
            time.as_secs_f64(),
            shader.cache_use
        );
        lock(&self.pipelines).insert((module, entry), pipeline.clone());
        lock(&self.compiles).push(PipelineCompile {
            module: format!("{module:?}"),
            entry,
            time,
            cache: shader.cache_use.clone(),
        });
        Ok(pipeline)
    }

    /// Creates those of `wanted`'s pipelines that do not exist yet, each on a thread
    /// of its own: a driver compiles a pipeline on the calling thread, so a cold start
    /// (the straight G1 MSM's three pipelines took 4.9, 7.0 and 9.3 s one after another
    /// on the H200) waits for the slowest instead of the sum. Error scopes are per
    /// thread in wgpu, so each compile's errors stay its own; the first error wins.
    /// A key named twice is created once; returns how many were created.
    pub fn prepare(&self, wanted: &[(Module, &'static str)]) -> Result<usize, WgpuError> {
        let missing: Vec<(Module, &'static str)> = {
            let have = lock(&self.pipelines);
            let mut missing: Vec<_> = Vec::new();
            for key in wanted {
                if !have.contains_key(key) && !missing.contains(key) {
                    missing.push(*key);
                }
            }
            missing
        };
        let created = missing.len();
        if created < 2 {
            missing
                .into_iter()
                .try_for_each(|(m, e)| self.pipeline(m, e).map(drop))?;
            return Ok(created);
        }
        std::thread::scope(|scope| {
            let compiles: Vec<_> = missing
                .iter()
                .map(|&(m, e)| scope.spawn(move || self.pipeline(m, e).map(drop)))
                .collect();
            compiles.into_iter().try_for_each(|compile| {
                compile.join().unwrap_or_else(|_| {
                    Err(WgpuError::Unsupported(
                        "a pipeline's compile thread panicked".into(),
                    ))
                })
            })
        })?;
        Ok(created)
    }

    /// Every pipeline created so far and how long it took, in order of creation.
    pub fn compiles(&self) -> Vec<PipelineCompile> {
        lock(&self.compiles).clone()
    }

    /// Creates a buffer of `bytes` (inside error scopes: out of memory is an error),
    /// first waiting for the batches queued since the last wait, if any: NTTs and
    /// pointwise products return with their dispatches queued, and wgpu destroys a
    /// dropped buffer only at a poll after the submissions using it, so a buffer freed
    /// from the lease just after one would otherwise still hold its memory beside the
    /// new one, beyond what the lease accounts for.
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
        if self.batches_submitted.load(Ordering::Acquire)
            > self.batches_waited.load(Ordering::Acquire)
        {
            self.wait()?;
        }
        self.buffers_created.fetch_add(1, Ordering::Relaxed);
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
