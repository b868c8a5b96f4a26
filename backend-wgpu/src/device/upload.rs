//! Host-to-device copies through a pair of host-writable (`MAP_WRITE`) upload buffers
//! created once per backend and reused by every copy.
//!
//! `queue.write_buffer` creates a fresh staging buffer for every call: on the H200's
//! Vulkan driver a 2^20-constraint proof spent 240 ms staging 224 MiB that way (about
//! 1 GB/s), each piece also converted into a fresh vector first. Here the host converts
//! each piece on every core into a kept host vector and copies it into a mapped upload
//! buffer in one pass (wgpu exposes mapped memory, which may be write-combined, to one
//! writer only), and the pieces alternate between the two buffers: while the device
//! copies one, the host fills the other (it waits only for the copy that last used the
//! buffer it is about to fill, never for the whole queue).
//!
//! The pair takes twice the tuning's `upload_mib` (16 MiB each by default) of memory
//! the driver may place in the device's host-visible heap, outside any lease: the
//! adapter's budget leaves it out ([`Uploads::bytes`]). It is created at the first
//! copy, and dropped (to be created afresh at the next) when a copy fails part way,
//! so that no buffer is left mapped or with a map pending.

use std::sync::mpsc::Receiver;
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use crate::error::WgpuError;
use crate::field::DeviceElement;

use super::context::Context;

/// Elements converted by one task of the parallel conversion (a few tens of KiB).
const TASK_ELEMS: usize = 1024;

/// The backend's upload pair (created at first use).
pub struct Uploads {
    slot_bytes: u64,
    state: Mutex<Option<Pair>>,
}

/// The two buffers and the host vector pieces are converted into.
struct Pair {
    slots: [Slot; 2],
    host: Vec<u32>,
}

/// One upload buffer: mapped and ready to write, or waiting for the copy that read
/// it to finish and its map to come back.
struct Slot {
    buffer: wgpu::Buffer,
    pending: Option<PendingMap>,
}

/// A map requested after the submission that copies from the buffer.
struct PendingMap {
    after: wgpu::SubmissionIndex,
    mapped: Receiver<Result<(), wgpu::BufferAsyncError>>,
}

impl Uploads {
    /// An upload pair of `mib` MiB per buffer, created at its first copy.
    pub fn new(mib: u64) -> Self {
        Uploads {
            slot_bytes: mib << 20,
            state: Mutex::new(None),
        }
    }

    /// The pair's size in bytes, which the budget leaves out.
    pub fn bytes(&self) -> u64 {
        2 * self.slot_bytes
    }

    /// Copies `values`, converted to the device layout, into `dst` from byte `offset`.
    /// The copies are queued: every later submission on the queue sees them.
    pub fn write<T: DeviceElement + Sync>(
        &self,
        ctx: &Context,
        dst: &wgpu::Buffer,
        offset: u64,
        values: &[T],
    ) -> Result<(), WgpuError> {
        if values.is_empty() {
            return Ok(());
        }
        let elem_bytes = 4 * T::WORDS as u64;
        let per_piece = (self.slot_bytes / elem_bytes).max(1) as usize;
        // One copy at a time through the pair (workers sharing a device wait here: the
        // link is the shared resource either way).
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if guard.is_none() {
            *guard = Some(self.create(ctx, elem_bytes)?);
        }
        let result = (|| {
            let Pair { slots, host } = guard.as_mut().expect("created above");
            for (k, piece) in values.chunks(per_piece).enumerate() {
                let at = offset + (k * per_piece) as u64 * elem_bytes;
                convert(piece, host);
                slots[k % 2].copy(ctx, dst, at, host)?;
            }
            Ok(())
        })();
        if result.is_err() {
            // A buffer may be unmapped with its map pending or failed: start afresh.
            *guard = None;
        }
        result
    }

    /// The two buffers, mapped at creation (at least one element each).
    fn create(&self, ctx: &Context, elem_bytes: u64) -> Result<Pair, WgpuError> {
        let bytes = self.slot_bytes.max(elem_bytes);
        let make = |i: usize| {
            ctx.scoped("creating an upload buffer", || {
                ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("upload[{i}]")),
                    size: bytes,
                    usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: true,
                })
            })
            .map(|buffer| Slot {
                buffer,
                pending: None,
            })
        };
        Ok(Pair {
            slots: [make(0)?, make(1)?],
            host: Vec::new(),
        })
    }
}

/// Converts `values` to the device layout into `host` (resized to fit), on every core.
fn convert<T: DeviceElement + Sync>(values: &[T], host: &mut Vec<u32>) {
    host.resize(values.len() * T::WORDS, 0);
    host.par_chunks_mut(TASK_ELEMS * T::WORDS)
        .zip(values.par_chunks(TASK_ELEMS))
        .for_each(|(out, part)| {
            for (v, w) in part.iter().zip(out.chunks_exact_mut(T::WORDS)) {
                v.write_words(w);
            }
        });
}

impl Slot {
    /// Waits for this buffer's map, copies `words` into it, queues its copy into `dst`
    /// at `at`, then asks for the map back.
    fn copy(
        &mut self,
        ctx: &Context,
        dst: &wgpu::Buffer,
        at: u64,
        words: &[u32],
    ) -> Result<(), WgpuError> {
        if let Some(pending) = self.pending.take() {
            ctx.wait_for_map(Some(pending.after), &pending.mapped)?;
        }
        let bytes = 4 * words.len() as u64;
        self.buffer
            .get_mapped_range_mut(0..bytes)
            .map_err(|e| WgpuError::Map(e.to_string()))?
            .copy_from_slice(bytemuck::cast_slice(words));
        self.buffer.unmap();
        let after = ctx.scoped("staging data", || {
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("upload"),
                });
            encoder.copy_buffer_to_buffer(&self.buffer, 0, dst, at, bytes);
            ctx.submit(encoder.finish())
        })?;
        let (sender, mapped) = std::sync::mpsc::channel();
        self.buffer.map_async(wgpu::MapMode::Write, .., move |r| {
            // The receiver only goes away on an error path; nothing to report then.
            let _ = sender.send(r);
        });
        self.pending = Some(PendingMap { after, mapped });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_are_two_buffers_of_the_given_size() {
        assert_eq!(Uploads::new(16).bytes(), 32 << 20);
        assert_eq!(Uploads::new(1).bytes(), 2 << 20);
    }
}
