//! Batches of commands (clears, copies, compute dispatches) recorded for the queue,
//! their parameters in slots of a leased uniform buffer, and their submission.

use std::num::NonZeroU64;
use std::sync::{Mutex, PoisonError};

use crucible_core::{BufferId, Lease, PlanKey};

use crate::error::WgpuError;

use super::context::Context;
use super::profile::{pass_durations, PassTimes, Timer, QUERIES};

/// Plan item of the uniform buffer holding every dispatch's parameters.
pub const PARAMS_ITEM: PlanKey = PlanKey::new("wgpu", "params");

/// The uniform buffer of dispatch parameters, and the bytes last queued for its start.
///
/// One per lease, kept from the first operation that dispatches until the lease is
/// released or an operation on it fails ([`ParamsBuffer::kept`]): creating and
/// dropping it around every NTT cost a buffer creation, and a wait for the queue before
/// the drop. A batch whose parameters are the bytes already queued writes nothing:
/// `queue.write_buffer` creates a staging buffer for every call (upload.rs), and a
/// repeated operation's parameters are the same.
pub struct ParamsBuffer {
    buffer: wgpu::Buffer,
    written: Mutex<Vec<u8>>,
}

impl ParamsBuffer {
    /// A new parameter buffer of `bytes`.
    pub fn new(ctx: &Context, bytes: u64) -> Result<ParamsBuffer, WgpuError> {
        Ok(ParamsBuffer {
            buffer: ctx.create_buffer(
                PARAMS_ITEM,
                bytes,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            )?,
            written: Mutex::new(Vec::new()),
        })
    }

    /// The lease's parameter buffer: the one kept in it, else a new one of
    /// `ctx.limits.params_bytes()` from [`PARAMS_ITEM`].
    pub fn kept(ctx: &Context, lease: &mut Lease) -> crucible_core::Result<BufferId> {
        if let Some(id) = lease.buffer_of(PARAMS_ITEM) {
            return Ok(id);
        }
        let bytes = ctx.limits.params_bytes();
        lease.allocate(PARAMS_ITEM, bytes, || Ok(ParamsBuffer::new(ctx, bytes)?))
    }

    /// Queues `bytes` for the buffer's start unless they are the bytes queued last
    /// (which every later submission sees: writes and submissions are queue-ordered).
    fn write(&self, ctx: &Context, bytes: &[u8]) {
        let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        if !written.starts_with(bytes) {
            ctx.write_params(&self.buffer, bytes);
            written.clear();
            written.extend_from_slice(bytes);
        }
    }

    /// Forgets the bytes queued last: after a failed submission, whether they reached
    /// the buffer is unknown.
    fn forget(&self) {
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
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
        phase: &'static str,
    },
    Copy {
        src: &'a wgpu::Buffer,
        src_offset: u64,
        dst: &'a wgpu::Buffer,
        bytes: u64,
    },
}

/// Commands recorded for the queue. Each dispatch's parameters get their own slot of
/// a leased uniform buffer of [`PARAMS_SLOTS`](super::context::PARAMS_SLOTS) slots;
/// when it is full the commands so far are submitted and the buffer is refilled
/// (queue writes are ordered between submissions, so earlier dispatches still see
/// their own parameters).
pub struct Batch<'a> {
    ctx: &'a Context,
    params_buf: Option<&'a ParamsBuffer>,
    during: String,
    params: Vec<u8>,
    steps: Vec<Step<'a>>,
    timer: Option<Timer<'a>>,
    phase: &'static str,
    times: PassTimes,
}

impl<'a> Batch<'a> {
    /// An empty batch on `ctx`, for the operation `during` names (in errors).
    pub fn new(
        ctx: &'a Context,
        params_buf: Option<&'a ParamsBuffer>,
        during: impl Into<String>,
    ) -> Self {
        Batch {
            ctx,
            params_buf,
            during: during.into(),
            params: Vec::new(),
            steps: Vec::new(),
            timer: None,
            phase: "dispatch",
            times: PassTimes::default(),
        }
    }

    /// Times every following dispatch's pass with `timer` (see profile.rs); the
    /// times come back from [`Batch::submit_timed`].
    pub fn time_with(&mut self, timer: Timer<'a>) {
        self.timer = Some(timer);
    }

    /// Names the phase the following dispatches belong to in the timings.
    pub fn phase(&mut self, phase: &'static str) {
        self.phase = phase;
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
        let dispatches = self
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Dispatch { .. }))
            .count() as u32;
        if self.params.len() as u64 + slot_bytes > params_buf.buffer.size()
            || (self.timer.is_some() && 2 * (dispatches + 1) > QUERIES)
        {
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
            phase: self.phase,
        });
        Ok(())
    }

    /// Submits everything recorded.
    pub fn submit(mut self) -> Result<(), WgpuError> {
        self.flush()
    }

    /// Submits everything recorded and returns the timed passes (none if the batch
    /// has no timer). Each submission of a timed batch waits for the queue.
    pub fn submit_timed(mut self) -> Result<PassTimes, WgpuError> {
        self.flush()?;
        Ok(std::mem::take(&mut self.times))
    }

    fn flush(&mut self) -> Result<(), WgpuError> {
        if self.steps.is_empty() {
            return Ok(());
        }
        let ctx = self.ctx;
        let steps = std::mem::take(&mut self.steps);
        let params = std::mem::take(&mut self.params);
        let params_buf = self.params_buf;
        let timer = self.timer.as_ref();
        let phases: Vec<&'static str> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Dispatch { phase, .. } => Some(*phase),
                _ => None,
            })
            .collect();
        let timed = timer.map_or(0, |_| phases.len() as u32);
        // Two u64 timestamps (start, end) per timed pass.
        let timed_bytes = u64::from(timed) * 16;
        let submitted = ctx.scoped(&self.during, || {
            if let (Some(p), false) = (params_buf, params.is_empty()) {
                p.write(ctx, &params);
            }
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some(&self.during),
                });
            let mut pass_index = 0u32;
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
                        phase: _,
                    } => {
                        let Some(params) = params_buf else { continue };
                        let mut entries = vec![wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &params.buffer,
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
                        let timestamp_writes = timer.map(|t| wgpu::ComputePassTimestampWrites {
                            query_set: &t.queries,
                            beginning_of_pass_write_index: Some(2 * pass_index),
                            end_of_pass_write_index: Some(2 * pass_index + 1),
                        });
                        pass_index += 1;
                        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                            label: None,
                            timestamp_writes,
                        });
                        pass.set_pipeline(pipeline);
                        pass.set_bind_group(0, &bind_group, &[]);
                        pass.dispatch_workgroups(x, y, 1);
                    }
                }
            }
            if let (Some(t), true) = (timer, timed > 0) {
                encoder.resolve_query_set(&t.queries, 0..2 * timed, t.resolve, 0);
                encoder.copy_buffer_to_buffer(t.resolve, 0, t.readback, 0, timed_bytes);
            }
            ctx.submit_batch(encoder.finish());
        });
        if let Err(e) = submitted {
            if let Some(p) = params_buf {
                p.forget();
            }
            return Err(e);
        }
        if let (Some(t), true) = (timer, timed > 0) {
            let mut words = Vec::new();
            super::readback::map_words(ctx, t.readback, timed_bytes, &mut words)?;
            let ticks: Vec<u64> = words
                .chunks_exact(2)
                .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
                .collect();
            let durations = pass_durations(&ticks, t.period);
            self.times.passes.extend(phases.into_iter().zip(durations));
        }
        Ok(())
    }
}
