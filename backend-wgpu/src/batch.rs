//! Batches of commands (clears, copies, compute dispatches) recorded for the queue,
//! their parameters in slots of a leased uniform buffer, and their submission.

use std::num::NonZeroU64;

use crate::context::Context;
use crate::error::WgpuError;

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
/// a leased uniform buffer of [`PARAMS_SLOTS`](crate::context::PARAMS_SLOTS) slots;
/// when it is full the commands so far are submitted and the buffer is refilled
/// (queue writes are ordered between submissions, so earlier dispatches still see
/// their own parameters).
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
